"""Our own tracer of bubblewrap runs (sandbox/ptracer.py, in the spawner; its filter, seccomp.py).

With real bubblewrap and real processes, through `toolcatalog check` where a run's result is what
is checked: the prototype's hostile tool, each refusal of the filter (a tool that could add a
seccomp filter, an untraced clone, io_uring or clone3 would hide its calls), `fchmodat2` (which
strace 6.1 cannot trace), a 32-bit system call (ends the process, with a reason), a group-stop kept
for the parent to see, a stop signal to bubblewrap's init (ignored, as an untraced init does), and
the spawner's promise that a tracer reaps only its own tracees.
"""

from __future__ import annotations

import dataclasses
import importlib
import json
import os
import re
import select
import signal
import sys
import threading
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))

import ptrace_proto  # noqa: E402
from manifests import MMSG_STRUCTS_PY, PLATFORM, speccify_tool  # noqa: E402
from procs import no_leftovers  # noqa: F401,E402 (an autouse fixture)
from sitebuild import run_check, tool_of  # noqa: E402
from toolcatalog import sandbox, spawner  # noqa: E402
from toolcatalog.sandbox import bwrap, ptracer, seccomp, trace  # noqa: E402
from tracers import tracer  # noqa: F401,E402 (a fixture: a test once per tracer)

probe = importlib.import_module("toolcatalog.sandbox.probe")  # the module, not the function the package exports
FACTS = sandbox.probe("auto")
needs_ours = pytest.mark.skipif(not FACTS.own_tracer, reason=f"our tracer does not work here: {FACTS.untraced or FACTS.reason}")


def test_the_system_call_numbers_are_the_kernels() -> None:
    header = Path("/usr/include/x86_64-linux-gnu/asm/unistd_64.h")
    if not header.exists():
        pytest.skip("no kernel header here")
    numbers = dict((m.group(1), int(m.group(2))) for m in re.finditer(r"#define __NR_(\w+) (\d+)", header.read_text()))
    known = {name: number for name, number in ptracer.NR.items() if name in numbers}
    assert known == {name: numbers[name] for name in known}
    # Linux 6.6, 6.13 and 6.17 (include/uapi/asm-generic/unistd.h); older headers do not have them
    assert {name: ptracer.NR[name] for name in ptracer.NEWER} == {"fchmodat2": 452, "setxattrat": 463, "removexattrat": 466,
                                                                   "file_setattr": 469}
    assert set(ptracer.NR) - set(known) <= set(ptracer.NEWER)


def test_the_filter_fits_and_traces_what_the_parser_records() -> None:
    program = seccomp.program()
    assert len(program) % 8 == 0 and len(program) // 8 < 256
    assert set(trace.PATH_WRITES) | set(trace.FD_WRITES) <= set(seccomp.ALWAYS)


# -- the hostile tool, through `toolcatalog check` --------------------------------------------------

# Its prints go to stderr; stdout carries the result only.
HOSTILE_TOOL = "import json, sys\njson.load(sys.stdin)\nout, sys.stdout = sys.stdout, sys.stderr\n" + ptrace_proto.HOSTILE + """
out.write(json.dumps({"done": True}) + "\\n")
"""

