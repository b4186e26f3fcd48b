"""Running examples and checks against REAL tools written into tmp_path (no mocks).

Covers the three runners (speccify, AIP-14 through AIP-30 drivers including an
MCP stdio server, smart tools), the process runner's guarantees (timeouts kill
the whole group, output caps, scrubbed environment), the results cache, the
build's failure policy and the `toolcatalog check` command.

Every tool written here lives in tmp_path, so the autouse `no_leftovers`
fixture can tell, after each test, whether any process whose command line or
working directory is inside tmp_path is still alive.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from procs import gone, no_leftovers  # noqa: F401 (no_leftovers: an autouse fixture)
from sitebuild import build, catalog as site_catalog, mkdocs_project, write
from toolcatalog.outputs import catalog_json
from toolcatalog.cli import main as cli_main
from toolcatalog.conformance import engine, job, mcp_stdio
from toolcatalog.harvest import harvest
from toolcatalog.model import Catalog, Tool
from toolcatalog.options import Options

pytestmark = pytest.mark.skipif(os.name != "posix" or not Path("/proc/self/stat").exists(), reason="POSIX process groups and /proc")

PLATFORM = job.current_platform()
PY = sys.executable


# --------------------------------------------------------------------------- helpers


def run_check(root: Path, **options: Any) -> tuple[Catalog, engine.Stats]:
    opts = Options(**{"jobs": 2, "cache": False, "timeout": 20.0, **options})
    catalog = harvest(root, opts)
    stats = engine.check(catalog, opts)
    return catalog, stats


def tool_of(catalog: Catalog, tool_id: str) -> Tool:
    tool = catalog.tool(tool_id)
    assert tool is not None, [t.id for t in catalog.tools]
    return tool


def example_of(tool: Tool, title: str):
    for example in tool.examples:
        if example.title == title:
            return example
    raise AssertionError(f"{tool.id} has no example {title!r}: {[e.title for e in tool.examples]}")


def catalog_text(catalog: Catalog) -> str:
    return catalog_json.dumps(catalog_json.document(catalog))


def front_matter(data: dict[str, Any], body: str = "") -> str:
    return "---\n" + yaml.safe_dump(data, sort_keys=False, allow_unicode=True) + "---\n" + textwrap.dedent(body)


# speccify ------------------------------------------------------------------------------


def speccify_tool(
    root: Path,
    name: str,
    cases: list[tuple[str, Any, Any]],
    files: dict[str, str] | None = None,
    outputs: dict[str, Any] | None = None,
    **front: Any,
) -> Path:
    """A speccify tool at `.agent/tools/<name>/`: TOOL.md with `cases`, plus `files` beside it.

    A case whose output is `...` gets no `output:` line (an incomplete case, which makes the tool invalid).
    """
    folder = root / ".agent" / "tools" / name
    data = {
        "name": name,
        "description": f"Test tool {name}.",
        "inputs": {"type": "object"},
        "outputs": outputs or {"type": "object"},
        "effects": "none",
        **front,
    }
    lines = ["", "## Examples", ""]
    for title, given, expected in cases:
        lines += [f"### {title}", f"input: {json.dumps(given)}"]
        if expected is not ...:
            lines.append(f"output: {json.dumps(expected)}")
        lines.append("")
    write(folder / "TOOL.md", front_matter(data) + "\n".join(lines))
    for rel, text in (files or {}).items():
        write(folder / rel, text)
    return folder


# agentproto ----------------------------------------------------------------------------


def aip_tool(root: Path, tool_id: str, examples: list[dict[str, Any]], **fields: Any) -> Path:
    data = {
        "name": f"Tool {tool_id}",
        "id": tool_id,
        "description": f"Test tool {tool_id}.",
        "version": "1.0.0",
        "inputs": {"type": "object"},
        "outputs": {"type": "object"},
        "mutates": [],
        "approval": "auto",
        **fields,
        "examples": examples,
    }
    path = root / ".tools" / tool_id / "TOOL.md"
    write(path, front_matter(data, "\n## Description\n\nA test tool.\n"))
    return path


def aip_driver(root: Path, driver_id: str, tool_id: str, kind: str = "cli", entry: dict[str, Any] | None = None,
               files: dict[str, str] | None = None, **fields: Any) -> Path:
    data = {
        "name": f"Driver {driver_id}",
        "id": driver_id,
        "description": f"Test driver {driver_id}.",
        "version": "1.0.0",
        "kind": kind,
        **fields,
        "implements": [{"tool": f".tools/{tool_id}/TOOL.md", "version": "^1.0.0", **(entry or {})}],
    }
    folder = root / ".drivers" / driver_id
    write(folder / "DRIVER.md", front_matter(data))
    for rel, text in (files or {}).items():
        write(folder / rel, text)
    return folder


def cli_entry(*argv: str) -> dict[str, Any]:
    return {"metadata": {"cli": {"argv": list(argv)}}}


# --------------------------------------------------------------------------- speccify

SUM_PY = """
import json, sys
data = json.load(sys.stdin)  # reads stdin to EOF: the runner must close it
mode = data.get("mode", "ok")
if mode == "ok":
    print(json.dumps({"sum": data["a"] + data["b"], "extra": "allowed"}))
elif mode == "off-by-one":
    print(json.dumps({"sum": data["a"] + data["b"] + 1}))
elif mode == "not-json":
    print("hello, not json")
elif mode == "ok-but-exit-1":
    print(json.dumps({"ok": True, "sum": 4}))
    sys.exit(1)
elif mode == "not-ok-exit-1":
    print(json.dumps({"ok": False, "error": "refused"}))
    sys.exit(1)
elif mode == "schema":
    print(json.dumps({"ok": True, "count": "three"}))
elif mode == "crash":
    print("boom: it broke", file=sys.stderr)
    sys.exit(3)
