"""Reading a published file through a `Source`, as untrusted: capped, depth-limited JSON."""

from __future__ import annotations

from typing import Any

from ...jsonvalues import loads_limited
from ..catalog_json import CATALOG_DEPTH, MAX_CATALOG_BYTES
from .base import Source, SourceError


def load_json(source: Source, path: str, what: str, limit: int = MAX_CATALOG_BYTES) -> Any:
    """The JSON at `path`. Raises SourceError, naming the file."""
    if not source.exists(path):
        raise SourceError(f"{what} {path!r} does not exist")
    try:
        data = source.read(path, limit)
    except SourceError as exc:
        raise SourceError(f"{what} {path!r}: {exc}") from None
    try:
        return loads_limited(data.decode("utf-8"), CATALOG_DEPTH)
    except (UnicodeDecodeError, ValueError) as exc:
        raise SourceError(f"{what} {path!r} is not a readable JSON file: {exc}") from None


def load_text(source: Source, path: str, what: str, limit: int = MAX_CATALOG_BYTES) -> str:
    if not source.exists(path):
        raise SourceError(f"{what} {path!r} does not exist")
    try:
        return source.read(path, limit).decode("utf-8")
    except SourceError as exc:
        raise SourceError(f"{what} {path!r}: {exc}") from None
    except UnicodeDecodeError as exc:
        raise SourceError(f"{what} {path!r} is not UTF-8: {exc}") from None


def difference(actual: Any, expected: Any, path: str = "") -> str | None:
    """Where `actual` first differs from `expected`: a dotted field path (`annotations.readOnlyHint`,
    `inputSchema.properties.extra`, `tools[2]`), "" for the value itself, None when they agree."""
    if isinstance(actual, dict) and isinstance(expected, dict):
        for key in sorted(set(actual) | set(expected)):
            where = f"{path}.{key}" if path else str(key)
            if key not in actual or key not in expected:
                return where
            found = difference(actual[key], expected[key], where)
            if found is not None:
                return found
        return None
    if isinstance(actual, list) and isinstance(expected, list):
        for index, (one, two) in enumerate(zip(actual, expected)):
            found = difference(one, two, f"{path}[{index}]")
            if found is not None:
                return found
        return None if len(actual) == len(expected) else f"{path}[{min(len(actual), len(expected))}]"
    same = actual == expected and type(actual) is type(expected)
    return None if same else path


def loads(text: str) -> Any:
    """JSON read as untrusted (depth-limited); None when it is not JSON."""
    try:
        return loads_limited(text, CATALOG_DEPTH)
    except ValueError:
        return None


def differences(actual: Any, expected: Any) -> list[str]:
    """`difference` per top-level member (every member that differs, each by its first field)."""
    if not (isinstance(actual, dict) and isinstance(expected, dict)):
        found = difference(actual, expected)
        return [] if found is None else [found]
    out = []
    for key in sorted(set(actual) | set(expected)):
        if key not in actual or key not in expected:
            out.append(str(key))
            continue
        found = difference(actual[key], expected[key], str(key))
        if found is not None:
            out.append(found)
    return out
