"""Splitting the tools into N balanced shards that every CI job computes alike.

`assign` is a pure function of the tools (their format, source and id) and their weights, so N
jobs on N machines that see the same commit and the same results files agree on which job runs
which tool, without talking to each other. Weights are estimated seconds: a tool whose result is
already given (its key matches a results file) costs nearly nothing; a tool with a recorded run
time (from any results file, even for an older version of it) costs that; any other tool costs
its number of tasks (examples, times drivers) at the average recorded seconds per task, or one
second each when nothing was recorded. Tools are placed heaviest first, each on the shard with the
least work so far (ties: the lower shard), which stays within one tool of an even split.

The local results cache is deliberately not a weight: jobs sharing a cache folder while they run
would each see a different one, and disagree.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

GIVEN = 0.001  # a result is given: reading it is all the work
_SPEC = re.compile(r"^\s*(\d+)\s*/\s*(\d+)\s*$")


class ShardError(ValueError):
    pass


def parse(spec: str) -> tuple[int, int]:
    """`K/N` (1 <= K <= N) as (K, N)."""
    match = _SPEC.match(spec)
    if not match:
        raise ShardError(f"--shard {spec!r}: write K/N, e.g. 2/4 for the second of four shards")
    index, count = int(match.group(1)), int(match.group(2))
    if count < 1 or not 1 <= index <= count:
        raise ShardError(f"--shard {spec!r}: K must be between 1 and N")
    return index, count


@dataclass(frozen=True)
class Work:
    """One tool to place: `order` names it stably (format, source, id); `weight` in seconds."""

    order: tuple[str, ...]
    weight: float


def assign(items: list[Work], count: int) -> list[int]:
    """The shard (1..count) of each item, in the items' order."""
    loads = [0.0] * count
    shard_of = [0] * len(items)
    ranked = sorted(range(len(items)), key=lambda i: (-items[i].weight, items[i].order))
    for index in ranked:
        lightest = min(range(count), key=lambda s: (loads[s], s))
        shard_of[index] = lightest + 1
        loads[lightest] += items[index].weight
    return shard_of


def estimate(tasks: int, given: bool, recorded: float | None, per_task: float) -> float:
    if given:
        return GIVEN
    if recorded is not None:
        return max(recorded, GIVEN)
    return max(tasks, 1) * per_task
