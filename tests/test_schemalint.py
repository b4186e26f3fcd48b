"""Schema lint (issue 18 item 4): mistakes people really make in `inputs`/`outputs` are warnings
with file and line, shown by `toolcatalog validate`; the demo's own `word-count` had one."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from manifests import aip_tool, write
from sitebuild import REPO, toolcatalog
from toolcatalog import schemalint
from toolcatalog.harvest import harvest
from toolcatalog.options import Options

WORD_COUNT = REPO / "examples/.agent/tools/word-count/TOOL.md"
FIXED = '    chars: {type: integer, minimum: 0, description: "Unicode code points, not bytes."}\n'
OLD = "    chars: {type: integer, minimum: 0, description: Unicode code points, not bytes.}\n"


def codes(schema: Any) -> list[tuple[str, tuple[Any, ...]]]:
    return [(f.code, f.path) for f in schemalint.lint(schema)]


def test_the_demo_word_count_mistake_is_caught_with_its_line(tmp_path: Path) -> None:
    text = WORD_COUNT.read_text(encoding="utf-8")
    assert FIXED in text  # the demo is fixed ...
    write(tmp_path / ".agent/tools/word-count/TOOL.md", text.replace(FIXED, OLD))  # ... and its old text is caught
    catalog = harvest(tmp_path, Options(run_examples=False))
    found = [d for t in catalog.tools for d in t.diagnostics if d.code.startswith("schema-")]
    line = text.splitlines().index(FIXED.rstrip("\n")) + 1
    assert [(d.code, d.path, d.line, d.severity) for d in found] == [
        ("schema-prose-keyword", ".agent/tools/word-count/TOOL.md", line, "warning")
    ]
    assert found[0].message.startswith("`outputs.properties.chars`: `not bytes.` looks like prose")
    assert "quote the description" in found[0].message
    result = toolcatalog("validate", str(tmp_path))
    assert f".agent/tools/word-count/TOOL.md:{line}: warning:" in result.stdout and "looks like prose" in result.stdout


def test_the_demo_has_no_schema_lint_findings() -> None:
    catalog = harvest(REPO / "examples", Options(run_examples=False))
    assert [d.message for t in catalog.tools for d in t.diagnostics if d.code in schemalint.CODES] == []


@pytest.mark.parametrize(
    "schema, expected",
    [
        ({"type": "object", "properties": {"a": {"type": "string", "descripton": None}}},
         [("schema-null-keyword", ("properties", "a", "descripton"))]),
        ({"type": "object", "properties": {"a": {"type": "string", "the text to echo": "x"}}},
         [("schema-prose-keyword", ("properties", "a", "the text to echo"))]),
        ({"type": "object", "required": ["a", "b"], "properties": {"a": {}}},
         [("schema-required-undeclared", ("required", 1))]),
        ({"type": "string", "enum": ["a", 1, None]}, [("schema-enum-type", ("enum", 1)), ("schema-enum-type", ("enum", 2))]),
        ({"type": "integer", "const": 1.5}, [("schema-const-type", ("const",))]),
        ({"type": "integer", "minimum": 0, "default": -1}, [("schema-default-invalid", ("default",))]),
        ({"type": "object", "properties": {"n": {"type": "integer", "examples": [3, "three"]}}},
         [("schema-example-invalid", ("properties", "n", "examples", 1))]),
        ({"oneOf": [{"type": "string", "enum": [True]}], "$defs": {"x": {"type": "boolean", "const": "yes"}}},
         [("schema-enum-type", ("oneOf", 0, "enum", 0)), ("schema-const-type", ("$defs", "x", "const"))]),
    ],
)
def test_each_mistake_has_its_code(schema: dict[str, Any], expected: list[tuple[str, tuple[Any, ...]]]) -> None:
    assert codes(schema) == expected


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "object", "required": ["a"], "properties": {"a": {"type": "number", "enum": [1, 2.5], "default": 1}}},
        {"type": "object", "required": ["x"], "properties": {}, "additionalProperties": {"type": "string"}},  # supplied by additionalProperties
        {"type": ["string", "null"], "enum": ["a", None], "examples": ["a"]},
        {"type": "integer", "enum": [1, 2.0]},  # 2.0 is an integer in JSON Schema
        {"type": "object", "properties": {"a": {"$ref": "#/$defs/a", "default": 5}}, "$defs": {"a": {"type": "string"}}},  # refers: not checked alone
        {"type": "string", "x-display name": None, "description": "Text, not bytes."},
    ],
)
def test_correct_schemas_have_no_findings(schema: dict[str, Any]) -> None:
    assert codes(schema) == []


def test_aip14_inputs_are_linted_too(tmp_path: Path) -> None:
    aip_tool(tmp_path, "lint.me", [{"name": "one", "input": {"q": "x"}}],
             inputs={"type": "object", "required": ["q", "limit"], "properties": {"q": {"type": "string"}}})
    catalog = harvest(tmp_path, Options(run_examples=False))
    tool = catalog.tool("lint.me")
    assert tool is not None
    found = [d for d in tool.diagnostics if d.code == "schema-required-undeclared"]
    assert len(found) == 1 and found[0].line is not None and "`limit`" in found[0].message


def test_hostile_schemas_are_bounded() -> None:
    deep: dict[str, Any] = {"type": "string", "bad key.": None}
    for _ in range(20_000):
        deep = {"type": "object", "properties": {"a": deep}, "descripton": None}
    found = schemalint.lint(deep)
    assert len(found) == schemalint.MAX_FINDINGS  # found, then stopped: never a RecursionError
    wide = {"type": "string", "enum": list(range(100_000))}
    assert len(schemalint.lint(wide)) == schemalint.MAX_FINDINGS
    many = {"type": "object", "properties": {f"p{i}": {"type": "integer", "default": "x", "examples": ["y"] * 1000} for i in range(5000)}}
    found = schemalint.lint(many)
    assert len(found) <= schemalint.MAX_FINDINGS
    assert sum(f.code in ("schema-default-invalid", "schema-example-invalid") for f in found) <= schemalint.MAX_VALUE_CHECKS
    # A default checked against a pattern that backtracks catastrophically in `re`: the checker's
    # matching (jsonschemas) decides it within its budget, and it does violate the pattern.
    evil = {"type": "string", "pattern": "^(a+)+$", "default": "a" * 5000 + "!"}
    assert codes(evil) == [("schema-default-invalid", ("default",))]
