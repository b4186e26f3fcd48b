"""Reading a raw manifest field with its type checked: the value when it has the type the
runner needs, an empty one otherwise (a parser has already reported the wrong type)."""

from __future__ import annotations

from typing import Any


def mapping(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def sequence(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def text(value: Any) -> str | None:
    return value if isinstance(value, str) else None
