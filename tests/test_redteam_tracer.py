"""Red team, our own tracer (sandbox/ptracer.py and its filter, seccomp.py): a tool that tries to act
where the tracer does not look, through `toolcatalog check` with real bubblewrap.

Every tool below declares no effects and does something only the trace can see (a file written in
the sandbox's own `/dev` or written and removed again, an attribute set, a socket bound); the run
must end observed with it (failed, caught) or not observed, never clean. The tools share one
workspace and one check (`attacks`), each test reads its own tool's run.

- A system call number with bits set above the low 32: the kernel runs the low 32 bits.
- A number no kernel runs (`syscall(-1)`, which programs probe with; past every table; above x32's):
  ENOSYS, as the kernel answers, and the tool goes on (the filter took every number from x32's first
  up for an x32 call, and the tracer ended the process). An x32 call itself still ends it.
- A file written and removed in a folder whose name is not UTF-8, named relative to the working
  folder and through a descriptor (paths the tracer reads from `/proc`, not from the tool's memory):
  the run is judged (caught), not turned into an internal error by names no JSON can hold; and a
  file left in `/tmp` under such a name (the before-and-after comparison, whichever tracer).
- A path pointer past 2**63 (no file offset of `/proc/PID/mem`): the tracer reads nothing there,
  and goes on watching (it raised, its thread ended and the run was killed, not observed).
- A VM socket (`AF_VSOCK`): bubblewrap's network namespace does not hold vsock, which reaches the
  machine's host. It was bound and listening, reported as a connection the sandbox did not contain;
  now the filter refuses the socket (EACCES, as the Landlock launcher refuses the families it does
  not allow), and the run says it tried (`socket:vsock`, refused by the sandbox).
- Attributes changed by the calls of Linux 6.13 and 6.17 (`setxattrat`, `removexattrat`,
  `file_setattr`) and by `ioctl(FS_IOC_SETFLAGS)` on a descriptor opened read-only: the file's
  contents, size and time stay as they were, so only the trace can see them.
- `openat2`, whose flags are in memory: another thread can change them between the stop, where the
  tracer reads them, and the kernel's read (done on the first try, with the caller at SCHED_IDLE on
  a CPU its other thread keeps busy until the stop is over: docs/security.md, "Racing the tracer").
  It is refused (ENOSYS, as before Linux 5.6; the C library does not use it).
- A program written into memory (`memfd_create`) and started with `execveat(fd, "", AT_EMPTY_PATH)`:
  named by its descriptor (`/memfd:NAME`), not "" (which told a reader nothing).
- Paths through the links of `/proc` (`/proc/self/fd/N/x`, `/dev/fd/N/x`, `/proc/PID/fd/N/x`,
  `/proc/thread-self/root/dev/x`, `/proc/self/fd/N/../M`, which reads as a descriptor's own link
  once `..` is taken lexically): the kernel follows the link to a folder, and so does our tracer;
  under either tracer they were "quiet" (as writes to the run's own pipes are) and hid every write.
"""

from __future__ import annotations

import dataclasses
import errno
import json
import sys
from pathlib import Path

import pytest

from manifests import PLATFORM, speccify_tool
from procs import no_leftovers  # noqa: F401 (an autouse fixture)
from sitebuild import run_check, tool_of
from toolcatalog import sandbox
from toolcatalog.model import Catalog, Run
from toolcatalog.observed import Connection, Observed
from toolcatalog.sandbox import ptracer, trace, tree

FACTS = sandbox.probe("auto")
pytestmark = [
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the sandbox is Linux only"),
    pytest.mark.skipif(not FACTS.own_tracer, reason=f"our tracer does not work here: {FACTS.untraced or FACTS.reason}"),
]

# A raw `syscall` the tool can call with any 64-bit number (no compiler needed): rdi is the number,
# rsi, rdx, rcx, r8, r9 and the stack the six arguments.
RAW_SYSCALL = r"""
import ctypes, json, mmap, os, sys
json.load(sys.stdin)
_code = mmap.mmap(-1, 4096, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
_code.write(bytes.fromhex("4889f8" "4889f7" "4889d6" "4889ca" "4d89c2" "4d89c8" "4c8b4c2408" "0f05" "c3"))
raw = ctypes.CFUNCTYPE(ctypes.c_long, *[ctypes.c_uint64] * 7)(ctypes.addressof(ctypes.c_char.from_buffer(_code)))
def call(nr, *args):
    args = [a if isinstance(a, int) else ctypes.cast(ctypes.c_char_p(a), ctypes.c_void_p).value for a in args]
    return raw(nr, *(args + [0] * (6 - len(args))))
"""