"""


def test_speccify_picks_the_first_sorted_implementation_and_runs_it_in_the_tool_folder(tmp_path: Path) -> None:
    report = """
    import json, os, sys
    data = json.load(sys.stdin)
    with open("fixtures/data.txt") as handle:  # relative to the tool folder
        fixture = handle.read().strip()
    print(json.dumps({"picked": "py", "exe": sys.executable, "cwd": os.getcwd(), "fixture": fixture, "echo": data}))
    """
    folder = speccify_tool(
        tmp_path,
        "picker",
        [("reads a fixture", {"x": [1, 2]}, {"picked": "py", "fixture": "fixture text", "echo": {"x": [1, 2]}})],
        files={
            f"{PLATFORM}.py": report,  # not executable: `.py` runs with sys.executable
            f"{PLATFORM}.sh": 'echo \'{"picked": "sh"}\'\n',
            "reference.py": 'print(\'{"picked": "reference"}\')\n',
            "fixtures/data.txt": "fixture text\n",
        },
    )
    catalog, stats = run_check(tmp_path)
    tool = tool_of(catalog, "picker")
    assert tool.implementations[:2] == [f"{PLATFORM}.py", f"{PLATFORM}.sh"]
    assert tool.status == "passed", (tool.status_detail, [e.detail for e in tool.examples])
    assert tool.status_detail == f"1 of 1 examples pass ({PLATFORM}.py)"
    run = tool.examples[0].runs[0]
    assert run.actual["exe"] == os.path.abspath(PY)
    assert os.path.realpath(run.actual["cwd"]) == os.path.realpath(folder)
    assert run.exit_code == 0 and stats.processes == 1


def test_speccify_failure_details(tmp_path: Path) -> None:
    speccify_tool(
        tmp_path,
        "summer",
        [
            ("passes", {"a": 2, "b": 2}, {"sum": 4}),
            ("wrong sum", {"a": 2, "b": 2, "mode": "off-by-one"}, {"sum": 4}),
            ("not json", {"mode": "not-json"}, {"sum": 4}),
            ("ok but exit 1", {"mode": "ok-but-exit-1"}, {"ok": True, "sum": 4}),
            ("not ok, exit 1", {"mode": "not-ok-exit-1"}, {"ok": False}),
            ("schema violation", {"mode": "schema"}, {"ok": True}),
            ("crash", {"mode": "crash"}, {"sum": 1}),
        ],
        files={f"{PLATFORM}.py": SUM_PY},
        outputs={"type": "object", "properties": {"sum": {"type": "number"}, "count": {"type": "integer"}}},
    )
    catalog, stats = run_check(tmp_path)
    tool = tool_of(catalog, "summer")
    detail = {e.title: (e.status, e.detail) for e in tool.examples}
    assert detail["passes"] == ("passed", "")
    assert detail["wrong sum"] == ("failed", "$.sum: expected 4, got 5")
    assert detail["not json"][0] == "failed" and detail["not json"][1].startswith("stdout is not JSON")
    assert detail["ok but exit 1"] == ("failed", "exit code 1 with ok: true")
    assert detail["not ok, exit 1"] == ("passed", "")  # with ok: false the exit code is not inspected
    status, text = detail["schema violation"]
    assert status == "failed" and text.startswith("output violates the outputs schema at $.count: ")
    assert detail["crash"] == ("failed", "exit code 3 with empty stdout: boom: it broke")
    assert tool.status == "failed" and tool.status_detail == f"2 of 7 examples pass ({PLATFORM}.py)"
    assert stats.processes == 7
    wrong = example_of(tool, "wrong sum").runs[0]
    assert wrong.actual == {"sum": 5} and wrong.exit_code == 0


def test_speccify_statuses(tmp_path: Path) -> None:
    ok_impl = {f"{PLATFORM}.py": "import json, sys\njson.load(sys.stdin)\nprint('{\"ok\": true}')\n"}
    case = [("works", {}, {"ok": True})]
    other = "windows" if PLATFORM != "windows" else "linux"
    speccify_tool(tmp_path, "elsewhere", case, files={f"{other}.py": ok_impl[f"{PLATFORM}.py"]}, platforms=[other])
    speccify_tool(tmp_path, "unimplemented", case, files={f"{other}.py": "print(1)\n"})
    speccify_tool(tmp_path, "exampleless", [], files=ok_impl)
    speccify_tool(tmp_path, "needs-binary", case, files=ok_impl, requires=["toolcatalog-no-such-binary"])
    speccify_tool(tmp_path, "good", case, files=ok_impl, requires=["python3"])
    speccify_tool(tmp_path, "bad", [("wrong", {}, {"ok": False})], files=ok_impl)
    broken = speccify_tool(tmp_path, "invalid", case, files=ok_impl)
    text = (broken / "TOOL.md").read_text().replace("name: invalid", "name: Invalid_Name")
    (broken / "TOOL.md").write_text(text)

    catalog, stats = run_check(tmp_path)
    statuses = {t.id: t.status for t in catalog.tools}
    assert statuses == {
        "elsewhere": "not-applicable",
        "unimplemented": "not-implemented",
        "exampleless": "no-examples",
        "needs-binary": "missing-requirement",
        "good": "passed",
        "bad": "failed",
        "Invalid_Name": "invalid",
    }
    assert "toolcatalog-no-such-binary" in tool_of(catalog, "needs-binary").status_detail
    # An invalid manifest still runs what it can, so a reviewer sees every problem at once.
    invalid = tool_of(catalog, "Invalid_Name")
    assert invalid.examples[0].status == "passed"
    assert stats.processes == 3  # good, bad, invalid


def test_timeout_kills_the_whole_group_including_a_grandchild_holding_the_pipe(tmp_path: Path) -> None:
    pids = tmp_path / "pids.txt"
    impl = f"""
    import os, sys, time
    sys.stdin.read()
    child = os.fork()  # the grandchild inherits stdout and holds the pipe open
    if child == 0:
        time.sleep(120)
        os._exit(0)
    with open({str(pids)!r}, "w") as handle:
        handle.write(f"{{os.getpid()}} {{child}}")
    time.sleep(120)
    """
    speccify_tool(tmp_path, "sleeper", [("hangs", {}, {"ok": True})], files={f"{PLATFORM}.py": impl})
    started = time.monotonic()
    catalog, _ = run_check(tmp_path, timeout=1.0)
    assert time.monotonic() - started < 15.0  # harvest and imports included; generous for loaded machines
    example = tool_of(catalog, "sleeper").examples[0]
    assert example.status == "failed" and example.detail == "timed out after 1s"
    assert example.runs[0].duration_ms < (1.0 + 2.0) * 1000, example.runs[0].duration_ms
    leader, grandchild = map(int, pids.read_text().split())
    assert gone(leader, grandchild)


def test_leader_exits_but_a_grandchild_keeps_the_pipe_open(tmp_path: Path) -> None:
    pids = tmp_path / "pids.txt"
    impl = f"""
    import json, os, sys, time
    sys.stdin.read()
    child = os.fork()
    if child == 0:  # holds stdout open long after its parent is gone
        time.sleep(120)
        os._exit(0)
    open({str(pids)!r}, "w").write(str(child))
    print(json.dumps({{"ok": True}}), flush=True)
    """
    speccify_tool(tmp_path, "daemonish", [("returns, leaves a child", {}, {"ok": True})], files={f"{PLATFORM}.py": impl})
    catalog, _ = run_check(tmp_path, timeout=20.0)
    example = tool_of(catalog, "daemonish").examples[0]
    assert example.status == "passed", example.detail
    assert example.runs[0].duration_ms < 3000  # the leftover is killed soon after its parent exits, not at the timeout
    assert gone(int(pids.read_text()))


def test_huge_stdout_is_capped_and_memory_stays_flat(tmp_path: Path) -> None:
    impl = """
    import sys
    sys.stdin.read()
    block = b"x" * (1 << 20)
    for _ in range(300):  # 300 MB
        sys.stdout.buffer.write(block)
    """
    speccify_tool(tmp_path, "firehose", [("floods stdout", {}, {"ok": True})], files={f"{PLATFORM}.py": impl})
    probe = f"""
    import json, resource, sys
    from toolcatalog.conformance import engine
    from toolcatalog.harvest import harvest
    from toolcatalog.options import Options
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    options = Options(jobs=2, cache=False, timeout=30)
    catalog = harvest({str(tmp_path)!r}, options)
    engine.check(catalog, options)
    after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    example = catalog.tools[0].examples[0]
    print(json.dumps({{"status": example.status, "detail": example.detail, "growth_kb": after - before}}))
    """
    started = time.monotonic()
    result = subprocess.run([PY, "-c", textwrap.dedent(probe)], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert time.monotonic() - started < 30
    outcome = json.loads(result.stdout)
    assert outcome["status"] == "failed"
    assert outcome["detail"] == "stdout exceeded the output cap; the process was stopped"
    assert outcome["growth_kb"] < 64 * 1024, outcome  # nowhere near 300 MB


def test_environment_is_scrubbed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SECRET_TEST_API_KEY", "do-not-leak")
    monkeypatch.setenv("TOOLCATALOG_TEST_PASSED", "passed-through")
    monkeypatch.setenv("TOOLCATALOG_TEST_UNLISTED", "not-listed")
    impl = "import json, os, sys\nsys.stdin.read()\nprint(json.dumps({'env': dict(os.environ)}))\n"
    speccify_tool(tmp_path, "env-dump", [("prints its environment", {}, {})], files={f"{PLATFORM}.py": impl})
    catalog, _ = run_check(tmp_path, env=["TOOLCATALOG_TEST_PASSED"])
    example = tool_of(catalog, "env-dump").examples[0]
    assert example.status == "passed", example.detail
    env = example.runs[0].actual["env"]
    assert "SECRET_TEST_API_KEY" not in env
    assert "TOOLCATALOG_TEST_UNLISTED" not in env
    assert env["TOOLCATALOG_TEST_PASSED"] == "passed-through"
    assert env["PATH"] == os.environ["PATH"]


# --------------------------------------------------------------------------- AIP-14 + AIP-30 (cli)

ARGS_PY = """
import json, os, sys
with open("marker.txt") as handle:  # relative to the driver folder
    marker = handle.read().strip()
