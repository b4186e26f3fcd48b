"""Unit tests per manifest format (speccify, AIP-14, AIP-30, smart tools) and for discovery."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from manifests import only, write
from toolcatalog.discover import discover
from toolcatalog.formats import aip14, common, smarttool, speccify
from toolcatalog.harvest import harvest
from toolcatalog.model import ERROR, WARNING, Catalog, Diagnostic, Driver, Tool
from toolcatalog.options import Options


def codes(diagnostics: list[Diagnostic], severity: str | None = None) -> list[str]:
    return [d.code for d in diagnostics if severity is None or d.severity == severity]


def line_of(text: str, needle: str, nth: int = 1) -> int:
    """1-based line of the `nth` line containing `needle`."""
    hits = [number for number, line in enumerate(text.splitlines(), start=1) if needle in line]
    assert len(hits) >= nth, f"{needle!r} not in text"
    return hits[nth - 1]


def tool_at(catalog: Catalog, source: str) -> Tool:
    found = [t for t in catalog.tools if t.source == source]
    assert len(found) == 1, [t.source for t in catalog.tools]
    return found[0]


def driver_at(catalog: Catalog, source: str) -> Driver:
    found = [d for d in catalog.drivers if d.source == source]
    assert len(found) == 1, [d.source for d in catalog.drivers]
    return found[0]


def md(front: str, body: str = "") -> str:
    return "---\n" + textwrap.dedent(front).strip("\n") + "\n---\n" + textwrap.dedent(body)


# =========================================================================================
# speccify
# =========================================================================================

SPEC = ".agent/tools/t/TOOL.md"

SPEC_FRONT = """\
name: t
description: Does a thing.
inputs:
  type: object
  required: [text]
  properties:
    text: {type: string}
outputs:
  type: object
  required: [ok]
  properties:
    ok: {type: boolean}
effects: none
"""

SPEC_BODY = """
## Examples

### ok
input: {"text": "a"}
output: {"ok": true}
"""


@pytest.fixture
def speccify_tool(write_file, tmp_path):
    """Write `.agent/tools/t/TOOL.md` from front matter and body, harvest, return (tool, text)."""

    def run(front: str = SPEC_FRONT, body: str = SPEC_BODY, folder: str = "t") -> tuple[Tool, str]:
        text = md(front, body)
        write_file(f".agent/tools/{folder}/TOOL.md", text)
        catalog = harvest(tmp_path)
        tool = tool_at(catalog, f".agent/tools/{folder}/TOOL.md")
        assert tool.format == "speccify"
        return tool, text

    return run


def test_speccify_valid_baseline(speccify_tool):
    tool, _ = speccify_tool()
    assert tool.valid and tool.diagnostics == []
    assert tool.id == tool.name == "t"
    assert tool.kind == "deterministic"
    assert [e.title for e in tool.examples] == ["ok"]


@pytest.mark.parametrize("field", ["name", "description", "inputs", "outputs"])
def test_speccify_required_fields(speccify_tool, field):
    front = "\n".join(
        line for line in SPEC_FRONT.splitlines() if not line.startswith(f"{field}:")
    )
    if field in ("inputs", "outputs"):  # drop the indented schema too
        lines = SPEC_FRONT.splitlines()
        start = lines.index(f"{field}:")
        end = start + 1
        while end < len(lines) and lines[end].startswith("  "):
            end += 1
        front = "\n".join(lines[:start] + lines[end:])
    tool, _ = speccify_tool(front)
    assert not tool.valid
    error = only(tool.diagnostics, "required")
    assert error.severity == ERROR and error.line == 2 and error.path == SPEC
    assert f"missing required field `{field}`" in error.message


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("Bad_Name", "'Bad_Name' must be lowercase"),
        ("bad--name", "'bad--name' must be lowercase"),
        ("-bad", "'-bad' must be lowercase"),
        ("a" * 65, "65 characters long; at most 64"),
    ],
)
def test_speccify_name_pattern_and_length(speccify_tool, name, message):
    tool, _ = speccify_tool(SPEC_FRONT.replace("name: t", f"name: '{name}'"))
    assert not tool.valid
    errors = [d for d in tool.diagnostics if d.code == "name"]
    assert errors and all(d.severity == ERROR and d.line == 2 for d in errors)
    assert any(message in d.message for d in errors), [d.message for d in errors]


def test_speccify_name_of_64_chars_is_fine_but_folder_mismatch_warns(speccify_tool):
    tool, _ = speccify_tool(SPEC_FRONT.replace("name: t", "name: " + "a" * 64))
    assert tool.valid
    warning = only(tool.diagnostics, "name-folder")
    assert warning.severity == WARNING and warning.line == 2
    assert "differs from the folder name 't'" in warning.message
    assert tool.id == "a" * 64


def test_speccify_description_length(speccify_tool):
    tool, _ = speccify_tool(SPEC_FRONT.replace("Does a thing.", "x" * 1025))
    error = only(tool.diagnostics, "description")
    assert error.severity == ERROR and error.line == 3
    assert "1025 characters long; at most 1024" in error.message
    ok, _ = speccify_tool(SPEC_FRONT.replace("Does a thing.", "x" * 1024), folder="t")
    assert ok.valid


def test_speccify_description_blank(speccify_tool):
    tool, _ = speccify_tool(SPEC_FRONT.replace("Does a thing.", "'   '"))
    error = only(tool.diagnostics, "description")
    assert error.severity == ERROR and error.line == 3 and "`description` is empty" in error.message


def test_speccify_inputs_must_be_a_valid_schema(speccify_tool):
    front = SPEC_FRONT.replace("  type: object\n  required: [text]", "  type: objekt\n  required: [text]")
    tool, text = speccify_tool(front)
    assert not tool.valid
    errors = [d for d in tool.diagnostics if d.code == "io-schema"]
    assert len(errors) == 1 and errors[0].severity == ERROR
    assert errors[0].line == line_of(text, "type: objekt")
    assert errors[0].message.startswith("`inputs.type`: not a valid schema")
    # An unusable schema is not used to check examples.
    assert "example-input-schema" not in codes(tool.diagnostics)


def test_speccify_outputs_must_be_a_mapping(speccify_tool):
    lines = SPEC_FRONT.splitlines()
    start = lines.index("outputs:")
    front = "\n".join(lines[:start] + ["outputs: [ok]", "effects: none"])
    tool, text = speccify_tool(front)
    error = only(tool.diagnostics, "io-schema")
    assert error.severity == ERROR and error.line == line_of(text, "outputs: [ok]")
    assert "`outputs` must be a JSON Schema mapping" in error.message


def test_speccify_comma_separated_lists(speccify_tool):
    tool, _ = speccify_tool(SPEC_FRONT + "platforms: macos, linux\nrequires: python3 ,git\nruntime: python>=3.11, bash\n")
    assert tool.valid, [d.message for d in tool.diagnostics]
    assert tool.platforms == ["macos", "linux"]
    assert [(r.kind, r.name) for r in tool.effects.requires] == [
        ("binary", "python3"),
        ("binary", "git"),
        ("runtime", "python>=3.11"),
        ("runtime", "bash"),
    ]


def test_speccify_yaml_lists_work_too(speccify_tool):
    tool, _ = speccify_tool(SPEC_FRONT + "platforms: [windows]\nrequires:\n  - pwsh\n")
    assert tool.platforms == ["windows"]
    assert [r.name for r in tool.effects.requires] == ["pwsh"]


def test_speccify_list_field_of_the_wrong_shape(speccify_tool):
    tool, text = speccify_tool(SPEC_FRONT + "platforms: {macos: true}\n")
    error = only(tool.diagnostics, "field-type")
    assert error.severity == ERROR and error.line == line_of(text, "platforms:")
    assert "`platforms` must be a list of strings or a comma-separated string" in error.message


def test_speccify_unknown_platform_warns(speccify_tool):
    tool, text = speccify_tool(SPEC_FRONT + "platforms: macos, freebsd\n")
    assert tool.valid
    warning = only(tool.diagnostics, "platforms")
    assert warning.severity == WARNING and warning.line == line_of(text, "platforms:")
    assert "'freebsd' is not one of macos, linux, windows" in warning.message


def test_speccify_unknown_keys_are_kept_with_a_warning(speccify_tool):
    tool, text = speccify_tool(SPEC_FRONT + "author: someone\nlicense: MIT\n")
    assert tool.valid
    assert tool.extra == {"author": "someone", "license": "MIT"}
    warnings = [d for d in tool.diagnostics if d.code == "unknown-field"]
    assert [(w.severity, w.line) for w in warnings] == [
        (WARNING, line_of(text, "author:")),
        (WARNING, line_of(text, "license:")),
    ]
    assert "unknown field `author` is kept" in warnings[0].message


def test_speccify_missing_effects_is_only_a_warning(speccify_tool):
    tool, _ = speccify_tool(SPEC_FRONT.replace("effects: none\n", ""))
    assert tool.valid
    assert only(tool.diagnostics, "effects-missing").severity == WARNING
    assert tool.effects.text is None


def test_speccify_only_the_first_examples_section_counts(speccify_tool):
    body = """
