"""The Landlock launcher: the fallback sandbox where bubblewrap cannot create namespaces.

Run as a script with the build's Python (standard library only, `-I -S`):

    python -I -S landlock_launcher.py [--ro PATH]... [--rw PATH]... [--hide PATH]... [--net]
                                      [--exec FILE]... [--only-exec] [--refusals FILE]
                                      --cwd DIR -- COMMAND ARGS...

Landlock (Linux 5.13 and later) lets an unprivileged process give up access rights for itself and
its descendants, without namespaces. The launcher forks; the child drops every capability, sets
`no_new_privs`, restricts itself (reads below the `--ro` paths, reads and writes below the `--rw`
paths, nothing else; with Landlock ABI 4 or later no TCP bind or connect unless `--net`; with ABI 6
or later no abstract Unix sockets and no signals to processes outside the sandbox), installs a
seccomp filter for what Landlock does not cover (below), and then starts the command with the
launcher's own environment. Reading another process's `/proc/<pid>/environ` is refused by
Landlock's ptrace rule. `--hide PATH` hides a path below a `--ro` folder (the folders on the way
to it may only be listed; everything beside that way may be read).

Landlock governs TCP only, and not Unix sockets that have a path: without a filter, a tool could
send UDP (`sendto`, `sendmmsg`), ICMP or SCTP anywhere and talk to any Unix socket on the host (a
Docker socket, an ssh-agent). The filter refuses (EACCES) `socket()` for Unix sockets always (the
host's sockets are not the tool's; `socketpair` still works) and, without `--net`, for every
family except netlink and plain TCP (TCP only where Landlock refuses its connect and bind: ABI 4
or later; else no IP socket at all), and TCP Fast Open sends (which connect without `connect`).
io_uring is refused (ENOSYS): it can create sockets without the `socket` system call. System
calls of another architecture's ABI (x32, i386) are refused too, so the numbers cannot be dodged.
A refused call never runs, and strace (which stops only the calls the filters let through) does
not see it: `--refusals` is how the build learns of it.

`--refusals FILE`: the filter hands each refused socket call to the launcher (seccomp user
notification), which answers EACCES and writes one line per call to FILE (`socket:udp`,
`socket:unix`, ...), where the build reads it: strace cannot see a call seccomp refuses.

`--exec PATH` (repeatable) limits which files may be executed at all (Landlock's execute right):
only those listed, by the tool and everything it starts, in place or in a child. Given alone (no
`--ro`/`--rw`), only execution is restricted, for use inside bubblewrap, which already limits
what is seen and written (`--only-exec`: no socket filter either, nor the process-group filter
below; bubblewrap's namespaces do that, and our tracer's filter refuses every new seccomp filter).

The launcher is a child subreaper: processes that leave the command's session (`setsid`, daemons)
are re-parented to it, and when the command exits it kills every descendant still alive before
exiting with the command's status. What it cannot do, without a PID namespace: a descendant
survives if the launcher itself is killed with SIGKILL (at a timeout, the build kills the process
group, which a process could leave, were it not for the seccomp filter below). When the launcher's parent dies (the build, or
strace around the launcher), the kernel sends it SIGTERM; on SIGTERM, SIGINT or SIGHUP it kills
every descendant and exits (`_end_with_parent`). The launcher leads a process group of its own, and
no descendant can leave it: `setsid` and `setpgid` do nothing (a seccomp filter makes them return 0
unexecuted), so one SIGKILL to the group (the build's at a timeout, or the launcher's when strace
around it is killed) ends daemons too. Exit status 125: Landlock is unavailable.
"""

from __future__ import annotations

import ctypes
import io
import os
import signal
import socket
import sys

