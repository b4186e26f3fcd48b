"""The verdict values: a tool's status, an example's, a run's and a check's, and how a list of
them is counted. The catalog schema, the outcome schema, the index filters and the `fail_on`
option all use exactly these values (tests/test_architecture.py keeps them equal)."""

from __future__ import annotations

from enum import Enum
from typing import Any

class _Values(str, Enum):
    """A string enum whose members print, format and serialize as their value (`"passed"`), so
    templates, logs and JSON never see `Status.PASSED`."""

    def __str__(self) -> str:
        return str(self.value)

    def __format__(self, spec: str) -> str:
        return format(str(self.value), spec)

    @classmethod
    def values(cls) -> list[str]:
        return [member.value for member in cls]


class Status(_Values):
    """A tool's verdict. The catalog schema, the outcome schema, the index filters and the
    `fail_on` option all use exactly these values (tests/test_architecture.py keeps them equal)."""

    PASSED = "passed"
    FAILED = "failed"
    INVALID = "invalid"
    NOT_RUN = "not-run"
    NOT_APPLICABLE = "not-applicable"
    NOT_IMPLEMENTED = "not-implemented"
    MISSING_REQUIREMENT = "missing-requirement"
    NO_EXAMPLES = "no-examples"
    ERROR = "error"  # the checking itself crashed (a bug of ours, named in status_detail); never cached


class ExampleStatus(_Values):
    """What happened to one example, over all the implementations it ran through: `skipped`
    (with the reason in `detail`) whenever it did not run, `error` when checking it crashed."""

    PASSED = "passed"
    FAILED = "failed"
    SKIPPED = "skipped"
    ERROR = "error"


class RunStatus(_Values):
    """One run of an example through one implementation or driver. A run that did not happen
    is `skipped` with the reason. There is no `error`: a crash loses the run, so it is the
    example that is `error`."""

    PASSED = "passed"
    FAILED = "failed"
    SKIPPED = "skipped"


class CheckStatus(_Values):
    """A smart tool's conformance rule: `skipped` (with the reason) when its precondition did
    not hold, `error` when checking it crashed."""

    PASSED = "passed"
    FAILED = "failed"
    SKIPPED = "skipped"
    ERROR = "error"


def tally(statuses: "list[Any]") -> str:
    """Counts of example (or check) statuses as every report writes them: "2 passed, 1 failed,
    0 skipped", plus ", 1 error" when something could not be checked."""
    values = [str(s) for s in statuses]
    line = f"{values.count('passed')} passed, {values.count('failed')} failed, {values.count('skipped')} skipped"
    errors = values.count("error")
    return line + (f", {errors} error{'s' if errors != 1 else ''}" if errors else "")


# Not verdicts, but values the `fail_on` option accepts besides the statuses (options.py cannot
# import the modules that produce them): the contract quality finding codes (toolcatalog.quality)
# and the coverage dimensions a threshold can name (toolcatalog.coverage; `total` is their mean).
QUALITY_CODES = (
    "quality-property-undescribed",
    "quality-outputs-undescribed",
    "quality-description-no-result",
    "quality-description-no-when",
    "quality-name-style",
    "quality-near-duplicate",
    "quality-examples-identical",
)
COVERAGE_DIMENSIONS = ("inputs", "outputs", "failure", "effects")
COVERAGE_GATES = ("total", *COVERAGE_DIMENSIONS)
