"""What each tracer says of a write's outcome: it succeeded, it failed with a named error, or its
call never returned (its process ended in it, or the trace did first: whether it wrote is unknown).

Both tracers said only whether a write succeeded, and the report called every other one "blocked by
the sandbox" (tests/test_write_outcomes.py shows the kinds a run's report now gives them).
"""

from __future__ import annotations

import errno
import json
from pathlib import Path

from toolcatalog.sandbox import ptracer, trace


# -- strace's log -------------------------------------------------------------------------------

LOG = """\
7 execve("/usr/bin/python3", ["python3", "t.py"], 0x7ffd /* 3 vars */) = 0
7 openat(AT_FDCWD, "/w/ok", O_WRONLY|O_CREAT|O_TRUNC|O_CLOEXEC, 0666) = 3
7 openat(AT_FDCWD, "/nope/x", O_WRONLY|O_CREAT|O_TRUNC|O_CLOEXEC, 0666) = -1 ENOENT (No such file or directory)
7 mkdir("/etc/x", 0777) = -1 EROFS (Read-only file system)
7 mkdir("/etc", 0777) = -1 EEXIST (File exists)
7 unlink("/w/odd") = -1 (errno 600)
8 openat(AT_FDCWD, "/w/fifo", O_WRONLY|O_CLOEXEC <unfinished ...>
7 openat(AT_FDCWD, "/w/slow", O_WRONLY|O_CLOEXEC <unfinished ...>
7 <... openat resumed>) = ? ERESTARTSYS (To be restarted if SA_RESTART is set)
8 <... openat resumed>) = ?
7 openat(AT_FDCWD, "/w/cut", O_WRONLY|O_CLOEXEC <unfinished ...>
"""


def test_strace_lines_give_each_writes_outcome(tmp_path: Path) -> None:
    log = tmp_path / "trace.log"
    log.write_text(LOG, encoding="utf-8")
    seen = trace.parse(log, launcher_execs=0, cwd="/w", max_bytes=1 << 20)
    assert [(w.path, w.ok, w.error) for w in seen.writes] == [
        ("/w/ok", True, ""),
        ("/nope/x", False, "ENOENT"),
        ("/etc/x", False, "EROFS"),
        ("/etc", False, "EEXIST"),
        ("/w/odd", False, ""),  # a failure strace named no error for
        ("/w/slow", False, "ERESTARTSYS"),  # interrupted by a signal (and restarted: its own line then)
        ("/w/fifo", False, trace.UNFINISHED),  # its process ended in the call
        ("/w/cut", False, trace.UNFINISHED),  # the log ends first
    ], seen.writes


# -- our tracer's record ------------------------------------------------------------------------


def test_our_tracers_record_keeps_each_writes_outcome(tmp_path: Path) -> None:
    tracer = ptracer.Tracer(0, trace.MAX_RECORDS)
    tracer.started = True
    for path, value in (("/w/ok", 3), ("/nope/x", -errno.ENOENT), ("/etc/x", -errno.EROFS), ("/w/odd", -600),
                        ("/w/slow", -512), ("/w/fifo", None)):
        call = ptracer.Call("openat")
        call.writes = [path]
        tracer.pending[7] = call
        tracer.result(7, value)
    record = tmp_path / "trace.json"
    record.write_text(json.dumps(tracer.record()), encoding="utf-8")
    seen = trace.load_record(record)
    assert [(w.path, w.ok, w.error) for w in seen.writes] == [
        ("/w/ok", True, ""), ("/nope/x", False, "ENOENT"), ("/etc/x", False, "EROFS"), ("/w/odd", False, ""),
        ("/w/slow", False, "ERESTARTSYS"), ("/w/fifo", False, trace.UNFINISHED),
    ], seen.writes


def test_a_record_without_errors_says_no_more_than_it_failed(tmp_path: Path) -> None:
    record = tmp_path / "trace.json"
    record.write_text(json.dumps({"started": True, "lost": False, "writes": [["/a", True], ["/b", False], ["/c", False, "not a name"]]}),
                      encoding="utf-8")
    seen = trace.load_record(record)
    assert [(w.path, w.ok, w.error) for w in seen.writes] == [("/a", True, ""), ("/b", False, trace.UNFINISHED), ("/c", False, "")]
