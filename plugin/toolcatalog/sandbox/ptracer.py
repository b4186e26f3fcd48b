"""The build's own tracer of bubblewrap runs (x86-64 Linux): ptrace, stopped only where it records.

This module runs inside the spawner (spawner.py), which loads it by its path: it imports nothing
of the package, only the standard library. One `Tracer` per run, on a thread of the spawner's own:

* The spawner starts the run's leader (the control-group shell and bubblewrap, or bubblewrap) as
  it starts any process (vfork and exec: the leader's process group, session and parent-death
  signal as today), with three more descriptors for bubblewrap: `--seccomp FD` (the filter of
  seccomp.py, which bubblewrap applies right before it execs the command), `--info-fd FD` (where
  bubblewrap writes its namespace child's pid) and `--block-fd FD` (where that child, its sandbox
  set up, waits before it forks the command).
* The tracer thread reads the child's pid and `PTRACE_SEIZE`s it with `TRACESECCOMP | TRACEFORK |
  TRACEVFORK | TRACECLONE | TRACEEXEC | EXITKILL | TRACESYSGOOD`, moves it into the run's control
  groups (cgroup.py: no shell enters them first, and bubblewrap's outer process stays outside,
  where it costs the caps nothing), sets the run's caps on it with `prlimit(2)` (limits.rlimits:
  no shell sets them inside), waits, for a run started ahead of its turn, until the build lets it
  go (a byte on the run's gate; an end of file or the child's end instead ends the run), then lets
  it go on. From there every
  process of the sandbox is traced from its first instruction (the command's process is a fork of
  the seized one; a fork's child is attached before it runs). bubblewrap's setup was over before the
  seize and its outer process is never traced, so neither stops; the command's read-only opens never
  reach the tracer either (the filter tests the open flags). A seize fails: the run is killed before
  the child is let go (bubblewrap would go on after an end of file on its block descriptor).
* Only seized tasks are waited for (`waitpid(-1, __WALL | __WNOTHREAD)` on the tracer's own
  thread): the leader is the spawner's main thread's child and never traced, so a tracer never reaps
  a leader (whose pid stays the run's process group id until the build asks), an untraced run's
  process or another run's tracee. Every tracee's end is reaped by its tracer (a traced process that
  is not our child is passed on to its real parent once we have seen it end).
* At a seccomp stop the call is decoded (its number's low 32 bits, which the kernel runs; registers,
  `/proc/PID/mem`, relative paths from `/proc/PID/cwd` and `/proc/PID/fd/N`, which read as the
  sandbox's own paths, and the links of its /proc a path goes through, followed); one `PTRACE_SYSCALL`
  takes it to the call's exit for the result; everything else is resumed with `PTRACE_CONT`.
  Signals are passed on, except a stop signal to bubblewrap's init (which, untraced, ignores
  signals from inside its namespace); group-stops are kept (`PTRACE_LISTEN`), so a parent's
  `waitpid(WUNTRACED)` sees them. A 32-bit or x32 system call (the filter marks it) ends its
  process, and the run says why (`stopped` in its record).

What it records is what `trace.parse` reads from strace's log for the same run (the tool's
processes only: the first `launcher_execs` successful execs are the launcher's), as a JSON record
(`Tracer.record`): at most `max_records` entries and traced calls, and `MAX_RECORD_BYTES` of their
text; past that the run is "not observed". The run is observed only if the tool started and the
tracer saw every tracee end. What a path names is read from the tool's memory at the stop: another
thread can change it before the kernel reads it (docs/security.md, "Racing the tracer").
"""

from __future__ import annotations

import ctypes
import errno
import os
import re
import resource
import select
import signal
import socket
import struct
from typing import Any

