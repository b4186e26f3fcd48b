"""Compare what a tool printed with what its contract promised.

speccify's rule is a recursive subset match: every key the expected object
names must be there and match (the actual object may have more keys), arrays
must have the same length and match element by element, scalars must be
equal, with `1 == 1.0` but a boolean never equal to a number.
"""

from __future__ import annotations

import json
from typing import Any, Callable

from .jsonvalues import MAX_DEPTH, is_unicode, too_deep

__all__ = ["MAX_DIFFERENCES", "difference_paths", "differences", "json_key", "key_path", "parse_json_output", "unwrap_envelope"]

MAX_DIFFERENCES = 20
_MAX_SHOWN = 80
_MAX_DEPTH = 200


def _show(value: Any, scrub: Callable[[str], str] | None = None) -> str:
    """Compact JSON for a message, shortened to about 80 characters (after `scrub`, so a machine
    path is rewritten whole, never cut in half first)."""
    try:
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=repr)
    except (ValueError, TypeError, RecursionError):
        text = repr(value)
    if scrub is not None:
        text = scrub(text)
    if len(text) > _MAX_SHOWN:
        text = text[: _MAX_SHOWN - 3] + "..."
    return text


def key_path(path: str, key: Any) -> str:
    """The JSON path of `key` inside the object at `path`: `$.name`, or `$["a b"]`."""
    if isinstance(key, str) and key.isidentifier():
        return f"{path}.{key}"
    return f"{path}[{json.dumps(json_key(key), ensure_ascii=False)}]"


def json_key(key: Any) -> str:
    """The string JSON would use for a (YAML) mapping key: 1 -> "1", True -> "true"."""
    if isinstance(key, str):
        return key
    if key is None or isinstance(key, (bool, int, float)):
        return json.dumps(key)
    return str(key)


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _scalar_equal(expected: Any, actual: Any) -> bool:
    if isinstance(expected, bool) or isinstance(actual, bool):
        return isinstance(expected, bool) and isinstance(actual, bool) and expected == actual
    if _is_number(expected) or _is_number(actual):
        return _is_number(expected) and _is_number(actual) and expected == actual
    if expected is None or actual is None:
        return expected is None and actual is None
    return type(expected) is type(actual) and expected == actual


def differences(expected: Any, actual: Any, path: str = "$", scrub: Callable[[str], str] | None = None) -> list[str]:
    """Where `actual` fails to match `expected`, one line per place, at most 20. `scrub` rewrites
    the values shown (machine paths) before they are shortened."""
    out: list[tuple[str, str]] = []
    _diff(expected, actual, path, out, 0, scrub)
    return [f"{where}: {what}" for where, what in out[:MAX_DIFFERENCES]]


def difference_paths(expected: Any, actual: Any) -> list[str]:
    """The JSON paths `differences` names (`$.a[0]`), for pages that mark them in both values."""
    out: list[tuple[str, str]] = []
    _diff(expected, actual, "$", out, 0, None)
    return [where for where, _what in out[:MAX_DIFFERENCES]]


def _diff(expected: Any, actual: Any, path: str, out: list[tuple[str, str]], depth: int, scrub: Callable[[str], str] | None = None) -> None:
    if len(out) >= MAX_DIFFERENCES:
        return
    if depth > _MAX_DEPTH:
        out.append((path, "nested too deeply to compare"))
        return
    if isinstance(expected, dict):
        if not isinstance(actual, dict):
            out.append((path, f"expected {_show(expected)}, got {_show(actual, scrub)}"))
            return
        for key, want in expected.items():
            if len(out) >= MAX_DIFFERENCES:
                return
            sub = key_path(path, key)
            if key in actual:
                got = actual[key]
            elif not isinstance(key, str) and json_key(key) in actual:
                got = actual[json_key(key)]
            else:
                out.append((sub, "missing"))
                continue
            _diff(want, got, sub, out, depth + 1, scrub)
        return
    if isinstance(expected, (list, tuple)):
        if not isinstance(actual, (list, tuple)):
            out.append((path, f"expected {_show(expected)}, got {_show(actual, scrub)}"))
            return
        if len(expected) != len(actual):
            noun = "item" if len(expected) == 1 else "items"
            out.append((path, f"expected {len(expected)} {noun}, got {len(actual)}"))
            return
        for index, (want, got) in enumerate(zip(expected, actual)):
            if len(out) >= MAX_DIFFERENCES:
                return
            _diff(want, got, f"{path}[{index}]", out, depth + 1, scrub)
        return
    if not _scalar_equal(expected, actual):
        out.append((path, f"expected {_show(expected)}, got {_show(actual, scrub)}"))


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def parse_json_output(stdout: bytes) -> tuple[bool, Any, str]:
    """(ok, value, detail): the whole stripped stdout must be exactly one JSON value.

    Strict JSON: `NaN`/`Infinity` are refused; a leading UTF-8 BOM is tolerated.
    """
    try:
        text = bytes(stdout).decode("utf-8")
    except UnicodeDecodeError as exc:
        return False, None, f"stdout is not JSON: not valid UTF-8 ({exc.reason} at byte {exc.start})"
    text = text.removeprefix("\ufeff").strip()
    if not text:
        return False, None, "stdout is empty"
    try:
        value = json.loads(text, parse_constant=_reject_constant)
    except RecursionError:
        return False, None, f"stdout is JSON nested more than {MAX_DEPTH} levels deep, which is not accepted"
    except ValueError as exc:  # JSONDecodeError, NaN/Infinity, over-long integers
        return False, None, f"stdout is not JSON: {exc}"
    if too_deep(value):
        return False, None, f"stdout is JSON nested more than {MAX_DEPTH} levels deep, which is not accepted"
    if not is_unicode(value):
        return False, None, "stdout is not JSON text: a string holds an unpaired surrogate escape (like \\ud800)"
    return True, value, ""


def unwrap_envelope(value: Any) -> Any:
    """AIP-14's result envelope `{"ok": true, "value": X}` -> X; anything else unchanged.

    Only a successful envelope (`ok` is literally `true` and `value` is present)
    is unwrapped; other keys beside them (metadata) are ignored.
    """
    if isinstance(value, dict) and value.get("ok") is True and "value" in value:
        return value["value"]
    return value
