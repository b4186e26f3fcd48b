"""Our own tracer (the build's, sandbox/ptracer.py in the spawner) against strace, per run.

    PYTHONPATH=plugin .venv/bin/python bench/ptrace_proto.py [--runs 20] [--rounds 5]
    PYTHONPATH=plugin .venv/bin/python bench/ptrace_proto.py --hostile   # only the comparison

Once a prototype (bench/README.md, "Our own tracer outside the sandbox"); what it held is now the
package's (sandbox/ptracer.py: the loop; sandbox/seccomp.py: the filter; the spawner starts and
traces each run), and this measures the shipped code: `run` starts a bubblewrap command line
through the spawner with the tracer the build uses, as `Context.run` does. `main` measures CPU per
run like bench/sandbox_split.py (a `cpuacct` control group for the process tree, the spawner
included, where its tracer thread works; plus this process's own CPU), counts the tracer's stops,
and compares both tracers on the bench tool and on `HOSTILE`. x86-64 Linux only.
"""

from __future__ import annotations

import argparse
import errno
import importlib
import json
import os
import shutil
import statistics
import struct
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from toolcatalog import spawner
from toolcatalog.sandbox import ptracer, trace

probe = importlib.import_module("toolcatalog.sandbox.probe")
NR = ptracer.NR
AUDIT_ARCH_X86_64 = 0xC000003E
X32_BIT = 0x40000000
RET_KILL_PROCESS, RET_ERRNO, RET_ALLOW = 0x80000000, 0x00050000, 0x7FFF0000
LD_ABS, JEQ, JGE, RET = 0x20, 0x15, 0x35, 0x06
PR_SET_SECCOMP = 22


def _arg(index: int) -> int:
    return 16 + 8 * index


def no_new_filters() -> bytes:
    """A filter that only refuses new seccomp filters (and 32-bit/x32 calls): what the strace path
    could add with bubblewrap's `--add-seccomp-fd` against `NOTIFY` (ERRNO outranks TRACE); the
    build's strace path refuses `seccomp()` with strace's own fault injection instead."""
    code = [
        (LD_ABS, 0, 0, 4), (JEQ, 1, 0, AUDIT_ARCH_X86_64), (RET, 0, 0, RET_KILL_PROCESS),
        (LD_ABS, 0, 0, 0), (JGE, 6, 0, X32_BIT),
        (JEQ, 4, 0, NR["seccomp"]), (JEQ, 0, 2, NR["prctl"]),
        (LD_ABS, 0, 0, _arg(0)), (JEQ, 1, 0, PR_SET_SECCOMP),
        (RET, 0, 0, RET_ALLOW), (RET, 0, 0, RET_ERRNO | errno.EPERM), (RET, 0, 0, RET_KILL_PROCESS),
    ]
    return b"".join(struct.pack("=HBBI", kind, jt, jf, k) for kind, jt, jf, k in code)


@dataclass
class Result:
    seen: trace.Seen
    status: int  # bubblewrap's exit code
    stops: int = 0
    seccomp_stops: int = 0
    observed: bool = False
    notes: list[str] = field(default_factory=list)


def run(bwrap_argv: list[str], stdin: bytes, env: dict[str, str], cwd: str, launcher_execs: int,
        timeout: float = 30.0, output: Path | None = None) -> Result:
    """bubblewrap's `bwrap_argv` started and traced by the spawner, as the build does;
    `launcher_execs` counts bubblewrap's own exec (as `Launch.launcher_execs` does). Its output
    goes to `output` (else discarded)."""
    with tempfile.TemporaryDirectory(prefix="tc-ptrace-run-") as folder:
        record = Path(folder) / "trace.json"
        child = spawner.start(bwrap_argv, cwd, env, True, probe.tracer_trace(record, 0, launcher_execs - 1))
        if not isinstance(child, spawner.Child):
            raise SystemExit(f"the spawner cannot start it: {child}")
        assert child.stdin is not None and child.stdout is not None and child.stderr is not None
        try:
            child.stdin.write(stdin)
            child.stdin.close()
            out = child.stdout.read() + child.stderr.read()
            status = child.wait(timeout=timeout)
        finally:
            for stream in (child.stdout, child.stderr):
                stream.close()
        if output is not None:
            output.write_bytes(out)
        seen = trace.load_record(record)
        try:
            raw: dict[str, Any] = json.loads(record.read_text())
        except (OSError, ValueError):
            raw = {}
    return Result(seen, status, int(raw.get("stops", 0)), int(raw.get("seccomp_stops", 0)), not seen.lost,
                  list(raw.get("notes", [])))


