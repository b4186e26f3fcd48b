"""Contract coverage (toolcatalog.coverage): hand-built contracts with known answers, one test per
dimension, and property tests that adding an example never lowers coverage."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from toolcatalog import coverage
from toolcatalog.model import Capability, Check, Effects, Example, Requirement, Run, Tool
from toolcatalog.observed import WORKSPACE, Connection, FileChange, Observed
from toolcatalog.statuses import CheckStatus, ExampleStatus, RunStatus

INPUTS: dict[str, Any] = {
    "type": "object",
    "required": ["value", "unit"],
    "properties": {
        "value": {"type": "number"},
        "unit": {"enum": ["C", "F", "K"]},
        "precision": {"type": "integer"},
        "round": {"type": "boolean"},
        "options": {"type": "object", "properties": {"mode": {"const": "strict"}}},
        "target": {"oneOf": [{"type": "string"}, {"type": "object", "required": ["id"], "properties": {"id": {"type": "integer"}}}]},
    },
}


def tool(inputs: Any = None, outputs: Any = None, examples: list[Example] | None = None, fmt: str = "speccify", **kw: Any) -> Tool:
    return Tool(id="t", name="t", format=fmt, source="t/TOOL.md", abs_path=Path("/nowhere/t/TOOL.md"),
                inputs=inputs, outputs=outputs, examples=examples or [], **kw)


def ran(input: Any, output: Any = None, actual: Any = None, status: ExampleStatus = ExampleStatus.PASSED,
        observed: Observed | None = None, title: str = "e") -> Example:
    example = Example(title=title, input=input, status=status)
    if output is not None:
        example.output = output
    if status in (ExampleStatus.PASSED, ExampleStatus.FAILED):
        run = Run(RunStatus.PASSED if status == ExampleStatus.PASSED else RunStatus.FAILED, observed=observed)
        if actual is not None:
            run.actual, run.has_actual = actual, True
        example.runs.append(run)
    return example


def test_inputs_every_kind_of_goal_with_exact_numbers_and_list() -> None:
    found = coverage.of(tool(INPUTS, examples=[
        ran({"value": 1, "unit": "C", "round": True}),
        ran({"value": 2, "unit": "F", "target": "abc", "options": {}}),
        ran({"value": 3, "unit": "K", "precision": 2}, status=ExampleStatus.SKIPPED),  # never ran: counts for nothing
    ]))
    inputs = found.dimensions["inputs"]
    # value, unit set; unit's 3 enum values; precision set/left out; round set/left out/true/false;
    # options set/left out; options.mode set/left out/const; target set/left out, 2 branches; target.id
    # (required in its branch) set: 21 goals.
    assert (inputs.covered, inputs.total) == (14, 21)
    assert inputs.uncovered == [
        "enum value `K` of `unit` never used",
        "`precision` never set",
        "`round` never false",
        "`options.mode` never set",
        "`options.mode` never set to its const value",
        "oneOf branch 2 of `target` never matched",
        "`target.id` never set",
    ]
    assert inputs.score == round(14 / 21, 4)


def test_inputs_exact_list_for_a_small_contract() -> None:
    schema = {"type": "object", "required": ["text"], "properties": {
        "text": {"type": "string"}, "lang": {"enum": ["en", "de"]}, "dry": {"type": "boolean"}}}
    found = coverage.of(tool(schema, examples=[ran({"text": "a", "lang": "en"}), ran({"text": "b", "dry": False})]))
    inputs = found.dimensions["inputs"]
    assert (inputs.covered, inputs.total) == (7, 9)
    assert inputs.uncovered == ["enum value `de` of `lang` never used", "`dry` never true"]


def test_nested_and_array_items_are_walked_to_a_bounded_depth() -> None:
    schema = {"type": "object", "properties": {"rows": {"type": "array", "items": {"type": "object", "required": ["name"],
              "properties": {"name": {"type": "string"}, "tags": {"type": "array"}}}}}}
    found = coverage.of(tool(schema, examples=[ran({"rows": [{"name": "a"}]})]))
    assert found.dimensions["inputs"].uncovered == ["optional `rows` never left out", "`rows[].tags` never set"]
    deep: dict[str, Any] = {"type": "object", "properties": {}}
    node = deep
    for level in range(10):
        child: dict[str, Any] = {"type": "object", "properties": {}}
        node["properties"][f"l{level}"] = child
        node = child
    # Depth is bounded: 10 levels of nesting give goals for the first MAX_DEPTH only.
    assert coverage.of(tool(deep)).dimensions["inputs"].total == 2 * coverage.MAX_DEPTH


def test_local_refs_are_followed() -> None:
    schema = {"type": "object", "$defs": {"u": {"enum": ["a", "b"]}}, "properties": {"u": {"$ref": "#/$defs/u"}}}
    found = coverage.of(tool(schema, examples=[ran({"u": "a"})]))
    assert found.dimensions["inputs"].uncovered == ["optional `u` never left out", "enum value `b` of `u` never used"]


def test_outputs_declared_seen_in_actual_outputs_and_undeclared_listed() -> None:
    outputs = {"type": "object", "properties": {"ok": {"type": "boolean"}, "sum": {"type": "number"},
                                                 "detail": {"type": "object", "properties": {"n": {"type": "integer"}}}}}
    examples = [
        ran({}, output={"ok": True, "sum": 1}, actual={"ok": True, "sum": 1, "extra": {"deep": 1}}),
        ran({}, output={"ok": True}, actual=None),  # expected only: an expectation is not an observation
        ran({}, output={"ok": True}, actual={"ok": False, "extra": 2}),  # `extra` is listed once
    ]
    found = coverage.of(tool({"type": "object"}, outputs, examples))
    dim = found.dimensions["outputs"]
    assert (dim.covered, dim.total) == (2, 4)
    assert dim.uncovered == ["output `detail` never seen", "output `detail.n` never seen"]
    assert found.undeclared_outputs == ["extra"]


def test_failure_dimension() -> None:
    success = ran({"x": 1}, output={"ok": True})
    assert coverage.of(tool({}, examples=[success])).dimensions["failure"].uncovered == ["no failing example"]
    failing = ran({"x": -1}, output={"ok": False}, title="negative")
    assert coverage.of(tool({}, examples=[success, failing])).dimensions["failure"].score == 1.0
    broken = ran({"x": -1}, output={"ok": False}, status=ExampleStatus.FAILED, title="negative")
    assert coverage.of(tool({}, examples=[broken])).dimensions["failure"].uncovered == ["failing example `negative` did not pass"]
    skipped = ran({"x": -1}, output={"ok": False}, status=ExampleStatus.SKIPPED, title="negative")
    assert coverage.of(tool({}, examples=[skipped])).dimensions["failure"].uncovered == ["failing example `negative` never ran"]


def test_effects_dimension_only_for_declared_writes_and_network() -> None:
    assert coverage.of(tool({}, fmt="aip-14", effects=Effects(mutates=[]))).dimensions["effects"].total == 0
    declared = Effects(mutates=["workspace:notes/*"], requires=[Requirement("network", "api.example")])
    quiet = Observed(traced=True)
    found = coverage.of(tool({}, fmt="aip-14", effects=declared, examples=[ran({}, observed=quiet)]))
    assert found.dimensions["effects"].uncovered == ["declared writes never observed", "declared network never used"]
    busy = Observed(traced=True, files=[FileChange("notes/a.md", WORKSPACE, "created")], connections=[Connection("1.2.3.4:443", True)])
    found = coverage.of(tool({}, fmt="aip-14", effects=declared, examples=[ran({}, observed=busy)]))
    assert (found.dimensions["effects"].covered, found.dimensions["effects"].total) == (2, 2)
    unsandboxed = coverage.of(tool({}, fmt="aip-14", effects=declared, examples=[ran({})]))
    assert unsandboxed.dimensions["effects"].uncovered == [
        "declared writes never observed (no sandboxed run)", "declared network never observed (no traced run)"]


def test_smart_tools_capabilities_smoke_and_remedy() -> None:
    t = tool(fmt="smart-tool", capabilities=[Capability("count"), Capability("summarize")], descriptor={"deterministic_smoke": ["count"]},
             capability_help={"count": "usage"}, checks=[Check("deterministic-capability-runs", CheckStatus.PASSED),
                                                        Check("failure-names-remedy", CheckStatus.FAILED)])
    found = coverage.of(t)
    assert found.dimensions["inputs"].uncovered == ["`summarize --help` never read"]
    assert found.dimensions["failure"].uncovered == ["no failure observed naming its remedy (`failure-names-remedy` failed)"]
    assert found.total == round((2 / 3 + 0) / 2, 4)


def test_total_is_the_plain_mean_of_the_dimensions_that_have_goals() -> None:
    schema = {"type": "object", "required": ["a"], "properties": {"a": {"type": "string"}}}
    found = coverage.of(tool(schema, examples=[ran({"a": "x"}, output={"ok": True})]))
    assert found.score("inputs") == 1.0 and found.score("failure") == 0.0
    assert found.dimensions["outputs"].score is None and found.dimensions["effects"].score is None
    assert found.total == 0.5
    assert coverage.of(tool(fmt="smart-tool")).total == 0.0  # the failure goal always exists
    assert found.as_dict()["dimensions"]["failure"]["uncovered"] == ["no failing example"]


def test_the_example_in_docs_coverage_md() -> None:
    schema = {"type": "object", "required": ["value", "unit"], "properties": {
        "value": {"type": "number"}, "unit": {"enum": ["C", "F", "K"]}, "precision": {"type": "integer"}}}
    outputs = {"type": "object", "properties": {"ok": {"type": "boolean"}, "value": {"type": "number"}}}
    examples = [ran({"value": 1, "unit": "C"}, output={"ok": True}, actual={"ok": True, "value": 1}),
                ran({"value": 2, "unit": "F"}, output={"ok": True}, actual={"ok": True, "value": 2})]
    found = coverage.of(tool(schema, outputs, examples))
    assert (found.dimensions["inputs"].covered, found.dimensions["inputs"].total, found.total) == (5, 7, 0.5714)
    assert found.uncovered() == ["enum value `K` of `unit` never used", "`precision` never set", "no failing example"]
    examples.append(ran({"value": 9, "unit": "X", "precision": 1}, output={"ok": False}, actual={"ok": False}))
    better = coverage.of(tool(schema, outputs, examples))
    assert (better.dimensions["inputs"].covered, better.score("failure")) == (6, 1.0)


def test_a_hostile_schema_cannot_make_goals_without_end() -> None:
    schema = {"type": "object", "properties": {f"p{i}": {"enum": list(range(1000))} for i in range(100)}}
    assert coverage.of(tool(schema)).dimensions["inputs"].total == coverage.MAX_GOALS


# -- property tests: adding an example never lowers coverage ---------------------------------------------
scalars = st.one_of(st.none(), st.booleans(), st.integers(-3, 3), st.sampled_from(["C", "F", "K", "strict", "x"]))
values = st.recursive(scalars, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                        st.dictionaries(st.sampled_from(["id", "mode", "x"]), inner, max_size=3)),
                      max_leaves=6)
inputs = st.dictionaries(st.sampled_from(sorted(INPUTS["properties"]) + ["zzz"]), values, max_size=6)
OUTPUTS = {"type": "object", "properties": {"ok": {"type": "boolean"}, "n": {"type": "integer"},
                                             "rows": {"type": "array", "items": {"type": "object", "properties": {"id": {}}}}}}
actuals = st.dictionaries(st.sampled_from(["ok", "n", "rows", "other"]), values, max_size=4)
examples = st.builds(
    lambda i, out, actual, status, fails: ran(i, output={"ok": not fails}, actual=actual, status=status),
    inputs, st.none(), st.one_of(st.none(), actuals),
    st.sampled_from([ExampleStatus.PASSED, ExampleStatus.FAILED, ExampleStatus.SKIPPED]), st.booleans())


def _scores(found: coverage.Coverage) -> list[float]:
    return [found.total or 0.0, *(d.score or 0.0 for d in found.dimensions.values())]


@given(st.lists(examples, max_size=4), examples)
def test_adding_an_example_never_lowers_coverage(existing: list[Example], extra: Example) -> None:
    before = coverage.of(tool(INPUTS, OUTPUTS, copy.deepcopy(existing)))
    after = coverage.of(tool(INPUTS, OUTPUTS, [*copy.deepcopy(existing), extra]))
    for name in coverage.DIMENSIONS:
        b, a = before.dimensions[name], after.dimensions[name]
        assert a.total == b.total and a.covered >= b.covered
        assert len(a.uncovered) <= len(b.uncovered)
        if name != "failure":  # the failure goal's text says why it is open, which may change
            assert set(a.uncovered) <= set(b.uncovered)
    assert all(x >= y for x, y in zip(_scores(after), _scores(before)))


@given(st.lists(examples, max_size=4), examples, st.integers(0, 4))
def test_coverage_does_not_depend_on_example_order(existing: list[Example], extra: Example, at: int) -> None:
    a = coverage.of(tool(INPUTS, OUTPUTS, [*copy.deepcopy(existing), extra]))
    mixed = copy.deepcopy(existing)
    mixed.insert(min(at, len(mixed)), extra)
    b = coverage.of(tool(INPUTS, OUTPUTS, mixed))
    assert [(d.covered, d.total) for d in a.dimensions.values()] == [(d.covered, d.total) for d in b.dimensions.values()]


json_values = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), st.text(max_size=5)),
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(
        st.sampled_from(["type", "properties", "items", "enum", "const", "oneOf", "anyOf", "required", "$ref", "a", "b"]), inner, max_size=4)),
    max_leaves=12)


@given(json_values, json_values, st.lists(json_values, max_size=3))
def test_any_shape_of_schema_and_example_is_measured_without_raising(inputs: Any, outputs: Any, given_inputs: list[Any]) -> None:
    from toolcatalog import quality

    t = tool(inputs, outputs, [ran(i, actual=i) for i in given_inputs])
    found = coverage.of(t)
    assert all(0 <= (d.score or 0) <= 1 for d in found.dimensions.values())
    quality.tool_findings(t)
