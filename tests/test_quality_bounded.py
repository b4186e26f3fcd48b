"""The near-duplicate search is bounded in the size of its input: a word thousands of descriptions
share adds at most `quality.MAX_CANDIDATES` comparisons per description (counted, never timed),
and a finding whose search was bounded says "at least"."""

from __future__ import annotations

from pathlib import Path

import pytest

from toolcatalog import quality
from toolcatalog.model import Tool


def _tools(n: int) -> list[Tool]:
    # Every description the same eleven words and a number of its own: each pair is 11/13 alike.
    return [Tool(id=f"t{i}", name=f"t{i}", format="speccify", source=f"t{i}", abs_path=Path("/x"),
                 description=f"Turns the titles of changelog entries into slugs for agents, variant n{i}.") for i in range(n)]


def counted_comparisons(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """A one-item list that counts, from now on, the descriptions `quality` compares."""
    calls = [0]
    real = quality.similarity

    def counted(a: frozenset[str], b: frozenset[str]) -> float:
        calls[0] += 1
        return real(a, b)

    monkeypatch.setattr(quality, "similarity", counted)
    return calls


def _comparisons(monkeypatch: pytest.MonkeyPatch, tools: list[Tool]) -> tuple[int, list[str]]:
    calls = counted_comparisons(monkeypatch)
    messages = [d.message for _t, d in quality._near_duplicates(tools)]
    return calls[0], messages


def test_thousands_of_near_identical_descriptions_cost_comparisons_linear_in_their_number(monkeypatch: pytest.MonkeyPatch) -> None:
    small, small_messages = _comparisons(monkeypatch, _tools(1500))
    large, large_messages = _comparisons(monkeypatch, _tools(3000))
    prefix, cap = 12 - 10 + 1, 64  # the rarest words of a 12-word set, one of which a set 80% alike shares
    assert large <= 3000 * prefix * cap  # every pair: 4.5 million
    assert large <= 2 * small + cap ** 2  # twice the tools, twice the work (the first sets compare fewer)
    assert len(small_messages) == 1500 and len(large_messages) == 3000  # each still has a finding
    assert quality.MAX_CANDIDATES <= cap


def test_a_bounded_search_says_at_least_and_an_exact_one_the_count() -> None:
    tools = _tools(3000)
    found = {t.id: d.message for t, d in quality._near_duplicates(tools)}
    # t0 came first: it is in every one of its words' index, so every tool alike was compared with it.
    assert found["t0"].endswith("with that of `t1`, `t2`, `t3`, `t4`, `t5` and 2994 more: an agent cannot tell which to pick")
    # The last came to full indexes: its count is what was found, and said to be a lower bound.
    last = found["t2999"]
    assert "with that of `t0`, `t1`, `t2`, `t3`, `t4` and at least " in last
    more = int(last.split("and at least ")[1].split(" more")[0])
    assert 0 < more <= quality.MAX_CANDIDATES


def test_below_the_bound_the_answer_is_the_pairwise_one() -> None:
    n = 64  # quality.MAX_CANDIDATES: no word's index is full
    found = {t.id: d.message for t, d in quality._near_duplicates(_tools(n))}
    assert all(f"and {n - 1 - quality.MAX_NAMED} more:" in m and "and at least" not in m for m in found.values())
    assert len(found) == n


def test_the_lower_bound_wording() -> None:
    assert quality._more(12, False) == " and 7 more" and quality._more(3, False) == ""
    assert quality._more(12, True) == " and at least 7 more" and quality._more(3, True) == " and perhaps others"