def spawner_pid() -> int | None:
    """The spawner's pid (started on first use), to put it into the meter's control group."""
    spawner.available()
    held = spawner._SPAWNER  # noqa: SLF001 - a benchmark looks inside
    return held.proc.pid if held is not None and held.proc is not None else None


# -- comparison with strace through trace.parse

def summary(seen: trace.Seen) -> dict[str, Any]:
    """What the build reads from a Seen, as sets (the two tracers may interleave processes differently)."""
    return {
        "started": seen.started, "lost": seen.lost, "programs": sorted(seen.programs), "spawned": sorted(seen.spawned),
        "refused": sorted(seen.refused), "writes": sorted({(w.path, w.ok) for w in seen.writes}),
        "connections": sorted(set(seen.connections)),
    }


def compare(mine: trace.Seen, strace: trace.Seen) -> list[str]:
    """The differences, one line each; empty when both tracers report the same."""
    a, b = summary(mine), summary(strace)
    out = []
    for key in a:
        if a[key] != b[key]:
            if isinstance(a[key], list):
                only_a = [x for x in a[key] if x not in b[key]]
                only_b = [x for x in b[key] if x not in a[key]]
                out.append(f"{key}: only ours {only_a}, only strace {only_b}")
            else:
                out.append(f"{key}: ours {a[key]}, strace {b[key]}")
    return out


# A tool that does what the trace must catch: a file in /tmp written and removed again, a write
# through a directory descriptor, a socket connection, a child that writes, and a double fork
# whose grandchild writes after its parent has exited (the tool waits for it through a pipe), a
# signal handler's write (the tracer re-injects the signal), a child that stops itself and writes
# once continued (the tracer resumes its group-stop; strace keeps it until the SIGCONT), and a
# seccomp filter of its own (refused: a SECCOMP_RET_USER_NOTIF filter could hide calls) and a
# clone(CLONE_UNTRACED) (refused: the child would not be traced).
HOSTILE = r"""
import ctypes, os, signal, socket, subprocess, sys, threading, time
open("/tmp/hostile-written", "w").write("x")
os.unlink("/tmp/hostile-written")
os.mkdir("/tmp/hostile-dir")
dirfd = os.open("/tmp/hostile-dir", os.O_RDONLY | os.O_DIRECTORY)
fd = os.open("through-dirfd", os.O_WRONLY | os.O_CREAT, 0o600, dir_fd=dirfd)
os.write(fd, b"x"); os.close(fd)
os.rename("through-dirfd", "renamed", src_dir_fd=dirfd, dst_dir_fd=dirfd)
os.chdir("/tmp/hostile-dir")
open("relative", "w").write("x")
thread = threading.Thread(target=lambda: open("/tmp/hostile-thread", "w").write("x"))
thread.start(); thread.join()
s = socket.socket()
try: s.connect(("127.0.0.1", 9))
except OSError: pass
subprocess.run(["/bin/sh", "-c", "echo x > /tmp/hostile-child"], check=True)
read, write = os.pipe()
if os.fork() == 0:
    os.close(read)
    if os.fork() == 0:
        open("/tmp/hostile-grandchild", "w").write("x")
        os._exit(0)
    os._exit(0)
os.close(write)
os.read(read, 1)
signal.signal(signal.SIGUSR1, lambda *_: open("/tmp/hostile-signal", "w").write("x"))
os.kill(os.getpid(), signal.SIGUSR1)  # a signal the tracer must pass on
child = os.fork()
if child == 0:
    os.kill(os.getpid(), signal.SIGSTOP)  # a group-stop
    open("/tmp/hostile-after-stop", "w").write("x")
    os._exit(0)
while os.waitpid(child, os.WNOHANG) == (0, 0):
    os.kill(child, signal.SIGCONT)
    time.sleep(0.01)
libc = ctypes.CDLL(None, use_errno=True)
print("seccomp filter refused:", libc.prctl(22, 2, 0, 0, 0) == -1 and ctypes.get_errno() == 1)
libc.syscall.restype = ctypes.c_long
pid = libc.syscall(56, 0x00800000 | signal.SIGCHLD, 0, 0, 0, 0)  # clone(CLONE_UNTRACED): a child no tracer follows
if pid == 0:
    os._exit(0)
if pid > 0:
    os.waitpid(pid, 0)
print("untraced clone refused:", pid == -1 and ctypes.get_errno() == 1)
print("done")
"""
HOSTILE_EXPECTED = ("/tmp/hostile-written", "/tmp/hostile-dir", "/tmp/hostile-dir/through-dirfd",
                    "/tmp/hostile-dir/renamed", "/tmp/hostile-dir/relative", "/tmp/hostile-thread",
                    "/tmp/hostile-child", "/tmp/hostile-grandchild", "/tmp/hostile-signal", "/tmp/hostile-after-stop")


