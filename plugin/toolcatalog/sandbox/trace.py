"""What a sandboxed run's tracer saw (`Seen`), from either of its two tracers.

- Under bubblewrap, the build's own tracer (ptracer.py, in the spawner, with the filter of
  seccomp.py): it records as it goes and the spawner writes the record to the run's host-side
  folder once the run is reaped (`load_record`). It stops only where something is recorded.
- strace, the fallback where ours cannot work (probe.py), under the Landlock launcher, and for MCP
  servers (which the MCP SDK starts): `wrap` puts it around the launcher, and `parse` reads its log.
  `--seccomp-bpf` makes the kernel stop only the calls listed in `SYSCALLS`, but strace steps through
  bubblewrap's whole setup first (bench/README.md counts the stops).

Both run *outside* the sandbox, where the tool can neither see nor stop them (with bubblewrap the
tool is in its own PID namespace). Inside, as the sandbox's PID 1, a tracer would skip bubblewrap's
setup, but the tool, the same user, could lower its resource limits without a capability (a
file-size cap around one call drops that call's line from a log that still ends cleanly); see
bench/README.md, "A tracer inside the sandbox". What each records is out of the tool's reach.

What is recorded, for the tool's processes only (everything up to the tool's own `execve` is the
launcher setting up, and is skipped):

- every program started (`execve`, `execveat`),
- every attempt to write a file: an open with a write flag, `creat`, `truncate`, `unlink`, `rename`,
  `mkdir`, `link`, `symlink`, `mknod`, `chmod`, `chown`, `utimensat`, `setxattr`, ... and their
  forms on a file descriptor (`fchmod`, `fchown`, `fsetxattr`, `fremovexattr`, `futimens`), with
  its outcome (`Write`): it succeeded, it failed with a named error (an attempt the sandbox refused,
  `EROFS`, is still an attempt; so is one that failed for another reason, `ENOENT`), or it never
  returned (its process ended in the call, or the trace ended first: whether it wrote is unknown),
- every network connection attempt (`connect`, `sendto`, `sendmsg`, `sendmmsg`, `bind` with an IP
  address or an abstract Unix socket name), and every Unix socket with a path that was reached
  (a successful `connect` or send: a socket on the host, or one the tool made itself, which the
  sandbox tells apart).

A log that could not be read to its end (cut at `MAX_LOG_BYTES`, unreadable), a record past
`MAX_RECORDS` entries or traced calls (or missing), or a trace that never shows the tool starting
(or, ours, one tracee's end) is `Seen.lost`: what the tool did then is unknown, and the run is "not
observed".

`io_uring_setup` is made to fail with ENOSYS (strace's fault injection; our filter's errno): io_uring
can read, write and connect without the system calls above, so it is the one channel a trace would
miss. Our filter refuses `clone3` (ENOSYS), `clone(CLONE_UNTRACED)` and new seccomp filters (EPERM)
as well.

Limits, stated on the security page: file descriptors passed in from outside, memory-mapped writes
to a file opened earlier, and paths relative to a directory descriptor strace never saw opened are
resolved on a best-effort basis; a path the parser cannot resolve is reported as `<fd N>/name`.
`fchmodat2` (Linux 6.6), `setxattrat`, `removexattrat` (6.13) and `file_setattr` (6.17) are not
traced by strace 6.1, which does not know their names, nor are the `ioctl`s that change a file's
flags (ours traces them all, ptracer.NEWER and IOCTL_WRITES); a change of mode they make in a
writable place still shows in the before-and-after comparison, one of attributes or flags does not. Our tracer
resolves descriptors and relative paths from `/proc` at the call, so it needs no `<fd N>` guess.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from . import ptracer
from .ptracer import normal

# The calls strace stops on (the rest never reach it).
SYSCALLS = (
    "execve,execveat,"
    "connect,bind,sendto,sendmsg,sendmmsg,"
    "open,openat,openat2,creat,truncate,"
    "unlink,unlinkat,rename,renameat,renameat2,mkdir,mkdirat,rmdir,"
    "link,linkat,symlink,symlinkat,mknod,mknodat,"
    "chmod,fchmodat,chown,fchownat,lchown,utimensat,utime,utimes,futimesat,"
    "setxattr,lsetxattr,removexattr,lremovexattr,"
    "fchmod,fchown,fsetxattr,fremovexattr,"
    "chdir,fchdir,clone,clone3,fork,vfork,"
    "io_uring_setup"
)
WRITE_FLAGS = ("O_WRONLY", "O_RDWR", "O_CREAT", "O_TRUNC", "O_APPEND", "O_TMPFILE")
PATH_WRITES = {
    "truncate", "unlink", "unlinkat", "rename", "renameat", "renameat2", "mkdir", "mkdirat", "rmdir",
    "link", "linkat", "symlink", "symlinkat", "mknod", "mknodat", "chmod", "fchmodat", "chown", "fchownat",
    "lchown", "utimensat", "utime", "utimes", "futimesat", "setxattr", "lsetxattr", "removexattr", "lremovexattr",
}
# Changes made through a file descriptor, which need no write access to it (a file opened only for
# reading can have its mode, owner and attributes changed): the file is the one that descriptor
# was seen opened as (`<fd N>` when it was not).
FD_WRITES = {"fchmod", "fchown", "fsetxattr", "fremovexattr"}
# The second path argument is the one written (the first is what is linked to / renamed away).
TARGET_IS_LAST = {"rename", "renameat", "renameat2", "link", "linkat", "symlink", "symlinkat"}
MAX_LOG_BYTES = 256 << 20  # a log larger than this is read only this far (the run is then not observed)
UNFINISHED = ptracer.UNFINISHED  # a write's `error` when its call never returned (`Write`)


def find() -> str | None:
    return shutil.which("strace")


def works(strace: str, launcher_probe: list[str]) -> tuple[bool, str]:
    """Whether strace can trace `launcher_probe` (a sandbox start-up of /bin/true): ptrace may be
    forbidden (a container's seccomp profile, Yama), or --seccomp-bpf unsupported."""
    try:
        done = subprocess.run(
            [strace, *_options(os.devnull), "--", *launcher_probe],
            capture_output=True, text=True, timeout=15, stdin=subprocess.DEVNULL, env={"PATH": "/usr/bin:/bin"},
        )
    except (OSError, subprocess.SubprocessError) as exc:
        return False, str(exc)
    if done.returncode != 0:
        lines = [line for line in done.stderr.splitlines() if line.strip()]
        return False, (lines[-1] if lines else f"exit code {done.returncode}")[:300]
    return True, ""


def _options(log: str, refuse_filters: bool = False) -> list[str]:
    options = [
        "-f", "-qq", "--seccomp-bpf", "-s", "4096", "-e", "signal=none",
        "-e", "trace=" + SYSCALLS + (",seccomp" if refuse_filters else ""),
        "-e", "inject=io_uring_setup:error=ENOSYS", "-o", log,
    ]
    if refuse_filters:
        options[-2:-2] = ["-e", "inject=seccomp:error=EPERM"]
    return options


def wrap(strace: str, log: Path, argv: list[str], refuse_filters: bool = False) -> list[str]:
    """`argv` run under strace, logging to `log`. `refuse_filters`: every `seccomp()` call fails
    with EPERM. A process may add seccomp filters of its own, and the kernel answers a call with
    the most severe action of all filters: SECCOMP_RET_USER_NOTIF outranks the RET_TRACE strace's
    filter gives, so a tool supervising its own notifications would make its writes unseen. A
    listener can only be had through `seccomp()` (prctl's filters cannot notify); bubblewrap's
    runs refuse it this way, and the Landlock launcher, which needs `seccomp()` for its own
    listener, refuses it in the filter it installs last (landlock_launcher._group_filter)."""
    return [strace, *_options(str(log), refuse_filters), "--", *argv]


@dataclass
class Write:
    path: str  # absolute, as the tool saw it
    ok: bool  # the call succeeded
    # How it failed: its error's name (`EROFS`, `ENOENT`; "" when the tracer gave none), or
    # UNFINISHED: the call never returned (its process ended in it, or the trace did first), so
    # whether it wrote is unknown. "" when it succeeded.
    error: str = ""


_ERROR_NAME = re.compile(r"E[A-Z0-9_]{1,39}")


def error_name(text: str) -> str:
    """`text` when it is an error's name as the kernel's headers spell it (`ENOENT`, `ERESTARTSYS`),
    else ""."""
    return text if _ERROR_NAME.fullmatch(text) else ""


@dataclass
class Seen:
    """What the trace shows the tool's processes did."""

    started: bool = False  # the tool's own execve was found
    programs: list[str] = field(default_factory=list)  # every program started, the tool's own first
    spawned: list[str] = field(default_factory=list)  # programs started by child processes once the tool was running
    execs: list[str] = field(default_factory=list)  # every successful execve after the start, in order (any process)
    refused: list[str] = field(default_factory=list)  # programs whose execve the sandbox refused (EACCES, EPERM)
    writes: list[Write] = field(default_factory=list)
    connections: list[tuple[str, str]] = field(default_factory=list)  # (address, the call's error name; "" when it succeeded)
    lost: bool = False  # the log was cut, unreadable, or never showed the tool start: the rest is unknown
    stopped: str = ""  # why the tracer ended a process of the tool (ptracer.FOREIGN), "" when it did not


_LINE = re.compile(r"^(\d+) +(.*)$")
_CALL = re.compile(r"^(\w+)\((.*)\) += (-?\d+|\?|0x[0-9a-f]+)(?: (\w+) \(([^)]*)\))?")
_RESUMED = re.compile(r"^<\.\.\. (\w+) resumed>(.*)$")
_PID_CHANGED = re.compile(r" <pid changed to (\d+) \.\.\.>$")
_STR = re.compile(r'"((?:[^"\\]|\\.)*)"')


def _unescape(text: str) -> str:
    """A string as strace printed it (C escapes) back to text."""
    raw = text.encode("latin-1", "backslashreplace").decode("unicode_escape").encode("latin-1", "replace")
    return raw.decode("utf-8", "replace")


# A top-level argument list in pieces: a quoted string (to its closing quote, or to the end when
# it has none), one bracket or comma, or a run of anything else.
_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|".*|[\[\]{}(),]|[^"\[\]{}(),]+', re.S)


