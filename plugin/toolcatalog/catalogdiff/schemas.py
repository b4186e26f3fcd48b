"""Comparing two JSON Schemas: inputs contravariantly, outputs covariantly (see the package docstring)."""

from __future__ import annotations

import json
from typing import Any

from .report import Change

_LOWER = ("minimum", "exclusiveMinimum", "minLength", "minItems", "minProperties", "minContains")
_UPPER = ("maximum", "exclusiveMaximum", "maxLength", "maxItems", "maxProperties", "maxContains")
_OPAQUE = ("pattern", "format", "const", "multipleOf")


def _types(schema: dict[str, Any]) -> set[str] | None:
    declared = schema.get("type")
    if isinstance(declared, str):
        types = {declared}
    elif isinstance(declared, list) and all(isinstance(t, str) for t in declared):
        types = set(declared)
    else:
        return None  # any type
    if "number" in types:
        types.add("integer")
    return types


def _canon(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


def _show(value: Any) -> str:
    text = _canon(value)
    return text if len(text) <= 60 else text[:57] + "..."


def compare_schema(old: Any, new: Any, where: str, side: str, out: list[Change]) -> None:
    """Changes between two JSON Schemas at `where`; `side` is "input" or "output"."""
    if old == new:
        return
    if not isinstance(old, dict) or not isinstance(new, dict):
        _compare_presence(old, new, where, side, out)
        return
    inp = side == "input"
    _compare_type(old, new, where, side, out)
    _compare_enum(old.get("enum"), new.get("enum"), where, side, out)
    _compare_bounds(old, new, where, side, out)
    _compare_opaque(old, new, where, side, out)
    if inp and old.get("additionalProperties") is not False and new.get("additionalProperties") is False:
        out.append(Change(True, "input-closed", where, "unknown input properties are now rejected (`additionalProperties: false`)"))
    _compare_properties(old, new, where, side, out)
    if isinstance(old.get("items"), dict) and isinstance(new.get("items"), dict):
        compare_schema(old["items"], new["items"], f"{where}[]", side, out)
    if (old.get("description") or "") != (new.get("description") or "") and where.count(".") > 0:
        out.append(Change(False, f"{side}-description-changed", where, "description changed"))


def _compare_presence(old: Any, new: Any, where: str, side: str, out: list[Change]) -> None:
    if old is None:
        out.append(Change(False, f"{side}-schema-declared", where, f"the {side} schema is now declared"))
    elif new is None:
        out.append(Change(True, f"{side}-schema-removed", where, f"the {side} schema is no longer declared"))
    else:
        out.append(Change(True, f"{side}-schema-replaced", where, f"the {side} schema was replaced by one that cannot be compared"))


def _label(types: set[str] | None) -> str:
    return "any" if types is None else "|".join(sorted(types - {"integer"} if "number" in types else types))


def _compare_type(old: dict[str, Any], new: dict[str, Any], where: str, side: str, out: list[Change]) -> None:
    a, b = _types(old), _types(new)
    if a == b:
        return
    inp = side == "input"
    if a is None or (b is not None and b < a):
        breaking, how = inp, "narrowed"
    elif b is None or (a is not None and a < b):
        breaking, how = not inp, "widened"
    else:
        breaking, how = True, "changed"
    out.append(Change(breaking, f"{side}-type-{how}", where, f"{side} type {how}: {_label(a)} → {_label(b)}"))


def _compare_enum(old_enum: Any, new_enum: Any, where: str, side: str, out: list[Change]) -> None:
    if old_enum == new_enum:
        return
    inp = side == "input"
    if isinstance(old_enum, list) and isinstance(new_enum, list):
        # Each side's canonical forms computed once (a set per entry made long enums quadratic).
        old_keys, new_keys = {_canon(x) for x in old_enum}, {_canon(x) for x in new_enum}
        lost = [v for v in old_enum if _canon(v) not in new_keys]
        gained = [v for v in new_enum if _canon(v) not in old_keys]
        if lost:
            out.append(Change(inp, f"{side}-enum-narrowed", where, f"{side} enum lost {', '.join(_show(v) for v in lost)}"))
        if gained:
            out.append(Change(not inp, f"{side}-enum-widened", where, f"{side} enum gained {', '.join(_show(v) for v in gained)}"))
    elif isinstance(new_enum, list):
        out.append(Change(inp, f"{side}-enum-narrowed", where, f"{side} is now limited to {', '.join(_show(v) for v in new_enum)}"))
    elif isinstance(old_enum, list):
        out.append(Change(not inp, f"{side}-enum-widened", where, f"{side} is no longer limited to an enum"))


def _number_or_none(value: Any) -> bool:
    return value is None or isinstance(value, (int, float)) and not isinstance(value, bool)


def _compare_bounds(old: dict[str, Any], new: dict[str, Any], where: str, side: str, out: list[Change]) -> None:
    inp = side == "input"
    for key in _LOWER + _UPPER:
        x, y = old.get(key), new.get(key)
        if x == y or not (_number_or_none(x) and _number_or_none(y)):
            continue
        if x is None:
            tighter = True
        elif y is None:
            tighter = False
        else:
            tighter = (y > x) if key in _LOWER else (y < x)
        out.append(Change(
            inp == tighter, f"{side}-constraint-{'tightened' if tighter else 'loosened'}", where,
            f"`{key}` {'none' if x is None else x} → {'none' if y is None else y}",
        ))


def _compare_opaque(old: dict[str, Any], new: dict[str, Any], where: str, side: str, out: list[Change]) -> None:
    inp = side == "input"
    for key in _OPAQUE:
        x, y = old.get(key), new.get(key)
        if _canon(x) == _canon(y):
            continue
        if x is None:
            breaking, how = inp, "added"
        elif y is None:
            breaking, how = not inp, "removed"
        else:
            breaking, how = True, "changed"
        out.append(Change(breaking, f"{side}-{key.lower()}-{how}", where, f"`{key}` {how}: {_show(x) if x is not None else 'none'} → {_show(y) if y is not None else 'none'}"))


def _properties(schema: dict[str, Any]) -> dict[str, Any]:
    props = schema.get("properties")
    return props if isinstance(props, dict) else {}


def _required(schema: dict[str, Any]) -> set[str]:
    required = schema.get("required")
    return {r for r in required if isinstance(r, str)} if isinstance(required, list) else set()


def _compare_properties(old: dict[str, Any], new: dict[str, Any], where: str, side: str, out: list[Change]) -> None:
    inp = side == "input"
    old_props, new_props = _properties(old), _properties(new)
    old_req, new_req = _required(old), _required(new)
    for name in sorted(set(new_props) - set(old_props)):
        path = f"{where}.{name}"
        if not inp:
            out.append(Change(False, "output-added", path, "new output property"))
        elif name in new_req:
            out.append(Change(True, "input-required-added", path, "new required input"))
        else:
            out.append(Change(False, "input-optional-added", path, "new optional input"))
    for name in sorted(set(old_props) - set(new_props)):
        path = f"{where}.{name}"
        if inp:
            out.append(Change(True, "input-removed", path, "input property removed"))
        else:
            out.append(Change(True, "output-removed", path, "output property removed"))
    for name in sorted(set(old_props) & set(new_props)):
        compare_schema(old_props[name], new_props[name], f"{where}.{name}", side, out)
    _compare_required(old_req, new_req, set(old_props), set(new_props), where, side, out)


def _compare_required(old_req: set[str], new_req: set[str], old_names: set[str], new_names: set[str], where: str, side: str,
                      out: list[Change]) -> None:
    inp = side == "input"
    for name in sorted((new_req - old_req) - (new_names - old_names)):
        path = f"{where}.{name}"
        if inp:
            out.append(Change(True, "input-now-required", path, "input is now required"))
        else:
            out.append(Change(False, "output-now-required", path, "output is now always present"))
    for name in sorted((old_req - new_req) - (old_names - new_names)):
        path = f"{where}.{name}"
        if inp:
            out.append(Change(False, "input-now-optional", path, "input is no longer required"))
        else:
            out.append(Change(True, "output-now-optional", path, "output is no longer always present"))