# A tool that hides a write from a SECCOMP_RET_TRACE tracer: its own filter answers `openat` with
# SECCOMP_RET_USER_NOTIF, which outranks TRACE (the kernel takes the most severe action of all the
# filters), and its own thread, the filter's supervisor, lets the call run (FLAG_CONTINUE); the
# same for `unlink`, so the file is gone again before the build looks at the folders. Under
# strace (today's tracer) the write is missing from a log that ends cleanly; our tracer's
# filter refuses the `seccomp` call (EPERM), so the write reaches its TRACE.
NOTIFY = r"""
import ctypes, os, struct, threading, queue
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
libc.ioctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_void_p]
fds = queue.Queue()
def supervisor():
    fd = fds.get()
    notif = ctypes.create_string_buffer(80)
    while True:
        ctypes.memset(notif, 0, 80)
        if libc.ioctl(fd, 0xc0502100, notif) != 0:
            return
        nid = struct.unpack_from("=Q", notif.raw)[0]
        resp = ctypes.create_string_buffer(struct.pack("=QqiI", nid, 0, 0, 1))  # FLAG_CONTINUE
        libc.ioctl(fd, 0xc0182101, resp)
t = threading.Thread(target=supervisor, daemon=True); t.start()
prog = struct.pack("=HBBI", 0x20, 0, 0, 0) + struct.pack("=HBBI", 0x15, 3, 0, 257) + \
       struct.pack("=HBBI", 0x15, 2, 0, 87) + struct.pack("=HBBI", 0x15, 1, 0, 263) + \
       struct.pack("=HBBI", 0x06, 0, 0, 0x7fff0000) + struct.pack("=HBBI", 0x06, 0, 0, 0x7fc00000)
buf = ctypes.create_string_buffer(prog)
class Fprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]
fp = Fprog(6, ctypes.addressof(buf))
libc.prctl(38, 1, 0, 0, 0)
listener = libc.syscall(317, 1, 8, ctypes.byref(fp))
print("listener", listener)
fds.put(listener)
fd = os.open("/tmp/hidden-by-notif", os.O_WRONLY | os.O_CREAT, 0o600)
os.write(fd, b"x"); os.close(fd)
os.unlink("/tmp/hidden-by-notif")
"""


def notify_argv(python: str) -> list[str]:
    return [*hostile_argv(python)[:-3], python, "-c", NOTIFY]


def hostile_argv(python: str) -> list[str]:
    """A minimal bubblewrap around `python -c HOSTILE` (what the tests use; no caps' dash)."""
    # A Python (or its virtualenv, as in a checkout cloned below /tmp) under /tmp is shown again
    # over the sandbox's own /tmp.
    shown: list[str] = []
    for folder in {os.path.dirname(os.path.dirname(os.path.abspath(python))), os.path.dirname(os.path.dirname(os.path.realpath(python)))}:
        if folder == "/tmp" or folder.startswith("/tmp/"):
            shown += ["--ro-bind", folder, folder]
    return [shutil.which("bwrap") or "/usr/bin/bwrap", "--unshare-all", "--die-with-parent", "--new-session", "--cap-drop", "ALL",
            "--ro-bind", "/", "/", "--tmpfs", "/tmp", *shown, "--proc", "/proc", "--dev", "/dev", "--chdir", "/tmp",
            "--", python, "-c", HOSTILE]


def strace_seen(bwrap_argv: list[str], stdin: bytes, env: dict[str, str], cwd: str, launcher_execs: int,
                work: Path, inside_cwd: str) -> trace.Seen:
    strace = trace.find()
    if strace is None:
        raise SystemExit("no strace")
    log = work / "strace-compare.log"
    subprocess.run(trace.wrap(strace, log, bwrap_argv), input=stdin, env=env, cwd=cwd, capture_output=True, timeout=60,
                   close_fds=False)
    return trace.parse(log, launcher_execs, inside_cwd)


# -- measuring

