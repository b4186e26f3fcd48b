"""speccify `TOOL.md` (`.agent/tools/<name>/TOOL.md`), by the reference tool's rules.

Front matter: `name`, `description`, `inputs`, `outputs` required; `effects`,
`requires`, `runtime`, `platforms` optional; other keys kept and reported.
Examples: the first `## Examples` section, `### title` cases, and one-line
`input:`/`output:` JSON where the last occurrence in a case wins. Code fences
are not respected, exactly like the reference parser.

The reference grammar is three MULTILINE regular expressions (kept below as
`REFERENCE_*`, for the tests); Python's `re` takes quadratic time on some inputs
to them (blank lines after `input:`, long runs of spaces inside a line) and
cannot be interrupted, so `line_matches` finds exactly the same matches in
linear time instead.
"""

from __future__ import annotations

import bisect
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

from .. import jsonvalues
from ..formatregistry import SPECCIFY
from ..frontmatter import Manifest
from ..model import DETERMINISTIC, Diagnostic, Effects, Example, Requirement, Tool
from . import common

NAME = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
KNOWN_FIELDS = ("name", "description", "inputs", "outputs", "effects", "requires", "runtime", "platforms")
PLATFORMS = ("macos", "linux", "windows")

REFERENCE_SECTION = re.compile(r"^##\s+(?P<title>.+?)\s*$", re.MULTILINE)
REFERENCE_CASE = re.compile(r"^###\s+(?P<title>.+?)\s*$", re.MULTILINE)
REFERENCE_CASE_LINE = re.compile(r"^\s*(?P<kind>input|output):\s*(?P<json>.+?)\s*$", re.MULTILINE)


_SPACE = re.compile(r"\s*")  # one run of whitespace: linear, and as `\s` reads it


@dataclass(frozen=True)
class LineMatch:
    """One match of a reference pattern: where it starts and ends, where its keyword starts, the
    keyword (`##`, `###`, `input:`, `output:`) and the value (`title`, `json`)."""

    start: int
    end: int
    head_start: int
    head: str
    value: str


def _space_end(text: str, pos: int) -> int:
    """Where the run of whitespace at `pos` ends (`_SPACE` always matches, maybe empty)."""
    match = _SPACE.match(text, pos)
    return match.end() if match is not None else pos


def line_matches(text: str, heads: tuple[str, ...], indent: bool, gap: int) -> Iterator[LineMatch]:
    r"""Every match, in order and without overlap, of `^HEAD\s+(?P<v>.+?)\s*$` (`gap` 1) or, with
    `indent`, `^\s*HEAD\s*(?P<v>.+?)\s*$` (`gap` 0), MULTILINE, as `re.finditer` finds them, in
    linear time. `\s` spans newlines in those patterns, so the value can start on a later line;
    when only whitespace follows the keyword to the end of `text`, the regex backtracks into it and
    the value is its last character that is not a newline (tests compare both on random texts)."""
    n = len(text)
    pos = 0
    while pos <= n:
        if pos > 0 and text[pos - 1] != "\n":  # not a line start: go to the next one
            newline = text.find("\n", pos)
            if newline < 0:
                return
            pos = newline + 1
            continue
        head_start = _space_end(text, pos) if indent else pos
        head = next((h for h in heads if text.startswith(h, head_start)), None)
        after = value_start = head_start + len(head) if head else head_start
        if head is not None:
            value_start = _space_end(text, after)
        if head is None or value_start - after < gap:
            # Every line start up to `head_start` leads to this same failure: resume after it (at
            # the next line that starts like a head, when no indent may come first).
            newline = text.find("\n" if indent else "\n" + heads[0][0], head_start)
            if newline < 0:
                return
            pos = newline + 1
            continue
        if value_start < n:
            line_end = text.find("\n", value_start)
            value = text[value_start : n if line_end < 0 else line_end].rstrip()
            # The trailing `\s*$` is greedy: the match ends at the end of the text when only
            # whitespace follows, else before the last newline of the whitespace that follows.
            value_end = value_start + len(value)
            rest = _space_end(text, value_end)
            end = n if rest == n else text.rfind("\n", value_end, rest)
            yield LineMatch(pos, end, head_start, head, value)
            pos = end
            continue
        # Only whitespace to the end: the value is the last character of it that is not a newline.
        last = len(text.rstrip("\n")) - 1
        if last >= after + gap:
            yield LineMatch(pos, n, head_start, head, text[last])
        return


