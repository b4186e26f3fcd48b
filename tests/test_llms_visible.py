"""llms.txt writes each invisible character (Unicode's "Other" categories) as `\\uXXXX`; a line with
none of them (`str.isprintable`) is written as it is, without looking at each character."""

from __future__ import annotations

import sys
import unicodedata

from toolcatalog.outputs import llms

HIDDEN = ("Cc", "Cf", "Cs", "Co", "Cn")


def test_a_printable_line_holds_no_hidden_character() -> None:
    """The shortcut's premise, for every code point: printable means no "Other" category."""
    assert [hex(cp) for cp in range(sys.maxunicode + 1)
            if chr(cp).isprintable() and unicodedata.category(chr(cp)) in HIDDEN] == []


def test_code_points_are_written_by_the_category_rule() -> None:
    wrong = []
    for cp in [*range(0x3000), *range(0xD7F0, 0xE010), *range(0xFFF0, 0x10010), *range(0xE0000, 0xE0100), 0x10FFFF]:
        ch = chr(cp)
        if ch.isspace():
            continue  # folded into single spaces first
        expected = f"a\\u{cp:04x}b" if unicodedata.category(ch) in HIDDEN else f"a{ch}b"
        if llms._visible(f"a{ch}b") != expected:
            wrong.append(hex(cp))
    assert wrong == []


def test_lines_are_folded_and_hidden_characters_shown() -> None:
    assert llms._visible("  two\n words\t") == "two words"
    assert llms._visible("left\u202eright\u200b") == "left\\u202eright\\u200b"
    assert llms._visible("plain ASCII, é and 漢字") == "plain ASCII, é and 漢字"
