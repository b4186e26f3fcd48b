"""Pages a reviewer can link and reproduce: stable anchors, reproduction commands, each reason once.

Tool pages are rendered by the real renderer from tools harvested and checked for real (real
subprocesses, in the sandbox the machine has); each reproduction command is run by a real
`sh`, with attacker text in its input.
"""

from __future__ import annotations

import html
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from manifests import ECHO_STDIN_PY, PLATFORM, aip_tool, smart_tool, speccify_tool
from sitebuild import CORPUS, run_check, tool_of
import toolcatalog.render as render  # the module (the package also exports a function of that name)
from toolcatalog import nav
from toolcatalog.harvest import harvest
from toolcatalog.options import Options


def page(tool, found) -> str:  # type: ignore[no-untyped-def]
    return render.Renderer().tool_page(tool, found, url_for=lambda p: p)


def ids(text: str) -> list[str]:
    return re.findall(r'\bid="([^"]+)"', text)


# -- anchors -------------------------------------------------------------------------------------------


def test_example_anchors_come_from_titles_and_survive_an_insertion(tmp_path: Path) -> None:
    cases = [("Reverse a word", {"text": "ab"}, {"text": "ab"}), ("Empty input", {"text": ""}, {"text": ""})]
    speccify_tool(tmp_path, "echo", cases, files={f"{PLATFORM}.py": ECHO_STDIN_PY})
    found, _ = run_check(tmp_path)
    before = page(tool_of(found, "echo"), found)
    speccify_tool(tmp_path, "echo", [("A new first one", {"text": "x"}, {"text": "x"}), *cases],
                  files={f"{PLATFORM}.py": ECHO_STDIN_PY})
    found, _ = run_check(tmp_path)
    after = page(tool_of(found, "echo"), found)
    for anchor in ("tc-ex-reverse-a-word", "tc-ex-empty-input", "tc-ex-reverse-a-word-run-implementation"):
        assert f'id="{anchor}"' in before and f'id="{anchor}"' in after
        # A visible link with an accessible name, to the anchor itself.
        assert re.search(rf'<a class="tc-anchor" href="#{anchor}" aria-label="Link to [^"]+">¶</a>', after)
    assert 'id="tc-ex-a-new-first-one"' in after
    assert "tc-example-1" not in after  # no positional ids left
    assert len(ids(after)) == len(set(ids(after)))


def test_anchors_are_unique_and_safe_whatever_the_titles() -> None:
    from toolcatalog import anchors

    titles = ["Same", "same", "Same!", "same-2", "", "<script>\"'", "Ünïcode café", "中文"]
    made = anchors.unique("tc-ex-", titles)
    assert len(set(made)) == len(made)
    assert all(re.fullmatch(r"tc-ex-[a-z0-9-]+", a) for a in made), made
    assert made[:3] == ["tc-ex-same", "tc-ex-same-2", "tc-ex-same-3"]
    assert anchors.slug("Ünïcode café") == "unicode-cafe"
    assert len(anchors.slug("x" * 500)) <= anchors.MAX_SLUG


# -- reproduction commands ------------------------------------------------------------------------------

HOSTILE = {"text": "it's \"quoted\" $(touch PWNED) `touch PWNED2` ; touch PWNED3 \\n back\\slash\nnew line \u202e"}


def test_the_reproduction_command_repeats_the_run_and_runs_nothing_else(tmp_path: Path) -> None:
    speccify_tool(tmp_path, "echo", [("hostile input", HOSTILE, HOSTILE)], files={f"{PLATFORM}.py": ECHO_STDIN_PY})
    found, _ = run_check(tmp_path)
    tool = tool_of(found, "echo")
    assert tool.examples[0].status.value == "passed", tool.examples[0].detail
    text = page(tool, found)
    commands = [html.unescape(c) for c in re.findall(r'<pre class="tc-copy"><code>(.*?)</code></pre>', text, re.S)]
    assert commands[0] == "toolcatalog check --tool echo"
    run = [c for c in commands if c.startswith("cd -- ")]
    assert len(run) == 1 and "\n" not in run[0] and "\u202e" not in run[0]
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    done = subprocess.run(["sh", "-c", run[0]], cwd=tmp_path, capture_output=True, text=True, env=env, timeout=60)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == HOSTILE  # the program got exactly the example's input
    assert not list(tmp_path.rglob("PWNED*"))  # and the shell ran nothing of it


def test_a_tool_id_in_the_check_command_is_quoted() -> None:
    from toolcatalog.model import Tool

    tool = Tool(id="x'; touch PWNED; '", name="x", format="aip-14", source=".tools/x/TOOL.md", abs_path=Path("/x"))
    from toolcatalog import repro

    command = repro.check_command(tool)
    done = subprocess.run(["sh", "-c", f"printf '%s\\n' {command.removeprefix('toolcatalog check --tool ')}"],
                          capture_output=True, text=True, timeout=30)
    assert done.stdout == tool.id + "\n"


# -- each reason once -----------------------------------------------------------------------------------


