"""The time limits of pattern matching (jsonschemas), shrunk for the tests that run runaway patterns
into them in a subprocess of their own.

Those tests count match attempts, never time (see tests/test_schema_patterns.py): a timed-out
attempt lasts at least its limit in processor time, so one validation's budget allows at most
`most_attempts` of them, however loaded the machine. Dividing all three limits by `SHRINK` keeps
that bound and every verdict (a runaway of 2**100 steps is undecided under any limit; a decided
match takes microseconds) and spends a tenth of the processor time on the runaways. jsonschemas
reads the limits when a validation begins, so a script sets them after importing it
(`SETTING`): a product that stopped doing so would keep its 2 s budget, and make up to ten times
the attempts these tests allow."""

from __future__ import annotations

from toolcatalog import jsonschemas

SHRINK = 10
NAMES = ("MATCH_TIMEOUT_S", "SLOW_PATTERN_TIMEOUT_S", "TOTAL_MATCH_BUDGET_S")
LIMITS = {name: getattr(jsonschemas, name) / SHRINK for name in NAMES}
SETTING = "".join(f"jsonschemas.{name} = {value!r}\n" for name, value in LIMITS.items())  # Python, after `from toolcatalog import jsonschemas`


def most_attempts(limits: dict[str, float] = LIMITS) -> int:
    """The most attempts one budget allows: the first at the full limit, then as many slow ones as
    the rest of the budget holds, and one more started before the budget was seen to be spent."""
    return 1 + int((limits["TOTAL_MATCH_BUDGET_S"] - limits["MATCH_TIMEOUT_S"]) / limits["SLOW_PATTERN_TIMEOUT_S"]) + 1
