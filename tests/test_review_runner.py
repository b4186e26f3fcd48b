"""Regression tests for the runner review: each one failed (or hung) before its fix.

Real files, real subprocesses, no mocks. Anything that hung before its fix runs
in a subprocess with a timeout, so a regression fails the test instead of
hanging the suite.
"""

from __future__ import annotations

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
import yaml

from procs import no_leftovers  # noqa: F401 (an autouse fixture)
from sitebuild import REPO, mkdocs_project, write
from toolcatalog.outputs import catalog_json
from toolcatalog import jsonschemas
from toolcatalog.conformance import engine, job, smarttool
from toolcatalog.conformance.job import Job
from toolcatalog.harvest import harvest
from toolcatalog.model import Catalog, Tool
from toolcatalog.options import Options

pytestmark = pytest.mark.skipif(os.name != "posix" or not Path("/proc/self/stat").exists(), reason="POSIX process groups and /proc")

PLATFORM = job.current_platform()
OTHER_PLATFORM = "windows" if PLATFORM != "windows" else "linux"
ECHO_PY = "import json, sys\nprint(json.dumps(json.load(sys.stdin)))\n"


# --------------------------------------------------------------------------- helpers


def front_matter(data: dict[str, Any], body: str = "") -> str:
    return "---\n" + yaml.safe_dump(data, sort_keys=False, allow_unicode=True) + "---\n" + textwrap.dedent(body)


def speccify_tool(root: Path, name: str, cases: list[tuple[str, Any, Any]], files: dict[str, str] | None = None,
                  **front: Any) -> Path:
    folder = root / ".agent" / "tools" / name
    data = {"name": name, "description": f"Test tool {name}.", "inputs": {"type": "object"},
            "outputs": {"type": "object"}, "effects": "none", **front}
    lines = ["", "## Examples", ""]
    for title, given, expected in cases:
        lines += [f"### {title}", f"input: {json.dumps(given)}", f"output: {json.dumps(expected)}", ""]
    write(folder / "TOOL.md", front_matter(data) + "\n".join(lines))
    for rel, text in (files or {}).items():
        write(folder / rel, text)
    return folder


def smart_tool(root: Path, name: str, cli: str, platforms: list[str] | None = None, smoke: str = "cap-0") -> Path:
    dist = root / "dists" / name
    write(dist / "cli.py", cli)
    write(dist / "pyproject.toml", f'[project]\nname = "{name}"\nversion = "0.1.0"\n')
    manifest = {"smart_tool_format": 1, "name": name, "version": "0.1.0", "description": f"The {name} test tool.",
                "use_cases": ["Testing"], "platforms": platforms or ["linux", "macos"]}
    write(dist / "SMART_TOOL.md", front_matter(manifest, f"\n# {name}\n\nGuidance.\n"))
    write(dist / "smart-tool.json", json.dumps({"manifest": "SMART_TOOL.md", "cli_argv": ["python3", "cli.py"],
                                                "deterministic_smoke": [smoke]}))
    return dist


def smart_cli(capabilities: int, calls_log: Path) -> str:
    """A conforming smart-tool CLI listing `capabilities` deterministic capabilities; logs every call."""
    return textwrap.dedent(f"""\
        import json, sys
        with open({str(calls_log)!r}, "a") as log:
            log.write(json.dumps(sys.argv[1:]) + "\\n")
        CAPS = ["cap-%d" % i for i in range({capabilities})]
        args = sys.argv[1:]
        if args in (["--help"], ["-h"]):
            print("# tool\\n\\nNothing here is model-backed.\\n")
            for name in CAPS:
                print("- `%s` [deterministic] -- Does %s." % (name, name))
            sys.exit(0)
        if args and args[0] in CAPS:
            print("help for " + args[0] if "--help" in args else json.dumps({{"ok": True}}))
            sys.exit(0)
        print(json.dumps({{"error": {{"code": "unknown", "message": "no such capability", "remedy": "see --help"}}}}))
        sys.exit(2)
        """)


def run_check(root: Path, planners: dict | None = None, **options: Any) -> tuple[Catalog, engine.Stats]:
    opts = Options(**{"jobs": 2, "cache": False, "timeout": 20.0, **options})
    catalog = harvest(root, opts)
    stats = engine.check(catalog, opts, planners=planners) if planners is not None else engine.check(catalog, opts)
    return catalog, stats


