"""JSON Schema's regular expressions (ECMA-262) rewritten for the `regex` package, meaning what
they mean in ECMA-262.

A schema's `pattern` is ECMA-262's dialect. The `regex` package reads the same text with other
meanings: its `$` also matches before a final newline (`^[a-z]+$` would accept "abc\\n"), its `.`
matches a carriage return and U+2028/U+2029, its `\\d`, `\\w` and `\\b` take in every script's
digits and letters, and its `\\s` counts U+0085 as a space. ECMA-262 gives those escapes their
ASCII meaning (a pattern without the `u` flag, as JSON Schema's are) and its own set of spaces.
`to_regex` rewrites each of those, outside and inside character classes, so that the slow path
(jsonschema with `regex`) decides as the compiled validator (jsonschema-rs) does, and as the
specification says: one verdict whichever validator ran.

Only those meanings are rewritten; everything else is passed on as written, and a pattern
`regex` cannot compile is still reported as one (see jsonschemas.problems). Where jsonschema-rs
departs from the specification, `\\b` and `\\B` (a Unicode word boundary there, though its `\\w`
is ASCII), this follows the specification; none of the bundled schemas uses them.
"""

from __future__ import annotations

__all__ = ["to_regex"]

# ECMA-262's WhiteSpace and LineTerminator: the Zs spaces, tab to carriage return, U+2028/U+2029
# and U+FEFF; not U+0085 (which the `regex` package counts).
_SPACES = r"\t-\r \xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
_NOT_SPACES = (r"\x00-\x08\x0e-\x1f\x21-\x9f\xa1-\u167f\u1681-\u1fff\u200b-\u2027\u202a-\u202e"
               r"\u2030-\u205e\u2060-\u2fff\u3001-\ufefe\uff00-\U0010ffff")
_WORD = r"A-Za-z0-9_"
_NOT_WORD = r"\x00-\x2f\x3a-\x40\x5b-\x5e\x60\x7b-\U0010ffff"
_DIGITS = r"0-9"
_NOT_DIGITS = r"\x00-\x2f\x3a-\U0010ffff"

# What each class escape stands for inside a character class (a list of ranges) ...
_IN_CLASS = {"s": _SPACES, "S": _NOT_SPACES, "w": _WORD, "W": _NOT_WORD, "d": _DIGITS, "D": _NOT_DIGITS}
# ... and outside one.
_OUTSIDE = {
    **{letter: f"[{ranges}]" for letter, ranges in _IN_CLASS.items()},
    "b": rf"(?:(?<=[{_WORD}])(?![{_WORD}])|(?<![{_WORD}])(?=[{_WORD}]))",
    "B": rf"(?:(?<=[{_WORD}])(?=[{_WORD}])|(?<![{_WORD}])(?![{_WORD}]))",
}
_ANY_BUT_LINE_ENDS = r"[^\n\r\u2028\u2029]"
_END = r"\Z"  # the end of the text only (the `regex` package's `$` also matches before a final "\n")


def to_regex(pattern: str) -> str:
    """`pattern` (ECMA-262) as a `regex` pattern that matches the same texts (rewritten once per
    pattern: `jsonschemas.compile_pattern` keeps what it compiled, and forgets it with the catalog)."""
    out: list[str] = []
    i, n = 0, len(pattern)
    in_class = False
    while i < n:
        char = pattern[i]
        if char == "\\" and i + 1 < n:
            i = _escape(pattern, i, in_class, out)
            continue
        if in_class:
            if char == "]":
                in_class = False
            out.append(char)
        elif char == "[":
            i, in_class = _class_start(pattern, i, out)
            continue
        elif char == ".":
            out.append(_ANY_BUT_LINE_ENDS)
        elif char == "$":
            out.append(_END)
        else:
            out.append(char)
        i += 1
    return "".join(out)


def _escape(pattern: str, i: int, in_class: bool, out: list[str]) -> int:
    """Append the rewriting of the escape at `i`; return the index after it."""
    letter = pattern[i + 1]
    if letter == "c" and i + 2 < len(pattern) and pattern[i + 2].isascii() and pattern[i + 2].isalpha():
        out.append(f"\\x{ord(pattern[i + 2]) % 32:02x}")  # a control character: \cJ is "\n"
        return i + 3
    if in_class and letter == "b":
        out.append(r"\x08")  # [\b] is a backspace
    elif in_class and letter in _IN_CLASS:
        out.append(_IN_CLASS[letter])
    elif not in_class and letter in _OUTSIDE:
        out.append(_OUTSIDE[letter])
    else:
        out.append(pattern[i : i + 2])
    return i + 2


def _class_start(pattern: str, i: int, out: list[str]) -> tuple[int, bool]:
    """Append the start of the character class at `i`; return the index after what was taken and
    whether a class is now open. ECMA-262 ends a class at a `]` right after `[` or `[^` (`[]`
    matches nothing, `[^]` any character), where `regex` would take the `]` as a member."""
    negated = pattern.startswith("[^", i)
    after = i + (2 if negated else 1)
    if pattern.startswith("]", after):
        out.append(r"(?:[\s\S])" if negated else r"(?!)")
        return after + 1, False
    out.append("[^" if negated else "[")
    return after, True
