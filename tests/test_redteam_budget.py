"""Red team, issue 17: validation time stays linear in the manifest's size.

Each attack here once kept `toolcatalog validate` (or a page, or a diff) busy for minutes or
hours from a few kilobytes of manifest. Nothing asserts on time: an attack is either refused
before any work ("not checked: ..." on the schema, nothing spent), stopped by the work budget
("not checked: ... budget ..."), or decided with a count of the work done that a quadratic or
exponential algorithm cannot meet. What hung before its fix runs in a subprocess whose timeout
is only a safety net, so a regression fails instead of hanging the suite.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema._utils
import pytest
import referencing._core

import matchlimits
from manifests import ECHO_STDIN_PY, PLATFORM, speccify_tool
from sitebuild import run_check, tool_of, toolcatalog_process
from toolcatalog import catalogdiff, jsonschemas, schemaview, schemawork
from toolcatalog.harvest import harvest
from toolcatalog.options import Options

NOT_CHECKED = "not checked: "
OVER_BUDGET = "not checked: checking the value needed more than the budget of"
REFUSED = "not checked: the schema"


def doubling(levels: int, shape: str = "allOf") -> dict[str, Any]:
    """`$defs` where each definition applies the next one twice: 2**levels schemas on one value."""
    defs: dict[str, Any] = {}
    for i in range(levels):
        nxt = {"$ref": f"#/$defs/d{i + 1}"}
        defs[f"d{i}"] = {
            "allOf": {"allOf": [nxt, nxt]},
            "anyOf": {"anyOf": [nxt, nxt]},
            "oneOf": {"oneOf": [nxt, nxt]},
            "not": {"allOf": [{"not": {"not": nxt}}, nxt]},
            "if": {"if": nxt, "then": nxt, "else": nxt},
            "dependentSchemas": {"dependentSchemas": {"a": nxt, "b": nxt}},
            "$dynamicRef": {"$dynamicAnchor": f"x{i}", "allOf": [{"$dynamicRef": f"#/$defs/d{i + 1}"}] * 2},
        }[shape]
    defs[f"d{levels}"] = {"type": "object"}
    return {"$defs": defs, "$ref": "#/$defs/d0"}


def only_messages(problems: list[jsonschemas.Problem]) -> list[str]:
    return [p.message for p in problems]


# -- 1. `$ref` expansion -------------------------------------------------------------------------


def test_a_doubling_defs_chain_is_refused_by_toolcatalog_validate(tmp_path: Path) -> None:
    """The issue's attack: 3 KB, 30 levels, 2**30 expansions for every example."""
    schema = doubling(30)
    folder = speccify_tool(tmp_path, "doubling", [("one", {"a": 1}, {"ok": True})], inputs=schema, outputs=schema)
    assert (folder / "TOOL.md").stat().st_size < 4096
    result = toolcatalog_process("validate", str(tmp_path), timeout=120)  # main never finished
    out = result.stdout
    assert result.returncode == 0, out + result.stderr  # a warning: the schema is valid, just not checkable
    assert "warning: inputs: not checked: it applies more than 10,000 schemas to one value" in out, out
    assert "warning: outputs: not checked: it applies more than 10,000 schemas to one value" in out, out
    assert "example 'one': the input could not be fully checked: not checked: the schema is not used" in out
    assert "example 'one': the expected output could not be fully checked: not checked: the schema is not used" in out


@pytest.mark.parametrize("shape", ["allOf", "anyOf", "oneOf", "not", "if", "dependentSchemas", "$dynamicRef"])
def test_every_in_place_keyword_is_counted_before_any_value_is_checked(shape: str) -> None:
    schema = doubling(40, shape)  # 2**40: no validator finishes, so any work at all would hang here
    [problem] = jsonschemas.check_schema(schema)
    assert not problem.fatal and problem.message.startswith("not checked: it applies more than 10,000 schemas")
    checker = jsonschemas.Checker(schema)
    [undecided] = checker.validate({"a": 1, "b": 2})
    assert undecided.undecided and undecided.message.startswith(REFUSED)
    assert checker.meter.spent == 0  # refused before any keyword ran