HIGH_NUMBER = RAW_SYSCALL + r"""
HIGH = 1 << 32  # the kernel runs the low 32 bits of the number; seccomp sees those too
fd = call(HIGH | 257, -100 & 0xFFFFFFFFFFFFFFFF, b"/dev/high-number", os.O_WRONLY | os.O_CREAT, 0o644)  # openat
made = call(HIGH | 83, b"/tmp/high-number-dir", 0o755)  # mkdir
removed = call(HIGH | 84, b"/tmp/high-number-dir")  # rmdir
print(json.dumps({"ok": fd >= 0 and made == 0 and removed == 0}), flush=True)
"""

NOT_UTF8 = """
import json, os, sys
json.load(sys.stdin)
os.mkdir(b"/tmp/d\\xff")
os.chdir(b"/tmp/d\\xff")
fd = os.open("x", os.O_WRONLY | os.O_CREAT)
os.fchmod(fd, 0o600)
os.close(fd)
os.unlink("x")
os.chdir("/")
os.rmdir(b"/tmp/d\\xff")
print(json.dumps({"ok": True}), flush=True)
"""

LEFT_NOT_UTF8 = """
import json, sys
json.load(sys.stdin)
open(b"/tmp/f\\xff", "w").write("x")
print(json.dumps({"ok": True}), flush=True)
"""

HIGH_POINTER = RAW_SYSCALL + r"""
failed = call(257, -100 & 0xFFFFFFFFFFFFFFFF, 1 << 63, os.O_WRONLY | os.O_CREAT, 0o644)  # openat: EFAULT
open("/tmp/after-high-pointer", "w").close()
os.unlink("/tmp/after-high-pointer")
print(json.dumps({"ok": failed == -14}), flush=True)
"""

INVALID_NUMBERS = r"""
import ctypes, json, sys
json.load(sys.stdin)
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
def errno_of(number):
    ctypes.set_errno(0)
    return ctypes.get_errno() if libc.syscall(ctypes.c_long(number)) == -1 else 0
# -1, past the x86-64 table, past x32's, the largest and the smallest int
found = {hex(n & 0xFFFFFFFF): errno_of(n) for n in (-1, 1000, 0x40000000 + 0x10000, 0x7FFFFFFF, -0x80000000)}
print(json.dumps(found), file=sys.stderr)
print(json.dumps({"ok": set(found.values()) == {38}}), flush=True)  # ENOSYS, each
"""

X32_CALL = r"""
import ctypes, json, sys
json.load(sys.stdin)
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
print(json.dumps({"pid": libc.syscall(ctypes.c_long(0x40000000 + 39))}), flush=True)  # getpid, as an x32 call
"""

VSOCK = r"""
import json, socket, sys
json.load(sys.stdin)
try:
    listener = socket.socket(40, socket.SOCK_STREAM)  # AF_VSOCK
    listener.bind((0xFFFFFFFF, 0xFFFFFFFF))  # VMADDR_CID_ANY, VMADDR_PORT_ANY: a port to be reached
    listener.listen(1)
    listener.close()
    print("vsock: listened", file=sys.stderr)
except OSError as exc:
    print(f"vsock: errno {exc.errno}", file=sys.stderr)
print(json.dumps({"ok": True}), flush=True)
"""

