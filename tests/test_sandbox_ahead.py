"""Runs started ahead of their turn (issue 21): under bubblewrap, the engine sets up a later
run's sandbox (its control groups, its caps, bubblewrap's namespaces and mounts) while the current
run goes on, with or without a core to spare. The tool itself waits behind a gate: under our own
tracer, bubblewrap's process in the sandbox held at its block descriptor until the build lets the
run go (no process in front of the tool, nothing on its stdin); under strace, a shell that reads
one line of its stdin before it execs the tool. Either way it starts only in its turn, gets
exactly its input and its caps, and never starts when the build goes away or ends the run.
Real bubblewrap, tracers and processes; nothing here measures time."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import pytest

from manifests import PLATFORM, speccify_tool
from procs import gone, held_at_gate, no_leftovers, processes_under  # noqa: F401 (an autouse fixture)
from sitebuild import run_check, tool_of
from toolcatalog import sandbox, shellenv, spawner
from toolcatalog.conformance import engine, job
from toolcatalog.harvest import harvest
from toolcatalog.options import Options
from toolcatalog.sandbox import layout, limits

FACTS = sandbox.probe("auto")
needs_gate = pytest.mark.skipif(FACTS.mechanism != "bwrap" or not (FACTS.own_tracer or limits.shell()),
                                reason="needs bubblewrap with namespaces, and our tracer or dash")
needs_ours = pytest.mark.skipif(FACTS.mechanism != "bwrap" or not FACTS.own_tracer, reason="needs bubblewrap and our tracer")

ECHO_PY = r"""
import json, sys
data = sys.stdin.buffer.read()
print(json.dumps({"ok": True, "raw": data.decode("utf-8", "replace")}))
"""


def _context(ws: Path) -> job.Context:
    return job.make_context(Options(cache=False, timeout=20.0), ws)


def _tool(ws: Path) -> Path:
    return speccify_tool(ws, "echo", [("echoes", {"x": 1}, {"ok": True})], files={f"{PLATFORM}.py": ECHO_PY})


def _waiting_gates(ws: Path) -> list[tuple[int, str]]:
    """What waits at the gate of `ws`'s runs started ahead, once the chain reached it: bubblewrap's
    process in the sandbox held by our tracer, or (strace) the gate shell itself (not the tracer or
    bubblewrap, whose command lines hold the gate's script too)."""
    if FACTS.own_tracer:
        held = set(held_at_gate(ws))
        return [(pid, line) for pid, line in processes_under(ws) if pid in held]
    return [(pid, line) for pid, line in processes_under(ws) if line.startswith(f"{limits.shell()} -c read -r _")]


def _until_gate(ws: Path) -> list[tuple[int, str]]:
    """The gate shells waiting for `ws`'s runs, once the chain reached them. Bounded by a backstop
    far above what setting up a chain takes on any machine (it is not a measure of speed): a
    loaded CI runner once took longer than the 20 s this waited before."""
    deadline = time.monotonic() + 120
    while not _waiting_gates(ws) and time.monotonic() < deadline:
        time.sleep(0.02)
    return _waiting_gates(ws)


def _chains(ctx: job.Context) -> str:
    """What the runs started ahead are doing: for a failure's message (each chain's processes,
    their state and the kernel function they sleep in)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except (OSError, ValueError):
            continue
        children.setdefault(int(stat[stat.rindex(")") + 2:].split()[1]), []).append(int(entry.name))
    lines = []
    for items in ctx._ahead.values():
        todo = [begun.proc.pid for _, begun in items]
        while todo:
            pid = todo.pop()
            todo += children.get(pid, [])
            try:
                state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
                wchan = Path(f"/proc/{pid}/wchan").read_text()
                cmd = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ")[:120].decode("utf-8", "replace")
            except OSError as exc:
                state, wchan, cmd = "gone", "", str(exc)
            lines.append(f"{pid} {state} {wchan} {cmd}")
    return "\n".join(lines) or "nothing started ahead"


@needs_gate
def test_a_run_started_ahead_waits_behind_its_gate_and_gets_exactly_its_input(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    folder = _tool(ws)
    ctx = _context(ws)
    argv = [sys.executable, str(folder / f"{PLATFORM}.py")]
    ctx.start_ahead(job.Start.of(argv, folder, ctx.env, False))
    gates = _until_gate(ws)
    assert gates, _chains(ctx)
    # Set up and waiting: the tool's own program has not started (only the chain and the gate exist).
    assert not [line for _, line in processes_under(ws) if line.startswith(sys.executable)], processes_under(ws)
    time.sleep(0.3)  # a gate that leaks would let the tool start meanwhile
    assert not [line for _, line in processes_under(ws) if line.startswith(sys.executable)], processes_under(ws)
    given = b'{"x": 1}\nsecond line\n'
    spawned = ctx.run(argv, cwd=folder, stdin=given, timeout_s=20, env=ctx.env)
    assert spawned.mechanism == "bwrap" and spawned.result.exit_code == 0, spawned.result
    assert json.loads(spawned.result.stdout)["raw"] == given.decode()  # the gate's line is not the tool's
    assert spawned.observed is not None and spawned.observed.traced and not spawned.observed.incomplete, spawned.observed
    assert gone(*(pid for pid, _ in gates))
    assert not ctx._ahead  # taken


@needs_gate
def test_a_gate_that_is_never_opened_never_starts_the_tool(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    folder = _tool(ws)
    ctx = _context(ws)
    argv = [sys.executable, str(folder / f"{PLATFORM}.py")]
    start = job.Start.of(argv, folder, ctx.env, False)
    ctx.start_ahead(start)
    assert _until_gate(ws), _chains(ctx)
    launch, begun = ctx._ahead[start][0]
    with launch:
        if launch.held:
            # The build ends the run at the gate (as when it is gone: its end of the gate closed).
            assert isinstance(begun.proc, spawner.Child) and begun.proc.gate is not None
            begun.proc.release(go=False)
        # What a shell's gate sees when the build is gone: its stdin at end of file, no gate line.
        result = begun.finish(b"", timeout_s=20)
        seen = launch.observe()
    assert result.exit_code not in (0, None) and result.stdout == b"", result
    assert sys.executable not in seen.programs and not seen.programs, seen  # the tool was never executed
    ctx._ahead.clear()


CAPS_PY = r"""
import json, os, resource, sys
data = sys.stdin.buffer.read()
print(json.dumps({"ok": True, "raw": data.decode(), "caps": [list(resource.getrlimit(r)) for r in (resource.RLIMIT_DATA, resource.RLIMIT_FSIZE)],
                  "environ": open("/proc/self/environ", "rb").read().decode()}))
"""


@needs_ours
@pytest.mark.parametrize("ahead", [True, False])
def test_our_tracer_sets_the_caps_before_the_tool_starts_and_nothing_stands_in_front_of_it(tmp_path: Path, ahead: bool) -> None:
    # No shell in front of the tool: the caps are set by our tracer on bubblewrap's process in the
    # sandbox before it starts the tool, soft and hard alike, so the tool (and all it starts) has
    # them from its first instruction; a run started ahead gets its input and nothing else.
    ws = tmp_path / "ws"
    folder = speccify_tool(ws, "caps", [("a", {"x": 1}, {"ok": True})], files={f"{PLATFORM}.py": CAPS_PY})
    ctx = job.make_context(Options(cache=False, timeout=20.0, sandbox_memory_mb=700, sandbox_file_mb=3), ws)
    argv = [sys.executable, str(folder / f"{PLATFORM}.py")]
    if ahead:
        ctx.start_ahead(job.Start.of(argv, folder, ctx.env, False))
        assert _until_gate(ws), _chains(ctx)
    spawned = ctx.run(argv, cwd=folder, stdin=b"{}", timeout_s=20, env=ctx.env)
    assert not ctx._ahead
    assert spawned.result.exit_code == 0, spawned.result
    seen = json.loads(spawned.result.stdout)
    assert seen["raw"] == "{}"
    if ctx.sandbox.limiter is not None:
        assert seen["caps"] == [[700 << 20, 700 << 20], [3 << 20, 3 << 20]]
    assert spawned.observed is not None and spawned.observed.programs == [sys.executable], spawned.observed  # the tool's own exec only
    names = [item.split("=", 1)[0] for item in seen["environ"].split("\0") if item]
    if limits.shell() is not None:  # the order dash, which stood in front of the tool before, handed it on
        assert names == list(shellenv.dash_order({**layout.scratch_env(ctx.env), "PWD": str(folder.resolve())})), names


@needs_gate
def test_runs_started_ahead_and_never_taken_are_ended_with_their_folders(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    folder = _tool(ws)
    ctx = _context(ws)
    argv = [sys.executable, str(folder / f"{PLATFORM}.py")]
    for _ in range(2):
        ctx.start_ahead(job.Start.of(argv, folder, ctx.env, False))
    assert len(_until_gate(ws)) >= 1, _chains(ctx)
    roots = [launch.root for items in ctx._ahead.values() for launch, _ in items]
    assert len(roots) == 2 and all(r.is_dir() for r in roots)
    ctx.drop_ahead()
    sandbox.flush()
    assert not processes_under(ws) or gone(*(pid for pid, _ in processes_under(ws)))
    assert not any(r.exists() for r in roots)


def _counting_takes(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """Whether each sandboxed run of the checks that follow was one started ahead."""
    taken: list[bool] = []
    original = job.Context._take_ahead

    def counting(self: job.Context, *args: object) -> object:
        found = original(self, *args)  # type: ignore[arg-type]
        taken.append(found is not None)
        return found

    monkeypatch.setattr(job.Context, "_take_ahead", counting)
    return taken


@needs_gate
@pytest.mark.parametrize("jobs,cpus", [(1, 2), (1, 1), (2, 2)])
def test_a_check_starts_runs_ahead_with_or_without_a_spare_core_and_they_give_the_same_results(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, jobs: int, cpus: int) -> None:
    # Not only with a core to spare: at --jobs = CPUs a start ahead still overlaps what a sandboxed
    # start spends asleep (the cgroup v1 entry's RCU grace period), so it is started ahead there too.
    ws = tmp_path / "ws"
    for name in ("one", "two", "three"):
        speccify_tool(ws, name, [("a", {"x": 1}, {"ok": True}), ("b", {"x": 2}, {"ok": True})], files={f"{PLATFORM}.py": ECHO_PY})
    taken = _counting_takes(monkeypatch)
    monkeypatch.setattr(engine, "usable_cpus", lambda: cpus)
    found, stats = run_check(ws, jobs=jobs)
    assert stats.processes == 6 and taken.count(True) == 6 - jobs, taken  # every run but each worker's first was started ahead
    monkeypatch.setattr(engine, "_starts_ahead", lambda ctx: False)  # the same check, every run started in its turn
    taken.clear()
    plain, _ = run_check(ws, jobs=jobs)
    assert taken.count(True) == 0
    for name in ("one", "two", "three"):
        ahead, inline = tool_of(found, name), tool_of(plain, name)
        assert ahead.status == inline.status == ahead.status.PASSED
        for left, right in zip(ahead.examples, inline.examples):
            assert [r.actual for r in left.runs] == [r.actual for r in right.runs]
            assert [r.observed for r in left.runs] == [r.observed for r in right.runs]


def test_starting_ahead_needs_bubblewrap_not_a_spare_core(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ctx = job.make_context(Options(cache=False), tmp_path, sandbox=sandbox.Facts("off", reason="off"))
    monkeypatch.setattr(engine, "usable_cpus", lambda: 4)
    assert not engine._starts_ahead(ctx)
    if FACTS.mechanism == "bwrap":
        ctx = _context(tmp_path)
        assert engine._starts_ahead(ctx)


LOUD_PY = r"""
import json, sys, time
sys.stdin.read()
time.sleep(1.0)  # alive long enough to be seen while the work meanwhile looks (its output is read beside it)
sys.stdout.write(json.dumps({"ok": True, "pad": "x" * 300000}))
"""


@needs_gate
def test_the_next_start_ahead_overlaps_the_run_that_was_started_ahead(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    folder = speccify_tool(ws, "loud", [("a", {"x": 1}, {"ok": True})], files={f"{PLATFORM}.py": LOUD_PY})
    ctx = _context(ws)
    argv = [sys.executable, str(folder / f"{PLATFORM}.py")]
    ctx.start_ahead(job.Start.of(argv, folder, ctx.env, False))
    assert _until_gate(ws), _chains(ctx)
    seen: list[list[str]] = []

    def work() -> None:
        # The gate is open: the tool starts and lives a second (its output, more than a pipe
        # holds, is read beside this by the run's reader thread; a backstop, as in `_until_gate`).
        deadline = time.monotonic() + 120
        tool: list[str] = []
        while not tool and time.monotonic() < deadline:
            tool = [line for _, line in processes_under(ws) if line.startswith(sys.executable)]
            time.sleep(0.01)
        seen.append(tool)

    with job.meanwhile(work):
        spawned = ctx.run(argv, cwd=folder, stdin=b"{}", timeout_s=20, env=ctx.env)
    assert spawned.result.exit_code == 0 and len(spawned.result.stdout) > 300000, spawned.result.stderr
    assert len(seen) == 1 and seen[0], seen  # done once, while the tool ran


def test_meanwhile_work_is_done_once_even_when_the_task_starts_nothing() -> None:
    done: list[int] = []
    with job.meanwhile(lambda: done.append(1)):
        pass
    with job.meanwhile(lambda: 1 / 0):  # a failure of the work is not the task's
        pass
    assert done == [1]