print(json.dumps({"ok": True, "value": {"argv": sys.argv[1:], "cwd": os.getcwd(), "marker": marker}}))
"""


def test_cli_driver_expands_argv_without_a_shell(tmp_path: Path) -> None:
    pwned = tmp_path / "pwned"
    hostile = f"a b; touch {pwned} $(touch {pwned}2) `touch {pwned}3` > {pwned}4"
    aip_tool(
        tmp_path,
        "demo.args",
        inputs={
            "type": "object",
            "required": ["text", "method"],
            "properties": {
                "text": {"type": "string"},
                "method": {"type": "string"},
                "suffix": {"type": "string"},
                "verbose": {"type": "boolean"},
            },
        },
        outputs={
            "type": "object",
            "required": ["argv"],
            "properties": {"argv": {"type": "array", "items": {"type": "string"}}, "marker": {"type": "string"}},
        },
        examples=[
            {"name": "hostile text", "input": {"text": hostile, "method": "squash"},
             "output": {"argv": ["--text", hostile, "--suffix", "none", "--squash"], "marker": "driver folder"}},
            {"name": "with suffix", "input": {"text": "t", "method": "merge", "suffix": "x y"},
             "output": {"argv": ["--text", "t", "--suffix", "x y", "--merge"]}},
            {"name": "no expected output", "input": {"text": "t", "method": "rebase"}},
            {"name": "uses a dropped input", "input": {"text": "t", "method": "merge", "verbose": True},
             "output": {"argv": ["--text", "t", "--suffix", "none", "--merge"]}},
        ],
    )
    common = dict(bin="python3", bin_args=["args.py"], output={"default_format": "json"},
                  files={"args.py": ARGS_PY, "marker.txt": "driver folder\n"})
    argv = ("--text", "${input.text}", "--suffix", "${input.suffix | default('none')}", "--${input.method}")
    full = aip_driver(tmp_path, "args-full", "demo.args", entry=cli_entry(*argv), **common)
    lite_entry = {**cli_entry(*argv), "schema_narrowing": {"drop_inputs": ["verbose"]}}
    aip_driver(tmp_path, "args-lite", "demo.args", entry=lite_entry, **common)

    catalog, stats = run_check(tmp_path)
    tool = tool_of(catalog, "demo.args")
    assert all(d.valid for d in tool.drivers), [d.diagnostics for d in tool.drivers]
    assert {e.title: e.status for e in tool.examples} == dict.fromkeys(
        ["hostile text", "with suffix", "no expected output", "uses a dropped input"], "passed"
    ), [(e.title, e.detail) for e in tool.examples]
    assert tool.status == "passed" and tool.status_detail == "4 of 4 examples pass"
    hostile_runs = example_of(tool, "hostile text").runs
    assert [r.driver for r in hostile_runs] == ["args-full", "args-lite"]
    for run in hostile_runs:
        # the envelope {ok: true, value} is unwrapped; the argv element arrived whole and unexpanded
        assert run.actual["argv"][1] == hostile and "ok" not in run.actual
        assert os.path.realpath(run.actual["cwd"]) == os.path.realpath(full if run.driver == "args-full" else full.parent / "args-lite")
    assert not list(tmp_path.glob("pwned*"))
    dropped = {r.driver: r for r in example_of(tool, "uses a dropped input").runs}
    assert dropped["args-lite"].status == "skipped" and "verbose" in dropped["args-lite"].detail
    assert dropped["args-full"].status == "passed"
    assert example_of(tool, "no expected output").runs[0].actual["argv"][-1] == "--rebase"
    assert stats.processes == 7  # 4 examples x 2 drivers, minus the skipped one


def test_cli_driver_failures_and_tool_status(tmp_path: Path) -> None:
    aip_tool(
        tmp_path,
        "demo.fail",
        outputs={"type": "object", "required": ["n"], "properties": {"n": {"type": "integer"}}},
        examples=[
            {"name": "right", "input": {"n": 1}, "output": {"n": 1}},
            {"name": "wrong expectation", "input": {"n": 1}, "output": {"n": 2}},
            {"name": "no output but violates outputs", "input": {"n": "text"}},
            {"name": "exits 4", "input": {"n": 1, "exit": 4}, "output": {"n": 1}},
        ],
        inputs={"type": "object", "properties": {"n": {}, "exit": {"type": "integer"}}},
    )
    echo = """
    import json, sys
    args = dict(zip(sys.argv[1::2], sys.argv[2::2]))
    code = int(args.get("--exit", "0"))
    if code:
        print("auth expired", file=sys.stderr)
        sys.exit(code)
    try:
        n = json.loads(args["--n"])
    except ValueError:
        n = args["--n"]
    print(json.dumps({"n": n}))
    """
    aip_driver(tmp_path, "fail-cli", "demo.fail", bin="python3", bin_args=["echo.py"], output={"default_format": "json"},
               entry=cli_entry("--n", "${input.n}", "--exit", "${input.exit | default('0')}"), files={"echo.py": echo})
    catalog, _ = run_check(tmp_path)
    tool = tool_of(catalog, "demo.fail")
    detail = {e.title: (e.status, e.detail) for e in tool.examples}
    assert detail["right"] == ("passed", "")
    assert detail["wrong expectation"] == ("failed", "fail-cli: $.n: expected 2, got 1")
    status, text = detail["no output but violates outputs"]
    assert status == "failed" and text.startswith("fail-cli: output violates the outputs schema at $.n: ")
    assert detail["exits 4"] == ("failed", "fail-cli: exit code 4: auth expired")
    assert tool.status == "failed"


def test_an_example_documenting_a_failure_matches_the_error_envelope(tmp_path: Path) -> None:
    aip_tool(
        tmp_path,
        "demo.errors",
        inputs={"type": "object", "properties": {"exit": {"type": "integer"}}},
        examples=[
            {"name": "auth expired", "input": {"exit": 4}, "output": {"ok": False, "error": {"code": "auth_required"}}},
            {"name": "unmapped code", "input": {"exit": 3}, "output": {"ok": False, "error": {"code": "error"}}},
            {"name": "wrong code", "input": {"exit": 2}, "output": {"ok": False, "error": {"code": "auth_required"}}},
        ],
    )
    script = """
    import sys
    print("token expired: run login", file=sys.stderr)
    sys.exit(int(sys.argv[2]))
    """
    aip_driver(
        tmp_path, "err-cli", "demo.errors", bin="python3", bin_args=["err.py"],
        output={"default_format": "json", "exit_codes": {2: "usage_error", 4: "auth_required"}},
        entry=cli_entry("--exit", "${input.exit}"), files={"err.py": script},
    )
    catalog, _ = run_check(tmp_path)
    tool = tool_of(catalog, "demo.errors")
    detail = {e.title: (e.status, e.detail) for e in tool.examples}
    assert detail["auth expired"] == ("passed", "")
    assert detail["unmapped code"] == ("passed", "")
    assert detail["wrong code"] == ("failed", 'err-cli: $.error.code: expected "auth_required", got "usage_error"')
    actual = example_of(tool, "auth expired").runs[0].actual
    assert actual == {"ok": False, "error": {"code": "auth_required", "message": "token expired: run login", "exit_code": 4}}


def test_tool_is_not_run_when_an_example_only_ran_through_a_narrowing_driver(tmp_path: Path) -> None:
    aip_tool(
        tmp_path,
        "demo.partial",
        inputs={"type": "object", "properties": {"text": {"type": "string"}, "extra": {"type": "string"}}},
        examples=[
            {"name": "plain", "input": {"text": "a"}, "output": {"text": "a"}},
            {"name": "uses extra", "input": {"text": "a", "extra": "b"}, "output": {"text": "a"}},
        ],
    )
    echo = "import json, sys\nprint(json.dumps({'text': sys.argv[1]}))\n"
    entry = {**cli_entry("${input.text}"), "schema_narrowing": {"drop_inputs": ["extra"]}}
    aip_driver(tmp_path, "partial-cli", "demo.partial", bin="python3", bin_args=["e.py"], output={"default_format": "json"},
               entry=entry, files={"e.py": echo})
    catalog, stats = run_check(tmp_path)
    tool = tool_of(catalog, "demo.partial")
    assert tool.drivers[0].valid, tool.drivers[0].diagnostics
    assert example_of(tool, "plain").status == "passed"
    extra = example_of(tool, "uses extra")
    assert extra.status == "not-run" and extra.detail == "partial-cli: uses input extra, which this driver drops"
    assert [r.status for r in extra.runs] == ["skipped"]
    # passed needs every example to pass through at least one driver; nothing failed, so not-run
    assert tool.status == "not-run" and tool.status_detail == "1 of 2 examples pass"
    assert stats.processes == 1


def test_mutating_tool_runs_only_when_allowed(tmp_path: Path) -> None:
    side_effect = tmp_path / "side-effect.txt"
    aip_tool(
        tmp_path,
        "notes.write",
        mutates=["workspace:/notes/*"],
        approval="on-mutate",
        risk_level=1,
        examples=[{"name": "writes", "input": {"path": str(side_effect)}, "output": {"written": True}}],
    )
    writer = "import json, sys\nopen(sys.argv[1], 'w').write('x')\nprint(json.dumps({'written': True}))\n"
    aip_driver(tmp_path, "notes-cli", "notes.write", bin="python3", bin_args=["w.py"], output={"default_format": "json"},
               entry=cli_entry("${input.path}"), files={"w.py": writer})

    catalog, stats = run_check(tmp_path)
    tool = tool_of(catalog, "notes.write")
    assert tool.status == "not-run" and "allow_mutating" in tool.status_detail
    assert tool.examples[0].status == "not-run" and "allow_mutating" in tool.examples[0].detail
    assert "allow_mutating" in tool.drivers[0].run_status["notes.write"]
    assert stats.processes == 0 and not side_effect.exists()

    for allowed in (["notes.write"], ["notes.*"]):
        side_effect.unlink(missing_ok=True)
        catalog, stats = run_check(tmp_path, allow_mutating=allowed)
        tool = tool_of(catalog, "notes.write")
        assert tool.status == "passed", [e.detail for e in tool.examples]
        assert stats.processes == 1 and side_effect.read_text() == "x"


def test_drivers_that_cannot_run_say_why(tmp_path: Path) -> None:
    ok = "import json\nprint(json.dumps({'ok': True}))\n"
    examples = [{"name": "call", "input": {}, "output": {"ok": True}}]
    aip_tool(tmp_path, "demo.mixed", examples=examples)
    aip_driver(tmp_path, "mixed-http", "demo.mixed", kind="http", endpoint="https://example.invalid", method="POST")
    aip_driver(tmp_path, "mixed-missing", "demo.mixed", bin="toolcatalog-no-such-binary")
    aip_driver(tmp_path, "mixed-ok", "demo.mixed", bin="python3", bin_args=["ok.py"], output={"default_format": "json"},
               files={"ok.py": ok})
    aip_tool(tmp_path, "demo.unrunnable", examples=examples)
    aip_driver(tmp_path, "only-http", "demo.unrunnable", kind="http", endpoint="https://example.invalid", method="GET")

    catalog, stats = run_check(tmp_path)
    mixed = tool_of(catalog, "demo.mixed")
    reasons = {d.id: d.run_status["demo.mixed"] for d in mixed.drivers}
    assert reasons["mixed-http"] == "not run: `http` drivers are not run at build time"
    assert reasons["mixed-missing"] == "not run: command not found: toolcatalog-no-such-binary"
    assert reasons["mixed-ok"] == "ran"
    assert mixed.status == "passed" and [r.driver for r in mixed.examples[0].runs] == ["mixed-ok"]
    unrunnable = tool_of(catalog, "demo.unrunnable")
    assert unrunnable.status == "not-run" and "`http` drivers are not run at build time" in unrunnable.status_detail
    assert unrunnable.examples[0].status == "not-run"
    assert stats.processes == 1


def test_tool_timeout_ms_bounds_the_call(tmp_path: Path) -> None:
    pids = tmp_path / "pid.txt"
    sleeper = f"import os, time\nopen({str(pids)!r}, 'w').write(str(os.getpid()))\ntime.sleep(120)\n"
    aip_tool(tmp_path, "demo.slow", timeout_ms=1500, examples=[{"name": "slow", "input": {}, "output": {}}])
    aip_driver(tmp_path, "slow-cli", "demo.slow", bin="python3", bin_args=["sleep.py"], output={"default_format": "json"},
               files={"sleep.py": sleeper})
    catalog, _ = run_check(tmp_path, timeout=30.0)  # the tool's 1.5 s wins over the option's 30 s
    tool = tool_of(catalog, "demo.slow")
    assert tool.examples[0].detail == "slow-cli: timed out after 1.5s" and tool.status == "failed"
    assert tool.examples[0].runs[0].duration_ms < (1.5 + 2.0) * 1000
    assert gone(int(pids.read_text()))


# --------------------------------------------------------------------------- MCP over stdio

MCP_SERVER = """
import json, os, sys, time
if len(sys.argv) > 1:
    open(sys.argv[1], "a").write(f"{os.getpid()}\\n")