## Examples

Prose before the first case is ignored, even input: {"text": 1}

### first
input: {"text": "a"}
output: {"ok": true}

## Notes

### not a case
input: {"text": "n"}
output: {"ok": true}

## examples

### second section
input: {"text": "b"}
output: {"ok": true}
"""
    tool, text = speccify_tool(body=body)
    assert tool.valid, [d.message for d in tool.diagnostics]
    assert [(e.title, e.line, e.input) for e in tool.examples] == [("first", line_of(text, "### first"), {"text": "a"})]


def test_speccify_examples_title_is_case_and_space_insensitive(speccify_tool):
    body = "\n##   EXAMPLES   \n\n### a\ninput: {}\noutput: {\"ok\": false}\n"
    tool, _ = speccify_tool(body=body)
    assert [e.title for e in tool.examples] == ["a"]
    assert tool.examples[0].output == {"ok": False}


def test_speccify_case_lines_and_titles(speccify_tool):
    body = """
## Examples

### one unsigned sidecar
input: {"text": "x"}
output: {"ok": false}

###   padded title   
   input:   {"text": "y"}   
  output: {"ok": true}
"""
    tool, text = speccify_tool(body=body)
    assert [(e.title, e.line) for e in tool.examples] == [
        ("one unsigned sidecar", line_of(text, "### one")),
        ("padded title", line_of(text, "###   padded")),
    ]
    assert tool.examples[1].input == {"text": "y"}


def test_speccify_last_input_wins_with_a_warning(speccify_tool):
    body = """
## Examples

### twice
Some prose saying input: {"text": "prose"}
input: {"text": "first"}
input: {"text": "last"}
output: {"ok": true}
"""
    tool, text = speccify_tool(body=body)
    assert tool.valid
    assert tool.examples[0].input == {"text": "last"}
    warning = only(tool.diagnostics, "example-repeated-line")
    assert warning.severity == WARNING
    assert warning.line == line_of(text, 'input: {"text": "last"}')
    assert "has 2 `input:` lines; only the last" in warning.message


def test_speccify_fences_are_not_respected(speccify_tool):
    body = """
## Examples

