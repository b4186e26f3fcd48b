"""bench/ptrace_proto.py, which now drives the build's own tracer (sandbox/ptracer.py, through the
spawner), once under real bubblewrap, on a hostile tool.

What the prototype claimed to see, held against the shipped code: a file written and removed
again, a write through a directory descriptor and one relative to a changed working folder, a
thread's write, a child's write, a double-forked grandchild's write, a signal and a group-stop
passed on, a refused connection; and a seccomp filter of the tool's own (one that could hide calls
from the tracer) and an untraced clone refused. tests/test_ptracer.py holds the rest.
"""

from __future__ import annotations

import ctypes
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))

import ptrace_proto  # noqa: E402
from toolcatalog.sandbox import ptracer  # noqa: E402

BWRAP = shutil.which("bwrap")


def _can_trace() -> str:
    """Why this machine cannot run the prototype ("" when it can)."""
    if not sys.platform.startswith("linux") or os.uname().machine != "x86_64":
        return "the prototype is x86-64 Linux only"
    if BWRAP is None:
        return "needs bubblewrap"
    done = subprocess.run([BWRAP, "--unshare-all", "--ro-bind", "/", "/", "--", "/bin/true"], capture_output=True)
    if done.returncode != 0:
        return f"bubblewrap cannot run here: {done.stderr.decode(errors='replace')[-200:]}"
    pid = os.fork()
    if pid == 0:
        ok = ctypes.CDLL(None, use_errno=True).ptrace(0, 0, None, None) == 0
        os._exit(0 if ok else 1)
    _pid, status = os.waitpid(pid, 0)
    return "" if os.waitstatus_to_exitcode(status) == 0 else "ptrace is not allowed here"


REASON = _can_trace()
pytestmark = pytest.mark.skipif(bool(REASON), reason=REASON or "-")


def test_the_system_call_numbers_are_the_kernels() -> None:
    header = Path("/usr/include/x86_64-linux-gnu/asm/unistd_64.h")
    if not header.exists():
        pytest.skip("no kernel header here")
    numbers = dict((m.group(1), int(m.group(2))) for m in re.finditer(r"#define __NR_(\w+) (\d+)", header.read_text()))
    known = {name: number for name, number in ptrace_proto.NR.items() if name in numbers}  # ptracer.NEWER: newer headers
    assert known == {name: numbers[name] for name in known} and set(ptrace_proto.NR) - set(known) <= set(ptracer.NEWER)


def test_the_prototype_sees_what_the_hostile_tool_did(tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = ptrace_proto.run(ptrace_proto.hostile_argv(sys.executable), b"", {"PATH": "/usr/bin:/bin"}, "/", 1,
                              timeout=20, output=out)
    assert result.status == 0, out.read_text()
    assert out.read_text().splitlines() == ["seccomp filter refused: True", "untraced clone refused: True", "done"]
    seen = result.seen
    assert result.observed and seen.started and not seen.lost
    written = {w.path for w in seen.writes if w.ok}
    assert set(ptrace_proto.HOSTILE_EXPECTED) <= written, written
    assert ("127.0.0.1:9", "ECONNREFUSED") in seen.connections or ("127.0.0.1:9", "ENETUNREACH") in seen.connections
    assert seen.programs == [sys.executable, "/bin/sh"]
    assert seen.spawned == ["/bin/sh"]
    # Only what is recorded stops: far fewer seccomp stops than Python's start-up opens (≈ 60).
    assert result.seccomp_stops < 40, result.seccomp_stops


def test_a_run_whose_tool_never_starts_is_not_observed(tmp_path: Path) -> None:
    argv = [*ptrace_proto.hostile_argv(sys.executable)[:-3], "/nonexistent/tool"]
    result = ptrace_proto.run(argv, b"", {"PATH": "/usr/bin:/bin"}, "/", 1, timeout=20, output=tmp_path / "out")
    assert not result.observed and result.seen.lost


def test_a_user_notification_filter_cannot_hide_a_write_from_the_prototype(tmp_path: Path) -> None:
    result = ptrace_proto.run(ptrace_proto.notify_argv(sys.executable), b"", {"PATH": "/usr/bin:/bin"}, "/", 1,
                              timeout=20, output=tmp_path / "out")
    assert "listener -1" in (tmp_path / "out").read_text()
    assert result.observed and ("/tmp/hidden-by-notif", True) in [(w.path, w.ok) for w in result.seen.writes]


@pytest.mark.skipif(shutil.which("strace") is None, reason="needs strace")
def test_refusing_new_filters_lets_strace_see_the_hidden_write(tmp_path: Path) -> None:
    """The fix today's strace path could take (bubblewrap's `--add-seccomp-fd`): without it, strace's
    log of NOTIFY ends cleanly without the write (bench/README.md)."""
    fd = os.memfd_create("no-new-filters", 0)
    os.write(fd, ptrace_proto.no_new_filters())
    os.lseek(fd, 0, os.SEEK_SET)
    os.set_inheritable(fd, True)
    argv = ptrace_proto.notify_argv(sys.executable)
    try:
        seen = ptrace_proto.strace_seen([argv[0], "--add-seccomp-fd", str(fd), *argv[1:]], b"", {"PATH": "/usr/bin:/bin"},
                                        "/", 1, tmp_path, "/tmp")
    finally:
        os.close(fd)
    assert not seen.lost and ("/tmp/hidden-by-notif", True) in [(w.path, w.ok) for w in seen.writes]
