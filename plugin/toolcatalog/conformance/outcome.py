"""Outcomes: what a tool's check produces, the cache and results files store, and the model receives.

An `Outcome` is typed (`verdict` holds its parts: examples, checks) and built only by `decided`,
which asks the one verdict rule (`verdict.decide`) for its status. `to_json` and `from_json` are
its one codec, used by the results cache and the results files: `schemas/outcome.schema.json`
describes the JSON, and `from_json` holds every value to it and to what a schema cannot say
(plain finite JSON with Unicode text, a status the verdict rule could have given those facts),
raising `CodecError` otherwise, so a damaged or planted entry is a miss and never reaches a page
or the catalog.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .. import jsonschemas
from ..model import Capability, Check, Run, Tool, invalid_reason
from ..observed import SandboxReport
from ..statuses import CheckStatus, ExampleStatus, Status
from .verdict import Blocked, CheckResult, ExampleResult, Facts, decide, published

SCHEMA = "outcome.schema.json"
_COMPUTED = ("sandboxed", "verified_no_effects", "caught_mutating")  # a sandbox report's derived fields


class CodecError(ValueError):
    """A value that is not an outcome `to_json` would have written."""


@dataclass(frozen=True, slots=True)
class Discovery:
    """What a smart tool's `--help` showed: its capabilities, each one's help, and their kind."""

    capabilities: tuple[Capability, ...] = ()
    help: Mapping[str, str] = field(default_factory=dict)
    kind: str | None = None  # deterministic | model-backed | mixed | None (none listed)


@dataclass(frozen=True, slots=True)
class Outcome:
    status: Status
    status_detail: str
    examples: tuple[ExampleResult, ...]
    processes: int = 0
    checks: tuple[CheckResult, ...] | None = None  # None: the outcome says nothing about checks
    discovery: Discovery | None = None
    drivers: Mapping[str, str] | None = None  # driver id -> why it ran or did not
    sandbox: SandboxReport | None = None
    internal_error: bool = False


def decided(facts: Facts, *, processes: int = 0, drivers: Mapping[str, str] | None = None,
           sandbox: SandboxReport | None = None, discovery: Discovery | None = None) -> Outcome:
    """The outcome of `facts`, its status decided by the verdict rule."""
    verdict = decide(facts)
    return Outcome(verdict.status, verdict.detail, facts.examples, processes, facts.checks or None, discovery,
                   drivers, sandbox, internal_error=facts.crashed is not None)


def skipped_outcome(tool: Tool, status: Status, detail: str, drivers: Mapping[str, str] | None = None) -> Outcome:
    """Nothing runs: every example is `skipped` with the same reason."""
    examples = tuple(ExampleResult(ExampleStatus.SKIPPED, detail) for _ in tool.examples)
    return decided(Facts(examples, blocked=Blocked(status, detail)), drivers=drivers)


def check_result(check: Check) -> CheckResult:
    """A rule decided when the manifest was parsed (a smart tool's static rules, `tool.checks`)."""
    return CheckResult(check.id, check.status, check.detail, check.spec, check.stderr, static=True)


def crash_outcome(tool: Tool, exc: BaseException | None, when: str, rules: tuple[str, ...] = ()) -> Outcome:
    """A bug in the checking itself: the examples and the `rules` it would have checked are
    `error`, with the error named; never cached, never fatal to the build. Checks already decided
    (a smart tool's static rules) are kept (and a failed one fails the tool: `verdict.decide`)."""
    if exc is None:
        detail = f"internal error: {when}; please report it"
    else:
        detail = f"internal error {when} ({type(exc).__name__}: {str(exc)[:300]}); please report it"
    examples = tuple(ExampleResult(ExampleStatus.ERROR, detail) for _ in tool.examples)
    kept = tuple(check_result(c) for c in tool.checks if c.id not in rules)
    checks = kept + tuple(CheckResult(rule, CheckStatus.ERROR, detail) for rule in rules)
    return decided(Facts(examples, checks, crashed=detail))


# --------------------------------------------------------------------------- the codec


def to_json(outcome: Outcome) -> dict[str, Any]:
    """The outcome as the cache and results files store it."""
    out: dict[str, Any] = {
        "status": str(outcome.status),
        "status_detail": outcome.status_detail,
        "examples": [{"status": str(e.status), "detail": e.detail, "runs": [r.to_json() for r in e.runs]} for e in outcome.examples],
        "processes": outcome.processes,
    }
    if outcome.checks is not None:
        out["checks"] = [_check_json(c) for c in outcome.checks]
    if outcome.discovery is not None:
        out["capabilities"] = [c.as_dict() for c in outcome.discovery.capabilities]
        out["capability_help"] = dict(outcome.discovery.help)
        out["kind"] = outcome.discovery.kind
    if outcome.drivers is not None:
        out["drivers"] = dict(outcome.drivers)
    if outcome.sandbox is not None:
        out["sandbox"] = {k: v for k, v in outcome.sandbox.as_dict().items() if k not in _COMPUTED}
    if outcome.internal_error:
        out["internal_error"] = True
    return out


def _check_json(check: CheckResult) -> dict[str, Any]:
    out = {"id": check.id, "status": str(check.status), "detail": check.detail, "spec": check.spec}
    if check.stderr:
        out["stderr"] = check.stderr
    return out


def from_json(value: Any) -> Outcome:
    """The outcome `value` holds; CodecError for anything `to_json` would not have written."""
    try:
        json.dumps(value, allow_nan=False, ensure_ascii=False).encode("utf-8")
    except (TypeError, ValueError, RecursionError):  # not JSON, NaN/Infinity, a lone surrogate
        raise CodecError("not plain JSON") from None
    errors = jsonschemas.validate_bundled(SCHEMA, value)
    if errors:
        raise CodecError(f"fails the outcome schema at {jsonschemas.json_path(errors[0].absolute_path)}")
    outcome = Outcome(
        status=Status(value["status"]),
        status_detail=value["status_detail"],
        examples=tuple(_example(e) for e in value["examples"]),
        processes=value["processes"],
        checks=None if "checks" not in value else tuple(_check(c) for c in value["checks"]),
        discovery=_discovery(value),
        drivers=None if "drivers" not in value else dict(value["drivers"]),
        sandbox=None if value.get("sandbox") is None else SandboxReport.from_json(value["sandbox"]),
        internal_error=bool(value.get("internal_error", False)),
    )
    problem = implausible(outcome)
    if problem:
        raise CodecError(problem)
    return outcome


def _example(value: dict[str, Any]) -> ExampleResult:
    return ExampleResult(ExampleStatus(value["status"]), value["detail"], tuple(Run.from_json(r) for r in value["runs"]))


def _check(value: dict[str, Any]) -> CheckResult:
    return CheckResult(value["id"], CheckStatus(value["status"]), value.get("detail", ""), value.get("spec", ""), value.get("stderr", ""))


def _discovery(value: dict[str, Any]) -> Discovery | None:
    if value.get("capabilities") is None:
        return None
    capabilities = tuple(Capability(c["name"], c.get("kind"), c.get("summary")) for c in value["capabilities"])
    return Discovery(capabilities, dict(value.get("capability_help", {})), value.get("kind"))


def implausible(outcome: Outcome) -> str:
    """Why the verdict rule could never have given `outcome` its status ("" when it could): a
    failure shown is always `failed`, `failed` always shows one, `error` is always an internal
    error, and `passed` shows a pass and no error."""
    items = [e.status.value for e in outcome.examples] + [c.status.value for c in outcome.checks or ()]
    if ("failed" in items) != (outcome.status == Status.FAILED):
        return f"status `{outcome.status}` disagrees with its results"
    if outcome.status == Status.ERROR and not outcome.internal_error:
        return "status `error` without an internal error"
    if outcome.status == Status.PASSED and ("error" in items or "passed" not in items):
        return "status `passed` without a pass"
    return ""


def roundtrip(outcome: Outcome) -> Outcome:
    """`outcome` exactly as the cache would give it back; CodecError when it cannot be stored."""
    try:
        text = json.dumps(to_json(outcome), ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError, RecursionError, AttributeError):
        raise CodecError("not storable") from None
    return from_json(json.loads(text))


def fits(tool: Tool, outcome: Outcome) -> bool:
    """Whether `outcome` can be `tool`'s: one result per example of the tool (or none)."""
    return len(outcome.examples) in (0, len(tool.examples))


# --------------------------------------------------------------------------- onto the model


def apply(tool: Tool, outcome: Outcome) -> None:
    """Put an outcome (fresh or cached) on the model."""
    tool.status = published(outcome.status, tool.valid)
    tool.status_detail = _detail(tool, outcome)
    tool.processes = outcome.processes
    for example, result in zip(tool.examples, outcome.examples):
        example.status = result.status
        example.detail = result.detail
        example.runs = list(result.runs)
    if outcome.checks is not None:
        tool.checks = [Check(c.id, c.status, c.detail, c.spec, c.stderr) for c in outcome.checks]
    if outcome.discovery is not None:
        tool.capabilities = list(outcome.discovery.capabilities)
        tool.capability_help = dict(outcome.discovery.help)
        tool.kind = outcome.discovery.kind
    tool.sandbox = outcome.sandbox
    for driver in tool.drivers:
        reason = (outcome.drivers or {}).get(driver.id)
        if reason is not None:
            driver.run_status[tool.id] = reason


def _detail(tool: Tool, outcome: Outcome) -> str:
    """The status detail. An invalid tool's starts with why it is invalid, never with what a run
    could not do ("no linux.<ext>", "no `examples`"); what did run (its counts) follows."""
    detail = outcome.status_detail
    invalid = invalid_reason(tool) if not tool.valid else ""
    if not invalid:
        return detail
    return f"{invalid}; {detail}" if detail and outcome.processes else invalid
