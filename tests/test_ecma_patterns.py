"""A schema's `pattern` means what ECMA-262 says on the slow path too (ecmapattern.py): the
`regex` package's own meanings of `$`, `.`, `\\d`, `\\w`, `\\b` and `\\s` would accept values the
compiled validator and the specification reject (`^[a-z]+$` and "abc\\n"), so a tool's example
would be judged by which validator ran. Each construct is compared with jsonschema-rs on every
code point where the two dialects could differ."""

from __future__ import annotations

import pytest

from toolcatalog import ecmapattern, jsonschemas

jsonschema_rs = pytest.importorskip("jsonschema_rs")

# Every code point up to U+0300, every space of either dialect, other scripts' digits and letters,
# and a few far ones.
POINTS = sorted({*range(0x300), 0x660, 0x663, 0x6f1, 0x966, 0xff10, 0x558, 0x58b, 0x5c8, 0x88f, 0x1680, 0x180e,
                 *range(0x2000, 0x2030), 0x205f, 0x2060, 0x3000, 0x3001, 0xfeff, 0x10000, 0x1d7ce, 0x10ffff})

CONSTRUCTS = [r"^P\sQ$", r"^P\SQ$", r"^P\dQ$", r"^P\DQ$", r"^P\wQ$", r"^P\WQ$", r"^P.Q$", r"^P[\s]Q$",
              r"^P[^\s]Q$", r"^P[\S]Q$", r"^P[\d_]Q$", r"^P[\D]Q$", r"^P[\W]Q$", r"^P[^\w-]Q$",
              r"^P[.$]Q$", r"^P\.Q$", r"^P\\\dQ$"]


def _fast(pattern: str) -> object:
    return jsonschema_rs.validator_for({"$schema": "https://json-schema.org/draft/2020-12/schema", "pattern": pattern})


@pytest.mark.parametrize("pattern", CONSTRUCTS)
def test_each_class_escape_matches_what_the_compiled_validator_matches(pattern: str) -> None:
    fast = _fast(pattern)
    differ = [hex(point) for point in POINTS
              if fast.is_valid(f"P{chr(point)}Q") != jsonschemas.search(pattern, f"P{chr(point)}Q")]  # type: ignore[attr-defined]
    assert not differ, differ


def test_a_word_boundary_is_ascii_as_the_specification_says() -> None:
    # jsonschema-rs takes \b as Unicode's boundary (its \w is ASCII); ECMA-262 builds \b on \w.
    for point in POINTS:
        char = chr(point)
        ascii_word = char.isascii() and (char.isalnum() or char == "_")
        assert jsonschemas.search(r"^P\b", f"P{char}") is (not ascii_word), hex(point)
        assert jsonschemas.search(r"^P\B", f"P{char}") is ascii_word, hex(point)


@pytest.mark.parametrize("pattern,text,matches", [
    (r"^[a-z]+$", "abc\n", False),  # `$` is the end of the text, not a final newline
    (r"^[a-z]+$", "abc", True),
    (r"^a$|^b", "b\n", True),
    (r"^\cJ$", "\n", True),  # a control escape
    (r"^[^]$", "\n", True),  # any character
    (r"^a[]", "a", False),  # no character
    (r"^[\b]$", "\x08", True),  # a backspace in a class
    (r"^\p{L}+$", "é日本", True),  # Unicode properties are left as they are
    (r"^\u0041\x42$", "AB", True),
])
def test_ecma_meanings_that_differ_from_the_regex_package(pattern: str, text: str, matches: bool) -> None:
    assert jsonschemas.search(pattern, text) is matches


def test_a_slow_path_validation_rejects_a_trailing_newline_as_jsonschema_rs_does() -> None:
    schema = {"type": "string", "pattern": "^[a-z][a-z0-9-]*$"}
    assert not _fast(schema["pattern"]).is_valid("tool-1\n")  # type: ignore[attr-defined]
    assert jsonschemas.validate(schema, "tool-1\n")
    assert not jsonschemas.validate(schema, "tool-1")


def test_escapes_and_classes_pass_through_as_written_otherwise() -> None:
    assert ecmapattern.to_regex(r"^(?:ab|c{2,3})\-x\/y\\$") == r"^(?:ab|c{2,3})\-x\/y\\\Z"
    assert ecmapattern.to_regex("[$.]") == "[$.]"
