"""JSON values from untrusted text: strict parsing and the checks every reader shares."""

from __future__ import annotations

import json
import math
from typing import Any


def _reject_constant(name: str) -> Any:
    raise ValueError(f"`{name}` is not a JSON value")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"the number {text} is too large for JSON")
    return value


def loads_strict(text: str) -> Any:
    """`json.loads` that refuses what is not JSON (`NaN`, `Infinity`, numbers that overflow).

    Raises `ValueError` (`json.JSONDecodeError` for syntax, with a position) or `RecursionError`.
    Python's own limit on integer digits also surfaces as a plain `ValueError`.
    """
    value = json.loads(text, parse_constant=_reject_constant, parse_float=_finite_float)
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
