"""JSON values from untrusted text: strict parsing and the checks every reader shares.

Every JSON or YAML value the build accepts from a manifest, a tool's output, the results cache
or a catalog file nests at most `MAX_DEPTH` levels: deeper values are refused where they are
read (a diagnostic, a failed example, a cache miss), so no later step (schema validation,
comparison, rendering, export) can run out of recursion on them.
"""

from __future__ import annotations

import json
import math
from json.encoder import encode_basestring
from typing import Any, Iterable


MAX_DEPTH = 64  # the same limit as YAML front matter (safeyaml.MAX_DEPTH)


class TooDeepError(ValueError):
    """A JSON value that nests more than `MAX_DEPTH` levels."""


def too_deep(value: Any, limit: int = MAX_DEPTH) -> bool:
    """Whether `value` nests lists and objects more than `limit` levels deep (no recursion)."""
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        children: Iterable[Any]
        if isinstance(item, dict):
            children = item.values()
        elif isinstance(item, (list, tuple)):
            children = item
        else:
            continue
        if depth + 1 > limit:
            return True
        stack.extend((child, depth + 1) for child in children)
    return False


def loads_limited(text: str | bytes, limit: int = MAX_DEPTH) -> Any:
    """`json.loads`, refusing values that nest more than `limit` levels (TooDeepError, a
    ValueError). Raises ValueError for anything that is not JSON; never RecursionError."""
    try:
        value = json.loads(text)
    except RecursionError:
        raise TooDeepError(f"it nests more than {limit} levels deep") from None
    if too_deep(value, limit):
        raise TooDeepError(f"it nests more than {limit} levels deep")
    return value


def _reject_constant(name: str) -> Any:
    raise ValueError(f"`{name}` is not a JSON value")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"the number {text} is too large for JSON")
    return value


def loads_strict(text: str, limit: int = MAX_DEPTH) -> Any:
    """`json.loads` that refuses what is not JSON (`NaN`, `Infinity`, numbers that overflow) and
    values nesting more than `limit` levels.

    Raises `ValueError`: `json.JSONDecodeError` for syntax (with a position), `TooDeepError`
    for nesting; Python's own limit on integer digits also surfaces as a plain `ValueError`.
    """
    try:
        value = json.loads(text, parse_constant=_reject_constant, parse_float=_finite_float)
    except RecursionError:
        raise TooDeepError(f"it nests more than {limit} levels deep") from None
    if too_deep(value, limit):
        raise TooDeepError(f"it nests more than {limit} levels deep")
    if not is_unicode(value):
        raise ValueError("a string holds an unpaired surrogate escape (like \\ud800), which is not Unicode text")
    return value


def is_unicode(value: Any) -> bool:
    """False when a JSON value holds a lone UTF-16 surrogate (`"\\ud800"` parses, but no UTF-8
    file, page or catalog can hold it)."""
    try:
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


# -- indented text, fast ---------------------------------------------------------------------------

_INFINITY = float("inf")


class _Unusual(Exception):
    """A value `indented` leaves to `json.dumps` (a key that is no string, NaN, a type JSON has not)."""


def indented(value: Any, sort_keys: bool = True, allow_nan: bool = False) -> str:
    """`json.dumps(value, ensure_ascii=False, sort_keys=sort_keys, indent=2, allow_nan=allow_nan)`, the
    same text, written without the standard library's generators (Python writes indented JSON with
    its pure-Python encoder, one generator frame per nested value; strings here go through the
    same compiled escaping). Whatever it does not write the usual way (a key that is not a string,
    NaN or an infinity, a value of another type) is left to `json.dumps`, errors included."""
    out: list[str] = []
    try:
        _indented(value, out, "\n", sort_keys)
    except _Unusual:
        return json.dumps(value, ensure_ascii=False, sort_keys=sort_keys, indent=2, allow_nan=allow_nan)
    return "".join(out)


def _indented(value: Any, out: list[str], newline: str, sort_keys: bool) -> None:
    """Append `value`'s text to `out`; `newline` is a line break and the indent of its level.
    The order of the tests is `json.encoder`'s, so subclasses are written as it writes them."""
    if isinstance(value, str):
        out.append(_string(value))
    elif value is None:
        out.append("null")
    elif value is True:
        out.append("true")
    elif value is False:
        out.append("false")
    elif isinstance(value, int):
        out.append(int.__repr__(value))
    elif isinstance(value, float):
        if value != value or value in (_INFINITY, -_INFINITY):
            raise _Unusual
        out.append(float.__repr__(value))
    elif isinstance(value, (list, tuple)):
        _indented_list(value, out, newline, sort_keys)
    elif isinstance(value, dict):
        _indented_dict(value, out, newline, sort_keys)
    else:
        raise _Unusual


def _indented_list(value: list[Any] | tuple[Any, ...], out: list[str], newline: str, sort_keys: bool) -> None:
    if not value:
        out.append("[]")
        return
    inner = newline + "  "
    between = "," + inner
    out.append("[" + inner)
    for index, item in enumerate(value):
        if index:
            out.append(between)
        if type(item) is str:  # most values: written here, without a call
            out.append(_string(item))
        else:
            _indented(item, out, inner, sort_keys)
    out.append(newline + "]")


def _indented_dict(value: dict[Any, Any], out: list[str], newline: str, sort_keys: bool) -> None:
    if not value:
        out.append("{}")
        return
    for key in value:
        if not isinstance(key, str):
            raise _Unusual
    inner = newline + "  "
    between = "," + inner
    out.append("{" + inner)
    for index, key in enumerate(sorted(value) if sort_keys else value):
        item = value[key]
        if type(item) is str:  # most values: written here, without a call
            out.append(f"{between if index else ''}{_string(key)}: {_string(item)}")
        else:
            out.append(f"{between if index else ''}{_string(key)}: ")
            _indented(item, out, inner, sort_keys)
    out.append(newline + "}")


_string = encode_basestring  # the compiled escaping `json.dumps(ensure_ascii=False)` uses
