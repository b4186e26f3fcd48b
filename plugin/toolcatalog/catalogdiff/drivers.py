"""Comparing where a tool's data may go and how it runs: `access` (egress hosts, secrets, region,
policy tags), `execution` (AIP-14 timeout, retry, driver constraints, default implementation) and
the drivers implementing it (their commands and endpoints).

A new egress host, a newly needed secret, a new region, a driver that stops declaring its egress
and a lifted driver constraint (`forbid: [http]` dropped) are reviewable: data may now go
somewhere it did not, so they are reported as breaking ("needs review: ...") and fail
`toolcatalog diff` until someone looks. A catalog written before these fields existed has none:
nothing is compared.
"""

from __future__ import annotations

from typing import Any

from .report import Change

REVIEW = "needs review: "


def _strings(block: dict[str, Any], key: str) -> list[str]:
    value = block.get(key)
    return [str(v) for v in value if isinstance(v, (str, int, float))] if isinstance(value, list) else []


def _mapping(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _listed(values: list[str]) -> str:
    shown = ", ".join(f"`{v}`" for v in values[:10])
    return shown + (f" and {len(values) - 10} more" if len(values) > 10 else "")


def _grown(old: dict[str, Any], new: dict[str, Any], key: str) -> tuple[list[str], list[str]]:
    before, after = _strings(old, key), _strings(new, key)
    return [v for v in after if v not in before], [v for v in before if v not in after]


# (field, code stem, what a new value means, what a removed value means, a new value needs review)
_ACCESS_LISTS = (
    ("egress", "egress", "data may now be sent to", "no longer sends data to", True),
    ("secrets", "secret", "now needs the secret", "no longer needs the secret", True),
    ("region", "region", "may now run in region", "no longer runs in region", True),
    ("policy_tags", "policy-tag", "policy tags gained", "policy tags lost", False),
)


def compare_access(old: Any, new: Any, out: list[Change]) -> None:
    if not isinstance(old, dict) or not isinstance(new, dict):
        return
    for key, stem, came_text, gone_text, review in _ACCESS_LISTS:
        came, gone = _grown(old, new, key)
        if came:
            out.append(Change(review, f"{stem}-added", f"access.{key}", (REVIEW if review else "") + f"{came_text} {_listed(came)}"))
        if gone:
            out.append(Change(False, f"{stem}-removed", f"access.{key}", f"{gone_text} {_listed(gone)}"))
    came, _ = _grown(old, new, "egress_undeclared")
    if came:
        out.append(Change(True, "egress-undeclared", "access.egress_undeclared",
                          f"{REVIEW}driver {_listed(came)} does not declare where it sends data (`network.egress`)"))


def compare_execution(old: Any, new: Any, out: list[Change]) -> None:
    if not isinstance(old, dict) or not isinstance(new, dict):
        return
    a, b = _mapping(old.get("driver_constraints")), _mapping(new.get("driver_constraints"))
    _, lifted = _grown(a, b, "forbid")
    if lifted:
        out.append(Change(True, "driver-constraint-lifted", "execution.driver_constraints.forbid",
                          f"{REVIEW}drivers of kind {_listed(lifted)} are no longer forbidden"))
    if _strings(a, "require_kind") != _strings(b, "require_kind"):
        out.append(Change(False, "driver-kinds-changed", "execution.driver_constraints.require_kind",
                          f"required driver kinds {_listed(_strings(a, 'require_kind')) or 'any'} → {_listed(_strings(b, 'require_kind')) or 'any'}"))
    for key, what in (("timeout_ms", "timeout"), ("retry", "retry policy"), ("default_implementation", "default implementation")):
        if old.get(key) != new.get(key):
            out.append(Change(False, f"{key.replace('_', '-')}-changed", f"execution.{key}", f"the {what} changed"))


def _by_id(tool: dict[str, Any]) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for driver in tool.get("drivers") or []:
        if isinstance(driver, dict) and isinstance(driver.get("id"), str):
            out.setdefault(driver["id"], driver)
    return out


def compare_drivers(old: dict[str, Any], new: dict[str, Any], out: list[Change]) -> None:
    a, b = _by_id(old), _by_id(new)
    came = sorted(set(b) - set(a))
    gone = sorted(set(a) - set(b))
    if came:
        out.append(Change(False, "driver-added", "drivers", f"now implemented by {_listed(came)}"))
    if gone:
        out.append(Change(False, "driver-removed", "drivers", f"no longer implemented by {_listed(gone)}"))
    for driver_id in sorted(set(a) & set(b)):
        x = a[driver_id].get("access") if isinstance(a[driver_id].get("access"), dict) else None
        y = b[driver_id].get("access") if isinstance(b[driver_id].get("access"), dict) else None
        if x is None or y is None:
            continue
        for key, what in (("command", "command"), ("endpoint", "endpoint"), ("cost", "cost"), ("health_check", "health check")):
            if x.get(key) != y.get(key):
                out.append(Change(False, f"driver-{key.replace('_', '-')}-changed", f"drivers.{driver_id}.{key}", f"the {what} of `{driver_id}` changed"))