def measure(args: argparse.Namespace) -> None:
    import sandbox_split as split

    with tempfile.TemporaryDirectory(prefix="tc-ptrace-", dir="/dev/shm" if os.path.isdir("/dev/shm") else None) as tmp:
        root = Path(tmp)
        seen = split.capture(root)
        table = split.forms(seen, root)
        del table["inside"]
        env, cwd = seen["env"], str(root / "run")
        bwrap_argv, gate_stdin = table["bwrap"]
        launcher = 2  # bubblewrap's exec, the caps' dash
        meter = split.Meter()
        helper = spawner_pid()
        if meter.group is not None and helper is not None:
            (meter.group / "cgroup.procs").write_text(str(helper))  # its tracer threads and every run it starts
        cpu: dict[str, list[tuple[float, float, float]]] = {name: [] for name in (*table, "ptrace")}
        counted: list[tuple[int, int]] = []
        try:
            for _ in range(args.rounds):
                for name in cpu:
                    tree, own, wall = meter.read(), time.process_time(), time.perf_counter()
                    for _ in range(args.runs):
                        if name == "ptrace":
                            result = run(bwrap_argv, gate_stdin, env, cwd, launcher)
                            if not result.observed or result.status != 0:
                                raise SystemExit(f"traced run failed: {result}")
                            counted.append((result.stops, result.seccomp_stops))
                        else:
                            command, stdin = table[name]
                            split.once(command, stdin, env, cwd if name != "bare" else seen["cwd"], meter)
                    cpu[name].append(((meter.read() - tree) / args.runs, (time.process_time() - own) * 1000 / args.runs,
                                      (time.perf_counter() - wall) * 1000 / args.runs))
        finally:
            if meter.group is not None and helper is not None:
                (split.CPUACCT / "cgroup.procs").write_text(str(helper))  # out again, so the group can go
            meter.close()
        print(f"load average {os.getloadavg()[0]:.2f}; tree CPU from "
              f"{'a cpuacct control group' if meter.group else 'rusage (lower bound)'}; {args.runs} runs x {args.rounds} rounds")
        print(f"{'form':8} {'tree ms':>8} {'this ms':>8} {'sum ms':>8} {'wall ms':>8}")
        for name, values in cpu.items():
            t, o, w = (statistics.median(v[i] for v in values) for i in range(3))
            print(f"{name:8} {t:8.1f} {o:8.1f} {t + o:8.1f} {w:8.1f}")
        print(f"our tracer's stops per run: {statistics.median(s for s, _ in counted)} "
              f"(seccomp stops {statistics.median(s for _, s in counted)})")
        outside = split.stops(*table["outside"], env, cwd, root)
        print(f"outside (strace): resumes per run {outside['resumes']} (per process {outside['per process']})")
        once_more = run(bwrap_argv, gate_stdin, env, cwd, launcher)
        theirs = strace_seen(bwrap_argv, gate_stdin, env, cwd, launcher, root, seen["cwd"])
        print("the bench tool, our tracer vs strace:", compare(once_more.seen, theirs) or "the same",
              summary(once_more.seen))
        hostile(root)


def hostile(root: Path) -> None:
    argv = hostile_argv(sys.executable)
    env = {"PATH": "/usr/bin:/bin"}
    mine = run(argv, b"", env, "/", 1, output=root / "hostile.out")
    theirs = strace_seen(argv, b"", env, "/", 1, root, "/tmp")
    print(f"hostile tool: our tracer observed={mine.observed} stops={mine.stops} (seccomp {mine.seccomp_stops}) "
          f"notes={mine.notes}")
    for key, value in summary(mine.seen).items():
        print(f"  {key}: {value}")
    print("  ours vs strace:", compare(mine.seen, theirs) or "the same")
    print("  its output:", (root / "hostile.out").read_text().strip().splitlines())
    mine = run(notify_argv(sys.executable), b"", env, "/", 1, output=root / "notify.out")
    theirs = strace_seen(notify_argv(sys.executable), b"", env, "/", 1, root, "/tmp")
    fd = os.memfd_create("no-new-filters", 0)
    os.write(fd, no_new_filters())
    os.lseek(fd, 0, os.SEEK_SET)
    guarded = notify_argv(sys.executable)
    guarded = [*guarded[:1], "--add-seccomp-fd", str(fd), *guarded[1:]]
    os.set_inheritable(fd, True)
    strace_guarded = strace_seen(guarded, b"", env, "/", 1, root, "/tmp")
    os.close(fd)
    for who, seen in (("our tracer", mine.seen), ("strace", theirs), ("strace + --add-seccomp-fd no_new_filters()", strace_guarded)):
        print(f"user-notification attack, {who}: lost={seen.lost} writes={[(w.path, w.ok) for w in seen.writes]}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--hostile", action="store_true", help="only compare the two tracers on the hostile tool")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    if args.hostile:
        with tempfile.TemporaryDirectory(prefix="tc-ptrace-") as tmp:
            hostile(Path(tmp))
        return 0
    measure(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