# x86-64 system call numbers (tests/test_ptracer.py checks them against the kernel's header).
NR = {
    "open": 2, "creat": 85, "openat": 257, "openat2": 437, "execve": 59, "execveat": 322,
    "connect": 42, "bind": 49, "sendto": 44, "sendmsg": 46, "sendmmsg": 307,
    "truncate": 76, "unlink": 87, "unlinkat": 263, "rename": 82, "renameat": 264, "renameat2": 316,
    "mkdir": 83, "mkdirat": 258, "rmdir": 84, "link": 86, "linkat": 265, "symlink": 88, "symlinkat": 266,
    "mknod": 133, "mknodat": 259, "chmod": 90, "fchmodat": 268, "fchmodat2": 452, "chown": 92, "fchownat": 260,
    "lchown": 94, "utimensat": 280, "utime": 132, "utimes": 235, "futimesat": 261, "setxattr": 188,
    "lsetxattr": 189, "removexattr": 197, "lremovexattr": 198,
    "fchmod": 91, "fchown": 93, "fsetxattr": 190, "fremovexattr": 199,
    "io_uring_setup": 425, "clone": 56, "clone3": 435, "seccomp": 317, "prctl": 157,
    "setxattrat": 463, "removexattrat": 466, "file_setattr": 469, "ioctl": 16,
    "socket": 41,
}
NAME = {number: name for name, number in NR.items()}
# Where each path-writing call's paths are: (dirfd argument or None, path argument); the written
# one last, a rename's source first (trace.parse records both). trace.PATH_WRITES, and fchmodat2.
PATHS: dict[str, list[tuple[int | None, int]]] = {
    "truncate": [(None, 0)], "unlink": [(None, 0)], "unlinkat": [(0, 1)], "rename": [(None, 0), (None, 1)],
    "renameat": [(0, 1), (2, 3)], "renameat2": [(0, 1), (2, 3)], "mkdir": [(None, 0)], "mkdirat": [(0, 1)],
    "rmdir": [(None, 0)], "link": [(None, 1)], "linkat": [(2, 3)], "symlink": [(None, 1)], "symlinkat": [(1, 2)],
    "mknod": [(None, 0)], "mknodat": [(0, 1)], "chmod": [(None, 0)], "fchmodat": [(0, 1)], "fchmodat2": [(0, 1)],
    "chown": [(None, 0)], "fchownat": [(0, 1)], "lchown": [(None, 0)], "utimensat": [(0, 1)], "utime": [(None, 0)],
    "utimes": [(None, 0)], "futimesat": [(0, 1)], "setxattr": [(None, 0)], "lsetxattr": [(None, 0)],
    "removexattr": [(None, 0)], "lremovexattr": [(None, 0)],
    "setxattrat": [(0, 1)], "removexattrat": [(0, 1)], "file_setattr": [(0, 1)],
}
# The path writes strace 6.1 cannot name (newer than it: Linux 6.6, 6.13, 6.17), which only ours traces.
NEWER = ("fchmodat2", "setxattrat", "removexattrat", "file_setattr")
# Changes through a descriptor (trace.FD_WRITES): the file is the one it names at the stop. And
# `utimensat`, `futimesat` and the calls of NEWER but fchmodat2 with no path (AT_EMPTY_PATH): the
# file open as the first argument.
FD_WRITES = ("fchmod", "fchown", "fsetxattr", "fremovexattr")
FD_WHEN_NO_PATH = ("utimensat", "futimesat", "setxattrat", "removexattrat", "file_setattr")
# The ioctl requests that change a file through any descriptor to it (a read-only one will do), as
# fchmod does: its flags (chattr: FS_IOC_SETFLAGS, and its 32-bit number) and its extended flags
# (FS_IOC_FSSETXATTR). Ours only: strace would stop at every ioctl.
IOCTL_WRITES = (0x40086602, 0x40046602, 0x401C5820)
NETWORK = ("connect", "bind", "sendto", "sendmsg", "sendmmsg")
MMSGHDR = 64  # bytes of a struct mmsghdr: a struct msghdr (its address and length first) and msg_len
UIO_MAXIOV = 1024  # the most messages one sendmmsg sends (the kernel takes no more)
WRITE_MASK = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND | 0o20000000  # __O_TMPFILE
AT_FDCWD = -100
AF_VSOCK = 40  # a VM socket: no network namespace holds it (it reaches the machine's host)
TAG_FOREIGN = 1  # SECCOMP_RET_TRACE's data for a 32-bit or x32 call (seccomp.py)
TAG_VSOCK = 2  # and for socket(AF_VSOCK), which the tracer refuses (`Tracer._refuse_vsock`)
VSOCK_REFUSED = ("socket:vsock", "EACCES")  # how that refusal is kept: a connection the sandbox refused
FOREIGN = ("stopped: it made a 32-bit (i386) or x32 system call, which the sandbox's tracer cannot follow; "
           "such programs do not run traced")
# The kernel's restart codes, which a call interrupted by a signal shows at its exit stop.
ENTER_FAILED = "cannot enter the control group of the run"
LIMIT_FAILED = "cannot set the resource caps of the run"
RESTART = {512: "ERESTARTSYS", 513: "ERESTARTNOINTR", 514: "ERESTARTNOHAND", 516: "ERESTART_RESTARTBLOCK"}
UNFINISHED = "?"  # a write's error when its call never returned (trace.Write.error)