def tool_of(catalog: Catalog, tool_id: str) -> Tool:
    tool = catalog.tool(tool_id)
    assert tool is not None, [t.id for t in catalog.tools]
    return tool


def catalog_text(catalog: Catalog) -> str:
    return catalog_json.dumps(catalog_json.document(catalog))


def toolcatalog(*args: str, cwd: Path = REPO, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "toolcatalog.cli", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=timeout)


# --------------------------------------------------------------------------- 1. ReDoS in schema patterns

CATASTROPHIC = "^(a|a)*$"  # exponential for every backtracking engine, `regex` included
EVIL_TEXT = "a" * 40 + "!"


def test_a_catastrophic_pattern_does_not_hang_validate(tmp_path: Path) -> None:
    inputs = {
        "type": "object",
        "properties": {
            "nested": {"type": "string", "pattern": "^(a+)+$"},  # the review's reproduction (Python re: hangs)
            "text": {"type": "string", "pattern": CATASTROPHIC},
        },
    }
    speccify_tool(tmp_path, "redos", [("evil", {"nested": "a" * 33 + "!", "text": EVIL_TEXT}, {"ok": True})],
                  inputs=inputs)
    started = time.monotonic()
    result = toolcatalog("validate", str(tmp_path), timeout=60)
    assert time.monotonic() - started < 30
    out = result.stdout
    assert result.returncode == 0, out + result.stderr  # example inputs that violate `inputs` are warnings
    assert "pattern '^(a|a)*$' took too long to match (catastrophic backtracking); the value was not checked against it" in out
    assert "does not match '^(a+)+$'" in out  # decided (quickly) by the regex engine


SAFE_KEYWORDS_SCRIPT = """
import json, sys, time
from toolcatalog import jsonschemas
evil = "a" * 40 + "!"
pat = "^(a|a)*$"
cases = {
    "pattern": ({"type": "string", "pattern": pat}, evil),
    "patternProperties": ({"type": "object", "patternProperties": {pat: {"type": "integer"}}}, {evil: "x", "aa": "y"}),
    "additionalProperties": ({"type": "object", "patternProperties": {pat: {}}, "additionalProperties": False}, {evil: 1, "zz": 2}),
    "unevaluatedProperties": ({"type": "object", "patternProperties": {pat: {}}, "unevaluatedProperties": False}, {evil: 1}),
    "unevaluatedProperties-2019": ({"$schema": "https://json-schema.org/draft/2019-09/schema", "type": "object",
                                    "patternProperties": {pat: {}}, "unevaluatedProperties": False}, {evil: 1}),
    "draft-07": ({"$schema": "http://json-schema.org/draft-07/schema#", "type": "object",
                  "patternProperties": {pat: {}}, "additionalProperties": False}, {evil: 1}),
    "propertyNames": ({"type": "object", "propertyNames": {"pattern": pat}}, {evil: 1}),
    "many-values": ({"type": "array", "items": {"type": "string", "pattern": pat}}, [evil + str(i) for i in range(300)]),
}
out = {}
for name, (schema, instance) in cases.items():
    started = time.monotonic()
    problems = jsonschemas.validate(schema, instance, limit=500)
    out[name] = {"seconds": time.monotonic() - started, "messages": [p.message for p in problems],
                 "paths": [list(p.path) for p in problems]}
json.dump(out, sys.stdout)
"""


def test_every_keyword_that_matches_patterns_has_a_time_limit(tmp_path: Path) -> None:
    result = subprocess.run([sys.executable, "-c", SAFE_KEYWORDS_SCRIPT], capture_output=True, text=True, timeout=90)
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout)
    slow = "took too long to match (catastrophic backtracking)"
    for name, found in out.items():
        assert found["seconds"] < jsonschemas.TOTAL_MATCH_BUDGET_S + 1.5, (name, found["seconds"])
        assert any(slow in m for m in found["messages"]), (name, found["messages"])
    # Patterns that are decided are still applied: "aa" matches, so its value is checked.
    assert "'y' is not of type 'integer'" in out["patternProperties"]["messages"]
    assert "'x' is not of type 'integer'" not in out["patternProperties"]["messages"]  # unchecked, and said so
    # Not each of 300 strings costs a full timeout: the whole validation has one budget.
    assert len(out["many-values"]["messages"]) == 300