def _sections(text: str) -> list[LineMatch]:
    return list(line_matches(text, ("##",), indent=False, gap=1))


def _cases(text: str) -> list[LineMatch]:
    return list(line_matches(text, ("###",), indent=False, gap=1))


def _case_lines(text: str) -> list[LineMatch]:
    return list(line_matches(text, ("input:", "output:"), indent=True, gap=0))


def parse(path: Path, source: str, max_bytes: int, manifest: Manifest | None = None, diagnostics: list[Diagnostic] | None = None, read: bool = True) -> Tool:
    """Parse one TOOL.md; pass `manifest` (and the diagnostics reading it produced) when already read."""
    tool = Tool(id=path.parent.name, name=path.parent.name, format=SPECCIFY.id, source=source, abs_path=path)
    tool.kind = DETERMINISTIC  # by the format's definition: a program, no model
    tool.diagnostics.extend(diagnostics or [])
    sink = common.Sink(source, tool.diagnostics)
    if manifest is None and read:
        manifest = common.read_manifest(path, sink, max_bytes)
    if manifest is None:
        return tool
    data = manifest.data
    tool.fields = data
    tool.body, tool.body_line = manifest.body, manifest.body_line
    shown = without_examples_section(tool.body)  # its examples are shown structured instead
    tool.page_body = shown if shown != tool.body else None
    tool.lines = common.contract_lines(manifest)

    _name(tool, manifest, sink, path)
    _description(tool, manifest, sink)
    usable = _schemas(tool, manifest, sink)
    _effects(tool, manifest, sink)
    _unknown_fields(tool, manifest, sink)

    tool.examples = parse_examples(tool.body, tool.body_line, sink)
    checkers = common.schema_checkers(tool, usable)
    for example in tool.examples:
        if example.has_input and example.has_output:
            common.check_example(sink, example, *checkers, f"example {example.title!r}")
    return tool


def _name(tool: Tool, manifest: Manifest, sink: common.Sink, path: Path) -> None:
    data = manifest.data
    name = data.get("name")
    if name is None:
        sink.error("missing required field `name`", 2, "required")
    elif not isinstance(name, str):
        common.schema_type_error(sink, manifest, "name", name)
    else:
        tool.id = tool.name = name
        line = tool.id_line = manifest.line(("name",))
        if len(name) > 64:
            sink.error(f"`name` is {len(name)} characters long; at most 64 are allowed", line, "name")
        if not NAME.match(name):
            sink.error(
                f"`name` {name!r} must be lowercase letters and digits in hyphen-separated words "
                "(pattern ^[a-z0-9]+(-[a-z0-9]+)*$)",
                line,
                "name",
            )
        elif name != path.parent.name:
            sink.warning(f"`name` {name!r} differs from the folder name {path.parent.name!r}", line, "name-folder")


def _description(tool: Tool, manifest: Manifest, sink: common.Sink) -> None:
    data = manifest.data
    description = data.get("description")
    if description is None:
        sink.error("missing required field `description`", 2, "required")
    elif not isinstance(description, str):
        common.schema_type_error(sink, manifest, "description", description)
    else:
        tool.description = description.strip()
        if not tool.description:
            sink.error("`description` is empty", manifest.line(("description",)), "description")
        elif len(tool.description) > 1024:
            sink.error(
                f"`description` is {len(tool.description)} characters long; at most 1024 are allowed",
                manifest.line(("description",)),
                "description",
            )


def _schemas(tool: Tool, manifest: Manifest, sink: common.Sink) -> dict[str, bool]:
    data = manifest.data
    usable: dict[str, bool] = {}
    for key in ("inputs", "outputs"):
        value = data.get(key)
        setattr(tool, key, value)
        if value is None:
            sink.error(f"missing required field `{key}` (a JSON Schema)", 2, "required")
            usable[key] = False
        elif not isinstance(value, dict):
            sink.error(f"`{key}` must be a JSON Schema mapping", manifest.line((key,)), "io-schema")
            usable[key] = False
        else:
            usable[key] = common.check_io_schema(sink, manifest, key, value)
    tool.schema_ok = usable
    return usable


