#!/usr/bin/env python3
"""A prototype tracer of our own, outside the sandbox, stopped only by what trace.py records.

    PYTHONPATH=plugin .venv/bin/python bench/ptrace_proto.py [--runs 20] [--rounds 5]
    PYTHONPATH=plugin .venv/bin/python bench/ptrace_proto.py --hostile   # only the comparison

Not wired into the build (see bench/README.md, "Our own tracer outside the sandbox"). The design:

* The build forks a child that asks to be traced (`PTRACE_TRACEME`), stops itself and execs
  bubblewrap. The tracer sets `PTRACE_O_TRACESECCOMP | TRACEFORK | TRACEVFORK | TRACECLONE |
  TRACEEXEC | EXITKILL` and resumes with `PTRACE_CONT` only: no system call is stepped, so
  bubblewrap's setup costs a stop per fork and exec, not per call.
* bubblewrap's `--seccomp FD` loads `program()`, a classic BPF filter, and applies it just before
  it execs the command (after its setup). The filter returns `SECCOMP_RET_TRACE` only for what
  `trace.parse` records: `execve`/`execveat`; `open`/`openat` with a write flag (the filter reads
  the flags argument; read-only opens, most of a run's calls, never stop), `creat`, `openat2` (its
  flags are behind a pointer: always); the path writes of `trace.PATH_WRITES`; `connect`, `bind`,
  `sendmsg`, `sendmmsg`, and `sendto` with an address. It refuses what would hide a call from the
  tracer: `io_uring_setup` and `clone3` (ENOSYS; the C library falls back to `clone`), `clone`
  with `CLONE_UNTRACED` and installing another seccomp filter (EPERM: a `SECCOMP_RET_USER_NOTIF`
  filter outranks `TRACE` and its supervisor could let a call run unseen). Any architecture but
  x86-64, and x32 call numbers, kill the process.
* At a seccomp stop the tracer reads the call's arguments (registers, `/proc/PID/mem`) and resolves
  relative paths from `/proc/PID/cwd` and `/proc/PID/fd/DIRFD`, so no `chdir` or read-only open is
  tracked; it resumes with `PTRACE_SYSCALL` once to read the result at the call's exit.
* Signals are re-injected, group-stops resumed, the auto-attached children's first `SIGSTOP`
  swallowed. The run is observed only if the tracer saw every tracee's end and the tool start.

What it records is a `trace.Seen`, so it compares with strace's log through `trace.parse`
(`compare`). `main` measures CPU per run like bench/sandbox_split.py (a `cpuacct` control group
for the process tree, plus this process's own CPU, which is the tracer's), counts stops, and
compares both tracers on the bench tool and on `HOSTILE`. x86-64 Linux only.
"""

from __future__ import annotations

import argparse
import ctypes
import errno
import os
import shutil
import signal
import socket
import statistics
import struct
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from toolcatalog.sandbox import trace

