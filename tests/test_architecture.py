"""The package's shape: layers without cycles, the public API, one list of statuses."""

from __future__ import annotations

import json
import subprocess
import sys
from importlib import resources
from pathlib import Path

import toolcatalog
from toolcatalog.statuses import CheckStatus, ExampleStatus, RunStatus, Status
from toolcatalog.options import RULES

REPO = Path(__file__).resolve().parent.parent
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")


def test_import_contracts_hold() -> None:
    # The contracts (layers, no cycles, MkDocs only in the host layer) live in pyproject.toml.
    result = subprocess.run([str(LINT_IMPORTS), "--config", str(REPO / "pyproject.toml")], cwd=REPO,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout and "10 kept" in result.stdout, result.stdout


def test_the_library_and_the_command_line_never_import_mkdocs() -> None:
    code = (
        "import sys, toolcatalog, toolcatalog.cli, toolcatalog.pipeline, toolcatalog.render;"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('mkdocs', 'properdocs', 'material'));"
        "print(bad)"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert result.stdout.strip() == "[]", result.stdout + result.stderr


PUBLIC_API = [
    "Build", "Capability", "Catalog", "Check", "CheckStatus", "Diagnostic", "DiscoveryError", "Driver", "Effects",
    "Example", "ExampleStatus", "ExportError", "FailOnError", "Implementation", "Options", "OptionsError", "Placement",
    "Requirement", "Run", "RunStatus", "Site", "Stats", "Status", "Tool", "__version__", "catalog_document", "check",
    "enforce_fail_on", "failing", "harvest", "place", "prepare", "render", "run", "write",
]


def test_public_api_is_pinned() -> None:
    # A name added to or removed from __all__ is an API change: update this list on purpose.
    assert sorted(toolcatalog.__all__) == sorted(PUBLIC_API)
    for name in PUBLIC_API:
        assert hasattr(toolcatalog, name), name


def _bundled(name: str) -> dict:
    return json.loads(resources.files("toolcatalog").joinpath("schemas", name).read_text(encoding="utf-8"))


def test_one_list_of_statuses_everywhere() -> None:
    catalog = _bundled("catalog.schema.json")
    outcome = _bundled("outcome.schema.json")
    assert catalog["$defs"]["status"]["enum"] == Status.values()
    assert outcome["properties"]["status"]["enum"] == Status.values()
    assert outcome["$defs"]["example"]["properties"]["status"]["enum"] == ExampleStatus.values()
    assert outcome["$defs"]["run"]["properties"]["status"]["enum"] == RunStatus.values()
    assert outcome["$defs"]["check"]["properties"]["status"]["enum"] == CheckStatus.values()
    # `fail_on` accepts exactly the tool statuses.
    assert RULES["fail_on"]("fail_on", Status.values()) == Status.values()


def test_options_have_one_rule_and_one_documented_config_attribute_each() -> None:
    from toolcatalog.config import ToolCatalogConfig

    names = [name for name, _option in ToolCatalogConfig._schema]
    assert names == list(RULES)
    source = (REPO / "plugin/toolcatalog/config.py").read_text(encoding="utf-8")
    for name in names:  # every option has a docstring right below it
        after = source.split(f"    {name} = _Rule[", 1)[1].split("\n", 2)[1]
        assert after.strip().startswith('"""'), name


def _contracts() -> list[dict]:
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib
    return tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["importlinter"]["contracts"]


HOST_LAYER = {"toolcatalog.plugin", "toolcatalog.config", "toolcatalog.nav"}  # MkDocs objects in, out


def test_the_mkdocs_forbidden_list_is_every_module_but_the_host_layer() -> None:
    # Computed, not typed: the whole package is the source, and only the host layer's own imports
    # of MkDocs are exempt, so a new module is covered the moment it exists.
    (contract,) = [c for c in _contracts() if c["type"] == "forbidden" and "mkdocs" in c["forbidden_modules"]]
    assert contract["source_modules"] == ["toolcatalog"]
    exempt = {line.split("->")[0].strip() for line in contract.get("ignore_imports", [])}
    assert exempt == HOST_LAYER
    assert all(line.split("->")[1].strip() in contract["forbidden_modules"] for line in contract["ignore_imports"])


def test_domain_contracts_are_declared() -> None:
    # Pages and outputs never reach parsers, discovery, the harvest, checks, the sandbox or processes;
    # conformance never reaches the parsers; the sandbox has layers of its own.
    forbidden = {tuple(c["source_modules"]): set(c["forbidden_modules"]) for c in _contracts() if c["type"] == "forbidden"}
    pages = {"toolcatalog.render", "toolcatalog.pageview", "toolcatalog.outputs", "toolcatalog.report", "toolcatalog.markdown_pages"}
    (sources,) = [s for s in forbidden if pages <= set(s)]  # and the page pieces beside them (anchors, repro, ...)
    assert forbidden[sources] == {f"toolcatalog.{m}" for m in ("formats", "harvest", "discover", "conformance", "sandbox", "process")}
    assert forbidden[("toolcatalog.conformance",)] == {"toolcatalog.formats"}
    assert any(c["type"] == "layers" and c.get("containers") == ["toolcatalog.sandbox"] and c.get("exhaustive") for c in _contracts())
