"""Contract quality findings (toolcatalog.quality) with file:line, and the `fail_on` gates on coverage
and on quality codes, in real builds."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from manifests import speccify_text, workspace_all_formats, write
from sitebuild import build, catalog, mkdocs_project, toolcatalog
from toolcatalog import pipeline, quality
from toolcatalog.options import Options, OptionsError

VAGUE = """\
---
name: {name}
description: {description}
inputs:
  type: object
  properties:
    text:
      type: string
      description: The text.
    mode:
      type: string
outputs:
  type: object
  properties:
    ok: {{type: boolean}}
effects: none
---

## Examples

### first
input: {{"text": "a"}}
output: {{"ok": true}}

### again
input: {{"text": "a"}}
output: {{"ok": true}}
"""


def findings(root: Path) -> dict[str, list[tuple[str, int | None, str]]]:
    build_ = pipeline.prepare(root, Options(run_examples=False))
    out: dict[str, list[tuple[str, int | None, str]]] = {}
    for d in build_.catalog.all_diagnostics():
        if d.code in quality.CODES:
            out.setdefault(d.code, []).append((d.path, d.line, d.message))
    return out


def test_each_finding_has_its_code_file_and_line(tmp_path: Path) -> None:
    write(tmp_path / ".agent/tools/frob/TOOL.md", VAGUE.format(name="frob", description="Frobnicates the widget."))
    found = findings(tmp_path)
    where = ".agent/tools/frob/TOOL.md"
    assert found["quality-property-undescribed"] == [(where, 10, "input property `mode` has no description")]
    assert found["quality-outputs-undescribed"] == [(where, 12, "the output schema describes none of its 1 field")]
    assert found["quality-description-no-result"] == [(where, 3, "the description never says what the tool returns")]
    assert found["quality-description-no-when"] == [(where, 3, "the description never says when to use the tool")]
    assert found["quality-examples-identical"] == [(where, 25, "example `again` gives the same input as `first`")]
    assert set(found) == set(quality.CODES) - {"quality-name-style", "quality-near-duplicate"}


def test_a_well_written_contract_has_no_finding(tmp_path: Path) -> None:
    text = (VAGUE.format(name="echo-text", description="Returns the text it is given; use it to test a host.")
            .replace("    mode:\n      type: string\n", "    mode:\n      type: string\n      description: How.\n")
            .replace("ok: {type: boolean}", "ok: {type: boolean, description: Whether it worked.}")
            .replace('### again\ninput: {"text": "a"}', '### again\ninput: {"text": "b"}'))
    write(tmp_path / ".agent/tools/echo-text/TOOL.md", text)
    assert findings(tmp_path) == {}


def test_near_duplicates_and_name_style_across_the_catalog(tmp_path: Path) -> None:
    text = "Returns the number of words in a text file; use it for word counts."
    for name in ("count-words", "word-count", "line_count"):
        description = text if name != "line_count" else "Returns how many lines a file has; use it before splitting it."
        write(tmp_path / f".agent/tools/{name}/TOOL.md", VAGUE.format(name=name, description=description))
    found = findings(tmp_path)
    assert [(path, line) for path, line, _m in found["quality-name-style"]] == [(".agent/tools/line_count/TOOL.md", 2)]
    assert "is snake_case while 2 of the catalog's 3 styled ids are kebab-case" in found["quality-name-style"][0][2]
    dupes = sorted((path, line) for path, line, _m in found["quality-near-duplicate"])
    assert dupes == [(".agent/tools/count-words/TOOL.md", 3), (".agent/tools/word-count/TOOL.md", 3)]
    assert [m for p, _l, m in found["quality-near-duplicate"] if "count-words" in p] == [
        "the description shares at least 80% of its words with that of `word-count`: an agent cannot tell which to pick"]


def test_near_duplicates_are_found_without_comparing_every_pair_and_match_the_pairwise_answer() -> None:
    import random

    from toolcatalog.model import Tool

    rng = random.Random(7)
    vocab = [f"w{i}" for i in range(60)]
    tools = []
    for i in range(120):
        base = rng.sample(vocab, 8) if i % 3 or not tools else tools[-1].description.split()[:8]
        words = base[:7] + [rng.choice(vocab)] if i % 5 == 0 else base
        tools.append(Tool(id=f"t{i}", name=f"t{i}", format="speccify", source=f"t{i}", abs_path=Path("/x"), description=" ".join(words)))
    fast = {(tool.id, other.id) for tool, others in quality.near_duplicates(tools) for other in others}
    sets = [(t, quality.words(t.description)) for t in tools]
    slow = set()
    for a, wa in sets:
        for b, wb in sets:
            if a is not b and min(len(wa), len(wb)) >= quality.MIN_WORDS and quality.similarity(wa, wb) >= quality.NEAR_DUPLICATE:
                slow.add((a.id, b.id))
    assert slow and fast == slow


def test_templated_descriptions_give_one_finding_per_tool() -> None:
    from toolcatalog.model import Tool

    topics = ["release notes", "build logs", "survey answers"]  # 6 of 10 words shared: not near-duplicates
    tools = [Tool(id=f"t{i}", name=f"t{i}", format="speccify", source=f"t{i}", abs_path=Path("/x"),
                  description=f"Counts words, lines and characters in {topics[i % 3]}.") for i in range(1500)]
    found = list(quality._near_duplicates(tools))
    assert len(found) == 1500  # one per tool, naming a few of the others
    first = next(d for t, d in found if t.id == "t0")
    assert first.message.endswith("with that of `t3`, `t6`, `t9`, `t12`, `t15` and 494 more: an agent cannot tell which to pick")


# -- fail_on gates -------------------------------------------------------------------------------------
def test_fail_on_options_forms_and_refusals() -> None:
    gates = Options.from_mapping({"fail_on": {"status": ["failed"], "codes": ["quality-near-duplicate"],
                                              "coverage_below": {"total": 0.6, "failure": 1}}}).fail_on
    assert list(gates) == ["failed", "quality-near-duplicate"] and gates.coverage_below == {"total": 0.6, "failure": 1.0}
    assert Options.from_mapping({"fail_on": ["invalid", {"coverage_below": 0.5}]}).fail_on.coverage_below == {"total": 0.5}
    assert Options.from_mapping({"fail_on": ["failed"]}).fail_on == ["failed"]
    for bad, words in [({"coverage_below": 1.5}, "score from 0 to 1"), ({"coverage_below": {"precision": 0.5}}, "no dimension"),
                       (["quality-nope"], "not a tool status"), ({"statuses": []}, "has no key")]:
        with pytest.raises(OptionsError, match=words):
            Options.from_mapping({"fail_on": bad})


def test_fail_on_coverage_below_fails_a_real_mkdocs_build(tmp_path: Path) -> None:
    workspace_all_formats(tmp_path)
    # Nothing runs, so nothing is covered: every tool's total is 0.
    mkdocs_project(tmp_path, {"run_examples": False, "fail_on": {"coverage_below": 0.6}})
    result = build(tmp_path, check=False)
    assert result.returncode != 0
    assert "tool(s) fail a fail_on gate" in result.stderr and "coverage total 0 below 0.6" in result.stderr
    # A threshold nothing is below passes: the gate judges scores, not its own presence.
    mkdocs_project(tmp_path, {"run_examples": False, "fail_on": {"coverage_below": {"effects": 0.9}}})
    build(tmp_path)
    tools = catalog(tmp_path)["tools"]
    assert tools and all(t["coverage"]["total"] == 0.0 for t in tools)
    # The same blocks in each tool's own file, and the scores in the MCP list's `_meta`.
    for entry in tools:
        own = json.loads((tmp_path / "site" / entry["json"]).read_text(encoding="utf-8"))
        assert own["coverage"] == entry["coverage"] and own["quality"] == entry["quality"]
    mcp = json.loads((tmp_path / "site/mcp-tools.json").read_text(encoding="utf-8"))
    by_id = {t["id"]: t for t in tools}
    for item in mcp["tools"]:
        entry = by_id[item["_meta"]["toolcatalog/id"]]
        scores = {"total": entry["coverage"]["total"], **{k: d["score"] for k, d in entry["coverage"]["dimensions"].items()}}
        assert item["_meta"]["toolcatalog/coverage"] == scores
        assert item["_meta"]["toolcatalog/quality-findings"] == entry["quality"]["findings"]


def test_fail_on_a_quality_code_fails_the_export(tmp_path: Path) -> None:
    write(tmp_path / ".agent/tools/frob/TOOL.md", VAGUE.format(name="frob", description="Frobnicates the widget."))
    write(tmp_path / "mkdocs.yml", "site_name: x\nplugins:\n  - toolcatalog:\n      run_examples: false\n"
                                   "      fail_on: [quality-examples-identical]\n")
    result = toolcatalog("export", "-o", str(tmp_path / "out"), str(tmp_path), cwd=tmp_path)
    assert result.returncode == 1
    assert "frob: fails fail_on: quality-examples-identical" in result.stderr  # code spans printed as their words


def test_check_coverage_prints_the_table(tmp_path: Path) -> None:
    write(tmp_path / ".agent/tools/frob/TOOL.md", VAGUE.format(name="frob", description="Frobnicates the widget."))
    write(tmp_path / ".agent/tools/frob/linux.py", "import json, sys\njson.load(sys.stdin)\nprint(json.dumps({'ok': True, 'extra': 1}))\n")
    write(tmp_path / ".agent/tools/frob/macos.py", "import json, sys\njson.load(sys.stdin)\nprint(json.dumps({'ok': True, 'extra': 1}))\n")
    result = toolcatalog("check", "--coverage", "--no-cache", "--sandbox", "off", str(tmp_path), cwd=tmp_path)
    lines = result.stdout.splitlines()
    assert lines[0].split() == ["TOOL", "STATUS", "TOTAL", "INPUTS", "OUTPUTS", "FAILURE", "EFFECTS", "FINDINGS"]
    # inputs: text set, text left out (never), mode set (never), mode left out: 2 of 4; outputs: ok seen; no failing example.
    assert lines[1].split() == ["frob", "passed", "50%", "50%", "100%", "0%", "-", "5"]
    assert lines[2:] == ["        uncovered: optional text never left out", "        uncovered: mode never set",
                         "        uncovered: no failing example", "        output keys not in the schema: extra"]


CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus"


@pytest.mark.skipif(not CORPUS.is_dir(), reason=f"corpus not found at {CORPUS}")
def test_every_corpus_tool_gets_coverage_and_quality_results() -> None:
    from toolcatalog import coverage

    paths = [p.relative_to(CORPUS).as_posix() for p in sorted((CORPUS / "agentproto/tools").glob("*/TOOL.md"))]
    build_ = pipeline.prepare(CORPUS, Options(paths=[*paths, "speccify", "smart-tools-catalog", "smart-tools-conformance"], run_examples=False,
                                             cache=False))  # the corpus is read-only: no parse cache in it
    tools = build_.catalog.tools
    assert len(tools) >= 40
    found = {(t.id, t.source): coverage.of(t) for t in tools}
    # Nothing ran, so nothing is covered; every tool still has a failure goal, so a total.
    assert all(c.total == 0.0 for c in found.values())
    documented = sorted(t.id for t in tools if any(e.has_output and isinstance(e.output, dict) and e.output.get("ok") is False
                                                   for e in t.examples))
    assert documented == ["gitlab-deploy-key", "verify-signatures", "verify-stream"]
    codes = {d.code for t in tools for d in t.diagnostics if d.code in quality.CODES}
    assert {"quality-near-duplicate", "quality-property-undescribed", "quality-outputs-undescribed"} <= codes
    # Each finding points at its line (a near-duplicate at the description of the tool it is on).
    lined = [d for t in tools for d in t.diagnostics if d.code in quality.CODES]
    assert lined and all(d.line for d in lined), [d for d in lined if not d.line]


def test_validate_counts_quality_findings_apart_from_warnings(tmp_path: Path) -> None:
    write(tmp_path / ".agent/tools/frob/TOOL.md", VAGUE.format(name="frob", description="Frobnicates the widget."))
    result = toolcatalog("validate", str(tmp_path), cwd=tmp_path)
    assert result.returncode == 0  # findings never make a manifest invalid
    lines = result.stdout.splitlines()
    assert ".agent/tools/frob/TOOL.md:10: warning: input property mode has no description" in lines
    assert lines[-2:] == ["5 contract quality findings (codes quality-*, docs/coverage.md)",
                          "1 tool, 0 invalid; 0 drivers; 0 errors, 0 warnings"]
