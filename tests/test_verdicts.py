"""Verdicts you can trust: one definition of read-only everywhere, counts that say what ran, and
results that show no machine paths, on pages as in the catalog."""

from __future__ import annotations

import itertools
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from manifests import smart_tool
from sitebuild import build, mkdocs_project, run_check, tool_of, write
from toolcatalog.formats.smarttool import STATIC_RULE_IDS
from toolcatalog import pipeline
from toolcatalog.model import Effects
from toolcatalog.options import Options
from toolcatalog.render import Renderer, facets
from toolcatalog.safety import annotations

ABSENT = object()
MUTATES = {"absent": ABSENT, "empty": [], "one": ["workspace:/scratch"], "malformed": "workspace:/scratch"}
RISKS = {"absent": ABSENT, "0": 0, "1": 1, "2": 2, "3": 3, "malformed": "high"}
APPROVALS = {"absent": ABSENT, "auto": "auto", "on-mutate": "on-mutate", "always": "always"}


def aip14(tool_id: str, **fields: Any) -> str:
    data: dict[str, Any] = {
        "name": tool_id, "id": tool_id, "description": "A tool.", "version": "1.0.0",
        "inputs": {"type": "object"}, "outputs": {"type": "object"},
        "examples": [{"name": "one", "input": {}, "output": {}}],
    }
    data.update({k: v for k, v in fields.items() if v is not ABSENT})
    return "---\n" + yaml.safe_dump(data, sort_keys=False) + "---\n"


def expected_read_only(mutates: Any, risk: Any) -> bool | None:
    """The definition, written out by hand: no mutation and risk level 0."""
    mutates = [] if mutates is ABSENT else mutates  # AIP-14's defaults: mutates [], risk 0
    risk = 0 if risk is ABSENT else risk
    if (isinstance(mutates, list) and mutates) or (isinstance(risk, int) and risk >= 1):
        return False
    if isinstance(mutates, list) and risk == 0:
        return True
    return None


def test_read_only_is_one_definition_for_badge_filter_catalog_and_mcp(tmp_path: Path) -> None:
    combos = list(itertools.product(MUTATES, RISKS, APPROVALS))
    for m, r, a in combos:
        write(tmp_path / ".tools" / f"t-{m}-{r}-{a}" / "TOOL.md",
              aip14(f"t.{m}.{r}.{a}", mutates=MUTATES[m], risk_level=RISKS[r], approval=APPROVALS[a]))
    built = pipeline.prepare(tmp_path, Options(run_examples=False))
    catalog = built.catalog
    assert len(catalog.tools) == len(combos) == 96
    files = built.outputs()
    entries = {t["id"]: t for t in json.loads(files["catalog.json"])["tools"]}
    mcp = {t["_meta"]["toolcatalog/id"]: t for t in json.loads(files["mcp-tools.json"])["tools"]}
    renderer = Renderer()
    index = renderer.index_page(catalog, lambda target: target)
    rows = dict(re.findall(r'<tr data-status="[^"]*" data-format="[^"]*" data-safety="([^"]*)"[^>]*>\s*<td[^>]*><a href="([^"]*)"', index)[i][::-1]
                for i in range(len(catalog.tools)))
    # The safety filter's classes: read-only exactly when read-only; not declared when unknown.
    word = {True: "read-only", None: "undeclared"}
    seen_filter_values = set()
    for m, r, a in combos:
        tool = catalog.tool(f"t.{m}.{r}.{a}")
        assert tool is not None
        verdict = expected_read_only(MUTATES[m], RISKS[r])
        assert tool.effects.read_only is verdict, (m, r, a)
        # catalog.json
        assert entries[tool.id]["effects"]["read_only"] is verdict
        # (an unknown hint is stated as MCP's default, false)
        assert entries[tool.id]["annotations"]["readOnlyHint"] is (verdict is True)
        # mcp-tools.json (valid tools only are exported)
        if tool.valid:
            assert mcp[tool.id]["annotations"]["readOnlyHint"] is (verdict is True), (m, r, a)
        else:
            assert tool.id not in mcp
        # the index filter value
        if verdict is False:
            assert rows[tool.url] in ("writes", "external", "irreversible"), (m, r, a)
        else:
            assert rows[tool.url] == word[verdict], (m, r, a)
        seen_filter_values.add(rows[tool.url])
        # the badge and the contract table on the tool's page
        page = renderer.tool_page(tool, catalog, lambda target: target)
        badges = page.split('<div class="tc-badges"', 1)[1].split("</div>", 1)[0]
        # (nothing ran: a read-only contract is "declared, not observed", never the green badge)
        assert ('class="tc-badge tc-read-only' in badges) is (verdict is True), (m, r, a)
        assert 'class="tc-badge tc-read-only"' not in badges, (m, r, a)
        assert ('class="tc-badge tc-mutating"' in badges) is (verdict is False), (m, r, a)
        contract = page.split('<table class="tc-contract">', 1)[1].split("</table>", 1)[0]
        assert ("(read-only)" in contract) is (verdict is True), (m, r, a)
    assert seen_filter_values == {"read-only", "writes", "external", "irreversible", "undeclared"}
    assert facets(catalog)["safety"] == ["read-only", "writes", "external", "irreversible", "undeclared"]


