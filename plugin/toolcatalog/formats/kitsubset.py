"""Where the smart-tools conformance kit's own front-matter reader parts from YAML.

The kit (`conformance/run.py`) does not use a YAML library: it reads a subset, line by line, by
indentation. Top-level `key: value` lines; `key: >`, `|`, `>-`, `|-` blocks; a block list
indented under its key, of one-line scalars or of mappings whose first key follows the `- `.
Blank lines and whole-line `#` comments are dropped first, and the first line whose stripped
text is `---` closes the front matter. Anything else deeper-indented than the reader expects,
or a line without `:` where it wants a key, fails `manifest-frontmatter-parses`, and the kit then
skips the five rules that read fields. Flow style (`[a, b]`, `{k: v}`) is read as a plain
string, so `requires: []` is "not a list" to it.

We read manifests as YAML 1.2 and keep our own verdicts; this module only finds the first line
where the kit's reader will fail (or misread), to warn the author whose CI runs the kit. Written
from the behaviour described in the reference notes and observed on the kit's fixtures; it
mirrors the reader's decisions, not its code.
"""

from __future__ import annotations

from dataclasses import dataclass

_BLOCK = (">", "|", ">-", "|-")


@dataclass(frozen=True)
class KitProblem:
    """The first place the kit's reader parts from YAML: `line` in the file, what is there, the fix.
    `fails`: the kit FAILs `manifest-frontmatter-parses` (else it misreads a value)."""

    line: int
    construct: str
    fix: str
    fails: bool = True


class _Stop(Exception):
    def __init__(self, problem: KitProblem):
        super().__init__(problem.construct)
        self.problem = problem


def _indent(text: str) -> int:
    return len(text) - len(text.lstrip(" "))


def _is_item(text: str) -> bool:
    return text.strip().startswith("- ")


def _flow(value: str) -> bool:
    return value[:1] in ("[", "{")