PTRACE_CONT, PTRACE_GETREGS, PTRACE_SETREGS, PTRACE_SYSCALL = 7, 12, 13, 24
PTRACE_GETEVENTMSG, PTRACE_SEIZE, PTRACE_LISTEN = 0x4201, 0x4206, 0x4208
O_TRACESYSGOOD, O_TRACEFORK, O_TRACEVFORK, O_TRACECLONE, O_TRACEEXEC = 0x1, 0x2, 0x4, 0x8, 0x10
O_TRACESECCOMP, O_EXITKILL = 0x80, 0x100000
OPTIONS = O_TRACESYSGOOD | O_TRACEFORK | O_TRACEVFORK | O_TRACECLONE | O_TRACEEXEC | O_TRACESECCOMP | O_EXITKILL
EVENT_FORK, EVENT_VFORK, EVENT_CLONE, EVENT_EXEC, EVENT_SECCOMP, EVENT_STOP = 1, 2, 3, 4, 7, 128
WALL, WNOTHREAD = 0x40000000, 0x20000000
STOP_SIGNALS = (signal.SIGSTOP, signal.SIGTSTP, signal.SIGTTIN, signal.SIGTTOU)
_CHILD_PID = re.compile(rb'"child-pid"\s*:\s*(\d+)')
MAX_INFO = 4096  # bytes of bubblewrap's --info-fd read at most
# Characters of paths, programs and addresses (and the names of writes' errors) a run's record keeps
# at most (a path is up to 4 KB, a rename names two): the tracer's memory is the build's helper's,
# outside the run's memory cap.
MAX_RECORD_BYTES = 64 << 20
MAX_NOTES = 20

# The links of the sandbox's /proc (a descriptor's file or folder, a process's working folder or
# root) and /dev's links to them: the kernel follows one before a `..` after it, so `normal` keeps
# such a `..`, and our tracer follows the link (Memory.follow) to the file the kernel names.
_THROUGH = ("fd", "stdin", "stdout", "stderr", "core")
_LINKED = re.compile(r"/(?:dev/(?P<std>stdin|stdout|stderr)|dev/fd/(?P<devfd>\d+)|proc/(?P<who>self|thread-self|\d+)"
                     r"(?:/task/(?P<task>\d+))?/(?P<leaf>fd/\d+|cwd|root))(?P<rest>/.*)?")
_STD = {"stdin": 0, "stdout": 1, "stderr": 2}

_LIBC: Any = None


def _libc() -> Any:
    global _LIBC
    if _LIBC is None:
        _LIBC = ctypes.CDLL(None, use_errno=True)
        _LIBC.ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p]
        _LIBC.ptrace.restype = ctypes.c_long
    return _LIBC


class Regs(ctypes.Structure):
    """struct user_regs_struct (x86-64)."""

    _fields_ = [(name, ctypes.c_ulonglong) for name in (
        "r15 r14 r13 r12 rbp rbx r11 r10 r9 r8 rax rcx rdx rsi rdi orig_rax rip cs eflags rsp ss "
        "fs_base gs_base ds es fs gs").split()]


def ptrace(request: int, pid: int, addr: int = 0, data: int = 0) -> None:
    ctypes.set_errno(0)
    if _libc().ptrace(request, pid, addr, data) == -1 and ctypes.get_errno():
        code = ctypes.get_errno()
        raise OSError(code, os.strerror(code))


def resume(request: int, pid: int, sig: int = 0) -> None:
    try:
        ptrace(request, pid, 0, sig)
    except ProcessLookupError:
        pass  # killed meanwhile (SIGKILL): its end is reported by waitpid


def normal(path: str) -> str:
    """An absolute `path` normalized as `os.path.normpath` does, except for a `..` after a link of
    /proc or /dev's links to it, which is kept: the kernel follows the link first, and lexically
    `/proc/self/fd/3/../7` would be descriptor 7's link (a quiet write) where it names a file `7`
    beside the folder descriptor 3 is open on."""
    parts: list[str] = []
    for part in path.split("/"):
        if part in ("", "."):
            continue
        through = bool(parts) and (parts[0] == "proc" or (parts[0] == "dev" and len(parts) > 1 and parts[1] in _THROUGH))
        if part == ".." and not through:
            if parts:
                parts.pop()
        else:
            parts.append(part)
    return "/" + "/".join(parts)


def _signed(value: int) -> int:
    return ctypes.c_longlong(value).value


def _fd(value: int) -> int:
    return ctypes.c_int(value & 0xFFFFFFFF).value


def _link(path: str) -> str:
    """Where a `/proc` link points, as text: bytes that are not UTF-8 replaced (U+FFFD), as
    trace.parse reads strace's escapes, never kept as surrogates no JSON can carry."""
    return os.readlink(os.fsencode(path)).decode("utf-8", "replace")


def _event_message(pid: int) -> int:
    value = ctypes.c_ulong()
    ptrace(PTRACE_GETEVENTMSG, pid, 0, ctypes.addressof(value))
    return value.value


