"""`mcp-tools.json`: the catalog as an MCP `tools/list` result, revision 2026-07-28.

MCP export rules (all documented decisions, docs/catalog-json.md):

- The result is complete (`resultType: "complete"`, no `nextCursor`) and carries the caching
  hints that revision requires: `ttlMs` (option `mcp_ttl_ms`) and `cacheScope` (option
  `mcp_cache_scope`). Tools are listed in catalog order (id, then source), which the revision
  asks for ("deterministic order").
- Only valid tools are exported. An invalid one, and a tool whose `inputs` cannot be an MCP
  `inputSchema`, is left out with a catalog-level `warning` diagnostic (code `mcp-omitted`,
  path = the manifest) in catalog.json; a tool whose status is listed in the `mcp_exclude`
  option is left out with an `mcp-excluded` one. Both only when the MCP output is on.
- `inputSchema`: the tool's `inputs` when its root is an object schema (`type: object`, or no
  `type`, or a `type` list holding `object`: `type` is then set to `object`, which MCP requires
  and which only narrows to the objects every MCP call passes). A root that cannot be an object
  (`type: string`, a boolean schema) or no `inputs` at all (smart tools) is left out: wrapping
  the value in an `input` property would invent a calling convention the implementation does
  not follow.
- `outputSchema`: the tool's `outputs` when it is a schema object (the revision allows any JSON
  Schema there, not only objects); otherwise absent.
- Both schemas get `"$schema"` for JSON Schema 2020-12 when the contract's has none (2020-12 is
  what the project validates such schemas as, and MCP's default); a declared one is kept.
- `annotations`: the catalog entry's (`safety.hints`); why each holds is in
  `_meta["toolcatalog/annotation-reasons"]`.
- `name`: the tool id when it is already 1-128 characters of `[A-Za-z0-9_.-]`; otherwise every
  run of other characters becomes `_`, cut to 128; a clash with an earlier name (tools in id
  order) gets `_2`, `_3`, ... `_meta["toolcatalog/id"]` always carries the original id.
- `_meta["toolcatalog/coverage"]`: the entry's coverage scores (`total` and one per dimension,
  null where there is no goal) and `_meta["toolcatalog/quality-findings"]` its number of quality
  findings (docs/coverage.md); the uncovered lists stay in the catalog entry.
- `_meta` keys use the prefix `toolcatalog/`. MCP's rule for `_meta` keys: an optional prefix of
  dot-separated labels ending in `/`, reverse-DNS recommended (SHOULD), prefixes whose second
  label is `modelcontextprotocol` or `mcp` reserved. `toolcatalog/` is a valid one-label prefix
  and reserves nothing of MCP's; we own no domain whose reverse form would say more, and the
  key names have been published since catalog version 1.
"""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass
from typing import Any, Iterable

from ..model import WARNING, Catalog, Diagnostic, Tool
from .catalog_json import clean
from .site import Site

MCP_REVISION = "2026-07-28"
JSON_SCHEMA_2020_12 = "https://json-schema.org/draft/2020-12/schema"
MCP_NAME = re.compile(r"^[A-Za-z0-9_.-]{1,128}$")
_MCP_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]+")
MCP_META_PREFIX = "toolcatalog/"


class McpShapeError(Exception):
    """A tool we produced breaks the MCP Tool shape: a bug, never a user error."""


def mcp_name(tool_id: str) -> str:
    if MCP_NAME.match(tool_id):
        return tool_id
    name = _MCP_UNSAFE.sub("_", tool_id)[:128]
    return name if name.strip("_") else "tool"


def _with_dialect(schema: dict[str, Any]) -> dict[str, Any]:
    if "$schema" in schema:
        return schema
    return {"$schema": JSON_SCHEMA_2020_12, **schema}


def mcp_input_schema(schema: Any) -> dict[str, Any] | None:
    """The MCP `inputSchema` for a tool's `inputs`, or None when its root cannot be an object."""
    if not isinstance(schema, dict):
        return None
    declared = schema.get("type", "object")
    if declared == "object" or (isinstance(declared, list) and "object" in declared):
        out = copy.deepcopy(schema)
        out["type"] = "object"
        return _with_dialect(out)
    return None


def mcp_output_schema(schema: Any) -> dict[str, Any] | None:
    """The MCP `outputSchema` for a tool's `outputs`: any schema object; None for anything else."""
    if isinstance(schema, dict):
        return _with_dialect(copy.deepcopy(schema))
    return None


@dataclass
class McpPlan:
    tools: list[tuple[Tool, str]]  # exported tools and their MCP names, in catalog order
    diagnostics: list[Diagnostic]  # one `mcp-omitted` or `mcp-excluded` warning per tool left out


