"""speccify `TOOL.md` (`.agent/tools/<name>/TOOL.md`), by the reference tool's rules.

Front matter: `name`, `description`, `inputs`, `outputs` required; `effects`,
`requires`, `runtime`, `platforms` optional; other keys kept and reported.
Examples: the first `## Examples` section, `### title` cases, and one-line
`input:`/`output:` JSON where the last occurrence in a case wins. Code fences
are not respected, exactly like the reference parser.
"""

from __future__ import annotations

import bisect
import json
import re
from pathlib import Path
from typing import Any

from .. import jsonvalues
from ..frontmatter import Manifest
from ..model import DETERMINISTIC, Effects, Example, Requirement, Tool
from . import common

NAME = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
KNOWN_FIELDS = ("name", "description", "inputs", "outputs", "effects", "requires", "runtime", "platforms")
PLATFORMS = ("macos", "linux", "windows")

_SECTION = re.compile(r"^##\s+(?P<title>.+?)\s*$", re.MULTILINE)
_CASE = re.compile(r"^###\s+(?P<title>.+?)\s*$", re.MULTILINE)
_CASE_LINE = re.compile(r"^\s*(?P<kind>input|output):\s*(?P<json>.+?)\s*$", re.MULTILINE)


def parse(path: Path, source: str, max_bytes: int, manifest: Manifest | None = None, diagnostics: list | None = None, read: bool = True) -> Tool:
    """Parse one TOOL.md; pass `manifest` (and the diagnostics reading it produced) when already read."""
    tool = Tool(id=path.parent.name, name=path.parent.name, format="speccify", source=source, abs_path=path)
    tool.kind = DETERMINISTIC  # by the format's definition: a program, no model
    tool.implementations = implementation_files(path.parent)
    tool.diagnostics.extend(diagnostics or [])
    sink = common.Sink(source, tool.diagnostics)
    if manifest is None and read:
        manifest = common.read_manifest(path, sink, max_bytes)
    if manifest is None:
        return tool
    data = manifest.data
    tool.fields = data
    tool.body, tool.body_line = manifest.body, manifest.body_line

    name = data.get("name")
    if name is None:
        sink.error("missing required field `name`", 2, "required")
    elif not isinstance(name, str):
        common.schema_type_error(sink, manifest, "name", name)
    else:
        tool.id = tool.name = name
        line = manifest.line(("name",))
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

    usable = {}
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

    for key in data:
        if key not in KNOWN_FIELDS:
            tool.extra[key] = data[key]
            sink.warning(f"unknown field `{key}` is kept but not part of the speccify format", manifest.line((key,)), "unknown-field")

    tool.examples = parse_examples(tool.body, tool.body_line, sink)
    for example in tool.examples:
        if example.has_input and example.has_output:
            common.check_example(
                sink, example, tool.inputs, tool.outputs, usable["inputs"], usable["outputs"], f"example {example.title!r}"
            )
    return tool


def implementation_files(folder: Path) -> list[str]:
    """`<platform>.<ext>` files beside the TOOL.md, sorted (the reference picks the first)."""
    try:
        names = sorted(p.name for p in folder.iterdir() if p.is_file())
    except OSError:
        return []
    return [n for n in names if Path(n).stem in PLATFORMS and Path(n).suffix]


def parse_examples(body: str, body_line: int, sink: common.Sink) -> list[Example]:
    """Cases of the first `## Examples` section, by the reference grammar."""
    sections = list(_SECTION.finditer(body))
    start = end = None
    for index, match in enumerate(sections):
        if match.group("title").strip().lower() == "examples":
            start = match.end()
            end = sections[index + 1].start() if index + 1 < len(sections) else len(body)
            break
    if start is None:
        sink.warning("no `## Examples` section: nothing shows how to call the tool or can be checked", None, "no-examples")
        return []
    text = body[start:end]

    newlines = [match.start() for match in re.finditer("\n", body)]

    def line_at(offset: int) -> int:
        # bisect, not body.count(): counting from 0 for every case is quadratic on big manifests
        return body_line + bisect.bisect_left(newlines, start + offset)

    cases = list(_CASE.finditer(text))
    if not cases:
        sink.warning("the `## Examples` section has no `### title` cases", line_at(0), "no-examples")
    examples: list[Example] = []
    titles: dict[str, int] = {}
    for index, case in enumerate(cases):
        title = case.group("title")
        case_line = line_at(case.start())
        case_text = text[case.end() : cases[index + 1].start() if index + 1 < len(cases) else len(text)]
        example = Example(title=title, line=case_line)
        if title in titles:
            sink.warning(f"example {title!r} has the same title as the one on line {titles[title]}", case_line, "example-title")
        titles.setdefault(title, case_line)
        found: dict[str, list[re.Match[str]]] = {"input": [], "output": []}
        for match in _CASE_LINE.finditer(case_text):
            found[match.group("kind")].append(match)
        for kind in ("input", "output"):
            matches = found[kind]
            if not matches:
                sink.error(f"example {title!r} has no `{kind}:` line", case_line, "example-incomplete")
                continue
            last = matches[-1]
            line = line_at(case.end() + last.start("kind"))
            if len(matches) > 1:
                sink.warning(
                    f"example {title!r} has {len(matches)} `{kind}:` lines; only the last (line {line}) counts",
                    line,
                    "example-repeated-line",
                )
            try:
                value: Any = jsonvalues.loads_strict(last.group("json"))
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
    sections = list(_SECTION.finditer(body))
    for index, match in enumerate(sections):
        if match.group("title").strip().lower() == "examples":
            end = sections[index + 1].start() if index + 1 < len(sections) else len(body)
            return body[: match.start()] + body[end:]
    return body