REFUSALS = r"""
import ctypes, json, os, signal, sys
json.load(sys.stdin)
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
def errno_of(*args):
    ctypes.set_errno(0)
    done = libc.syscall(*[ctypes.c_long(a) for a in args])
    if done == 0 and args[0] in (56, 435):  # a clone that worked: this is the child
        os._exit(0)
    if done > 0 and args[0] in (56, 435):
        os.waitpid(done, 0)
    return ctypes.get_errno() if done == -1 else 0
args = ctypes.create_string_buffer(88)  # struct clone_args: flags 0, exit_signal SIGCHLD
ctypes.memmove(ctypes.addressof(args) + 32, ctypes.byref(ctypes.c_uint64(signal.SIGCHLD)), 8)
found = {
    "io_uring_setup": errno_of(425, 1, ctypes.addressof(ctypes.create_string_buffer(120))),
    "clone3": errno_of(435, ctypes.addressof(args), 88),
    "clone_untraced": errno_of(56, 0x00800000 | signal.SIGCHLD, 0, 0, 0, 0),
    "seccomp": errno_of(317, 1, 0, 0),  # SECCOMP_SET_MODE_FILTER
    "prctl_seccomp": errno_of(157, 22, 2, 0, 0, 0),  # prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER)
}
print(json.dumps(found), flush=True)
"""
REFUSED = {"io_uring_setup": 38, "clone3": 38, "clone_untraced": 1, "seccomp": 1, "prctl_seccomp": 1}

FCHMODAT2 = """
import ctypes, json, sys
json.load(sys.stdin)
libc = ctypes.CDLL(None, use_errno=True)
done = libc.syscall(ctypes.c_long(452), ctypes.c_int(-100), b"/etc/passwd", ctypes.c_uint(0o600), ctypes.c_uint(0))
print(json.dumps({"refused": done == -1}), flush=True)
"""


@needs_ours
def test_the_hostile_tool_its_refusals_and_fchmodat2_through_check(tmp_path: Path) -> None:
    speccify_tool(tmp_path, "hostile", [("attacks", {"a": 1}, {"done": True})], files={f"{PLATFORM}.py": HOSTILE_TOOL},
                  effects="none; pure computation")
    speccify_tool(tmp_path, "refusals", [("refused", {"a": 1}, REFUSED)], files={f"{PLATFORM}.py": REFUSALS},
                  effects="none; pure computation")
    speccify_tool(tmp_path, "chmod2", [("fchmodat2", {"a": 1}, {"refused": True})], files={f"{PLATFORM}.py": FCHMODAT2},
                  effects="none; pure computation")
    catalog, _ = run_check(tmp_path)
    [run] = tool_of(catalog, "hostile").examples[0].runs
    assert run.status.value != "errored" and run.actual == {"done": True}, run
    seen = run.observed
    assert seen is not None and seen.traced and not seen.incomplete, run
    changed = {f.path for f in seen.files}
    assert set(ptrace_proto.HOSTILE_EXPECTED) - {"/tmp/hostile-dir"} <= changed, sorted(changed)  # the folder: its files
    assert seen.spawned == ["/bin/sh"], seen
    assert [c.address for c in seen.connections] == ["127.0.0.1:9"], seen
    [refusals] = tool_of(catalog, "refusals").examples[0].runs
    assert refusals.actual == REFUSED and refusals.observed is not None and not refusals.observed.incomplete, refusals
    [chmod2] = tool_of(catalog, "chmod2").examples[0].runs
    assert chmod2.actual == {"refused": True}, chmod2
    assert chmod2.observed is not None and ("/etc/passwd", "blocked") in {(f.path, f.change) for f in chmod2.observed.files}, chmod2


# Changes through a descriptor opened read-only, each to its own file of the read-only system:
# every one fails (EROFS) and leaves nothing to compare; only the trace shows the attempts.
THROUGH_DESCRIPTORS = """
import json, os, sys
json.load(sys.stdin)
def attempt(path, change):
    fd = os.open(path, os.O_RDONLY)
    try:
        change(fd)
    except OSError:
        pass
attempt("/etc/passwd", lambda fd: os.fchmod(fd, 0o777))
attempt("/etc/group", lambda fd: os.fchown(fd, 0, 0))
attempt("/etc/hosts", lambda fd: os.setxattr(fd, "user.x", b"1"))
attempt("/etc/services", lambda fd: os.removexattr(fd, "user.x"))
print(json.dumps({"ok": True}), flush=True)
"""