class Call:
    """A call seen at its seccomp stop, waiting for its result."""

    __slots__ = ("name", "writes", "program", "addresses")

    def __init__(self, name: str) -> None:
        self.name = name
        self.writes: list[str] = []
        self.program = ""
        self.addresses: list[str] = []  # a network call's addresses: one, or a sendmmsg's each (distinct)


class Memory:
    """Reading a stopped tracee: its memory, its working folder and descriptors."""

    @staticmethod
    def string(pid: int, address: int) -> str | None:
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
        except (OSError, OverflowError):  # OverflowError: an address past 2**63, no file offset
            return None
        finally:
            os.close(fd)
        return data.decode("utf-8", "replace")

    @staticmethod
    def raw(pid: int, address: int, size: int) -> bytes:
        try:
            fd = os.open(f"/proc/{pid}/mem", os.O_RDONLY)
        except OSError:
            return b""
        try:
            return _pread(fd, address, min(size, 4096))
        finally:
            os.close(fd)

    @staticmethod
    def descriptor(pid: int, fd: int) -> str:
        """The file descriptor `fd` of `pid` names, as the tracee sees it (`<fd N>` when none)."""
        try:
            target = _link(f"/proc/{pid}/fd/{fd}")
        except OSError:
            return f"<fd {fd}>"
        if target.endswith(" (deleted)"):
            target = target[: -len(" (deleted)")]
        return target if target.startswith("/") else f"<fd {fd}>"

    @staticmethod
    def resolve(pid: int, dirfd: int | None, path: str) -> str:
        if not path.startswith("/"):
            fd = None if dirfd is None else _fd(dirfd)
            if fd is None or fd == AT_FDCWD:
                try:
                    base = _link(f"/proc/{pid}/cwd")
                except OSError:
                    base = "<cwd>"
            else:
                base = Memory.descriptor(pid, fd)
            path = os.path.join(base, path)
        return Memory.follow(pid, normal(path)) if path.startswith("/") else os.path.normpath(path)

    @staticmethod
    def follow(pid: int, path: str) -> str:
        """`path` with the links of /proc it starts with followed, as the kernel does for `pid`
        (`/proc/self/fd/3/x` is `x` in the folder descriptor 3 is open on); as it is where one
        cannot be read or names no file (a pipe, `/proc/self/fd/1`, or memory: a quiet write)."""
        for _ in range(8):  # a link's target is a real path; a few more in a row at most
            found = _LINKED.fullmatch(path)
            link = _link_of(pid, found) if found else None
            try:
                target = _link(link) if link else ""
            except OSError:
                target = ""
            if not target.startswith("/") or target.startswith("/memfd:"):  # a pipe, memory: no file
                break
            target = target[: -len(" (deleted)")] if target.endswith(" (deleted)") else target
            path = normal(target + (found["rest"] or "") if found else target)
        return path

    @staticmethod
    def sockaddr(pid: int, address: int, size: int) -> str | None:
        return _sockaddr(Memory.raw(pid, address, min(size, 128)))

    @staticmethod
    def messages(pid: int, vector: int, count: int) -> list[str]:
        """The distinct addresses of a sendmmsg's `count` messages at `vector` (the first
        UIO_MAXIOV, all the kernel sends), in order; one read of the tool's memory for them all."""
        try:
            fd = os.open(f"/proc/{pid}/mem", os.O_RDONLY)
        except OSError:
            return []
        try:
            headers = _pread(fd, vector, min(count, UIO_MAXIOV) * MMSGHDR)
            found: dict[str, None] = {}
            for offset in range(0, len(headers) - 11, MMSGHDR):
                pointer, size = struct.unpack_from("=QI", headers, offset)
                text = _sockaddr(_pread(fd, pointer, min(size, 128)))
                if text is not None:
                    found[text] = None
            return list(found)
        finally:
            os.close(fd)


def _pread(fd: int, address: int, size: int) -> bytes:
    """`size` bytes of the memory `fd` opens, at `address`; what can be read of them."""
    if address == 0 or size <= 0:
        return b""
    try:
        return os.pread(fd, size, address)
    except (OSError, OverflowError):  # OverflowError: an address past 2**63, no file offset
        return b""