HANG = os.path.exists("hang")  # a file in the driver folder (cwd) makes the server never answer calls
if os.path.exists("crash"):  # ... or die before it answers anything
    print("server: cannot start, config missing", file=sys.stderr)
    sys.exit(1)


def handle(method, params):
    if method == "initialize":
        return {"protocolVersion": params.get("protocolVersion"), "capabilities": {"tools": {}},
                "serverInfo": {"name": "test-math", "version": "0.0.1"}}
    if method == "ping":
        return {}
    if method == "tools/list":
        return {"tools": [{"name": "add", "description": "a + b",
                           "inputSchema": {"type": "object", "properties": {"a": {"type": "number"}, "b": {"type": "number"}}}}]}
    if method == "tools/call":
        if HANG:
            time.sleep(120)
        if params.get("name") != "add":
            raise LookupError(f"unknown tool: {params.get('name')}")
        args = params.get("arguments") or {}
        if not isinstance(args.get("a"), (int, float)):
            error = {"error": {"code": "input_invalid", "message": "a must be a number"}}
            return {"content": [{"type": "text", "text": json.dumps(error)}], "structuredContent": error, "isError": True}
        value = {"sum": args["a"] + args["b"]}
        return {"content": [{"type": "text", "text": json.dumps(value)}], "structuredContent": value, "isError": False}
    raise KeyError(method)


