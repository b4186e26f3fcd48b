"""Hostile and broken manifests: every one gives a clear diagnostic, never an exception,
and never stops the tool beside it from being harvested."""

from __future__ import annotations

import os
import select
import socket
import threading
from pathlib import Path

import pytest

from manifests import only, write
from toolcatalog.harvest import harvest
from toolcatalog.model import ERROR, WARNING, Catalog, Diagnostic, Tool
from toolcatalog.options import Options

BAD = ".agent/tools/bad/TOOL.md"


def tool_at(catalog: Catalog, source: str) -> Tool:
    found = [t for t in catalog.tools if t.source == source]
    assert len(found) == 1, [t.source for t in catalog.tools]
    return found[0]


@pytest.fixture
def harvest_bad(write_tool, tmp_path):
    """Write a good speccify tool and a bad one at BAD, harvest, check the good one survived."""

    def run(content: str | bytes, **options) -> tuple[Tool, Catalog]:
        write_tool("good-tool")
        write_tool("bad", content)
        catalog = harvest(tmp_path, Options(**options))
        good = tool_at(catalog, ".agent/tools/good-tool/TOOL.md")
        assert good.valid, [d.message for d in good.diagnostics]
        assert good.id == "good-tool" and len(good.examples) == 1
        return tool_at(catalog, BAD), catalog

    return run


def assert_invalid(tool: Tool, code: str, line: int | None, *words: str) -> Diagnostic:
    """The tool is invalid with exactly one `code` error at `line` whose message has `words`."""
    assert not tool.valid
    assert tool.status == "invalid"
    diagnostic = only(tool.diagnostics, code)
    assert diagnostic.severity == ERROR
    assert diagnostic.path == BAD
    assert diagnostic.line == line
    for word in words:
        assert word in diagnostic.message, diagnostic.message
    return diagnostic


# --- front matter -----------------------------------------------------------------------


def test_broken_yaml_reports_the_line_of_the_error(harvest_bad):
    text = "---\nname: bad\ndescription: \"never closed\ninputs: {type: object}\n---\nbody\n"
    tool, _ = harvest_bad(text)
    # The scanner notices at the end of the front matter; the message says where the string began.
    assert_invalid(tool, "yaml-syntax", 4, "YAML syntax error", "while scanning a quoted scalar that starts on line 3")


def test_broken_flow_yaml_points_at_the_line_where_it_breaks(harvest_bad):
    text = "---\nname: bad\ndescription: [unclosed\ninputs: {}\n---\n"
    tool, _ = harvest_bad(text)
    assert_invalid(tool, "yaml-syntax", 4, "YAML syntax error", "']'")


def test_front_matter_after_a_blank_line_is_refused(harvest_bad, speccify_md):
    tool, _ = harvest_bad("\n" + speccify_md("bad"))
    assert_invalid(tool, "frontmatter-position", 2, "byte 0", "line 2")


def test_front_matter_after_a_bom_is_refused(harvest_bad, speccify_md):
    tool, _ = harvest_bad("\ufeff" + speccify_md("bad"))
    assert_invalid(tool, "frontmatter-position", 1, "byte-order mark")


def test_no_front_matter(harvest_bad):
    tool, _ = harvest_bad("# bad\n\nJust prose, no fields.\n")
    assert_invalid(tool, "frontmatter-missing", 1, "no YAML front matter", "`---`")


def test_unclosed_front_matter(harvest_bad):
    tool, _ = harvest_bad("---\nname: bad\ndescription: d\n\n# bad\n")
    assert_invalid(tool, "frontmatter-unclosed", 1, "never closed")


@pytest.mark.parametrize("text", ["---\n---\nbody\n", "---\n\n---\nbody\n", "---\n# only a comment\n---\n"])
def test_empty_front_matter(harvest_bad, text):
    tool, _ = harvest_bad(text)
    diagnostic = only(tool.diagnostics, "frontmatter-not-mapping")
    assert diagnostic.severity == ERROR and diagnostic.path == BAD
    assert diagnostic.line in (1, 2)
    assert "empty" in diagnostic.message and "mapping" in diagnostic.message
    assert not tool.valid


