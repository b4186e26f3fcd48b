"""Processes started by tests: whether they are gone, and that none outlives its test."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import pytest


def _state(pid: int) -> str | None:
    """The process state letter from /proc (None: no such process)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return stat[stat.rindex(")") + 2 :].split()[0]


def alive(pid: int) -> bool:
    return _state(pid) not in (None, "Z", "X")


def gone(*pids: int, within: float = 10.0) -> bool:
    """Whether every pid is dead within `within` seconds (SIGKILL is delivered asynchronously; a
    loaded machine may take a while, and a pid that is already gone returns at once)."""
    deadline = time.monotonic() + within
    while any(alive(p) for p in pids):
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.02)
    return True


def processes_under(root: Path) -> list[tuple[int, str]]:
    """Live processes whose command line or working directory is inside `root`."""
    marker = str(root)
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode("utf-8", "replace")
        except OSError:
            continue
        try:
            cwd = os.readlink(entry / "cwd")
        except OSError:
            cwd = ""
        if (marker in cmdline or cwd == marker or cwd.startswith(marker + "/")) and alive(int(entry.name)):
            found.append((int(entry.name), cmdline))
    return found


@pytest.fixture(autouse=True)
def no_leftovers(tmp_path: Path):
    """No process started for a test may outlive it."""
    yield
    deadline = time.monotonic() + 10.0  # killed processes may take a while to go on a loaded machine
    left = processes_under(tmp_path)
    while left and time.monotonic() < deadline:
        time.sleep(0.05)
        left = processes_under(tmp_path)
    for pid, _ in left:  # do not let one leak poison the other tests
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    assert not left, f"processes left running: {left}"


def held_at_gate(root: Path) -> list[int]:
    """bubblewrap's processes under `root` that our tracer holds at their gate (runs started ahead,
    the tool not yet started): traced, and waiting in a read of their block descriptor, a pipe."""
    found = []
    for pid, line in processes_under(root):
        if not line.startswith("/") or os.path.basename(line.split(" ", 1)[0]) != "bwrap":
            continue
        try:
            status = Path(f"/proc/{pid}/status").read_text()
            wchan = Path(f"/proc/{pid}/wchan").read_text()
        except OSError:
            continue
        tracer = next((int(row.split()[1]) for row in status.splitlines() if row.startswith("TracerPid:")), 0)
        if tracer and "pipe_read" in wchan:
            found.append(pid)
    return found