SYS_CREATE_RULESET, SYS_ADD_RULE, SYS_RESTRICT_SELF = 444, 445, 446  # the same on x86_64 and arm64
CREATE_RULESET_VERSION = 1
RULE_PATH_BENEATH = 1
PR_SET_PDEATHSIG, PR_CAPBSET_DROP, PR_SET_NO_NEW_PRIVS, PR_SET_CHILD_SUBREAPER, PR_CAP_AMBIENT = 1, 24, 38, 36, 47
EXECUTE, WRITE_FILE, READ_FILE, READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
REFER, TRUNCATE, IOCTL_DEV = 1 << 13, 1 << 14, 1 << 15
NET_BIND_TCP, NET_CONNECT_TCP = 1 << 0, 1 << 1
SCOPE_ABSTRACT_UNIX_SOCKET, SCOPE_SIGNAL = 1 << 0, 1 << 1
READ = EXECUTE | READ_FILE | READ_DIR
FILE_RIGHTS = EXECUTE | WRITE_FILE | READ_FILE | TRUNCATE | IOCTL_DEV

PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 22, 2
# (audit arch, socket, sendto, sendmsg, sendmmsg) per machine; io_uring is 425-427 on both.
_SYSCALLS = {
    "x86_64": (0xC000003E, 41, 44, 46, 307),
    "aarch64": (0xC00000B7, 198, 206, 211, 269),
}
IO_URING = (425, 426, 427)
X32_BIT = 0x40000000
AF_UNIX, AF_INET, AF_INET6, AF_NETLINK = 1, 2, 10, 16
SOCK_STREAM, SOCK_TYPE_MASK, IPPROTO_TCP, MSG_FASTOPEN = 1, 0xF, 6, 0x20000000
EACCES, ENOSYS = 13, 38


class _Ruleset(ctypes.Structure):
    _fields_ = [("handled_access_fs", ctypes.c_uint64), ("handled_access_net", ctypes.c_uint64), ("scoped", ctypes.c_uint64)]