# x86-64 system call numbers (tests/test_ptrace_proto.py checks them against the kernel header).
NR = {
    "open": 2, "creat": 85, "openat": 257, "openat2": 437, "execve": 59, "execveat": 322,
    "connect": 42, "bind": 49, "sendto": 44, "sendmsg": 46, "sendmmsg": 307,
    "truncate": 76, "unlink": 87, "unlinkat": 263, "rename": 82, "renameat": 264, "renameat2": 316,
    "mkdir": 83, "mkdirat": 258, "rmdir": 84, "link": 86, "linkat": 265, "symlink": 88, "symlinkat": 266,
    "mknod": 133, "mknodat": 259, "chmod": 90, "fchmodat": 268, "chown": 92, "fchownat": 260, "lchown": 94,
    "utimensat": 280, "utime": 132, "utimes": 235, "futimesat": 261, "setxattr": 188, "lsetxattr": 189, "removexattr": 197, "lremovexattr": 198,
    "io_uring_setup": 425, "clone": 56, "clone3": 435, "seccomp": 317, "prctl": 157,
}
NAME = {number: name for name, number in NR.items()}
# Where each path-writing call's paths are: (dirfd argument or None, path argument); the written
# one last, a rename's source first (trace.parse records both).
PATHS: dict[str, list[tuple[int | None, int]]] = {
    "truncate": [(None, 0)], "unlink": [(None, 0)], "unlinkat": [(0, 1)], "rename": [(None, 0), (None, 1)],
    "renameat": [(0, 1), (2, 3)], "renameat2": [(0, 1), (2, 3)], "mkdir": [(None, 0)], "mkdirat": [(0, 1)],
    "rmdir": [(None, 0)], "link": [(None, 1)], "linkat": [(2, 3)], "symlink": [(None, 1)], "symlinkat": [(1, 2)],
    "mknod": [(None, 0)], "mknodat": [(0, 1)], "chmod": [(None, 0)], "fchmodat": [(0, 1)], "chown": [(None, 0)],
    "fchownat": [(0, 1)], "lchown": [(None, 0)], "utimensat": [(0, 1)], "utime": [(None, 0)], "utimes": [(None, 0)],
    "futimesat": [(0, 1)], "setxattr": [(None, 0)],
    "lsetxattr": [(None, 0)], "removexattr": [(None, 0)], "lremovexattr": [(None, 0)],
}
assert set(PATHS) == trace.PATH_WRITES
# Not yet followed here: trace.FD_WRITES (fchmod, fchown, fsetxattr, fremovexattr on a descriptor).
NETWORK = ("connect", "bind", "sendto", "sendmsg", "sendmmsg")
ALWAYS = ("execve", "execveat", "creat", "openat2", "connect", "bind", "sendmsg", "sendmmsg", *sorted(PATHS))
WRITE_MASK = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND | 0o20000000  # __O_TMPFILE
CLONE_UNTRACED = 0x00800000
PR_SET_SECCOMP = 22
AT_FDCWD = -100

AUDIT_ARCH_X86_64 = 0xC000003E
X32_BIT = 0x40000000
RET_KILL_PROCESS, RET_ERRNO, RET_TRACE, RET_ALLOW = 0x80000000, 0x00050000, 0x7FF00000, 0x7FFF0000
LD_ABS, JEQ, JGE, JSET, RET = 0x20, 0x15, 0x35, 0x45, 0x06  # BPF_LD|W|ABS, BPF_JMP|JEQ|K, ..., BPF_RET|K


def _arg(index: int, high: bool = False) -> int:
    """Offset of a seccomp_data argument's low (or high) 32 bits (little-endian)."""
    return 16 + 8 * index + (4 if high else 0)


def program() -> bytes:
    """The filter, as `struct sock_filter` records (what bubblewrap's `--seccomp FD` reads)."""
    # (code, true target, false target, k); a target is a label, or None for the next instruction.
    code: list[tuple[str | None, int, str | None, str | None, int]] = []

    def op(kind: int, k: int, yes: str | None = None, no: str | None = None, label: str | None = None) -> None:
        code.append((label, kind, yes, no, k))

    op(LD_ABS, 4)  # arch
    op(JEQ, AUDIT_ARCH_X86_64, None, "kill")
    op(LD_ABS, 0)  # nr
    op(JGE, X32_BIT, "kill", None)
    for name in ALWAYS:
        op(JEQ, NR[name], "trace", None)
    for name, target in (("open", "open"), ("openat", "openat"), ("sendto", "sendto"), ("clone", "clone"),
                         ("prctl", "prctl"), ("clone3", "enosys"), ("io_uring_setup", "enosys"), ("seccomp", "eperm")):
        op(JEQ, NR[name], target, None)
    op(RET, RET_ALLOW)
    op(LD_ABS, _arg(1), label="open")
    op(JSET, WRITE_MASK, "trace", "allow")
    op(LD_ABS, _arg(2), label="openat")
    op(JSET, WRITE_MASK, "trace", "allow")
    op(LD_ABS, _arg(4), label="sendto")  # the address pointer: NULL is a send on a connected socket
    op(JEQ, 0, None, "trace")
    op(LD_ABS, _arg(4, high=True))
    op(JEQ, 0, "allow", "trace")
    op(LD_ABS, _arg(0), label="clone")
    op(JSET, CLONE_UNTRACED, "eperm", "allow")
    op(LD_ABS, _arg(0), label="prctl")
    op(JEQ, PR_SET_SECCOMP, "eperm", "allow")
    op(RET, RET_ALLOW, label="allow")
    op(RET, RET_TRACE, label="trace")
    op(RET, RET_ERRNO | errno.ENOSYS, label="enosys")
    op(RET, RET_ERRNO | errno.EPERM, label="eperm")
    op(RET, RET_KILL_PROCESS, label="kill")
    where = {label: i for i, (label, *_rest) in enumerate(code) if label}
    out = b""
    for i, (_label, kind, yes, no, k) in enumerate(code):
        jt = where[yes] - i - 1 if yes else 0
        jf = where[no] - i - 1 if no else 0
        assert 0 <= jt < 256 and 0 <= jf < 256
        out += struct.pack("=HBBI", kind, jt, jf, k)
    return out