@needs_ours
def test_changes_through_each_kind_of_descriptor_call_are_seen(tmp_path: Path) -> None:
    speccify_tool(tmp_path, "fdwrites", [("tries", {"a": 1}, {"ok": True})], files={f"{PLATFORM}.py": THROUGH_DESCRIPTORS},
                  effects="none; pure computation")
    catalog, _ = run_check(tmp_path)
    [run] = tool_of(catalog, "fdwrites").examples[0].runs
    assert run.observed is not None and not run.observed.incomplete, run
    blocked = {f.path for f in run.observed.files if f.change == "blocked"}
    assert {"/etc/passwd", "/etc/group", "/etc/hosts", "/etc/services"} <= blocked, run.observed


INT80 = r"""
import ctypes, json, mmap, sys
json.load(sys.stdin)
code = mmap.mmap(-1, 4096, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
code.write(bytes([0xB8, 20, 0, 0, 0, 0xCD, 0x80, 0xC3]))  # mov eax, 20 (getpid, i386); int 0x80; ret
address = ctypes.addressof(ctypes.c_char.from_buffer(code))
print(json.dumps({"pid": ctypes.CFUNCTYPE(ctypes.c_int)(address)()}), flush=True)
"""


@needs_ours
def test_a_32_bit_system_call_ends_the_process_with_a_reason(tmp_path: Path) -> None:
    speccify_tool(tmp_path, "int80", [("getpid", {"a": 1}, {"pid": 2})], files={f"{PLATFORM}.py": INT80},
                  effects="none; pure computation")
    catalog, _ = run_check(tmp_path)
    [run] = tool_of(catalog, "int80").examples[0].runs
    assert run.actual is None and run.status.value == "failed", run
    assert "32-bit (i386) or x32 system call" in run.stderr, run


# The child stops itself and would exit at once if it went on: it must stay stopped (half a
# second: under load a broken tracer may pass, a working one never fails) until the SIGCONT.
GROUP_STOP = """
import json, os, signal, sys, time
json.load(sys.stdin)
child = os.fork()
if child == 0:
    os.kill(os.getpid(), signal.SIGSTOP)
    os._exit(0)
_, status = os.waitpid(child, os.WUNTRACED)
stopped = os.WIFSTOPPED(status)
until = time.monotonic() + 0.5
while stopped and time.monotonic() < until:
    if os.waitpid(child, os.WNOHANG) != (0, 0):
        stopped = False
    time.sleep(0.01)
if stopped:
    os.kill(child, signal.SIGCONT)
    os.waitpid(child, 0)
print(json.dumps({"stopped": stopped}), flush=True)
"""


def test_a_group_stop_is_seen_by_the_parent(tmp_path: Path, tracer: str) -> None:
    speccify_tool(tmp_path, "stopper", [("stops", {"a": 1}, {"stopped": True})], files={f"{PLATFORM}.py": GROUP_STOP},
                  effects="none; pure computation")
    catalog, _ = run_check(tmp_path)
    [run] = tool_of(catalog, "stopper").examples[0].runs
    assert run.actual == {"stopped": True}, run


STOP_INIT = """
import json, os, signal, sys
json.load(sys.stdin)
os.kill(1, signal.SIGSTOP)
print(json.dumps({"ok": True}), flush=True)
"""


@needs_ours
def test_a_stop_signal_to_bubblewraps_init_does_not_hold_the_run(tmp_path: Path) -> None:
    """Untraced, a namespace's init ignores signals from inside it; traced, it would stop, and the
    run would end only at its timeout (here 15 s, which the test would wait out if it failed)."""
    speccify_tool(tmp_path, "stopinit", [("stops init", {"a": 1}, {"ok": True})], files={f"{PLATFORM}.py": STOP_INIT},
                  effects="none; pure computation")
    catalog, _ = run_check(tmp_path, timeout=15.0)
    [run] = tool_of(catalog, "stopinit").examples[0].runs
    assert run.status.value == "passed" and "timed out" not in run.detail, run
    assert run.observed is not None and not run.observed.incomplete