ATTRIBUTES = RAW_SYSCALL + r"""
import fcntl, struct
here = os.path.dirname(os.path.abspath(__file__))  # the writable copy of the tool's folder: one file each
value = ctypes.create_string_buffer(b"planted")
xattr_args = ctypes.create_string_buffer(struct.pack("=QII", ctypes.addressof(value), 7, 0), 16)
file_attr = ctypes.create_string_buffer(struct.pack("=6I", 0x40, 0, 0, 0, 0, 0), 24)  # FS_XFLAG_NOATIME
AT = -100 & 0xFFFFFFFFFFFFFFFF
done = {
    "setxattrat": call(463, AT, os.path.join(here, "TOOL.md").encode(), 0, b"user.planted", ctypes.addressof(xattr_args), 16),
    "removexattrat": call(466, AT, b"/etc/hosts", 0, b"user.x"),  # read-only: EROFS
    "file_setattr": call(469, AT, os.path.join(here, "linux.py").encode(), ctypes.addressof(file_attr), 24, 0),
}
fd = os.open(here, os.O_RDONLY)
try:
    fcntl.ioctl(fd, 0x40086602, struct.pack("l", 0x80))  # FS_IOC_SETFLAGS: FS_NOATIME_FL, on the folder
    done["ioctl"] = 0
except OSError as exc:
    done["ioctl"] = -exc.errno
print(json.dumps(done), file=sys.stderr)
print(json.dumps({"ok": True}), flush=True)
"""

OPENAT2 = RAW_SYSCALL + r"""
import struct
how = ctypes.create_string_buffer(struct.pack("=QQQ", os.O_WRONLY | os.O_CREAT, 0o644, 0), 24)
done = call(437, -100 & 0xFFFFFFFFFFFFFFFF, b"/dev/openat2", ctypes.addressof(how), 24)
print(json.dumps({"ok": done == -38 and not os.path.exists("/dev/openat2")}), flush=True)  # ENOSYS
"""

MEMFD_EXEC = RAW_SYSCALL + r"""
fd = os.memfd_create("tc-exec", 0)
with open("/usr/bin/true", "rb") as program:
    os.write(fd, program.read())
child = os.fork()
if child == 0:
    argv = (ctypes.c_char_p * 2)(b"true", None)
    call(322, fd, b"", ctypes.addressof(argv), 0, 0x1000)  # execveat(fd, "", argv, NULL, AT_EMPTY_PATH)
    os._exit(99)
print(json.dumps({"ok": os.waitpid(child, 0)[1] == 0}), flush=True)
"""

THROUGH_LINKS = r"""
import json, os, sys
json.load(sys.stdin)
here = os.path.dirname(os.path.abspath(__file__))
dev = os.open("/dev", os.O_RDONLY | os.O_DIRECTORY)
shm = os.open("/dev/shm", os.O_RDONLY | os.O_DIRECTORY)
tmp = os.open("/tmp", os.O_RDONLY | os.O_DIRECTORY)
mine = os.open(os.path.join(here, "TOOL.md"), os.O_RDONLY)
with open(f"/proc/self/fd/{dev}/through-fd", "w") as out:  # below a descriptor's link
    out.write("x")
os.mkdir(f"/dev/fd/{dev}/through-devfd")  # below /dev/fd's
open(f"/proc/self/fd/{shm}/../{shm}", "w").close()  # /dev/N, lexically /proc/self/fd/N
open("/proc/thread-self/root/dev/through-root", "w").close()  # below the thread's root
open(f"/proc/{os.getpid()}/fd/{tmp}/through-pid", "w").close()  # below another process's link, in /tmp
os.unlink(f"/proc/{os.getpid()}/fd/{tmp}/through-pid")
os.setxattr(f"/proc/self/fd/{mine}", "user.through", b"1")  # the link itself: the file it names
memory = os.memfd_create("through-memfd")
for quiet in ("/proc/self/fd/1", "/dev/stdout", "/dev/fd/2", f"/proc/self/fd/{memory}"):  # pipes, memory: no file
    os.close(os.open(quiet, os.O_WRONLY))
print(json.dumps({"dev": dev, "shm": shm, "tmp": tmp, "mine": mine}), file=sys.stderr)
print(json.dumps({"ok": True}), flush=True)
"""

TOOLS = {
    "high-number": HIGH_NUMBER,
    "invalid-numbers": INVALID_NUMBERS,
    "x32-call": X32_CALL,
    "through-links": THROUGH_LINKS,
    "memfd-exec": MEMFD_EXEC,
    "openat2": OPENAT2,
    "attributes": ATTRIBUTES,
    "vsock": VSOCK,
    "high-pointer": HIGH_POINTER,
    "not-utf8": NOT_UTF8,
    "left-not-utf8": LEFT_NOT_UTF8,
}


