"""mcp-tools.json (option `mcp_file`): the MCP `tools/list` result (`outputs.mcp`). It quotes the
catalog digest, so it is drafted with it left out (`published.quoting`).

Verified against the catalog: the list's catalog digest is the catalog's, and every tool is the
one its catalog entry makes (`rederive`: description, input and output schemas, annotations,
`_meta` copies), field by field, so an edited description, an added input property or a flipped
`annotations.readOnlyHint` is named."""

from __future__ import annotations

from typing import Any

from ...model import Tool
from .. import catalog_json, integrity, mcp
from ..published import Quoted, plain, quoting
from ..site import reference
from .base import Check, Draft, Drafting, Output, Plan, SourceError, quoted_draft
from .reading import differences, load_json

META = mcp.MCP_META_PREFIX


class Writer:
    def __init__(self, plan: Plan, path: str, mcp_plan: mcp.McpPlan) -> None:
        self.plan, self.path = plan, path
        self.names = {(tool.id, tool.source): name for tool, name in mcp_plan.tools}
        self.texts: list[str] = []

    def entry(self, tool: Tool, entry: dict[str, Any], text: str) -> None:
        name = self.names.get((entry["id"], entry["source"]))
        if name is not None:
            self.texts.append(catalog_json.dumps(mcp.tool_item(tool, name, self.plan.site, entry)))

    def drafts(self, drafting: Drafting) -> list[Draft]:
        options, paths = self.plan.options, self.plan.paths

        def render(catalog_digest: str | None) -> str:
            head = mcp.head(ttl_ms=options.mcp_ttl_ms, cache_scope=options.mcp_cache_scope,
                            catalog_link=reference(self.plan.site, paths.catalog, self.path) if paths.catalog else None,
                            catalog_digest=catalog_digest)
            return catalog_json.dumps_catalog(head, self.texts)

        text: Quoted = quoting(render, drafting.seed) if paths.catalog else plain(render(None))
        self.texts = []
        return [quoted_draft(self.path, "the MCP tool list", text)]


def writer(plan: Plan) -> Writer | None:
    if plan.paths.mcp is None or plan.mcp_plan is None:
        return None
    return Writer(plan, plan.paths.mcp, plan.mcp_plan)


# -- verifying ------------------------------------------------------------------------------------
def rederive(entry: dict[str, Any], name: str) -> dict[str, Any]:
    """The MCP tool the build makes of catalog entry `entry` under `name`, from the entry alone.

    Plug-in point: once `mcp.from_catalog(document, ...)` exists, the whole list is re-derived by
    that one call (see `expected_tools`)."""
    out: dict[str, Any] = {"name": name, "title": entry.get("name"), "inputSchema": mcp.mcp_input_schema(entry.get("inputs"))}
    if entry.get("description"):
        out["description"] = entry["description"]
    output = mcp.mcp_output_schema(entry.get("outputs"))
    if output is not None:
        out["outputSchema"] = output
    if entry.get("annotations"):
        out["annotations"] = entry["annotations"]
    meta: dict[str, Any] = {META + "id": entry.get("id"), META + "page": entry.get("page")}
    if entry.get("json"):
        meta[META + "json"] = entry["json"]
    if entry.get("version"):
        meta[META + "version"] = entry["version"]
    if entry.get("annotation_reasons"):
        meta[META + "annotation-reasons"] = entry["annotation_reasons"]
    meta[META + "verification"] = entry.get("verification")
    meta[META + "provenance"] = entry.get("provenance")
    meta[META + "digest"] = entry.get(integrity.ENTRY_FIELD)
    cov = entry.get("coverage")
    if isinstance(cov, dict) and isinstance(cov.get("dimensions"), dict):
        meta[META + "coverage"] = {"total": cov.get("total"), **{k: d.get("score") for k, d in cov["dimensions"].items() if isinstance(d, dict)}}
        quality = entry.get("quality")
        meta[META + "quality-findings"] = quality.get("findings") if isinstance(quality, dict) else None
    out["_meta"] = meta
    return out


def _meta(value: Any) -> dict[str, Any]:
    meta = value.get("_meta") if isinstance(value, dict) else None
    return meta if isinstance(meta, dict) else {}


def expected_tools(check: Check, published: list[Any]) -> dict[int, dict[str, Any] | str]:
    """Per published tool (by position): the tool its catalog entry makes, or why there is none."""
    out: dict[int, dict[str, Any] | str] = {}
    for index, tool in enumerate(published):
        meta = _meta(tool)
        digest = meta.get(META + "digest")
        entry = check.entries.get(digest) if isinstance(digest, str) else None
        if entry is None:
            out[index] = f"digest {digest!r} is no catalog entry's"
        else:
            name = tool.get("name") if isinstance(tool, dict) else None
            out[index] = rederive(entry, name if isinstance(name, str) else "")
    return out


def _list_digest(check: Check, label: str, data: dict[str, Any]) -> bool:
    stated = _meta(data).get(META + "catalog-digest")
    if stated is not None and stated != check.catalog_digest:
        check.result.problems.append(f"{label}: names catalog digest {stated!r}, the catalog's is {check.catalog_digest!r}")
    return stated is not None


def verify(check: Check) -> None:
    label = check.mcp_path or "mcp-tools.json"
    if check.mcp_path is None and not check.source.exists(label):
        return
    try:
        data = load_json(check.source, label, "MCP tool list")
    except SourceError as exc:
        check.result.problems.append(str(exc))
        return
    tools = data.get("tools") if isinstance(data, dict) else None
    if not isinstance(data, dict) or not isinstance(tools, list):
        check.result.problems.append(f"{label}: not an MCP tools/list result")
        return
    before = len(check.result.problems)
    quoted = _list_digest(check, label, data)
    for index, expected in expected_tools(check, tools).items():
        tool = tools[index]
        name = tool.get("name") if isinstance(tool, dict) else None
        where = f"{label}: tool {name if isinstance(name, str) else index!r}"
        if isinstance(expected, str):
            check.result.problems.append(f"{where}: {expected}")
            continue
        for field in differences(tool, expected):
            check.result.problems.append(f"{where}: `{field or '(the tool)'}` differs from what its catalog entry makes")
    if len(check.result.problems) == before:
        check.result.checked.append(f"{label}: {len(tools)} tool digest{'s' if len(tools) != 1 else ''}"
                                    + (" and the catalog digest" if quoted else "") + ", every tool re-derived from its entry")


OUTPUT = Output("mcp_file", writer, verify)