def test_draft_7_dependencies_are_counted_too() -> None:
    nxt = lambda i: {"$ref": f"#/definitions/d{i + 1}"}  # noqa: E731
    definitions: dict[str, Any] = {f"d{i}": {"dependencies": {"a": nxt(i), "b": nxt(i)}} for i in range(40)}
    definitions["d40"] = {}
    schema = {"$schema": "http://json-schema.org/draft-07/schema#", "definitions": definitions, "allOf": [{"$ref": "#/definitions/d0"}]}
    assert only_messages(jsonschemas.check_schema(schema))[0].startswith("not checked: it applies more than")
    assert jsonschemas.validate(schema, {"a": 1, "b": 2})[0].undecided


def test_an_in_place_cycle_is_not_checked_instead_of_a_false_violation(tmp_path: Path) -> None:
    """`anyOf: [string, $ref: itself]` recursed until RecursionError, reported as the example
    output violating `outputs`: an error (an invalid tool) for what was never checked."""
    outputs = {"$defs": {"a": {"anyOf": [{"type": "string"}, {"$ref": "#/$defs/a"}]}}, "$ref": "#/$defs/a"}
    speccify_tool(tmp_path, "cyclic", [("five", {}, 5)], outputs=outputs)
    [tool] = harvest(tmp_path, Options()).tools
    assert tool.valid, [d.message for d in tool.diagnostics]
    assert not [d for d in tool.diagnostics if d.code == "example-output-schema"]
    [schema_warning] = [d for d in tool.diagnostics if d.code == "io-schema"]
    assert "not checked: its in-place keywords" in schema_warning.message and "lead back to it" in schema_warning.message
    assert any(d.code == "example-undecided" for d in tool.diagnostics)


def test_a_deep_allof_chain_is_not_checked_instead_of_a_false_violation(tmp_path: Path) -> None:
    defs: dict[str, Any] = {f"d{i}": {"allOf": [{"$ref": f"#/$defs/d{i + 1}"}]} for i in range(500)}
    defs["d500"] = {}
    speccify_tool(tmp_path, "deep", [("x", {}, {"ok": True})], outputs={"$defs": defs, "$ref": "#/$defs/d0"})
    [tool] = harvest(tmp_path, Options()).tools
    assert tool.valid, [d.message for d in tool.diagnostics]
    [schema_warning] = [d for d in tool.diagnostics if d.code == "io-schema"]
    assert "not checked: its `$ref`s and in-place keywords nest more than 150 schemas deep" in schema_warning.message


