"""Everything a site publishes for agents, built the same way by every host.

`render(catalog, options, site)` returns every output as `{site path: text}`:

- `catalog_file` (default `catalog.json`): the catalog document (`catalog_json`), validated
  against the shipped `schemas/catalog.schema.json`, which is published beside it as
  `schemas/catalog-v2.schema.json`, and digested (`integrity`).
- `tool_json_dir` (default `tools`): one `<slug>.json` per tool (the tool's catalog entry plus a
  `$schema` pointing at `#/$defs/tool`), at `tool.json_path` (see `placement`).
- `mcp_file` (default `mcp-tools.json`): an MCP `tools/list` result (`mcp`), whose tools repeat
  their catalog entry's verification, provenance and digest.
- `llms_file` (default `llms.txt`): the llms.txt index of the tools (`llms`), with the digests.

An empty string turns an output off. Nothing here reads the clock (except SOURCE_DATE_EPOCH,
when set), the machine's paths, or the order files were found in, so the same sources give the
same bytes; `write` puts each file in place atomically. Tools must have been placed first.
"""

from __future__ import annotations

import posixpath
from pathlib import Path
from typing import Any

from ..files import write_atomic
from ..model import Catalog
from ..options import Options, OptionsError, output_paths
from . import catalog_json, integrity, llms, mcp
from .site import Site, reference

__all__ = ["ExportError", "Site", "catalog_document", "render", "write"]


class ExportError(Exception):
    """An output cannot be produced: a bad SOURCE_DATE_EPOCH, or (a bug) an output that breaks its own schema."""


def _mcp_plan(catalog: Catalog, options: Options) -> mcp.McpPlan | None:
    paths = output_paths(options)
    if paths.mcp is None:
        return None
    return mcp.plan(catalog, posixpath.basename(paths.mcp), options.mcp_exclude, options.mcp_list == "all")


def _mcp_names(plan: mcp.McpPlan | None) -> dict[tuple[str, str], list[tuple[str, str | None]]]:
    """(id, source) -> the MCP items made of that entry: (name, smart tool capability or None)."""
    names: dict[tuple[str, str], list[tuple[str, str | None]]] = {}
    for tool, name, capability in (plan.tools if plan else []):
        names.setdefault((tool.id, tool.source), []).append((name, capability))
    return names


def catalog_document(catalog: Catalog, options: Options | None = None, site: Site | None = None) -> dict[str, Any]:
    """The catalog document exactly as `render` publishes it (with the MCP list's omissions when
    that output is on). Raises ExportError."""
    options = options or Options()
    mcp_plan = _mcp_plan(catalog, options)
    omitted = mcp_plan.diagnostics if mcp_plan else None
    try:
        return catalog_json.document(catalog, options, site or Site(), omitted)
    except catalog_json.CatalogError as exc:
        raise ExportError(f"internal error, please report it: {exc}") from None
    except OptionsError as exc:  # SOURCE_DATE_EPOCH
        raise ExportError(str(exc)) from None


def render(catalog: Catalog, options: Options | None = None, site: Site | None = None) -> dict[str, str]:
    """Every enabled output as `{site path: text}`, in a stable order. Raises ExportError.

    A big catalog's entries are far larger as Python objects than as text, so they are made one
    at a time: each is digested into the running catalog digest, checked against the schema,
    turned into text once (for the catalog and for the tool's own file), its MCP tool made and
    written too, and then let go. The bytes are those of `catalog_document` and `mcp.document`
    (tests/test_scale_outputs.py holds them equal)."""
    options = options or Options()
    site = site or Site()
    paths = output_paths(options)
    files: dict[str, str] = {}

    def add(path: str, text: str, what: str) -> None:
        if path in files:
            raise ExportError(f"{what} would overwrite {path!r}, another output; change `tool_json_dir` or the file options")
        files[path] = text

    mcp_plan = _mcp_plan(catalog, options)
    mcp_names = _mcp_names(mcp_plan if paths.mcp else None)
    tool_files: dict[str, tuple[str, str]] = {}  # site path -> (text, tool id)
    entry_texts: list[str] = []
    mcp_texts: list[str] = []
    digests: list[dict[str, Any]] = []  # what llms.txt reads of each entry (`llms.projection`)
    try:
        head = catalog_json.head(catalog, options, site, mcp_plan.diagnostics if mcp_plan else None)
        catalog_json.validate({**head, "tools": [], integrity.CATALOG_FIELD: integrity.PREFIX + "0" * 64})
        sealer = integrity.Sealer(head)
        for tool, entry in catalog_json.entries(catalog, options, site):
            sealer.add(entry)
            catalog_json.validate_tool(entry, "catalog")
            key = (entry["id"], entry["source"])
            digests.append(llms.projection(entry))
            for name, capability in mcp_names.get(key, []):
                mcp_texts.append(catalog_json.dumps(mcp.item(entry, name, capability)))
            text = catalog_json.dumps(entry)
            entry_texts.append(text)
            if paths.tool_json_dir is not None:
                if tool.json_path is None:
                    raise ExportError("internal error, please report it: a tool was not placed before its JSON was written")
                if tool.json_path in tool_files:
                    raise ExportError(f"the JSON of tool {entry['id']!r} would overwrite {tool.json_path!r}, another output; "
                                      "change `tool_json_dir` or the file options")
                schema = catalog_json.SCHEMA_ID + "#/$defs/tool"
                tool_files[tool.json_path] = (catalog_json.dumps_tool_file(schema, entry, text), entry["id"])
        head[integrity.CATALOG_FIELD] = sealer.finish()
    except integrity.DigestError as exc:
        raise ExportError(f"internal error, please report it: the catalog cannot be digested: {exc}") from None
    except (catalog_json.CatalogError, mcp.McpShapeError) as exc:
        raise ExportError(f"internal error, please report it: {exc}") from None
    except OptionsError as exc:  # SOURCE_DATE_EPOCH
        raise ExportError(str(exc)) from None
    if paths.catalog is not None:
        add(paths.catalog, catalog_json.dumps_catalog(head, entry_texts), "the catalog")
    del entry_texts
    if paths.schema is not None:
        add(paths.schema, catalog_json.schema_text(), "the catalog schema")
    for json_path in sorted(tool_files):
        text, tool_id = tool_files[json_path]
        add(json_path, text, f"the JSON of tool {tool_id!r}")
    if mcp_plan is not None and paths.mcp is not None:
        mcp_head = mcp.head(
            ttl_ms=options.mcp_ttl_ms, cache_scope=options.mcp_cache_scope,
            catalog_link=reference(site, paths.catalog, paths.mcp) if paths.catalog else None,
            catalog_digest=head[integrity.CATALOG_FIELD] if paths.catalog else None,
        )
        add(paths.mcp, catalog_json.dumps_catalog(mcp_head, mcp_texts), "the MCP tool list")
    if paths.llms is not None:  # it repeats the digests: the catalog's and each entry's
        add(paths.llms, llms.from_catalog({**head, "tools": digests}), "llms.txt")
    return files


def write(files: dict[str, str], folder: Path) -> list[Path]:
    """Write every output under `folder`, each atomically. Returns the paths written."""
    written = []
    for rel, text in files.items():
        target = folder.joinpath(*rel.split("/"))
        write_atomic(target, text)
        written.append(target)
    return written
