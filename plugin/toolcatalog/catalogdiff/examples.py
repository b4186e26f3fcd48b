"""Comparing the examples a contract carries (by title, in order)."""

from __future__ import annotations

from typing import Any

from .report import Change


def _titles(tool: dict[str, Any]) -> list[Any]:
    return [e.get("title") for e in tool.get("examples") or [] if isinstance(e, dict)]


def compare_examples(old: dict[str, Any], new: dict[str, Any], out: list[Change]) -> None:
    before, after = _titles(old), _titles(new)
    if before != after:
        out.append(Change(False, "examples-changed", "examples", f"examples: {len(before)} → {len(after)}"))