@pytest.fixture(scope="module")
def attacks(tmp_path_factory: pytest.TempPathFactory) -> Catalog:
    """Every tool of `TOOLS` checked once, in one workspace."""
    root = tmp_path_factory.mktemp("tracer-attacks")
    for name, code in TOOLS.items():
        speccify_tool(root, name, [("attack", {"a": 1}, {"ok": True})], files={f"{PLATFORM}.py": code},
                      effects="none; pure computation")
    catalog, _ = run_check(root)
    return catalog


def run_of(catalog: Catalog, name: str) -> Run:
    [run] = tool_of(catalog, name).examples[0].runs
    return run


def changes(run: Run) -> set[tuple[str, str]]:
    assert run.observed is not None and run.observed.traced, run
    return {(f.path, f.change) for f in run.observed.files}


def test_a_call_number_with_high_bits_is_decoded_as_the_kernel_runs_it(attacks: Catalog) -> None:
    run = run_of(attacks, "high-number")
    assert run.actual == {"ok": True}, run  # the calls worked
    assert {("/dev/high-number", "temporary"), ("/tmp/high-number-dir", "temporary")} <= changes(run), run
    assert run.status.value == "failed" and tool_of(attacks, "high-number").sandbox.caught_mutating  # type: ignore[union-attr]


def test_a_number_no_kernel_runs_gets_enosys_and_the_tool_goes_on(attacks: Catalog) -> None:
    run = run_of(attacks, "invalid-numbers")
    assert run.actual == {"ok": True} and run.status.value == "passed", run
    assert run.observed is not None and not run.observed.incomplete, run


def test_an_x32_call_still_ends_the_process_with_a_reason(attacks: Catalog) -> None:
    run = run_of(attacks, "x32-call")
    assert run.actual is None and run.status.value == "failed", run
    assert "32-bit (i386) or x32 system call" in run.stderr, run


@pytest.mark.parametrize("name, expected", [
    ("not-utf8", {("/tmp/d\ufffd", "temporary"), ("/tmp/d\ufffd/x", "temporary")}),
    ("left-not-utf8", {("/tmp/f\ufffd", "created")}),
])
def test_a_path_that_is_not_utf8_is_judged_not_an_internal_error(attacks: Catalog, name: str, expected: set[tuple[str, str]]) -> None:
    tool = tool_of(attacks, name)
    assert tool.status.value != "error", tool.status_detail
    run = run_of(attacks, name)
    assert changes(run) == expected, run
    assert run.status.value == "failed" and tool.sandbox is not None and tool.sandbox.caught_mutating


def test_a_pointer_past_the_files_offsets_is_unreadable_and_the_tracer_goes_on(attacks: Catalog) -> None:
    run = run_of(attacks, "high-pointer")
    assert run.actual == {"ok": True}, run
    assert changes(run) == {("/tmp/after-high-pointer", "temporary")}, run
    assert run.observed is not None and not run.observed.incomplete, run


def test_a_vm_socket_is_refused_and_reported(attacks: Catalog) -> None:
    """Refused whether or not this machine has VM sockets: the filter answers before the kernel."""
    run = run_of(attacks, "vsock")
    assert f"vsock: errno {errno.EACCES}" in run.stderr, run
    assert run.observed is not None and not run.observed.incomplete, run
    assert [(c.address, c.contained) for c in run.observed.connections] == [("socket:vsock", True)], run
    tool = tool_of(attacks, "vsock")
    assert run.status.value == "failed" and tool.sandbox is not None and not tool.sandbox.verified_no_effects
    assert tool.sandbox.undeclared == ["tried to open a vsock socket (no network was declared: refused by the sandbox)"]


def test_strace_names_a_vm_socket_as_ours_does(tmp_path: Path) -> None:
    log = tmp_path / "trace.log"
    log.write_text('1 execve("/bin/tool", ["tool"], 0x7ffd /* 1 var */) = 0\n'
                   '1 bind(3, {sa_family=AF_VSOCK, svm_cid=VMADDR_CID_ANY, svm_port=0xb26e, svm_flags=0}, 16) = 0\n'
                   '1 connect(3, {sa_family=AF_VSOCK, svm_cid=2, svm_port=9999, svm_flags=0}, 16) = -1 ECONNRESET (Connection reset by peer)\n')
    seen = trace.parse(log, launcher_execs=0, cwd="/")
    assert seen.connections == [("vsock:4294967295:45678", ""), ("vsock:2:9999", "ECONNRESET")]


def test_attributes_changed_by_the_newer_calls_and_by_ioctl_are_seen(attacks: Catalog) -> None:
    run = run_of(attacks, "attributes")
    done = json.loads(run.stderr.strip().splitlines()[-1])
    folder = ".agent/tools/attributes"
    changed = {"setxattrat": (f"{folder}/TOOL.md", "temporary"), "file_setattr": (f"{folder}/linux.py", "temporary"),
               "ioctl": (folder, "temporary"), "removexattrat": ("/etc/hosts", "blocked")}
    expected = {changed[name] for name, result in done.items() if result in (0, -errno.EROFS)}
    if not expected:
        pytest.skip(f"none of these calls works here: {done}")
    assert changes(run) == expected, (done, run)
    assert run.status.value == "failed", run


def test_openat2_whose_flags_another_thread_can_change_is_refused(attacks: Catalog) -> None:
    run = run_of(attacks, "openat2")
    assert run.actual == {"ok": True}, run
    assert run.observed is not None and not run.observed.incomplete and not run.observed.files, run


def test_a_write_through_the_links_of_proc_names_the_file_the_kernel_wrote(attacks: Catalog) -> None:
    run = run_of(attacks, "through-links")
    assert run.actual == {"ok": True}, run
    fds = json.loads(run.stderr.strip().splitlines()[-1])
    assert changes(run) == {("/dev/through-fd", "temporary"), ("/dev/through-devfd", "temporary"), (f"/dev/{fds['shm']}", "temporary"),
                            ("/dev/through-root", "temporary"), ("/tmp/through-pid", "temporary"),
                            (".agent/tools/through-links/TOOL.md", "temporary")}, run
    assert run.observed is not None and not run.observed.incomplete and run.status.value == "failed", run


def test_under_strace_a_write_below_a_link_of_proc_is_reported_as_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """strace's log cannot follow the links: such a path is kept as the tool wrote it (never
    normalized into a quiet one) and reported. A change through a descriptor's own link to a file
    (here setxattr on /proc/self/fd/N) stays unseen under strace: only ours reads the link."""
    if not FACTS.traced or FACTS.tracer is None:
        pytest.skip(f"strace does not work here: {FACTS.untraced}")
    real = sandbox.probe
    monkeypatch.setattr(sandbox, "probe", lambda mode: dataclasses.replace(real(mode), ptrace=False))
    speccify_tool(tmp_path, "through-links", [("attack", {"a": 1}, {"ok": True})], files={f"{PLATFORM}.py": THROUGH_LINKS},
                  effects="none; pure computation")
    catalog, _ = run_check(tmp_path)
    run = run_of(catalog, "through-links")
    fds = json.loads(run.stderr.strip().splitlines()[-1])
    paths = {p for p, _change in changes(run)}
    assert paths >= {f"/proc/self/fd/{fds['dev']}/through-fd", f"/dev/fd/{fds['dev']}/through-devfd",
                     f"/proc/self/fd/{fds['shm']}/../{fds['shm']}", "/proc/thread-self/root/dev/through-root"}, run
    assert run.status.value == "failed" and not tool_of(catalog, "through-links").sandbox.verified_no_effects  # type: ignore[union-attr]


def test_a_program_started_from_memory_is_named_by_its_descriptor(attacks: Catalog) -> None:
    run = run_of(attacks, "memfd-exec")
    assert run.actual == {"ok": True}, run
    assert run.observed is not None and not run.observed.incomplete, run
    assert run.observed.spawned == ["/memfd:tc-exec"], run


