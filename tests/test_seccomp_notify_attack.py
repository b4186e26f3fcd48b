"""Red team, the trace: a tool that hides its calls from strace with a seccomp filter of its own.

strace's `--seccomp-bpf` filter answers the traced calls with SECCOMP_RET_TRACE. A tool may add
filters (bubblewrap sets no_new_privs, which is all an unprivileged filter needs), the kernel
takes the most severe action of all of them, and SECCOMP_RET_USER_NOTIF outranks TRACE: the tool's
own thread, as the filter's supervisor, lets each notified `openat`/`unlink` run
(SECCOMP_USER_NOTIF_FLAG_CONTINUE) and strace never stops on it. Found while prototyping our own
tracer (bench/ptrace_proto.py, whose filter refuses new filters; tests/test_ptrace_proto.py).

Before the fix the build forged the clean result (`passed`, `verified_no_effects`, the file
written and removed missing). Now `seccomp()` fails with EPERM for the tool: strace injects it in
bubblewrap's runs (trace.wrap), and the Landlock launcher's last filter refuses it (its own
listener is made before). A listener can only come from `seccomp()`: prctl's filters cannot notify.
"""

from __future__ import annotations

import os
import random
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))

import ptrace_proto  # noqa: E402
from manifests import PLATFORM, speccify_tool  # noqa: E402
from procs import no_leftovers  # noqa: F401,E402 (an autouse fixture)
from tracers import tracer  # noqa: F401,E402 (a fixture: each test once per tracer)
from sitebuild import run_check, tool_of  # noqa: E402
from toolcatalog import sandbox  # noqa: E402
from toolcatalog.sandbox import landlock_launcher  # noqa: E402
from test_redteam_observe import landlock_check  # noqa: E402

FACTS = sandbox.probe("auto")
pytestmark = [
    pytest.mark.skipif(not sys.platform.startswith("linux") or os.uname().machine != "x86_64",
                       reason="the attack is written for x86-64 Linux"),
    pytest.mark.skipif(FACTS.mechanism != "bwrap" or not FACTS.traced,
                       reason=f"needs bubblewrap and strace; this machine offers {FACTS.mechanism or 'no sandbox'}"),
]


def hider(root: Path, path: str) -> None:
    head = "import json, sys\njson.load(sys.stdin)\nprint(json.dumps({'ok': True}), flush=True)\n"
    code = head + ptrace_proto.NOTIFY.replace("/tmp/hidden-by-notif", path).replace('print("listener", listener)', "")
    speccify_tool(root, "hider", [("hides", {"a": 1}, {"ok": True})], files={f"{PLATFORM}.py": code + "\nos._exit(0)\n"},
                  effects="none; pure computation")


def test_a_user_notification_filter_does_not_forge_a_clean_run(tmp_path: Path, tracer: str) -> None:
    path = f"/tmp/tc-notify-{os.getpid()}-{random.randrange(10**9)}"
    hider(tmp_path, path)
    catalog, _ = run_check(tmp_path, jobs=1)
    tool = tool_of(catalog, "hider")
    [run] = tool.examples[0].runs
    assert run.observed is not None and run.observed.traced
    if run.observed.incomplete:
        assert tracer == "strace", run.observed  # ours refuses the filter: the run is observed in full
        return  # "not observed": nothing claimed
    assert (path, "temporary") in {(f.path, f.change) for f in run.observed.files}, run.observed
    assert tool.sandbox is not None and not tool.sandbox.verified_no_effects


ASK_SECCOMP = """
import ctypes, json, os, sys
json.load(sys.stdin)
libc = ctypes.CDLL(None, use_errno=True)
action = ctypes.c_uint32(0x7FFF0000)  # SECCOMP_RET_ALLOW
done = libc.syscall(317, 2, 0, ctypes.byref(action))  # seccomp(SECCOMP_GET_ACTION_AVAIL, 0, &action)
print(json.dumps({"errno": 0 if done == 0 else ctypes.get_errno()}), flush=True)
"""


@pytest.mark.skipif(landlock_launcher.abi_version() < 4, reason="needs Landlock ABI 4")
def test_under_landlock_seccomp_is_refused_to_the_tool(tmp_path: Path) -> None:
    """The Landlock launcher's own listener already keeps a second one from being made (EBUSY),
    but only while the kernel gives it one: its last filter refuses `seccomp()` outright (EPERM),
    so a tool can add no filter at all. The example expects EPERM; before the fix it got 0."""
    ws = tmp_path / "ws"
    speccify_tool(ws, "asker", [("asks", {"a": 1}, {"errno": 1})], files={f"{PLATFORM}.py": ASK_SECCOMP})
    [tool] = [t for t in landlock_check(tmp_path, ws).values() if t["id"] == "asker"]
    assert tool["status"] == "passed", tool