def test_a_long_pure_ref_chain_is_followed_once_not_once_per_ref(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every `$ref` of a chain followed the rest of the chain (up to 1,000 hops): quadratic."""
    n = 600
    defs: dict[str, Any] = {f"d{i}": {"$ref": f"#/$defs/d{i + 1}"} for i in range(n)}
    defs[f"d{n}"] = {"type": "object"}
    lookups = [0]
    lookup = referencing._core.Resolver.lookup

    def counted(self: Any, ref: str) -> Any:
        lookups[0] += 1
        return lookup(self, ref)

    monkeypatch.setattr(referencing._core.Resolver, "lookup", counted)
    problems = jsonschemas.check_schema({"$defs": defs, "$ref": "#/$defs/d0"})
    # Meta-validation looks up the meta-schema's references too, a few per schema node.
    assert lookups[0] <= 20 * n, lookups[0]  # main: n**2 / 2 more
    assert [p.message for p in problems if p.fatal] == []  # a chain, not a cycle
    assert "nest more than 150 schemas deep" in problems[0].message


def test_the_property_table_of_a_doubling_schema_is_bounded() -> None:
    """Held before this issue (rows and depth are capped); kept so the caps stay."""
    defs: dict[str, Any] = {
        f"d{i}": {"properties": {"a": {"$ref": f"#/$defs/d{i + 1}"}, "b": {"$ref": f"#/$defs/d{i + 1}"}}} for i in range(30)
    }
    defs["d30"] = {"type": "string"}
    view = schemaview.build({"$defs": defs, "$ref": "#/$defs/d0"}, "tc-in")
    assert view.truncated and len(view.rows) == schemaview.MAX_ROWS
    folded = dict(defs, **{f"d{i}": {**defs[f"d{i}"], "allOf": [{"$ref": f"#/$defs/d{i + 1}"}] * 2} for i in range(30)})
    view = schemaview.build({"$defs": folded, "properties": {"top": {"$ref": "#/$defs/d0"}}}, "tc-in")
    assert len(view.rows) <= schemaview.MAX_ROWS


def test_an_allof_of_thousands_of_members_renders() -> None:
    """Each member defining the same property nested one more `allOf`: RecursionError."""
    schema = {"allOf": [{"properties": {"x": {"type": "string", "description": f"part {i}"}}} for i in range(3000)]}
    view = schemaview.build(schema, "tc-in")
    assert [row.name for row in view.rows] == ["x"] and view.rows[0].type == "string"


class _CountingDict(dict):
    gets = 0

    def get(self, *args: Any) -> Any:
        _CountingDict.gets += 1
        return super().get(*args)


def test_anchor_references_in_the_property_table_are_looked_up_in_an_index() -> None:
    """Every `$ref: "#name"` walked the schema again (up to 5,000 nodes each): a 1 MiB schema of
    references cost 10**8 steps."""
    anchors = 2000
    defs = {f"a{i}": _CountingDict({"$anchor": f"x{i}", "type": "string"}) for i in range(anchors)}
    # `$defs` last: the old walk (a stack) looked there first, so every anchor was found
    schema = {"allOf": [{"$ref": f"#x{i}"} for i in range(anchors)], "$defs": defs}
    _CountingDict.gets = 0
    view = schemaview.build(schema, "tc-in")
    assert view.root_type == "string"
    assert _CountingDict.gets <= 3 * anchors, _CountingDict.gets  # main: about anchors**2 / 2


# -- 2. uniqueItems --------------------------------------------------------------------------------


def test_unique_items_over_a_mebibyte_of_distinct_objects_is_decided(tmp_path: Path) -> None:
    items = [{"k": i} for i in range(45_000)]
    inputs = {"type": "object", "properties": {"items": {"type": "array", "uniqueItems": True}}}
    speccify_tool(tmp_path, "distinct", [("all distinct", {"items": items}, {"ok": True})], inputs=inputs)
    # The same value twice, spelled differently (member order, 1 and 1.0): not unique.
    speccify_tool(tmp_path, "repeated", [("one repeated", {"items": [*items[:40_000], {"k": 5.0}]}, {"ok": True})], inputs=inputs)
    assert (tmp_path / ".agent/tools/distinct/TOOL.md").stat().st_size < Options().max_manifest_bytes
    result = toolcatalog_process("validate", str(tmp_path), timeout=120)  # main: about 10**9 comparisons
    out = result.stdout
    assert result.returncode == 0, out + result.stderr
    assert "could not be fully checked" not in out and NOT_CHECKED not in out, out
    [repeated] = [line for line in out.splitlines() if "has non-unique elements" in line]
    assert "repeated/TOOL.md" in repeated and "example 'one repeated': the input violates inputs at $.items" in repeated
    assert len(repeated) < 1000  # the message shows a prefix of the array, not all of it


def _equal_calls(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    calls = [0]
    equal = jsonschema._utils.equal

    def counted(one: Any, two: Any) -> bool:
        calls[0] += 1
        return equal(one, two)

    monkeypatch.setattr(jsonschema._utils, "equal", counted)  # what jsonschema's pairwise `uniq` calls
    return calls


def test_unique_items_compares_no_pairs(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = _equal_calls(monkeypatch)
    items = [{"k": i, "tags": [i, "x"]} for i in range(2000)]
    assert jsonschemas.validate({"type": "array", "uniqueItems": True}, items) == []
    [problem] = jsonschemas.validate({"type": "array", "uniqueItems": True}, [*items, {"tags": [7.0, "x"], "k": 7}])
    assert "has non-unique elements" in problem.message
    # JSON Schema's equality: true is not 1, 1 is 1.0, NaN equals nothing, huge integers are exact.
    assert jsonschemas.validate({"uniqueItems": True}, [1, True, 0, False]) == []
    assert jsonschemas.validate({"uniqueItems": True}, [float("nan"), float("nan")]) == []
    assert jsonschemas.validate({"uniqueItems": True}, [2**53 + 1, float(2**53)]) == []
    assert jsonschemas.validate({"uniqueItems": True}, [k * (2**61 - 1) for k in range(1000)]) == []  # equal hashes
    assert calls[0] == 0  # main: about 2,000,000


def test_meta_validation_of_a_draft_4_enum_compares_no_pairs(monkeypatch: pytest.MonkeyPatch) -> None:
    """Draft 4's meta-schema says `enum` has `uniqueItems`: checking the schema itself was quadratic."""
    calls = _equal_calls(monkeypatch)
    schema = {"$schema": "http://json-schema.org/draft-04/schema#", "enum": [{"a": i} for i in range(2000)]}
    assert jsonschemas.check_schema(schema) == []
    assert calls[0] == 0


def test_a_bundled_schema_decides_unique_tags_without_comparing_pairs(monkeypatch: pytest.MonkeyPatch) -> None:
    """AIP-14's `tags` has `uniqueItems`; an invalid front matter goes to jsonschema for its errors."""
    calls = _equal_calls(monkeypatch)
    errors = jsonschemas.validate_bundled("aip14-tool.schema.json", {"tags": [{"t": i} for i in range(2000)]})
    assert errors  # objects are not tags
    assert calls[0] == 0


# -- 3. every other keyword: bounded, or stopped by the budget -------------------------------------


BUDGET_SCRIPT = r"""
import json, sys
from toolcatalog import jsonschemas

def chain(n, make, last):
    defs = {f"d{i}": make(f"#/$defs/d{i + 1}") for i in range(n)}
    defs[f"d{n}"] = last
    return {"$defs": defs, "$ref": "#/$defs/d0"}

nested = {}
cursor = nested
for _ in range(40):
    cursor["a"] = {}
    cursor = cursor["a"]

cases = {
    # the same member reached through `properties` and `patternProperties` at each of 40 levels
    "properties-and-patternProperties": (
        chain(40, lambda nxt: {"properties": {"a": {"$ref": nxt}}, "patternProperties": {"^a$": {"$ref": nxt}}}, {}), nested),
    # each level's unevaluatedProperties re-validates the level below through anyOf: 2**30
    "unevaluatedProperties": (
        chain(30, lambda nxt: {"anyOf": [{"$ref": nxt}], "unevaluatedProperties": False}, {"properties": {"x": True}}), {"x": 1}),
    "unevaluatedItems": (
        chain(30, lambda nxt: {"anyOf": [{"$ref": nxt}], "unevaluatedItems": False}, {"prefixItems": [True]}), [1]),
    # every branch of a wide oneOf over a big array (each fails only at its last item)
    "oneOf": ({"oneOf": [{"type": "array", "items": {"type": "integer", "maximum": 3998 - i}} for i in range(500)]}, list(range(4000))),
    # every item against a long enum
    "enum": ({"type": "array", "items": {"enum": list(range(20000))}}, [19999] * 20000),
    # a value's members against thousands of patterns
    "patternProperties": ({"type": "object", "patternProperties": {f"^p{i}$": {"type": "string"} for i in range(3000)}},
                          {f"p{i}": "x" for i in range(3000)}),
    # contains with minContains over a big array of objects
    "contains": ({"type": "array", "contains": {"oneOf": [{"required": [f"k{i}"]} for i in range(300)]}, "minContains": 2},
                 [{"k1": 1}] * 3000),
}
out = {}
for name, (schema, value) in cases.items():
    checker = jsonschemas.Checker(schema)
    problems = checker.validate(value, limit=3)
    out[name] = {"messages": [p.message for p in problems], "undecided": [p.undecided for p in problems],
                 "spent": checker.meter.spent, "allowance": checker.meter.allowance}
print(json.dumps(out))
"""


def test_every_other_keyword_stops_at_the_budget_with_a_diagnostic() -> None:
    done = subprocess.run([sys.executable, "-c", BUDGET_SCRIPT], capture_output=True, text=True, timeout=300)  # safety net
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    for name, case in out.items():
        assert case["messages"] and case["messages"][-1].startswith(OVER_BUDGET), (name, case)
        assert case["undecided"][-1], name
        # Work charged before it is done: nothing ran past the allowance by more than one step's worth.
        assert case["spent"] <= case["allowance"] + 10_000_000, (name, case)


def test_the_budget_covers_ordinary_contracts_with_a_wide_margin() -> None:
    """The corpus' and the examples' contracts spend a few units per JSON value; the allowance is
    schemawork.UNITS_PER_VALUE per value (plus a floor), so no real contract comes near it."""
    inputs = {
        "type": "object", "required": ["items"],
        "properties": {"items": {"type": "array", "items": {"oneOf": [
            {"type": "object", "required": ["id"], "properties": {"id": {"type": "integer"}, "tags": {"type": "array", "items": {"type": "string", "pattern": "^[a-z]+$"}, "uniqueItems": True}}},
            {"type": "string", "minLength": 1},
        ]}}},
        "additionalProperties": False,
    }
    value = {"items": [{"id": i, "tags": ["a", "b", "c"]} if i % 2 else f"s{i}" for i in range(8_000)]}
    checker = jsonschemas.Checker(inputs)
    assert checker.validate(value) == []
    values = schemawork.size(inputs) + schemawork.size(value)
    assert checker.meter.spent < values * schemawork.UNITS_PER_VALUE / 2, (checker.meter.spent, values)  # about 5


def test_multiple_of_with_huge_and_tiny_numbers_is_decided() -> None:
    """A 400-digit integer divided by 0.5 raised OverflowError inside jsonschema, reported as
    "a `pattern` in the schema is not a regular expression" (a false violation)."""
    assert jsonschemas.validate({"multipleOf": 0.5}, 10**400) == []
    assert jsonschemas.validate({"multipleOf": 0.5}, 10**400 + 1) == []  # every integer is a multiple of 0.5
    [problem] = jsonschemas.validate({"multipleOf": 0.3}, 10**400)
    assert problem.message.endswith("is not a multiple of 0.3") and not problem.undecided
    assert jsonschemas.validate({"multipleOf": 0.1}, 0.5) == []  # as jsonschema decides with floats
    assert jsonschemas.validate({"multipleOf": 3}, 10**4000) != []


def test_format_is_an_annotation_and_costs_one_step(tmp_path: Path) -> None:
    checker = jsonschemas.Checker({"type": "array", "items": {"format": "email"}})
    assert checker.validate(["not an email"] * 1000) == []
    assert checker.meter.spent <= 3 * 1000 + 10


def test_a_big_schema_is_read_once_for_all_examples(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each example crawled the whole schema again (and looped over all its properties): a 1 MiB
    schema and thousands of examples made harvest quadratic."""
    inputs = {"type": "object", "properties": {f"p{i}": {"type": "string"} for i in range(2000)}}
    speccify_tool(tmp_path, "wide", [(f"case {i}", {"p1": "x"}, {"ok": True}) for i in range(100)], inputs=inputs)
    crawls = [0]
    registry = jsonschemas._registry

    def counted(*args: Any, **kwargs: Any) -> Any:
        crawls[0] += 1
        return registry(*args, **kwargs)

    monkeypatch.setattr(jsonschemas, "_registry", counted)
    [tool] = harvest(tmp_path, Options(cache=False)).tools
    assert tool.valid and len(tool.examples) == 100
    assert crawls[0] <= 4, crawls[0]  # inputs and outputs: checked once, read once for the examples; main: 200+


def test_properties_loop_over_the_smaller_side(monkeypatch: pytest.MonkeyPatch) -> None:
    checker = jsonschemas.Checker({"type": "object", "properties": {f"p{i}": {"type": "string"} for i in range(50_000)}})
    for _ in range(200):
        assert checker.validate({"p7": "x"}) == []
    assert checker.meter.spent < 200 * 10  # main looped over 50,000 names for each value


PATTERN_SCRIPT = r"""
import json, sys
from pathlib import Path
sys.path.insert(0, sys.argv[2])
from manifests import speccify_tool
from toolcatalog import jsonschemas
from toolcatalog.harvest import harvest
from toolcatalog.options import Options
""" + matchlimits.SETTING + r"""
root = Path(sys.argv[1])
cases = [(f"case {i}", {"s": "a" * (100 + i) + "!"}, {"ok": True}) for i in range(80)]
speccify_tool(root, "slow", cases, inputs={"type": "object", "properties": {"s": {"type": "string", "pattern": "^(a|a)*$"}}})
attempts = [0]
compile_pattern = jsonschemas.compile_pattern
class Counted:
    def __init__(self, compiled):
        self.compiled = compiled
    def search(self, *args, **kwargs):
        attempts[0] += 1
        return self.compiled.search(*args, **kwargs)
jsonschemas.compile_pattern = lambda pattern: Counted(compile_pattern(pattern))
[tool] = harvest(root, Options(cache=False)).tools
undecided = [d.message for d in tool.diagnostics if d.code == "example-undecided"]
print(json.dumps({"attempts": attempts[0], "undecided": len(undecided), "valid": tool.valid}))
"""


def test_pattern_time_is_one_budget_per_manifest_not_per_example(tmp_path: Path) -> None:
    """Each example had its own 2 s of matching (0.5 s for its first try): 80 catastrophic
    examples cost 40 s, 10,000 would cost hours. Attempts are counted, as in
    tests/test_schema_patterns.py: a timed-out attempt lasts at least its limit (processor time),
    so one budget allows at most 1 + (budget - first limit) / slow limit + 1 of them."""
    tests = str(Path(__file__).resolve().parent)
    done = subprocess.run([sys.executable, "-c", PATTERN_SCRIPT, str(tmp_path), tests], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["attempts"] <= matchlimits.most_attempts(), out  # main: one attempt at the first limit per example, 80
    assert out["undecided"] == 80 and out["valid"], out


# -- the diff ---------------------------------------------------------------------------------------


def test_the_diff_of_two_long_enums_is_linear(monkeypatch: pytest.MonkeyPatch) -> None:
    n = 1000
    calls = [0]
    canon = catalogdiff._canon

    def counted(value: Any) -> str:
        calls[0] += 1
        return canon(value)

    monkeypatch.setattr(catalogdiff, "_canon", counted)
    changes: list[catalogdiff.Change] = []
    catalogdiff.compare_schema({"enum": list(range(n))}, {"enum": list(range(1, n + 1))}, "inputs", "input", changes)
    assert {c.code for c in changes} == {"input-enum-narrowed", "input-enum-widened"}
    assert calls[0] <= 5 * n, calls[0]  # main: 2 * n**2


# -- the verdict of a run ---------------------------------------------------------------------------


def test_an_output_the_budget_could_not_check_never_passes(tmp_path: Path) -> None:
    """At run time the tool's real output is checked against `outputs` with the same budget: a
    refused schema makes the run fail with the reason, never a pass."""
    speccify_tool(tmp_path, "unchecked", [("echo", {"a": 1}, {"a": 1})], outputs=doubling(30),
                  files={f"{PLATFORM}.py": ECHO_STDIN_PY})
    catalog, _ = run_check(tmp_path)
    tool = tool_of(catalog, "unchecked")
    [example] = tool.examples
    assert example.status == "failed", (example.status, example.detail)
    assert example.detail.startswith("output could not be checked against the outputs schema: not checked: the schema is not used")


# -- compiling a pattern ----------------------------------------------------------------------------


def test_a_pattern_whose_repeats_multiply_is_never_compiled(tmp_path: Path) -> None:
    """`regex` expands counted repeats when it compiles, with no time limit: 17 bytes of
    `(?:a{2000}){2000}` took seven seconds before any value was matched, and each extra digit
    multiplies it."""
    pattern = "(?:a{2000}){2000}"
    inputs = {"type": "object", "properties": {"s": {"type": "string", "pattern": pattern}},
              "patternProperties": {"(?:b{2000}){2000}": {}}}
    speccify_tool(tmp_path, "costly", [("x", {"s": "aa", "bb": 1}, {"ok": True})], inputs=inputs)
    compiled: list[str] = []
    compile_pattern = jsonschemas.compile_pattern.__wrapped__

    def counted(text: str) -> Any:
        compiled.append(text)
        return compile_pattern(text)

    jsonschemas.compile_pattern.cache_clear()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(jsonschemas, "compile_pattern", counted)
        [tool] = harvest(tmp_path, Options(cache=False)).tools
    assert tool.valid, [d.message for d in tool.diagnostics]
    assert not [text for text in compiled if "2000" in text]
    warnings = [d.message for d in tool.diagnostics if d.code == "io-schema"]
    assert len(warnings) == 2 and all("repeats its parts more than 100,000 times in all, too costly to compile" in w for w in warnings)
    undecided = [d.message for d in tool.diagnostics if d.code == "example-undecided"]
    assert any("the value was not checked" in m for m in undecided) and any("the property name 'bb'" in m for m in undecided)
    assert schemawork.pattern_size("^[a-z0-9._-]{1,64}$") < 100 and schemawork.pattern_size(r"\p{L}{3}\{9999999\}") < 100
    assert schemawork.pattern_size("(){9999999}") > schemawork.MAX_PATTERN_REPEATS  # an empty group compiles per repeat


def test_a_ref_that_is_no_uri_is_an_error_on_its_line_and_an_unfetched_one_is_not_a_violation(tmp_path: Path) -> None:
    """`$ref: "http://["` raised ValueError out of check_schema; a `$ref` into a document that is
    never fetched made the example's output "violate" `outputs` (an error for an unchecked value)."""
    speccify_tool(tmp_path, "bad-uri", [("x", {}, {"ok": True})], inputs={"$ref": "http://["})
    speccify_tool(tmp_path, "remote", [("x", {}, {"ok": True})], outputs={"$ref": "urn:elsewhere#/defs/out"})
    catalog = harvest(tmp_path, Options(cache=False))
    bad = tool_of(catalog, "bad-uri")
    assert not bad.valid
    [error] = [d for d in bad.diagnostics if d.code == "io-schema"]
    assert "`$ref` 'http://[' is not a valid URI reference" in error.message and error.line == 5  # `$ref:` under `inputs:`
    remote = tool_of(catalog, "remote")
    assert remote.valid, [d.message for d in remote.diagnostics]
    assert not [d for d in remote.diagnostics if d.code == "example-output-schema"]
    [undecided] = [d for d in remote.diagnostics if d.code == "example-undecided"]
    assert "not checked: a `$ref` could not be resolved" in undecided.message


def test_the_budget_charges_work_done_not_work_skipped() -> None:
    """A wide `oneOf` whose first branch passes checks the rest with `is_valid`, which stops at
    their first error: cheap, and within the budget. Empty `items` over a long array is charged
    per item all the same (no keyword runs, but every item is visited)."""
    schema = {"oneOf": [{"type": "array", "items": {"type": "integer", "minimum": i}} for i in range(3000)]}
    checker = jsonschemas.Checker(schema)
    assert checker.validate(list(range(20_000))) == []  # only branch 0 passes; the rest fail at item 0 or 1
    assert checker.meter.spent < checker.meter.allowance / 2
    checker = jsonschemas.Checker({"allOf": [{"items": {"type": "object"} if i == 0 else {}} for i in range(300)]})
    [problem] = checker.validate([{}] * 5_000)
    assert problem.message.startswith(OVER_BUDGET)