def plan(catalog: Catalog, file_name: str = "mcp-tools.json", exclude: Iterable[str] = ()) -> McpPlan:
    """Which tools the list holds, under which names. `exclude`: tool statuses left out."""
    excluded = set(exclude)
    exported: list[tuple[Tool, str]] = []
    diagnostics: list[Diagnostic] = []
    used: set[str] = set()
    for tool in sorted(catalog.tools, key=lambda t: (t.id, t.source)):
        why, code = None, "mcp-omitted"
        if not tool.valid:
            why = "its manifest is invalid (see its errors)"
        elif tool.inputs is None:
            why = "the contract declares no input schema, and MCP requires one"
        elif mcp_input_schema(tool.inputs) is None:
            why = "its `inputs` schema's root is not an object, and MCP arguments are always an object"
        elif tool.status.value in excluded:
            why, code = f"its status {tool.status.value} is listed in `mcp_exclude`", "mcp-excluded"
        if why:
            diagnostics.append(Diagnostic(WARNING, f"tool {tool.id!r} is left out of {file_name}: {why}", tool.source, None, code))
            continue
        base = mcp_name(tool.id)
        name, n = base, 2
        while name in used:
            suffix = f"_{n}"
            name, n = base[: 128 - len(suffix)] + suffix, n + 1
        used.add(name)
        exported.append((tool, name))
    return McpPlan(exported, diagnostics)


def tool_item(tool: Tool, name: str, site: Site, entry: dict[str, Any]) -> dict[str, Any]:
    """One tool of the list, named `name` (from `plan`). `entry`: its published catalog entry, whose
    verification, provenance and digest the `_meta` repeats. Raises McpShapeError (a bug)."""
    m = MCP_META_PREFIX
    out: dict[str, Any] = {"name": name, "title": tool.name, "inputSchema": mcp_input_schema(tool.inputs)}
    if tool.description:
        out["description"] = tool.description
    output = mcp_output_schema(tool.outputs)
    if output is not None:
        out["outputSchema"] = output
    if entry["annotations"]:
        out["annotations"] = entry["annotations"]
    meta: dict[str, Any] = {m + "id": tool.id, m + "page": site.link(tool.url)}
    if tool.json_path:
        meta[m + "json"] = site.link(tool.json_path)
    if tool.version:
        meta[m + "version"] = tool.version
    if entry["annotation_reasons"]:
        meta[m + "annotation-reasons"] = entry["annotation_reasons"]
    meta[m + "verification"] = entry["verification"]
    meta[m + "provenance"] = entry["provenance"]
    meta[m + "digest"] = entry["entry_digest"]
    if "coverage" in entry:  # the scores an agent weighs a tool by; the uncovered lists stay in the catalog
        cov = entry["coverage"]
        meta[m + "coverage"] = {"total": cov["total"], **{name: d["score"] for name, d in cov["dimensions"].items()}}
        meta[m + "quality-findings"] = entry["quality"]["findings"]
    out["_meta"] = meta
    item = clean(out)
    if not MCP_NAME.match(item["name"]) or item["inputSchema"].get("type") != "object":
        raise McpShapeError(f"MCP tool {item['name']!r} breaks the MCP Tool shape")
    return item


def head(*, ttl_ms: int, cache_scope: str, catalog_link: str | None = None, catalog_digest: str | None = None) -> dict[str, Any]:
    """The `tools/list` result without its `tools`. `catalog_link` and `catalog_digest` name the
    catalog the list was made from (None when it is not published)."""
    m = MCP_META_PREFIX
    meta = {m + "mcp-revision": MCP_REVISION}
    if catalog_link is not None:
        meta[m + "catalog"] = catalog_link
    if catalog_digest is not None:
        meta[m + "catalog-digest"] = catalog_digest
    return {"resultType": "complete", "ttlMs": ttl_ms, "cacheScope": cache_scope, "_meta": meta}


def document(
    plan: McpPlan,
    site: Site,
    *,
    ttl_ms: int,
    cache_scope: str,
    entries: dict[tuple[str, str], dict[str, Any]],
    catalog_link: str | None = None,
    catalog_digest: str | None = None,
) -> dict[str, Any]:
    """The MCP `tools/list` result, every tool held at once (`outputs.render` writes the same
    bytes one tool at a time). `entries`: the published catalog entries by (id, source)."""
    result = head(ttl_ms=ttl_ms, cache_scope=cache_scope, catalog_link=catalog_link, catalog_digest=catalog_digest)
    result["tools"] = [tool_item(tool, name, site, entries[(tool.id, tool.source)]) for tool, name in plan.tools]
    return result