def _sockaddr(raw: bytes) -> str | None:
    """A struct sockaddr's address, as trace._address names strace's (None for other families)."""
    if len(raw) < 2:
        return None
    family = struct.unpack_from("=H", raw)[0]
    if family == socket.AF_INET and len(raw) >= 8:
        return f"{socket.inet_ntop(socket.AF_INET, raw[4:8])}:{struct.unpack_from('>H', raw, 2)[0]}"
    if family == socket.AF_INET6 and len(raw) >= 24:
        return f"[{socket.inet_ntop(socket.AF_INET6, raw[8:24])}]:{struct.unpack_from('>H', raw, 2)[0]}"
    if family == AF_VSOCK and len(raw) >= 12:  # struct sockaddr_vm: family, reserved, port, cid
        port, cid = struct.unpack_from("=II", raw, 4)
        return f"vsock:{cid}:{port}"
    if family == socket.AF_UNIX and len(raw) > 2:
        name = raw[2:]
        if name[:1] == b"\0":
            return "unix:@" + name[1:].decode("utf-8", "replace")
        return "unix:" + name.split(b"\0")[0].decode("utf-8", "replace")
    return None


def _link_of(pid: int, found: re.Match[str]) -> str | None:
    """Where the host reads the /proc link `found` names for `pid`: in the sandbox's own /proc,
    through `pid`'s root, with `self` and `thread-self` as the sandbox's numbers for `pid`."""
    who, task = found["who"], found["task"]
    leaf = found["leaf"] or f"fd/{found['devfd'] or _STD.get(found['std'] or '', 0)}"
    if who in (None, "self", "thread-self"):
        ids = _ns_ids(pid)
        if ids is None:
            return None
        who, task = ids[0], (ids[1] if who == "thread-self" else task)
    return f"/proc/{pid}/root/proc/{who}" + (f"/task/{task}" if task else "") + f"/{leaf}"


def _ns_ids(pid: int) -> tuple[str, str] | None:
    """`pid`'s process and thread numbers in its own (the sandbox's) PID namespace."""
    ids: dict[str, str] = {}
    try:
        with open(f"/proc/{pid}/status", encoding="ascii", errors="replace") as status:
            for line in status:
                if line.startswith(("NStgid:", "NSpid:")):
                    ids[line.split(":")[0]] = line.split()[-1]
    except OSError:
        return None
    return (ids["NStgid"], ids["NSpid"]) if len(ids) == 2 else None


def decode(pid: int) -> Call:
    """The call `pid` is stopped at (a seccomp stop): what it names, before it runs."""
    regs = Regs()
    ptrace(PTRACE_GETREGS, pid, 0, ctypes.addressof(regs))
    args = (regs.rdi, regs.rsi, regs.rdx, regs.r10, regs.r8, regs.r9)
    number = regs.orig_rax & 0xFFFFFFFF  # what the kernel runs (and seccomp sees): bits above are ignored
    name = NAME.get(number, f"#{number}")
    call = Call(name)
    if name == "execve":
        call.program = Memory.string(pid, args[0]) or ""
    elif name == "execveat":
        call.program = _started_at(pid, args)
    elif name in ("open", "creat", "openat"):  # (openat2 never stops: the filter refuses it)
        _opened(pid, name, args, call)
    elif name in FD_WRITES or name == "ioctl":  # the filter stops only the ioctls of IOCTL_WRITES
        call.writes.append(Memory.descriptor(pid, _fd(args[0])))
    elif name in PATHS:
        _paths(pid, name, args, call)
    elif name in NETWORK:
        call.addresses = _addresses(pid, name, args)
    return call


def _started_at(pid: int, args: tuple[int, ...]) -> str:
    """The program `execveat(dirfd, path, ...)` starts: `path` as given, as execve's is, unless it
    names a file by its descriptor (an empty path, AT_EMPTY_PATH: a program written into memory is
    `/memfd:NAME`) or relative to one."""
    path = Memory.string(pid, args[1]) or ""
    if path.startswith("/") or _fd(args[0]) == AT_FDCWD:
        return path
    return Memory.descriptor(pid, _fd(args[0])) if not path else Memory.resolve(pid, args[0], path)


def _opened(pid: int, name: str, args: tuple[int, ...], call: Call) -> None:
    dirfd, at = (None, 0) if name in ("open", "creat") else (args[0], 1)
    path = Memory.string(pid, args[at])
    if path is not None:
        call.writes.append(Memory.resolve(pid, dirfd, path))


def _paths(pid: int, name: str, args: tuple[int, ...], call: Call) -> None:
    for dirfd_at, at in PATHS[name]:
        path = Memory.string(pid, args[at])
        if path is not None:
            call.writes.append(Memory.resolve(pid, None if dirfd_at is None else args[dirfd_at], path))
        elif name in FD_WHEN_NO_PATH:
            call.writes.append(Memory.descriptor(pid, _fd(args[0])))


