"""Schemas in words (issue 19 item 2): a root `oneOf`/`anyOf`/`not` of required-sets reads as a rule,
property `examples` are shown, closed objects say "no other keys", and deep nesting folds into a
<details>. Golden fragments keep the rendering stable."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from toolcatalog import schemaview
from toolcatalog.render import Renderer

GOLDEN = Path(__file__).parent / "golden" / "schema"

EXACTLY_ONE = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "text": {"type": "string", "description": "The text itself.", "examples": ["hello", "two words"]},
        "file_ref": {"type": "string", "examples": ["docs/a.md"]},
        "options": {"type": "object", "additionalProperties": False, "properties": {"lang": {"type": "string"}},
                    "anyOf": [{"required": ["lang"]}, {"required": ["auto", "hint"]}]},
    },
    "oneOf": [{"required": ["text"]}, {"required": ["file_ref"]}],
    "not": {"required": ["text", "file_ref"]},
}


def _deep(levels: int) -> dict[str, Any]:
    node: dict[str, Any] = {"type": "string"}
    for index in reversed(range(levels)):
        node = {"type": "object", "properties": {f"level{index}": node}}
    return node


DEEP = _deep(7)
WORDS = {"exactly_one": EXACTLY_ONE, "deep": DEEP}


def render(schema: Any) -> str:
    return Renderer().env.get_template("toolcatalog/partials/schema.html").render(
        view=schemaview.build(schema, "tc-in"), schema=schema, which="inputs"
    )


def test_a_root_one_of_of_required_sets_reads_as_a_rule() -> None:
    view = schemaview.build(EXACTLY_ONE, "tc-in")
    assert [r.plain(True) for r in view.rules] == ["Exactly one of `text` or `file_ref`", "Not both `text` and `file_ref`"]
    assert view.closed
    assert [r.name for r in view.rows] == ["text", "file_ref", "options", "lang"]  # no "option 1 — any" rows
    html = render(EXACTLY_ONE)
    assert "Exactly one of <code>text</code> or <code>file_ref</code>. Not both <code>text</code> and <code>file_ref</code>. No other keys." in html
    assert "option 1" not in html and "one of:</span>" not in html


def test_nested_rules_examples_and_closed_objects() -> None:
    rows = {r.name: r for r in schemaview.build(EXACTLY_ONE, "tc-in").rows}
    assert rows["text"].examples == ["hello", "two words"]
    assert rows["options"].closed and not rows["text"].closed
    assert [r.plain() for r in rows["options"].rules] == ["at least one of `lang` or (`auto` and `hint` together)"]
    html = render(EXACTLY_ONE)
    assert 'examples: <code>&#34;hello&#34;</code>, <code>&#34;two words&#34;</code>' in html
    assert '<div class="tc-closed">no other keys</div>' in html


@pytest.mark.parametrize(
    "schema, words",
    [
        ({"anyOf": [{"required": ["a"]}, {"required": ["b"]}]}, ["at least one of `a` or `b`"]),
        ({"oneOf": [{"required": ["a"]}, {"required": ["b"]}, {"required": ["c"]}]}, ["exactly one of `a`, `b` or `c`"]),
        ({"not": {"required": ["a"]}}, ["never `a`"]),
        ({"not": {"anyOf": [{"required": ["a"]}, {"required": ["b"]}]}}, ["neither `a` nor `b`"]),
        ({"oneOf": [{"required": ["a"]}, {"type": "string"}]}, []),  # not only required-sets: shown as variants
        ({"oneOf": [{"required": []}]}, []),
    ],
)
def test_rules_in_words(schema: dict[str, Any], words: list[str]) -> None:
    assert [r.plain() for r in schemaview.rules_of(schema)] == words


def test_mixed_variants_are_still_variants() -> None:
    schema = {"type": "object", "properties": {"a": {"type": "string"}}, "oneOf": [{"required": ["a"]}, {"type": "object", "title": "other"}]}
    view = schemaview.build(schema, "tc-in")
    assert not view.rules and [r.variant for r in view.rows if r.variant] == ["one of", "one of"]


def test_deep_nesting_folds_under_its_ancestor() -> None:
    view = schemaview.build(DEEP, "tc-in")
    blocks = view.blocks()
    assert [b.name for b in blocks if isinstance(b, schemaview.Row)] == ["level0", "level1", "level2", "level3"]
    folds = [b for b in blocks if isinstance(b, schemaview.Fold)]
    assert len(folds) == 1 and folds[0].parent.name == "level3"
    assert [r.name for r in folds[0].rows] == ["level4", "level5", "level6"]
    html = render(DEEP)
    assert "<details><summary>3 more deeply nested properties under <code>level3</code></summary>" in html
    assert html.count('id="tc-in-level0-level1-level2-level3-level4"') == 1  # the anchor still exists, inside the fold


def test_hostile_rules_are_bounded() -> None:
    many = {"oneOf": [{"required": [f"p{i}"]} for i in range(10_000)]}
    assert schemaview.rules_of(many) == []  # too many to say in words: shown as (truncated) variants instead
    long = {"oneOf": [{"required": [f"p{i}" for i in range(10_000)]}]}
    assert len(schemaview.rules_of(long)[0].groups[0]) == schemaview.MAX_RULE_NAMES


@pytest.mark.parametrize("name", sorted(WORDS))
def test_rendered_fragment_matches_golden(name: str) -> None:
    html = render(WORDS[name])
    golden = GOLDEN / f"{name}.html"
    if os.environ.get("UPDATE_GOLDEN"):
        golden.write_text(html, encoding="utf-8")
    assert html == golden.read_text(encoding="utf-8")