for line in sys.stdin:
    if not line.strip():
        continue
    message = json.loads(line)
    if "id" not in message:
        continue  # notifications
    try:
        response = {"jsonrpc": "2.0", "id": message["id"], "result": handle(message["method"], message.get("params") or {})}
    except KeyError as exc:
        response = {"jsonrpc": "2.0", "id": message["id"], "error": {"code": -32601, "message": f"no method {exc}"}}
    except LookupError as exc:
        response = {"jsonrpc": "2.0", "id": message["id"], "error": {"code": -32602, "message": str(exc)}}
    sys.stdout.write(json.dumps(response) + "\\n")
    sys.stdout.flush()
"""


def mcp_workspace(root: Path, driver_id: str, tool_id: str, examples: list[dict[str, Any]], pid_file: Path,
                  mcp_tool: str = "add", **tool_fields: Any) -> Path:
    aip_tool(
        root, tool_id, examples=examples,
        **{
            "inputs": {"type": "object", "required": ["a", "b"], "properties": {"a": {"type": "number"}, "b": {"type": "number"}}},
            "outputs": {"type": "object", "required": ["sum"], "properties": {"sum": {"type": "number"}}},
            **tool_fields,
        },
    )
    return aip_driver(
        root, driver_id, tool_id, kind="mcp", transport="stdio",
        server={"kind": "binary", "path": "python3", "args": ["server.py", str(pid_file)]},
        entry={"metadata": {"mcp": {"tool_name": mcp_tool}}},
        files={"server.py": MCP_SERVER},
    )


def test_mcp_stdio_driver(tmp_path: Path) -> None:
    pid_file = tmp_path / "server-pids.txt"
    mcp_workspace(tmp_path, "math-stdio", "demo.add", [
        {"name": "two and two", "input": {"a": 2, "b": 2}, "output": {"sum": 4}},
        {"name": "wrong expectation", "input": {"a": 2, "b": 2}, "output": {"sum": 5}},
        {"name": "no expectation", "input": {"a": 1, "b": 0.5}},
    ], pid_file)
    catalog, stats = run_check(tmp_path)
    tool = tool_of(catalog, "demo.add")
    driver = tool.drivers[0]
    assert driver.valid and driver.run_status["demo.add"] == "ran", driver.diagnostics

    ctx = job.make_context(Options(), tmp_path)
    prefix, reason = mcp_stdio.command(driver, ctx)
    assert reason == "ran" and prefix == [shutil.which("python3", path=ctx.env["PATH"]), "server.py", str(pid_file)]

    detail = {e.title: (e.status, e.detail) for e in tool.examples}
    assert detail["two and two"] == ("passed", "")
    assert detail["wrong expectation"] == ("failed", "math-stdio: $.sum: expected 5, got 4")
    assert detail["no expectation"] == ("passed", "")
    assert example_of(tool, "no expectation").runs[0].actual == {"sum": 1.5}
    assert tool.status == "failed" and stats.processes == 3
    pids = [int(p) for p in pid_file.read_text().split()]
    assert len(pids) == 3 and gone(*pids)


def test_mcp_error_results_and_non_object_inputs(tmp_path: Path) -> None:
    mcp_workspace(tmp_path, "math-err", "demo.err", [
        {"name": "documented rejection", "input": {"a": "x", "b": 1}, "output": {"ok": False, "error": {"code": "input_invalid"}}},
        {"name": "wrong code", "input": {"a": "x", "b": 1}, "output": {"ok": False, "error": {"code": "not_found"}}},
        {"name": "unexpected error", "input": {"a": "x", "b": 1}, "output": {"sum": 2}},
        {"name": "a list", "input": [2, 2], "output": {"sum": 4}},
    ], tmp_path / "pids.txt", outputs={"type": "object"})
    catalog, _ = run_check(tmp_path)
    detail = {e.title: (e.status, e.detail) for e in tool_of(catalog, "demo.err").examples}
    assert detail["documented rejection"] == ("passed", "")
    assert detail["wrong code"] == ("failed", 'math-err: $.error.code: expected "not_found", got "input_invalid"')
    assert detail["unexpected error"][0] == "failed" and "returned an error" in detail["unexpected error"][1]
    assert detail["a list"] == ("not-run", "math-err: not run: MCP tool arguments must be an object, and this input is not")


def test_mcp_server_that_never_answers_times_out_and_is_stopped(tmp_path: Path) -> None:
    pid_file = tmp_path / "server-pids.txt"
    folder = mcp_workspace(tmp_path, "math-hang", "demo.hang", [
        {"name": "hangs", "input": {"a": 1, "b": 1}, "output": {"sum": 2}},
    ], pid_file, timeout_ms=1000)
    write(folder / "hang", "")
    catalog, _ = run_check(tmp_path)
    example = tool_of(catalog, "demo.hang").examples[0]
    assert example.status == "failed" and example.detail == "math-hang: timed out after 1s"
    # bounded, not the server's 120 s; the SDK adds its own shutdown grace (stdin close, 2 s wait, SIGTERM)
    assert example.runs[0].duration_ms < (1.0 + 6.0) * 1000
    assert gone(*[int(p) for p in pid_file.read_text().split()], within=3.0)


def test_mcp_errors_name_their_cause(tmp_path: Path) -> None:
    pid_file = tmp_path / "server-pids.txt"
    example = [{"name": "call", "input": {"a": 1, "b": 1}, "output": {"sum": 2}}]
    mcp_workspace(tmp_path, "math-wrong-name", "demo.wrongname", example, pid_file, mcp_tool="subtract")
    crashing = mcp_workspace(tmp_path, "math-crash", "demo.crash", example, pid_file)
    write(crashing / "crash", "")
    catalog, _ = run_check(tmp_path)
    wrong = tool_of(catalog, "demo.wrongname").examples[0]
    assert wrong.status == "failed" and wrong.detail == "math-wrong-name: MCP call failed: MCPError: unknown tool: subtract", wrong.detail
    crash = tool_of(catalog, "demo.crash").examples[0]
    assert crash.status == "failed"
    assert crash.detail.startswith("math-crash: MCP call failed: ") and "(server stderr: server: cannot start, config missing)" in crash.detail
    assert "cannot start" in crash.runs[0].stderr


def test_the_mcp_demo_in_examples_passes() -> None:
    repo = Path(__file__).resolve().parent.parent
    result = subprocess.run(
        [PY, "-m", "toolcatalog.cli", "check", "--tool", "math.add", "--no-cache"],
        cwd=repo, capture_output=True, text=True, timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    rows = [line.split(None, 3) for line in result.stdout.splitlines()[1:]]
    assert rows == [["math.add", "aip-14", "passed", "2 of 2 examples pass"]], result.stdout
    assert "2 processes started" in result.stderr


# --------------------------------------------------------------------------- smart tools

SMART_CLI = """
import json, os, sys, time
B = json.loads({behaviour!r})
TOOL = B["name"]
CAPS = [("stats", "deterministic", "Count the words of --text."), ("summarize", "model-backed", "Summarise --text with a model.")]