# -- the spawner: whose children a tracer waits for ---------------------------------------------------


def _state(pid: int) -> str | None:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return stat[stat.rindex(")") + 2:].split()[0]


def _traced_run(tmp_path: Path, name: str) -> tuple[spawner.Child, Path]:
    record = tmp_path / f"{name}.json"
    argv = bwrap.probe_argv(FACTS.program, FACTS.variant)
    child = spawner.start(argv, "/", {"PATH": "/usr/bin:/bin"}, False, probe.tracer_trace(record, 0, 0))
    assert isinstance(child, spawner.Child), child
    return child, record


def _ended(child: spawner.Child) -> int:
    code = child.wait(timeout=30)
    for stream in (child.stdout, child.stderr):
        if stream is not None:
            stream.close()
    return code


@needs_ours
def test_a_tracer_reaps_neither_an_untraced_run_nor_another_runs_leader(tmp_path: Path) -> None:
    """An untraced run's leader that has exited stays a zombie (its pid the run's process group id)
    while traced runs start and end beside it, until the build asks the spawner to reap it."""
    plain = spawner.start(["/bin/sh", "-c", "exit 7"], "/", {"PATH": "/usr/bin:/bin"}, False)
    assert isinstance(plain, spawner.Child)
    first, first_record = _traced_run(tmp_path, "first")
    second, second_record = _traced_run(tmp_path, "second")
    deadline = time.monotonic() + 30
    while _state(plain.pid) != "Z" and time.monotonic() < deadline:
        time.sleep(0.01)
    assert _ended(second) == 0 and _ended(first) == 0
    for record in (first_record, second_record):
        seen = trace.load_record(record)
        assert seen.started and not seen.lost and seen.programs == ["/bin/true"], seen
    assert _state(plain.pid) == "Z"  # not reaped by a tracer thread
    assert _ended(plain) == 7


@needs_ours
def test_a_reaped_runs_unfinished_tracer_holds_up_no_other_run(tmp_path: Path) -> None:
    """The spawner waits for a reaped run's tracer to finish (to write its record) beside its one
    request loop, not in it. The first run's tracer is held where it moves bubblewrap's child into
    the run's control groups (FIFOs where `cgroup.procs` would be: the first is read, so the tracer
    is seen there, the second is not yet); the run is killed and reaped, and a second run starts and
    is reaped while that tracer is still held, its record not yet written. Before, the reap of the
    first waited in the loop (up to 5 s) and every other run's start and reap behind it; past that
    wait, the first had no record at all."""
    groups = [tmp_path / "seen-group", tmp_path / "held-group"]
    for group in groups:
        group.mkdir()
        os.mkfifo(group / "cgroup.procs")
    seen_at = os.open(groups[0] / "cgroup.procs", os.O_RDONLY | os.O_NONBLOCK)
    first_record = tmp_path / "first.json"
    trace_of = probe.tracer_trace(first_record, 0, 0, tuple(str(group) for group in groups))
    first = spawner.start(bwrap.probe_argv(FACTS.program, FACTS.variant), "/", {"PATH": "/usr/bin:/bin"}, False,
                          dataclasses.replace(trace_of, finish_s=600.0))  # held as long as the test holds it
    assert isinstance(first, spawner.Child), first
    try:
        assert select.select([seen_at], [], [], 60)[0] and os.read(seen_at, 64), "the tracer never reached the run's groups"
    finally:
        os.close(seen_at)
    os.killpg(first.pid, signal.SIGKILL)  # bubblewrap, and its child waiting at its block descriptor
    first_reaped = threading.Event()
    threading.Thread(target=lambda: (_ended(first), first_reaped.set()), daemon=True).start()
    second: list[tuple[int, trace.Seen]] = []

    def second_run() -> None:
        child, record = _traced_run(tmp_path, "second")
        second.append((_ended(child), trace.load_record(record)))

    try:
        deadline = time.monotonic() + 60
        while first.returncode is None and time.monotonic() < deadline:  # reaped by the spawner (a hang guard)
            time.sleep(0.01)
        runner = threading.Thread(target=second_run, daemon=True)
        runner.start()
        runner.join(60)  # a hang guard: done at once unless the first's tracer holds it up
        held = not first_reaped.is_set() and not first_record.exists()
    finally:
        reader = os.open(groups[1] / "cgroup.procs", os.O_RDONLY | os.O_NONBLOCK)  # lets the first's tracer go on
    try:
        assert second and second[0][0] == 0 and second[0][1].programs == ["/bin/true"], second
        assert held, "the first run's reap ended before the second's while its tracer was still held"
        assert first_reaped.wait(60) and first.returncode == -signal.SIGKILL
    finally:
        os.close(reader)
    seen = trace.load_record(first_record)  # written once its tracer finished (its tool never started)
    assert first_record.exists() and not seen.started and seen.lost, seen


