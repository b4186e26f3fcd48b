"""mkdocs-toolcatalog: a verified catalog of agent-tool manifests.

A library first, driven by one pipeline (`toolcatalog.pipeline`) that the MkDocs
plugin, ProperDocs, the `toolcatalog` command and the Markdown export all use.
The names in `__all__` are the public API; everything else may change.

    from pathlib import Path
    from toolcatalog import Options, Site, prepare, check, enforce_fail_on

    build = prepare(Path("."), Options(paths=["examples"]), site=Site(name="Our tools"))
    check(build)                          # run the examples (results cached)
    files = build.outputs()               # {"catalog.json": "...", "mcp-tools.json": "...", ...}
"""

from ._version import __version__
from .conformance.engine import Stats
from .discover import DiscoveryError
from .harvest import harvest
from .model import (
    Capability,
    Catalog,
    Check,
    Diagnostic,
    Driver,
    Effects,
    Example,
    Implementation,
    Requirement,
    Run,
    Tool,
)
from .options import Options, OptionsError
from .outputs import ExportError, catalog_document, render, write
from .outputs.site import Site
from .pipeline import Build, FailOnError, check, enforce_fail_on, failing, prepare, run
from .placement import Placement, place
from .statuses import CheckStatus, ExampleStatus, RunStatus, Status

__all__ = [
    "Build",
    "Capability",
    "Catalog",
    "Check",
    "CheckStatus",
    "Diagnostic",
    "DiscoveryError",
    "Driver",
    "Effects",
    "Example",
    "ExampleStatus",
    "ExportError",
    "FailOnError",
    "Implementation",
    "Options",
    "OptionsError",
    "Placement",
    "Requirement",
    "Run",
    "RunStatus",
    "Site",
    "Stats",
    "Status",
    "Tool",
    "__version__",
    "catalog_document",
    "check",
    "enforce_fail_on",
    "failing",
    "harvest",
    "place",
    "prepare",
    "render",
    "run",
    "write",
]
