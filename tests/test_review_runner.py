"""Review of the spawner (spawner.py) that starts unsandboxed runs: what a run, the build or the
machine can do to it. Real processes throughout: a test that makes the build lose its spawner uses
a spawner of its own (so this process keeps its spawner for the other tests); strace kills a
spawner at the one system call where it answers."""

from __future__ import annotations

import os
import resource
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from procs import gone
from toolcatalog import spawner
from toolcatalog.process import run_process, scrubbed_env

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux") or not spawner.available(), reason="the spawner is Linux-only")

@pytest.mark.skipif(shutil.which("strace") is None, reason="needs strace")
def test_a_run_the_spawner_started_before_it_died_is_not_started_a_second_time(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The spawner died after it started the run and before it said so (here strace kills it at its
    answer; a run that kills its parent at once does the same). The run was started: starting it
    again the old way would run the example twice (its effects twice, the second copy a child of
    the build). It is reported as not started, and runs after it start the old way. (A spawner of
    this test's own, so that this process keeps its spawner for the other tests.)"""
    own = spawner._Spawner()
    assert own.proc is not None and not own.broken
    monkeypatch.setattr(spawner, "_SPAWNER", own)
    pid = own.proc.pid
    tracer = subprocess.Popen(["strace", "-qq", "-o", "/dev/null", "-p", str(pid), "-e", "trace=sendto,sendmsg",
                               "-e", "inject=sendto,sendmsg:signal=KILL"], stdin=subprocess.DEVNULL)
    try:
        end = time.monotonic() + 30
        while Path(f"/proc/{pid}/status").read_text().split("TracerPid:")[1].split()[0] == "0":  # a hang guard
            assert tracer.poll() is None and time.monotonic() < end, "strace did not attach"
            time.sleep(0.01)
        count = tmp_path / "count"
        result = run_process(["/bin/sh", "-c", f"echo run >> {count}"], cwd=tmp_path, stdin=None, timeout_s=20,
                             env=scrubbed_env(), helper=True)
        tracer.wait(timeout=30)
    finally:
        if tracer.poll() is None:
            tracer.kill()
            tracer.wait()
        own.close()
    assert own.broken
    end = time.monotonic() + 10
    while not count.exists() and time.monotonic() < end:  # a hang guard: the copy the spawner started may still be on its way
        time.sleep(0.01)
    # A second copy, the old way, would have been run to its end before run_process returned.
    assert count.read_text() == "run\n", "the example ran twice"
    assert (result.error, result.exit_code) == ("could not start /bin/sh: the spawner ended while starting it", None)
    after = run_process(["/bin/echo", "after"], cwd=tmp_path, stdin=None, timeout_s=20, env=scrubbed_env(), helper=True)
    assert after.exit_code == 0 and after.stdout == b"after\n"  # the old way


class Interrupted(Exception):
    """What the test's signal handler raises, as Ctrl-C's KeyboardInterrupt or SIGTERM's SystemExit would."""


def interrupt(_number: int, _frame: object) -> None:
    raise Interrupted


def test_an_interrupt_while_waiting_for_a_run_leaves_no_answer_for_the_next_run_to_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Ctrl-C (or SIGTERM's SystemExit) raised in the main thread while it waits for a run: the next
    request must not read the answer meant for that wait as its own (the next start read "still
    running" and failed with a KeyError)."""
    own = spawner._Spawner()
    monkeypatch.setattr(spawner, "_SPAWNER", own)
    child = spawner.start(["/bin/sleep", "30"], str(tmp_path), scrubbed_env(), False)
    assert isinstance(child, spawner.Child)
    previous = signal.signal(signal.SIGUSR1, interrupt)
    timer = threading.Timer(0.3, os.kill, (os.getpid(), signal.SIGUSR1))
    try:
        timer.start()
        with pytest.raises(Interrupted):
            child.wait(timeout=60)
        os.killpg(child.pid, signal.SIGKILL)
        after = run_process(["/bin/sh", "-c", "echo after; exit 4"], cwd=tmp_path, stdin=None, timeout_s=20, env=scrubbed_env(), helper=True)
        assert (after.error, after.exit_code, after.stdout) == (None, 4, b"after\n")
    finally:
        timer.cancel()
        signal.signal(signal.SIGUSR1, previous)
        try:
            os.killpg(child.pid, signal.SIGKILL)
        except OSError:
            pass
        own.close()
    assert gone(child.pid)


def test_waiting_for_one_run_takes_no_turn_from_the_others(tmp_path: Path) -> None:
    """A run being waited for (a leader whose teardown is slow after SIGKILL: gigabytes to unmap)
    must not hold the spawner while another run wants to start or end: with --jobs 2 or 4 the runs
    would queue behind it. Here one run is waited for while it still runs, and the spawner stays
    free the whole time: the other run starts and ends."""
    slow = spawner.start(["/bin/sleep", "30"], str(tmp_path), scrubbed_env(), False)
    assert isinstance(slow, spawner.Child)
    owner = slow.owner
    codes: list[int] = []
    waiter = threading.Thread(target=lambda: codes.append(slow.wait()), daemon=True)
    waiter.start()
    try:
        held = []
        for _ in range(30):  # the waiting thread is at it all along: the lock must never be seen held
            held.append(owner.lock.locked())
            time.sleep(0.01)
        other = run_process(["/bin/sh", "-c", "echo other"], cwd=tmp_path, stdin=None, timeout_s=20, env=scrubbed_env(), helper=True)
        assert waiter.is_alive() and not codes
        assert other.exit_code == 0 and other.stdout == b"other\n"
        assert not any(held), "a wait held the spawner"
    finally:
        os.killpg(slow.pid, signal.SIGKILL)
        waiter.join(timeout=30)
    assert codes == [-9]
    assert gone(slow.pid)


def test_a_build_holding_more_than_1024_descriptors_still_runs_its_examples(tmp_path: Path) -> None:
    """select() takes no descriptor past 1023: a build that holds more files open (Docker's limit is
    a million) crashed on every spawned run with "filedescriptor out of range in select()"."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < 1200:
        pytest.skip("the descriptor limit is below 1200")
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, 1200) if hard == resource.RLIM_INFINITY else min(max(soft, 1200), hard), hard))
    held: list[int] = []
    try:
        while not held or held[-1] < 1100:
            held.append(os.open(os.devnull, os.O_RDONLY | os.O_CLOEXEC))
        result = run_process(["/bin/sh", "-c", "read line; echo got $line; exit 5"], cwd=tmp_path, stdin=b"it\n", timeout_s=20,
                             env=scrubbed_env(), helper=True)
        assert result.error is None and result.exit_code == 5 and result.stdout == b"got it\n"
    finally:
        for fd in held:
            os.close(fd)
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


FORKED = """
import os, sys
from pathlib import Path
from toolcatalog.process import run_process, scrubbed_env
result = run_process(["/bin/sh", "-c", "exit 6"], cwd=Path("/tmp"), stdin=None, timeout_s=20, env=scrubbed_env(), helper=True)
os._exit(result.exit_code if result.exit_code is not None else 99)
"""


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_a_copy_forked_while_another_thread_starts_the_spawner_can_run_examples() -> None:
    """The build forks (a plugin's worker, multiprocessing's fork) while one of its threads is
    starting the spawner, the lock that guards that start held: the copy starts a spawner of its
    own and must not wait for a lock no thread of it will ever let go (it hung for good)."""
    held, release = threading.Event(), threading.Event()

    def starting() -> None:  # as `_spawner` holds it while the spawner starts
        with spawner._spawner_lock:
            held.set()
            release.wait(30)

    holder = threading.Thread(target=starting, daemon=True)
    holder.start()
    held.wait(30)
    try:
        pid = os.fork()
        if pid == 0:  # the copy: run one example, its exit code is ours
            try:
                exec(FORKED, {})
            finally:
                os._exit(98)
        end = time.monotonic() + 30
        while (done := os.waitpid(pid, os.WNOHANG))[0] == 0 and time.monotonic() < end:  # a hang guard
            time.sleep(0.02)
        if done[0] == 0:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            pytest.fail("the forked copy hung waiting for its parent's lock")
        assert os.waitstatus_to_exitcode(done[1]) == 6
    finally:
        release.set()
        holder.join(30)