def test_the_issue_case_is_not_read_only_anywhere(tmp_path: Path) -> None:
    # `mutates: []`, `risk_level: 3`, `approval: always` was shown as read-only by the badge,
    # the filter and the catalog while the MCP list called it destructive.
    effects = Effects(mutates=[], risk_level=3, approval="always")
    assert effects.read_only is False
    hints = annotations(effects)
    assert hints["readOnlyHint"] is False and hints["destructiveHint"] is True


def speccify_counts_workspace(root: Path, incomplete: bool = True) -> None:
    body = """
## Examples

### good
input: {"n": 1}
output: {"n": 1}

### bad
input: {"n": 2}
output: {"n": 3}

### incomplete
input: {"n": 4}
""" if incomplete else """
## Examples

### good
input: {"n": 1}
output: {"n": 1}
"""
    front = "name: counter\ndescription: Echo n.\ninputs: {type: object}\noutputs: {type: object}\neffects: none\n"
    write(root / ".agent/tools/counter/TOOL.md", f"---\n{front}---\n{body}")
    write(root / ".agent/tools/counter/linux.py", "import json, sys\nprint(json.dumps(json.load(sys.stdin)))\n")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the implementation is linux.py")
def test_counts_say_what_ran_on_the_page_in_the_catalog_and_on_the_command_line(tmp_path: Path) -> None:
    speccify_counts_workspace(tmp_path)
    mkdocs_project(tmp_path, {"cache": False})
    build(tmp_path)
    counts = "1 passed, 1 failed, 1 skipped"
    entry = json.loads((tmp_path / "site/catalog.json").read_text())["tools"][0]
    # Invalid (the incomplete example): why comes first, then what ran.
    invalid = "example 'incomplete' has no `output:` line"
    assert entry["status_detail"] == f"{invalid}; {counts} (linux.py)"
    assert [e["status"] for e in entry["examples"]] == ["passed", "failed", "skipped"]
    assert entry["examples"][2]["detail"] == "incomplete example: it needs an `input:` and an `output:` line"
    page = (tmp_path / "site/tools/counter/index.html").read_text()
    assert f"3 examples: {counts}." in page
    result = subprocess.run([sys.executable, "-m", "toolcatalog.cli", "check", "--no-cache", str(tmp_path)],
                            capture_output=True, text=True, timeout=120)
    # The incomplete example is an error in the manifest, so the tool is invalid; its complete
    # examples still ran.
    plain = invalid.replace("`", "")  # the command line prints code spans as plain text
    assert f"counter  speccify    invalid              {plain}; {counts} (linux.py)" in result.stdout


def test_nothing_run_is_skipped_with_the_reason_never_passed(tmp_path: Path) -> None:
    speccify_counts_workspace(tmp_path, incomplete=False)
    built = pipeline.prepare(tmp_path, Options(run_examples=False))
    (tool,) = built.catalog.tools
    assert tool.status == "not-run" and tool.status_detail == "not run: this build did not run examples and checks"
    assert {e.status.value for e in tool.examples} == {"skipped"}
    assert all(e.detail for e in tool.examples)