def test_check_schema_compiles_patterns_with_the_engine_that_validates() -> None:
    # `\p{L}` is valid ECMA-262 (JSON Schema's dialect) that Python's `re` refuses; `regex` matches it.
    schema = {"type": "string", "pattern": "^\\p{L}+$"}
    assert jsonschemas.check_schema(schema) == []
    assert jsonschemas.validate(schema, "héllo") == []
    assert [p.message for p in jsonschemas.validate(schema, "h3llo")] == ["'h3llo' does not match '^\\\\p{L}+$'"]
    broken = jsonschemas.check_schema({"type": "string", "pattern": "(unclosed"})
    assert broken and "is not a regular expression Python can compile" in broken[0].message


# --------------------------------------------------------------------------- 2. one raising task


def test_a_raising_task_or_finish_fails_only_its_tool(tmp_path: Path) -> None:
    for name in ("good", "task-raises", "finish-raises", "planner-raises"):
        speccify_tool(tmp_path, name, [("one", {"x": 1}, {"x": 1})], files={f"{PLATFORM}.py": ECHO_PY})
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
    assert task.status == "failed"
    assert "internal error" in task.status_detail and "ValueError: boom in a task" in task.status_detail
    assert [e.status for e in task.examples] == ["not-run"]
    finish = tool_of(catalog, "finish-raises")
    assert finish.status == "failed" and "KeyError: 'missing-result'" in finish.status_detail
    planned = tool_of(catalog, "planner-raises")
    assert planned.status == "failed" and "RuntimeError: planner fell over" in planned.status_detail
    assert "internal error" in catalog_text(catalog)  # and the catalog is still produced

    # An internal error is never cached: the next run tries those tools again.
    again, stats = run_check(tmp_path, planners=planners, **options)
    assert stats.cached == 1  # only `good`
    assert tool_of(again, "task-raises").status == "failed"


def test_a_malformed_fresh_outcome_is_an_internal_error_not_a_crash(tmp_path: Path) -> None:
    speccify_tool(tmp_path, "good", [("one", {"x": 1}, {"x": 1})], files={f"{PLATFORM}.py": ECHO_PY})
    speccify_tool(tmp_path, "odd", [("one", {"x": 1}, {"x": 1})], files={f"{PLATFORM}.py": ECHO_PY})
    real = dict(engine.PLANNERS)

    def planner(tool: Tool, ctx: job.Context) -> Job:
        job = real["speccify"](tool, ctx)
        if tool.id == "odd":
            finish = job.finish
            job.finish = lambda results: {**finish(results), "status": "bogus"}
        return job

    catalog, _ = run_check(tmp_path, planners={**real, "speccify": planner})
    assert tool_of(catalog, "good").status == "passed"
    odd = tool_of(catalog, "odd")
    assert odd.status == "failed" and "malformed" in odd.status_detail
    catalog_text(catalog)  # publishable


# --------------------------------------------------------------------------- 3. hash_tree and special files


@pytest.mark.parametrize("special", ["dev-zero-link", "fifo"])
def test_a_link_to_a_device_or_a_fifo_in_a_tool_folder_does_not_hang_the_build(tmp_path: Path, special: str) -> None:
    folder = speccify_tool(tmp_path, "plain", [("one", {"x": 1}, {"x": 1})], files={f"{PLATFORM}.py": ECHO_PY})
    if special == "dev-zero-link":
        os.symlink("/dev/zero", folder / "data")
    else:
        os.mkfifo(folder / "pipe")
    write(tmp_path / "mkdocs.yml", yaml.safe_dump({"site_name": "x", "plugins": [{"toolcatalog": {"cache_dir": str(tmp_path / "cache")}}]}))
    started = time.monotonic()
    result = toolcatalog("check", str(tmp_path), "--json", timeout=60)
    assert time.monotonic() - started < 30
    assert result.returncode == 0, result.stdout + result.stderr
    assert json.loads(result.stdout)["tools"][0]["status"] == "passed"