def no_new_filters() -> bytes:
    """A filter that only refuses new seccomp filters (and 32-bit/x32 calls): what today's strace
    path could add with bubblewrap's `--add-seccomp-fd` against `NOTIFY` (ERRNO outranks TRACE)."""
    code = [
        (LD_ABS, 0, 0, 4), (JEQ, 1, 0, AUDIT_ARCH_X86_64), (RET, 0, 0, RET_KILL_PROCESS),
        (LD_ABS, 0, 0, 0), (JGE, 6, 0, X32_BIT),
        (JEQ, 4, 0, NR["seccomp"]), (JEQ, 0, 2, NR["prctl"]),
        (LD_ABS, 0, 0, _arg(0)), (JEQ, 1, 0, PR_SET_SECCOMP),
        (RET, 0, 0, RET_ALLOW), (RET, 0, 0, RET_ERRNO | errno.EPERM), (RET, 0, 0, RET_KILL_PROCESS),
    ]
    return b"".join(struct.pack("=HBBI", kind, jt, jf, k) for kind, jt, jf, k in code)


# ptrace, through the C library.
PTRACE_TRACEME, PTRACE_CONT, PTRACE_GETREGS, PTRACE_SYSCALL = 0, 7, 12, 24
PTRACE_SETOPTIONS, PTRACE_GETEVENTMSG, PTRACE_GETSIGINFO = 0x4200, 0x4201, 0x4202
O_TRACESYSGOOD, O_TRACEFORK, O_TRACEVFORK, O_TRACECLONE, O_TRACEEXEC = 0x1, 0x2, 0x4, 0x8, 0x10
O_TRACESECCOMP, O_EXITKILL = 0x80, 0x100000
OPTIONS = O_TRACESYSGOOD | O_TRACEFORK | O_TRACEVFORK | O_TRACECLONE | O_TRACEEXEC | O_TRACESECCOMP | O_EXITKILL
EVENT_FORK, EVENT_VFORK, EVENT_CLONE, EVENT_EXEC, EVENT_SECCOMP = 1, 2, 3, 4, 7
WALL = 0x40000000

_libc = ctypes.CDLL(None, use_errno=True)
_libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p]
_libc.ptrace.restype = ctypes.c_long


class Regs(ctypes.Structure):
    _fields_ = [(name, ctypes.c_ulonglong) for name in (
        "r15 r14 r13 r12 rbp rbx r11 r10 r9 r8 rax rcx rdx rsi rdi orig_rax rip cs eflags rsp ss "
        "fs_base gs_base ds es fs gs").split()]


def ptrace(request: int, pid: int, addr: int = 0, data: Any = 0) -> None:
    ctypes.set_errno(0)
    if _libc.ptrace(request, pid, addr, data) == -1 and ctypes.get_errno():
        code = ctypes.get_errno()
        raise OSError(code, os.strerror(code))


def resume(request: int, pid: int, sig: int = 0) -> None:
    try:
        ptrace(request, pid, 0, sig)
    except ProcessLookupError:
        pass  # killed meanwhile (SIGKILL): its exit is reported by waitpid


def _signed(value: int) -> int:
    return ctypes.c_longlong(value).value


@dataclass
class Call:
    name: str
    writes: list[str] = field(default_factory=list)
    program: str = ""
    address: str | None = None
    checked_write: bool = True  # openat2: the flags are read here, not by the filter


