"""Schema tables: rows for tricky schemas, and golden HTML fragments of the rendered table."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from toolcatalog import schemaview
from toolcatalog.render import Renderer

GOLDEN = Path(__file__).parent / "golden" / "schema"

TREE = {
    "$defs": {
        "node": {
            "type": "object",
            "description": "A tree node.",
            "required": ["value"],
            "properties": {
                "value": {"type": "integer", "minimum": 0},
                "children": {"type": "array", "items": {"$ref": "#/$defs/node"}},
            },
        }
    },
    "type": "object",
    "required": ["root"],
    "properties": {"root": {"$ref": "#/$defs/node"}},
}

ALL_OF = {
    "type": "object",
    "$defs": {"named": {"type": "object", "required": ["name"], "properties": {"name": {"type": "string", "maxLength": 40}}}},
    "properties": {
        "user": {
            "description": "Who asks.",
            "allOf": [
                {"$ref": "#/$defs/named"},
                {"properties": {"email": {"type": "string", "format": "email"}}, "required": ["email"]},
            ],
        }
    },
}

ONE_OF = {
    "type": "object",
    "properties": {
        "shape": {
            "oneOf": [
                {"title": "circle", "type": "object", "required": ["r"], "properties": {"r": {"type": "number", "exclusiveMinimum": 0}}},
                {"title": "box", "type": "object", "properties": {"size": {"type": "object", "properties": {"w": {"type": "number"}, "h": {"type": "number"}}}}},
            ]
        },
        "mode": {"type": "string", "enum": ["fast", "safe"], "default": "safe"},
        "version": {"const": 2},
        "tags": {"type": "array", "items": {"type": "string", "pattern": "^[a-z]+$"}, "uniqueItems": True},
    },
}

DEFS_CHAIN = {
    "$ref": "#/$defs/a",
    "$defs": {
        "a": {"$ref": "#/$defs/b"},
        "b": {"type": "object", "properties": {"next": {"$ref": "#/$defs/a"}, "ext": {"$ref": "https://example.invalid/x.json"}}},
    },
}

SCHEMAS = {"recursive": TREE, "all_of": ALL_OF, "one_of": ONE_OF, "defs_chain": DEFS_CHAIN}


def rows(schema: Any) -> list[tuple]:
    return [(r.depth, r.name, r.type, r.required, r.link) for r in schemaview.build(schema, "tc-in").rows]


def test_recursive_reference_links_back_instead_of_looping() -> None:
    assert rows(TREE) == [
        (0, "root", "object", True, None),
        (1, "value", "integer", True, None),
        (1, "children", "array of node", False, None),
        (2, "[ ]", "node", False, "tc-in-root"),
    ]


def test_all_of_is_merged_with_required_from_every_member() -> None:
    assert rows(ALL_OF) == [
        (0, "user", "object", False, None),
        (1, "name", "string", True, None),
        (1, "email", "string", True, None),
    ]
    view = schemaview.build(ALL_OF, "tc-in")
    assert view.rows[0].description == "Who asks."
    assert view.rows[1].constraints == ["length ≤ 40"]
    assert view.rows[2].constraints == ["format email"]


def test_one_of_variants_enums_consts_and_arrays() -> None:
    view = schemaview.build(ONE_OF, "tc-in")
    named = {r.anchor: r for r in view.rows}
    assert [r.variant for r in view.rows if r.variant] == ["one of", "one of"]
    assert named["tc-in-shape-oneOf-2-size-w"].depth == 3
    assert named["tc-in-mode"].enum == ["fast", "safe"] and named["tc-in-mode"].default_json() == '"safe"'
    assert named["tc-in-version"].const_json() == "2"
    assert named["tc-in-tags"].type == "array of string"
    assert "unique items" in named["tc-in-tags"].constraints


def test_defs_chain_and_external_reference() -> None:
    view = schemaview.build(DEFS_CHAIN, "tc-out")
    assert [(r.name, r.type, r.link, r.external) for r in view.rows] == [
        ("next", "a", "tc-out", None),
        ("ext", "reference", None, "https://example.invalid/x.json"),
    ]


def test_hostile_schemas_are_bounded() -> None:
    endless = schemaview.build({"$defs": {"a": {"$ref": "#/$defs/a"}}, "$ref": "#/$defs/a"}, "x")
    assert len(endless.rows) <= 2
    deep: dict[str, Any] = {"type": "object", "properties": {}}
    node = deep
    for _ in range(200):
        node["properties"]["p"] = {"type": "object", "properties": {}}
        node = node["properties"]["p"]
    view = schemaview.build(deep, "x")
    assert view.truncated and len(view.rows) <= schemaview.MAX_DEPTH + 2
    wide = {"type": "object", "properties": {f"p{i}": {"type": "object", "properties": {f"q{j}": {} for j in range(100)}} for i in range(100)}}
    view = schemaview.build(wide, "x")
    assert view.truncated and len(view.rows) == schemaview.MAX_ROWS
    assert len({r.anchor for r in view.rows}) == len(view.rows)  # every anchor unique


@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_rendered_fragment_matches_golden(name: str) -> None:
    renderer = Renderer()
    html = renderer.env.get_template("toolcatalog/partials/schema.html").render(
        view=schemaview.build(SCHEMAS[name], "tc-in"), schema=SCHEMAS[name], which="inputs"
    )
    golden = GOLDEN / f"{name}.html"
    if os.environ.get("UPDATE_GOLDEN"):
        golden.parent.mkdir(parents=True, exist_ok=True)
        golden.write_text(html, encoding="utf-8")
    assert html == golden.read_text(encoding="utf-8")


def test_descriptions_are_sanitized_markdown() -> None:
    schema = {"type": "object", "properties": {"x": {"type": "string", "description": "Use **bold** <script>alert(1)</script> [a](javascript:alert(1)) <img src=x onerror=alert(1)>"}}}
    html = Renderer().env.get_template("toolcatalog/partials/schema.html").render(
        view=schemaview.build(schema, "tc-in"), schema=schema, which="inputs"
    )
    assert "<strong>bold</strong>" in html
    assert "<script>" not in html and "onerror" not in html.replace("onerror=alert(1)&gt;", "")
    assert 'href="javascript:' not in html
    assert "&lt;script&gt;" in html  # the raw schema below the table is shown escaped


def test_raw_html_in_manifest_markdown_is_shown_as_text() -> None:
    from toolcatalog.render import markdown_html

    html = str(markdown_html("Posts look like <script>alert(1)</script> or <img src=x onerror=alert(1)>, see `<b>` and **this**."))
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "&lt;img src=x onerror=alert(1)&gt;" in html
    assert "<code>&lt;b&gt;</code>" in html and "<strong>this</strong>" in html
    assert "<script" not in html and "<img" not in html
