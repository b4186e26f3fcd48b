"""From a workspace to a `Catalog`: discover, parse every manifest, link, order.

A manifest that cannot be parsed still becomes a tool, marked invalid with the
reason, so one bad file never hides the rest of the catalog.
"""

from __future__ import annotations

import os
from pathlib import Path


from .discover import DRIVER_MD, SMART_TOOL_JSON, SMART_TOOL_MD, TOOL_MD, Found, discover, relative
from .formats import aip14, aip30, common, link, smarttool, speccify
from .model import ERROR, Catalog, Status, Tool
from .options import Options


def harvest(workspace: Path, options: Options | None = None, skip: list[Path] | None = None) -> Catalog:
    """Harvest every manifest under `workspace` (a folder; usually the one holding mkdocs.yml)."""
    options = options or Options()
    workspace = Path(os.path.abspath(workspace))
    found = discover(workspace, options.paths, options.exclude, skip)
    catalog = Catalog(root=workspace, diagnostics=list(found.diagnostics))
    max_bytes = options.max_manifest_bytes

    descriptors = [f for f in found.files if f.name == SMART_TOOL_JSON]
    smart_manifests = [f for f in found.files if f.name == SMART_TOOL_MD]
    roots = [f.path.parent for f in descriptors]
    claimed: set[str] = set()
    for descriptor in descriptors:
        root = descriptor.path.parent
        inside = [m.path for m in smart_manifests if _owner(m.path, roots) == root]
        tool, manifest_path = smarttool.parse_distribution(descriptor.path, workspace, max_bytes, inside)
        if manifest_path is not None:
            claimed.add(os.path.realpath(manifest_path))
        claimed.update(os.path.realpath(p) for p in inside)
        catalog.tools.append(tool)
    for manifest in smart_manifests:
        if os.path.realpath(manifest.path) not in claimed:
            catalog.tools.append(smarttool.parse_standalone(manifest.path, workspace, max_bytes, manifest.search_root))

    for item in found.files:
        source = relative(item.path, workspace)
        if item.name == TOOL_MD:
            catalog.tools.append(_parse_tool_md(item, source, max_bytes))
        elif item.name == DRIVER_MD:
            driver = aip30.parse(item.path, source, max_bytes)
            driver.search_root = item.search_root
            catalog.drivers.append(driver)

    link.link(catalog)
    for driver in catalog.drivers:
        if not any(entry.tool_id for entry in driver.implements):
            catalog.diagnostics.extend(d for d in driver.diagnostics if d.severity == ERROR)
    catalog.tools.sort(key=lambda t: (t.id, t.source))
    catalog.drivers.sort(key=lambda d: (d.id, d.source))
    for tool in catalog.tools:
        tool.status = Status.INVALID if not tool.valid else Status.NOT_RUN
    return catalog


def _owner(path: Path, roots: list[Path]) -> Path | None:
    """The innermost distribution root holding `path` (a nested descriptor bounds a nested distribution)."""
    best: Path | None = None
    for root in roots:
        try:
            path.relative_to(root)
        except ValueError:
            continue
        if best is None or len(root.parts) > len(best.parts):
            best = root
    return best


def _parse_tool_md(item: Found, source: str, max_bytes: int) -> Tool:
    """Classify a TOOL.md by its content (AIP-14 has `id`), and say so when the folder suggests otherwise."""
    diagnostics: list = []
    sink = common.Sink(source, diagnostics)
    manifest = common.read_manifest(item.path, sink, max_bytes)
    if manifest is None:
        # Unreadable: the format the location suggests gets the tool and the reason.
        parser = aip14.parse if item.hint == "aip-14" else speccify.parse
        tool = parser(item.path, source, max_bytes, manifest=None, diagnostics=diagnostics, read=False)
        return tool
    # In speccify's own folder only an `id` makes a TOOL.md AIP-14: speccify keeps unknown keys, so
    # a speccify tool may well carry a `version` or `tags`.
    is_aip14 = "id" in manifest.data if item.hint == "speccify" else aip14.looks_like_aip14(manifest.data)
    if is_aip14:
        if item.hint == "speccify":
            sink.warning(
                "this TOOL.md has an AIP-14 `id`, so it is read as AIP-14, but it sits in `.agent/tools/` (speccify's folder)",
                manifest.line(("id",)),
                "misclassified",
            )
        return aip14.parse(item.path, source, max_bytes, manifest=manifest, diagnostics=diagnostics)
    tool = speccify.parse(item.path, source, max_bytes, manifest=manifest, diagnostics=diagnostics)
    if item.hint == "aip-14":
        tool.warning(
            "this TOOL.md sits in `.tools/` (AIP-14's folder) but has no `id`, so it is read as a speccify tool",
            2,
            "misclassified",
        )
    return tool