### fenced
```
input: {"text": "in a fence, still counts"}
## Not a heading in Markdown, but a section break for the grammar
```
output: {"ok": true}
"""
    tool, text = speccify_tool(body=body)
    # The `## ` line inside the fence ends the Examples section, so the case loses its output.
    assert [e.title for e in tool.examples] == ["fenced"]
    assert tool.examples[0].input == {"text": "in a fence, still counts"}
    assert not tool.examples[0].has_output
    error = only(tool.diagnostics, "example-incomplete")
    assert error.severity == ERROR and error.line == line_of(text, "### fenced")
    assert "'fenced' has no `output:` line" in error.message


def test_speccify_case_keys_are_lower_case_only(speccify_tool):
    body = '\n## Examples\n\n### shouting\nInput: {"text": "a"}\nOUTPUT: {"ok": true}\n'
    tool, text = speccify_tool(body=body)
    errors = [d for d in tool.diagnostics if d.code == "example-incomplete"]
    assert [e.message for e in errors] == [
        "example 'shouting' has no `input:` line",
        "example 'shouting' has no `output:` line",
    ]
    assert all(e.line == line_of(text, "### shouting") for e in errors)


def test_speccify_no_examples_section_warns(speccify_tool):
    tool, _ = speccify_tool(body="\n## Behaviour\n\nNothing.\n")
    assert tool.valid and tool.examples == []
    assert only(tool.diagnostics, "no-examples").severity == WARNING


def test_speccify_example_input_outside_inputs_is_a_warning(speccify_tool):
    body = '\n## Examples\n\n### bad input is rejected\ninput: {"text": 5}\noutput: {"ok": false}\n'
    tool, text = speccify_tool(body=body)
    assert tool.valid
    warning = only(tool.diagnostics, "example-input-schema")
    assert warning.severity == WARNING and warning.line == line_of(text, "### bad input")
    assert "at $.text: 5 is not of type 'string'" in warning.message


def test_speccify_example_output_outside_outputs_is_an_error(speccify_tool):
    body = '\n## Examples\n\n### wrong output\ninput: {"text": "a"}\noutput: {"ok": "yes"}\n'
    tool, text = speccify_tool(body=body)
    assert not tool.valid
    error = only(tool.diagnostics, "example-output-schema")
    assert error.severity == ERROR and error.line == line_of(text, "### wrong output")
    assert "expected output violates `outputs` at $.ok: 'yes' is not of type 'boolean'" in error.message


def test_speccify_crlf_file(write_file, tmp_path):
    text = md(SPEC_FRONT, SPEC_BODY).replace("\n", "\r\n")
    write_file(SPEC, text.encode("utf-8"))
    tool = tool_at(harvest(tmp_path), SPEC)
    assert tool.valid and tool.diagnostics == []
    assert [(e.title, e.line, e.input, e.output) for e in tool.examples] == [
        ("ok", line_of(text, "### ok"), {"text": "a"}, {"ok": True})
    ]


def test_speccify_many_cases_keep_exact_lines():
    diagnostics: list[Diagnostic] = []
    body = "\n## Examples\n\n" + "".join(f"### c{i}\ninput: {i}\n\noutput: {i}\n" for i in range(3000))
    examples = speccify.parse_examples(body, 7, common.Sink("x/TOOL.md", diagnostics))
    assert diagnostics == []
    assert len(examples) == 3000
    # body line 1 is file line 7; "### c0" is body line 4, and every case takes 4 lines.
    assert [(e.title, e.line, e.input) for e in (examples[0], examples[1], examples[-1])] == [
        ("c0", 10, 0),
        ("c1", 14, 1),
        ("c2999", 10 + 4 * 2999, 2999),
    ]


def test_speccify_parse_examples_directly():
    diagnostics: list[Diagnostic] = []
    sink = common.Sink("x/TOOL.md", diagnostics)
    body = "intro\n## Examples\n### a\ninput: 1\noutput: 2\n### b\ninput: [\noutput: null\n"
    examples = speccify.parse_examples(body, 10, sink)
    assert [(e.title, e.line, e.input, e.output) for e in examples[:1]] == [("a", 12, 1, 2)]
    assert examples[1].title == "b" and not examples[1].has_input and examples[1].output is None
    assert [(d.code, d.line) for d in diagnostics] == [("example-json", 16)]


def test_speccify_implementation_files(write_file, tmp_path):
    write_file(".agent/tools/t/TOOL.md", md(SPEC_FRONT, SPEC_BODY))
    for name in ("linux.sh", "linux.py", "macos", "reference.py", "windows.ps1", "README.md"):
        write_file(f".agent/tools/t/{name}", "")
    tool = tool_at(harvest(tmp_path), SPEC)
    assert tool.implementations == ["linux.py", "linux.sh", "windows.ps1"]


# =========================================================================================
# AIP-14
# =========================================================================================

AIP14 = ".tools/demo.echo/TOOL.md"

AIP14_FRONT = """\
name: Echo
id: demo.echo
description: Echo text back.
version: 1.2.0
inputs:
  type: object
  required: [text]
  properties:
    text: {type: string}
    lang: {type: string}
outputs:
  type: object
  required: [text]
  properties:
    text: {type: string}
examples:
  - name: hello
    input: {text: hi}
    output: {text: hi}
