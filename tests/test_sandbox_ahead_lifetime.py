"""Runs started ahead at `--jobs` = CPUs (issue 21) die with the build like any other run: with
two workers, two tools run and two more sandboxes wait behind their gates, and whether the build
is killed outright (SIGKILL: no handler runs) or stopped (SIGTERM), neither the tools nor the
waiting chains outlive it, and a stopped build removes every run folder. Real bubblewrap, strace
and processes; nothing here measures time (the loops are hang guards)."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from manifests import PLATFORM, speccify_tool
from procs import gone, held_at_gate, no_leftovers, processes_under  # noqa: F401 (an autouse fixture)
from sitebuild import REPO
from toolcatalog import sandbox
from toolcatalog.sandbox import limits

FACTS = sandbox.probe("auto")
pytestmark = pytest.mark.skipif(FACTS.mechanism != "bwrap" or not (FACTS.own_tracer or limits.shell()),
                                reason="needs bubblewrap with namespaces, and our tracer or dash")

SLOW_PY = r"""
import sys, time
sys.stdin.buffer.read()
time.sleep(300)
"""


def _state(ws: Path) -> tuple[list[int], list[int]]:
    """The pids of what waits at the gates of `ws`'s runs (bubblewrap's processes our tracer holds,
    or the gate shells), and of its tools running."""
    found = processes_under(ws)
    if FACTS.own_tracer:
        gates = held_at_gate(ws)
    else:
        gates = [pid for pid, line in found if line.startswith(f"{limits.shell()} -c read -r _")]
    tools = [pid for pid, line in found if line.startswith(sys.executable) and f"{PLATFORM}.py" in line]
    return gates, tools


@pytest.mark.parametrize("number", [signal.SIGKILL, signal.SIGTERM])
def test_runs_waiting_behind_their_gates_at_jobs_equal_to_cpus_die_with_the_build(tmp_path: Path, number: int) -> None:
    ws = tmp_path / "ws"
    # four tools of one case each, not one tool of four: runs of one program in one folder are one
    # start (`Start`), so the second worker could take the run the first started ahead for a later
    # task (on a loaded machine it did, and one gate stayed empty); distinct programs keep every
    # run started ahead its own task's
    for i in range(4):
        speccify_tool(ws, f"slow{i}", [("case", {"x": i}, {"ok": True})], files={f"{PLATFORM}.py": SLOW_PY})
    build = subprocess.Popen(
        [sys.executable, "-m", "toolcatalog.cli", "check", str(ws), "--no-cache", "--timeout", "300", "--jobs", "2"],
        cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env=dict(os.environ),
    )
    try:
        deadline = time.monotonic() + 120
        gates, tools = _state(ws)
        while (len(gates) < 2 or len(tools) < 2) and time.monotonic() < deadline and build.poll() is None:
            time.sleep(0.05)
            gates, tools = _state(ws)
        assert len(tools) == 2 and len(gates) == 2, f"two tools running and two runs started ahead: {processes_under(ws)}"
        seen = processes_under(ws)
        folders = {Path(found) for _, line in seen for found in re.findall(r"(/\S+/run-[^/\s]+)/(?:trace\.log|tmp) ", line)}
        assert len(folders) == 4, folders  # the two running and the two waiting runs' own folders
        build.send_signal(number)
        build.communicate(timeout=120)
        assert gone(*(pid for pid, _ in seen)), f"outlived the build: {processes_under(ws)}"
        if number == signal.SIGTERM:  # stopped, not killed: it removes what it made (a killed one's next build does)
            assert build.returncode == 128 + number
            assert not [folder for folder in folders if folder.exists()]
    finally:
        if build.poll() is None:
            build.kill()
            build.communicate()
        for pid, _ in processes_under(ws):
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