def _split_args(text: str) -> list[str]:
    """Top-level arguments of a call: commas inside quotes, brackets and braces do not split."""
    out: list[str] = []
    current: list[str] = []
    depth = 0
    for match in _TOKEN.finditer(text):
        token = match.group()
        if token == ",":
            if depth == 0:
                out.append("".join(current).strip())
                current = []
                continue
        elif token in ("[", "{", "("):
            depth += 1
        elif token in ("]", "}", ")"):
            depth -= 1
        current.append(token)
    if "".join(current).strip():
        out.append("".join(current).strip())
    return out


def _address(arg: str) -> str | None:
    """`127.0.0.1:80`, `[::1]:443`, `unix:@name` or `vsock:CID:PORT` from a sockaddr strace printed;
    None for others."""
    family = re.search(r"sa_family=(\w+)", arg)
    if not family:
        return None
    port = re.search(r"sin6?_port=htons\((\d+)\)", arg)
    if family.group(1) == "AF_INET":
        ip = re.search(r'inet_addr\("([^"]+)"\)', arg)
        return f"{ip.group(1) if ip else '?'}:{port.group(1) if port else '?'}"
    if family.group(1) == "AF_INET6":
        ip = re.search(r'inet_pton\(AF_INET6, "([^"]+)"', arg)
        return f"[{ip.group(1) if ip else '?'}]:{port.group(1) if port else '?'}"
    if family.group(1) == "AF_UNIX":
        name = re.search(r'sun_path=(@?)"((?:[^"\\]|\\.)*)"', arg)
        return f"unix:{name.group(1)}{_unescape(name.group(2))}" if name else None
    if family.group(1) == "AF_VSOCK":
        return f"vsock:{_vsock_number(arg, 'svm_cid')}:{_vsock_number(arg, 'svm_port')}"
    return None


