"""The Landlock launcher: the fallback sandbox where bubblewrap cannot create namespaces.

Run as a script with the build's Python (standard library only, `-I -S`):

    python -I -S landlock_launcher.py [--ro PATH]... [--rw PATH]... [--hide PATH]... [--net]
                                      --cwd DIR -- COMMAND ARGS...

Landlock (Linux 5.13 and later) lets an unprivileged process give up access rights for itself and
its descendants, without namespaces. The launcher forks; the child drops every capability, sets
`no_new_privs`, restricts itself (reads below the `--ro` paths, reads and writes below the `--rw`
paths, nothing else; with Landlock ABI 4 or later no TCP bind or connect unless `--net`; with ABI 6
or later no abstract Unix sockets and no signals to processes outside the sandbox), and then starts
the command with the launcher's own environment. Reading another process's `/proc/<pid>/environ`
is refused by Landlock's ptrace rule. `--hide PATH` hides a path below a `--ro` folder (the folders on the
way to it may only be listed; everything beside that way may be read).

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
import os
import signal
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


class _Ruleset(ctypes.Structure):
    _fields_ = [("handled_access_fs", ctypes.c_uint64), ("handled_access_net", ctypes.c_uint64), ("scoped", ctypes.c_uint64)]


class _PathBeneath(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


_libc = None


def _c():
    global _libc
    if _libc is None:
        _libc = ctypes.CDLL(None, use_errno=True)
        _libc.syscall.restype = ctypes.c_long
    return _libc


def _syscall(*args) -> int:
    result = _c().syscall(*args)
    if result < 0:
        error = ctypes.get_errno()
        raise OSError(error, os.strerror(error))
    return result


def _prctl(option: int, value: int) -> int:
    return _c().prctl(ctypes.c_int(option), ctypes.c_ulong(value), ctypes.c_ulong(0), ctypes.c_ulong(0), ctypes.c_ulong(0))


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


def restrict(read: list[str], write: list[str], hide: list[str], network: bool) -> int:
    abi = abi_version()
    if abi < 1:
        raise OSError("Landlock is unavailable")
    handled = _fs_rights(abi)
    attr = _Ruleset(handled, 0, 0)
    size = 8
    if abi >= 4:
        size = 16
        if not network:
            attr.handled_access_net = NET_BIND_TCP | NET_CONNECT_TCP  # no port rules: all TCP refused
    if abi >= 6:
        size = 24
        attr.scoped = SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL
    ruleset = _syscall(ctypes.c_long(SYS_CREATE_RULESET), ctypes.byref(attr), ctypes.c_size_t(size), ctypes.c_uint32(0))

    def allow(path: str, access: int) -> None:
        try:
            fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
        except OSError:
            return
        try:
            if not os.path.isdir(path):
                access &= FILE_RIGHTS
            rule = _PathBeneath(access & handled, fd)
            _syscall(ctypes.c_long(SYS_ADD_RULE), ctypes.c_int(ruleset), ctypes.c_int(RULE_PATH_BENEATH), ctypes.byref(rule), ctypes.c_uint32(0))
        finally:
            os.close(fd)

    def allow_except(path: str) -> None:
        """Read access below `path`, except below the hidden paths inside it: the folders on the way
        to a hidden path may only be listed, everything beside that way may be read."""
        inside = [h for h in hide if h.startswith(path.rstrip("/") + "/")]
        if not inside or not os.path.isdir(path) or os.path.islink(path):
            allow(path, READ)
            return
        allow(path, READ_DIR)
        for name in os.listdir(path):
            entry = os.path.join(path, name)
            if entry not in hide:
                allow_except(entry)

    for path in read:
        if path not in hide:
            allow_except(path)
    for path in write:
        allow(path, handled)
    if _prctl(PR_SET_NO_NEW_PRIVS, 1) != 0:
        raise OSError("cannot set no_new_privs")
    _syscall(ctypes.c_long(SYS_RESTRICT_SELF), ctypes.c_int(ruleset), ctypes.c_uint32(0))
    os.close(ruleset)
    return abi


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
        left = _descendants(me)
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


# seccomp: (architecture in seccomp_data, [system call numbers of setsid and setpgid]); x32 calls
# come with the x86_64 architecture and bit 30 set.
_X32 = 0x40000000
_GROUP_CALLS = (
    (0xC000003E, (112, 109, _X32 | 112, _X32 | 109)),  # x86_64 (and x32)
    (0x40000003, (66, 57)),  # i386
    (0xC00000B7, (157, 154)),  # aarch64
    (0x40000028, (66, 57)),  # arm
)
_SECCOMP_RET_ALLOW, _SECCOMP_RET_ERRNO = 0x7FFF0000, 0x00050000
PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 22, 2


class _SockFilter(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint16), ("jt", ctypes.c_uint8), ("jf", ctypes.c_uint8), ("k", ctypes.c_uint32)]


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_uint16), ("filter", ctypes.POINTER(_SockFilter))]


def _group_filter() -> list[tuple[int, int, int, int]]:
    """Classic BPF: for each known architecture, setsid and setpgid return 0 without running."""
    load_word, jump_equal, ret = 0x20, 0x15, 0x06
    blocks: list[list[tuple[int, int, int, int]]] = []
    for _arch, numbers in _GROUP_CALLS:
        block = [(load_word, 0, 0, 0)]  # seccomp_data.nr
        for i, number in enumerate(numbers):
            block.append((jump_equal, len(numbers) - i, 0, number))  # to the "return 0" at the end
        block += [(ret, 0, 0, _SECCOMP_RET_ALLOW), (ret, 0, 0, _SECCOMP_RET_ERRNO | 0)]
        blocks.append(block)
    head = [(load_word, 0, 0, 4)]  # seccomp_data.arch
    dispatch_length = len(_GROUP_CALLS) + 1  # one jump per architecture, then "allow"
    offset = 0
    for i, (arch, _numbers) in enumerate(_GROUP_CALLS):
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


def main(args: list[str]) -> int:
    read, write, hide, cwd, network = [], [], [], None, False
    i = 0
    while i < len(args) and args[i] != "--":
        option = args[i]
        if option == "--net":
            network, i = True, i + 1
            continue
        if option not in ("--ro", "--rw", "--hide", "--cwd") or i + 1 >= len(args):
            print(f"landlock launcher: bad option {option!r}", file=sys.stderr)
            return 2
        value = args[i + 1]
        i += 2
        if option == "--ro":
            read.append(value)
        elif option == "--rw":
            write.append(value)
        elif option == "--hide":
            hide.append(value)
        else:
            cwd = value
    command = args[i + 1:]
    if not command:
        print("landlock launcher: no command", file=sys.stderr)
        return 2
    if abi_version() < 1:
        print("landlock launcher: Landlock is unavailable", file=sys.stderr)
        return 125
    _prctl(PR_SET_CHILD_SUBREAPER, 1)
    _end_with_parent()  # before the fork: the child resets its handlers when it execs the command
    child = os.fork()
    if child == 0:
        try:
            _prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
            _drop_capabilities()
            restrict(read, write, hide, network)
            _stay_in_the_group()
            if cwd:
                os.chdir(cwd)
            os.execvp(command[0], command)
        except BaseException as exc:  # noqa: BLE001 - anything: report it and exit like exec failed
            print(f"landlock launcher: {command[0]}: {exc}", file=sys.stderr)
            os._exit(127 if isinstance(exc, FileNotFoundError) else 126)
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


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