def main(args):
    if not args:
        print(json.dumps({{"error": {{"code": "usage", "message": "no capability", "remedy": f"run {{TOOL}} --help"}}}}))
        return 2
    first, rest = args[0], args[1:]
    if first == "--help":
        lines = [f'<skill_content name="{{TOOL}}">', "", f"# {{TOOL}}", "", "Guidance.", "", "## Capabilities", ""]
        for name, kind, summary in CAPS:
            lines.append(f"- `{{name}}` [{{kind}}] -- {{summary}}" if B["disclose"] else f"- `{{name}}` -- {{summary}}")
        lines.append("</skill_content>")
        print("\\n".join(lines))
        return 0
    if first == "-h":
        if B["hang_short"]:
            time.sleep(120)
        print(f"usage: {{TOOL}} <capability>")
        return 0
    if first not in ("stats", "summarize"):
        if B["traceback"]:
            raise LookupError(first)
        print(json.dumps({{"error": {{"code": "unknown_capability", "message": first, "remedy": "use stats or summarize"}}}}))
        return 2
    if "--help" in rest:
        lead = "Deterministic." if first == "stats" else "Model-backed."
        print(f'<skill_content name="{{TOOL}} {{first}}">\\n\\n# {{TOOL}} {{first}}\\n\\n{{lead}} Help for {{first}}.\\n</skill_content>')
        return 0
    if first == "stats":
        if "--env-out" in rest:
            with open(rest[rest.index("--env-out") + 1], "w") as handle:
                json.dump(dict(os.environ), handle)
        print(json.dumps({{"words": 2}}))
        return 0
    print(json.dumps({{"error": {{"code": "no_provider", "message": "no provider", "remedy": "set SMARTY_PROVIDER"}}}}))
    return 3