HASH_SCRIPT = """
import json, os, sys
from pathlib import Path
from toolcatalog.files import hash_tree
root = Path(sys.argv[1])
hashes = {"first": hash_tree(root), "again": hash_tree(root)}
(root / "a.txt").write_text("changed")  # a file's content
hashes["content"] = hash_tree(root)
(root / "link").unlink()
os.symlink("b.txt", root / "link")  # where a link points
hashes["relinked"] = hash_tree(root)
(root / "b.txt").write_text("changed too")  # the file a link points at: not followed
hashes["target-content"] = hash_tree(root)
(root / "pipe").unlink()
(root / "pipe").write_text("")  # a FIFO replaced by an empty file
hashes["kind"] = hash_tree(root)
hashes["zero-root"] = hash_tree(root / "zero")  # a link as the root
hashes["dangling-root"] = hash_tree(root / "dangling")
json.dump(hashes, sys.stdout)
"""


def test_hash_tree_hashes_links_as_their_target_text_and_special_files_by_kind(tmp_path: Path) -> None:
    root = tmp_path / "tree"
    write(root / "a.txt", "one")
    write(root / "b.txt", "two")
    os.symlink("a.txt", root / "link")
    os.symlink("/dev/zero", root / "zero")
    os.symlink("/no/such/target", root / "dangling")
    (root / "sub").mkdir()
    os.symlink("../sub", root / "linked-folder")
    os.mkfifo(root / "pipe")
    result = subprocess.run([sys.executable, "-c", HASH_SCRIPT, str(root)], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    h = json.loads(result.stdout)
    assert h["again"] == h["first"]
    assert h["content"] != h["first"]
    assert h["relinked"] != h["content"]
    assert h["target-content"] != h["relinked"]  # b.txt itself is hashed as a file
    assert h["kind"] != h["target-content"]
    assert h["zero-root"] != h["dangling-root"]


# --------------------------------------------------------------------------- 4. results from another checkout


WHERE_CLI = textwrap.dedent("""\
    import json, os, sys
    args = sys.argv[1:]
    if args in (["--help"], ["-h"]):
        print("Nothing here is model-backed.\\n- `where` [deterministic] -- Runs in " + os.getcwd() + ".")
    elif args == ["where", "--help"]:
        print("help")
    elif args == ["where"]:
        print(json.dumps({"cwd": os.getcwd()}))
    else:
        print(json.dumps({"error": {"code": "unknown", "message": "no such capability", "remedy": "see --help"}}))
        sys.exit(2)
    """)


def test_a_cached_result_from_another_checkout_carries_none_of_its_paths(tmp_path: Path) -> None:
    # A smart tool's key names no path of the checkout (`python3` is found on PATH), so before the
    # fix the second checkout reused the first one's result, capability summary and all.
    first = tmp_path / "checkout-one"
    smart_tool(first, "where", WHERE_CLI, smoke="where")
    options = dict(cache=True, cache_dir=str(tmp_path / "shared-cache"))
    one, stats = run_check(first, **options)
    assert stats.processes > 0 and tool_of(one, "where").status == "passed", tool_of(one, "where").checks
    assert str(first) in tool_of(one, "where").capabilities[0].summary  # the raw result names checkout one

    second = tmp_path / "checkout-two"
    shutil.copytree(first, second, symlinks=True)
    two, stats = run_check(second, **options)
    assert stats.cached == 0 and stats.processes > 0  # not reused across checkouts
    text = catalog_text(two)
    assert str(first) not in text and os.path.realpath(first) not in text
    assert "Runs in dists/where." in text  # its own path, scrubbed

    _, stats = run_check(second, **options)
    assert stats.cached == 1  # the same checkout still hits


# --------------------------------------------------------------------------- 5. planted cache entries


def cache_workspace(root: Path, calls_log: Path) -> None:
    speccify_tool(root, "adder", [("one", {"x": 1}, {"x": 1}), ("two", {"x": 2}, {"x": 2})],
                  files={f"{PLATFORM}.py": ECHO_PY})
    smart_tool(root, "smarty", smart_cli(2, calls_log))


PLANTED = {
    "unknown tool status": lambda o: {**o, "status": "bogus"},
    "exit code as text": lambda o: {**o, "examples": [{**e, "runs": [{**r, "exit_code": "zero"} for r in e["runs"]]} for e in o["examples"]]},
    "exit code as a bool": lambda o: {**o, "examples": [{**e, "runs": [{**r, "exit_code": True} for r in e["runs"]]} for e in o["examples"]]},
    "example status skipped": lambda o: {**o, "examples": [{**e, "status": "skipped"} for e in o["examples"]]},
    "run status unknown": lambda o: {**o, "examples": [{**e, "runs": [{**r, "status": "ok"} for r in e["runs"]]} for e in o["examples"]]},
    "status detail not text": lambda o: {**o, "status_detail": 5},
    "processes as a bool": lambda o: {**o, "processes": True},
    "lone surrogate": lambda o: {**o, "status_detail": "\ud800"},
    "NaN in an output": lambda o: {**o, "examples": [{**e, "runs": [{**r, "actual": float("nan")} for r in e["runs"]]} for e in o["examples"]]},
    "check status unknown": lambda o: {**o, "checks": [{**c, "status": "ok"} for c in o.get("checks", [])] or [{"id": "x", "status": "ok"}]},
    "capability kind unknown": lambda o: {**o, "capabilities": [{"name": "x", "kind": "magic", "summary": None}]},
    "tool kind unknown": lambda o: {**o, "kind": "psychic"},
    "driver reason not text": lambda o: {**o, "drivers": {"d": 1}},
    "too few examples": lambda o: {**o, "examples": o["examples"][:1]} if len(o["examples"]) > 1 else {**o, "examples": [1]},
    "planted internal error": lambda o: {**o, "internal_error": True},
}


def _plant(cache_dir: Path, change: Any) -> int:
    """Rewrite every cache entry's outcome with `change`, keeping its key; how many it changed."""
    planted = 0
    for path in sorted(cache_dir.rglob("*.json")):
        entry = json.loads(path.read_text())
        before = json.dumps(entry["outcome"], sort_keys=True)
        after = json.dumps(change(entry["outcome"]), sort_keys=True)
        if after != before:
            path.write_text(json.dumps({"key": entry["key"], "outcome": json.loads(after)}))
            planted += 1
    return planted


@pytest.mark.parametrize("damage", sorted(PLANTED))
def test_a_planted_cache_entry_of_the_wrong_shape_is_a_miss(tmp_path: Path, damage: str) -> None:
    work = tmp_path / "ws"
    cache_workspace(work, tmp_path / "calls.log")
    options = dict(cache=True, cache_dir=str(tmp_path / "cache"))
    first, stats = run_check(work, **options)
    reference = catalog_text(first)
    planted = _plant(tmp_path / "cache", PLANTED[damage])
    assert planted >= 1

    again, stats = run_check(work, **options)
    assert stats.cached == 2 - planted and stats.processes > 0  # each planted entry is a miss: run again
    assert catalog_text(again) == reference


def test_the_command_survives_a_planted_cache_entry_without_a_traceback(tmp_path: Path) -> None:
    work = tmp_path / "ws"
    cache_workspace(work, tmp_path / "calls.log")
    mkdocs_project(work, {"cache_dir": str(tmp_path / "cache"), "jobs": 2})
    first = toolcatalog("check", str(work), "--json")
    assert first.returncode == 0, first.stderr
    calls = len((tmp_path / "calls.log").read_text().splitlines())
    assert _plant(tmp_path / "cache", PLANTED["unknown tool status"]) == 2

    again = toolcatalog("check", str(work), "--json")
    assert "Traceback" not in again.stderr
    assert again.returncode == 0, again.stderr
    assert again.stdout == first.stdout
    assert len((tmp_path / "calls.log").read_text().splitlines()) == 2 * calls  # the smart tool ran again


# --------------------------------------------------------------------------- 6. Ctrl-C


def test_ctrl_c_stops_queued_and_running_examples(tmp_path: Path) -> None:
    started_log = tmp_path / "started.log"
    impl = textwrap.dedent(f"""\
        import json, sys, time
        data = json.load(sys.stdin)
        with open({str(started_log)!r}, "a") as log:
            log.write("started\\n")
        time.sleep(5)
        print(json.dumps(data))
        """)
    speccify_tool(tmp_path, "sleepy", [(f"case {i}", {"i": i}, {"i": i}) for i in range(6)],
                  files={f"{PLATFORM}.py": impl})
    proc = subprocess.Popen(
        [sys.executable, "-m", "toolcatalog.cli", "check", str(tmp_path), "--jobs", "1", "--no-cache"],
        cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    try:
        deadline = time.monotonic() + 30
        while not (started_log.exists() and started_log.read_text()) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert started_log.exists(), "the first example never started"
        time.sleep(0.5)
        interrupted = time.monotonic()
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
        took = time.monotonic() - interrupted
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    # Waiting for the running example alone would take 4.5 s more, for the queued ones 25 s.
    assert took < 3.0, (took, err)
    assert proc.returncode == 130, err
    assert "toolcatalog: interrupted" in err and "Traceback" not in err
    assert len(started_log.read_text().splitlines()) <= 2  # the queued examples never started


# --------------------------------------------------------------------------- 7. a tool that writes into its folder


def test_a_tool_that_writes_into_its_own_folder_is_a_cache_hit_on_the_next_build(tmp_path: Path) -> None:
    impl = textwrap.dedent("""\
        import json, sys
        data = json.load(sys.stdin)
        with open("runs.log", "a") as log:  # cwd is the tool's own folder
            log.write("ran\\n")
        print(json.dumps(data))
        """)
    folder = speccify_tool(tmp_path / "ws", "writer", [("one", {"x": 1}, {"x": 1})], files={f"{PLATFORM}.py": impl})
    options = dict(cache=True, cache_dir=str(tmp_path / "cache"))
    first, stats = run_check(tmp_path / "ws", **options)
    assert stats.processes == 1 and tool_of(first, "writer").status == "passed"
    assert (folder / "runs.log").read_text() == "ran\n"

    second, stats = run_check(tmp_path / "ws", **options)  # what `mkdocs serve` does after seeing the write
    assert stats.processes == 0 and stats.cached == 1
    assert (folder / "runs.log").read_text() == "ran\n"  # nothing ran, nothing written: no rebuild loop
    assert catalog_text(second) == catalog_text(first)

    (folder / "TOOL.md").write_text((folder / "TOOL.md").read_text() + "\n")  # a real edit still runs it
    _, stats = run_check(tmp_path / "ws", **options)
    assert stats.processes == 1


# --------------------------------------------------------------------------- 8, 9. smart tools


def test_a_smart_tool_for_another_platform_is_not_applicable(tmp_path: Path) -> None:
    calls = tmp_path / "calls.log"
    smart_tool(tmp_path / "ws", "elsewhere", smart_cli(2, calls), platforms=[OTHER_PLATFORM])
    smart_tool(tmp_path / "ws", "here", smart_cli(2, calls), platforms=[PLATFORM])
    catalog, stats = run_check(tmp_path / "ws")
    elsewhere = tool_of(catalog, "elsewhere")
    assert elsewhere.status == "not-applicable", elsewhere.status_detail
    assert elsewhere.status_detail == f"platforms {OTHER_PLATFORM} exclude {PLATFORM}"
    assert {c.id for c in elsewhere.checks} == {rule for rule, _ in smarttool.STATIC_RULES}  # static rules still reported
    assert all(c.status in ("pass", "skip") for c in elsewhere.checks)
    assert tool_of(catalog, "here").status == "passed"
    assert stats.processes == len(calls.read_text().splitlines())  # only `here` started anything
    entry = json.loads(catalog_text(catalog))
    assert {t["id"]: t["status"] for t in entry["tools"]} == {"elsewhere": "not-applicable", "here": "passed"}


def test_capability_help_calls_are_capped(tmp_path: Path) -> None:
    calls = tmp_path / "calls.log"
    smart_tool(tmp_path / "ws", "wide", smart_cli(60, calls))
    catalog, _ = run_check(tmp_path / "ws")
    tool = tool_of(catalog, "wide")
    assert len(tool.capabilities) == 60  # all listed
    helps = [json.loads(line) for line in calls.read_text().splitlines()]
    capability_helps = [c for c in helps if len(c) == 2 and c[1] == "--help"]
    assert len(capability_helps) == smarttool.MAX_CAPABILITY_HELP == 50
    assert [c[0] for c in capability_helps] == [f"cap-{i}" for i in range(50)]
    check = next(c for c in tool.checks if c.id == "capability-help")
    assert check.status == "pass"
    assert "10 more capabilities not checked (only the first 50 get a `--help` call): `cap-50`, `cap-51`" in check.detail
    assert tool.status == "passed", tool.status_detail
