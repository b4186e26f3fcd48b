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


# --------------------------------------------------------------------------- the meta-schema, compiled first

KEYWORDS = ["type", "properties", "items", "required", "enum", "const", "minLength", "maximum", "minimum", "pattern",
            "additionalProperties", "allOf", "anyOf", "oneOf", "not", "$ref", "$defs", "definitions", "format", "minItems",
            "uniqueItems", "multipleOf", "exclusiveMinimum", "dependentRequired", "prefixItems", "if", "then", "$id", "$anchor",
            "$dynamicRef", "$dynamicAnchor", "propertyNames", "contains", "minContains", "unevaluatedProperties", "default"]
DRAFTS = [None, "https://json-schema.org/draft/2020-12/schema", "https://json-schema.org/draft/2019-09/schema",
          "http://json-schema.org/draft-07/schema#", "http://json-schema.org/draft-06/schema#", "http://json-schema.org/draft-04/schema#"]


def python_meta_errors(schema: dict[str, Any]) -> list[Any]:
    cls, _ = jsonschemas._validator_class(schema)
    return list(jsonschemas.linear_validator_class(cls)(cls.META_SCHEMA).iter_errors(schema))


TRICKY: list[Any] = [
    {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"], "additionalProperties": False},
    {"type": "strin"}, {"type": ["integer", "integer"]}, {"required": ["a", "a"]}, {"minLength": -1}, {"minLength": 1.0},
    {"minLength": 1.5}, {"minLength": True}, {"minLength": 10**30}, {"maximum": float("nan")}, {"maximum": float("inf")},
    {"properties": {1: {}}}, {"enum": []}, {"enum": [1, 1.0, True]}, {"multipleOf": 0}, {"multipleOf": -2},
    {"pattern": "("}, {"format": "no-such-format"}, {"$ref": 5}, {"$defs": {"a": 5}}, {"items": [{}, {}]},
    {"exclusiveMinimum": True}, {"$schema": "http://json-schema.org/draft-04/schema#", "exclusiveMinimum": True},
    {"$schema": "http://json-schema.org/draft-04/schema#", "exclusiveMinimum": 3},
    {"$schema": "http://json-schema.org/draft-07/schema#", "items": [{}, 3]}, {"$schema": "https://example.com/unknown", "type": 1},
    {"dependentRequired": {"a": ["b", "b"]}}, {"propertyNames": {"maxLength": -3}}, {"$anchor": "1bad"}, {"$id": 7},
    {"$dynamicAnchor": "x y"}, {"allOf": []}, {"anyOf": {}}, {"not": None}, {"if": 3}, {"contains": {}, "minContains": -1},
    {"type": "object", "properties": {"x": {"$ref": "#/$defs/x"}}, "$defs": {"x": {"type": ["string", "nul"]}}},
]


@pytest.mark.parametrize("schema", TRICKY, ids=range(len(TRICKY)))
def test_the_compiled_meta_schema_check_gives_jsonschemas_verdict_and_errors(schema: Any) -> None:
    cls, _ = jsonschemas._validator_class(schema)
    expected = sorted(python_meta_errors(schema), key=lambda e: list(map(str, e.absolute_path)))
    got = jsonschemas._meta_errors(cls, schema)
    assert [(list(e.absolute_path), e.message) for e in got] == [(list(e.absolute_path), e.message) for e in expected]


def schemas() -> Any:
    from hypothesis import strategies as st

    scalars = st.one_of(st.none(), st.booleans(), st.integers(-3, 3), st.floats(allow_nan=False, allow_infinity=False, width=32),
                        st.sampled_from(["", "a", "integer", "string", "object", "#", "#/$defs/a", "^a$"]))
    values = st.recursive(scalars, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                           st.dictionaries(st.sampled_from(KEYWORDS + ["a", "b"]), inner, max_size=3)),
                          max_leaves=8)
    return st.builds(lambda body, draft: {**body, **({"$schema": draft} if draft else {})},
                     st.dictionaries(st.sampled_from(KEYWORDS), values, max_size=4), st.sampled_from(DRAFTS))


def test_the_compiled_meta_schema_never_accepts_what_jsonschema_rejects() -> None:
    from hypothesis import given, settings

    @settings(max_examples=150, deadline=None, database=None)
    @given(schemas())
    def agree(schema: dict[str, Any]) -> None:
        cls, _ = jsonschemas._validator_class(schema)
        assert bool(jsonschemas._meta_errors(cls, schema)) == bool(python_meta_errors(schema))

    agree()


def test_the_compiled_meta_schema_answers_where_it_can() -> None:
    pytest.importorskip("jsonschema_rs")
    fast = jsonschemas._fast_meta_validator(jsonschemas.DEFAULT_DRAFT)
    assert fast is not None and fast.is_valid(OUTPUTS) and not fast.is_valid({"type": "strin"})


# --------------------------------------------------------------------------- what `toolcatalog check` loads

def test_the_command_line_starts_without_the_page_renderer_the_diff_or_the_http_client() -> None:
    """`check` and `export` never make pages, compare catalogs or fetch a site: the command loads
    Jinja, markdown-it, nh3, catalogdiff, verify and ssl only for the commands that use them."""
    import subprocess
    import sys

    code = ("import sys, toolcatalog.cli\n"
            "print(' '.join(m for m in ('jinja2', 'markdown_it', 'nh3', 'toolcatalog.render', 'toolcatalog.markdown_pages',"
            " 'toolcatalog.catalogdiff', 'toolcatalog.verify', 'toolcatalog.sitefetch', 'ssl') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == []
