"""The seccomp filter bubblewrap applies to a run traced by our own tracer (ptracer.py).

A classic BPF program (`struct sock_filter` records, what bubblewrap's `--seccomp FD` reads), applied
by bubblewrap right before it execs the command, so none of its own setup is filtered. It returns
`SECCOMP_RET_TRACE` (a stop for the tracer) only for what `trace.parse` records:

- `execve`, `execveat`;
- `open` and `openat` **with a write flag** (the filter tests the flags argument: read-only opens,
  most of a run's calls, never stop), and `creat`;
- the path writes of `trace.PATH_WRITES` and those strace 6.1 cannot name (`ptracer.NEWER`:
  `fchmodat2`, `setxattrat`, `removexattrat`, `file_setattr`), the descriptor writes of
  `trace.FD_WRITES` (`fchmod`, `fchown`, `fsetxattr`, `fremovexattr`) and the `ioctl` requests that
  change a file's flags (`ptracer.IOCTL_WRITES`: the filter tests the request);
- `connect`, `bind`, `sendmsg`, `sendmmsg`, and `sendto` with an address;
- `socket(AF_VSOCK)`, with `TAG_VSOCK`: the tracer refuses it (EACCES) and keeps it as a connection
  the sandbox refused. A VM socket reaches the machine's host, and no network namespace holds it; a
  refusal by the filter itself (`SECCOMP_RET_ERRNO`) would outrank the stop, and no one would know.

It refuses what would hide a call from the tracer: `io_uring_setup` and `clone3` (ENOSYS: the C
library falls back to `clone`), `openat2` (ENOSYS, as before Linux 5.6: its flags are in memory,
where another thread can change them once the tracer has read them; the C library does not use it), `clone` with `CLONE_UNTRACED` and a new seccomp filter (EPERM:
`seccomp()` in every form, `prctl(PR_SET_SECCOMP)`; a `SECCOMP_RET_USER_NOTIF` filter outranks
`TRACE`, and its supervisor could let a call run unseen). A call of another architecture than
x86-64 (`int 0x80`) or an x32 call number stops with `TAG_FOREIGN`, and the tracer ends the process
with a reason (ptracer.FOREIGN): its calls have other numbers and registers.

Which numbers are x32's: the kernel (seccomp too) reads the number as a 32-bit int; it runs one
below its x86-64 table's end as that call, and one whose value less `__X32_SYSCALL_BIT` (0x40000000)
is below x32's table's end as an x32 call (where the kernel has x32); any other number it answers
with ENOSYS and runs nothing. x32's table ends at 548 (512-547 are its own calls; the rest share
x86-64's numbers), so `X32_SPAN` numbers from the bit up, with room for more, are x32 calls; every
number above them, and every negative one (`syscall(-1)`, which programs probe with), is refused
with ENOSYS as the kernel would answer it, not taken for x32 (which would end the process).
"""

from __future__ import annotations

import errno
import struct

from . import ptracer, trace

AUDIT_ARCH_X86_64 = 0xC000003E
X32_BIT = 0x40000000
X32_SPAN = 1024  # numbers from X32_BIT up that a kernel with x32 may run as x32 calls (its table ends at 548)
CLONE_UNTRACED = 0x00800000
PR_SET_SECCOMP = 22
RET_ERRNO, RET_TRACE, RET_ALLOW = 0x00050000, 0x7FF00000, 0x7FFF0000
LD_ABS, JEQ, JGE, JSET, RET = 0x20, 0x15, 0x35, 0x45, 0x06  # BPF_LD|W|ABS, BPF_JMP|JEQ|K, ..., BPF_RET|K

ALWAYS = ("execve", "execveat", "creat", "connect", "bind", "sendmsg", "sendmmsg",
          *sorted(ptracer.PATHS), *ptracer.FD_WRITES)
# The calls whose arguments decide (each to its own label below), and the refused ones.
DECIDED = (("open", "open"), ("openat", "openat"), ("sendto", "sendto"), ("clone", "clone"), ("prctl", "prctl"),
           ("ioctl", "ioctl"), ("clone3", "enosys"), ("io_uring_setup", "enosys"), ("openat2", "enosys"),
           ("seccomp", "eperm"), ("socket", "socket"))

assert set(ptracer.PATHS) == trace.PATH_WRITES | set(ptracer.NEWER)
assert set(ptracer.FD_WRITES) == trace.FD_WRITES


def _arg(index: int, high: bool = False) -> int:
    """Offset of a seccomp_data argument's low (or high) 32 bits (little-endian)."""
    return 16 + 8 * index + (4 if high else 0)


class _Code:
    """Instructions with labels, joined into jumps at the end."""

    def __init__(self) -> None:
        self.code: list[tuple[str | None, int, str | None, str | None, int]] = []

    def op(self, kind: int, k: int, yes: str | None = None, no: str | None = None, label: str | None = None) -> None:
        self.code.append((label, kind, yes, no, k))

    def assemble(self) -> bytes:
        where = {label: i for i, (label, *_rest) in enumerate(self.code) if label}
        out = b""
        for i, (_label, kind, yes, no, k) in enumerate(self.code):
            jt = where[yes] - i - 1 if yes else 0
            jf = where[no] - i - 1 if no else 0
            if not (0 <= jt < 256 and 0 <= jf < 256):
                raise ValueError("a jump too far for classic BPF")
            out += struct.pack("=HBBI", kind, jt, jf, k)
        return out


def program() -> bytes:
    """The filter, as `struct sock_filter` records."""
    c = _Code()
    c.op(LD_ABS, 4)  # arch
    c.op(JEQ, AUDIT_ARCH_X86_64, None, "foreign")
    c.op(LD_ABS, 0)  # nr, compared unsigned: a negative number is above every other
    c.op(JGE, X32_BIT, None, "x86-64")
    c.op(JGE, X32_BIT + X32_SPAN, "enosys", "foreign")  # no call of any table, or an x32 call
    for index, name in enumerate(ALWAYS):
        c.op(JEQ, ptracer.NR[name], "trace", None, label="x86-64" if index == 0 else None)
    for name, target in DECIDED:
        c.op(JEQ, ptracer.NR[name], target, None)
    c.op(RET, RET_ALLOW)
    c.op(LD_ABS, _arg(1), label="open")
    c.op(JSET, ptracer.WRITE_MASK, "trace", "allow")
    c.op(LD_ABS, _arg(2), label="openat")
    c.op(JSET, ptracer.WRITE_MASK, "trace", "allow")
    c.op(LD_ABS, _arg(4), label="sendto")  # the address pointer: NULL is a send on a connected socket
    c.op(JEQ, 0, None, "trace")
    c.op(LD_ABS, _arg(4, high=True))
    c.op(JEQ, 0, "allow", "trace")
    c.op(LD_ABS, _arg(0), label="clone")
    c.op(JSET, CLONE_UNTRACED, "eperm", "allow")
    c.op(LD_ABS, _arg(0), label="prctl")
    c.op(JEQ, PR_SET_SECCOMP, "eperm", "allow")
    c.op(LD_ABS, _arg(0), label="socket")  # the family (an int)
    c.op(JEQ, ptracer.AF_VSOCK, "vsock", "allow")
    c.op(LD_ABS, _arg(1), label="ioctl")  # the request (an unsigned int)
    for request in ptracer.IOCTL_WRITES:
        c.op(JEQ, request, "trace", None)
    c.op(RET, RET_ALLOW)
    c.op(RET, RET_ALLOW, label="allow")
    c.op(RET, RET_TRACE, label="trace")
    c.op(RET, RET_ERRNO | errno.ENOSYS, label="enosys")
    c.op(RET, RET_ERRNO | errno.EPERM, label="eperm")
    c.op(RET, RET_TRACE | ptracer.TAG_FOREIGN, label="foreign")
    c.op(RET, RET_TRACE | ptracer.TAG_VSOCK, label="vsock")
    return c.assemble()