@dataclass
class Result:
    seen: trace.Seen
    status: int  # bubblewrap's wait status
    stops: int = 0
    seccomp_stops: int = 0
    observed: bool = False
    notes: list[str] = field(default_factory=list)


class Tracer:
    """One run: the tracing loop and what it saw, as trace.parse would have reported it."""

    def __init__(self, launcher_execs: int) -> None:
        self.launcher_execs = launcher_execs
        self.seen = trace.Seen()
        self.pending: dict[int, Call] = {}
        self.started: set[int] = set()  # tracees whose first (attach) stop has been seen
        self.alive: set[int] = set()
        self.gone: set[int] = set()  # tracees whose end was seen (a child's can come before its parent's fork event)
        self.first_pid = 0
        self.execs: list[tuple[int, str]] = []
        self.stops = 0
        self.seccomp_stops = 0
        self.notes: list[str] = []

    # -- reading the tracee
    def _string(self, pid: int, address: int) -> str | None:
        if address == 0:
            return None
        data = b""
        try:
            fd = os.open(f"/proc/{pid}/mem", os.O_RDONLY)
        except OSError:
            return None
        try:
            while len(data) < 4096:
                chunk = os.pread(fd, 256 - (address + len(data)) % 256, address + len(data))
                if not chunk:
                    break
                end = chunk.find(b"\0")
                if end >= 0:
                    return (data + chunk[:end]).decode("utf-8", "replace")
                data += chunk
        except OSError:
            return None
        finally:
            os.close(fd)
        return data.decode("utf-8", "replace")

    def _bytes(self, pid: int, address: int, size: int) -> bytes:
        if address == 0 or size <= 0:
            return b""
        try:
            fd = os.open(f"/proc/{pid}/mem", os.O_RDONLY)
            try:
                return os.pread(fd, min(size, 4096), address)
            finally:
                os.close(fd)
        except OSError:
            return b""

    def _resolve(self, pid: int, dirfd: int | None, path: str) -> str:
        if path.startswith("/"):
            return os.path.normpath(path)
        fd = None if dirfd is None else ctypes.c_int(dirfd & 0xFFFFFFFF).value
        where = f"/proc/{pid}/cwd" if fd is None or fd == AT_FDCWD else f"/proc/{pid}/fd/{fd}"
        try:
            base = os.readlink(where)
        except OSError:
            base = f"<fd {fd}>"
        return os.path.normpath(os.path.join(base, path))

    def _sockaddr(self, pid: int, address: int, size: int) -> str | None:
        raw = self._bytes(pid, address, min(size, 128))
        if len(raw) < 2:
            return None
        family = struct.unpack_from("=H", raw)[0]
        if family == socket.AF_INET and len(raw) >= 8:
            return f"{socket.inet_ntop(socket.AF_INET, raw[4:8])}:{struct.unpack_from('>H', raw, 2)[0]}"
        if family == socket.AF_INET6 and len(raw) >= 24:
            return f"[{socket.inet_ntop(socket.AF_INET6, raw[8:24])}]:{struct.unpack_from('>H', raw, 2)[0]}"
        if family == socket.AF_UNIX and len(raw) > 2:
            name = raw[2:]
            if name[:1] == b"\0":
                return "unix:@" + name[1:].decode("utf-8", "replace")
            return "unix:" + name.split(b"\0")[0].decode("utf-8", "replace")
        return None

    # -- the stops
    def entry(self, pid: int) -> None:
        """A seccomp stop: decode the call; its result is read at the exit stop."""
        regs = Regs()
        ptrace(PTRACE_GETREGS, pid, 0, ctypes.addressof(regs))
        args = (regs.rdi, regs.rsi, regs.rdx, regs.r10, regs.r8, regs.r9)
        name = NAME.get(regs.orig_rax, f"#{regs.orig_rax}")
        call = Call(name)
        if name in ("execve", "execveat"):
            at = 1 if name == "execveat" else 0
            call.program = self._string(pid, args[at]) or ""
        elif name in ("open", "creat", "openat", "openat2"):
            dirfd, at = (None, 0) if name in ("open", "creat") else (args[0], 1)
            path = self._string(pid, args[at])
            if name == "openat2":
                how = self._bytes(pid, args[2], 8)
                call.checked_write = len(how) == 8 and bool(struct.unpack("=Q", how)[0] & WRITE_MASK)
            if path is not None:
                call.writes.append(self._resolve(pid, dirfd, path))
        elif name in PATHS:
            for dirfd_at, at in PATHS[name]:
                path = self._string(pid, args[at])
                if path is not None:
                    call.writes.append(self._resolve(pid, None if dirfd_at is None else args[dirfd_at], path))
        elif name in NETWORK:
            if name in ("connect", "bind"):
                call.address = self._sockaddr(pid, args[1], args[2])
            elif name == "sendto":
                call.address = self._sockaddr(pid, args[4], args[5])
            else:  # sendmsg: a struct msghdr; sendmmsg: the first struct mmsghdr starts with one
                header = self._bytes(pid, args[1], 12)
                if len(header) == 12:
                    pointer, size = struct.unpack("=QI", header)
                    call.address = self._sockaddr(pid, pointer, size)
        self.pending[pid] = call

    def exit(self, pid: int, result: int | None) -> None:
        """The result of the call `pid` was in: None when it never returned (killed)."""
        call = self.pending.pop(pid, None)
        if call is None or not self.seen.started:
            return
        ok = result is not None and result >= 0
        error = "" if ok else (errno.errorcode.get(-result, "?") if result is not None else "?")
        if call.name in ("execve", "execveat"):
            if error in ("EACCES", "EPERM") and call.program not in self.seen.refused:
                self.seen.refused.append(call.program)
        elif call.name in NETWORK:
            self._network(call, ok, error)
        elif call.checked_write:
            for path in call.writes:
                self.seen.writes.append(trace.Write(path, ok=ok))

    def _network(self, call: Call, ok: bool, error: str) -> None:
        """trace._Parser._network's rules."""
        if call.address is None:
            return
        if call.address.startswith("unix:/"):
            if error in ("", "EINPROGRESS", "EAGAIN") and call.name != "bind":
                self.seen.connections.append((call.address, error))
        else:
            self.seen.connections.append((call.address, error))

    def exec_event(self, pid: int) -> None:
        former = ctypes.c_ulong()
        ptrace(PTRACE_GETEVENTMSG, pid, 0, ctypes.addressof(former))
        call = self.pending.pop(former.value, None) or self.pending.pop(pid, None)
        if former.value != pid:
            self.alive.discard(former.value)  # a thread's execve: the thread is gone, it is the leader now
            self.notes.append(f"execve from thread {former.value} of {pid}")
        self.launcher_execs -= 1
        if self.launcher_execs >= 0:
            return
        if call is None:
            self.notes.append(f"an exec of {pid} with no seccomp stop")
            program = os.readlink(f"/proc/{pid}/exe") if os.path.exists(f"/proc/{pid}/exe") else "?"
        else:
            program = call.program
        if not self.seen.started:
            self.seen.started, self.first_pid = True, pid
        self.execs.append((pid, program))
        self.seen.execs.append(program)
        if program not in self.seen.programs:
            self.seen.programs.append(program)

    def finish(self) -> trace.Seen:
        last = max((i for i, (pid, _) in enumerate(self.execs) if pid == self.first_pid), default=-1)
        for pid, program in self.execs[last + 1:]:
            if pid != self.first_pid and program not in self.seen.spawned:
                self.seen.spawned.append(program)
        return self.seen

    def loop(self, leader: int, deadline: float) -> int:
        """Until every tracee is gone; bubblewrap's wait status. Raises TimeoutError past `deadline`."""
        status = 0
        self.alive = {leader}
        self.started = {leader}
        while self.alive:
            if time.monotonic() > deadline:
                raise TimeoutError
            try:
                pid, wait = os.waitpid(-1, WALL)
            except ChildProcessError:
                break
            if os.WIFEXITED(wait) or os.WIFSIGNALED(wait):
                if pid in self.pending:
                    self.exit(pid, None)
                self.alive.discard(pid)
                self.gone.add(pid)
                if pid == leader:
                    status = wait
                continue
            if os.WIFSTOPPED(wait):
                self.stopped(pid, wait)
        return status

    def stopped(self, pid: int, wait: int) -> None:
        self.stops += 1
        sig, event = os.WSTOPSIG(wait), wait >> 16
        self.alive.add(pid)
        if pid not in self.started:
            self.started.add(pid)
            if sig == signal.SIGSTOP and event == 0:
                resume(PTRACE_CONT, pid)  # an auto-attached child's first stop
                return
        if event == EVENT_SECCOMP:
            self.seccomp_stops += 1
            try:
                self.entry(pid)
            except ProcessLookupError:
                return
            resume(PTRACE_SYSCALL, pid)  # once: to the call's exit
        elif sig == signal.SIGTRAP | 0x80:  # the exit of a call resumed from its seccomp stop
            regs = Regs()
            try:
                ptrace(PTRACE_GETREGS, pid, 0, ctypes.addressof(regs))
            except ProcessLookupError:
                return
            self.exit(pid, _signed(regs.rax))
            resume(PTRACE_CONT, pid)
        elif event in (EVENT_FORK, EVENT_VFORK, EVENT_CLONE):
            child = ctypes.c_ulong()
            ptrace(PTRACE_GETEVENTMSG, pid, 0, ctypes.addressof(child))
            if child.value not in self.gone:
                self.alive.add(child.value)
            resume(PTRACE_CONT, pid)
        elif event == EVENT_EXEC:
            self.exec_event(pid)
            resume(PTRACE_CONT, pid)
        elif event:
            resume(PTRACE_CONT, pid)
        else:
            self.signal_stop(pid, sig)

    def signal_stop(self, pid: int, sig: int) -> None:
        """A signal-delivery stop (re-inject the signal) or a group-stop (resume it: without
        PTRACE_SEIZE there is no PTRACE_LISTEN; the stop is not kept)."""
        info = ctypes.create_string_buffer(128)
        try:
            ptrace(PTRACE_GETSIGINFO, pid, 0, info)
        except OSError as exc:
            if exc.errno == errno.EINVAL:
                resume(PTRACE_CONT, pid)  # group-stop
            return
        resume(PTRACE_CONT, pid, sig)


