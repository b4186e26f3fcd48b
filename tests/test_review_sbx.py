"""A review of the sandbox start-cost change (issue 21: dash's `ulimit`, runs started ahead behind a
gate): the holes found by attacking it, each closed. Real bubblewrap, strace and processes."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from manifests import PLATFORM, speccify_tool
from procs import gone, no_leftovers, processes_under  # noqa: F401 (an autouse fixture)
from toolcatalog import process, sandbox
from toolcatalog.conformance import job
from toolcatalog.options import Options
from toolcatalog.sandbox import limits

FACTS = sandbox.probe("auto")
needs_gate = pytest.mark.skipif(FACTS.mechanism != "bwrap" or limits.shell() is None,
                                reason="needs bubblewrap with namespaces and dash")

ENV_PY = r"""
import json, os, sys
sys.stdin.buffer.read()
print(json.dumps(dict(os.environ), sort_keys=True))
"""


def _tool(ws: Path) -> Path:
    return speccify_tool(ws, "env", [("prints", {"x": 1}, {"ok": True})], files={f"{PLATFORM}.py": ENV_PY})


@needs_gate
def test_the_gate_does_not_empty_a_variable_of_the_tool_named_like_its_own(tmp_path: Path) -> None:
    # The gate's `read -r _` set `_`, a variable the shell exports when the environment has it
    # (`env: [_]` passes the build's own `_`): the tool got `_=` instead of its value.
    ws = tmp_path / "ws"
    folder = _tool(ws)
    ctx = job.make_context(Options(cache=False, timeout=20.0), ws)
    env = {**ctx.env, "_": "kept", "_g": "kept too"}
    argv = [sys.executable, str(folder / f"{PLATFORM}.py")]
    ctx.start_ahead(job.Start.of(argv, folder, env, False))
    assert ctx._ahead, "the run was started ahead"
    spawned = ctx.run(argv, cwd=folder, stdin=b"{}", timeout_s=20, env=env)
    assert not ctx._ahead, "the run started ahead was taken"
    assert spawned.result.exit_code == 0, spawned.result
    seen = json.loads(spawned.result.stdout)
    assert seen["_"] == "kept" and seen["_g"] == "kept too", seen
    plain = ctx.run(argv, cwd=folder, stdin=b"{}", timeout_s=20, env=env)  # started in its turn: the same
    assert json.loads(plain.result.stdout) == seen


@needs_gate
def test_work_done_meanwhile_does_not_eat_the_tools_time(tmp_path: Path) -> None:
    # The next run's start ahead (its folders, a working-folder copy of up to 64 MiB, strace's
    # Popen) was done on the thread that reads this run's pipes: a tool that wrote more than a pipe
    # holds waited, blocked, while its timeout ran, and timed out where in its turn it passes.
    ws = tmp_path / "ws"
    folder = _tool(ws)
    ctx = job.make_context(Options(cache=False, timeout=20.0, max_output_bytes=8 << 20), ws)
    argv = ["/usr/bin/head", "-c", str(4 << 20), "/dev/zero"]
    ctx.start_ahead(job.Start.of(argv, folder, ctx.env, False))
    assert ctx._ahead
    timeout = 1.5

    def neighbour() -> None:  # a slow setup of the next run (a big copy on a loaded machine)
        time.sleep(timeout + 0.5)

    with job.meanwhile(neighbour):
        spawned = ctx.run(argv, cwd=folder, stdin=b"{}", timeout_s=timeout, env=ctx.env)
    assert not ctx._ahead
    result = spawned.result
    assert not result.timed_out and result.exit_code == 0 and len(result.stdout) == 4 << 20, result.stderr


def test_a_started_process_is_read_while_the_work_meanwhile_goes_on(tmp_path: Path) -> None:
    # The same, with no sandbox: `Started.finish` reads the output while `meanwhile` runs.
    begun = process.start_process(["/usr/bin/head", "-c", str(4 << 20), "/dev/zero"], cwd=tmp_path, env={})
    assert isinstance(begun, process.Started)
    result = begun.finish(b"x", timeout_s=1.0, max_stdout=8 << 20, meanwhile=lambda: time.sleep(1.5))
    assert not result.timed_out and result.exit_code == 0 and len(result.stdout) == 4 << 20, result


@needs_gate
def test_a_start_ahead_that_ends_after_the_runs_were_dropped_leaves_nothing(tmp_path: Path) -> None:
    # An interrupted check drops the runs started ahead while its workers still run (the pool is
    # not waited for): a worker's start ahead that was under way then kept its chain and folders
    # (a waiting gate and a run folder with its copy) to the end of the build.
    ws = tmp_path / "ws"
    folder = _tool(ws)
    ctx = job.make_context(Options(cache=False, timeout=20.0), ws)
    argv = [sys.executable, str(folder / f"{PLATFORM}.py")]
    ctx.drop_ahead()  # the check is over
    ctx.start_ahead(job.Start.of(argv, folder, ctx.env, False))  # a worker's, finishing late
    left = [launch.root for items in ctx._ahead.values() for launch, _ in items]
    ctx.drop_ahead()  # (the test's own clean-up, when the hole is open)
    sandbox.flush()
    assert not left, "a run started ahead after the check ended was kept"


def _groups_here() -> bool:
    from toolcatalog.sandbox import cgroup
    return FACTS.mechanism is not None and (cgroup.pids_parent() is not None or cgroup.memory_parent() is not None)


@pytest.mark.skipif(not _groups_here(), reason="needs a sandbox and control groups the build may create")
def test_the_python_that_enters_the_control_groups_adds_no_locale_variable(tmp_path: Path) -> None:
    # Where the shell would change the environment (a name that is no shell identifier), the
    # build's Python moves the run into its control groups; in the C locale (no LANG, or LANG=C:
    # many CI images) Python's locale coercion set LC_CTYPE=C.UTF-8 in its environment, and the
    # tool got it.
    ws = tmp_path / "ws"
    folder = ws / "tool"
    folder.mkdir(parents=True)
    ctx = job.make_context(Options(cache=False, timeout=20.0), ws)
    env = {k: v for k, v in ctx.env.items() if not k.startswith(("LC_", "LANG"))}
    argv = ["/usr/bin/env", "-0"]
    seen = {}
    for extra in ({"LANG": "C", "odd-name": "1"}, {"odd-name": "1"}, {"LANG": "C", "LC_CTYPE": "POSIX", "odd-name": "1"}):
        result = ctx.run(argv, cwd=folder, stdin=b"", timeout_s=20, env={**env, **extra}).result
        assert result.exit_code == 0, result
        got = dict(item.split("=", 1) for item in result.stdout.decode().split("\0") if item)
        assert got.pop("PWD") == str(folder)
        seen[tuple(extra)] = got
        assert {k: v for k, v in got.items() if k not in ("HOME", "TMPDIR")} == \
            {k: v for k, v in {**env, **extra}.items() if k not in ("HOME", "TMPDIR")}, got


def _env_of(stdout: bytes) -> dict[str, str]:
    return dict(item.split("=", 1) for item in stdout.decode().split("\0") if item)


def test_the_landlock_launcher_starts_the_tool_with_exactly_its_environment(tmp_path: Path) -> None:
    # The launcher is Python too (the Landlock fallback, and the exec limiter inside bubblewrap):
    # in the C locale its own start added LC_CTYPE=C.UTF-8, and the tool got it.
    from toolcatalog.sandbox import landlock_launcher
    if landlock_launcher.abi_version() < 1:
        pytest.skip("needs Landlock")
    env = {"PATH": "/usr/bin:/bin", "LANG": "C", "odd-name": "1", "X": "a\nb"}
    done = subprocess.run([sys.executable, "-I", "-S", landlock_launcher.__file__, "--ro", "/", "--cwd", str(tmp_path),
                           "--", "/usr/bin/env", "-0"], env=env, capture_output=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert _env_of(done.stdout) == env


@needs_gate
def test_a_run_with_exec_allow_gets_exactly_its_environment(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    folder = ws / "tool"
    folder.mkdir(parents=True)
    ctx = job.make_context(Options(cache=False, timeout=20.0), ws)
    env = {**{k: v for k, v in ctx.env.items() if not k.startswith(("LC_", "LANG"))}, "LANG": "C"}
    result = ctx.run(["/usr/bin/env", "-0"], cwd=folder, stdin=b"", timeout_s=20, env=env, programs=["/usr/bin/env"]).result
    assert result.exit_code == 0, result
    got = _env_of(result.stdout)
    assert "LC_CTYPE" not in got and got["LANG"] == "C", got


@needs_gate
def test_a_run_started_ahead_during_another_run_outlives_that_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A process started with a parent-death signal gets it when the thread that started it ends:
    # with the work meanwhile on a short-lived thread, the next run (started ahead there) was
    # killed as that thread ended, and failed with exit code -9 when it was taken. Always so where
    # the signal is set in the forked child (no setpriv: `parent_death_preexec`), by chance with setpriv.
    monkeypatch.setattr(process, "_setpriv_prefix", lambda: None)
    ws = tmp_path / "ws"
    folder = _tool(ws)
    ctx = job.make_context(Options(cache=False, timeout=20.0), ws)
    argv = [sys.executable, str(folder / f"{PLATFORM}.py")]
    start = job.Start.of(argv, folder, ctx.env, False)
    ctx.start_ahead(start)
    with job.meanwhile(lambda: ctx.start_ahead(start)):
        first = ctx.run(argv, cwd=folder, stdin=b"{}", timeout_s=20, env=ctx.env)
    assert first.result.exit_code == 0, first.result
    assert len(ctx._ahead[start]) == 1
    second = ctx.run(argv, cwd=folder, stdin=b"{}", timeout_s=20, env=ctx.env)
    assert not ctx._ahead
    assert second.result.exit_code == 0, second.result


def test_a_process_started_for_the_mcp_sdk_gets_exactly_its_environment_in_the_c_locale() -> None:
    # The parent-death shim is Python: started in the C locale it adds LC_CTYPE=C.UTF-8 to its
    # os.environ (PEP 538), which the command it execs got as well.
    env = {"LANG": "C", "PATH": "/usr/bin:/bin", "ODD-NAME": "x y"}
    done = subprocess.run(process.die_with_parent_argv(["env", "-0"]), env=env, capture_output=True, timeout=30)
    assert done.returncode == 0, done.stderr
    got = dict(item.partition(b"=")[::2] for item in done.stdout.split(b"\0") if item)
    assert got == {key.encode(): value.encode() for key, value in env.items()}


def test_the_default_jobs_follow_the_cpus_the_build_may_use() -> None:
    # os.cpu_count() counts the machine's CPUs; a container or taskset may allow fewer, and then
    # "a core to spare" for starting runs ahead is not there.
    code = "from toolcatalog.conformance import engine; print(engine.usable_cpus())"
    done = subprocess.run(["taskset", "-c", "0", sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    if done.returncode != 0 and "taskset" in done.stderr:
        pytest.skip(f"taskset cannot restrict this process: {done.stderr.strip()}")
    assert done.stdout.strip() == "1", done.stderr
