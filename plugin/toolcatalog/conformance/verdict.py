"""The verdict: one rule that decides a tool's status from what its checking found.

Each format's runner contributes *facts*, never its own aggregation: one `ExampleResult` per
example (built from its runs by `example_result`), the `CheckResult`s of a smart tool's rules,
`Blocked` when nothing could run and why, and `crashed` when the checking itself broke.
`decide` is the only place a tool's status is decided from them; `example_result` the only place
an example's is decided from its runs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from ..model import Run
from ..statuses import CheckStatus, ExampleStatus, RunStatus, Status, tally


@dataclass(frozen=True, slots=True)
class ExampleResult:
    """What happened to one example over every implementation or driver it ran through.

    `required`: the format counts it (a speccify case without `input:` or `output:` is no case
    and is not required; it is shown `skipped`). Not stored: only the verdict reads it."""

    status: ExampleStatus
    detail: str = ""
    runs: tuple[Run, ...] = ()
    required: bool = True


@dataclass(frozen=True, slots=True)
class CheckResult:
    """A named conformance rule (a smart tool's) and what checking it found."""

    id: str
    status: CheckStatus
    detail: str = ""
    spec: str = ""
    stderr: str = ""  # the end of the failing call's stderr, for the page
    static: bool = False  # decided when the manifest was parsed, not by running anything (not stored)


@dataclass(frozen=True, slots=True)
class Blocked:
    """Nothing could run: the status that says why (`not-applicable`, `not-implemented`,
    `no-examples`, `missing-requirement`, `not-run`) and the reason, in words."""

    status: Status
    reason: str


@dataclass(frozen=True, slots=True)
class Facts:
    """Everything the verdict is decided from."""

    examples: tuple[ExampleResult, ...] = ()
    checks: tuple[CheckResult, ...] = ()
    blocked: Blocked | None = None
    crashed: str | None = None  # an internal error while checking, named (the tool is never cached)
    ran_with: str = ""  # what the examples ran with, named after the counts ("linux.py")


@dataclass(frozen=True, slots=True)
class Verdict:
    status: Status
    detail: str


def _named(run: Run) -> str:
    return f"{run.driver}: {run.detail}" if run.driver is not None else run.detail


def example_result(runs: Sequence[Run], required: bool = True) -> ExampleResult:
    """An example's status from its runs (one per implementation or driver it ran through):

    - `failed` when any run failed (each failing run's detail, named by its driver);
    - else `passed` when at least one run passed: the others were skipped, each with its reason
      shown on the page (an AIP-30 driver that drops an input the example uses);
    - else `skipped`, with every run's reason (nothing ran it).
    """
    failed = [run for run in runs if run.status == RunStatus.FAILED]
    if failed:
        return ExampleResult(ExampleStatus.FAILED, "; ".join(_named(run) for run in failed), tuple(runs), required)
    if any(run.status == RunStatus.PASSED for run in runs):
        return ExampleResult(ExampleStatus.PASSED, "", tuple(runs), required)
    return ExampleResult(ExampleStatus.SKIPPED, "; ".join(_named(run) for run in runs), tuple(runs), required)


def decide(facts: Facts) -> Verdict:
    """A tool's status and status detail from its facts. The rule, first match wins:

    1. **failed** when any example or any check failed: a failure observed is a failure, even when
       the rest could not run (`blocked`), was not applicable, or the checking crashed later (the
       crash is then named after the counts). A smart tool's static rule that failed fails it on a
       platform it excludes too: the manifest is wrong everywhere.
    2. **error** when the checking itself crashed (`crashed`, or an example or check is `error`):
       nothing is claimed about the tool; the internal error is the detail.
    3. **blocked**: nothing could run; its status (`not-applicable`, `not-implemented`,
       `no-examples`, `missing-requirement`, `not-run`) with its reason.
    4. **not-run** when nothing ran to a pass (no example passed, and no check that runs the tool:
       a `static` rule is read from the manifest, so its pass shows nothing about running it):
       the counts, or the reason nothing was there to run.
    5. **not-run** for a partial run: some required example was skipped (a driver could not
       run it), so the passes do not cover the contract. The counts say what did run.
       An example the format does not count (`required=False`) may be skipped.
    6. **passed**: every required example ran and passed, or every rule that ran passed.

    Smart-tool cascades: a rule whose precondition did not hold is `skipped` with the reason,
    never a failure by itself (the conformance kit: SKIP never fails). When the precondition is
    another rule's failure (`--help` failed, a call timed out: `no-hang-stdin-closed`), that
    failure fails the tool under 1. Skipped rules never block a pass: the kit's verdict is PASS
    with no failure. Checks are counted as `rules: ...`, examples as the usual tally.
    """
    counts = _counts(facts)
    if _any(facts, ExampleStatus.FAILED.value):
        failed = [c.id for c in facts.checks if c.status == CheckStatus.FAILED]
        detail = f"{counts} ({', '.join(failed)})" if failed else counts
        return Verdict(Status.FAILED, f"{detail}; {facts.crashed}" if facts.crashed else detail)
    if facts.crashed is not None or _any(facts, ExampleStatus.ERROR.value):
        return Verdict(Status.ERROR, facts.crashed or "internal error: a result is `error`; please report it")
    if facts.blocked is not None:
        return Verdict(facts.blocked.status, facts.blocked.reason)
    if not _ran(facts):
        return Verdict(Status.NOT_RUN, counts if facts.examples or facts.checks else "not run: nothing to check")
    if any(e.required and e.status != ExampleStatus.PASSED for e in facts.examples):
        return Verdict(Status.NOT_RUN, counts)
    return Verdict(Status.PASSED, counts)


def _ran(facts: Facts) -> bool:
    """Something ran to a pass: an example, or a rule decided by running the tool (a static rule
    that passed was read from the manifest; it shows nothing about running it)."""
    return any(e.status == ExampleStatus.PASSED for e in facts.examples) or any(
        c.status == CheckStatus.PASSED and not c.static for c in facts.checks)


def _any(facts: Facts, status: str) -> bool:
    return any(e.status.value == status for e in facts.examples) or any(c.status.value == status for c in facts.checks)


def _counts(facts: Facts) -> str:
    """"rules: 3 passed, 1 failed, 0 skipped" for checks; "2 passed, 0 failed, 1 skipped (linux.py)"
    for examples."""
    if facts.checks:
        statuses = [c.status.value for c in facts.checks]
        line = f"rules: {statuses.count('passed')} passed, {statuses.count('failed')} failed, {statuses.count('skipped')} skipped"
        errors = statuses.count("error")
        return line + (f", {errors} error{'s' if errors != 1 else ''}" if errors else "")
    line = tally([e.status for e in facts.examples])
    return f"{line} ({facts.ran_with})" if facts.ran_with else line


def published(status: Status, valid: bool) -> Status:
    """The status a tool is published with: an invalid manifest is `invalid` whatever ran (its
    details still say what did)."""
    return status if valid else Status.INVALID