def _filter_fd() -> int:
    fd = os.memfd_create("toolcatalog-seccomp", 0)
    os.write(fd, program())
    os.lseek(fd, 0, os.SEEK_SET)
    return fd


def with_filter(bwrap_argv: list[str], fd: int) -> list[str]:
    """bubblewrap's command line with `--seccomp FD` among its options (before the command)."""
    end = bwrap_argv.index("--", 1)
    return [*bwrap_argv[:end], "--seccomp", str(fd), *bwrap_argv[end:]]


def run(bwrap_argv: list[str], stdin: bytes, env: dict[str, str], cwd: str, launcher_execs: int,
        timeout: float = 30.0, preexec: Callable[[], None] | None = None, output: Path | None = None) -> Result:
    """bubblewrap's `bwrap_argv` traced by the prototype; its output to `output` (else discarded)."""
    fd = _filter_fd()
    argv = with_filter(bwrap_argv, fd)
    read, write = os.pipe()
    if len(stdin) > 60000:
        raise ValueError("stdin larger than a pipe holds")
    os.write(write, stdin)
    os.close(write)
    out = os.open(output or os.devnull, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    leader = os.fork()
    if leader == 0:  # the child: no Python objects touched beyond these calls
        try:
            if preexec is not None:
                preexec()
            os.dup2(read, 0)
            os.dup2(out, 1)
            os.dup2(out, 2)
            os.set_inheritable(fd, True)
            os.chdir(cwd)
            _libc.ptrace(PTRACE_TRACEME, 0, None, None)
            os.kill(os.getpid(), signal.SIGSTOP)
            os.execve(argv[0], argv, env)
        except BaseException as exc:
            os.write(2, f"ptrace_proto: {exc!r}\n".encode())
        finally:
            os._exit(127)
    os.close(read)
    os.close(out)
    os.close(fd)
    tracer = Tracer(launcher_execs)
    observed = False
    status = -1
    try:
        _pid, wait = os.waitpid(leader, WALL)
        if not os.WIFSTOPPED(wait):
            raise RuntimeError(f"the child did not stop: wait status {wait}")
        ptrace(PTRACE_SETOPTIONS, leader, 0, OPTIONS)
        resume(PTRACE_CONT, leader)
        status = tracer.loop(leader, time.monotonic() + timeout)
        observed = not tracer.alive
    except TimeoutError:
        tracer.notes.append("timed out")
        os.kill(leader, signal.SIGKILL)  # bubblewrap's namespace goes with it (--die-with-parent, EXITKILL on the rest)
        for pid in list(tracer.alive):
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        while True:
            try:
                os.waitpid(-1, WALL)
            except ChildProcessError:
                break
    seen = tracer.finish()
    seen.lost = not observed or not seen.started
    return Result(seen, status, tracer.stops, tracer.seccomp_stops, observed and seen.started, tracer.notes)


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
                out.append(f"{key}: only the prototype {only_a}, only strace {only_b}")
            else:
                out.append(f"{key}: prototype {a[key]}, strace {b[key]}")
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
# strace (today's tracer) the write is missing from a log that ends cleanly; the prototype's
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
        cpu: dict[str, list[tuple[float, float, float]]] = {name: [] for name in (*table, "ptrace")}
        counted: list[tuple[int, int]] = []
        try:
            for _ in range(args.rounds):
                for name in cpu:
                    tree, own, wall = meter.read(), time.process_time(), time.perf_counter()
                    for _ in range(args.runs):
                        if name == "ptrace":
                            result = run(bwrap_argv, gate_stdin, env, cwd, launcher, preexec=meter.enter)
                            if not result.observed or result.status != 0:
                                raise SystemExit(f"prototype run failed: {result}")
                            counted.append((result.stops, result.seccomp_stops))
                        else:
                            command, stdin = table[name]
                            split.once(command, stdin, env, cwd if name != "bare" else seen["cwd"], meter)
                    cpu[name].append(((meter.read() - tree) / args.runs, (time.process_time() - own) * 1000 / args.runs,
                                      (time.perf_counter() - wall) * 1000 / args.runs))
        finally:
            meter.close()
        print(f"load average {os.getloadavg()[0]:.2f}; tree CPU from "
              f"{'a cpuacct control group' if meter.group else 'rusage (lower bound)'}; {args.runs} runs x {args.rounds} rounds")
        print(f"{'form':8} {'tree ms':>8} {'this ms':>8} {'sum ms':>8} {'wall ms':>8}")
        for name, values in cpu.items():
            t, o, w = (statistics.median(v[i] for v in values) for i in range(3))
            print(f"{name:8} {t:8.1f} {o:8.1f} {t + o:8.1f} {w:8.1f}")
        print(f"prototype stops per run: {statistics.median(s for s, _ in counted)} "
              f"(seccomp stops {statistics.median(s for _, s in counted)})")
        outside = split.stops(*table["outside"], env, cwd, root)
        print(f"outside (strace): resumes per run {outside['resumes']} (per process {outside['per process']})")
        once_more = run(bwrap_argv, gate_stdin, env, cwd, launcher)
        theirs = strace_seen(bwrap_argv, gate_stdin, env, cwd, launcher, root, seen["cwd"])
        print("the bench tool, prototype vs strace:", compare(once_more.seen, theirs) or "the same",
              summary(once_more.seen))
        hostile(root)


def hostile(root: Path) -> None:
    argv = hostile_argv(sys.executable)
    env = {"PATH": "/usr/bin:/bin"}
    mine = run(argv, b"", env, "/", 1, output=root / "hostile.out")
    theirs = strace_seen(argv, b"", env, "/", 1, root, "/tmp")
    print(f"hostile tool: prototype observed={mine.observed} stops={mine.stops} (seccomp {mine.seccomp_stops}) "
          f"notes={mine.notes}")
    for key, value in summary(mine.seen).items():
        print(f"  {key}: {value}")
    print("  prototype vs strace:", compare(mine.seen, theirs) or "the same")
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
    for who, seen in (("prototype", mine.seen), ("strace", theirs), ("strace + --add-seccomp-fd no_new_filters()", strace_guarded)):
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