def _addresses(pid: int, name: str, args: tuple[int, ...]) -> list[str]:
    if name == "sendmmsg":
        return Memory.messages(pid, args[1], args[2] & 0xFFFFFFFF)
    if name in ("connect", "bind"):
        found = Memory.sockaddr(pid, args[1], args[2])
    elif name == "sendto":
        found = Memory.sockaddr(pid, args[4], args[5])
    else:
        header = Memory.raw(pid, args[1], 12)  # sendmsg: a struct msghdr
        found = Memory.sockaddr(pid, *struct.unpack("=QI", header)) if len(header) == 12 else None
    return [] if found is None else [found]


class Tracer:
    """One run: the tracing loop, and what it saw, as trace.parse would report it."""

    def __init__(self, launcher_execs: int, max_records: int) -> None:
        self.launcher_execs = launcher_execs
        self.max_records = max_records
        self.records = 0
        self.started = False
        self.programs: list[str] = []
        self.execs: list[tuple[int, str]] = []  # (pid, program) of every successful exec after the start
        self.refused: list[str] = []
        self.each_program: set[str] = set()  # `programs`, and
        self.each_refused: set[str] = set()  # `refused`, for lookups in constant time
        self.writes: list[tuple[str, bool, str]] = []  # (path, ok, error: its name, "" or UNFINISHED as trace.Write says)
        self.connections: list[tuple[str, str]] = []
        self.pending: dict[int, Call] = {}
        self.alive: set[int] = set()
        self.gone: set[int] = set()  # tracees whose end was seen (a child's can come before its parent's fork event)
        self.init = 0  # the seized process: bubblewrap's init in the sandbox
        self.first_pid = 0
        self.stops = 0
        self.seccomp_stops = 0
        self.complete = False  # every tracee's end was seen
        self.size = 0  # characters kept (MAX_RECORD_BYTES)
        self.over = False  # more than max_records, or than MAX_RECORD_BYTES
        self.stopped = ""  # why the tracer ended a process (a 32-bit call)
        self.notes: list[str] = []

    # -- the start

    def attach(self, info_fd: int, block_fd: int, leader: int, groups: tuple[str, ...] | list[str] = (),
               limits: tuple[tuple[int, int], ...] | list[list[int]] = (), gate: int | None = None) -> bool:
        """Read bubblewrap's child from `info_fd`, seize it, move it into the run's control groups
        (`groups`: their folders), set its caps (`limits`: (resource, value) pairs, soft and hard
        alike, which the tool inherits), wait for the build's word when the run was started ahead
        (`gate`: `_let_go`), let it go on (`block_fd`). False (the run killed, never let go
        untraced, outside its groups or uncapped) when it cannot be seized; when it cannot be moved
        or capped, or the build ends it at the gate, it is killed too and its end still waited for."""
        try:
            child = _child_pid(info_fd)
            if child is None:
                self.notes.append("bubblewrap gave no child pid (it ended before its sandbox was set up)")
                return False
            try:
                ptrace(PTRACE_SEIZE, child, 0, OPTIONS)
            except OSError as exc:
                self.notes.append(f"cannot trace bubblewrap's child: {exc.strerror or exc}")
                _end_run(child, leader)
                return False
            self.init = child
            self.alive.add(child)
            if not _enter(groups, child):
                self.stopped = ENTER_FAILED
                _end_run(child, leader)
                return True  # its end is still waited for
            if not _limit(limits, child):
                self.stopped = LIMIT_FAILED
                _end_run(child, leader)
                return True
            if gate is not None and not _let_go(gate, child):
                self.notes.append("ended at its gate: the build did not let it go")
                _end_run(child, leader)
                return True
            os.write(block_fd, b"x")
            return True
        finally:
            os.close(block_fd)
            if gate is not None:
                os.close(gate)

    # -- the loop

    def loop(self) -> None:
        """Until no tracee is left: every one's end seen."""
        while True:
            try:
                pid, status = os.waitpid(-1, WALL | WNOTHREAD)
            except ChildProcessError:
                break
            except InterruptedError:
                continue
            if os.WIFEXITED(status) or os.WIFSIGNALED(status):
                self._ended(pid)
            elif os.WIFSTOPPED(status):
                try:
                    self.stop(pid, status)
                except ProcessLookupError:
                    pass  # killed at its stop (SIGKILL): its end is reported next
        self.complete = not self.alive

    def _ended(self, pid: int) -> None:
        if pid in self.pending:
            self.result(pid, None)
        self.alive.discard(pid)
        if not self.over:  # past the bound the run is not observed anyway
            self.gone.add(pid)

    def stop(self, pid: int, status: int) -> None:
        self.stops += 1
        sig, event = os.WSTOPSIG(status), status >> 16
        if pid not in self.gone:
            self.alive.add(pid)
        if event == EVENT_SECCOMP:
            self._seccomp(pid)
        elif sig == signal.SIGTRAP | 0x80:  # the exit of a call resumed from its seccomp stop
            self._exit(pid)
        elif event in (EVENT_FORK, EVENT_VFORK, EVENT_CLONE):
            child = _event_message(pid)
            if child not in self.gone and self._room():  # a fork counts too: what the tracer keeps stays bounded
                self.alive.add(child)
            resume(PTRACE_CONT, pid)
        elif event == EVENT_EXEC:
            self.exec_event(pid)
            resume(PTRACE_CONT, pid)
        elif event == EVENT_STOP:
            # A group-stop (a stop signal) is kept, as without a tracer; any other (a new child's
            # first stop, the end of a group-stop) goes on.
            resume(PTRACE_LISTEN if sig in STOP_SIGNALS else PTRACE_CONT, pid)
        elif event:
            resume(PTRACE_CONT, pid)
        else:
            # A signal on its way: passed on, except a stop signal to bubblewrap's init, which
            # ignores signals from inside its namespace when nothing traces it.
            resume(PTRACE_CONT, pid, 0 if pid == self.init and sig in STOP_SIGNALS else sig)

    def _seccomp(self, pid: int) -> None:
        self.seccomp_stops += 1
        self._room()  # every traced call counts, as each is a line of strace's log
        if pid in self.pending:  # a call whose exit never came (its end unreported): kept, outcome unknown
            self.result(pid, None)
        try:
            tag = _event_message(pid)
            if tag == TAG_FOREIGN:
                self.stopped = FOREIGN
                _kill(pid)
                resume(PTRACE_CONT, pid)
                return
            if tag == TAG_VSOCK:
                self._refuse_vsock(pid)
                return
            self.pending[pid] = decode(pid)
        except ProcessLookupError:
            return
        resume(PTRACE_SYSCALL, pid)  # once: to the call's exit

    def _refuse_vsock(self, pid: int) -> None:
        """socket(AF_VSOCK), at its seccomp stop: skipped (the number -1, which the kernel runs as
        nothing) with EACCES for its result, as the Landlock launcher refuses a family, and kept as a
        connection the sandbox refused. A VM socket reaches the machine's host, which no network
        namespace holds; the filter cannot both refuse it and stop for the tracer to see it."""
        regs = Regs()
        ptrace(PTRACE_GETREGS, pid, 0, ctypes.addressof(regs))
        regs.orig_rax = (1 << 64) - 1
        regs.rax = -errno.EACCES & ((1 << 64) - 1)
        ptrace(PTRACE_SETREGS, pid, 0, ctypes.addressof(regs))
        if self.started and self._room(1, VSOCK_REFUSED[:1]):
            self.connections.append(VSOCK_REFUSED)
        resume(PTRACE_CONT, pid)

    def _exit(self, pid: int) -> None:
        regs = Regs()
        try:
            ptrace(PTRACE_GETREGS, pid, 0, ctypes.addressof(regs))
        except ProcessLookupError:
            return
        self.result(pid, _signed(regs.rax))
        resume(PTRACE_CONT, pid)

    # -- what is recorded

    def _room(self, count: int = 1, texts: tuple[str, ...] | list[str] = ()) -> bool:
        """Whether `count` more entries (holding `texts`) may be kept."""
        self.records += count
        self.size += sum(len(text) for text in texts)
        if self.records > self.max_records or self.size > MAX_RECORD_BYTES:
            self.over = True
        return not self.over

    def result(self, pid: int, value: int | None) -> None:
        """The result of the call `pid` was in: None when it never returned (killed)."""
        call = self.pending.pop(pid, None)
        if call is None or not self.started:
            return
        ok = value is not None and value >= 0
        error = "" if ok else ("?" if value is None else (errno.errorcode.get(-value) or RESTART.get(-value, "?")))
        if call.name in ("execve", "execveat"):
            if error in ("EACCES", "EPERM") and call.program not in self.each_refused and self._room(1, (call.program,)):
                self.each_refused.add(call.program)
                self.refused.append(call.program)
        elif call.name in NETWORK:
            self._network(call, error)
        else:
            failure = UNFINISHED if value is None else "" if error == "?" else error  # a number with no name: ""
            if self._room(len(call.writes), [*call.writes, *(failure for _ in call.writes)]):  # the errors count too
                self.writes.extend((path, ok, failure) for path in call.writes)

    def _network(self, call: Call, error: str) -> None:
        """trace._Parser._network's rules: a path socket counts only when reached; of a sendmmsg
        that failed, only its first message's address (the kernel fails one only when it sent none)."""
        for address in call.addresses[:1] if error else call.addresses:
            if address.startswith("unix:/") and (error not in ("", "EINPROGRESS", "EAGAIN") or call.name == "bind"):
                continue
            if self._room(1, (address,)):
                self.connections.append((address, error))

    def exec_event(self, pid: int) -> None:
        former = _event_message(pid)
        call = self.pending.pop(former, None)
        if former != pid:
            self.alive.discard(former)  # a thread's execve: the thread is gone, it is the leader now
            # The old leader ended with it, unreported: a call it had under way is kept, outcome unknown.
            self.result(pid, None)
        self.launcher_execs -= 1
        if self.launcher_execs >= 0:
            return
        if call is not None:
            program = call.program
        else:
            if len(self.notes) < MAX_NOTES:
                self.notes.append(f"an exec of {pid} with no seccomp stop")
            try:
                program = _link(f"/proc/{pid}/exe")
            except OSError:
                program = "?"
        if not self.started:
            self.started, self.first_pid = True, pid
        if not self._room(1, (program,)):
            return
        self.execs.append((pid, program))
        if program not in self.each_program:
            self.each_program.add(program)
            self.programs.append(program)

    def record(self) -> dict[str, Any]:
        """What the run did, as trace.Seen's fields (trace.load_record reads it)."""
        last = max((i for i, (pid, _) in enumerate(self.execs) if pid == self.first_pid), default=-1)
        spawned = list(dict.fromkeys(program for pid, program in self.execs[last + 1:] if pid != self.first_pid))
        observed = self.started and self.complete and not self.over
        return {
            "started": self.started, "lost": not observed, "programs": self.programs, "spawned": spawned,
            "execs": [program for _pid, program in self.execs], "refused": self.refused,
            "writes": [list(w) for w in self.writes], "connections": [list(c) for c in self.connections],
            "stopped": self.stopped, "stops": self.stops, "seccomp_stops": self.seccomp_stops, "notes": self.notes[:MAX_NOTES],
        }


