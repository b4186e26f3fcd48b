"""Comparing two side-effect profiles (`effects`): it breaks callers when it grows."""

from __future__ import annotations

from typing import Any

from .report import Change

_APPROVAL_ORDER = {"auto": 0, "on-mutate": 1, "always": 2}


def compare_effects(old: dict[str, Any], new: dict[str, Any], out: list[Change]) -> None:
    _compare_mutates(old.get("mutates"), new.get("mutates"), out)
    _compare_risk(old.get("risk_level"), new.get("risk_level"), out)
    _compare_approval(old.get("approval"), new.get("approval"), out)
    x, y = old.get("idempotent"), new.get("idempotent")
    if x != y:
        out.append(Change(x is True, "idempotent-changed", "effects.idempotent", f"idempotent {_flag(x)} → {_flag(y)}"))
    x, y = old.get("cost_class"), new.get("cost_class")
    if x != y:
        # Not breaking: calls still work, they cost more (review budgets).
        out.append(Change(False, "cost-changed", "effects.cost_class", f"cost class {x or 'none'} → {y or 'none'}"))
    _compare_requires(old.get("requires"), new.get("requires"), out)
    if (old.get("text") or "") != (new.get("text") or ""):
        out.append(Change(False, "effects-text-changed", "effects.text", "the effects text changed (free text: review it)"))


def _compare_mutates(a: Any, b: Any, out: list[Change]) -> None:
    if a == b:
        return
    if isinstance(a, list) and isinstance(b, list):
        wider = sorted(set(map(str, b)) - set(map(str, a)))
        narrower = sorted(set(map(str, a)) - set(map(str, b)))
        if wider:
            out.append(Change(True, "mutates-widened", "effects.mutates", f"now also mutates {', '.join(wider)}"))
        if narrower:
            out.append(Change(False, "mutates-narrowed", "effects.mutates", f"no longer mutates {', '.join(narrower)}"))
    elif a is None and isinstance(b, list):
        out.append(Change(False, "mutates-declared", "effects.mutates", "the side effects are now declared: " + (", ".join(map(str, b)) or "none")))
    elif isinstance(a, list) and b is None:
        out.append(Change(True, "mutates-undeclared", "effects.mutates", "the side effects are no longer declared"))


def _compare_risk(x: Any, y: Any, out: list[Change]) -> None:
    if x == y:
        return
    if isinstance(x, int) and isinstance(y, int):
        out.append(Change(y > x, "risk-raised" if y > x else "risk-lowered", "effects.risk_level", f"risk level {x} → {y}"))
    else:
        out.append(Change(isinstance(y, int) and y > 0, "risk-changed", "effects.risk_level", f"risk level {x} → {y}"))


def _compare_approval(x: Any, y: Any, out: list[Change]) -> None:
    if x == y:
        return
    rank_x, rank_y = _APPROVAL_ORDER.get(x or "auto", 3), _APPROVAL_ORDER.get(y or "auto", 3)
    stricter = rank_y > rank_x or (rank_y == rank_x == 3)
    out.append(Change(stricter, "approval-stricter" if stricter else "approval-looser", "effects.approval", f"approval {x or 'none'} → {y or 'none'}"))


def _keyed(reqs: Any) -> set[str]:
    return {f"{r.get('kind')}:{r.get('name')}" for r in reqs or [] if isinstance(r, dict) and not r.get("optional")}


def _compare_requires(old: Any, new: Any, out: list[Change]) -> None:
    came = sorted(_keyed(new) - _keyed(old))
    gone = sorted(_keyed(old) - _keyed(new))
    if came:
        out.append(Change(True, "requirement-added", "effects.requires", f"now requires {', '.join(came)}"))
    if gone:
        out.append(Change(False, "requirement-removed", "effects.requires", f"no longer requires {', '.join(gone)}"))


def _flag(value: Any) -> str:
    return "unknown" if value is None else str(bool(value)).lower()