@needs_ours
def test_a_run_whose_tool_never_starts_is_not_observed(tmp_path: Path) -> None:
    argv = [*bwrap.probe_argv(FACTS.program, FACTS.variant)[:-1], "/nonexistent/tool"]
    record = tmp_path / "record.json"
    child = spawner.start(argv, "/", {"PATH": "/usr/bin:/bin"}, False, probe.tracer_trace(record, 0, 0))
    assert isinstance(child, spawner.Child)
    assert _ended(child) != 0
    seen = trace.load_record(record)
    assert not seen.started and seen.lost


@needs_ours
def test_a_run_that_cannot_enter_its_control_groups_never_starts(tmp_path: Path) -> None:
    """Our tracer moves bubblewrap's child into the run's groups before letting it go; where that
    fails the run is ended, and says why (as the shell that entered them did)."""
    argv = bwrap.probe_argv(FACTS.program, FACTS.variant)
    record = tmp_path / "record.json"
    trace_of = probe.tracer_trace(record, 0, 0, (str(tmp_path / "no-such-group"),))
    child = spawner.start(argv, "/", {"PATH": "/usr/bin:/bin"}, False, trace_of)
    assert isinstance(child, spawner.Child)
    assert _ended(child) != 0
    seen = trace.load_record(record)
    assert not seen.started and seen.lost and seen.stopped == ptracer.ENTER_FAILED


def test_a_missing_or_forged_record_is_not_observed(tmp_path: Path) -> None:
    assert trace.load_record(tmp_path / "none.json").lost
    (tmp_path / "bad.json").write_text("[1, 2]")
    assert trace.load_record(tmp_path / "bad.json").lost
    (tmp_path / "half.json").write_text(json.dumps({"started": True, "writes": [["/x", True]]}))
    assert trace.load_record(tmp_path / "half.json").lost  # "lost" must say False


# -- who traces what ---------------------------------------------------------------------------------


