"""mcp-tools.json (option `mcp_file`): the MCP `tools/list` result (`outputs.mcp`). It quotes the
catalog digest, so it is written once that is known, piece by piece: its head, then each tool's
text (kept compressed since its entry was made).

Verified against the catalog: the list's catalog digest is the catalog's, and every tool is the
one the catalog makes (`mcp.from_catalog`, the writer's own code: description, input and output schemas, annotations,
`_meta` copies), field by field, so an edited description, an added input property or a flipped
`annotations.readOnlyHint` is named."""

from __future__ import annotations

import json
from typing import Any, Iterator

from ...model import Tool
from .. import catalog_json, integrity, mcp
from ..published import Spool
from ..site import reference
from .base import Check, Draft, Drafting, Output, Plan, SourceError
from .reading import differences, load_json

META = mcp.MCP_META_PREFIX


class Writer:
    def __init__(self, plan: Plan, path: str, mcp_plan: mcp.McpPlan) -> None:
        self.plan, self.path = plan, path
        # (id, source) -> the MCP items made of that entry: (name, smart tool capability or None).
        self.names: dict[tuple[str, str], list[tuple[str, str | None]]] = {}
        for tool, name, capability in mcp_plan.tools:
            self.names.setdefault((tool.id, tool.source), []).append((name, capability))
        self.texts = Spool()  # the MCP tools' texts, compressed, until the list is written

    def entry(self, tool: Tool, entry: dict[str, Any], text: str) -> None:
        for name, capability in self.names.get((entry["id"], entry["source"]), []):
            self.texts.append(catalog_json.dumps(mcp.item(entry, name, capability)))

    def drafts(self, drafting: Drafting) -> list[Draft]:
        options, paths = self.plan.options, self.plan.paths

        def final(catalog_head: dict[str, Any]) -> Iterator[str]:
            # Written once the catalog digest is known: the head quotes it, the tools do not.
            head = mcp.head(ttl_ms=options.mcp_ttl_ms, cache_scope=options.mcp_cache_scope,
                            catalog_link=reference(self.plan.site, paths.catalog, self.path) if paths.catalog else None,
                            catalog_digest=catalog_head[integrity.CATALOG_FIELD] if paths.catalog else None)
            yield from catalog_json.catalog_pieces(head, self.texts)
            self.texts.clear()

        return [Draft(self.path, "the MCP tool list", final)]


def writer(plan: Plan) -> Writer | None:
    if plan.paths.mcp is None or plan.mcp_plan is None:
        return None
    return Writer(plan, plan.paths.mcp, plan.mcp_plan)


# -- verifying ------------------------------------------------------------------------------------
def expected_tools(check: Check) -> dict[str, dict[str, Any]] | str:
    """The MCP tools the build makes of the catalog, by name (`mcp.from_catalog`: the same code the
    writer uses, from the published catalog alone), or why they cannot be made."""
    try:
        made = json.loads(mcp.from_catalog(check.document))
    except (KeyError, TypeError, ValueError, AttributeError, mcp.McpShapeError) as exc:
        return f"the catalog does not say how its MCP list is made ({type(exc).__name__}: {str(exc)[:200]})"
    return {tool["name"]: tool for tool in made.get("tools", []) if isinstance(tool, dict) and isinstance(tool.get("name"), str)}


def _meta(value: Any) -> dict[str, Any]:
    meta = value.get("_meta") if isinstance(value, dict) else None
    return meta if isinstance(meta, dict) else {}


def _compare(check: Check, label: str, published: list[Any], expected: dict[str, dict[str, Any]]) -> None:
    seen: set[str] = set()
    for index, tool in enumerate(published):
        name = tool.get("name") if isinstance(tool, dict) else None
        where = f"{label}: tool {name if isinstance(name, str) else index!r}"
        made = expected.get(name) if isinstance(name, str) else None
        if made is None:
            check.result.problems.append(f"{where}: is not a tool the catalog makes")
            continue
        seen.add(str(name))
        for field in differences(tool, made):
            check.result.problems.append(f"{where}: `{field or '(the tool)'}` differs from what its catalog entry makes")
    for name in sorted(set(expected) - seen):
        check.result.problems.append(f"{label}: tool {name!r}, which the catalog makes, is missing")


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
    expected = expected_tools(check)
    if isinstance(expected, str):
        check.result.problems.append(f"{label}: {expected}")
    else:
        _compare(check, label, tools, expected)
    if len(check.result.problems) == before:
        check.result.checked.append(f"{label}: {len(tools)} tool digest{'s' if len(tools) != 1 else ''}"
                                    + (" and the catalog digest" if quoted else "") + ", every tool re-derived from its entry")


OUTPUT = Output("mcp_file", writer, verify)
