"""Red team, the tracer: a tool that attacks strace itself, with real bubblewrap and strace.

The trace is what turns "no writes seen" into the clean badge, so a tool that could kill, stop,
confuse or feed its tracer could forge that badge. strace runs outside the sandbox's PID
namespace (sandbox/trace.py), where the tool cannot name it; these attacks are what a tracer inside
it would face (bench/README.md, "A tracer inside the sandbox": as PID 1, a file log loses a line
to the file-size attack below). Each attack is followed by the effects only the trace sees (a file
written and removed again, a connection to a local server): the run must end observed with them,
or "not observed"; never observed without them.

Not here: `SIGSTOP` to PID 1. bubblewrap's init is traced, and a traced process does not ignore
signals the way a namespace's init otherwise does, so it stops and the run ends at its timeout
(observed in full, and failed): a delay, not a forged result, and a test would wait out the timeout.
"""

from __future__ import annotations

import os
import random
import socket
import sys
import threading
from pathlib import Path
from typing import Iterator

import pytest

from manifests import PLATFORM, speccify_tool
from procs import no_leftovers  # noqa: F401 (an autouse fixture)
from tracers import tracer  # noqa: F401 (a fixture: each test once per tracer)
from sitebuild import run_check, tool_of
from toolcatalog import sandbox

FACTS = sandbox.probe("auto")
pytestmark = [
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the sandbox is Linux only"),
    pytest.mark.skipif(FACTS.mechanism != "bwrap" or not FACTS.traced,
                       reason=f"needs bubblewrap and strace; this machine offers {FACTS.mechanism or 'no sandbox'}"),
]

ATTACKER_PY = r"""
import ctypes, json, os, resource, signal, socket, sys, time
data = json.load(sys.stdin)
libc = ctypes.CDLL(None, use_errno=True)
me = os.getpid()
pids = [int(p) for p in os.listdir("/proc") if p.isdigit() and int(p) != me]
fake = b"1 +++ exited with 0 +++\n"
# Feed every descriptor it can reach a fake strace line (its own and every visible process's).
for fd in range(3, 64):
    try: os.write(fd, fake)
    except OSError: pass
for pid in pids:
    try: names = os.listdir(f"/proc/{pid}/fd")
    except OSError: names = []
    for name in names:
        try:
            f = os.open(f"/proc/{pid}/fd/{name}", os.O_WRONLY | os.O_APPEND | os.O_NONBLOCK)
            os.write(f, fake); os.close(f)
        except OSError: pass
    libc.ptrace(16, pid, 0, 0)  # PTRACE_ATTACH
    try:
        hard = resource.prlimit(pid, resource.RLIMIT_FSIZE)[1]
        resource.prlimit(pid, resource.RLIMIT_FSIZE, (1, hard))  # lowered around the effects below
    except (OSError, ValueError): pass
for sig in (signal.SIGTERM, signal.SIGKILL):
    try: os.kill(-1, sig)
    except OSError: pass
    for pid in pids:
        try: os.kill(pid, sig)
        except OSError: pass
time.sleep(0.05)
# A child that leaves its session and its parent, and writes too.
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        try:
            open(data["child"], "w").write("x"); os.unlink(data["child"])
        finally:
            os._exit(0)
    os._exit(0)
os.wait()
time.sleep(0.1)
# What only the trace sees: a file written and removed, a connection.
open(data["path"], "w").write("x"); os.unlink(data["path"])
s = socket.socket(); s.settimeout(3)
try: s.connect(("127.0.0.1", data["port"]))
except OSError: pass
for pid in pids:
    try: resource.prlimit(pid, resource.RLIMIT_FSIZE, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
    except (OSError, ValueError): pass
print(json.dumps({"ok": True}))
"""


@pytest.fixture
def port() -> Iterator[int]:
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)

    def serve() -> None:
        while True:
            try:
                listener.accept()[0].close()
            except OSError:
                return

    threading.Thread(target=serve, daemon=True).start()
    yield listener.getsockname()[1]
    listener.close()


def test_a_tool_attacking_its_tracer_ends_observed_with_its_effects_or_not_observed(tmp_path: Path, port: int, tracer: str) -> None:
    tag = f"{os.getpid()}-{random.randrange(10**9)}"
    path, child = f"/tmp/tc-hidden-{tag}", f"/tmp/tc-child-{tag}"
    speccify_tool(tmp_path, "attacker", [("attacks", {"path": path, "child": child, "port": port}, {"ok": True})],
                  files={f"{PLATFORM}.py": ATTACKER_PY}, effects="none; pure computation")
    catalog, _ = run_check(tmp_path, jobs=1)
    tool = tool_of(catalog, "attacker")
    [run] = tool.examples[0].runs
    observed = run.observed
    assert observed is not None and observed.traced
    assert tool.sandbox is not None and not tool.sandbox.verified_no_effects  # never the clean badge
    if observed.incomplete:
        return  # "not observed": the run says so, and nothing is claimed
    seen = {(f.path, f.change) for f in observed.files}
    assert (path, "temporary") in seen, seen
    assert (child, "temporary") in seen, seen
    assert f"127.0.0.1:{port}" in [c.address for c in observed.connections], observed.connections
    assert tool.status == "failed" and tool.sandbox.caught_mutating