class _Reader:
    def __init__(self, lines: list[tuple[int, str]]):
        self.lines = lines
        self.pos = 0
        self.misread: KitProblem | None = None  # the first value the kit reads differently

    def peek(self) -> tuple[int, str] | None:
        return self.lines[self.pos] if self.pos < len(self.lines) else None

    def note_flow(self, line: int, key: str, value: str) -> None:
        if self.misread is None and _flow(value):
            effect = "the kit reads it as a string"
            fix = "write it as a block list, one `- item` per line indented under the key"
            if key == "requires":
                effect += " and fails `manifest-requires-shape`: not a list"
                if value.replace(" ", "") == "[]":
                    fix = "leave `requires` out when there are none"
            self.misread = KitProblem(line, f"the flow-style value `{key}: {value}` ({effect})", fix, fails=False)

    def deeper(self, line: int, after: str) -> _Stop:
        fixes = {
            "value": ("a value continued on the next line",
                      "put the value on one line, or use a `>` block (`key: >` with the text indented below)"),
            "item": ("a list item continued on the next line", "put each `- item` on one line"),
            "block-item": ("a `- >-` (or `- |`) block as a list item", "put each `- item` on one line (quote it if needed)"),
            "nested": ("a list nested inside a list entry", "keep list entries to `key: value` lines"),
        }
        construct, fix = fixes[after]
        return _Stop(KitProblem(line, construct, fix))

    def mapping(self, indent: int, after: str = "value") -> None:
        while (current := self.peek()) is not None:
            line, text = current
            if _indent(text) < indent:
                return
            if _indent(text) > indent:
                raise self.deeper(line, after)
            content = text.strip()
            if _is_item(text):
                raise _Stop(KitProblem(line, "a list item at the indentation of its key",
                                       "indent the `- ` items (two spaces) under their key"))
            if ":" not in content:
                raise _Stop(KitProblem(line, f"the line `{content[:40]}` where a `key: value` line is expected",
                                       "write each field as `key: value`"))
            key, _, rest = content.partition(":")
            key, rest = key.strip(), rest.strip()
            self.pos += 1
            after = "value"
            if rest in _BLOCK:
                self.block(indent)
            elif rest == "":
                nxt = self.peek()
                if nxt is not None and _indent(nxt[1]) > indent:
                    if _is_item(nxt[1]):
                        after = self.sequence(_indent(nxt[1]))
                    else:
                        self.mapping(_indent(nxt[1]))
            else:
                self.note_flow(line, key, rest)

    def block(self, indent: int) -> None:
        while (current := self.peek()) is not None and _indent(current[1]) > indent:
            self.pos += 1

    def sequence(self, indent: int) -> str:
        """Items at `indent`; returns what a deeper line after them would be continuing."""
        after = "item"
        while (current := self.peek()) is not None:
            line, text = current
            if _indent(text) != indent or not _is_item(text):
                break
            body = text.strip()[2:]
            self.pos += 1
            if ":" in body and body[0] not in ("'", '"'):
                self.entry(indent + 2, line, body)
                after = "nested"
            else:
                after = "block-item" if body.strip() in _BLOCK or body.strip()[:1] in (">", "|") else "item"
                if _flow(body.strip()) and self.misread is None:
                    self.misread = KitProblem(line, f"the flow-style list item `- {body.strip()}` (the kit reads it as a string)",
                                              "write nested lists in block style", fails=False)
        return after

    def entry(self, indent: int, first_line: int, first: str) -> None:
        """The rest of a list entry that is a mapping: lines at `indent` or deeper, none a `- ` item."""
        key, _, rest = first.partition(":")
        first_block = rest.strip() in _BLOCK
        while (current := self.peek()) is not None and _indent(current[1]) >= indent and not _is_item(current[1]):
            line, text = current
            content = text.strip()
            if ":" not in content:
                if first_block:
                    raise _Stop(KitProblem(first_line, f"a `{rest.strip()}` block as the first key (`{key.strip()}`) of a list entry",
                                           "put that key on its own line below the `- `, or its value on one line"))
                raise _Stop(KitProblem(line, "a value continued on the next line inside a list entry",
                                       "put the value on one line, or use a `>` block"))
            _k, _, value = content.partition(":")
            self.pos += 1
            if value.strip() in _BLOCK:
                self.block(_indent(text))


def check(yaml_text: str, first_line: int = 2) -> KitProblem | None:
    """The first place the kit's reader fails on (or misreads) front matter `yaml_text`, whose
    first line is line `first_line` of the file; None when it reads it as YAML does."""
    raw = yaml_text.split("\n")
    lines: list[tuple[int, str]] = []
    for number, text in enumerate(raw, start=first_line):
        text = text.rstrip("\r")
        if text.strip() == "---":
            return KitProblem(number, "a `---` line inside the front matter (the kit's front matter ends there, "
                              "so it does not see the fields after it)", "remove the line", fails=False)
        if text.strip() and not text.lstrip().startswith("#"):
            lines.append((number, text))
    if not lines:
        return None
    if lines[0][1].strip().startswith("{"):
        return KitProblem(lines[0][0], "JSON front matter", "write the fields as YAML `key: value` lines, one per line")
    reader = _Reader(lines)
    try:
        reader.mapping(_indent(lines[0][1]))
    except _Stop as stop:
        return stop.problem
    except RecursionError:  # nesting the YAML reader's depth cap let through; nothing to say about it
        return None
    return reader.misread


def message(problem: KitProblem) -> str:
    """The warning an author reads: what the kit will do, the construct, the fix."""
    if problem.fails:
        effect = ("the smart-tools conformance kit's front-matter reader cannot parse this valid YAML: it fails "
                  "`manifest-frontmatter-parses` and skips the five rules that read fields")
    else:
        effect = "the smart-tools conformance kit's front-matter reader reads this valid YAML differently"
    return f"{effect}: {problem.construct}; {problem.fix}"