def test_the_not_run_reason_is_said_once_per_page(tmp_path: Path) -> None:
    aip_tool(tmp_path, "notes.append", [{"name": "add a line", "input": {"line": "x"}, "output": {}}],
             mutates=["workspace:/notes/*"], approval="on-mutate")
    found, _ = run_check(tmp_path)
    tool = tool_of(found, "notes.append")
    assert tool.status.value == "not-run"
    text = page(tool, found)
    assert text.count("allow_mutating") == 1, tool.status_detail
    assert 'href="#tc-verdict"' in text and 'id="tc-verdict"' in text


CATALOG_COPY = CORPUS / "smart-tools-catalog" / "gmail"


@pytest.mark.skipif(not CATALOG_COPY.is_dir(), reason="the shared corpus is not here")
def test_a_smart_tool_cascade_says_its_cause_once() -> None:
    found = harvest(CATALOG_COPY.parent, Options(paths=["gmail"]))
    tool = tool_of(found, "gmail")
    from toolcatalog.conformance import engine

    engine.check(found, Options(paths=["gmail"], cache=False, jobs=1))
    text = page(tool, found)
    assert text.count("the tool runs from its distribution") == 1
    assert 'rowspan="7"' in text  # seven runtime rules, one cell
    assert all(f'id="tc-check-{c.id}"' in text for c in tool.checks)


def test_a_never_started_program_does_not_pass_no_hang(tmp_path: Path) -> None:
    # `python3 missing.py`: the interpreter starts, the program never does; nothing hangs.
    dist = smart_tool(tmp_path, "ghost")
    (dist / "smart-tool.json").write_text(json.dumps({"manifest": "SMART_TOOL.md", "cli_argv": ["python3", "missing.py"]}))
    found, _ = run_check(tmp_path)
    checks = {c.id: c for c in tool_of(found, "ghost").checks}
    assert checks["loads-without-provider"].status.value == "failed"
    assert checks["no-hang-stdin-closed"].status.value == "skipped", checks["no-hang-stdin-closed"]
    assert "not observed" in checks["no-hang-stdin-closed"].detail


# -- the index -----------------------------------------------------------------------------------------


def test_index_reasons_are_never_cut_mid_phrase(tmp_path: Path) -> None:
    aip_tool(tmp_path, "notes.append", [{"name": "add a line", "input": {"line": "x"}, "output": {}}],
             mutates=["workspace:/notes/*"], approval="on-mutate")
    found, _ = run_check(tmp_path)
    tool = tool_of(found, "notes.append")
    lead, rest = render.reason_parts(tool)
    whole = re.sub(r"<[^>]+>", "", str(render.pageview.reason(tool)))
    assert rest, "this reason is long enough to be split"
    shown = re.sub(r"<[^>]+>", "", str(lead))
    assert re.sub(r"<[^>]+>", "", f"{lead} {rest}") == whole  # nothing dropped
    assert whole[len(shown)] == " " and not shown.endswith(" ")  # between words, never inside one
    assert "allow_mutating" in re.sub(r"<[^>]+>", "", str(rest))  # the key words are on the page, under "more"
    text = render.Renderer().index_page(found, url_for=lambda p: p)
    assert '<details class="tc-reason-more"><summary>more</summary>' in text
    # A phrase boundary wins over a word boundary when there is one before the limit.
    from toolcatalog.model import Tool

    phrased = Tool(id="x", name="x", format="aip-14", source="x", abs_path=Path("/x"), status_detail="a" * 30 + "; " + "b " * 40)
    phrased.status = render.Status.FAILED
    assert str(render.reason_parts(phrased)[0]) == "a" * 30 + ";"
    assert "line-clamp" not in (render.templates_dir() / "toolcatalog/assets/toolcatalog.css").read_text().split(".tc-reason {")[1].split("}")[0]


def test_duplicate_ids_show_their_path_in_the_index_and_the_nav(tmp_path: Path) -> None:
    for folder in ("one", "two"):
        aip_tool(tmp_path / folder, "same.id", [])
    found = harvest(tmp_path, Options())
    assert [t.id for t in found.tools] == ["same.id", "same.id"]
    text = render.Renderer().index_page(found, url_for=lambda p: p)
    for tool in found.tools:
        assert f'<small class="tc-dup-path" title="Its id is shared with other manifests: this one is {tool.source}">{tool.source}</small>' in text
    shared = render.shared_ids(found.tools)
    titles = {nav.nav_title(t, shared) for t in found.tools}
    assert titles == {"Tool same.id (one/.tools/same.id)", "Tool same.id (two/.tools/same.id)"}


def test_no_literal_backticks_in_pattern_chips(tmp_path: Path) -> None:
    aip_tool(tmp_path, "pat", [], inputs={"type": "object", "properties": {"code": {"type": "string", "pattern": "^[a-z]+$"}}})
    found = harvest(tmp_path, Options())
    text = page(tool_of(found, "pat"), found)
    chips = re.findall(r'<span class="tc-constraint">(.*?)</span>', text)
    assert chips and all("`" not in c for c in chips), chips
    assert any("<code>^[a-z]+$</code>" in c for c in chips), chips
