"""Everything a site publishes for agents, built the same way by every host.

`render(catalog, options, site)` returns every output as `{site path: text}`:

- `catalog_file` (default `catalog.json`): the catalog document (`catalog_json`), validated
  against the shipped `schemas/catalog.schema.json`, which is published beside it as
  `schemas/catalog-v1.schema.json`.
- `tool_json_dir` (default `tools`): one `<slug>.json` per tool (the tool's catalog entry plus a
  `$schema` pointing at `#/$defs/tool`), at `tool.json_path` (see `placement`).
- `mcp_file` (default `mcp-tools.json`): an MCP `tools/list` result (`mcp`).
- `llms_file` (default `llms.txt`): the llms.txt index of the tools (`llms`).

An empty string turns an output off. Nothing here reads the clock (except SOURCE_DATE_EPOCH,
when set), the machine's paths, or the order files were found in, so the same sources give the
same bytes; `write` puts each file in place atomically. Tools must have been placed first.
"""

from __future__ import annotations

import posixpath
from pathlib import Path

from ..files import write_atomic
from ..model import Catalog
from ..options import Options, OptionsError, output_paths
from . import catalog_json, llms, mcp
from .site import Site, reference

__all__ = ["ExportError", "Site", "catalog_document", "render", "write"]


class ExportError(Exception):
    """An output cannot be produced: a bad SOURCE_DATE_EPOCH, or (a bug) an output that breaks its own schema."""


def catalog_document(catalog: Catalog, options: Options | None = None, site: Site | None = None) -> dict:
    """The catalog document exactly as `render` publishes it (with the MCP list's omissions when
    that output is on). Raises ExportError."""
    options = options or Options()
    paths = output_paths(options)
    omitted = mcp.plan(catalog, posixpath.basename(paths.mcp)).diagnostics if paths.mcp is not None else None
    try:
        return catalog_json.document(catalog, options, site or Site(), omitted)
    except catalog_json.CatalogError as exc:
        raise ExportError(f"internal error, please report it: {exc}") from None
    except OptionsError as exc:  # SOURCE_DATE_EPOCH
        raise ExportError(str(exc)) from None


def render(catalog: Catalog, options: Options | None = None, site: Site | None = None) -> dict[str, str]:
    """Every enabled output as `{site path: text}`, in a stable order. Raises ExportError."""
    options = options or Options()
    site = site or Site()
    paths = output_paths(options)
    files: dict[str, str] = {}

    def add(path: str, text: str, what: str) -> None:
        if path in files:
            raise ExportError(f"{what} would overwrite {path!r}, another output; change `tool_json_dir` or the file options")
        files[path] = text

    mcp_plan = mcp.plan(catalog, posixpath.basename(paths.mcp)) if paths.mcp is not None else None
    try:
        document = catalog_json.document(catalog, options, site, mcp_plan.diagnostics if mcp_plan else None)
        mcp_document = mcp.document(mcp_plan, site) if mcp_plan else None
    except (catalog_json.CatalogError, mcp.McpShapeError) as exc:
        raise ExportError(f"internal error, please report it: {exc}") from None
    except OptionsError as exc:  # SOURCE_DATE_EPOCH
        raise ExportError(str(exc)) from None
    if paths.catalog is not None:
        add(paths.catalog, catalog_json.dumps(document), "the catalog")
    if paths.schema is not None:
        add(paths.schema, catalog_json.schema_text(), "the catalog schema")
    if paths.tool_json_dir is not None:
        entries = {(t["id"], t["source"]): t for t in document["tools"]}
        for tool in sorted(catalog.tools, key=lambda t: t.json_path or ""):
            if tool.json_path is None:
                raise ExportError("internal error, please report it: a tool was not placed before its JSON was written")
            schema = reference(site, catalog_json.SCHEMA_SITE_PATH, tool.json_path) + "#/$defs/tool"
            add(tool.json_path, catalog_json.dumps({"$schema": schema, **entries[(tool.id, tool.source)]}), f"the JSON of tool {tool.id!r}")
    if mcp_document is not None and paths.mcp is not None:
        add(paths.mcp, catalog_json.dumps(mcp_document), "the MCP tool list")
    if paths.llms is not None:
        add(paths.llms, llms.llms_txt(catalog, options, site), "llms.txt")
    return files


def write(files: dict[str, str], folder: Path) -> list[Path]:
    """Write every output under `folder`, each atomically. Returns the paths written."""
    written = []
    for rel, text in files.items():
        target = folder.joinpath(*rel.split("/"))
        write_atomic(target, text)
        written.append(target)
    return written