# The names strace gives VM socket numbers (linux/vm_sockets.h); ours (ptracer) gives them as numbers.
_VSOCK_NAMES = {"VMADDR_CID_ANY": 0xFFFFFFFF, "VMADDR_PORT_ANY": 0xFFFFFFFF, "VMADDR_CID_HYPERVISOR": 0,
                "VMADDR_CID_LOCAL": 1, "VMADDR_CID_HOST": 2}


def _vsock_number(arg: str, field: str) -> str:
    found = re.search(field + r"=(\w+)", arg)
    if not found:
        return "?"
    text = found.group(1)
    if text in _VSOCK_NAMES:
        return str(_VSOCK_NAMES[text])
    try:
        return str(int(text, 0))
    except ValueError:
        return "?"


class _Parser:
    def __init__(self, launcher_execs: int, cwd: str) -> None:
        self.launcher_execs = launcher_execs
        self.cwd = cwd
        self.seen = Seen()
        self.listed: set[tuple[str, str]] = set()  # ("started" | "refused", program): each listed once, found in constant time
        self.pending: dict[str, str] = {}
        self.superseded: set[str] = set()  # processes whose next resumed execve is a thread's, which succeeded
        self.tool_pids: set[str] = set()
        self.setup_pids: set[str] = set()
        self.cwds: dict[str, str] = {}
        self.fds: dict[str, dict[str, str]] = {}
        self.first_pid = ""  # the process the tool started in
        self.execs: list[tuple[str, str]] = []  # (pid, program), in order
        self.last_cloner = ""  # the process whose clone() was seen last: the likely parent of a new one
        self.error = ""  # the error name of the call being read
        self.failure = ""  # how the call being read failed, as `Write.error` says it

    def _resolve(self, pid: str, dirfd: str | None, path: str) -> str:
        if not path.startswith("/"):
            base = self.cwds.get(pid, self.cwd)
            if dirfd is not None and dirfd != "AT_FDCWD":
                base = self.fds.get(pid, {}).get(dirfd, f"<fd {dirfd}>")
            path = os.path.join(base, path)
        # A `..` after a link of /proc stays (`/proc/self/fd/3/../7` is not descriptor 7's link).
        return normal(path) if path.startswith("/") else os.path.normpath(path)

    def _whole_call(self, pid: str, body: str) -> str | None:
        """The call a line completes (`name(args) = result ...`), or None when it only begins one."""
        changed = _PID_CHANGED.search(body)
        if changed and body.startswith(("execve(", "execveat(")):
            # A thread's execve: strace ends the thread's line so, then writes the call as resumed
            # (with a meaningless failure) under the process's pid. Past that point the exec has
            # happened (the other threads are gone): it succeeded, in that process.
            self.pending[changed.group(1)] = body[: changed.start()].rstrip()
            self.superseded.add(changed.group(1))
            return None
        if body.endswith("<unfinished ...>"):
            self.pending[pid] = body[: -len("<unfinished ...>")].rstrip()
            if body.startswith(("clone(", "clone3(", "fork(", "vfork(")) and pid in self.tool_pids:
                self.last_cloner = pid  # its child may show up before the call returns
            return None
        resumed = _RESUMED.match(body)
        if resumed and pid in self.superseded and resumed.group(1) in ("execve", "execveat"):
            self.superseded.discard(pid)
            return self.pending.pop(pid, resumed.group(1) + "(") + ") = 0"
        if resumed:
            return self.pending.pop(pid, resumed.group(1) + "(") + resumed.group(2)
        return body

    def line(self, raw: str) -> None:
        match = _LINE.match(raw)
        if not match:
            return
        pid, whole = match.groups()
        body = self._whole_call(pid, whole)
        if body is None:
            return
        call = _CALL.match(body)
        if not call:
            return
        name, args, ret, err, _text = call.groups()
        ok = err is None and ret != "?" and not ret.startswith("-")
        self.error = err or ""
        # `= ?` alone: the process ended in the call (`= ? ERESTARTSYS`: a signal interrupted it).
        self.failure = "" if ok else UNFINISHED if ret == "?" and err is None else error_name(self.error)
        if not self.seen.started:
            self.setup_pids.add(pid)
            if name in ("execve", "execveat") and ok:
                self.launcher_execs -= 1
            if name in ("execve", "execveat") and ok and self.launcher_execs < 0:
                self.seen.started = True
                self.first_pid = pid
                self.tool_pids.add(pid)
                self.setup_pids.discard(pid)
                self._exec(pid, args)
            return
        if pid not in self.tool_pids:
            if pid in self.setup_pids:
                return  # the launcher (bubblewrap's own processes) after the start
            # First seen after the start: a child of the tool. strace cannot say whose (a clone's
            # result is a pid of the tool's namespace); the last process seen cloning is its parent.
            self.tool_pids.add(pid)
            parent = self.last_cloner or self.first_pid
            self.cwds[pid] = self.cwds.get(parent, self.cwd)
            self.fds[pid] = dict(self.fds.get(parent, {}))
        if name in ("clone", "clone3", "fork", "vfork"):
            self.last_cloner = pid
        self._call(pid, name, args, ok, ret)

    def finish(self) -> Seen:
        # A call begun and never seen to end (the log stops first): kept, its outcome unknown.
        for pid, body in list(self.pending.items()):
            if pid not in self.superseded:
                self.line(f"{pid} {body}) = ?")
        self.pending.clear()
        # Programs started by child processes after the tool's own last `execve` (before it, they
        # belong to how the tool starts: a pyenv shim runs helpers before it becomes Python).
        last = max((i for i, (pid, _) in enumerate(self.execs) if pid == self.first_pid), default=-1)
        self.seen.spawned = list(dict.fromkeys(program for pid, program in self.execs[last + 1:] if pid != self.first_pid))
        return self.seen

    def _exec(self, pid: str, args: str) -> None:
        first = _STR.search(args)
        if first:
            path = _unescape(first.group(1))
            self.execs.append((pid, path))
            self.seen.execs.append(path)
            if ("started", path) not in self.listed:
                self.listed.add(("started", path))
                self.seen.programs.append(path)

    def _call(self, pid: str, name: str, args: str, ok: bool, ret: str) -> None:
        # The arguments are split only for the calls that read them (execve, chdir and the clones
        # do not; an execve's argument list is the longest line of a trace).
        if name in ("execve", "execveat"):
            self._execve(pid, args, ok)
        elif name in ("chdir", "fchdir"):
            self._chdir(pid, name, args, _split_args(args) if name == "fchdir" else [], ok)
        elif name in ("connect", "sendto", "sendmsg", "sendmmsg", "bind"):
            self._network(name, _split_args(args), ok)
        elif name in ("open", "openat", "openat2", "creat"):
            self._open(pid, name, _split_args(args), ok, ret)
        elif name in PATH_WRITES:
            self._path_write(pid, name, _split_args(args), ok)
        elif name in FD_WRITES:
            self._fd_write(pid, _split_args(args), ok)

    def _execve(self, pid: str, args: str, ok: bool) -> None:
        if ok:
            self._exec(pid, args)
        elif self.error in ("EACCES", "EPERM"):
            first = _STR.search(args)
            program = _unescape(first.group(1)) if first else None
            if program is not None and ("refused", program) not in self.listed:
                self.listed.add(("refused", program))
                self.seen.refused.append(program)

    def _chdir(self, pid: str, name: str, args: str, argv: list[str], ok: bool) -> None:
        fds = self.fds.setdefault(pid, {})
        if name == "chdir" and ok:
            first = _STR.search(args)
            if first:
                self.cwds[pid] = self._resolve(pid, None, _unescape(first.group(1)))
        elif name == "fchdir" and ok and argv:
            if argv[0] in fds:
                self.cwds[pid] = fds[argv[0]]

    def _network(self, name: str, argv: list[str], ok: bool) -> None:
        outcome = "" if ok else (self.error or "?")
        if name == "sendmmsg":  # each message's address (distinct); of one that failed, the first (none was sent)
            vector = argv[1] if len(argv) > 1 else ""
            messages = _split_args(vector[1:-1]) if vector.startswith("[") and vector.endswith("]") else []
            addresses = list(dict.fromkeys(a for a in map(_address, messages) if a is not None))[: None if ok else 1]
        else:
            addresses = [a for a in map(_address, argv[1:]) if a is not None][:1]
        for address in addresses:
            if address.startswith("unix:/"):
                # A path socket: only one reached counts (a bind makes the tool's own; a
                # missing one, such as nscd's, went nowhere).
                if outcome in ("", "EINPROGRESS", "EAGAIN") and name != "bind":
                    self.seen.connections.append((address, outcome))
            else:
                self.seen.connections.append((address, outcome))

    def _open(self, pid: str, name: str, argv: list[str], ok: bool, ret: str) -> None:
        if name in ("open", "creat"):
            dirfd, raw = None, argv[0] if argv else '""'
            flags = "O_CREAT|O_WRONLY|O_TRUNC" if name == "creat" else (argv[1] if len(argv) > 1 else "")
        else:
            dirfd, raw = (argv[0] if argv else None), (argv[1] if len(argv) > 1 else '""')
            flags = argv[2] if len(argv) > 2 else ""
        string = _STR.fullmatch(raw)
        if not string:
            return
        path = self._resolve(pid, dirfd, _unescape(string.group(1)))
        if ok:
            self.fds.setdefault(pid, {})[ret] = path
        if any(flag in flags for flag in WRITE_FLAGS):
            self._write(path, ok)

    def _write(self, path: str, ok: bool) -> None:
        self.seen.writes.append(Write(path, ok, self.failure))

    def _fd_write(self, pid: str, argv: list[str], ok: bool) -> None:
        if argv:
            self._write(self.fds.get(pid, {}).get(argv[0], f"<fd {argv[0]}>"), ok)

    def _path_write(self, pid: str, name: str, argv: list[str], ok: bool) -> None:
        strings = [(i, a) for i, a in enumerate(argv) if _STR.fullmatch(a)]
        if not strings:
            if name == "utimensat" and len(argv) > 1 and argv[1] == "NULL":
                self._fd_write(pid, argv, ok)  # futimens: the times of the file open as the first argument
            return
        index, raw = strings[-1] if name in TARGET_IS_LAST else strings[0]
        dirfd = argv[index - 1] if name.endswith("at") or name in ("renameat2", "utimensat") else None
        if dirfd is not None and (index == 0 or _STR.fullmatch(dirfd)):
            dirfd = None
        path = self._resolve(pid, dirfd, _unescape(_STR.fullmatch(raw).group(1)))  # type: ignore[union-attr]
        if name.startswith("rename") and len(strings) > 1:
            # The source disappears: that is a write too.
            src_index, src_raw = strings[0]
            src_dirfd = argv[src_index - 1] if src_index > 0 and not _STR.fullmatch(argv[src_index - 1]) else None
            source = self._resolve(pid, src_dirfd, _unescape(_STR.fullmatch(src_raw).group(1)))  # type: ignore[union-attr]
            self._write(source, ok)
        self._write(path, ok)