class _PathBeneath(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


_libc: ctypes.CDLL | None = None


def _c() -> ctypes.CDLL:
    global _libc
    if _libc is None:
        _libc = ctypes.CDLL(None, use_errno=True)
        _libc.syscall.restype = ctypes.c_long
    return _libc


def _syscall(*args: object) -> int:
    result = int(_c().syscall(*args))
    if result < 0:
        error = ctypes.get_errno()
        raise OSError(error, os.strerror(error))
    return result


def _prctl(option: int, value: int) -> int:
    return int(_c().prctl(ctypes.c_int(option), ctypes.c_ulong(value), ctypes.c_ulong(0), ctypes.c_ulong(0), ctypes.c_ulong(0)))


def abi_version() -> int:
    """The Landlock ABI version; 0 when Landlock is not there (not built, or not enabled)."""
    if not sys.platform.startswith("linux"):
        return 0
    try:
        result = _c().syscall(ctypes.c_long(SYS_CREATE_RULESET), None, ctypes.c_size_t(0), ctypes.c_uint32(CREATE_RULESET_VERSION))
    except (OSError, AttributeError):
        return 0
    return int(result) if result > 0 else 0


def _fs_rights(abi: int) -> int:
    rights = (1 << 13) - 1
    if abi >= 2:
        rights |= REFER
    if abi >= 3:
        rights |= TRUNCATE
    if abi >= 5:
        rights |= IOCTL_DEV
    return rights


def _drop_capabilities() -> None:
    """Run the command without capabilities even when the build is root: with CAP_SYS_PTRACE the
    kernel would let `/proc/<pid>/environ` be read before Landlock is asked."""
    try:
        with open("/proc/sys/kernel/cap_last_cap") as stream:
            last = int(stream.read())
    except (OSError, ValueError):
        last = 63
    for cap in range(last + 1):
        if _prctl(PR_CAPBSET_DROP, cap) != 0:
            break  # not privileged: nothing to drop
    _prctl(PR_CAP_AMBIENT, 4)  # PR_CAP_AMBIENT_CLEAR_ALL
    if os.getuid() == 0 or os.geteuid() == 0:
        # Clear the effective, permitted and inheritable sets too (capset with version 3).
        header = (ctypes.c_uint32 * 2)(0x20080522, 0)
        data = (ctypes.c_uint32 * 6)()
        _c().capset(header, data)


def restrict(read: list[str], write: list[str], hide: list[str], network: bool, execs: list[str] | None = None,
             only_exec: bool = False) -> int:
    """Restrict this process and its future children. `execs`: the only files that may be executed
    (None: anything readable); `only_exec`: restrict execution and nothing else."""
    abi = abi_version()
    if abi < 1:
        raise OSError("Landlock is unavailable")
    handled = EXECUTE if only_exec else _fs_rights(abi)
    attr = _Ruleset(handled, 0, 0)
    size = 8
    if abi >= 4 and not only_exec:
        size = 16
        if not network:
            attr.handled_access_net = NET_BIND_TCP | NET_CONNECT_TCP  # no port rules: all TCP refused
    if abi >= 6 and not only_exec:
        size = 24
        attr.scoped = SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL
    ruleset = _syscall(ctypes.c_long(SYS_CREATE_RULESET), ctypes.byref(attr), ctypes.c_size_t(size), ctypes.c_uint32(0))
    # With a list of programs, nothing else may be executed: not what is readable, nor what is written.
    reading = READ if execs is None else READ_FILE | READ_DIR
    writing = handled if execs is None else handled & ~EXECUTE

    def allow(path: str, access: int) -> None:
        try:
            fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
        except OSError:
            return
        try:
            if not os.path.isdir(path):
                access &= FILE_RIGHTS
            if not access & handled:
                return
            rule = _PathBeneath(access & handled, fd)
            _syscall(ctypes.c_long(SYS_ADD_RULE), ctypes.c_int(ruleset), ctypes.c_int(RULE_PATH_BENEATH), ctypes.byref(rule), ctypes.c_uint32(0))
        finally:
            os.close(fd)

    def allow_except(path: str) -> None:
        """Read access below `path`, except below the hidden paths inside it: the folders on the way
        to a hidden path may only be listed, everything beside that way may be read."""
        inside = [h for h in hide if h.startswith(path.rstrip("/") + "/")]
        if not inside or not os.path.isdir(path) or os.path.islink(path):
            allow(path, reading)
            return
        allow(path, READ_DIR)
        for name in os.listdir(path):
            entry = os.path.join(path, name)
            if entry not in hide:
                allow_except(entry)

    if not only_exec:
        for path in read:
            if path not in hide:
                allow_except(path)
        for path in write:
            allow(path, writing)
    for path in execs or []:
        if os.path.isfile(path):  # a file's rule: only that file, never a folder's contents
            allow(path, EXECUTE | (0 if only_exec else READ_FILE))
    if _prctl(PR_SET_NO_NEW_PRIVS, 1) != 0:
        raise OSError("cannot set no_new_privs")
    _syscall(ctypes.c_long(SYS_RESTRICT_SELF), ctypes.c_int(ruleset), ctypes.c_uint32(0))
    os.close(ruleset)
    return abi


class _Program:
    """A classic-BPF seccomp program, written with labels (jumps are resolved at the end)."""

    LD, JEQ, JGE, JSET, AND, RET = 0x20, 0x15, 0x35, 0x45, 0x54, 0x06

    def __init__(self) -> None:
        self.code: list[tuple[int, object, object, int]] = []
        self.labels: dict[str, int] = {}

    def op(self, code: int, k: int, jt: object = 0, jf: object = 0) -> None:
        self.code.append((code, jt, jf, k))

    def label(self, name: str) -> None:
        self.labels[name] = len(self.code)

    def load(self, offset: int) -> None:
        self.op(self.LD, offset)

    def ret(self, value: int) -> None:
        self.op(self.RET, value)

    def assemble(self) -> bytes:
        import struct

        out = b""
        for i, (code, jt, jf, k) in enumerate(self.code):
            jumps = [self.labels[j] - i - 1 if isinstance(j, str) else j for j in (jt, jf)]
            out += struct.pack("=HBBI", code, jumps[0], jumps[1], k)
        return out


ALLOW, NR, ARCH = 0x7FFF0000, 0, 4


def _errno(number: int) -> int:
    return 0x00050000 | number


def _arg(index: int) -> int:
    return 16 + 8 * index  # the low 32 bits of seccomp_data.args[index] (little endian)


USER_NOTIF = 0x7FC00000


def socket_filter(machine: str, network: bool, tcp_refused: bool, notify: bool = False) -> bytes:
    """The seccomp program described above, for `machine` (os.uname().machine). With `notify`, a
    refused socket call is handed to the launcher (which records it and answers EACCES) instead of
    failing in the kernel: a refused call is invisible to strace, and so it is still seen."""
    arch, socket_nr, sendto_nr, sendmsg_nr, sendmmsg_nr = _SYSCALLS[machine]
    p = _Program()
    p.load(ARCH)
    p.op(p.JEQ, arch, 1, 0)
    p.ret(_errno(ENOSYS))  # another architecture's system call numbers
    p.load(NR)
    if machine == "x86_64":
        p.op(p.JGE, X32_BIT, "nosys", 0)
    for number in IO_URING:
        p.op(p.JEQ, number, "nosys", 0)
    p.op(p.JEQ, socket_nr, "socket", 0)
    if not network:
        # sendto and sendmmsg have their flags third, sendmsg second.
        p.op(p.JEQ, sendto_nr, "flags3", 0)
        p.op(p.JEQ, sendmmsg_nr, "flags3", 0)
        p.op(p.JEQ, sendmsg_nr, "flags2", 0)
    p.ret(ALLOW)
    if not network:
        p.label("flags3")
        p.load(_arg(3))
        p.op(p.JSET, MSG_FASTOPEN, "refuse", "allow")
        p.label("flags2")
        p.load(_arg(2))
        p.op(p.JSET, MSG_FASTOPEN, "refuse", "allow")
    p.label("socket")
    p.load(_arg(0))
    p.op(p.JEQ, AF_UNIX, "refuse", 0)
    if network:
        p.ret(ALLOW)
    else:
        p.op(p.JEQ, AF_NETLINK, "allow", 0)
        if tcp_refused:
            p.op(p.JEQ, AF_INET, "ip", 0)
            p.op(p.JEQ, AF_INET6, "ip", "refuse")
            p.label("ip")
            p.load(_arg(1))
            p.op(p.AND, SOCK_TYPE_MASK)
            p.op(p.JEQ, SOCK_STREAM, 0, "refuse")
            p.load(_arg(2))
            p.op(p.JEQ, 0, "allow", 0)
            p.op(p.JEQ, IPPROTO_TCP, "allow", "refuse")
        else:
            p.ret(_errno(EACCES))
    p.label("refuse")
    p.ret(USER_NOTIF if notify else _errno(EACCES))
    p.label("allow")
    p.ret(ALLOW)
    p.label("nosys")
    p.ret(_errno(ENOSYS))
    return p.assemble()


class _Fprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


SYS_SECCOMP = {"x86_64": 317, "aarch64": 277}
SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER = 1, 1 << 3
NOTIF_RECV, NOTIF_SEND = 0xC0502100, 0xC0182101  # SECCOMP_IOCTL_NOTIF_RECV / _SEND
NOTIF_SIZE, RESPONSE_SIZE = 80, 24
MAX_RECORDED = 1000  # refused calls written to the record (the build reads at most this many)


def install_socket_filter(network: bool, tcp_refused: bool, notify: bool = False) -> int:
    """Install `socket_filter` on this process (no_new_privs must be set). With `notify`, the
    listener's file descriptor is returned (-1 when the kernel has no user notification: the
    filter then refuses in the kernel, unseen)."""
    machine = os.uname().machine
    if machine not in _SYSCALLS:
        raise OSError(f"no socket filter for this machine ({machine}): UDP and Unix sockets could not be refused")
    if notify:
        code = socket_filter(machine, network, tcp_refused, notify=True)
        buffer = ctypes.create_string_buffer(code, len(code))
        program = _Fprog(len(code) // 8, ctypes.cast(buffer, ctypes.c_void_p))
        listener = _c().syscall(ctypes.c_long(SYS_SECCOMP[machine]), ctypes.c_uint(SECCOMP_SET_MODE_FILTER),
                                ctypes.c_uint(SECCOMP_FILTER_FLAG_NEW_LISTENER), ctypes.byref(program))
        if listener >= 0:
            return int(listener)
    code = socket_filter(machine, network, tcp_refused)
    buffer = ctypes.create_string_buffer(code, len(code))
    program = _Fprog(len(code) // 8, ctypes.cast(buffer, ctypes.c_void_p))
    result = _c().prctl(ctypes.c_int(PR_SET_SECCOMP), ctypes.c_ulong(SECCOMP_MODE_FILTER),
                        ctypes.c_void_p(ctypes.addressof(program)), ctypes.c_ulong(0), ctypes.c_ulong(0))
    if result != 0:
        error = ctypes.get_errno()
        raise OSError(error, "cannot install the socket filter: " + os.strerror(error))
    return -1


def describe(number: int, args: tuple[int, ...]) -> str:
    """A refused call in the words of the trace's addresses: `socket:udp`, `socket:unix`, ..."""
    names = {v[1]: "socket" for v in _SYSCALLS.values()}
    if names.get(number) != "socket":
        return "send:tcp-fast-open"
    family, kind, protocol = args[0] & 0xFFFFFFFF, args[1] & SOCK_TYPE_MASK, args[2] & 0xFFFFFFFF
    if family == AF_UNIX:
        return "socket:unix"
    if family in (AF_INET, AF_INET6):
        ip = "ipv6-" if family == AF_INET6 else ""
        named = {(2, 17): "udp", (2, 0): "udp", (2, 1): "icmp", (2, 58): "icmp", (1, 132): "sctp", (1, 262): "mptcp", (3, 0): "raw"}
        return f"socket:{ip}{named.get((kind, protocol), f'type-{kind}-protocol-{protocol}')}"
    return f"socket:family-{family}"


def answer(listener: int, out: io.TextIOBase) -> None:
    """Answer every refused call with EACCES, writing one line per call (`describe`) to `out`."""
    import fcntl
    import struct

    written = 0
    with out:
        while True:
            notice = bytearray(NOTIF_SIZE)
            try:
                fcntl.ioctl(listener, NOTIF_RECV, notice, True)
            except InterruptedError:
                continue
            except OSError:
                return  # every process under the filter is gone
            ident, _pid, _flags, number, _arch, _ip = struct.unpack("=QIIiIQ", notice[:32])
            args = struct.unpack("=6Q", notice[32:80])
            if written < MAX_RECORDED:  # still answered past it, no longer written: the record stays small
                out.write(describe(number, args) + "\n")
                out.flush()
                written += 1
            try:
                fcntl.ioctl(listener, NOTIF_SEND, bytearray(struct.pack("=QqiI", ident, 0, -EACCES, 0)), True)
            except OSError:
                pass  # the caller died meanwhile


def _descendants(root: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as stream:
                parent = int(stream.read().rsplit(b")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        children.setdefault(parent, []).append(int(entry))
    found, todo = [], [root]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def _kill_descendants() -> None:
    me = os.getpid()
    for _ in range(50):
        try:
            left = _descendants(me)
        except OSError:
            return  # no /proc (bubblewrap's noproc variant): its PID namespace ends them instead
        if not left:
            return
        for pid in left:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        try:
            while os.waitpid(-1, os.WNOHANG)[0]:
                pass
        except ChildProcessError:
            pass


# seccomp: (architecture in seccomp_data, [system call numbers of setsid and setpgid], [that of
# seccomp]); x32 calls come with the x86_64 architecture and bit 30 set.
_X32 = 0x40000000
_GROUP_CALLS = (
    (0xC000003E, (112, 109, _X32 | 112, _X32 | 109), (317, _X32 | 317)),  # x86_64 (and x32)
    (0x40000003, (66, 57), (354,)),  # i386
    (0xC00000B7, (157, 154), (277,)),  # aarch64
    (0x40000028, (66, 57), (383,)),  # arm
)
_SECCOMP_RET_ALLOW, _SECCOMP_RET_ERRNO = 0x7FFF0000, 0x00050000
_EPERM = 1
PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 22, 2


class _SockFilter(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint16), ("jt", ctypes.c_uint8), ("jf", ctypes.c_uint8), ("k", ctypes.c_uint32)]


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_uint16), ("filter", ctypes.POINTER(_SockFilter))]


def _group_filter() -> list[tuple[int, int, int, int]]:
    """Classic BPF: for each known architecture, setsid and setpgid return 0 without running, and
    `seccomp()` fails with EPERM. The command's own filters could otherwise hand its calls to a
    supervisor of its own (SECCOMP_RET_USER_NOTIF outranks strace's RET_TRACE, so the trace would
    miss them: trace.wrap); only `seccomp()` makes such a listener, and this filter is the last the
    launcher installs (its own listener, made with `seccomp()`, comes before)."""
    load_word, jump_equal, ret = 0x20, 0x15, 0x06
    blocks: list[list[tuple[int, int, int, int]]] = []
    for _arch, numbers, refused in _GROUP_CALLS:
        block = [(load_word, 0, 0, 0)]  # seccomp_data.nr
        count = len(numbers) + len(refused)
        for i, number in enumerate(numbers):
            block.append((jump_equal, count - i, 0, number))  # to the "return 0"
        for i, number in enumerate(refused):
            block.append((jump_equal, len(refused) - i + 1, 0, number))  # to the "EPERM"
        block += [(ret, 0, 0, _SECCOMP_RET_ALLOW), (ret, 0, 0, _SECCOMP_RET_ERRNO | 0), (ret, 0, 0, _SECCOMP_RET_ERRNO | _EPERM)]
        blocks.append(block)
    head = [(load_word, 0, 0, 4)]  # seccomp_data.arch
    dispatch_length = len(_GROUP_CALLS) + 1  # one jump per architecture, then "allow"
    offset = 0
    for i, (arch, _numbers, _refused) in enumerate(_GROUP_CALLS):
        head.append((jump_equal, dispatch_length - 1 - i + offset, 0, arch))
        offset += len(blocks[i])
    head.append((ret, 0, 0, _SECCOMP_RET_ALLOW))  # an architecture not listed
    return head + [instruction for block in blocks for instruction in block]


def _stay_in_the_group() -> None:
    """Keep the command and everything it starts in the launcher's process group (needs
    `no_new_privs`, set by `restrict`). Without a PID namespace this is what lets one signal to the
    group end them all."""
    program = _group_filter()
    array = (_SockFilter * len(program))(*[_SockFilter(*instruction) for instruction in program])
    fprog = _SockFprog(len(program), array)
    if _c().prctl(ctypes.c_int(PR_SET_SECCOMP), ctypes.c_ulong(SECCOMP_MODE_FILTER), ctypes.byref(fprog),
                  ctypes.c_ulong(0), ctypes.c_ulong(0)) != 0:
        error = ctypes.get_errno()
        raise OSError(error, f"seccomp: {os.strerror(error)}")


def _end_with_parent() -> None:
    """SIGTERM when the parent dies (replacing the build's SIGKILL, which would leave the
    descendants that left the command's session), and on SIGTERM, SIGINT or SIGHUP the launcher's
    whole process group is killed, itself included: nobody else would stop them. A parent that
    died before this point sent the SIGKILL still in force, so there is no gap.

    The launcher leads a process group of its own (under strace it would share strace's, or the
    build's while the build probes the sandbox, and the kill must reach nobody outside the run),
    and every descendant stays in it (`_stay_in_the_group`), so one kill(0) ends them all. Reading
    /proc is no way to find them: once strace is gone, the launcher's traced calls, `openat`
    included, fail with ENOSYS."""
    try:
        os.setpgid(0, 0)
    except OSError:
        pass  # a session leader (started by the build directly) leads its group already

    def end(number: int, _frame: object) -> None:
        os.kill(0, signal.SIGKILL)  # the whole group, the launcher included
        os._exit(128 + number)

    for number in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(number, end)
    _prctl(PR_SET_PDEATHSIG, signal.SIGTERM)


class _Options:
    """The launcher's command line (see `main`)."""

    def __init__(self) -> None:
        self.read: list[str] = []
        self.write: list[str] = []
        self.hide: list[str] = []
        self.cwd: str | None = None
        self.network = False
        self.execs: list[str] | None = None
        self.record = ""
        self.only_exec = False
        self.command: list[str] = []
        self.env: dict[bytes, bytes] = _given_environment()


def _given_environment() -> dict[bytes, bytes]:
    """The environment this process was started with, as the kernel keeps it: Python changes its
    own as it starts (in the C locale it sets LC_CTYPE=C.UTF-8, PEP 538, which -I does not turn
    off), and the command must get exactly the launcher's. Read before Landlock restricts reads."""
    try:
        with open("/proc/self/environ", "rb") as stream:
            block = stream.read()
    except OSError:
        return dict(os.environb)
    return dict(item.split(b"=", 1) for item in block.split(b"\0") if b"=" in item)


def _parse(args: list[str]) -> _Options | str:
    """The options, or the error message for a bad command line."""
    opts = _Options()
    i = 0
    while i < len(args) and args[i] != "--":
        option = args[i]
        if option in ("--net", "--only-exec"):
            opts.network = opts.network or option == "--net"
            opts.only_exec = opts.only_exec or option == "--only-exec"
            i += 1
            continue
        if option not in ("--ro", "--rw", "--hide", "--cwd", "--exec", "--refusals") or i + 1 >= len(args):
            return f"landlock launcher: bad option {option!r}"
        value = args[i + 1]
        i += 2
        if option in ("--ro", "--rw", "--hide"):
            {"--ro": opts.read, "--rw": opts.write, "--hide": opts.hide}[option].append(value)
        elif option == "--exec":
            opts.execs = [*(opts.execs or []), value]
        elif option == "--refusals":
            opts.record = value
        else:
            opts.cwd = value
    opts.command = args[i + 1:]
    return opts if opts.command else "landlock launcher: no command"


def _child(opts: _Options, parent_end: socket.socket | None, child_end: socket.socket | None) -> None:
    """In the forked child: restrict, hand the socket filter's listener over, exec the command."""
    command = opts.command
    try:
        _prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
        _drop_capabilities()
        abi = restrict(opts.read, opts.write, opts.hide, opts.network, opts.execs, opts.only_exec)
        if not opts.only_exec:
            listener = install_socket_filter(opts.network, tcp_refused=abi >= 4, notify=child_end is not None)
            if child_end is not None and parent_end is not None:
                # The listener goes to the launcher, and never stays with the tool (which
                # could answer its own refusals).
                socket.send_fds(child_end, [b"L"], [listener] if listener >= 0 else [])
                if listener >= 0:
                    os.close(listener)
                child_end.close()
                parent_end.close()
        if not opts.only_exec:  # inside bubblewrap its PID namespace holds them, and the tracer's filter refuses new filters
            _stay_in_the_group()
        if opts.cwd:
            os.chdir(opts.cwd)
        os.execvpe(command[0], command, opts.env)
    except BaseException as exc:  # noqa: BLE001 - anything: report it and exit like exec failed
        print(f"landlock launcher: {command[0]}: {exc}", file=sys.stderr)
        os._exit(127 if isinstance(exc, FileNotFoundError) else 126)


def _answer_refusals(parent_end: socket.socket, child_end: socket.socket, out: io.TextIOBase | None) -> None:
    """Receive the socket filter's listener from the child and answer its refusals on a thread."""
    import threading

    child_end.close()
    try:
        _, fds, _, _ = socket.recv_fds(parent_end, 1, 1)
    except OSError:
        fds = []
    parent_end.close()
    if fds and out is not None:
        threading.Thread(target=answer, args=(fds[0], out), daemon=True).start()


def _wait(child: int) -> int:
    status = 0
    while True:
        try:
            _, status = os.waitpid(child, 0)
            break
        except InterruptedError:
            continue
        except ChildProcessError:
            break
    _kill_descendants()
    code = os.waitstatus_to_exitcode(status)
    return code if code >= 0 else 128 - code  # killed by a signal: the shell's convention


def main(args: list[str]) -> int:
    opts = _parse(args)
    if isinstance(opts, str):
        print(opts, file=sys.stderr)
        return 2
    if abi_version() < 1:
        print("landlock launcher: Landlock is unavailable", file=sys.stderr)
        return 125
    _prctl(PR_SET_CHILD_SUBREAPER, 1)
    _end_with_parent()  # before the fork: the child resets its handlers when it execs the command
    parent_end, child_end = socket.socketpair() if opts.record else (None, None)
    # Opened before the tool starts: an open after it would be traced as the tool's.
    out = open(opts.record, "a", encoding="utf-8") if opts.record else None  # noqa: SIM115 - the answering thread closes it
    child = os.fork()
    if child == 0:
        _child(opts, parent_end, child_end)
    if parent_end is not None and child_end is not None:
        _answer_refusals(parent_end, child_end, out)
    return _wait(child)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
