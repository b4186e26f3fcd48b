"""Reference parity on real-world manifests (issue 19, item 1), on hand-built manifests.

Each test names the reference checker's behaviour it holds us to; where we deliberately differ,
the deviation is documented in docs/formats.md and carries a warning.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from manifests import ECHO_STDIN_PY, aip_tool, front_matter, speccify_tool, write
from sitebuild import CORPUS, build, catalog, mkdocs_project, run_check, tool_of
from toolcatalog import jsonschemas
from toolcatalog.formats import aip29
from toolcatalog.harvest import harvest
from toolcatalog.model import ERROR, Tool
from toolcatalog.options import Options
from toolcatalog.statuses import Status


def codes(tool_or_driver) -> list[str]:
    return [d.code for d in tool_or_driver.diagnostics]


# -- an invalid tool says why it is invalid first ------------------------------------------------------


def test_an_invalid_tools_status_detail_is_its_first_error_not_the_missing_implementation(tmp_path: Path) -> None:
    # Invalid (a case with no `output:` line) and without a linux.<ext>: the run would say
    # "no linux.<ext> implementation", which is not why the tool is unacceptable.
    speccify_tool(tmp_path, "broken", [("one", {"n": 1}, ...), ("two", {"n": 2}, {"n": 2})])
    catalog, _ = run_check(tmp_path)
    tool = tool_of(catalog, "broken")
    assert tool.status == Status.INVALID
    first = next(d for d in tool.diagnostics if d.severity == ERROR)
    assert tool.status_detail.startswith(first.message)
    assert "implementation" not in tool.status_detail


def test_an_invalid_tools_status_detail_is_set_before_any_check(tmp_path: Path) -> None:
    speccify_tool(tmp_path, "broken", [("one", {"n": "x"}, ...)])
    tool = tool_of(harvest(tmp_path, Options(cache=False)), "broken")
    assert tool.status == Status.INVALID
    assert tool.status_detail == next(d.message for d in tool.diagnostics if d.severity == ERROR)


def test_an_invalid_aip14_tool_without_examples_is_explained_by_its_error(tmp_path: Path) -> None:
    write(tmp_path / ".tools/bad.tool/TOOL.md", front_matter(
        {"name": "Bad", "id": "bad.tool", "description": "d", "version": "1", "inputs": {}, "outputs": {}}))
    catalog, _ = run_check(tmp_path)
    tool = tool_of(catalog, "bad.tool")
    assert tool.status == Status.INVALID
    assert "examples" not in tool.status_detail and "version" in tool.status_detail


# -- `frontmatter-position` only for a YAML mapping between two `---` ----------------------------------


def _speccify_at(tmp_path: Path, text: str):
    write(tmp_path / ".agent/tools/t/TOOL.md", text)
    (tool,) = harvest(tmp_path, Options(cache=False)).tools
    return tool


def test_a_thematic_break_in_a_body_without_front_matter_is_not_misplaced_front_matter(tmp_path: Path) -> None:
    text = "# t\n\nSome prose.\n\nMore prose.\n---\n\nA section after a rule.\n\n---\n\nThe end.\n"
    tool = _speccify_at(tmp_path, text)
    assert "frontmatter-position" not in codes(tool)
    assert "frontmatter-missing" in codes(tool)


def test_a_single_thematic_break_is_not_misplaced_front_matter(tmp_path: Path) -> None:
    tool = _speccify_at(tmp_path, "# t\n\nProse.\n\n\n---\nMore.\n")
    assert codes(tool) == ["frontmatter-missing"]


def test_front_matter_below_a_heading_is_still_misplaced_front_matter(tmp_path: Path) -> None:
    tool = _speccify_at(tmp_path, "# t\n\n---\nname: t\ndescription: d\n---\nbody\n")
    (diagnostic,) = tool.diagnostics
    assert diagnostic.code == "frontmatter-position" and diagnostic.line == 3


# -- a descriptor without `manifest`: the kit's skips -------------------------------------------------


def test_a_descriptor_without_manifest_skips_every_manifest_rule_like_the_kit(tmp_path: Path) -> None:
    dist = tmp_path / "dist"
    write(dist / "smart-tool.json", json.dumps({"cli_argv": ["python3", "cli.py"]}))
    write(dist / "pyproject.toml", '[project]\nname = "s"\nversion = "0.1.0"\n')
    write(dist / "src/s/SMART_TOOL.md", "---\nsmart_tool_format: 1\nname: s\nversion: 0.2.0\nextra: 1\n---\nbody\n")
    (tool,) = harvest(tmp_path, Options(cache=False)).tools
    verdicts = {c.id: (c.status.value, c.detail) for c in tool.checks}
    assert verdicts["manifest-frontmatter-parses"] == ("skipped", "no manifest to parse")
    for rule in ("manifest-fields-closed", "manifest-required-fields", "manifest-name-format",
                 "manifest-version-matches-package", "manifest-requires-shape"):
        assert verdicts[rule] == ("skipped", "manifest not available"), rule
    assert verdicts["manifest-single-per-root"][0] == "passed"
    (warning,) = [d for d in tool.diagnostics if d.code == "descriptor-manifest"]
    assert "src/s/SMART_TOOL.md" in warning.message and '"manifest"' in warning.message
    assert "version-mismatch" not in codes(tool)  # the unread manifest is not judged


def test_a_descriptor_without_manifest_still_reads_the_roots_manifest_like_the_kit(tmp_path: Path) -> None:
    dist = tmp_path / "dist"
    write(dist / "smart-tool.json", json.dumps({"cli_argv": ["python3", "cli.py"]}))
    write(dist / "SMART_TOOL.md", "---\nsmart_tool_format: 1\nname: s\nextra: 1\n---\nbody\n")
    (tool,) = harvest(tmp_path, Options(cache=False)).tools
    verdicts = {c.id: c.status.value for c in tool.checks}
    assert verdicts["manifest-frontmatter-parses"] == "passed"
    assert verdicts["manifest-fields-closed"] == "failed"


# -- a multi-tool driver with some tools absent ------------------------------------------------------


def _two_tool_driver(root: Path) -> None:
    aip_tool(root, "demo.echo", [{"name": "echo", "input": {"text": "hi"}, "output": {"text": "hi"}}])
    write(root / ".drivers/echo-cli/echo.py", ECHO_STDIN_PY)
    write(root / ".drivers/echo-cli/DRIVER.md", front_matter({
        "name": "Echo", "id": "echo-cli", "description": "d", "version": "1.0.0", "kind": "cli",
        "bin": "python3", "bin_args": ["echo.py"],
        "implements": [
            {"tool": ".tools/demo.echo/TOOL.md", "version": "^1.0.0"},
            {"tool": ".tools/demo.shout/TOOL.md", "version": "^1.0.0"},
            {"tool": "demo.whisper", "version": "^1.0.0"},
        ],
    }))


def test_a_driver_stays_valid_for_the_tools_present_and_names_the_absent_ones(tmp_path: Path) -> None:
    _two_tool_driver(tmp_path)
    catalog = harvest(tmp_path, Options(cache=False))
    (driver,) = catalog.drivers
    assert driver.valid, [d.message for d in driver.diagnostics]
    (warning,) = driver.diagnostics
    assert warning.code == "driver-tools-absent" and warning.severity == "warning"
    assert "'.tools/demo.shout/TOOL.md'" in warning.message and "'demo.whisper'" in warning.message
    assert warning.line is not None
    assert [d.id for d in tool_of(catalog, "demo.echo").drivers] == ["echo-cli"]
    assert not [d for d in catalog.diagnostics if d.code == "driver-orphan"]


def test_the_corpus_image_driver_is_valid_for_image_create(tmp_path: Path) -> None:
    if not (CORPUS / "agentproto").is_dir():
        pytest.skip("the shared corpus is not here")
    catalog = harvest(CORPUS / "agentproto", Options(
        cache=False, paths=["tools/image.create/TOOL.md", "drivers/openai-images-http-2/DRIVER.md"]))
    (driver,) = catalog.drivers
    assert driver.valid, [d.message for d in driver.diagnostics if d.severity == ERROR]
    (absent,) = [d for d in driver.diagnostics if d.code == "driver-tools-absent"]
    assert "image-edit" in absent.message and "image-variation" in absent.message
    assert [d.id for d in tool_of(catalog, "image.create").drivers] == [driver.id]


def test_a_driver_with_absent_tools_still_runs_the_tool_present(tmp_path: Path) -> None:
    _two_tool_driver(tmp_path)
    catalog, _ = run_check(tmp_path)
    tool = tool_of(catalog, "demo.echo")
    assert tool.drivers[0].run_status.get("demo.echo") == "ran", tool.drivers[0].run_status
    assert tool.examples[0].runs, tool.status_detail  # it ran (what it printed is not the point here)


# -- a user page at a tool's URL --------------------------------------------------------------------


def test_a_user_page_at_a_tools_url_keeps_it_gives_the_tool_its_own_url_and_fails_strict(tmp_path: Path) -> None:
    speccify_tool(tmp_path, "setup", [("one", {"a": 1}, {"a": 1})])
    speccify_tool(tmp_path, "other", [("one", {"a": 1}, {"a": 1})])
    write(tmp_path / "docs/tools/setup.md", "# Our own setup page\n")
    mkdocs_project(tmp_path, {"run_examples": False})
    result = build(tmp_path, "--strict", check=False)
    assert result.returncode != 0
    assert "the site's own page tools/setup.md has the URL of tool 'setup'" in result.stderr
    assert "the tool's page is at tools/setup_2/" in result.stderr
    build(tmp_path)
    site = tmp_path / "site"
    assert "Our own setup page" in (site / "tools/setup/index.html").read_text()
    entry = next(t for t in catalog(tmp_path)["tools"] if t["id"] == "setup")
    assert entry["url"] == "tools/setup_2/"
    assert "setup" in (site / "tools/setup_2/index.html").read_text()


# -- the smart-tools kit's YAML subset --------------------------------------------------------------

# Front matter (after the fixed head below) -> what the kit's reader does with it, read off the
# kit's behaviour (`conformance/run.py`): "F" it fails manifest-frontmatter-parses at that file line;
# "M" it parses but misreads the value at that line; "P" it reads it as YAML does. The construct's
# words are what our warning names.
HEAD = "smart_tool_format: 1\nname: s\nversion: 0.1.0\ndescription: d\n"  # file lines 2-5
KIT_READER = {
    "block-lists": ("use_cases:\n  - one\n  - two\nplatforms:\n  - linux\n", "P", None, ""),
    "folded-list-item": ("use_cases:\n  - >-\n    one that\n    wraps\nplatforms:\n  - linux\n", "F", 8, "`- >-`"),
    "continued-list-item": ("use_cases:\n  - one that\n    wraps\nplatforms:\n  - linux\n", "F", 8, "list item continued on the next line"),
    "indentless-list": ("use_cases:\n- one\nplatforms:\n  - linux\n", "F", 7, "at the indentation of its key"),
    "flow-list": ("use_cases:\n  - one\nplatforms: [linux, macos]\n", "M", 8, "flow-style value `platforms: [linux, macos]`"),
    "flow-empty-requires": ("use_cases:\n  - one\nplatforms:\n  - linux\nrequires: []\n", "M", 10, "fails `manifest-requires-shape`"),
    "requires-with-folded-purpose": (
        "use_cases:\n  - one\nplatforms:\n  - linux\nrequires:\n  - name: gh\n    purpose: >\n      a\n      b\n    install: https://x\n",
        "P", None, ""),
    "folded-first-key-of-entry": (
        "use_cases:\n  - one\nplatforms:\n  - linux\nrequires:\n  - purpose: >\n      a b\n    name: gh\n    install: https://x\n",
        "F", 11, "`>` block as the first key"),
}


def _smart_manifest(tmp_path: Path, front: str) -> Tool:
    write(tmp_path / "dist/pyproject.toml", '[project]\nname = "s"\nversion = "0.1.0"\n')
    write(tmp_path / "dist/smart-tool.json", json.dumps({"manifest": "SMART_TOOL.md", "cli_argv": ["s"]}))
    (tmp_path / "dist/SMART_TOOL.md").write_text("---\n" + HEAD + front + "---\nbody\n", encoding="utf-8")
    (tool,) = harvest(tmp_path, Options(cache=False)).tools
    return tool


@pytest.mark.parametrize("case", sorted(KIT_READER))
def test_kit_yaml_subset_warns_where_the_kits_reader_fails(tmp_path: Path, case: str) -> None:
    front, verdict, line, words = KIT_READER[case]
    tool = _smart_manifest(tmp_path, front)
    assert tool.valid, [d.message for d in tool.diagnostics]  # YAML 1.2: valid, our verdicts stand
    kit = [d for d in tool.diagnostics if d.code == "kit-yaml-subset"]
    parses = next(c for c in tool.checks if c.id == "manifest-frontmatter-parses")
    assert parses.status.value == "passed"
    if verdict == "P":
        assert kit == [] and parses.detail == ""
        return
    (warning,) = kit
    assert warning.severity == "warning" and warning.line == line and words in warning.message
    assert warning.path == "dist/SMART_TOOL.md"
    if verdict == "F":
        assert "fails `manifest-frontmatter-parses` and skips the five rules" in warning.message
        assert f"fails on line {line}" in parses.detail and "skips the next five" in parses.detail
    else:
        assert "reads this valid YAML differently" in warning.message


def test_json_front_matter_is_named(tmp_path: Path) -> None:
    write(tmp_path / "dist/smart-tool.json", json.dumps({"manifest": "SMART_TOOL.md", "cli_argv": ["s"]}))
    front = {"smart_tool_format": 1, "name": "s", "version": "0.1.0", "description": "d", "use_cases": ["u"], "platforms": ["linux"]}
    (tmp_path / "dist/SMART_TOOL.md").write_text("---\n" + json.dumps(front, indent=2) + "\n---\nbody\n", encoding="utf-8")
    (tool,) = harvest(tmp_path, Options(cache=False)).tools
    (warning,) = [d for d in tool.diagnostics if d.code == "kit-yaml-subset"]
    assert warning.line == 2 and "JSON front matter" in warning.message and "`key: value`" in warning.message


# -- AIP-29 CLI.md is a `kind: cli` driver ------------------------------------------------------------

ARGV_PY = "import json, sys\nprint(json.dumps({'argv': sys.argv[1:]}))\n"
CLI_FRONT = {
    "name": "Echo CLI", "id": "echo", "description": "Prints its arguments.", "version": "1.0.0",
    "bin": "python3", "bin_args": ["argv.py"],
    "install": [{"method": "vendored", "path": "argv.py"}],
    "version_check": {"cmd": "python3 --version", "parse": "Python (\\S+)", "range": ">=3"},
    "sandbox": {"network": {"egress": [], "ingress": []}, "fs": {"read": [], "write": [], "deny": []},
                "exec": {"allow": True, "spawn": []}, "env": {"pass": []}},
    "output": {"default_format": "json"},
    "commands": {"say": {"hello": "./tools/say-hello/TOOL.md"}, "ping": "./tools/ping/TOOL.md"},
}


def _cli_bundle(root: Path, **changes) -> Path:
    folder = root / ".cli/echo"
    write(folder / "CLI.md", front_matter({**CLI_FRONT, **changes}, "\n## Reference\n\nAn echo.\n"))
    write(folder / "argv.py", ARGV_PY)
    write(folder / "tools/say-hello/TOOL.md", front_matter({
        "name": "Say hello", "id": "echo.say-hello", "description": "d", "version": "1.0.0",
        "inputs": {"type": "object"}, "outputs": {"type": "object"}, "mutates": [], "approval": "auto",
        "examples": [{"name": "plain", "input": {}, "output": {"argv": ["say", "hello"]}}],
    }))
    return folder


def test_a_cli_md_is_harvested_as_a_cli_driver_linked_to_its_tools(tmp_path: Path) -> None:
    _cli_bundle(tmp_path)
    write(tmp_path / "docs/CLI.md", "# How to use our command line\n")  # a document, not a manifest
    catalog = harvest(tmp_path, Options(cache=False))
    (driver,) = catalog.drivers
    assert driver.source == ".cli/echo/CLI.md" and driver.kind == "cli" and driver.id == "echo"
    assert [(e.tool_ref, e.metadata["cli"]["argv"]) for e in driver.implements] == [
        ("./tools/say-hello/TOOL.md", ["say", "hello"]), ("./tools/ping/TOOL.md", ["ping"])]
    assert driver.valid, [d.message for d in driver.diagnostics]
    (absent,) = [d for d in driver.diagnostics if d.code == "driver-tools-absent"]  # `ping` has no TOOL.md
    assert "./tools/ping/TOOL.md" in absent.message
    tool = tool_of(catalog, "echo.say-hello")
    assert [d.id for d in tool.drivers] == ["echo"]


def test_a_cli_md_is_checked_against_the_aip29_schema(tmp_path: Path) -> None:
    front = {k: v for k, v in CLI_FRONT.items() if k != "sandbox"}
    folder = tmp_path / ".cli/echo"
    write(folder / "CLI.md", front_matter({**front, "kind": "cli", "id": "has.dot"}))
    (driver,) = harvest(tmp_path, Options(cache=False)).drivers
    messages = " | ".join(d.message for d in driver.diagnostics if d.severity == ERROR)
    assert not driver.valid
    assert "sandbox" in messages and "kind" in messages and "has.dot" in messages, messages


def test_a_cli_md_runs_like_other_cli_drivers(tmp_path: Path) -> None:
    _cli_bundle(tmp_path)
    catalog, _ = run_check(tmp_path)
    tool = tool_of(catalog, "echo.say-hello")
    assert tool.drivers[0].run_status.get("echo.say-hello") == "ran"
    assert tool.status == Status.PASSED, (tool.status_detail, [e.detail for e in tool.examples])


def test_the_corpus_gh_driver_still_fails_the_cli_schema_only_as_a_cli_md(tmp_path: Path) -> None:
    # AIP-30's `gh` example is a DRIVER.md: checked as a driver (valid). Copied to a CLI.md, the
    # AIP-29 schema judges it, and it fails where the corpus says (no `commands`, extra `kind`).
    source = CORPUS / "agentproto/drivers/gh/DRIVER.md"
    if not source.is_file():
        pytest.skip("the shared corpus is not here")
    write(tmp_path / ".cli/gh/CLI.md", source.read_bytes())
    (driver,) = harvest(tmp_path, Options(cache=False)).drivers
    errors = [d for d in driver.diagnostics if d.severity == ERROR]
    messages = " | ".join(d.message for d in errors)
    assert "commands" in messages and "kind" in messages, messages
    # The corpus's own verdict with AIP-29's CLI.schema.json (SOURCES.md): invalid, 4 errors (our
    # diagnostics merge the two missing `sandbox` fields into one).
    assert len(jsonschemas.validate_bundled(aip29.SCHEMA, driver.fields)) == 4, messages


def test_the_kit_subset_check_survives_nesting_deeper_than_the_stack() -> None:
    from toolcatalog.formats import kitsubset

    deep = "".join(" " * i + "a:\n" for i in range(5000))
    assert kitsubset.check(deep) is None  # nothing to say; never a crash of the build


def test_a_cli_md_driver_is_on_its_tools_page(tmp_path: Path) -> None:
    _cli_bundle(tmp_path)
    mkdocs_project(tmp_path, {"run_examples": False})
    build(tmp_path)
    page = (tmp_path / "site/tools/echo.say-hello/index.html").read_text(encoding="utf-8")
    assert ".cli/echo/CLI.md" in page and "Echo CLI" in page
    entry = next(t for t in catalog(tmp_path)["tools"] if t["id"] == "echo.say-hello")
    assert [d["id"] for d in entry["drivers"]] == ["echo"]