@pytest.mark.parametrize(("yaml_text", "kind"), [("- a\n- b", "a list"), ("just a string", "a string"), ("42", "a number")])
def test_front_matter_that_is_not_a_mapping(harvest_bad, yaml_text, kind):
    tool, _ = harvest_bad(f"---\n{yaml_text}\n---\nbody\n")
    assert_invalid(tool, "frontmatter-not-mapping", 2, f"front matter is {kind}", "mapping")


# --- YAML tags: nothing is ever constructed -------------------------------------------------


def test_python_apply_tag_is_refused_and_never_runs(harvest_bad, speccify_md, tmp_path):
    marker = tmp_path / "pwned"
    extra = f'hook: !!python/object/apply:os.system ["touch {marker}"]\n'
    tool, _ = harvest_bad(speccify_md("bad", extra=extra))
    assert not marker.exists()
    diagnostic = assert_invalid(tool, "yaml-tag", 16, "python/object/apply:os.system", "not allowed")
    assert "plain JSON values" in diagnostic.message


def test_python_apply_tag_nested_in_a_list_never_runs(harvest_bad, speccify_md, tmp_path):
    marker = tmp_path / "pwned-nested"
    extra = f'runtime:\n  - any\n  - !!python/object/apply:subprocess.call [["touch", "{marker}"]]\n'
    tool, _ = harvest_bad(speccify_md("bad", extra=extra))
    assert not marker.exists()
    assert_invalid(tool, "yaml-tag", 18, "python/object/apply:subprocess.call")


def test_python_name_tag_is_refused(harvest_bad, speccify_md):
    tool, _ = harvest_bad(speccify_md("bad", extra="hook: !!python/name:os.system\n"))
    assert_invalid(tool, "yaml-tag", 16, "python/name:os.system")


def test_custom_tag_is_refused(harvest_bad, speccify_md):
    tool, _ = harvest_bad(speccify_md("bad", extra="hook: !foo bar\n"))
    assert_invalid(tool, "yaml-tag", 16, "`!foo`")


def test_binary_tag_is_refused(harvest_bad, speccify_md):
    tool, _ = harvest_bad(speccify_md("bad", extra="blob: !!binary aGVsbG8=\n"))
    assert_invalid(tool, "yaml-tag", 16, "binary")


def test_custom_tag_on_a_mapping_is_refused(harvest_bad, speccify_md):
    tool, _ = harvest_bad(speccify_md("bad", extra="hook: !!python/object:os.Foo {a: 1}\n"))
    assert_invalid(tool, "yaml-tag", 16, "python/object:os.Foo")


# --- resource exhaustion -------------------------------------------------------------