def parse(log: Path, launcher_execs: int, cwd: str, max_bytes: int = MAX_LOG_BYTES) -> Seen:
    """What the log at `log` shows the tool doing. The tool is what the launcher starts in `cwd`
    after its own `launcher_execs` successful `execve` calls (bubblewrap: 1, the Landlock launcher: 1;
    one more for the execution limiter inside bubblewrap). Past `max_bytes` the log is not read."""
    parser = _Parser(launcher_execs, cwd)
    try:
        with open(log, "rb") as stream:
            read = 0
            for raw in stream:
                read += len(raw)
                if read > max_bytes:
                    parser.seen.lost = True
                    break
                parser.line(raw.decode("utf-8", "replace").rstrip("\n"))
    except OSError:
        parser.seen.lost = True
    seen = parser.finish()
    seen.lost = seen.lost or not seen.started
    return seen


MAX_RECORDS = 1_000_000  # entries our tracer records for one run (ptracer.py); past that the run is not observed


def _texts(value: object) -> list[str]:
    return [str(item) for item in value] if isinstance(value, list) else []


def _recorded_write(entry: list[object]) -> Write:
    """A write of our tracer's record: `[path, ok, error]` (`Write`'s fields). A record of two
    (`[path, ok]`, as before the error was kept) says no more than that it failed: outcome unknown."""
    ok = entry[1] is True
    if ok:
        return Write(str(entry[0]), True)
    error = entry[2] if len(entry) == 3 and isinstance(entry[2], str) else UNFINISHED
    return Write(str(entry[0]), False, error if error == UNFINISHED else error_name(error))