sys.exit(main(sys.argv[1:]))
"""


def smart_tool(root: Path, name: str, *, disclose: bool = True, traceback: bool = False, hang_short: bool = False,
               manifest_version: str = "0.1.0", smoke: list[str] | None = None, descriptor: bool = True) -> Path:
    dist = root / "dists" / name
    behaviour = json.dumps({"name": name, "disclose": disclose, "traceback": traceback, "hang_short": hang_short})
    write(dist / "cli.py", SMART_CLI.format(behaviour=behaviour))
    write(dist / "pyproject.toml", f'[project]\nname = "{name}"\nversion = "0.1.0"\n')
    manifest = {
        "smart_tool_format": 1,
        "name": name,
        "version": manifest_version,
        "description": f"The {name} test tool.",
        "use_cases": ["Testing"],
        "platforms": ["linux", "macos"],
    }
    write(dist / "SMART_TOOL.md", front_matter(manifest, f"\n# {name}\n\nGuidance.\n"))
    if descriptor:
        data: dict[str, Any] = {"manifest": "SMART_TOOL.md", "cli_argv": ["python3", "cli.py"]}
        if smoke is not None:
            data["deterministic_smoke"] = smoke
        write(dist / "smart-tool.json", json.dumps(data))
    return dist


def checks_of(tool: Tool) -> dict[str, str]:
    return {c.id: c.status for c in tool.checks}


RUNTIME_RULES = {"loads-without-provider", "help-discloses-model-backed", "deterministic-capability-runs",
                 "failure-names-remedy", "no-hang-stdin-closed"}


def test_smart_tools(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-do-not-leak")
    monkeypatch.setenv("SMARTY_MODEL", "gpt-test")
    monkeypatch.setenv("TOOLCATALOG_TEST_PASSED", "yes")
    env_out = tmp_path / "smoke-env.json"
    smart_tool(tmp_path, "smarty", smoke=["stats", "--env-out", str(env_out)])
    smart_tool(tmp_path, "quiet", disclose=False, smoke=["stats"])
    smart_tool(tmp_path, "crashy", traceback=True, smoke=["stats"])
    smart_tool(tmp_path, "mismatched", manifest_version="9.9.9", smoke=["stats"])
    smart_tool(tmp_path, "loose", descriptor=False)

    # OPENAI_API_KEY is even listed in `env`: provider variables never reach a smart tool.
    catalog, _ = run_check(tmp_path, env=["OPENAI_API_KEY", "SMARTY_MODEL", "TOOLCATALOG_TEST_PASSED"])

    smarty = tool_of(catalog, "smarty")
    assert smarty.status == "passed", smarty.status_detail
    assert [(c.name, c.kind) for c in smarty.capabilities] == [("stats", "deterministic"), ("summarize", "model-backed")]
    assert smarty.capabilities[0].summary == "Count the words of --text."
    assert smarty.kind == "mixed"
    assert set(smarty.capability_help) == {"stats", "summarize"}
    assert "Deterministic. Help for stats." in smarty.capability_help["stats"]
    assert "Model-backed. Help for summarize." in smarty.capability_help["summarize"]
    assert all(status in ("pass", "skip") for status in checks_of(smarty).values()), smarty.checks
    assert RUNTIME_RULES <= {c.id for c in smarty.checks if c.status == "pass"}
    entry = catalog_json.tool_entry(smarty)
    assert entry["kind"] == "mixed" and [c["kind"] for c in entry["capabilities"]] == ["deterministic", "model-backed"]
    smoke_env = json.loads(env_out.read_text())
    assert "OPENAI_API_KEY" not in smoke_env and "SMARTY_MODEL" not in smoke_env
    assert smoke_env["TOOLCATALOG_TEST_PASSED"] == "yes" and "PATH" in smoke_env

    quiet = tool_of(catalog, "quiet")
    assert checks_of(quiet)["help-discloses-model-backed"] == "fail" and quiet.status == "failed"

    crashy = tool_of(catalog, "crashy")
    check = next(c for c in crashy.checks if c.id == "failure-names-remedy")
    assert check.status == "fail" and "traceback" in check.detail
    assert crashy.status == "failed"

    mismatched = tool_of(catalog, "mismatched")
    assert mismatched.status == "invalid"
    assert checks_of(mismatched)["manifest-version-matches-package"] == "fail"
    assert {c.id for c in mismatched.checks if c.status == "pass"} >= RUNTIME_RULES  # every runtime rule still ran
    assert mismatched.kind == "mixed"

    loose = tool_of(catalog, "loose")
    assert loose.status == "not-run" and "smart-tool.json" in loose.status_detail


def test_smart_tool_that_hangs_fails_no_hang(tmp_path: Path) -> None:
    smart_tool(tmp_path, "hangs", hang_short=True, smoke=["stats"])
    started = time.monotonic()
    catalog, _ = run_check(tmp_path, timeout=1.0)
    assert time.monotonic() - started < 15.0  # the hang costs one timeout, not 120 s
    tool = tool_of(catalog, "hangs")
    checks = {c.id: c for c in tool.checks}
    assert checks["no-hang-stdin-closed"].status == "fail" and "-h" in checks["no-hang-stdin-closed"].detail
    assert checks["help-short-flag"].status == "fail" and "timed out after 1s" in checks["help-short-flag"].detail
    assert checks["loads-without-provider"].status == "pass"
    assert tool.status == "failed"


# --------------------------------------------------------------------------- cache


def cache_workspace(root: Path) -> None:
    impl = "import json, sys\ndata = json.load(sys.stdin)\nprint(json.dumps({'sum': data['a'] + data['b']}))\n"
    speccify_tool(root, "adder", [("one", {"a": 1, "b": 1}, {"sum": 2}), ("two", {"a": 2, "b": 2}, {"sum": 4})],
                  files={f"{PLATFORM}.py": impl})
    speccify_tool(root, "other", [("bad", {"a": 1, "b": 1}, {"sum": 3})], files={f"{PLATFORM}.py": impl})
    aip_tool(root, "demo.echo", examples=[{"name": "echo", "input": {"t": "hi"}, "output": {"t": "hi"}}])
    aip_driver(root, "echo-cli", "demo.echo", bin="python3", bin_args=["e.py"], output={"default_format": "json"},
               entry=cli_entry("${input.t}"), files={"e.py": "import json, sys\nprint(json.dumps({'t': sys.argv[1]}))\n"})
    smart_tool(root, "cached-smart", smoke=["stats"])


def test_cache_skips_unchanged_tools_and_survives_corruption(tmp_path: Path) -> None:
    work = tmp_path / "ws"
    cache_workspace(work)
    options = dict(cache=True, cache_dir=str(tmp_path / "cache"))

    first, stats = run_check(work, **options)
    full = stats.processes
    assert full > 4 and stats.cached == 0
    reference = catalog_text(first)

    second, stats = run_check(work, **options)
    assert stats.processes == 0 and stats.cached == 4
    assert catalog_text(second) == reference

    impl = work / ".agent/tools/adder" / f"{PLATFORM}.py"
    impl.write_text(impl.read_text() + "# touched\n")
    third, stats = run_check(work, **options)
    assert stats.processes == 2 and stats.cached == 3  # only adder's two examples ran again
    assert catalog_text(third) == reference

    files = [p for p in (tmp_path / "cache").rglob("*") if p.is_file()]
    assert files
    garbage = [b"\x00\xff garbage", b"{\"key\": ", b"null", b"[]", b"{}"]
    for index, path in enumerate(files):
        path.write_bytes(garbage[index % len(garbage)])
    fourth, stats = run_check(work, **options)
    assert stats.processes == full and stats.cached == 0
    assert catalog_text(fourth) == reference
    fifth, stats = run_check(work, **options)  # the rebuilt cache is used again
    assert stats.processes == 0 and catalog_text(fifth) == reference


def test_cache_entries_with_the_right_key_but_a_broken_outcome_are_not_fatal(tmp_path: Path) -> None:
    work = tmp_path / "ws"
    cache_workspace(work)
    options = dict(cache=True, cache_dir=str(tmp_path / "cache"))
    first, stats = run_check(work, **options)
    full, reference = stats.processes, catalog_text(first)
    # Each of these would crash a naive `apply`, whatever the tool: each must count as a miss.
    broken = ["text", [1], {"status": "passed", "examples": 5}, {"checks": [{"nope": 1}]}, {"capabilities": [7]}]
    for index, path in enumerate(sorted(p for p in (tmp_path / "cache").rglob("*.json"))):
        key = json.loads(path.read_text())["key"]
        path.write_text(json.dumps({"key": key, "outcome": broken[index % len(broken)]}))
    again, stats = run_check(work, **options)
    assert stats.processes == full and stats.cached == 0
    assert catalog_text(again) == reference


def test_a_second_mkdocs_build_starts_no_process(tmp_path: Path) -> None:
    cache_workspace(tmp_path)
    mkdocs_project(tmp_path, {"jobs": 2})
    first = build(tmp_path)
    started = re.findall(r"checked 4 tools in [0-9.]+s: (\d+) processes started", first.stderr)
    assert len(started) == 1 and int(started[0]) > 4, first.stderr
    reference = (tmp_path / "site" / "catalog.json").read_text()
    second = build(tmp_path)
    assert re.search(r"checked 4 tools in [0-9.]+s: 0 processes started, 4 tools' results from the cache", second.stderr), second.stderr
    assert (tmp_path / "site" / "catalog.json").read_text() == reference


# --------------------------------------------------------------------------- failure policy


def policy_workspace(root: Path, marker: Path) -> None:
    impl = (
        "import json, sys\n"
        f"open({str(marker)!r}, 'a').write('ran\\n')\n"
        "data = json.load(sys.stdin)\n"
        "print(json.dumps({'sum': data['a'] + data['b']}))\n"
    )
    speccify_tool(root, "adder", [("right", {"a": 1, "b": 1}, {"sum": 2}), ("off by one", {"a": 2, "b": 2}, {"sum": 5})],
                  files={f"{PLATFORM}.py": impl})


def test_strict_build_fails_on_a_failing_example_and_names_it(tmp_path: Path) -> None:
    policy_workspace(tmp_path, tmp_path / "marker.txt")
    mkdocs_project(tmp_path, {"cache": False, "jobs": 2})
    result = build(tmp_path, "--strict", check=False)
    assert result.returncode != 0
    assert ".agent/tools/adder/TOOL.md" in result.stderr
    assert "adder: example 'off by one' failed: $.sum: expected 5, got 4" in result.stderr
    relaxed = build(tmp_path)  # without --strict: a warning, and the page shows the failure
    assert "example 'off by one' failed" in relaxed.stderr
    adder = site_catalog(tmp_path)["tools"][0]
    assert adder["status"] == "failed"
    assert [e["status"] for e in adder["examples"]] == ["passed", "failed"]


def test_fail_on_fails_even_quietly(tmp_path: Path) -> None:
    policy_workspace(tmp_path, tmp_path / "marker.txt")
    mkdocs_project(tmp_path, {"cache": False, "jobs": 2, "fail_on": ["failed"]})
    result = build(tmp_path, "-q", check=False)
    assert result.returncode != 0
    assert "fail_on" in result.stderr and "adder (failed)" in result.stderr


def test_run_examples_off_starts_nothing(tmp_path: Path) -> None:
    marker = tmp_path / "marker.txt"
    policy_workspace(tmp_path, marker)
    mkdocs_project(tmp_path, {"run_examples": False, "fail_on": ["failed"]})
    result = build(tmp_path, "--strict")
    assert "processes started" not in result.stderr
    adder = site_catalog(tmp_path)["tools"][0]
    assert adder["status"] == "not-run"
    assert {e["status"] for e in adder["examples"]} == {"not-run"}
    assert not marker.exists()


# --------------------------------------------------------------------------- toolcatalog check


def test_toolcatalog_check_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cache_workspace(tmp_path)
    base = ["check", str(tmp_path), "--no-cache", "--jobs", "2"]

    assert cli_main(base) == 1  # `other` fails
    out, err = capsys.readouterr()
    lines = out.splitlines()
    assert lines[0].split() == ["TOOL", "FORMAT", "STATUS", "DETAIL"]
    rows = {line.split()[0]: line.split()[2] for line in lines[1:] if not line.startswith(" ")}
    assert rows == {"adder": "passed", "cached-smart": "passed", "demo.echo": "passed", "other": "failed"}
    assert "example 'bad': $.sum: expected 3, got 2" in out
    assert "4 tools checked" in err and "processes started" in err

    assert cli_main([*base, "--json"]) == 1
    data = json.loads(capsys.readouterr()[0])
    assert {t["id"]: t["status"] for t in data["tools"]} == rows

    assert cli_main([*base, "--tool", "adder", "--tool", "demo.echo", "--json"]) == 0
    data = json.loads(capsys.readouterr()[0])
    assert [t["id"] for t in data["tools"]] == ["adder", "demo.echo"]

    assert cli_main([*base, "--tool", "other"]) == 1
    capsys.readouterr()
    assert cli_main([*base, "--tool", "no.such.tool"]) == 2
    assert "no.such.tool" in capsys.readouterr()[1]

    broken = tmp_path / ".agent/tools/adder/TOOL.md"
    broken.write_text(broken.read_text().replace("name: adder", "name: Adder!"))
    assert cli_main([*base, "--tool", "Adder!"]) == 1  # invalid
    assert capsys.readouterr()[0].splitlines()[1].split()[:3] == ["Adder!", "speccify", "invalid"]


def test_malformed_or_risky_contracts_never_run(tmp_path: Path) -> None:
    marker = tmp_path / "RAN"
    script = f"""
    import json, pathlib
    pathlib.Path({str(marker)!r}).write_text("ran")
    print(json.dumps({{"n": 1}}))
    """
    cases = {
        "demo.string-mutates": {"mutates": "workspace:/scratch"},  # not a list: invalid
        "demo.list-approval": {"approval": ["always"]},  # not a string: invalid
        "demo.risky": {"risk_level": 3},  # valid, but admits irreversible effects
    }
    for tool_id, fields in cases.items():
        aip_tool(tmp_path, tool_id, examples=[{"name": "one", "input": {}, "output": {"n": 1}}], **fields)
        aip_driver(tmp_path, f"{tool_id}-cli", tool_id, bin="python3", bin_args=["run.py"],
                   output={"default_format": "json"}, entry=cli_entry(), files={"run.py": script})
    catalog, _ = run_check(tmp_path)
    assert not marker.exists()
    for tool_id in cases:
        tool = tool_of(catalog, tool_id)
        assert tool.examples[0].status == "not-run", tool_id
    assert tool_of(catalog, "demo.string-mutates").effects.mutates is None  # never shown as read-only
    assert "invalid" in tool_of(catalog, "demo.list-approval").examples[0].detail
    assert "risk level is 3" in tool_of(catalog, "demo.risky").examples[0].detail
    catalog, _ = run_check(tmp_path, allow_mutating=["demo.risky"])
    assert tool_of(catalog, "demo.risky").status == "passed" and marker.exists()