@needs_ours
def test_the_build_starts_its_runs_with_our_tracer_and_mcp_servers_with_strace(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    for ours, kind in ((True, probe.OWN_TRACER), (False, "strace" if FACTS.tracer else "")):
        with sandbox.prepare(FACTS, ["/bin/true"], cwd=ws, env={"PATH": "/usr/bin:/bin"}, workspace=ws, network=False,
                             ours=ours) as launch:
            assert launch.tracer == kind
            if ours:
                assert launch.tracing is not None and launch.argv[launch.tracing.at] == FACTS.program
                assert launch.log is None and launch.record is not None
            else:
                assert launch.tracing is None and launch.record is None


@needs_ours
def test_a_machine_our_tracer_does_not_know_falls_back_to_strace(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(probe.platform, "machine", lambda: "aarch64")
    ok, why = probe.own_tracer_works(bwrap.probe_argv(FACTS.program, FACTS.variant))
    assert not ok and "x86-64" in why
    facts = sandbox.probe("auto")
    assert not facts.own_tracer and facts.watcher() == ("strace" if facts.tracer else "")
    assert facts.key() != FACTS.key()  # no result cached under one tracer is reused as the other's
    assert "(strace)" in facts.profile(False) or "not traced" in facts.profile(False)
    assert "toolcatalog's own tracer" in FACTS.profile(False)


def test_results_cached_under_strace_are_not_reused_as_ours() -> None:
    ours = dataclasses.replace(FACTS, mechanism="bwrap", ptrace=True, tracer="/usr/bin/strace")
    theirs = dataclasses.replace(ours, ptrace=False)
    assert ours.key() != theirs.key()


@needs_ours
def test_a_run_whose_caps_cannot_be_set_never_starts(tmp_path: Path) -> None:
    """Our tracer sets a run's caps (prlimit(2) on bubblewrap's child) before letting it go; where
    that fails the run is ended, and says why: a tool never runs without its caps."""
    argv = bwrap.probe_argv(FACTS.program, FACTS.variant)
    record = tmp_path / "record.json"
    child = spawner.start(argv, "/", {"PATH": "/usr/bin:/bin"}, False, probe.tracer_trace(record, 0, 0, (), ((9999, 1),)))
    assert isinstance(child, spawner.Child)
    assert _ended(child) != 0
    seen = trace.load_record(record)
    assert not seen.started and seen.lost and seen.stopped == ptracer.LIMIT_FAILED


@needs_ours
def test_a_held_run_starts_only_when_let_go_and_never_when_its_gate_closes(tmp_path: Path) -> None:
    """A run started ahead waits at its block descriptor until the build lets it go: it starts
    then, and never once the build closes its end of the gate (the build ended it, or is gone)."""
    argv = bwrap.probe_argv(FACTS.program, FACTS.variant)
    for go in (True, False):
        record = tmp_path / f"record-{go}.json"
        child = spawner.start(argv, "/", {"PATH": "/usr/bin:/bin"}, False, probe.tracer_trace(record, 0, 0, held=True))
        assert isinstance(child, spawner.Child) and child.gate is not None
        assert not child._ended_within(0.5)  # held: /bin/true would have ended by now
        child.release(go=go)
        code = _ended(child)
        seen = trace.load_record(record)
        assert (code == 0 and seen.started and not seen.lost) if go else (code != 0 and not seen.started), (go, code, seen)


# Three datagrams in one sendmmsg, each to its own address (no listener: the run's own network
# namespace has only its loopback, and each is sent all the same).
SENDMMSG = r"""
import ctypes, json, socket, struct, sys
json.load(sys.stdin)
""" + MMSG_STRUCTS_PY + r"""
sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
payload = ctypes.create_string_buffer(b"x", 1)
vec = IoVec(ctypes.cast(payload, ctypes.c_void_p), 1)
names = [ctypes.create_string_buffer(struct.pack("=H", socket.AF_INET) + struct.pack("!H", 9) + socket.inet_aton(f"127.0.0.{i}")
                                     + bytes(8), 16) for i in (1, 2, 3)]
messages = (MMsgHdr * 3)(*[MMsgHdr(MsgHdr(ctypes.cast(name, ctypes.c_void_p), 16, ctypes.pointer(vec), 1, None, 0, 0), 0)
                           for name in names])
sent = ctypes.CDLL(None, use_errno=True).sendmmsg(sock.fileno(), messages, 3, 0)
print(json.dumps({"sent": sent}), flush=True)
"""


def test_each_message_of_a_sendmmsg_is_seen(tmp_path: Path, tracer: str) -> None:
    speccify_tool(tmp_path, "batch", [("sends", {"a": 1}, {"sent": 3})], files={f"{PLATFORM}.py": SENDMMSG},
                  effects="none; pure computation")
    catalog, _ = run_check(tmp_path)
    [run] = tool_of(catalog, "batch").examples[0].runs
    assert run.actual == {"sent": 3}, run
    assert run.observed is not None and not run.observed.incomplete, run
    assert [c.address for c in run.observed.connections] == ["127.0.0.1:9", "127.0.0.2:9", "127.0.0.3:9"], run


def test_strace_names_each_message_of_a_sendmmsg(tmp_path: Path) -> None:
    """Of one that failed (the kernel returns an error only when it sent nothing), the first."""
    message = ('{{msg_hdr={{msg_name={{sa_family=AF_INET, sin_port=htons(9), sin_addr=inet_addr("127.0.0.{0}")}}, msg_namelen=16, '
               'msg_iov=[{{iov_base="x", iov_len=1}}], msg_iovlen=1, msg_controllen=0, msg_flags=0}}{1}}}')
    log = tmp_path / "trace.log"
    log.write_text('1 execve("/bin/tool", ["tool"], 0x7ffd /* 1 var */) = 0\n'
                   f'1 sendmmsg(3, [{message.format(1, ", msg_len=1")}, {message.format(2, ", msg_len=1")}], 2, 0) = 2\n'
                   f'1 sendmmsg(-5, [{message.format(3, "")}, {message.format(4, "")}], 2, 0) = -1 EBADF (Bad file descriptor)\n')
    seen = trace.parse(log, launcher_execs=0, cwd="/")
    assert seen.connections == [("127.0.0.1:9", ""), ("127.0.0.2:9", ""), ("127.0.0.3:9", "EBADF")]


def _descriptors(listing: str) -> dict[str, dict[str, str]]:
    """`ls -l DIR/ DIR/` of /proc's `fd` folders: each folder's descriptors and where they lead."""
    found: dict[str, dict[str, str]] = {}
    folder: dict[str, str] = {}
    for line in listing.splitlines():
        if line.endswith(":"):
            folder = found.setdefault(line[:-1], {})
        elif " -> " in line:
            name, target = line.split(" -> ", 1)
            folder[name.rsplit(" ", 1)[1]] = target
    return found


@needs_ours
def test_a_held_runs_tool_and_sandbox_hold_no_descriptor_of_the_gate_or_the_tracer(tmp_path: Path) -> None:
    """A run started ahead is let go by a byte on its gate; its tracer reads bubblewrap's child
    from `--info-fd`, lets it go on with `--block-fd`, and the spawner closes a pipe of its own
    when the record is settled. None of those may reach the sandbox: a tool holding the gate could
    let a later run go, and one holding the settled pipe, left behind, would keep the build waiting.
    The tool has 0, 1 and 2 (and `ls` the folder it lists); bubblewrap's init, which the tool (the
    same user) can read through /proc/1/fd, those and its own event descriptor."""
    argv = [*bwrap.probe_argv(FACTS.program, FACTS.variant)[:-1], "/bin/ls", "-l", "/proc/self/fd/", "/proc/1/fd/"]
    record = tmp_path / "record.json"
    child = spawner.start(argv, "/", {"PATH": "/usr/bin:/bin"}, False, probe.tracer_trace(record, 0, 0, held=True))
    assert isinstance(child, spawner.Child) and child.gate is not None
    child.release()
    assert child.stdout is not None
    out = child.stdout.read().decode()
    assert _ended(child) == 0, out
    found = _descriptors(out)
    tool, init = found["/proc/self/fd/"], found["/proc/1/fd/"]
    listed = {fd for fd, target in tool.items() if re.fullmatch(r"/proc/\d+/fd", target)}  # ls's own, of the folder
    assert sorted(set(tool) - listed) == ["0", "1", "2"] and tool["0"] == "/dev/null", out
    assert [init[fd] for fd in ("0", "1", "2")] == [tool[fd] for fd in ("0", "1", "2")], out
    assert {fd: target for fd, target in init.items() if fd not in ("0", "1", "2")} in ({}, {"4": "anon_inode:[eventfd]"}), out
    assert trace.load_record(record).started
