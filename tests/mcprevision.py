"""Checking an `mcp-tools.json` against MCP revision 2026-07-28, the revision the file follows.

The structure is checked by the revision's own published JSON Schema (`ListToolsResult`, vendored
unchanged in tests/vendor/mcp-2026-07-28/ with its source and licence); what that schema cannot
say is checked here from the revision's prose: `_meta` key names (basic/index.mdx, `_meta`),
tool-name rules and uniqueness, deterministic order, and that `inputSchema` / `outputSchema`
are JSON Schema 2020-12 documents.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import jsonschema

VENDOR = Path(__file__).resolve().parent / "vendor" / "mcp-2026-07-28"
SPEC = json.loads((VENDOR / "schema.json").read_text(encoding="utf-8"))
LIST_TOOLS_RESULT = {"$schema": SPEC["$schema"], "$ref": "#/$defs/ListToolsResult", "$defs": SPEC["$defs"]}

_LABEL = r"[A-Za-z](?:[A-Za-z0-9-]*[A-Za-z0-9])?"
META_KEY = re.compile(rf"^(?P<prefix>{_LABEL}(?:\.{_LABEL})*/)?(?:[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)?$")
TOOL_NAME = re.compile(r"^[A-Za-z0-9_.-]{1,128}$")


def meta_key_problems(meta: dict[str, Any]) -> list[str]:
    """Keys that break the revision's `_meta` naming rule, or use a prefix reserved for MCP."""
    problems = []
    for key in meta:
        match = META_KEY.match(key)
        if not match:
            problems.append(f"{key!r} is not a valid _meta key")
            continue
        prefix = match.group("prefix")
        labels = prefix[:-1].split(".") if prefix else []
        if len(labels) >= 2 and labels[1] in ("modelcontextprotocol", "mcp"):
            problems.append(f"{key!r} uses a prefix reserved for MCP")
    return problems


def validate_tools_list(document: Any) -> None:
    """Raise AssertionError (or jsonschema.ValidationError) when `document` is not a valid
    ListToolsResult of revision 2026-07-28 as this project promises to write it."""
    jsonschema.Draft202012Validator(LIST_TOOLS_RESULT).validate(document)
    assert document["resultType"] == "complete"
    assert "nextCursor" not in document, "the list is written whole, on one page"
    assert not meta_key_problems(document.get("_meta", {})), meta_key_problems(document.get("_meta", {}))
    names = [tool["name"] for tool in document["tools"]]
    assert len(names) == len(set(names)), "MCP tool names must be unique"
    ids = [tool["_meta"]["toolcatalog/id"] for tool in document["tools"]]
    assert ids == sorted(ids), "tools are listed in a deterministic order (by id)"
    for tool in document["tools"]:
        assert TOOL_NAME.match(tool["name"]), tool["name"]
        assert not meta_key_problems(tool.get("_meta", {})), meta_key_problems(tool["_meta"])
        for key in ("inputSchema", "outputSchema"):
            if key in tool:
                schema = tool[key]
                assert "$schema" in schema, f"{tool['name']}: {key} states its dialect"
                validator = jsonschema.validators.validator_for(schema)
                validator.check_schema(schema)
        assert tool["inputSchema"]["type"] == "object"