def test_what_the_tracer_keeps_is_bounded_in_bytes_not_only_in_entries() -> None:
    """Each failed rename of two 4 KB paths kept 8 KB in the build's helper process, outside the
    run's memory cap: a million of them (the entry bound) were gigabytes there, and again in the
    record file and in the build that reads it. Past `MAX_RECORD_BYTES` the run is not observed."""
    tracer = ptracer.Tracer(0, trace.MAX_RECORDS)
    tracer.started = True
    path = "/tmp/" + "a" * 4000
    for _ in range(ptracer.MAX_RECORD_BYTES // (2 * len(path)) + 2):
        call = ptracer.Call("renameat")
        call.writes = [path, path]
        tracer.pending[7] = call
        tracer.result(7, -2)
    assert tracer.over and tracer.record()["lost"]
    assert sum(len(p) + len(error) for p, _ok, error in tracer.writes) <= ptracer.MAX_RECORD_BYTES


def test_the_call_of_a_leader_ended_by_a_threads_execve_is_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    """A thread's execve ends the thread group's leader, whose end the kernel never reports: the
    exec'd program takes its pid. A call the leader had made (resumed to its exit stop, which the
    kill took away) was left pending under that pid, and the new program's first traced call
    replaced it: the write was never recorded (seen end to end: the leader's mkdir in /dev, a
    sibling keeping the tracer busy while the thread's execve stop came first)."""
    leader, thread = 10, 11
    tracer = ptracer.Tracer(0, trace.MAX_RECORDS)
    tracer.started, tracer.first_pid = True, leader
    made = ptracer.Call("mkdir")
    made.writes = ["/dev/orphaned"]
    started = ptracer.Call("execve")
    started.program = "/bin/sh"
    tracer.pending.update({leader: made, thread: started})
    after = ptracer.Call("openat")
    after.writes = ["/scratch/tmp/after"]
    monkeypatch.setattr(ptracer, "_event_message", lambda pid: thread if pid == leader and not tracer.execs else 0)
    monkeypatch.setattr(ptracer, "decode", lambda pid: after)
    monkeypatch.setattr(ptracer, "resume", lambda *args: None)
    tracer.exec_event(leader)  # the thread's execve: the program runs as the leader's pid
    tracer._seccomp(leader)  # its first traced call
    tracer.result(leader, 3)
    assert tracer.execs == [(leader, "/bin/sh")]
    assert ("/dev/orphaned", False, ptracer.UNFINISHED) in tracer.writes and ("/scratch/tmp/after", True, "") in tracer.writes, tracer.writes


class _Counted(str):
    """A program name that counts the comparisons made with it (a list's `in` makes one per element)."""

    compared = 0

    def __eq__(self, other: object) -> bool:
        _Counted.compared += 1
        return str.__eq__(self, other)

    __hash__ = str.__hash__


def test_what_the_tracer_keeps_takes_linear_time_to_keep(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each of N distinct programs (one program spelled `/usr/bin/./true`, `/usr//bin/true`, ...)
    was looked up in a list of those before it, at each exec, refusal and in `record`: N**2/2
    comparisons, minutes of the helper's CPU for a few tens of thousands of execs (its lock held:
    every other run's tracer waiting), and past the helper's 5 s wait no record (not observed)."""
    n = 4000
    tracer = ptracer.Tracer(0, trace.MAX_RECORDS)
    tracer.started, tracer.first_pid = True, 1
    monkeypatch.setattr(ptracer, "_event_message", lambda pid: pid)
    for i in range(n):
        refused, started = ptracer.Call("execve"), ptracer.Call("execve")
        refused.program, started.program = _Counted(f"/tmp/refused{i}"), _Counted(f"/usr/bin/true{i}")
        tracer.pending[2] = refused
        tracer.result(2, -13)  # EACCES
        tracer.pending[2] = started
        tracer.exec_event(2)
    tracer.record()
    assert len(tracer.refused) == n and len(tracer.programs) == n
    assert _Counted.compared < 10 * n, _Counted.compared


@pytest.mark.parametrize("path, expected", [
    ("/a/./b//../c", "/a/c"), ("/..", "/"), ("//tmp/x", "/tmp/x"),
    ("/proc/self/fd/3/../7", "/proc/self/fd/3/../7"), ("/./proc/self/fd/3/../7", "/proc/self/fd/3/../7"),
    ("/tmp/../proc/self/fd/3/../7", "/proc/self/fd/3/../7"), ("/dev/stdout/../null", "/dev/stdout/../null"),
    ("/dev/shm/../null", "/dev/null"),
])
def test_a_dot_dot_after_a_link_of_proc_is_never_taken_lexically(path: str, expected: str) -> None:
    assert ptracer.normal(path) == expected


class _Folder(str):
    """A path the before-and-after comparison found changed, which counts the prefix tests made on it."""

    tested = 0

    def startswith(self, *args: object) -> bool:  # type: ignore[override]
        _Folder.tested += 1
        return str.startswith(self, *args)  # type: ignore[arg-type]


def test_judging_what_the_trace_saw_takes_near_linear_time(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every traced write was tested against every changed file (`any(d.startswith(path + "/"))`),
    and every connection against every one kept before it (a list's `in`): a tool that left 20,000
    files in /tmp (one folder's cap; three folders are compared) and made a million failed opens
    (the entry bound), or connected to 100,000 ports, cost the build hours of CPU after its run,
    whichever tracer watched (5,000 of those writes took 54 s; 5,000 connections 2 s, growing with
    the square). Now each write is looked up in order, each connection in a set."""
    n, changed = 500, 2000
    compared = [0]
    equal = Connection.__eq__

    def counted(self: Connection, other: object) -> bool:
        compared[0] += 1
        return equal(self, other)

    monkeypatch.setattr(Connection, "__eq__", counted)
    launch = sandbox.Launch(argv=[], env={}, cwd=Path("/"), mechanism="bwrap", network=False, workspace="/ws", root=Path("/"),
                            areas=[], log=None, scratch_host="/scratch", cwd_inside="/ws")
    diffed = {_Folder(f"/tmp/d{i}/f") for i in range(changed)}
    seen = trace.Seen(started=True, writes=[trace.Write(f"/x{i}", False) for i in range(n)] + [trace.Write("/tmp/d7", True)],
                      connections=[(f"127.0.0.1:{i % n}", "ECONNREFUSED") for i in range(2 * n)])
    observed = Observed(traced=True)
    launch._add_trace(observed, seen, set(diffed))
    assert [f.path for f in observed.files] == [f"/x{i}" for i in range(n)]  # /tmp/d7: its file is listed already
    assert [c.address for c in observed.connections] == [f"127.0.0.1:{i}" for i in range(n)]
    assert _Folder.tested < 10 * (n + changed) and compared[0] < 10 * n, (_Folder.tested, compared[0])


def test_comparing_a_writable_folder_takes_near_linear_time() -> None:
    """Each folder found changed was tested against every path found changed: a tool that left
    10,000 empty folders and 10,000 files in /tmp (a folder's cap is 20,000 entries, and three are
    compared) cost the build 29 s of CPU per folder compared, per run, whichever tracer watched."""
    n = 1000
    after: tree.Picture = {_Folder(f"d{i}"): ("dir", 0o755) for i in range(n)}
    after.update({_Folder(f"f{i}"): ("file", 0o644, 1, 1, None) for i in range(n)})
    after[_Folder("d7/inner")] = ("file", 0o644, 1, 1, None)
    _Folder.tested = 0
    found = tree.changes({}, after, Path("/nonexistent"))
    assert len(found) == 2 * n and ("d7", "created") not in found and ("d7/inner", "created") in found  # d7: its file says it
    assert _Folder.tested < 10 * n, _Folder.tested


def test_strace_s_log_is_read_in_linear_time_too(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """As in our tracer's record: each of N distinct programs started or refused was looked up in
    the list of those before it (strace's log holds up to 256 MiB of such lines)."""
    n = 2000
    lines = ['1 execve("/bin/tool", ["tool"], 0x7ffd /* 1 var */) = 0']
    lines += [f'2 execve("/tmp/refused{i}", ["x"], 0x7ffd /* 1 var */) = -1 EACCES (Permission denied)' for i in range(n)]
    lines += [f'2 execve("/usr/bin/true{i}", ["x"], 0x7ffd /* 1 var */) = 0' for i in range(n)]
    (tmp_path / "trace.log").write_text("\n".join(lines) + "\n")
    real = trace._unescape
    monkeypatch.setattr(trace, "_unescape", lambda text: _Counted(real(text)))
    _Counted.compared = 0
    seen = trace.parse(tmp_path / "trace.log", launcher_execs=0, cwd="/")
    assert len(seen.refused) == n and len(seen.programs) == n + 1 and len(seen.spawned) == n
    assert _Counted.compared < 10 * n, _Counted.compared