def test_machine_paths_from_tool_output_reach_neither_pages_nor_catalog(tmp_path: Path) -> None:
    # A tool harvested from outside the workspace (`paths: [../other]`) prints its own absolute
    # path, the home folder and its working folder.
    other = tmp_path / "other" / ".agent/tools/leaky"
    write(other / "TOOL.md", "---\nname: leaky\ndescription: d\ninputs: {type: object}\noutputs: {type: object}\n"
          "effects: none\n---\n## Examples\n\n### one\ninput: {}\noutput: {\"where\": \"x\"}\n")
    write(other / "linux.py", "import os, sys, json\n"
          "print('error in', os.path.abspath(__file__), 'home', os.path.expanduser('~/.ssh'), file=sys.stderr)\n"
          "print(json.dumps({'where': os.getcwd()}))\n")
    ws = tmp_path / "ws"
    mkdocs_project(ws, {"paths": ["../other"], "cache": False, "sandbox": "off"})  # in the sandbox HOME is /scratch/home
    build(ws)
    site = ws / "site"
    home = str(Path("~").expanduser())
    for path in site.rglob("*"):
        if path.suffix in (".html", ".json", ".txt") and path.is_file():
            text = path.read_text(encoding="utf-8")
            assert str(tmp_path) not in text, path
            assert home + "/" not in text and home + "\\" not in text, path
    page = (site / "tools/leaky/index.html").read_text()
    assert "error in ../other/.agent/tools/leaky/linux.py home ~/.ssh" in page
    entry = json.loads((site / "catalog.json").read_text())["tools"][0]
    assert entry["examples"][0]["actual"] == {"where": "../other/.agent/tools/leaky"}


# -- smart tools: checks that did not run are never results --------------------------------------

FAILING_HELP_CLI = """
import sys
if sys.argv[1:] == ["--help"]:
    print("usage: samplegood", file=sys.stderr)
    sys.exit(1)
if sys.argv[1:2] == ["stats"]:
    print("fatal: SAMPLE_PROVIDER_KEY is not set", file=sys.stderr)
    sys.exit(3)
sys.exit(2)
"""


def test_a_smart_tool_whose_program_is_not_installed_is_a_missing_requirement(tmp_path: Path) -> None:
    dist = smart_tool(tmp_path, "samplegood", smoke=["stats"])
    (dist / "smart-tool.json").write_text(json.dumps({"manifest": "SMART_TOOL.md", "cli_argv": ["samplegood-not-installed"]}))
    catalog, stats = run_check(tmp_path)
    tool = tool_of(catalog, "samplegood")
    assert stats.processes == 0
    assert tool.status == "missing-requirement" and tool.status_detail == "not on PATH: samplegood-not-installed"
    runtime = [c for c in tool.checks if c.id not in STATIC_RULE_IDS]
    assert len(runtime) == 7 and {c.status.value for c in runtime} == {"skipped"}
    assert all(c.detail.startswith("not on PATH: samplegood-not-installed") for c in runtime)


def test_a_failing_help_skips_the_rules_that_need_it_and_failures_show_stderr(tmp_path: Path) -> None:
    smart_tool(tmp_path, "failing", FAILING_HELP_CLI, smoke=["stats"])
    mkdocs_project(tmp_path, {"cache": False, "paths": ["dists"]})
    build(tmp_path)
    entry = json.loads((tmp_path / "site/catalog.json").read_text())["tools"][0]
    checks = {c["id"]: c for c in entry["checks"]}
    assert checks["loads-without-provider"]["status"] == "failed"
    assert checks["loads-without-provider"]["detail"] == "`--help` with no provider configured: exit code 1: usage: samplegood"
    disclose = checks["help-discloses-model-backed"]
    assert disclose["status"] == "skipped" and disclose["detail"] == "`--help` did not succeed (see loads-without-provider)"
    smoke = checks["deterministic-capability-runs"]
    assert smoke["status"] == "failed" and smoke["detail"].endswith("exit code 3: fatal: SAMPLE_PROVIDER_KEY is not set")
    page = (tmp_path / "site/tools/failing/index.html").read_text()
    assert '<pre class="tc-stderr"><code>fatal: SAMPLE_PROVIDER_KEY is not set' in page
