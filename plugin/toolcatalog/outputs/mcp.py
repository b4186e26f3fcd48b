"""`mcp-tools.json`: the catalog as an MCP `tools/list` result.

MCP export rules (all documented decisions):

- Only valid tools are exported. An invalid one, and a tool whose `inputs` cannot be an MCP
  `inputSchema`, is left out, with a catalog-level `warning` diagnostic (code `mcp-omitted`,
  path = the manifest) in catalog.json — only when the MCP output is on.
- `inputSchema`: the tool's `inputs` when its root is an object schema (`type: object`, or no
  `type`, or a `type` list holding `object`: `type` is then set to `object`, which MCP requires
  and which only narrows to the objects every MCP call passes). A root that cannot be an object
  (`type: string`, a boolean schema) or no `inputs` at all (smart tools) is left out: wrapping
  the value in an `input` property would invent a calling convention the implementation does
  not follow.
- `outputSchema`: the tool's `outputs` only when its root is `type: object` (MCP's
  `structuredContent` is an object); otherwise absent.
- `annotations`: `catalog.annotations` (present only when the contract supports the hint).
- `name`: the tool id when it is already 1-128 characters of `[A-Za-z0-9_.-]`; otherwise every
  run of other characters becomes `_`, cut to 128; a clash with an earlier name (tools in id
  order) gets `_2`, `_3`, ... `_meta["toolcatalog/id"]` always carries the original id.
"""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass
from typing import Any

from ..model import WARNING, Catalog, Diagnostic, Tool
from ..safety import annotations
from .catalog_json import clean
from .site import Site

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


def mcp_input_schema(schema: Any) -> dict[str, Any] | None:
    """The MCP `inputSchema` for a tool's `inputs`, or None when its root cannot be an object."""
    if not isinstance(schema, dict):
        return None
    declared = schema.get("type", "object")
    if declared == "object" or (isinstance(declared, list) and "object" in declared):
        out = copy.deepcopy(schema)
        out["type"] = "object"
        return out
    return None


def mcp_output_schema(schema: Any) -> dict[str, Any] | None:
    if isinstance(schema, dict) and schema.get("type") == "object":
        return copy.deepcopy(schema)
    return None


@dataclass
class McpPlan:
    tools: list[tuple[Tool, str]]  # exported tools and their MCP names, in catalog order
    diagnostics: list[Diagnostic]  # one `mcp-omitted` warning per tool left out


def plan(catalog: Catalog, file_name: str = "mcp-tools.json") -> McpPlan:
    exported: list[tuple[Tool, str]] = []
    diagnostics: list[Diagnostic] = []
    used: set[str] = set()
    for tool in sorted(catalog.tools, key=lambda t: (t.id, t.source)):
        why = None
        if not tool.valid:
            why = "its manifest is invalid (see its errors)"
        elif tool.inputs is None:
            why = "the contract declares no input schema, and MCP requires one"
        elif mcp_input_schema(tool.inputs) is None:
            why = "its `inputs` schema's root is not an object, and MCP arguments are always an object"
        if why:
            diagnostics.append(Diagnostic(WARNING, f"tool {tool.id!r} is left out of {file_name}: {why}", tool.source, None, "mcp-omitted"))
            continue
        base = mcp_name(tool.id)
        name, n = base, 2
        while name in used:
            suffix = f"_{n}"
            name, n = base[: 128 - len(suffix)] + suffix, n + 1
        used.add(name)
        exported.append((tool, name))
    return McpPlan(exported, diagnostics)


def document(plan: McpPlan, site: Site) -> dict[str, Any]:
    """The MCP `tools/list` result: `{"tools": [Tool, ...]}`."""
    tools = []
    for tool, name in plan.tools:
        entry: dict[str, Any] = {"name": name, "title": tool.name, "inputSchema": mcp_input_schema(tool.inputs)}
        if tool.description:
            entry["description"] = tool.description
        output = mcp_output_schema(tool.outputs)
        if output is not None:
            entry["outputSchema"] = output
        hints = annotations(tool.effects)
        if hints:
            entry["annotations"] = hints
        meta: dict[str, Any] = {MCP_META_PREFIX + "id": tool.id, MCP_META_PREFIX + "page": site.link(tool.url)}
        if tool.json_path:
            meta[MCP_META_PREFIX + "json"] = site.link(tool.json_path)
        if tool.version:
            meta[MCP_META_PREFIX + "version"] = tool.version
        entry["_meta"] = meta
        tools.append(clean(entry))
    for entry in tools:
        if not MCP_NAME.match(entry["name"]) or entry["inputSchema"].get("type") != "object":
            raise McpShapeError(f"MCP tool {entry['name']!r} breaks the MCP Tool shape")
    return {"tools": tools}