"""


@pytest.fixture
def aip14_tool(write_file, tmp_path):
    def run(front: str = AIP14_FRONT, path: str = AIP14) -> tuple[Tool, str, Catalog]:
        text = md(front, "\n## Description\n\nEchoes.\n")
        write_file(path, text)
        catalog = harvest(tmp_path)
        return tool_at(catalog, path), text, catalog

    return run


def test_aip14_valid_baseline(aip14_tool):
    tool, _, _ = aip14_tool()
    assert tool.format == "aip-14"
    assert tool.valid and tool.diagnostics == []
    assert (tool.id, tool.name, tool.version) == ("demo.echo", "Echo", "1.2.0")
    assert tool.effects.mutates == [] and tool.effects.approval == "auto" and tool.effects.risk_level == 0
    assert tool.effects.read_only is True
    assert [(e.title, e.input, e.output) for e in tool.examples] == [("hello", {"text": "hi"}, {"text": "hi"})]


def test_aip14_classified_by_id_even_in_a_speccify_folder(aip14_tool):
    tool, text, _ = aip14_tool(path=".agent/tools/demo.echo/TOOL.md")
    assert tool.format == "aip-14" and tool.id == "demo.echo"
    warning = only(tool.diagnostics, "misclassified")
    assert warning.severity == WARNING and warning.line == line_of(text, "id: demo.echo")
    assert "has an AIP-14 `id`" in warning.message
    assert tool.valid


def test_tool_md_without_id_in_tools_folder_is_speccify(write_file, tmp_path):
    write_file(".tools/t/TOOL.md", md(SPEC_FRONT, SPEC_BODY))
    tool = tool_at(harvest(tmp_path), ".tools/t/TOOL.md")
    assert tool.format == "speccify"
    warning = only(tool.diagnostics, "misclassified")
    assert warning.severity == WARNING and "no `id`" in warning.message


def test_looks_like_aip14():
    assert aip14.looks_like_aip14({"id": "x"})
    assert aip14.looks_like_aip14({"name": "x", "version": "1.0.0", "mutates": []})
    assert not aip14.looks_like_aip14({"name": "x", "version": "1.0.0", "effects": "none"})
    assert not aip14.looks_like_aip14({"name": "x", "inputs": {}})
    assert not aip14.looks_like_aip14(["id"])


@pytest.mark.parametrize("field", ["name", "description", "version"])
def test_aip14_required_fields(aip14_tool, field):
    front = "\n".join(line for line in AIP14_FRONT.splitlines() if not line.startswith(f"{field}:"))
    tool, _, _ = aip14_tool(front)
    assert not tool.valid
    error = only(tool.diagnostics, "schema")
    assert error.severity == ERROR and error.line == 2
    assert error.message == f"missing required field `{field}`"


def test_aip14_removed_field_points_to_driver(aip14_tool):
    tool, text, _ = aip14_tool(AIP14_FRONT + "runner: ./run.sh\nsecrets: [TOKEN]\n")
    assert not tool.valid
    errors = [d for d in tool.diagnostics if d.code == "removed-field"]
    assert [(e.line, e.severity) for e in errors] == [(line_of(text, "runner:"), ERROR), (line_of(text, "secrets:"), ERROR)]
    assert "`runner` was removed from AIP-14 TOOL.md" in errors[0].message and "DRIVER.md" in errors[0].message
    # Reported once, not again as an unknown field.
    assert "schema" not in codes(tool.diagnostics)


@pytest.mark.parametrize("approval", [None, "auto"])
def test_aip14_auto_approval_forbids_mutates(aip14_tool, approval):
    extra = "mutates: ['network:*']\n" + (f"approval: {approval}\n" if approval else "")
    tool, text, _ = aip14_tool(AIP14_FRONT + extra)
    assert not tool.valid
    error = only(tool.diagnostics, "schema")
    assert error.line == line_of(text, "mutates:")
    assert "`approval` is `auto` (also the default when absent)" in error.message
    assert "on-mutate" in error.message


def test_aip14_on_mutate_allows_mutates(aip14_tool):
    tool, _, _ = aip14_tool(AIP14_FRONT + "mutates: ['workspace:/notes']\napproval: on-mutate\nrisk_level: 1\n")
    assert tool.valid, [d.message for d in tool.diagnostics]
    assert tool.effects.mutates == ["workspace:/notes"] and tool.effects.read_only is False
    assert tool.effects.approval == "on-mutate" and tool.effects.risk_level == 1


@pytest.mark.parametrize("value", ["4", "-1", "'2'"])
def test_aip14_risk_level_range(aip14_tool, value):
    tool, text, _ = aip14_tool(AIP14_FRONT + f"risk_level: {value}\n")
    assert not tool.valid
    error = only(tool.diagnostics, "schema")
    assert error.line == line_of(text, "risk_level:")
    assert error.message.startswith("`risk_level`")


def test_aip14_unknown_field_is_an_error(aip14_tool):
    tool, text, _ = aip14_tool(AIP14_FRONT + "author: me\n")
    assert not tool.valid
    error = only(tool.diagnostics, "schema")
    assert error.line == line_of(text, "author:")
    assert error.message == "unknown field `author`; the format does not define it"
    assert tool.extra == {"author": "me"}


def test_aip14_bad_id_and_version_patterns(aip14_tool):
    front = AIP14_FRONT.replace("id: demo.echo", "id: Demo_Echo").replace("version: 1.2.0", "version: '1.2'")
    tool, text, _ = aip14_tool(front)
    errors = {d.line: d.message for d in tool.diagnostics if d.code == "schema"}
    assert set(errors) == {line_of(text, "id:"), line_of(text, "version:")}
    assert "`id` \"Demo_Echo\" does not match the pattern" in errors[line_of(text, "id:")]
    assert "`version` \"1.2\" does not match the pattern" in errors[line_of(text, "version:")]


def test_aip14_examples_are_validated(aip14_tool):
    front = AIP14_FRONT + "  - name: bad input\n    input: {text: 3}\n  - name: bad output\n    input: {text: a}\n    output: {text: [a]}\n"
    tool, text, _ = aip14_tool(front)
    assert not tool.valid
    warning = only(tool.diagnostics, "example-input-schema")
    error = only(tool.diagnostics, "example-output-schema")
    assert warning.severity == WARNING and warning.line == line_of(text, "- name: bad input")
    assert error.severity == ERROR and error.line == line_of(text, "- name: bad output")
    assert "$.text" in error.message and "is not of type 'string'" in error.message
    assert [e.title for e in tool.examples] == ["hello", "bad input", "bad output"]


def test_aip14_example_needs_a_name_and_input(aip14_tool):
    tool, text, _ = aip14_tool(AIP14_FRONT + "  - output: {text: x}\n")
    error = only(tool.diagnostics, "schema")
    assert error.line == line_of(text, "- output:")
    assert "missing required field `name`, `input` in `examples[1]`" == error.message


def test_aip14_default_implementation_without_driver_warns(aip14_tool):
    tool, _, _ = aip14_tool(AIP14_FRONT + "default_implementation: echo-cli\n")
    assert tool.valid
    warning = only(tool.diagnostics, "default-implementation")
    assert warning.severity == WARNING
    assert "'echo-cli' names no driver of this tool in the catalog (drivers: none)" in warning.message


# =========================================================================================
# AIP-30
# =========================================================================================

DRIVER_FRONT = """\
name: Echo CLI
id: echo-cli
description: Runs echo.
version: 0.1.0
kind: cli
bin: echo
implements:
  - tool: .tools/demo.echo/TOOL.md
    version: "^1.0.0"
