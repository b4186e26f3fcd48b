"""Calls the trace once missed (found with the ptrace prototype, bench/ptrace_proto.py).

A thread's execve: strace 6.1 writes it as the thread's line cut short ("<pid changed
to N ...>") and then a failed-looking `<... execve resumed>` under the process's pid. The program
so started must still be seen: before, a tool could start any program from a thread and have it
go unreported. Changes through a file descriptor (`fchmod` of a file opened only for reading, and
the like) and `utime`/`utimes`/`futimesat` were not traced at all."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from manifests import PLATFORM, speccify_tool
from procs import no_leftovers  # noqa: F401 (an autouse fixture)
from tracers import tracer  # noqa: F401 (a fixture: each test once per tracer)
from sitebuild import run_check, tool_of
from toolcatalog import sandbox
from toolcatalog.sandbox import trace

FACTS = sandbox.probe("auto")
needs_trace = pytest.mark.skipif(FACTS.mechanism != "bwrap" or not FACTS.traced or not sys.platform.startswith("linux"),
                                 reason=f"needs bubblewrap and strace; this machine offers {FACTS.mechanism or 'no sandbox'}")

FROM_A_THREAD = """
import json, os, sys, threading
json.load(sys.stdin)
def go():
    os.execv("/bin/sh", ["sh", "-c", "echo '{\\"ok\\": true}'"])
threading.Thread(target=go).start()
threading.Event().wait(30)
"""

LOG = """\
7 execve("/usr/bin/python3", ["python3", "t.py"], 0x7ffd /* 3 vars */) = 0
7 clone3({flags=CLONE_VM|CLONE_THREAD, child_tid=0x1} => {parent_tid=[8]}, 88) = 8
8 execve("/bin/true", ["true"], 0x7ffe /* 3 vars */ <pid changed to 7 ...>
7 +++ superseded by execve in pid 8 +++
7 <... execve resumed>)             = -1 (errno 18446744073709551359)
7 openat(AT_FDCWD, "/tmp/after", O_WRONLY|O_CREAT|O_TRUNC, 0666) = 3
"""


def test_a_threads_execve_in_a_log_is_a_program_started(tmp_path: Path) -> None:
    log = tmp_path / "trace.log"
    log.write_text(LOG, encoding="utf-8")
    seen = trace.parse(log, launcher_execs=0, cwd="/tmp", max_bytes=1 << 20)
    assert seen.programs == ["/usr/bin/python3", "/bin/true"], seen
    assert [w.path for w in seen.writes] == ["/tmp/after"] and not seen.lost


@needs_trace
def test_a_program_a_thread_execs_is_observed(tmp_path: Path, tracer: str) -> None:
    speccify_tool(tmp_path, "threader", [("execs", {"a": 1}, {"ok": True})], files={f"{PLATFORM}.py": FROM_A_THREAD},
                  effects="none; pure computation")
    catalog, _ = run_check(tmp_path, jobs=1)
    [run] = tool_of(catalog, "threader").examples[0].runs
    assert run.status.value == "passed", run
    assert run.observed is not None and run.observed.traced and not run.observed.incomplete, run
    assert any(p.endswith("/sh") for p in run.observed.programs), run.observed


THROUGH_A_DESCRIPTOR = """
import json, os, sys
json.load(sys.stdin)
# Python's own program, read-only in the sandbox: the attempts fail and leave no change to compare.
fd = os.open(os.path.realpath(sys.executable), os.O_RDONLY)
for attempt in (lambda: os.fchmod(fd, 0o777), lambda: os.utime(fd)):
    try:
        attempt()
    except OSError:
        pass
print(json.dumps({"ok": True}), flush=True)
"""


@needs_trace
def test_changes_through_a_descriptor_are_attempts_seen(tmp_path: Path, tracer: str) -> None:
    speccify_tool(tmp_path, "fdwriter", [("changes", {"a": 1}, {"ok": True})], files={f"{PLATFORM}.py": THROUGH_A_DESCRIPTOR},
                  effects="none; pure computation")
    catalog, _ = run_check(tmp_path, jobs=1)
    tool = tool_of(catalog, "fdwriter")
    [run] = tool.examples[0].runs
    assert run.observed is not None and run.observed.traced and not run.observed.incomplete, run
    changes = {(f.path, f.change) for f in run.observed.files}
    assert changes == {(os.path.realpath(sys.executable), "blocked")}, changes
    assert tool.sandbox is not None and not tool.sandbox.verified_no_effects


def test_descriptor_calls_in_a_log_name_the_file_opened(tmp_path: Path) -> None:
    log = tmp_path / "trace.log"
    log.write_text(
        '7 execve("/usr/bin/python3", ["python3"], 0x1 /* 1 var */) = 0\n'
        '7 openat(AT_FDCWD, "/w/a", O_RDONLY|O_CLOEXEC) = 3\n'
        '7 fchmod(3, 0777) = -1 EROFS (Read-only file system)\n'
        '7 utimensat(3, NULL, NULL, 0) = -1 EROFS (Read-only file system)\n'
        '7 fsetxattr(9, "user.x", "1", 1, 0) = -1 EBADF (Bad file descriptor)\n'
        '7 utimes("/w/b", NULL) = 0\n', encoding="utf-8")
    seen = trace.parse(log, launcher_execs=0, cwd="/w", max_bytes=1 << 20)
    assert [(w.path, w.ok) for w in seen.writes] == [("/w/a", False), ("/w/a", False), ("<fd 9>", False), ("/w/b", True)]