def billion_laughs() -> str:
    lines = ['a: &a ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    previous = "a"
    for name in "bcdefghi":  # 9 levels of 9 aliases each: 9**9 strings if expanded
        lines.append(f"{name}: &{name} [" + ", ".join([f"*{previous}"] * 9) + "]")
        previous = name
    return "\n".join(lines) + "\n"


def test_alias_bomb_is_stopped_fast(harvest_bad, speccify_md):
    # Stopped by the value budget (the diagnostic says so), never expanded: 9**9 strings would not fit in memory.
    tool, _ = harvest_bad(speccify_md("bad", extra=billion_laughs()))
    diagnostic = only(tool.diagnostics, "yaml-too-large")
    assert_invalid(tool, "yaml-too-large", diagnostic.line, "alias bomb")
    # The node that breaks the budget is inside the bomb (front matter lines 16-24).
    assert 16 <= diagnostic.line <= 24


def test_alias_bomb_of_few_large_values_is_stopped(harvest_bad, speccify_md):
    # 1,000 aliases of one 100 KB string: few values, but 100 MB of text once expanded.
    bomb = "big: &big " + "y" * 100_000 + "\nmany: [" + ", ".join(["*big"] * 1000) + "]\n"
    tool, _ = harvest_bad(speccify_md("bad", extra=bomb))
    diagnostic = only(tool.diagnostics, "yaml-too-large")
    assert "far more text than the file holds" in diagnostic.message and "alias bomb" in diagnostic.message


def test_many_values_are_capped_too(tmp_path):
    from toolcatalog import safeyaml

    text = "a: &a [" + ", ".join(["0"] * 60) + "]\nb: [" + ", ".join(["*a"] * 1000) + "]\n"
    try:
        safeyaml.load(text)
    except safeyaml.YamlError as exc:
        assert exc.code == "yaml-too-large" and "more than 50000 values" in exc.message
    else:
        raise AssertionError("60,000 values were accepted")


def test_self_referencing_alias(harvest_bad, speccify_md):
    tool, _ = harvest_bad(speccify_md("bad", extra="loop: &x [*x]\n"))
    assert_invalid(tool, "yaml-too-deep", 16, "self-referencing alias")


def test_deeply_nested_flow_yaml_is_contained(harvest_bad, speccify_md):
    tool, _ = harvest_bad(speccify_md("bad", extra="deep: " + "[" * 5000 + "]" * 5000 + "\n"))
    diagnostic = only(tool.diagnostics, "yaml-too-deep")
    assert diagnostic.severity == ERROR and diagnostic.path == BAD
    assert "nests too deeply" in diagnostic.message
    assert not tool.valid


def test_moderately_nested_yaml_beyond_the_depth_cap(harvest_bad, speccify_md):
    tool, _ = harvest_bad(speccify_md("bad", extra="deep: " + "[" * 100 + "]" * 100 + "\n"))
    assert_invalid(tool, "yaml-too-deep", 16, "more than 64 levels")


def test_five_megabyte_manifest_is_refused_by_size(harvest_bad, speccify_md):
    text = speccify_md("bad") + ("x" * 99 + "\n") * 52_000
    tool, _ = harvest_bad(text)
    diagnostic = assert_invalid(tool, "manifest-too-large", None, "5,", "1,048,576 bytes", "max_manifest_bytes")
    assert "refused" in diagnostic.message


def test_max_manifest_bytes_raises_the_limit(harvest_bad, speccify_md):
    text = speccify_md("bad") + ("x" * 99 + "\n") * 52_000
    tool, _ = harvest_bad(text, max_manifest_bytes=6_000_000)
    assert tool.valid, [d.message for d in tool.diagnostics]
    assert tool.id == "bad"


def test_max_manifest_bytes_lowers_the_limit(harvest_bad, speccify_md):
    tool, _ = harvest_bad(speccify_md("bad") + "x" * 2000, max_manifest_bytes=1500)
    assert_invalid(tool, "manifest-too-large", None, "1,500 bytes")


def test_non_utf8_file_gives_the_line(harvest_bad):
    raw = "---\nname: bad\ndescription: caf\xe9 au lait\n---\n".encode("latin-1")
    tool, _ = harvest_bad(raw)
    assert_invalid(tool, "manifest-encoding", 3, "not UTF-8", "0xe9")


def test_control_character_in_front_matter_gives_the_line(harvest_bad, speccify_md):
    tool, _ = harvest_bad(speccify_md("bad", extra="note: a\x00b\n"))
    assert_invalid(tool, "yaml-syntax", 16, "control character U+0000")


def test_control_character_in_the_body_is_harmless(harvest_bad, speccify_md):
    tool, _ = harvest_bad(speccify_md("bad") + "\x00\x1b")
    assert tool.valid and tool.body.endswith("\x00\x1b")


def test_complex_mapping_key_is_refused(harvest_bad, speccify_md):
    tool, _ = harvest_bad(speccify_md("bad", extra="? [a, b]\n: value\n"))
    assert_invalid(tool, "yaml-complex-key", 16, "must be a plain value")


# --- YAML scalars that YAML 1.1 reads differently ----------------------------------------


def test_duplicate_keys_mention_both_lines(harvest_bad, speccify_md):
    tool, _ = harvest_bad(speccify_md("bad", extra="description: second one\n"))
    diagnostic = assert_invalid(tool, "yaml-duplicate-key", 16, "duplicate key `description`", "first at line 3")
    assert "remove one" in diagnostic.message


def test_date_where_a_string_is_expected_is_kept_with_a_warning(write_file, speccify_md, tmp_path):
    write_file(
        "dist/SMART_TOOL.md",
        "---\nsmart_tool_format: 1\nname: dated\nversion: 2024-01-02\ndescription: d\n"
        "use_cases: [u]\nplatforms: [linux]\n---\n",
    )
    write_file(".agent/tools/good-tool/TOOL.md", speccify_md("good-tool"))
    catalog = harvest(tmp_path)
    assert tool_at(catalog, ".agent/tools/good-tool/TOOL.md").valid
    tool = tool_at(catalog, "dist/SMART_TOOL.md")
    assert tool.version == "2024-01-02"
    assert tool.fields["version"] == "2024-01-02"
    assert tool.valid, [d.message for d in tool.diagnostics]
    warning = only(tool.diagnostics, "yaml-ambiguous")
    assert warning.severity == WARNING and warning.line == 4 and warning.path == "dist/SMART_TOOL.md"
    assert "YAML 1.1" in warning.message and "a date" in warning.message and "quote it" in warning.message


def test_no_and_on_where_strings_are_expected(harvest_bad, speccify_md):
    front = (
        "name: bad\ndescription: on\ninputs: {type: object}\noutputs: {type: object}\neffects: no\n"
    )
    tool, _ = harvest_bad(speccify_md("bad", front=front, body="\n## Examples\n\n### x\ninput: {}\noutput: {}\n"))
    assert tool.valid, [d.message for d in tool.diagnostics]
    assert tool.description == "on"
    assert tool.effects.text == "no"
    warnings = {d.line: d for d in tool.diagnostics if d.code == "yaml-ambiguous"}
    assert set(warnings) == {3, 6}
    assert "the boolean true" in warnings[3].message and "YAML 1.1" in warnings[3].message
    assert "the boolean false" in warnings[6].message and "YAML 1.1" in warnings[6].message
    assert all(w.severity == WARNING for w in warnings.values())


def test_merge_key_is_kept_literally_with_a_warning(harvest_bad, speccify_md):
    extra = "defaults: &d {x: 1}\nsettings:\n  <<: *d\n  y: 2\n"
    tool, _ = harvest_bad(speccify_md("bad", extra=extra))
    assert tool.valid
    assert tool.extra["settings"] == {"<<": {"x": 1}, "y": 2}
    warning = only(tool.diagnostics, "yaml-ambiguous")
    assert warning.severity == WARNING and warning.line == 18
    assert "`<<`" in warning.message and "YAML 1.1" in warning.message and "merge" in warning.message


def test_number_where_a_string_is_expected_says_to_quote_it(write_file, speccify_md, tmp_path):
    write_file(
        ".tools/num/TOOL.md",
        "---\nname: Num\nid: num\ndescription: d\nversion: 1.0\ninputs: {type: object}\noutputs: {type: object}\n---\n",
    )
    write_file(".agent/tools/good-tool/TOOL.md", speccify_md("good-tool"))
    catalog = harvest(tmp_path)
    assert tool_at(catalog, ".agent/tools/good-tool/TOOL.md").valid
    tool = tool_at(catalog, ".tools/num/TOOL.md")
    assert not tool.valid
    errors = [d for d in tool.diagnostics if d.severity == ERROR]
    assert len(errors) == 1
    assert errors[0].line == 5
    assert "`version` must be a string, not a number (1.0)" in errors[0].message
    assert "quote it" in errors[0].message


def test_number_for_a_speccify_name_says_to_quote_it(harvest_bad, speccify_md):
    tool, _ = harvest_bad(speccify_md("bad", front="name: 1234\ndescription: d\ninputs: {}\noutputs: {}\neffects: none\n"))
    assert_invalid(tool, "field-type", 2, "`name` must be a string, not a number (1234)", "quote it")


# --- JSON Schema `$ref`: nothing is fetched -------------------------------------------------


def schema_tool(inputs: str, body: str = "") -> str:
    return (
        f"---\nname: bad\ndescription: d\ninputs: {inputs}\noutputs: {{type: object}}\neffects: none\n---\n{body}"
    )


def test_ref_to_a_local_file_is_never_read(harvest_bad):
    tool, _ = harvest_bad(schema_tool('{"$ref": "file:///etc/passwd"}', '\n## Examples\n\n### x\ninput: {"a": 1}\noutput: {}\n'))
    assert tool.valid, [d.message for d in tool.diagnostics]
    warning = only(tool.diagnostics, "io-schema")
    assert warning.severity == WARNING and warning.line == 4 and warning.path == BAD
    assert "'file:///etc/passwd'" in warning.message and "never fetched" in warning.message


@pytest.fixture
def listening_socket():
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    server.setblocking(False)
    yield server
    server.close()


def test_ref_to_a_network_address_is_never_fetched(harvest_bad, listening_socket):
    port = listening_socket.getsockname()[1]
    inputs = (
        '{"type": "object", "properties": {"a": {"$ref": "http://127.0.0.1:%d/x.json"}, '
        '"b": {"$ref": "http://127.0.0.1:9/x.json"}}}' % port
    )
    body = '\n## Examples\n\n### x\ninput: {"a": 1, "b": 2}\noutput: {}\n'
    tool, _ = harvest_bad(schema_tool(inputs, body))
    readable, _, _ = select.select([listening_socket], [], [], 0.3)
    assert readable == [], "the harvest connected to the $ref host"
    assert tool.valid, [d.message for d in tool.diagnostics]
    warnings = sorted((d for d in tool.diagnostics if d.code == "io-schema"), key=lambda d: d.message)
    assert [w.severity for w in warnings] == [WARNING, WARNING]
    assert f"http://127.0.0.1:{port}/x.json" in warnings[0].message
    assert "http://127.0.0.1:9/x.json" in warnings[1].message
    assert all("never fetched" in w.message and w.line == 4 for w in warnings)
    assert "`inputs.properties.a.$ref`" in warnings[0].message


def test_recursive_ref_is_fine_and_examples_validate(harvest_bad):
    inputs = '{"$defs": {"n": {"type": "object", "properties": {"next": {"$ref": "#/$defs/n"}}}}, "$ref": "#/$defs/n"}'
    body = (
        "\n## Examples\n\n### chain\n"
        'input: {"next": {"next": {"next": {}}}}\noutput: {}\n\n'
        "### broken chain\n"
        'input: {"next": {"next": 3}}\noutput: {}\n'
    )
    tool, _ = harvest_bad(schema_tool(inputs, body))
    assert tool.valid, [d.message for d in tool.diagnostics]
    assert not [d for d in tool.diagnostics if d.code == "io-schema"]
    warning = only(tool.diagnostics, "example-input-schema")
    assert warning.line == 15 and warning.severity == WARNING
    assert "'broken chain'" in warning.message and "$.next.next" in warning.message and "not of type 'object'" in warning.message


def test_infinitely_self_referencing_schema_is_an_error_not_a_crash(harvest_bad):
    inputs = '{"$defs": {"a": {"$ref": "#/$defs/a"}}, "$ref": "#/$defs/a"}'
    body = '\n## Examples\n\n### x\ninput: {"a": 1}\noutput: {}\n'
    tool, _ = harvest_bad(schema_tool(inputs, body))
    assert not tool.valid
    errors = [d for d in tool.diagnostics if d.code == "io-schema"]
    assert errors and all(d.severity == ERROR and d.line == 4 for d in errors)
    assert any("`inputs.$ref`" in d.message and "`$ref` cycle" in d.message for d in errors)
    # The unusable schema is not used on the example, so no misleading "input violates" warning.
    assert not [d for d in tool.diagnostics if d.code == "example-input-schema"]


def test_infinitely_self_referencing_outputs_do_not_crash_either(harvest_bad):
    front = "name: bad\ndescription: d\ninputs: {type: object}\noutputs: {$defs: {a: {$ref: '#/$defs/b'}, b: {$ref: '#/$defs/a'}}, $ref: '#/$defs/a'}\neffects: none\n"
    tool, _ = harvest_bad(f"---\n{front}---\n\n## Examples\n\n### x\ninput: {{}}\noutput: {{}}\n")
    assert not tool.valid
    errors = [d for d in tool.diagnostics if d.severity == ERROR]
    assert errors and all(d.code == "io-schema" and d.line == 5 for d in errors)
    assert "`outputs.$ref`" in errors[0].message or any("`outputs.$ref`" in d.message for d in errors)


def test_ref_to_missing_def_is_an_error(harvest_bad):
    tool, _ = harvest_bad(schema_tool('{"type": "object", "properties": {"a": {"$ref": "#/$defs/nope"}}}'))
    diagnostic = assert_invalid(tool, "io-schema", 4, "'#/$defs/nope'", "points at nothing")
    assert "`inputs.properties.a.$ref`" in diagnostic.message


# --- identity and layout ----------------------------------------------------------------


def test_two_tools_with_the_same_id(write_tool, speccify_md, tmp_path):
    write_tool("good-tool")
    write_tool("same", speccify_md("same"), folder="one")
    write_tool("same", speccify_md("same"), folder="two")
    catalog = harvest(tmp_path)
    assert tool_at(catalog, ".agent/tools/good-tool/TOOL.md").valid
    one = tool_at(catalog, ".agent/tools/one/TOOL.md")
    two = tool_at(catalog, ".agent/tools/two/TOOL.md")
    for tool, other in ((one, two), (two, one)):
        assert not tool.valid and tool.status == "invalid"
        error = only(tool.diagnostics, "duplicate-id")
        assert error.severity == ERROR and error.path == tool.source
        assert "'same'" in error.message and other.source in error.message and "unique" in error.message
    catalog_level = only(catalog.diagnostics, "duplicate-id")
    assert catalog_level.severity == ERROR
    assert "2 tools share the id 'same'" in catalog_level.message
    assert one.source in catalog_level.message and two.source in catalog_level.message


def test_symlink_to_a_manifest_outside_the_root_is_not_followed(tmp_path, speccify_md):
    workspace, outside = tmp_path / "ws", tmp_path / "outside"
    (outside / "evil").mkdir(parents=True)
    (outside / "evil" / "TOOL.md").write_text(speccify_md("evil"), encoding="utf-8")
    (workspace / ".agent/tools/good-tool").mkdir(parents=True)
    (workspace / ".agent/tools/good-tool/TOOL.md").write_text(speccify_md("good-tool"), encoding="utf-8")
    (workspace / ".agent/tools/evil").mkdir(parents=True)
    os.symlink(outside / "evil" / "TOOL.md", workspace / ".agent/tools/evil/TOOL.md")
    os.symlink(outside / "evil", workspace / ".agent/tools/evil-dir")
    catalog = harvest(workspace)
    assert [t.id for t in catalog.tools] == ["good-tool"]
    assert catalog.tools[0].valid
    by_path = {d.path: d for d in catalog.diagnostics if d.code == "symlink-outside"}
    assert set(by_path) == {".agent/tools/evil/TOOL.md", ".agent/tools/evil-dir"}
    for diagnostic in by_path.values():
        assert diagnostic.severity == WARNING
        assert "symlink leaves the searched folder" in diagnostic.message and "not followed" in diagnostic.message


def test_symlink_loop_of_folders_terminates(tmp_path, write_tool):
    write_tool("good-tool")
    os.symlink("..", tmp_path / ".agent/tools/good-tool/up")
    (tmp_path / "a" / "b").mkdir(parents=True)
    os.symlink(tmp_path / "a", tmp_path / "a/b/back")
    os.symlink(tmp_path / "a/b", tmp_path / "a/b/self")
    results: list[Catalog] = []
    for options in (Options(), Options(paths=["."]), Options(paths=["a"])):
        worker = threading.Thread(target=lambda o=options: results.append(harvest(tmp_path, o)), daemon=True)
        worker.start()
        worker.join(10)
        assert not worker.is_alive(), f"harvest with {options} did not terminate"
    assert [[t.id for t in c.tools] for c in results] == [["good-tool"], ["good-tool"], []]
    assert results[0].tools[0].valid


# --- speccify examples ------------------------------------------------------------------


def test_example_with_broken_json(harvest_bad, speccify_md):
    body = '\n## Examples\n\n### broken\ninput: {"text": "hi"\noutput: {"ok": true}\n'
    tool, _ = harvest_bad(speccify_md("bad", body=body))
    assert_invalid(tool, "example-json", 21, "'broken'", "`input:` is not valid JSON", "column 14")
    assert not tool.examples[0].has_input and tool.examples[0].output == {"ok": True}


def test_example_missing_its_output_line(harvest_bad, speccify_md):
    body = '\n## Examples\n\n### half\ninput: {"text": "hi"}\n'
    tool, _ = harvest_bad(speccify_md("bad", body=body))
    assert_invalid(tool, "example-incomplete", 20, "'half' has no `output:` line")
    assert tool.examples[0].input == {"text": "hi"} and not tool.examples[0].has_output


def test_hugely_nested_json_example_is_contained(harvest_bad, speccify_md):
    body = "\n## Examples\n\n### deep\ninput: " + "[" * 100_000 + "]" * 100_000 + '\noutput: {"ok": true}\n'
    tool, _ = harvest_bad(speccify_md("bad", body=body))
    assert_invalid(tool, "example-json", 21, "'deep'", "nests more than 64 levels deep")


def test_hugely_nested_json_in_an_aip14_example_line(write_file, speccify_md, tmp_path):
    """AIP-14 examples are YAML: a deep flow sequence there is stopped by the YAML reader."""
    write_file(".agent/tools/good-tool/TOOL.md", speccify_md("good-tool"))
    deep = "[" * 100_000 + "]" * 100_000
    write_file(
        ".tools/deep/TOOL.md",
        f"---\nname: Deep\nid: deep\ndescription: d\nversion: 1.0.0\ninputs: {{type: object}}\noutputs: {{type: object}}\n"
        f"examples:\n  - name: deep\n    input: {deep}\n---\n",
    )
    catalog = harvest(tmp_path)
    assert tool_at(catalog, ".agent/tools/good-tool/TOOL.md").valid
    tool = tool_at(catalog, ".tools/deep/TOOL.md")
    assert not tool.valid
    error = only(tool.diagnostics, "yaml-too-deep")
    assert error.severity == ERROR and "nests too deeply" in error.message


# --- numbers, regexes and files that used to take the whole harvest down --------------------

HUGE = "1" + "0" * 5000  # more digits than Python converts between int and str


def test_huge_integer_in_front_matter_is_kept_as_text(harvest_bad, speccify_md):
    tool, _ = harvest_bad(speccify_md("bad", extra=f"big: {HUGE}\nhex: 0x{'f' * 5000}\n"))
    assert tool.valid
    assert tool.extra["big"] == HUGE and tool.extra["hex"] == "0x" + "f" * 5000
    warnings = [d for d in tool.diagnostics if d.code == "yaml-number"]
    assert [(w.severity, w.line) for w in warnings] == [(WARNING, 16), (WARNING, 17)]
    assert "5001-character number is too large for JSON; kept as text" in warnings[0].message


def test_huge_integer_in_an_example_line(harvest_bad, speccify_md):
    body = f'\n## Examples\n\n### big\ninput: {{"text": {HUGE}}}\noutput: {{"ok": true}}\n'
    tool, _ = harvest_bad(speccify_md("bad", body=body))
    assert_invalid(tool, "example-json", 21, "'big'", "`input:` is not valid JSON", "4300 digits")


def test_nan_and_infinity_are_not_json(harvest_bad, speccify_md):
    body = '\n## Examples\n\n### nan\ninput: {"text": NaN}\noutput: {"ok": 1e999}\n'
    tool, _ = harvest_bad(speccify_md("bad", body=body))
    errors = {d.line: d.message for d in tool.diagnostics if d.code == "example-json"}
    assert errors == {
        21: "example 'nan': `input:` is not valid JSON (`NaN` is not a JSON value)",
        22: "example 'nan': `output:` is not valid JSON (the number 1e999 is too large for JSON)",
    }
    assert not tool.valid


@pytest.mark.parametrize(
    ("schema", "where"),
    [
        ('{"type": "object", "properties": {"text": {"type": "string", "pattern": "("}}}', "`inputs.properties.text.pattern`"),
        ('{"type": "object", "patternProperties": {"[a-": {}}}', "`inputs.patternProperties.[a-`"),
    ],
)
def test_invalid_regex_in_a_schema_is_an_error_not_a_crash(harvest_bad, schema, where):
    body = '\n## Examples\n\n### x\ninput: {"text": "a", "[a-": 1}\noutput: {}\n'
    tool, _ = harvest_bad(schema_tool(schema, body))
    diagnostic = assert_invalid(tool, "io-schema", 4, where, "is not a regular expression Python can compile")
    assert diagnostic.severity == ERROR
    assert "example-input-schema" not in [d.code for d in tool.diagnostics]


def test_descriptor_with_non_json_numbers(write_file, speccify_md, tmp_path):
    write_file(".agent/tools/good-tool/TOOL.md", speccify_md("good-tool"))
    write_file("a/smart-tool.json", '{"manifest": "SMART_TOOL.md", "cli_argv": ["a"], "n": %s}' % HUGE)
    write_file("b/smart-tool.json", '{"manifest": "SMART_TOOL.md", "cli_argv": ["b"], "n": NaN}')
    catalog = harvest(tmp_path)
    assert tool_at(catalog, ".agent/tools/good-tool/TOOL.md").valid
    a, b = tool_at(catalog, "a/smart-tool.json"), tool_at(catalog, "b/smart-tool.json")
    for tool in (a, b):
        error = only(tool.diagnostics, "json-syntax")
        assert error.severity == ERROR and error.message.startswith("smart-tool.json: not valid JSON")
    assert "`NaN` is not a JSON value" in only(b.diagnostics, "json-syntax").message


@pytest.mark.parametrize(
    ("name", "content"),
    [
        ("package.json", "[" * 100_000 + "]" * 100_000),
        ("package.json", '{"version": %s}' % HUGE),
        ("pyproject.toml", "a = " + "[" * 100_000 + "]" * 100_000 + "\n"),
    ],
)
def test_unreadable_package_files_do_not_crash(write_file, tmp_path, name, content):
    write_file("dist/" + name, content)
    write_file(
        "dist/SMART_TOOL.md",
        "---\nsmart_tool_format: 1\nname: s\nversion: 0.1.0\ndescription: d\nuse_cases:\n  - u\nplatforms:\n  - linux\n---\n",
    )
    tool = tool_at(harvest(tmp_path), "dist/SMART_TOOL.md")
    assert tool.valid  # the package version cannot be read, so it is not compared
    assert [d.code for d in tool.diagnostics] == ["descriptor-missing"]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs named pipes")
def test_named_pipe_called_tool_md_does_not_block(write_tool, tmp_path):
    write_tool("good-tool")
    (tmp_path / ".agent/tools/pipe").mkdir(parents=True)
    os.mkfifo(tmp_path / ".agent/tools/pipe/TOOL.md")
    results: list[Catalog] = []
    worker = threading.Thread(target=lambda: results.append(harvest(tmp_path)), daemon=True)
    worker.start()
    worker.join(10)
    assert not worker.is_alive(), "harvest blocked opening a FIFO"
    tool = tool_at(results[0], ".agent/tools/pipe/TOOL.md")
    error = only(tool.diagnostics, "manifest-unreadable")
    assert error.severity == ERROR and "not a regular file" in error.message
    assert tool_at(results[0], ".agent/tools/good-tool/TOOL.md").valid


def test_explicit_yaml_tags_must_fit_their_type(tmp_path: Path) -> None:
    for index, value in enumerate(["!!float abc", "!!int 1.5", "!!bool maybe", "!!null x"]):
        write(tmp_path / f".agent/tools/t{index}/TOOL.md", f"---\nname: t{index}\nodd: {value}\n---\n")
    catalog = harvest(tmp_path, Options())
    for tool in catalog.tools:
        [diagnostic] = [d for d in tool.diagnostics if d.code == "yaml-tag"]
        assert diagnostic.line == 3 and "is not a valid" in diagnostic.message