"""


@pytest.fixture
def linked(write_file, tmp_path):
    """Write the AIP-14 tool and a driver under `base`, harvest tmp_path."""

    def run(driver_front: str = DRIVER_FRONT, tool_front: str = AIP14_FRONT, base: str = "") -> tuple[Tool, Driver, Catalog, str]:
        prefix = f"{base}/" if base else ""
        write_file(f"{prefix}.tools/demo.echo/TOOL.md", md(tool_front))
        text = md(driver_front, "\n## When to reach for this driver\n\nAlways.\n")
        write_file(f"{prefix}.drivers/echo-cli/DRIVER.md", text)
        catalog = harvest(tmp_path)
        return (
            tool_at(catalog, f"{prefix}.tools/demo.echo/TOOL.md"),
            driver_at(catalog, f"{prefix}.drivers/echo-cli/DRIVER.md"),
            catalog,
            text,
        )

    return run


def test_aip30_driver_attaches_by_workspace_relative_path(linked):
    tool, driver, catalog, _ = linked(base="project/sub")
    assert driver.valid and driver.diagnostics == []
    assert tool.valid and [d.id for d in tool.drivers] == ["echo-cli"]
    assert driver.implements[0].tool_id == "demo.echo"
    assert catalog.diagnostics == []


def test_aip30_driver_attaches_by_id(linked):
    tool, driver, catalog, _ = linked(DRIVER_FRONT.replace(".tools/demo.echo/TOOL.md", "demo.echo"))
    assert [d.id for d in tool.drivers] == ["echo-cli"]
    assert driver.valid and catalog.diagnostics == []


def test_aip30_default_implementation_naming_the_driver_is_quiet(linked):
    tool, _, _, _ = linked(tool_front=AIP14_FRONT + "default_implementation: echo-cli\n")
    assert "default-implementation" not in codes(tool.diagnostics)


def test_aip30_unresolved_tool(linked):
    tool, driver, catalog, text = linked(DRIVER_FRONT.replace(".tools/demo.echo/TOOL.md", ".tools/missing/TOOL.md"))
    assert tool.valid and tool.drivers == []
    error = only(driver.diagnostics, "driver-unresolved")
    assert error.severity == ERROR and error.line == line_of(text, "- tool:")
    assert "'.tools/missing/TOOL.md'" in error.message and "not an AIP-14 TOOL.md path or id" in error.message
    orphan = only(catalog.diagnostics, "driver-orphan")
    assert orphan.severity == ERROR and orphan.path == ".drivers/echo-cli/DRIVER.md"
    assert "'echo-cli' implements no tool in this catalog" in orphan.message


@pytest.mark.parametrize("field", ["name", "id", "description", "version", "kind", "implements"])
def test_aip30_required_fields(linked, field):
    lines = DRIVER_FRONT.splitlines()
    if field == "implements":
        lines = lines[: lines.index("implements:")]
    else:
        lines = [line for line in lines if not line.startswith(f"{field}:")]
    tool, driver, _, _ = linked("\n".join(lines))
    assert not driver.valid and tool.valid
    error = only(driver.diagnostics, "schema")
    assert error.severity == ERROR and error.line == 2
    assert error.message == f"missing required field `{field}`"


def test_aip30_kind_enum(linked):
    tool, driver, _, text = linked(DRIVER_FRONT.replace("kind: cli", "kind: grpc"))
    assert tool.valid and not driver.valid
    error = only(driver.diagnostics, "schema")
    assert error.line == line_of(text, "kind:")
    assert '`kind` "grpc" is not one of "cli", "http", "mcp", "sdk", "builtin"' == error.message


def test_aip30_drop_inputs_must_name_declared_inputs(linked):
    front = DRIVER_FRONT + "    schema_narrowing:\n      drop_inputs: [lang, colour]\n"
    tool, driver, _, text = linked(front)
    assert tool.valid and not driver.valid
    error = only(driver.diagnostics, "driver-narrowing")
    assert error.line == line_of(text, "- tool:")
    assert "`schema_narrowing.drop_inputs` names 'colour', which 'demo.echo' does not declare in `inputs`" == error.message


def test_aip30_drop_inputs_may_not_drop_required(linked):
    tool, driver, _, _ = linked(DRIVER_FRONT + "    schema_narrowing:\n      drop_inputs: [text]\n")
    assert tool.valid
    assert "drops 'text', which 'demo.echo' requires" in only(driver.diagnostics, "driver-narrowing").message


def test_aip30_version_range_not_satisfied(linked):
    tool, driver, _, text = linked(DRIVER_FRONT.replace('"^1.0.0"', '"^2.0.0"'))
    assert tool.valid and not driver.valid
    error = only(driver.diagnostics, "driver-version")
    assert error.line == line_of(text, "- tool:")
    assert "range '^2.0.0' does not admit 'demo.echo' version 1.2.0" in error.message
    assert [d.id for d in tool.drivers] == ["echo-cli"]  # still attached, shown with its problem


def test_aip30_version_range_that_is_not_a_range(linked):
    tool, driver, _, _ = linked(DRIVER_FRONT.replace('"^1.0.0"', '"latest"'))
    assert tool.valid and not driver.valid
    assert only(driver.diagnostics, "driver-version").message == "`version` 'latest' is not a valid semver range"


def test_aip30_version_range_satisfied_by_a_complex_range(linked):
    _, driver, _, _ = linked(DRIVER_FRONT.replace('"^1.0.0"', '">=1.1 <2"'))
    assert driver.valid


@pytest.mark.parametrize(
    ("constraints", "message"),
    [
        ("{forbid: [cli]}", "'demo.echo' forbids `cli` drivers"),
        ("{require_kind: [http, mcp]}", "requires a driver of kind http, mcp (`driver_constraints.require_kind`), not `cli`"),
    ],
)
def test_aip30_driver_constraints(linked, constraints, message):
    tool, driver, _, _ = linked(tool_front=AIP14_FRONT + f"driver_constraints: {constraints}\n")
    assert tool.valid and not driver.valid
    error = only(driver.diagnostics, "driver-kind")
    assert message in error.message


def test_aip30_driver_constraints_satisfied(linked):
    _, driver, _, _ = linked(tool_front=AIP14_FRONT + "driver_constraints: {require_kind: [cli]}\n")
    assert driver.valid


def test_aip30_timeout_override_may_only_narrow(linked):
    tool, driver, _, _ = linked(
        DRIVER_FRONT.replace("bin: echo", "bin: echo\ntimeout_override_ms: 60000")
        + "    timeout_override_ms: 1000\n",
        tool_front=AIP14_FRONT + "timeout_ms: 5000\n",
    )
    assert tool.valid and not driver.valid
    errors = [d.message for d in driver.diagnostics if d.code == "driver-widens"]
    assert errors == ["`timeout_override_ms` 60000 widens the tool's timeout of 5000 ms; drivers may only narrow it"]


def test_aip30_timeout_default_is_30s(linked):
    _, driver, _, _ = linked(DRIVER_FRONT + "    timeout_override_ms: 30001\n")
    assert "widens the tool's timeout of 30000 ms" in only(driver.diagnostics, "driver-widens").message


def test_aip30_cost_override_may_only_narrow(linked):
    tool, driver, _, _ = linked(
        DRIVER_FRONT + "    cost_override: {cost_class: expensive}\n", tool_front=AIP14_FRONT + "cost_class: metered\n"
    )
    assert tool.valid and not driver.valid
    error = only(driver.diagnostics, "driver-widens")
    assert "`implements[].cost_override.cost_class` 'expensive' is costlier than the tool's 'metered'" in error.message
    _, cheaper, _, _ = linked(DRIVER_FRONT + "    cost_override: {cost_class: trivial}\n", tool_front=AIP14_FRONT + "cost_class: metered\n")
    assert cheaper.valid


def test_aip30_cli_output_block_is_checked(linked):
    tool, driver, _, text = linked(DRIVER_FRONT.replace("bin: echo", "bin: echo\noutput:\n  default_format: xml"))
    assert tool.valid and not driver.valid
    error = only(driver.diagnostics, "cli-subtype")
    assert error.line == line_of(text, "default_format:")
    assert error.message.startswith("`output.default_format`: 'xml' is not one of")


def test_aip30_driver_problems_never_invalidate_the_tool(linked):
    tool, driver, _, _ = linked(DRIVER_FRONT.replace("version: 0.1.0", "version: nope"))
    assert not driver.valid
    assert tool.valid and tool.status == "not-run"


# =========================================================================================
# smart tools
# =========================================================================================

SMART = """\
smart_tool_format: 1
name: sample
version: 0.1.0
description: Counts words.
use_cases:
  - Count words
