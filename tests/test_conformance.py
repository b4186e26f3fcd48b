"""Running examples and checks against REAL tools written into tmp_path (no mocks).

Covers the three runners (speccify, AIP-14 through AIP-30 drivers including an
MCP stdio server, smart tools), the process runner's guarantees (timeouts kill
the whole group, output caps, scrubbed environment), one tool's internal error,
the build's failure policy and the `toolcatalog check` command (and Ctrl-C).
The results cache has its own file, test_cache.py.

No assertion measures time: a process that must be stopped leaves a file behind
if it is not, and a hang is caught by a generous subprocess or tool timeout.

Tests that learn what a tool did from files it writes into tmp_path (process ids, markers, the
environment it saw) run with `sandbox: off`: in the sandbox those writes never reach the disk
(tests/test_sandbox.py covers that). The others run as a build does by default.

Every tool written here lives in tmp_path, so the autouse `no_leftovers`
fixture can tell, after each test, whether any process whose command line or
working directory is inside tmp_path is still alive.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest

from manifests import (
    ECHO_STDIN_PY,
    OTHER_PLATFORM,
    PLATFORM,
    aip_driver,
    aip_tool,
    behaving_smart_cli,
    cli_entry,
    counting_smart_cli,
    mixed_workspace,
    smart_tool,
    speccify_tool,
    write,
)
from procs import gone, no_leftovers  # noqa: F401 (no_leftovers: an autouse fixture)
from sitebuild import REPO, build, catalog as site_catalog, catalog_text, mkdocs_project, run_check, tool_of
from toolcatalog.outputs import catalog_json
from toolcatalog.cli import main as cli_main
from toolcatalog.conformance import engine, job, mcp_stdio, smarttool
from toolcatalog.conformance.job import Job
from toolcatalog.model import Tool
from toolcatalog.formats.smarttool import RUNTIME_RULES as ALL_RUNTIME_RULES, STATIC_RULE_IDS, STATIC_RULES
from toolcatalog.options import Options
from toolcatalog.sandbox import layout
from toolcatalog.scrub import scrubber

pytestmark = pytest.mark.skipif(os.name != "posix" or not Path("/proc/self/stat").exists(), reason="POSIX process groups and /proc")

PY = sys.executable


# --------------------------------------------------------------------------- helpers


def example_of(tool: Tool, title: str):
    for example in tool.examples:
        if example.title == title:
            return example
    raise AssertionError(f"{tool.id} has no example {title!r}: {[e.title for e in tool.examples]}")


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
    assert tool.status_detail == f"1 passed, 0 failed, 0 skipped ({PLATFORM}.py)"
    run = tool.examples[0].runs[0]
    assert run.actual["exe"] == os.path.abspath(PY)
    # Results reach the model with this machine's paths made relative to the workspace.
    assert run.actual["cwd"] == folder.relative_to(tmp_path).as_posix()
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
    assert detail["ok but exit 1"] == ("failed", "the expected output says `ok: true` (success), so the tool must exit with code 0, but it exited with code 1")
    assert detail["not ok, exit 1"] == ("passed", "")  # with ok: false the exit code is not inspected
    status, text = detail["schema violation"]
    assert status == "failed" and text.startswith("output violates the outputs schema at $.count: ")
    assert detail["crash"] == ("failed", "exit code 3 with empty stdout: boom: it broke")
    assert tool.status == "failed" and tool.status_detail == f"2 passed, 5 failed, 0 skipped ({PLATFORM}.py)"
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
    pids, survived = tmp_path / "pids.txt", tmp_path / "survived.txt"
    impl = f"""
    import os, sys, time
    sys.stdin.read()
    child = os.fork()  # the grandchild inherits stdout and holds the pipe open
    if child == 0:
        time.sleep(60)
        open({str(survived)!r}, "w").write("the grandchild outlived the timeout")
        os._exit(0)
    with open({str(pids)!r}, "w") as handle:
        handle.write(f"{{os.getpid()}} {{child}}")
    time.sleep(120)
    """
    speccify_tool(tmp_path, "sleeper", [("hangs", {}, {"ok": True})], files={f"{PLATFORM}.py": impl})
    catalog, _ = run_check(tmp_path, timeout=1.0, sandbox="off")
    example = tool_of(catalog, "sleeper").examples[0]
    assert example.status == "failed" and example.detail == "timed out after 1s"
    leader, grandchild = map(int, pids.read_text().split())
    assert gone(leader, grandchild)
    # Waiting for the pipe to close instead of killing the group would have let the grandchild finish.
    assert not survived.exists()


def test_leader_exits_but_a_grandchild_keeps_the_pipe_open(tmp_path: Path) -> None:
    pids, survived = tmp_path / "pids.txt", tmp_path / "survived.txt"
    impl = f"""
    import json, os, sys, time
    sys.stdin.read()
    child = os.fork()
    if child == 0:  # holds stdout open long after its parent is gone
        time.sleep(120)
        open({str(survived)!r}, "w").write("the grandchild was waited for")
        os._exit(0)
    open({str(pids)!r}, "w").write(str(child))
    print(json.dumps({{"ok": True}}), flush=True)
    """
    speccify_tool(tmp_path, "daemonish", [("returns, leaves a child", {}, {"ok": True})], files={f"{PLATFORM}.py": impl})
    catalog, _ = run_check(tmp_path, timeout=60.0, sandbox="off")
    example = tool_of(catalog, "daemonish").examples[0]
    # Passed, not timed out: the leftover was killed when its parent exited, not waited for until the timeout.
    assert example.status == "passed", example.detail
    assert gone(int(pids.read_text()))
    assert not survived.exists()


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
    options = Options(jobs=2, cache=False, timeout=60)
    catalog = harvest({str(tmp_path)!r}, options)
    engine.check(catalog, options)
    after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    example = catalog.tools[0].examples[0]
    print(json.dumps({{"status": example.status, "detail": example.detail, "growth_kb": after - before}}))
    """
    result = subprocess.run([PY, "-c", textwrap.dedent(probe)], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    outcome = json.loads(result.stdout)
    assert outcome["status"] == "failed"
    assert outcome["detail"] == "stdout exceeded the output cap; the process was stopped"  # not a timeout
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
    # Sandboxed, PATH keeps only what the sandbox shows (the build's Python first, then the system).
    path = os.environ["PATH"] if example.runs[0].sandbox is None else layout.sandbox_path(os.environ["PATH"], str(tmp_path.resolve()))
    assert env["PATH"] == scrubber(tmp_path)(path)  # the home folder shows as ~


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
    assert tool.status == "passed" and tool.status_detail == "4 passed, 0 failed, 0 skipped"
    hostile_runs = example_of(tool, "hostile text").runs
    assert [r.driver for r in hostile_runs] == ["args-full", "args-lite"]
    for run in hostile_runs:
        # the envelope {ok: true, value} is unwrapped; the argv element arrived whole and unexpanded
        assert run.actual["argv"][1] == scrubber(tmp_path)(hostile) and "ok" not in run.actual
        assert run.actual["cwd"] == (full if run.driver == "args-full" else full.parent / "args-lite").relative_to(tmp_path).as_posix()
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
    assert extra.status == "skipped" and extra.detail == "partial-cli: uses input extra, which this driver drops"
    assert [r.status for r in extra.runs] == ["skipped"]
    # passed needs every example to pass through at least one driver; nothing failed, so not-run
    assert tool.status == "not-run" and tool.status_detail == "1 passed, 0 failed, 1 skipped"
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

    catalog, stats = run_check(tmp_path, sandbox="off")
    tool = tool_of(catalog, "notes.write")
    assert tool.status == "not-run" and "allow_mutating" in tool.status_detail
    assert tool.examples[0].status == "skipped" and "allow_mutating" in tool.examples[0].detail
    assert "allow_mutating" in tool.drivers[0].run_status["notes.write"]
    assert stats.processes == 0 and not side_effect.exists()

    for allowed in (["notes.write"], ["notes.*"]):
        side_effect.unlink(missing_ok=True)
        catalog, stats = run_check(tmp_path, allow_mutating=allowed, sandbox="off")
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
    assert unrunnable.examples[0].status == "skipped"
    assert stats.processes == 1


def test_tool_timeout_ms_bounds_the_call(tmp_path: Path) -> None:
    pids = tmp_path / "pid.txt"
    sleeper = f"import os, time\nopen({str(pids)!r}, 'w').write(str(os.getpid()))\ntime.sleep(120)\n"
    aip_tool(tmp_path, "demo.slow", timeout_ms=1500, examples=[{"name": "slow", "input": {}, "output": {}}])
    aip_driver(tmp_path, "slow-cli", "demo.slow", bin="python3", bin_args=["sleep.py"], output={"default_format": "json"},
               files={"sleep.py": sleeper})
    catalog, _ = run_check(tmp_path, timeout=30.0, sandbox="off")  # the tool's 1.5 s wins over the option's 30 s
    tool = tool_of(catalog, "demo.slow")
    assert tool.examples[0].detail == "slow-cli: timed out after 1.5s" and tool.status == "failed"
    # On a loaded machine the interpreter may not even have started when the time is up; when it
    # did, it must be gone.
    if pids.exists() and pids.read_text():
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
    catalog, stats = run_check(tmp_path, sandbox="off")
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
    catalog, _ = run_check(tmp_path, sandbox="off")
    detail = {e.title: (e.status, e.detail) for e in tool_of(catalog, "demo.err").examples}
    assert detail["documented rejection"] == ("passed", "")
    assert detail["wrong code"] == ("failed", 'math-err: $.error.code: expected "not_found", got "input_invalid"')
    assert detail["unexpected error"][0] == "failed" and "returned an error" in detail["unexpected error"][1]
    assert detail["a list"] == ("skipped", "math-err: not run: MCP tool arguments must be an object, and this input is not")


def test_mcp_server_that_never_answers_times_out_and_is_stopped(tmp_path: Path) -> None:
    pid_file = tmp_path / "server-pids.txt"
    folder = mcp_workspace(tmp_path, "math-hang", "demo.hang", [
        {"name": "hangs", "input": {"a": 1, "b": 1}, "output": {"sum": 2}},
    ], pid_file, timeout_ms=1000)
    write(folder / "hang", "")
    catalog, _ = run_check(tmp_path, sandbox="off")
    example = tool_of(catalog, "demo.hang").examples[0]
    assert example.status == "failed" and example.detail == "math-hang: timed out after 1s"
    # Stopped, not left to its 120 s; the SDK adds its own shutdown grace (stdin close, 2 s wait, SIGTERM).
    assert gone(*[int(p) for p in pid_file.read_text().split()])


def test_mcp_errors_name_their_cause(tmp_path: Path) -> None:
    pid_file = tmp_path / "server-pids.txt"
    example = [{"name": "call", "input": {"a": 1, "b": 1}, "output": {"sum": 2}}]
    mcp_workspace(tmp_path, "math-wrong-name", "demo.wrongname", example, pid_file, mcp_tool="subtract")
    crashing = mcp_workspace(tmp_path, "math-crash", "demo.crash", example, pid_file)
    write(crashing / "crash", "")
    catalog, _ = run_check(tmp_path, sandbox="off")
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
    assert rows == [["math.add", "aip-14", "passed", "2 passed, 0 failed, 0 skipped"]], result.stdout
    assert "2 processes started" in result.stderr


# --------------------------------------------------------------------------- smart tools

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
    smart_tool(tmp_path, "quiet", behaving_smart_cli("quiet", disclose=False), smoke=["stats"])
    smart_tool(tmp_path, "crashy", behaving_smart_cli("crashy", traceback=True), smoke=["stats"])
    smart_tool(tmp_path, "mismatched", manifest_version="9.9.9", smoke=["stats"])
    smart_tool(tmp_path, "loose", descriptor=False)

    # OPENAI_API_KEY is even listed in `env`: provider variables never reach a smart tool.
    catalog, _ = run_check(tmp_path, env=["OPENAI_API_KEY", "SMARTY_MODEL", "TOOLCATALOG_TEST_PASSED"], sandbox="off")

    smarty = tool_of(catalog, "smarty")
    assert smarty.status == "passed", smarty.status_detail
    assert [(c.name, c.kind) for c in smarty.capabilities] == [("stats", "deterministic"), ("summarize", "model-backed")]
    assert smarty.capabilities[0].summary == "Count the words of --text."
    assert smarty.kind == "mixed"
    assert set(smarty.capability_help) == {"stats", "summarize"}
    assert "Deterministic. Help for stats." in smarty.capability_help["stats"]
    assert "Model-backed. Help for summarize." in smarty.capability_help["summarize"]
    assert all(status in ("passed", "skipped") for status in checks_of(smarty).values()), smarty.checks
    assert RUNTIME_RULES <= {c.id for c in smarty.checks if c.status == "passed"}
    entry = catalog_json.tool_entry(smarty)
    assert entry["kind"] == "mixed" and [c["kind"] for c in entry["capabilities"]] == ["deterministic", "model-backed"]
    smoke_env = json.loads(env_out.read_text())
    assert "OPENAI_API_KEY" not in smoke_env and "SMARTY_MODEL" not in smoke_env
    assert smoke_env["TOOLCATALOG_TEST_PASSED"] == "yes" and "PATH" in smoke_env

    quiet = tool_of(catalog, "quiet")
    assert checks_of(quiet)["help-discloses-model-backed"] == "failed" and quiet.status == "failed"

    crashy = tool_of(catalog, "crashy")
    check = next(c for c in crashy.checks if c.id == "failure-names-remedy")
    assert check.status == "failed" and "traceback" in check.detail
    assert crashy.status == "failed"

    mismatched = tool_of(catalog, "mismatched")
    assert mismatched.status == "invalid"
    assert checks_of(mismatched)["manifest-version-matches-package"] == "failed"
    assert {c.id for c in mismatched.checks if c.status == "passed"} >= RUNTIME_RULES  # every runtime rule still ran
    assert mismatched.kind == "mixed"

    loose = tool_of(catalog, "loose")
    # The kit's verdict on a manifest without a descriptor: descriptor-present and manifest-present
    # fail; nothing runs, so every runtime rule is skipped with the reason.
    assert loose.status == "failed" and "descriptor-present" in loose.status_detail
    assert {checks_of(loose)[rule] for rule in RUNTIME_RULES} == {"skipped"}


def test_smart_tool_that_hangs_fails_no_hang(tmp_path: Path) -> None:
    smart_tool(tmp_path, "hangs", behaving_smart_cli("hangs", hang_short=True), smoke=["stats"])
    catalog, _ = run_check(tmp_path, timeout=5.0, sandbox="off")  # the hang costs one timeout, not its 120 s
    tool = tool_of(catalog, "hangs")
    checks = {c.id: c for c in tool.checks}
    assert checks["no-hang-stdin-closed"].status == "failed" and "-h" in checks["no-hang-stdin-closed"].detail
    # A call that timed out is no-hang-stdin-closed's failure; its own rule could not be judged.
    assert checks["help-short-flag"].status == "skipped" and "timed out after 5s" in checks["help-short-flag"].detail
    assert checks["loads-without-provider"].status == "passed"
    assert tool.status == "failed"


def test_a_smart_tool_for_another_platform_is_not_applicable(tmp_path: Path) -> None:
    calls = tmp_path / "calls.log"
    smart_tool(tmp_path / "ws", "elsewhere", counting_smart_cli(2, calls), platforms=[OTHER_PLATFORM], smoke=["cap-0"])
    smart_tool(tmp_path / "ws", "here", counting_smart_cli(2, calls), platforms=[PLATFORM], smoke=["cap-0"])
    catalog, stats = run_check(tmp_path / "ws", sandbox="off")
    elsewhere = tool_of(catalog, "elsewhere")
    assert elsewhere.status == "not-applicable", elsewhere.status_detail
    assert elsewhere.status_detail == f"platforms {OTHER_PLATFORM} exclude {PLATFORM}"
    # Static rules still reported; every runtime rule is skipped with the reason.
    assert [c.id for c in elsewhere.checks] == [rule for rule, _ in (*STATIC_RULES, *ALL_RUNTIME_RULES)]
    assert all(c.status in ("passed", "skipped") for c in elsewhere.checks if c.id in STATIC_RULE_IDS)
    assert all(c.status == "skipped" and OTHER_PLATFORM in c.detail for c in elsewhere.checks if c.id not in STATIC_RULE_IDS)
    assert tool_of(catalog, "here").status == "passed"
    assert stats.processes == len(calls.read_text().splitlines())  # only `here` started anything
    entry = json.loads(catalog_text(catalog))
    assert {t["id"]: t["status"] for t in entry["tools"]} == {"elsewhere": "not-applicable", "here": "passed"}


def test_capability_help_calls_are_capped(tmp_path: Path) -> None:
    calls = tmp_path / "calls.log"
    smart_tool(tmp_path / "ws", "wide", counting_smart_cli(60, calls), smoke=["cap-0"])
    catalog, _ = run_check(tmp_path / "ws", sandbox="off")
    tool = tool_of(catalog, "wide")
    assert len(tool.capabilities) == 60  # all listed
    helps = [json.loads(line) for line in calls.read_text().splitlines()]
    capability_helps = [c for c in helps if len(c) == 2 and c[1] == "--help"]
    assert len(capability_helps) == smarttool.MAX_CAPABILITY_HELP == 50
    assert [c[0] for c in capability_helps] == [f"cap-{i}" for i in range(50)]
    check = next(c for c in tool.checks if c.id == "capability-help")
    assert check.status == "passed"
    assert "10 more capabilities not checked (only the first 50 get a `--help` call): `cap-50`, `cap-51`" in check.detail
    assert tool.status == "passed", tool.status_detail



# --------------------------------------------------------------------------- one tool's internal error


def test_a_raising_task_or_finish_fails_only_its_tool(tmp_path: Path) -> None:
    for name in ("good", "task-raises", "finish-raises", "planner-raises"):
        speccify_tool(tmp_path, name, [("one", {"x": 1}, {"x": 1})], files={f"{PLATFORM}.py": ECHO_STDIN_PY})
    real = dict(engine.PLANNERS)

    def planner(tool: Tool, ctx: job.Context) -> Job:
        job = real["speccify"](tool, ctx)
        if tool.id == "task-raises":
            def boom() -> Any:
                raise ValueError("boom in a task")
            job.tasks = [boom, *job.tasks]
        elif tool.id == "finish-raises":
            def finish(results: list[Any]) -> Any:
                raise KeyError("missing-result")
            job.finish = finish
        elif tool.id == "planner-raises":
            raise RuntimeError("planner fell over")
        return job

    planners = {**real, "speccify": planner}
    options = dict(cache=True, cache_dir=str(tmp_path / "cache"))
    catalog, stats = run_check(tmp_path, planners=planners, **options)

    assert tool_of(catalog, "good").status == "passed"
    task = tool_of(catalog, "task-raises")
    assert task.status == "error"
    assert "internal error" in task.status_detail and "ValueError: boom in a task" in task.status_detail
    assert [e.status for e in task.examples] == ["error"]
    finish = tool_of(catalog, "finish-raises")
    assert finish.status == "error" and "KeyError: 'missing-result'" in finish.status_detail
    planned = tool_of(catalog, "planner-raises")
    assert planned.status == "error" and "RuntimeError: planner fell over" in planned.status_detail
    assert "internal error" in catalog_text(catalog)  # and the catalog is still produced

    # An internal error is never cached: the next run tries those tools again.
    again, stats = run_check(tmp_path, planners=planners, **options)
    assert stats.cached == 1  # only `good`
    assert tool_of(again, "task-raises").status == "error"


def test_a_malformed_fresh_outcome_is_an_internal_error_not_a_crash(tmp_path: Path) -> None:
    speccify_tool(tmp_path, "good", [("one", {"x": 1}, {"x": 1})], files={f"{PLATFORM}.py": ECHO_STDIN_PY})
    speccify_tool(tmp_path, "odd", [("one", {"x": 1}, {"x": 1})], files={f"{PLATFORM}.py": ECHO_STDIN_PY})
    real = dict(engine.PLANNERS)

    def planner(tool: Tool, ctx: job.Context) -> Job:
        job = real["speccify"](tool, ctx)
        if tool.id == "odd":
            finish = job.finish
            job.finish = lambda results: dataclasses.replace(finish(results), status="bogus")
        return job

    catalog, _ = run_check(tmp_path, planners={**real, "speccify": planner})
    assert tool_of(catalog, "good").status == "passed"
    odd = tool_of(catalog, "odd")
    assert odd.status == "error" and "malformed" in odd.status_detail
    catalog_text(catalog)  # publishable


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
    mkdocs_project(tmp_path, {"sandbox": "off", "cache": False, "jobs": 2})
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
    mkdocs_project(tmp_path, {"sandbox": "off", "cache": False, "jobs": 2, "fail_on": ["failed"]})
    result = build(tmp_path, "-q", check=False)
    assert result.returncode != 0
    assert "fail_on" in result.stderr and "adder (failed)" in result.stderr


def test_run_examples_off_starts_nothing(tmp_path: Path) -> None:
    marker = tmp_path / "marker.txt"
    policy_workspace(tmp_path, marker)
    mkdocs_project(tmp_path, {"sandbox": "off", "run_examples": False, "fail_on": ["failed"]})
    result = build(tmp_path, "--strict")
    assert "processes started" not in result.stderr
    adder = site_catalog(tmp_path)["tools"][0]
    assert adder["status"] == "not-run"
    assert {e["status"] for e in adder["examples"]} == {"skipped"}
    assert not marker.exists()


# --------------------------------------------------------------------------- toolcatalog check


def test_toolcatalog_check_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    mixed_workspace(tmp_path)
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


def test_ctrl_c_stops_queued_and_running_examples(tmp_path: Path) -> None:
    started_log, finished_log = tmp_path / "started.log", tmp_path / "finished.log"
    impl = textwrap.dedent(f"""\
        import json, sys, time
        data = json.load(sys.stdin)
        with open({str(started_log)!r}, "a") as log:
            log.write("started\\n")
        time.sleep(60)
        with open({str(finished_log)!r}, "a") as log:
            log.write("finished\\n")
        print(json.dumps(data))
        """)
    speccify_tool(tmp_path, "sleepy", [(f"case {i}", {"i": i}, {"i": i}) for i in range(6)],
                  files={f"{PLATFORM}.py": impl})
    proc = subprocess.Popen(
        [sys.executable, "-m", "toolcatalog.cli", "check", str(tmp_path), "--jobs", "1", "--no-cache", "--sandbox", "off"],
        cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    try:
        while not (started_log.exists() and started_log.read_text()) and proc.poll() is None:
            time.sleep(0.05)
        assert started_log.exists(), "the first example never started"
        proc.send_signal(signal.SIGINT)
        # A hang guard only: waiting for the running example would take 60 s and write finished.log.
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 130, err
    assert "toolcatalog: interrupted" in err and "Traceback" not in err
    assert not finished_log.exists()  # the running example was stopped, not waited for
    assert len(started_log.read_text().splitlines()) == 1  # the queued examples never started


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
    catalog, _ = run_check(tmp_path, sandbox="off")
    assert not marker.exists()
    for tool_id in cases:
        tool = tool_of(catalog, tool_id)
        assert tool.examples[0].status == "skipped", tool_id
    assert tool_of(catalog, "demo.string-mutates").effects.mutates is None  # never shown as read-only
    assert "invalid" in tool_of(catalog, "demo.list-approval").examples[0].detail
    assert "risk level is 3" in tool_of(catalog, "demo.risky").examples[0].detail
    catalog, _ = run_check(tmp_path, allow_mutating=["demo.risky"], sandbox="off")
    assert tool_of(catalog, "demo.risky").status == "passed" and marker.exists()
