"""Judging a finished process against a contract: the one place a *run's* rules are written (an
example's and a tool's status are decided from the runs in `verdict`).

- `unfinished`: why a process gives no result to judge (could not start, timed out,
  an output cap was hit, cancelled), or None when it finished.
- `exit_failure`: the message for a non-zero exit: the code and the last stderr line.
- `compare`: how an actual result differs from the example's expected output (speccify's
  recursive subset rule, `matching.differences`) and from the contract's `outputs` schema.
- `error_envelope`: an AIP-14 error envelope `{ok: false, error: {...}}` for a failed call,
  which an example that documents a failure (`output.ok: false`) is compared with.
"""

from __future__ import annotations

from typing import Any, Callable

from .. import jsonschemas
from ..matching import differences, unwrap_envelope
from ..model import Run
from ..statuses import RunStatus
from ..process import ProcessResult


Scrub = Callable[[str], str]


def _text(data: bytes, scrub: Scrub | None) -> str:
    # Machine paths are rewritten before any text is cut, so none is left half-shown.
    text = data.decode("utf-8", "replace")
    return scrub(text) if scrub is not None else text


def excerpt(data: bytes, limit: int = 2000, scrub: Scrub | None = None) -> str:
    """The end of a stream as text, at most `limit` characters (the end is where errors are)."""
    text = _text(data, scrub)
    return text if len(text) <= limit else "…" + text[-limit:]


def last_line(data: bytes, scrub: Scrub | None = None) -> str:
    lines = [line for line in _text(data, scrub).splitlines() if line.strip()]
    return lines[-1].strip()[:300] if lines else ""


def unfinished(result: ProcessResult, timeout: float) -> str | None:
    """Why `result` has nothing to judge, or None when the process ran to its end."""
    if result.error:
        return result.error
    if result.timed_out:
        return f"timed out after {timeout:g}s"
    if result.stdout_truncated:
        return "stdout exceeded the output cap; the process was stopped"
    if result.stderr_truncated:
        return "stderr exceeded the 64 KiB cap; the process was stopped"
    return None


def exit_failure(result: ProcessResult, scrub: Scrub | None = None) -> str:
    line = last_line(result.stderr, scrub)
    return f"exit code {result.exit_code}" + (f": {line}" if line else "")


def documents_failure(expected: Any) -> bool:
    """An expected output of the form `{ok: false, ...}`: the example shows how the tool fails."""
    return isinstance(expected, dict) and expected.get("ok") is False


def schema_problems(outputs: Any, actual: Any) -> list[str]:
    """Where `actual` breaks the contract's `outputs` (None: not checked)."""
    if outputs is None:
        return []
    # A value the budget could not check is no pass either: said as what it is, not as a violation.
    # Each run's output has a checker of its own (its own budget), the schema compiled once per tool.
    return [
        f"output could not be checked against the outputs schema: {problem.message}" if problem.undecided
        else f"output violates the outputs schema at {jsonschemas.json_path(problem.path)}: {problem.message}"
        for problem in jsonschemas.Checker.reusing(outputs).validate(actual, limit=3)
    ]


def compare(expected: Any, has_expected: bool, actual: Any, outputs: Any, scrub: Scrub | None = None) -> str:
    """Why `actual` does not satisfy the example and the contract; "" when it does."""
    reasons = differences(expected, actual, scrub=scrub) if has_expected else []
    reasons += schema_problems(outputs, actual)
    return "; ".join(reasons)


def error_envelope(code: str, message: str, exit_code: int | None = None) -> dict[str, Any]:
    error: dict[str, Any] = {"code": code, "message": message}
    if exit_code is not None:
        error["exit_code"] = exit_code
    return {"ok": False, "error": error}


def settle(run: Run, example: Any, result: Any, outputs: Any, scrub: Scrub | None = None) -> Run:
    """Judge a successful call's result against the example and the contract."""
    run.actual, run.has_actual = unwrap_envelope(result), True
    run.detail = compare(example.output, example.has_output, run.actual, outputs, scrub)
    run.status = RunStatus.FAILED if run.detail else RunStatus.PASSED
    return run


def settle_failure(run: Run, expected: Any, envelope: dict[str, Any], scrub: Scrub | None = None) -> Run:
    """Judge a failed call against an example that documents a failure."""
    run.actual, run.has_actual = envelope, True
    run.detail = "; ".join(differences(expected, envelope, scrub=scrub))
    run.status = RunStatus.FAILED if run.detail else RunStatus.PASSED
    return run
