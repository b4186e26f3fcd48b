"""Outcomes: the plain JSON a tool's check produces, the cache stores, and the model receives.

`schemas/outcome.schema.json` describes the shape; `valid_outcome` holds every outcome to it (plus
what a schema cannot say), so a damaged or planted cache entry is a miss and never reaches a page
or the catalog.
"""

from __future__ import annotations

import json
from typing import Any

from .. import jsonschemas
from ..model import Capability, Check, Run, Tool, invalid_reason
from ..observed import SandboxReport
from ..statuses import CheckStatus, ExampleStatus, Status

Outcome = dict[str, Any]
SCHEMA = "outcome.schema.json"


def valid_outcome(tool: Tool, outcome: Any) -> bool:
    """Whether `outcome` has exactly the shape the runners produce and the catalog can publish:
    the schema's statuses and types, plain finite JSON with Unicode text, and one result per
    example of `tool` (or none)."""
    try:
        json.dumps(outcome, allow_nan=False, ensure_ascii=False).encode("utf-8")
    except (TypeError, ValueError, RecursionError):  # not JSON, NaN/Infinity, a lone surrogate
        return False
    if jsonschemas.validate_bundled(SCHEMA, outcome):
        return False
    return len(outcome["examples"]) in (0, len(tool.examples))


def apply(tool: Tool, outcome: Outcome) -> None:
    """Put an outcome (fresh or cached) on the model."""
    tool.status = Status.INVALID if not tool.valid else Status(outcome["status"])
    tool.status_detail = _detail(tool, outcome)
    tool.processes = int(outcome.get("processes", 0))
    for example, result in zip(tool.examples, outcome.get("examples", [])):
        example.status = ExampleStatus(result["status"])
        example.detail = result.get("detail", "")
        example.runs = [Run.from_json(run) for run in result.get("runs", [])]
    if "checks" in outcome:
        tool.checks = [
            Check(c["id"], CheckStatus(c["status"]), c.get("detail", ""), c.get("spec", ""), c.get("stderr", "")) for c in outcome["checks"]
        ]
    if outcome.get("capabilities") is not None:
        tool.capabilities = [Capability(**c) for c in outcome["capabilities"]]
        tool.capability_help = dict(outcome.get("capability_help", {}))
        tool.kind = outcome.get("kind", tool.kind)
    report = outcome.get("sandbox")
    tool.sandbox = SandboxReport.from_json(report) if report is not None else None
    for driver in tool.drivers:
        reason = outcome.get("drivers", {}).get(driver.id)
        if reason is not None:
            driver.run_status[tool.id] = reason


def _detail(tool: Tool, outcome: Outcome) -> str:
    """The status detail. An invalid tool's starts with why it is invalid, never with what a run
    could not do ("no linux.<ext>", "no `examples`"); what did run (its counts) follows."""
    detail = outcome.get("status_detail", "")
    invalid = invalid_reason(tool) if not tool.valid else ""
    if not invalid:
        return detail
    return f"{invalid}; {detail}" if detail and outcome.get("processes") else invalid


def skipped_outcome(tool: Tool, status: Status, detail: str) -> Outcome:
    """Nothing runs: every example is `skipped` with the same reason."""
    return {
        "status": status.value,
        "status_detail": detail,
        "examples": [{"status": ExampleStatus.SKIPPED.value, "detail": detail, "runs": []} for _ in tool.examples],
        "processes": 0,
    }


def crash_outcome(tool: Tool, exc: BaseException | None, when: str, rules: tuple[str, ...] = ()) -> Outcome:
    """A bug in the checking itself: the tool, its examples and the `rules` it would have
    checked are `error`, with the error named; never cached, never fatal to the build. Checks
    already decided (a smart tool's static rules) are kept."""
    if exc is None:
        detail = f"internal error: {when}; please report it"
    else:
        detail = f"internal error {when} ({type(exc).__name__}: {str(exc)[:300]}); please report it"
    outcome: Outcome = {
        "status": Status.ERROR.value,
        "status_detail": detail,
        "examples": [{"status": ExampleStatus.ERROR.value, "detail": detail, "runs": []} for _ in tool.examples],
        "processes": 0,
        "internal_error": True,
    }
    if tool.checks or rules:
        kept = [c.as_dict() for c in tool.checks if c.id not in rules]
        outcome["checks"] = kept + [{"id": rule, "status": CheckStatus.ERROR.value, "detail": detail, "spec": ""} for rule in rules]
    return outcome
