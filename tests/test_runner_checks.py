"""What each example run costs the check besides its process: the outputs schema is compiled once
per tool (not once per run), while every run's output still gets a checker of its own."""

from __future__ import annotations

from typing import Any

import pytest

from toolcatalog import jsonschemas
from toolcatalog.conformance import judge

OUTPUTS: dict[str, Any] = {
    "type": "object",
    "properties": {"ok": {"type": "boolean"}, "result": {"type": "integer"}, "tags": {"type": "array", "items": {"type": "string"}}},
    "required": ["ok"],
}


def test_each_runs_output_is_checked_without_compiling_the_schema_again(monkeypatch: pytest.MonkeyPatch) -> None:
    compiled: list[Any] = []
    real = jsonschemas.compile_schema
    monkeypatch.setattr(jsonschemas, "compile_schema", lambda schema: compiled.append(schema) or real(schema))
    schema = {**OUTPUTS}  # a schema object of this test's own: nothing compiled it before
    answers = [judge.schema_problems(schema, {"ok": True, "result": n}) for n in range(3)]
    answers.append(judge.schema_problems(schema, {"ok": "yes"}))
    assert answers[:3] == [[], [], []]
    assert answers[3] == ["output violates the outputs schema at $.ok: 'yes' is not of type 'boolean'"]
    assert compiled == [schema]


@pytest.mark.parametrize("value", [{"ok": True}, {"ok": 1, "result": "x"}, {"tags": [1, 2, 3]}, [], "text"])
def test_a_reused_schema_answers_exactly_as_a_new_checker(value: Any) -> None:
    schema = {**OUTPUTS}
    for _ in range(3):
        assert jsonschemas.Checker.reusing(schema).validate(value, limit=3) == jsonschemas.Checker(schema).validate(value, limit=3)


def test_every_run_has_its_own_budget_and_matching_time() -> None:
    """Only the compiled schema is shared: each checker spends a meter and a matching allowance of its own."""
    schema = {"type": "array", "items": {"type": "string", "pattern": "^a+$"}}
    one, two = jsonschemas.Checker.reusing(schema), jsonschemas.Checker.reusing(schema)
    assert one.validator is two.validator
    assert one.meter is not two.meter and one.matching is not two.matching
    big = ["a" * 20] * (jsonschemas.schemawork.FLOOR_UNITS // 40)
    assert one.validate(big) == []
    assert two.meter.spent == 0 and two.matching.spent_s == 0.0 and not two.matching.memo
    assert two.validate(big) == []


def test_a_schema_that_is_refused_stays_refused_when_reused() -> None:
    schema: dict[str, Any] = {"$ref": "#/$defs/a", "$defs": {"a": {"$ref": "#/$defs/a"}}}
    fresh = jsonschemas.Checker(schema).validate({"x": 1})
    assert fresh and fresh[0].undecided
    assert jsonschemas.Checker.reusing(schema).validate({"x": 1}) == fresh
    assert jsonschemas.Checker.reusing(schema).validate({"x": 1}) == fresh
