"""JSON values from untrusted text: strict parsing and the checks every reader shares.

Every JSON or YAML value the build accepts from a manifest, a tool's output, the results cache
or a catalog file nests at most `MAX_DEPTH` levels: deeper values are refused where they are
read (a diagnostic, a failed example, a cache miss), so no later step (schema validation,
comparison, rendering, export) can run out of recursion on them.
"""

from __future__ import annotations

import json
import math
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