platforms: [linux, macos]
requires:
  - name: provider
    purpose: Backs summaries.
    install: docs/provider.md
"""

DESCRIPTOR = {"manifest": "src/sample/SMART_TOOL.md", "cli_argv": ["sample"], "deterministic_smoke": ["manifest"]}


@pytest.fixture
def smart_dist(write_file, tmp_path):
    """Write a distribution `dist/` (descriptor + manifest + optional package files) and harvest."""

    def run(
        front: str = SMART,
        descriptor: dict | str | None = DESCRIPTOR,
        manifest_at: str = "src/sample/SMART_TOOL.md",
        pyproject: str | None = None,
        package_json: str | None = None,
    ) -> tuple[Tool, Catalog, str]:
        text = md(front, "\n## When to reach for it\n\nAlways.\n")
        if manifest_at:
            write_file(f"dist/{manifest_at}", text)
        if descriptor is not None:
            write_file("dist/smart-tool.json", descriptor if isinstance(descriptor, str) else json.dumps(descriptor, indent=2))
        if pyproject is not None:
            write_file("dist/pyproject.toml", pyproject)
        if package_json is not None:
            write_file("dist/package.json", package_json)
        catalog = harvest(tmp_path)
        assert len(catalog.tools) == 1, [t.source for t in catalog.tools]
        return catalog.tools[0], catalog, text

    return run


def test_smart_valid_baseline(smart_dist):
    tool, _, _ = smart_dist(pyproject='[project]\nname = "sample"\nversion = "0.1.0"\n')
    # Only the note that the kit's own reader takes `platforms: [linux, macos]` for a string.
    assert tool.valid and [(d.code, d.line) for d in tool.diagnostics] == [("kit-yaml-subset", 8)]
    assert tool.format == "smart-tool" and tool.id == "sample" and tool.version == "0.1.0"
    assert tool.source == "dist/src/sample/SMART_TOOL.md" and tool.descriptor_source == "dist/smart-tool.json"
    assert tool.platforms == ["linux", "macos"]
    assert [(r.name, r.install) for r in tool.effects.requires] == [("provider", "docs/provider.md")]
    assert tool.kind is None  # only --help says


def test_smart_descriptor_requires_cli_argv(smart_dist):
    tool, _, _ = smart_dist(descriptor={"manifest": "src/sample/SMART_TOOL.md"})
    assert not tool.valid
    error = only(tool.diagnostics, "descriptor")
    assert error.path == "dist/smart-tool.json" and error.line == 1
    assert error.message == "smart-tool.json: missing required field `cli_argv`"


def test_smart_descriptor_requires_manifest(smart_dist):
    tool, _, _ = smart_dist(descriptor={"cli_argv": ["sample"]})
    assert not tool.valid
    assert only(tool.diagnostics, "descriptor").message == "smart-tool.json: missing required field `manifest`"
    # The manifest under the root is not harvested as a second tool.


def test_smart_descriptor_unknown_field_warns(smart_dist):
    tool, _, _ = smart_dist(descriptor={**DESCRIPTOR, "ecosystem": "pypi"})
    assert tool.valid
    warning = only(tool.diagnostics, "descriptor-unknown-field")
    assert warning.severity == WARNING and warning.line == 9
    assert "unknown field `ecosystem`" in warning.message


def test_smart_descriptor_broken_json(smart_dist):
    tool, _, _ = smart_dist(descriptor='{\n  "manifest": "src/sample/SMART_TOOL.md",\n  "cli_argv": [\n}\n')
    assert not tool.valid
    error = only(tool.diagnostics, "json-syntax")
    assert error.path == "dist/smart-tool.json" and error.line == 4
    assert error.message.startswith("smart-tool.json: not valid JSON")


def test_smart_manifest_outside_root(write_file, tmp_path):
    write_file("elsewhere/SMART_TOOL.md", md(SMART))
    write_file("dist/smart-tool.json", json.dumps({**DESCRIPTOR, "manifest": "../elsewhere/SMART_TOOL.md"}, indent=2))
    catalog = harvest(tmp_path)
    tool = tool_at(catalog, "dist/smart-tool.json")
    assert not tool.valid
    error = only(tool.diagnostics, "descriptor-manifest")
    assert error.line == 2 and "'../elsewhere/SMART_TOOL.md' points outside the distribution root" in error.message
    # The manifest itself is still harvested, on its own, as a tool nothing says how to run.
    standalone = tool_at(catalog, "elsewhere/SMART_TOOL.md")
    assert standalone.valid and "descriptor-missing" in codes(standalone.diagnostics)


def test_smart_manifest_missing(smart_dist):
    tool, _, _ = smart_dist(manifest_at="")
    assert not tool.valid and tool.id == "dist"
    error = only(tool.diagnostics, "descriptor-manifest")
    assert error.line == 2 and error.message == "smart-tool.json: `manifest` 'src/sample/SMART_TOOL.md' does not exist"


def test_smart_manifest_without_descriptor_warns(smart_dist):
    tool, _, _ = smart_dist(descriptor=None)
    assert tool.valid and tool.source == "dist/src/sample/SMART_TOOL.md"
    warning = only(tool.diagnostics, "descriptor-missing")
    assert warning.severity == WARNING and "no smart-tool.json names this manifest" in warning.message


def test_smart_field_set_is_closed(smart_dist):
    tool, _, text = smart_dist(SMART + "author: nobody\n")
    assert not tool.valid
    error = only(tool.diagnostics, "schema")
    assert error.line == line_of(text, "author:")
    assert error.message == "unknown field `author`; the format does not define it"
    assert tool.extra == {"author": "nobody"}


@pytest.mark.parametrize("name", ["Sample", "sample_tool", "sample-", "a--b"])
def test_smart_name_pattern(smart_dist, name):
    tool, _, text = smart_dist(SMART.replace("name: sample", f"name: {name}"))
    error = only(tool.diagnostics, "schema")
    assert error.line == line_of(text, "name:")
    assert f'`name` "{name}" does not match the pattern `^[a-z0-9]+(-[a-z0-9]+)*$`' == error.message


def test_smart_requires_entry_shape(smart_dist):
    tool, _, text = smart_dist(SMART.replace("    install: docs/provider.md\n", "    url: docs/provider.md\n"))
    messages = sorted(d.message for d in tool.diagnostics if d.code == "schema")
    assert messages == [
        "missing required field `install` in `requires[0]`",
        "unknown field `url` in `requires[0]`; the format does not define it",
    ]


def test_smart_version_must_equal_static_pyproject_version(smart_dist):
    tool, _, text = smart_dist(pyproject='[project]\nname = "sample"\nversion = "0.2.0"\n')
    assert not tool.valid
    error = only(tool.diagnostics, "version-mismatch")
    assert error.line == line_of(text, "version:")
    assert "`version` '0.1.0' differs from the package version '0.2.0' in pyproject.toml" in error.message


def test_smart_dynamic_pyproject_version_is_not_checked(smart_dist):
    tool, _, _ = smart_dist(pyproject='[project]\nname = "sample"\ndynamic = ["version"]\n', package_json='{"version": "9.9.9"}')
    assert tool.valid and "version-mismatch" not in codes(tool.diagnostics)


def test_smart_package_json_version(smart_dist):
    tool, _, _ = smart_dist(package_json='{"name": "sample", "version": "1.0.0"}')
    assert "differs from the package version '1.0.0' in package.json" in only(tool.diagnostics, "version-mismatch").message
    assert not tool.valid


def test_smart_version_as_number_is_an_error(smart_dist):
    tool, _, text = smart_dist(SMART.replace("version: 0.1.0", "version: 0.1"))
    error = only(tool.diagnostics, "schema")
    assert error.line == line_of(text, "version:")
    assert "`version` must be a string, not a number (0.1); YAML read it as a number, quote it" in error.message


@pytest.mark.parametrize(
    ("install", "problem"),
    [
        ("pip install sample-provider", "starts with the installer command `pip`"),
        ("brew", "starts with the installer command `brew`"),
        ("make && make install", "contains the shell operator `&&`"),
        ("docs/a.md;rm", "contains the shell operator `;`"),
        ("see $(pwd)", "contains the shell operator `$(`"),
        ("docs/install guide.md", "contains whitespace"),
        ("docs/install\tguide.md", "contains whitespace"),
        ("   ", "is empty"),
    ],
)
def test_install_problems(install, problem):
    assert smarttool.install_problem(install) == problem


@pytest.mark.parametrize("install", ["https://example.com/install", "docs/provider.md", "README.md", "https://x.dev/a?b=c#d"])
def test_install_doc_paths_and_urls_are_fine(install):
    assert smarttool.install_problem(install) is None


def test_smart_install_command_is_an_error_with_its_line(smart_dist):
    tool, _, text = smart_dist(SMART.replace("install: docs/provider.md", "install: pip install provider"))
    assert not tool.valid
    error = only(tool.diagnostics, "requires-install")
    assert error.line == line_of(text, "install:")
    assert "`requires[0].install` 'pip install provider' starts with the installer command `pip`" in error.message
    assert "never a command" in error.message


def test_smart_two_manifests_under_one_root(smart_dist, write_file):
    write_file("dist/SMART_TOOL.md", md(SMART))
    tool, catalog, _ = smart_dist()
    assert not tool.valid
    error = only(tool.diagnostics, "manifest-single-per-root")
    assert error.path == "dist/smart-tool.json"
    assert "another SMART_TOOL.md (dist/SMART_TOOL.md); exactly one manifest per root" in error.message


def test_smart_nested_descriptor_bounds_a_nested_distribution(write_file, tmp_path):
    write_file("dist/smart-tool.json", json.dumps(DESCRIPTOR))
    write_file("dist/src/sample/SMART_TOOL.md", md(SMART))
    write_file("dist/vendor/other/smart-tool.json", json.dumps({"manifest": "SMART_TOOL.md", "cli_argv": ["other"]}))
    write_file("dist/vendor/other/SMART_TOOL.md", md(SMART.replace("name: sample", "name: other")))
    catalog = harvest(tmp_path)
    assert [(t.id, t.source, t.valid) for t in catalog.tools] == [
        ("other", "dist/vendor/other/SMART_TOOL.md", True),
        ("sample", "dist/src/sample/SMART_TOOL.md", True),
    ]
    assert all("manifest-single-per-root" not in codes(t.diagnostics) for t in catalog.tools)


# =========================================================================================
# discovery
# =========================================================================================


def test_discovery_conventional_locations(write_file, tmp_path):
    write_file(".agent/tools/a/TOOL.md", "x")
    write_file("sub/.tools/cat/b/TOOL.md", "x")
    write_file("sub/.drivers/d/DRIVER.md", "x")
    write_file("pkg/smart-tool.json", "{}")
    write_file("pkg/src/SMART_TOOL.md", "x")
    write_file("docs/tools/c/TOOL.md", "x")  # not a conventional place
    write_file("loose/DRIVER.md", "x")  # not a conventional place
    found = discover(tmp_path)
    assert [(f.path.relative_to(tmp_path).as_posix(), f.hint) for f in found.files] == [
        (".agent/tools/a/TOOL.md", "speccify"),
        ("pkg/smart-tool.json", "smart-tool"),
        ("pkg/src/SMART_TOOL.md", "smart-tool"),
        ("sub/.drivers/d/DRIVER.md", "aip-30"),
        ("sub/.tools/cat/b/TOOL.md", "aip-14"),
    ]


def test_discovery_paths_search_every_manifest_name(write_file, tmp_path):
    write_file(".agent/tools/a/TOOL.md", "x")
    write_file("docs/tools/c/TOOL.md", "x")
    write_file("docs/tools/d/DRIVER.md", "x")
    found = discover(tmp_path, paths=["docs/tools"])
    assert [(f.path.relative_to(tmp_path).as_posix(), f.hint) for f in found.files] == [
        ("docs/tools/c/TOOL.md", "any"),
        ("docs/tools/d/DRIVER.md", "aip-30"),
    ]


def test_discovery_paths_entry_that_does_not_exist(tmp_path):
    from toolcatalog.discover import DiscoveryError

    with pytest.raises(DiscoveryError, match="'nope' does not exist"):
        discover(tmp_path, paths=["nope"])


def test_discovery_exclude_gitignore_patterns(write_file, tmp_path):
    write_file(".agent/tools/a/TOOL.md", "x")
    write_file(".agent/tools/b/TOOL.md", "x")
    write_file("vendor/.tools/c/TOOL.md", "x")
    write_file("x/.tools/keep/TOOL.md", "x")
    found = discover(tmp_path, exclude=["vendor/", ".agent/tools/b/*.md", "!x/"])
    assert [f.path.relative_to(tmp_path).as_posix() for f in found.files] == [
        ".agent/tools/a/TOOL.md",
        "x/.tools/keep/TOOL.md",
    ]


def test_discovery_skips_tool_folders_and_build_dirs(write_file, tmp_path):
    for folder in (".git", "node_modules", ".venv", "venv", "__pycache__"):
        write_file(f"{folder}/.agent/tools/a/TOOL.md", "x")
    write_file("docs/.agent/tools/d/TOOL.md", "x")
    write_file("site/.agent/tools/s/TOOL.md", "x")
    write_file("real/.agent/tools/r/TOOL.md", "x")
    found = discover(tmp_path, skip=[tmp_path / "docs", tmp_path / "site"])
    assert [f.path.relative_to(tmp_path).as_posix() for f in found.files] == ["real/.agent/tools/r/TOOL.md"]


def test_harvest_passes_skip_through(write_tool, tmp_path):
    write_tool("a")
    write_tool("b", under="site/.agent/tools")
    catalog = harvest(tmp_path, Options(), skip=[tmp_path / "site"])
    assert [t.id for t in catalog.tools] == ["a"]


def test_a_speccify_tool_with_a_version_or_tags_stays_speccify(tmp_path: Path) -> None:
    write(
        tmp_path / ".agent/tools/versioned/TOOL.md",
        """
        ---
        name: versioned
        description: A speccify tool that also carries a version and tags (kept as unknown keys).
        version: 1.2.0
        tags: [text]
        inputs: {type: object}
        outputs: {type: object}
        effects: none
        ---
        ## Examples
        ### one
        input: {}
        output: {}
        """,
    )
    [tool] = harvest(tmp_path, Options()).tools
    assert tool.format == "speccify" and tool.valid
    assert sorted(tool.extra) == ["tags", "version"]
