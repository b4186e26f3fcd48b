"""Every crash and hang reported against hostile manifests (issue 9), kept as a named test: each
gives a diagnostic, never a traceback or a hang. Sizes are chosen so the old, quadratic (or
cubic) code would take minutes or hours; the tests assert results only, never time."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
import yaml

from manifests import PLATFORM, aip_driver, aip_tool, front_matter, smart_tool, speccify_tool, write
from sitebuild import build, mkdocs_project, run_check, tool_of, toolcatalog
from toolcatalog import pipeline, safeyaml
from toolcatalog.harvest import harvest
from toolcatalog.model import Driver
from toolcatalog.options import Options
from toolcatalog.render import Renderer

ECHO = "import json, sys\nprint(json.dumps(json.load(sys.stdin)))\n"


def page_of(root: Path, tool_id: str) -> str:
    built = pipeline.prepare(root, Options(run_examples=False))
    tool = built.catalog.tool(tool_id)
    assert tool is not None, [t.id for t in built.catalog.tools]
    return Renderer().tool_page(tool, built.catalog, lambda target: target)


def speccify_body(root: Path, name: str, body: str) -> Path:
    front = {"name": name, "description": "d", "inputs": {"type": "object"}, "outputs": {"type": "object"}, "effects": "none"}
    return write(root / ".agent/tools" / name / "TOOL.md", front_matter(front, body))


# -- the Examples grammar ------------------------------------------------------------------------


@pytest.mark.parametrize("case", ["input:" + "\n" * 900_000, "input: x" + " " * 900_000 + "y", "## x" + " " * 900_000 + "y"])
def test_examples_grammar_takes_linear_time_on_a_near_cap_manifest(tmp_path: Path, case: str) -> None:
    # `^\s*(input|output):` took 76 s on 40 KB of blank lines; these are 900 KB.
    speccify_body(tmp_path, "blank", "## Examples\n\n### case\n" + case + "\n")
    catalog = harvest(tmp_path)
    (tool,) = catalog.tools
    assert tool.diagnostics and not tool.valid  # an incomplete or broken case, reported


# -- Markdown ------------------------------------------------------------------------------------


def test_three_hundred_nested_list_items_render_as_text(tmp_path: Path) -> None:
    body = "- " * 300 + "item\n\n" + "".join("  " * depth + "- item\n" for depth in range(100))  # RecursionError
    speccify_body(tmp_path, "nested", body)
    result = toolcatalog("validate", str(tmp_path))
    assert result.returncode == 0, result.stdout
    page = page_of(tmp_path, "nested")
    assert "Shown as plain text: it nests lists or quotes more than 18 levels deep." in page
    assert page.count("- item") == 101  # nothing dropped


@pytest.mark.parametrize("run", ["[", "[a](", "![", "a\n=\n", "---\n"])
def test_runs_that_made_python_markdown_quadratic_render(tmp_path: Path, run: str) -> None:
    # 8 KB of `[` took 18 s; 60 KB would have taken about 17 minutes.
    speccify_body(tmp_path, "runs", run * (60_000 // len(run)))
    page = page_of(tmp_path, "runs")
    assert '<div class="tc-body">' in page


def test_markdown_longer_than_the_budget_is_plain_text(tmp_path: Path) -> None:
    speccify_body(tmp_path, "long", "word " * 20_000)
    page = page_of(tmp_path, "long")
    assert "Shown as plain text: it is longer than 65,536 characters." in page


# -- JSON depth ----------------------------------------------------------------------------------


def test_json_nested_500_deep_in_an_input_line(tmp_path: Path) -> None:
    speccify_body(tmp_path, "deep", "## Examples\n\n### deep\ninput: " + "[" * 500 + "]" * 500 + "\noutput: {}\n")
    (tool,) = harvest(tmp_path).tools
    (error,) = [d for d in tool.diagnostics if d.code == "example-json"]
    assert "nests more than 64 levels deep" in error.message
    page_of(tmp_path, "deep")  # renders


@pytest.mark.skipif(not sys.platform.startswith(("linux", "darwin")), reason="POSIX implementation file")
def test_json_nested_500_deep_printed_by_a_tool_is_a_failed_example_and_caches_safely(tmp_path: Path) -> None:
    deep = "import sys\nsys.stdin.read()\nprint('[' * 500 + ']' * 500)\n"
    speccify_tool(tmp_path, "printer", [("deep", {}, {})], files={f"{PLATFORM}.py": deep})
    for _ in range(2):  # the second build reads the cached result: it was the crash that repeated
        catalog, stats = run_check(tmp_path, cache=True, cache_dir=str(tmp_path / ".cache-results"))
        example = tool_of(catalog, "printer").examples[0]
        assert example.status == "failed"
        assert example.detail == "stdout is JSON nested more than 64 levels deep, which is not accepted"
    assert stats.cached == 1


def test_diff_of_a_deeply_nested_catalog_is_an_error_not_a_crash(tmp_path: Path) -> None:
    good = {"version": 2, "tools": [{"id": "a", "inputs": {"type": "object"}}]}
    write(tmp_path / "old.json", json.dumps(good))
    deep = {"version": 2, "tools": [{"id": "a", "inputs": json.loads("[" * 900 + "]" * 900)}]}
    write(tmp_path / "new.json", json.dumps(deep))
    result = toolcatalog("diff", str(tmp_path / "old.json"), str(tmp_path / "new.json"))
    assert result.returncode == 2 and "nests more than 80 levels deep" in result.stderr, result.stderr


# -- type confusion ------------------------------------------------------------------------------


@pytest.mark.parametrize("inputs", [{"type": "object", "required": 5}, {"type": "object", "properties": [{}]}])
def test_malformed_aip14_inputs_with_a_driver(tmp_path: Path, inputs: dict) -> None:
    aip_tool(tmp_path, "demo.odd", examples=[{"name": "one", "input": {}, "output": {}}], inputs=inputs)
    aip_driver(tmp_path, "odd-cli", "demo.odd", bin="python3", entry={"schema_narrowing": {"drop_inputs": ["a"]}})
    catalog = harvest(tmp_path)
    tool = tool_of(catalog, "demo.odd")
    assert not tool.valid and [d.id for d in tool.drivers] == ["odd-cli"]
    assert not any(d.code == "internal-error" for d in catalog.all_diagnostics())
    page_of(tmp_path, "demo.odd")


def test_a_lone_driver_with_a_malformed_narrowing(tmp_path: Path) -> None:
    write(tmp_path / ".drivers/lone/DRIVER.md", front_matter({
        "name": "Lone", "id": "lone", "description": "d", "version": "1.0.0", "kind": "cli", "bin": "x",
        "implements": [{"tool": "nowhere", "schema_narrowing": {"drop_inputs": 5}}],
    }))
    catalog = harvest(tmp_path)
    (driver,) = catalog.drivers
    assert driver.implements[0].drop_inputs == []
    assert {d.code for d in driver.diagnostics} >= {"schema", "driver-unresolved"}


def test_speccify_required_holding_a_list_renders(tmp_path: Path) -> None:
    speccify_body(tmp_path, "req", "body\n")
    path = tmp_path / ".agent/tools/req/TOOL.md"
    path.write_text(path.read_text().replace("inputs:\n  type: object", "inputs:\n  type: object\n  required: [[]]\n  properties: {a: {type: string}}"))
    page = page_of(tmp_path, "req")
    assert "not a valid schema" in page


# -- page and file names -------------------------------------------------------------------------


def test_ids_that_look_like_files_and_user_pages(tmp_path: Path) -> None:
    for tool_id in ("index.html", "x", "x.json", "setup"):
        aip_tool(tmp_path, tool_id, examples=[{"name": "one", "input": {}, "output": {}}])
    write(tmp_path / "docs/tools/setup/index.md", "# Our own setup page\n")
    mkdocs_project(tmp_path, {"run_examples": False})
    result = build(tmp_path)  # `index.html` crashed the build (IsADirectoryError)
    site = tmp_path / "site"
    catalog = json.loads((site / "catalog.json").read_text())
    urls = {t["id"]: t["url"] for t in catalog["tools"]}
    # The site's own page keeps tools/setup/; the tool gets the next free URL, as any clash does.
    assert urls == {"index.html": "tools/index.html_/", "setup": "tools/setup_2/", "x": "tools/x/", "x.json": "tools/x.json_/"}
    for tool_id, url in urls.items():
        assert (site / url / "index.html").is_file(), tool_id
    assert (site / "tools/x.json").is_file() and (site / "tools/x.json_.json").is_file()
    assert json.loads((site / "tools/x.json").read_text())["id"] == "x"
    # The site's own page is kept, and a warning says so.
    assert "Our own setup page" in (site / "tools/setup/index.html").read_text()
    assert "the site's own page tools/setup/index.md has the URL of tool 'setup'" in result.stderr


# -- harvest size --------------------------------------------------------------------------------


def test_harvest_of_a_thousand_smart_tools(tmp_path: Path) -> None:
    # Finding each manifest's distribution was cubic: 200 tools took over 100 s.
    for n in range(1000):
        dist = tmp_path / "dists" / f"t{n}"
        write(dist / "smart-tool.json", json.dumps({"manifest": "src/p/SMART_TOOL.md", "cli_argv": ["t"]}))
        write(dist / "src/p/SMART_TOOL.md", front_matter({
            "smart_tool_format": 1, "name": f"t{n}", "version": "1.0.0", "description": "d",
            "use_cases": ["x"], "platforms": ["linux"],
        }))
    catalog = harvest(tmp_path)
    assert len(catalog.tools) == 1000 and all(t.valid for t in catalog.tools)
    assert {c.status.value for t in catalog.tools for c in t.checks if c.id == "manifest-single-per-root"} == {"passed"}


def test_linking_drivers_never_compares_drivers_field_by_field(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # `driver not in tool.drivers` compared whole dataclasses: 4,000 drivers took 28 s.
    aip_tool(tmp_path, "demo.many", examples=[{"name": "one", "input": {}, "output": {}}])
    for n in range(300):
        aip_driver(tmp_path, f"d{n}", "demo.many", bin="x")

    def refuse(self: Driver, other: object) -> bool:
        raise AssertionError("drivers compared with ==")

    monkeypatch.setattr(Driver, "__eq__", refuse)
    catalog = harvest(tmp_path)
    assert len(tool_of(catalog, "demo.many").drivers) == 300


# -- files ---------------------------------------------------------------------------------------


def _cached_workspace(root: Path) -> Path:
    speccify_tool(root, "adder", [("one", {"a": 1}, {"a": 1})], files={f"{PLATFORM}.py": ECHO})
    return root / ".cache-results"


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs are POSIX")
@pytest.mark.parametrize("plant", ["link to /dev/zero", "fifo"])
def test_a_planted_cache_entry_that_is_not_a_file(tmp_path: Path, plant: str) -> None:
    cache = _cached_workspace(tmp_path)
    run_check(tmp_path, cache=True, cache_dir=str(cache))
    entries = list(cache.rglob("*.json"))  # results, and parsed manifests
    assert entries
    for entry in entries:
        entry.unlink()
        if plant == "fifo":
            os.mkfifo(entry)  # reading it would wait forever for a writer
        else:
            entry.symlink_to("/dev/zero")  # reading it would exhaust memory
    catalog, stats = run_check(tmp_path, cache=True, cache_dir=str(cache))
    assert stats.cached == 0 and tool_of(catalog, "adder").status == "passed"


@pytest.mark.parametrize("name", ["pyproject.toml", "package.json"])
def test_package_files_outside_the_repository_are_not_read(tmp_path: Path, name: str) -> None:
    outside = tmp_path / "elsewhere" / name
    write(outside, '[project]\nversion = "9.9.9-secret"\n' if name == "pyproject.toml" else '{"version": "9.9.9-secret"}')
    repo = tmp_path / "repo"
    smart_tool(repo, "linked", smoke=["stats"])
    dist = repo / "dists/linked"
    (dist / "pyproject.toml").unlink()
    (dist / name).symlink_to(outside)
    catalog = harvest(repo)
    tool = tool_of(catalog, "linked")
    assert "9.9.9-secret" not in json.dumps([d.as_dict() for d in tool.diagnostics] + [c.as_dict() for c in tool.checks])
    check = next(c for c in tool.checks if c.id == "manifest-version-matches-package")
    assert check.status == "skipped" and "outside the folder" in check.detail


def test_libyaml_parses_manifests_when_it_is_installed() -> None:
    if getattr(yaml, "__with_libyaml__", False):
        assert safeyaml._Composer is safeyaml.LibyamlComposer
    big = "\n".join(f"k{i}: {'v' * 40} {i}" for i in range(20_000))  # about 1 MiB
    assert len(safeyaml.load(big).data) == 20_000


# -- log lines -----------------------------------------------------------------------------------


def test_control_characters_from_yaml_escapes_never_reach_the_terminal(tmp_path: Path) -> None:
    # `"\e[2K"` and `"\0"` are YAML escapes: the raw text holds no control character, the value does.
    front = 'name: bad\ndescription: d\ninputs: {type: object}\noutputs: {type: object}\neffects: none\n"\\e[2Kevil\\0": 1\nplatforms: ["\\e]0;title\\a"]\n'
    write(tmp_path / ".agent/tools/bad/TOOL.md", f"---\n{front}---\n")
    result = toolcatalog("validate", str(tmp_path))
    assert "\x1b" not in result.stdout and "\x00" not in result.stdout and "\x07" not in result.stdout
    assert "\\x1b[2Kevil\\x00" in result.stdout
    mkdocs_project(tmp_path, {"run_examples": False})
    log = build(tmp_path).stderr
    assert "\x1b" not in log and "\x00" not in log and "\\x1b[2Kevil\\x00" in log
