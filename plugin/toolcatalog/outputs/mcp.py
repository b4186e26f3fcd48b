"""`mcp-tools.json`: the catalog as an MCP `tools/list` result, revision 2026-07-28.

MCP export rules (all documented decisions, docs/catalog-json.md):

- The result is complete (`resultType: "complete"`, no `nextCursor`) and carries the caching
  hints that revision requires: `ttlMs` (option `mcp_ttl_ms`) and `cacheScope` (option
  `mcp_cache_scope`). Tools are listed in catalog order (id, then source), which the revision
  asks for ("deterministic order").
- Which tools: by default (`mcp_list: usable`) only those an agent can use
  (`claims.Claims.usable`: valid, passed or not run for a reason that is no failure, never caught
  with an undeclared effect); a smart tool is listed once per capability that is deterministic by
  the evidence, as `<id>.<capability>`, whose `inputSchema` is one `args` string array (the words
  after the capability's name; the entry's `invoke` block has the argv). `mcp_list: all` lists
  every valid tool and every capability. An invalid tool, and a tool whose `inputs` cannot be an
  MCP `inputSchema`, is left out with a catalog-level `warning` diagnostic (code `mcp-omitted`,
  path = the manifest) in catalog.json; a tool whose status is listed in the `mcp_exclude` option
  is left out with an `mcp-excluded` one. Both only when the MCP output is on. A tool left out as
  unusable gets none (its entry's `claims.usable_why` says why).
- The list is a pure function of the published catalog document (`from_catalog`): every item is
  made from its catalog entry alone (`item`), and the selection reads the same values from a Tool
  before its entry exists (`row_of_tool`) as from the entry (`row_of_entry`).
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
- `annotations`: the catalog entry's (`claims.hints_of`: from the contract and from observation;
  a hint neither supports is MCP's default, stated), always present; why each holds is in
  `_meta["toolcatalog/annotation-reasons"]`, the whole claims record in `_meta["toolcatalog/claims"]`.
- `title`: the manifest's name (a capability's: `name: capability`), only when it differs from `name`.
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
import posixpath
import re
from dataclasses import dataclass
from typing import Any, Iterable

from .. import claims, invoke
from ..model import WARNING, Catalog, Diagnostic, Tool
from ..scrub import clean
from .catalog_json import dumps, dumps_catalog
from .site import Site, reference

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


# -- which tools the list holds ----------------------------------------------------------------

CAPABILITY_ARGS = {
    "type": "object",
    "properties": {"args": {"type": "array", "items": {"type": "string"},
                            "description": "the words after the capability's name on its command line (see its `--help`)"}},
    "additionalProperties": False,
}


@dataclass(frozen=True)
class Row:
    """What the selection reads of one tool: the same values from a Tool (`row_of_tool`, before
    its entry exists) and from its published entry (`row_of_entry`, for `from_catalog`)."""

    id: str
    source: str
    valid: bool
    inputs: Any
    status: str
    usable: bool
    usable_why: str
    capabilities: tuple[tuple[str, str], ...]  # (name, kind) of a smart tool's capabilities
    smart: bool  # called per capability (an `invoke` way of protocol smart-tool-cli)


def _smart_way(invoke: dict[str, Any]) -> dict[str, Any] | None:
    return next((w for w in invoke.get("ways", []) if w.get("protocol") == "smart-tool-cli"), None)


def row_of_entry(entry: dict[str, Any]) -> Row:
    way = _smart_way(entry["invoke"])
    caps = tuple((c["name"], c["kind"]) for c in way["capabilities"]) if way else ()
    claim = entry["claims"]
    return Row(entry["id"], entry["source"], entry["valid"], entry["inputs"], entry["status"], claim["usable"],
               claim["usable_why"], caps, way is not None)


def row_of_tool(tool: Tool) -> Row:
    claim = claims.of(tool)
    return row_of_entry({"id": tool.id, "source": tool.source, "valid": tool.valid, "inputs": tool.inputs,
                         "status": tool.status.value, "claims": claim.as_dict(), "invoke": invoke.of(tool, claim)})


@dataclass
class McpPlan:
    # exported tools in catalog order: (tool, MCP name, capability or None); `tool` is a Tool or a Row
    tools: list[tuple[Any, str, str | None]]
    diagnostics: list[Diagnostic]  # one `mcp-omitted` or `mcp-excluded` warning per tool left out


def _why_left_out(row: Row, excluded: set[str], list_all: bool) -> tuple[str, str] | None:
    if not row.valid:
        return "its manifest is invalid (see its errors)", "mcp-omitted"
    if not row.smart and row.inputs is None:
        return "the contract declares no input schema, and MCP requires one", "mcp-omitted"
    if not row.smart and mcp_input_schema(row.inputs) is None:
        return "its `inputs` schema's root is not an object, and MCP arguments are always an object", "mcp-omitted"
    if row.status in excluded:
        return f"its status {row.status} is listed in `mcp_exclude`", "mcp-excluded"
    if not list_all and not row.usable:
        return f"an agent should not use it: {row.usable_why} (`mcp_list: all` lists it)", "mcp-unusable"
    if row.smart and not _capabilities(row, list_all):
        return ("no capability of it is deterministic by the evidence (`mcp_list: all` lists them all)" if row.capabilities
                else "its `--help` listed no capabilities, and it is called per capability"), "mcp-omitted"
    return None


def _capabilities(row: Row, list_all: bool) -> list[str]:
    return [name for name, kind in row.capabilities if list_all or kind == "deterministic"]


def select(rows: list[tuple[Any, Row]], file_name: str = "mcp-tools.json", exclude: Iterable[str] = (),
           list_all: bool = False) -> McpPlan:
    """Which tools (and smart tools' capabilities) the list holds, under which names, in catalog
    order: only those an agent can use (`claims.Claims.usable`) unless `list_all`."""
    excluded = set(exclude)
    exported: list[tuple[Any, str, str | None]] = []
    diagnostics: list[Diagnostic] = []
    used: set[str] = set()
    for subject, row in sorted(rows, key=lambda pair: (pair[1].id, pair[1].source)):
        left_out = _why_left_out(row, excluded, list_all)
        if left_out:
            why, code = left_out
            if code == "mcp-unusable":  # no manifest problem: the entry's `claims.usable_why` says it
                continue
            diagnostics.append(Diagnostic(WARNING, f"tool {row.id!r} is left out of {file_name}: {why}", row.source, None, code))
            continue
        for capability in _capabilities(row, list_all) if row.smart else [None]:
            base = mcp_name(row.id if capability is None else f"{row.id}.{capability}")
            name, n = base, 2
            while name in used:
                suffix = f"_{n}"
                name, n = base[: 128 - len(suffix)] + suffix, n + 1
            used.add(name)
            exported.append((subject, name, capability))
    return McpPlan(exported, diagnostics)


def plan(catalog: Catalog, file_name: str = "mcp-tools.json", exclude: Iterable[str] = (), list_all: bool = False) -> McpPlan:
    """`select` over a harvested catalog's tools."""
    return select([(tool, row_of_tool(tool)) for tool in catalog.tools], file_name, exclude, list_all)


# -- one tool of the list ----------------------------------------------------------------------


def _capability_entry(entry: dict[str, Any], capability: str) -> dict[str, Any]:
    way = _smart_way(entry["invoke"]) or {}
    return next((c for c in way.get("capabilities", []) if c["name"] == capability), {})


def _summary(entry: dict[str, Any], capability: str) -> str:
    return next((c.get("summary") or "" for c in entry["capabilities"] if c.get("name") == capability), "")


# MCP's defaults for an absent hint (ToolAnnotations): what a client must assume without evidence.
_WORST = {"readOnlyHint": False, "destructiveHint": True, "openWorldHint": True}


def _annotations(entry: dict[str, Any], capability: str | None) -> dict[str, Any]:
    """The entry's hints; for a capability that is not deterministic (a model-backed one is never
    run at build time), a hint that only observation supports is MCP's default instead: the
    sandbox saw the tool's other runs, not that capability's work."""
    hints = dict(entry["annotations"])
    if capability is None or _capability_entry(entry, capability).get("kind") == "deterministic":
        return hints
    reasons = entry.get("annotation_reasons") or {}
    for hint, worst in _WORST.items():
        why = reasons.get(hint)
        if isinstance(why, dict) and "observed" in (why.get("fields") or []):
            hints[hint] = worst
    return hints


def item(entry: dict[str, Any], name: str, capability: str | None = None) -> dict[str, Any]:
    """One tool of the list, named `name` (from `select`), made from its published catalog entry
    alone (so `from_catalog` re-derives it byte for byte). `capability`: a smart tool's
    capability this item calls. Raises McpShapeError (a bug)."""
    m = MCP_META_PREFIX
    title = entry["name"] if capability is None else f"{entry['name']}: {capability}"
    out: dict[str, Any] = {"name": name}
    if title and title != name:
        out["title"] = title
    out["inputSchema"] = mcp_input_schema(entry["inputs"]) if capability is None else _with_dialect(copy.deepcopy(CAPABILITY_ARGS))
    description = entry["description"] if capability is None else (_summary(entry, capability) or entry["description"])
    if description:
        out["description"] = description
    output = mcp_output_schema(entry["outputs"]) if capability is None else None
    if output is not None:
        out["outputSchema"] = output
    out["annotations"] = _annotations(entry, capability)
    meta: dict[str, Any] = {m + "id": entry["id"], m + "page": entry["page"]}
    if entry["json"]:
        meta[m + "json"] = entry["json"]
    if entry["version"]:
        meta[m + "version"] = entry["version"]
    if capability is not None:
        meta[m + "capability"] = _capability_entry(entry, capability)
    meta[m + "claims"] = entry["claims"]
    if entry["annotation_reasons"]:
        meta[m + "annotation-reasons"] = entry["annotation_reasons"]
    meta[m + "verification"] = entry["verification"]
    meta[m + "provenance"] = entry["provenance"]
    meta[m + "digest"] = entry["entry_digest"]
    if "coverage" in entry:  # the scores an agent weighs a tool by; the uncovered lists stay in the catalog
        cov = entry["coverage"]
        meta[m + "coverage"] = {"total": cov["total"], **{key: d["score"] for key, d in cov["dimensions"].items()}}
        meta[m + "quality-findings"] = entry["quality"]["findings"]
    out["_meta"] = meta
    made: dict[str, Any] = clean(out)
    if not MCP_NAME.match(made["name"]) or made["inputSchema"] is None or made["inputSchema"].get("type") != "object":
        raise McpShapeError(f"MCP tool {made['name']!r} breaks the MCP Tool shape")
    return made


def tool_item(tool: Tool, name: str, site: Site, entry: dict[str, Any], capability: str | None = None) -> dict[str, Any]:
    """`item` (kept for callers that hold the Tool too; the Tool and the site are not read)."""
    return item(entry, name, capability)


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
    result["tools"] = [item(entries[(subject.id, subject.source)], name, capability) for subject, name, capability in plan.tools]
    return result


def from_catalog(document: dict[str, Any]) -> str:
    """mcp-tools.json, byte for byte as `outputs.render` publishes it, from the published catalog
    document alone (its `published` block says where the files are and the MCP options). Raises
    McpShapeError (a malformed entry) or KeyError/TypeError (not a catalog document)."""
    published = document["published"]
    files, options = published["files"], published["mcp"]
    rows = [(entry, row_of_entry(entry)) for entry in document["tools"]]
    chosen = select(rows, posixpath.basename(files["mcp"] or "mcp-tools.json"), options["exclude"], options["list"] == "all")
    site = Site(url=published["site"]["url"])
    catalog = files["catalog"]
    result = head(
        ttl_ms=options["ttl_ms"], cache_scope=options["cache_scope"],
        catalog_link=reference(site, catalog, files["mcp"]) if catalog else None,
        catalog_digest=document["catalog_digest"] if catalog else None,
    )
    texts = [dumps(item(entry, name, capability)) for entry, name, capability in chosen.tools]
    return dumps_catalog(result, texts)
