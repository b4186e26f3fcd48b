"""Comparing coverage (docs/coverage.md): what dropped and what is newly uncovered, never breaking."""

from __future__ import annotations

from typing import Any, Callable

from .report import Change


def _mapping(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _percent(score: Any) -> str:
    return f"{score:.0%}" if isinstance(score, (int, float)) and not isinstance(score, bool) else "none"


def compare_coverage(old: Any, new: Any, add: Callable[[Change], None]) -> None:
    """Coverage that dropped (the total or a dimension) and goals newly left uncovered: never
    breaking (the contract did not change), but what a reviewer should see. A catalog written
    before coverage existed has none: nothing is compared."""
    if not isinstance(old, dict) or not isinstance(new, dict):
        return
    if _lower(old.get("total"), new.get("total")):
        add(Change(False, "coverage-dropped", "coverage", f"coverage {_percent(old.get('total'))} → {_percent(new.get('total'))}"))
    old_dims, new_dims = _mapping(old.get("dimensions")), _mapping(new.get("dimensions"))
    for name in sorted(set(old_dims) & set(new_dims)):
        a, b = old_dims[name], new_dims[name]
        if not isinstance(a, dict) or not isinstance(b, dict):
            continue
        if _lower(a.get("score"), b.get("score")):
            add(Change(False, "coverage-dropped", f"coverage.{name}", f"{name} coverage {_percent(a.get('score'))} → {_percent(b.get('score'))}"))
        before = {str(x) for x in a.get("uncovered") or [] if isinstance(x, str)}
        came = [str(x) for x in b.get("uncovered") or [] if isinstance(x, str) and x not in before]
        if came:
            add(Change(False, "coverage-uncovered-added", f"coverage.{name}", "newly uncovered: " + "; ".join(came[:10])
                       + (f"; and {len(came) - 10} more" if len(came) > 10 else "")))


def _lower(a: Any, b: Any) -> bool:
    numbers = all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in (a, b))
    return numbers and b < a