def load_record(path: Path, max_records: int | None = None) -> Seen:
    """What our own tracer (ptracer.py, in the spawner) recorded for a run, in `path` (a file only
    the spawner writes, once the run is reaped): the same `Seen` `parse` reads from strace's log.
    Missing, unreadable, larger than `max_records` entries or marked lost: the run is not observed."""
    try:
        with open(path, encoding="utf-8") as stream:
            record = json.load(stream)
    except (OSError, ValueError):
        return Seen(lost=True)
    if not isinstance(record, dict):
        return Seen(lost=True)
    writes = [w for w in record.get("writes", []) if isinstance(w, list) and len(w) in (2, 3)]
    connections = [c for c in record.get("connections", []) if isinstance(c, list) and len(c) == 2]
    seen = Seen(started=record.get("started") is True, programs=_texts(record.get("programs")),
                spawned=_texts(record.get("spawned")), execs=_texts(record.get("execs")),
                refused=_texts(record.get("refused")), writes=[_recorded_write(w) for w in writes],
                connections=[(str(a), str(e)) for a, e in connections], lost=record.get("lost") is not False,
                stopped=str(record.get("stopped") or ""))
    entries = len(seen.programs) + len(seen.execs) + len(seen.refused) + len(seen.writes) + len(seen.connections)
    seen.lost = seen.lost or not seen.started or entries > 2 * (MAX_RECORDS if max_records is None else max_records)
    return seen