def _effects(tool: Tool, manifest: Manifest, sink: common.Sink) -> None:
    data = manifest.data
    effects = data.get("effects")
    if effects is not None and not isinstance(effects, str):
        sink.error("`effects` must be one line of text", manifest.line(("effects",)), "field-type")
        effects = None
    if "effects" not in data:
        sink.warning("no `effects` line: reviewers cannot see what the tool changes", 2, "effects-missing")
    requires = common.string_list(sink, manifest, "requires", data.get("requires"))
    runtime = common.string_list(sink, manifest, "runtime", data.get("runtime"))
    tool.platforms = common.string_list(sink, manifest, "platforms", data.get("platforms"))
    for platform in tool.platforms:
        if platform not in PLATFORMS:
            sink.warning(
                f"`platforms` entry {platform!r} is not one of {', '.join(PLATFORMS)}; no implementation can match it",
                manifest.line(("platforms",)),
                "platforms",
            )
    tool.effects = Effects(
        text=effects.strip() if isinstance(effects, str) else None,
        requires=[Requirement("binary", r) for r in requires] + [Requirement("runtime", r) for r in runtime],
    )


def _unknown_fields(tool: Tool, manifest: Manifest, sink: common.Sink) -> None:
    data = manifest.data
    for key in data:
        if key not in KNOWN_FIELDS:
            tool.extra[key] = data[key]
            sink.warning(f"unknown field `{key}` is kept but not part of the speccify format", manifest.line((key,)), "unknown-field")


def implementation_files(folder: Path) -> list[str]:
    """`<platform>.<ext>` files beside the TOOL.md, sorted (the reference picks the first)."""
    try:
        names = sorted(p.name for p in folder.iterdir() if p.is_file())
    except OSError:
        return []
    return [n for n in names if Path(n).stem in PLATFORMS and Path(n).suffix]


def parse_examples(body: str, body_line: int, sink: common.Sink) -> list[Example]:
    """Cases of the first `## Examples` section, by the reference grammar."""
    sections = _sections(body)
    start = end = None
    for index, match in enumerate(sections):
        if match.value.strip().lower() == "examples":
            start = match.end
            end = sections[index + 1].start if index + 1 < len(sections) else len(body)
            break
    if start is None:
        sink.warning("no `## Examples` section: nothing shows how to call the tool or can be checked", None, "no-examples")
        return []
    text = body[start:end]

    newlines = [match.start() for match in re.finditer("\n", body)]

    def line_at(offset: int) -> int:
        # bisect, not body.count(): counting from 0 for every case is quadratic on big manifests
        return body_line + bisect.bisect_left(newlines, start + offset)

    cases = _cases(text)
    if not cases:
        sink.warning("the `## Examples` section has no `### title` cases", line_at(0), "no-examples")
    examples: list[Example] = []
    titles: dict[str, int] = {}
    for index, case in enumerate(cases):
        title = case.value
        case_line = line_at(case.start)
        case_text = text[case.end : cases[index + 1].start if index + 1 < len(cases) else len(text)]
        example = Example(title=title, line=case_line)
        if title in titles:
            sink.warning(f"example {title!r} has the same title as the one on line {titles[title]}", case_line, "example-title")
        titles.setdefault(title, case_line)
        found: dict[str, list[LineMatch]] = {"input": [], "output": []}
        for match in _case_lines(case_text):
            found[match.head[:-1]].append(match)
        for kind in ("input", "output"):
            matches = found[kind]
            if not matches:
                sink.error(f"example {title!r} has no `{kind}:` line", case_line, "example-incomplete")
                continue
            last = matches[-1]
            line = line_at(case.end + last.head_start)
            if len(matches) > 1:
                sink.warning(
                    f"example {title!r} has {len(matches)} `{kind}:` lines; only the last (line {line}) counts",
                    line,
                    "example-repeated-line",
                )
            try:
                value: Any = jsonvalues.loads_strict(last.value)
            except json.JSONDecodeError as exc:
                sink.error(f"example {title!r}: `{kind}:` is not valid JSON ({exc.msg} at column {exc.colno})", line, "example-json")
                continue
            except jsonvalues.TooDeepError as exc:
                sink.error(f"example {title!r}: `{kind}:` is refused: {exc}", line, "example-json")
                continue
            except ValueError as exc:  # NaN/Infinity, or an integer too long for Python to convert
                sink.error(f"example {title!r}: `{kind}:` is not valid JSON ({exc})", line, "example-json")
                continue
            setattr(example, kind, value)
        examples.append(example)
    return examples


def without_examples_section(body: str) -> str:
    """speccify bodies: the `## Examples` section is shown as structured examples instead."""
    sections = _sections(body)
    for index, match in enumerate(sections):
        if match.value.strip().lower() == "examples":
            end = sections[index + 1].start if index + 1 < len(sections) else len(body)
            return body[: match.start] + body[end:]
    return body