def _child_pid(fd: int) -> int | None:
    """bubblewrap's namespace child, from what it writes to `--info-fd`: read to its end (bubblewrap
    closes it once written; a reader gone before that would end it with SIGPIPE)."""
    data = b""
    try:
        while True:
            chunk = os.read(fd, 4096)
            if not chunk:
                break
            data = (data + chunk)[:MAX_INFO]
    finally:
        os.close(fd)
    found = _CHILD_PID.search(data)
    return int(found.group(1)) if found else None


def _enter(groups: tuple[str, ...] | list[str], pid: int) -> bool:
    """`pid` (with every process it starts from now on) moved into each control group folder."""
    for folder in groups:
        try:
            with open(os.path.join(folder, "cgroup.procs"), "w", encoding="ascii") as stream:
                stream.write(str(pid))
        except OSError:
            return False
    return True


def _limit(limits: tuple[tuple[int, int], ...] | list[list[int]], pid: int) -> bool:
    """`pid`'s caps set (each soft and hard alike: the tool cannot raise them again)."""
    for number, value in limits:
        try:
            resource.prlimit(pid, number, (value, value))
        except (OSError, ValueError):
            return False
    return True


def _let_go(gate: int, child: int) -> bool:
    """Whether the build lets a run started ahead go: a byte on `gate` when its turn comes; no, at
    an end of file (the build ended the run, or is gone) or when `child` is gone (killed with its run)."""
    try:
        pidfd = os.pidfd_open(child)
    except OSError:
        return False
    try:
        poller = select.poll()
        poller.register(gate, select.POLLIN)
        poller.register(pidfd, select.POLLIN)
        ready = dict(poller.poll())
        return pidfd not in ready and os.read(gate, 1) == b"x"
    except OSError:
        return False
    finally:
        os.close(pidfd)


def _end_run(child: int, leader: int) -> None:
    for target in (child, leader):
        _kill(target)
    try:
        os.killpg(leader, signal.SIGKILL)
    except OSError:
        pass


def _kill(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
    except OSError:
        pass


def trace_run(info_fd: int, block_fd: int, leader: int, launcher_execs: int, max_records: int,
              groups: tuple[str, ...] | list[str] = (), limits: tuple[tuple[int, int], ...] | list[list[int]] = (),
              gate: int | None = None) -> dict[str, Any]:
    """The whole of one run's tracing, on the calling thread (which must stay alive until it
    returns: ptrace requests come from the tracer thread). Signals are blocked on it, so the
    spawner's main thread gets them. `groups`, `limits`, `gate`: see `Tracer.attach`."""
    signal.pthread_sigmask(signal.SIG_BLOCK, signal.valid_signals())
    tracer = Tracer(launcher_execs, max_records)
    if tracer.attach(info_fd, block_fd, leader, groups, limits, gate):
        tracer.loop()
    return tracer.record()
