"""Example processes started by a small helper process, so that each costs one exec (Linux).

A process the build starts must die with the build (process.py: the parent-death signal). That
needs code between fork and exec, which `subprocess` runs (`preexec_fn`) only after a full fork
of the build, page tables and all; the other way, `setpriv --pdeathsig` and a shell that checks the
parent, costs two more execs per run (about 1.2 ms of CPU and 2-4 ms of wall time each run on the
bench: most of what an unsandboxed run cost beyond its own process).

The spawner is a Python process started once per build (`-I -S`: no site packages, a few
megabytes), in a session of its own (a terminal's Ctrl-C is the build's to handle). Its
parent-death signal, SIGTERM, is set for the build thread that started it (a daemon thread that
waits for it as long as the build lives), after which it checks that the build is still its
parent. For each run it starts the program with `subprocess.Popen` exactly as the build did
(no shell, the run's folder, a new session, the run's pipes on 0, 1 and 2, every other
descriptor closed, SIGPIPE and SIGXFSZ restored, exactly the environment given), which in so small
a process is a vfork and one exec with nothing in between. The build gets the pid (or the error
Popen raised, rebuilt with its errno, text and file name), reads and writes the pipes itself,
watches the process with a pidfd and kills its group as before; the spawner reaps a process only
when the build asks, after the build has killed what was left of its group (so the group id stays
reserved until then, as run_process keeps it with its own children), and reports its exit code.

Traced runs (`Trace`, sandbox/ptracer.py): the spawner starts bubblewrap the same way, with three
more descriptors (`--seccomp`, `--info-fd`, `--block-fd`), and a thread of its own per run traces it:
it seizes bubblewrap's process in the sandbox while that waits at its block descriptor, moves it into
the run's control groups, sets its caps, lets it go (a run started ahead, `Trace.held`: only once the
build writes a byte to the gate it sent with the run's pipes, `Child.release`; the build closing it
instead, or dying, ends the run), and waits (`__WNOTHREAD`) for its own tracees only, never for
a leader (which it never traces) or another run's process. When the build asks to reap the run, the
spawner reaps it and answers at once, and another thread of its own waits for the tracer (a few
seconds at most, `Trace.finish_s`: the sandbox dies with bubblewrap), writes its record to the run's
folder (a new file, never through a link) and then closes a pipe whose other end came to the build
with the run's pid: the build's `Child.wait` waits for that (on the run's own thread) before the
record is read. Past that wait, no record, and the run is "not observed". No other run's start or
reap waits for a tracer that is slow to finish. These threads block every signal, so the spawner's
main thread gets them; a spawner that dies takes its tracer threads along, and the kernel kills
their tracees (`PTRACE_O_EXITKILL`).

The tracer's own work is the spawner's: its CPU time, and its memory (a run's record is bounded,
ptracer.MAX_RECORD_BYTES), count against no run's control groups or caps, which hold bubblewrap's
process in the sandbox and the tool; a tool that makes many traced calls costs the spawner one stop
each (the filter stops only what is recorded).

Death: the build dies -> the spawner gets SIGTERM -> it kills the process group of every process
it started and not yet reaped (one started while the signal came is killed as soon as it is
recorded), then exits; it does the same when the build closes its socket (at exit). Not covered:
a spawner killed with SIGKILL by someone else leaves its runs to the build, which still ends each
at its deadline (as it ends a run's group). Where anything of this is missing (not Linux, no
pidfd, no SEQPACKET sockets, the spawner would not start or has died), `start` returns None and
the caller starts the process the old way.
"""

from __future__ import annotations

import atexit
import json
import math
import os
import select
import socket
import subprocess
import sys
import threading
from dataclasses import dataclass
from typing import IO, Any, cast

__all__ = ["Child", "Trace", "available", "start"]

_CODE = r"""
import ctypes, json, os, select, signal, socket, subprocess, sys, threading
children = {}  # pid -> (Popen, pidfd): started, not yet reaped (each leads its own session and process group)
traced = {}  # pid -> (tracer thread, [its record], record path, bound, settled): runs our tracer watches (sandbox/ptracer.py)
tracer = None  # that module, loaded from its path on the first traced start
starting = ending = False

def end(_number=0, _frame=None):
    global ending
    ending = True
    for pid in list(children):
        try:
            os.killpg(pid, signal.SIGKILL)
        except OSError:
            pass
    if not starting:  # else the start under way ends it once the new process is recorded
        os._exit(137)

for number in signal.valid_signals():  # a disposition of SIG_IGN survives exec: what the build was started with
    if number not in (signal.SIGKILL, signal.SIGSTOP) and signal.getsignal(number) is signal.SIG_IGN:
        signal.signal(number, signal.SIG_DFL)  # (a shell's `&` ignores SIGINT and SIGQUIT, nohup SIGHUP) reaches no run
signal.signal(signal.SIGTERM, end)
signal.pthread_sigmask(signal.SIG_SETMASK, [])  # runs start with no signal blocked, whatever the thread that started this had
ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM, 0, 0, 0)
if os.getppid() != int(sys.argv[2]):
    os._exit(137)
sock = socket.socket(fileno=int(sys.argv[1]))
os.set_inheritable(sock.fileno(), False)

def load_tracer(path):
    global tracer
    if tracer is None:
        import importlib.util
        spec = importlib.util.spec_from_file_location("toolcatalog_ptracer", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        tracer = module
    return tracer

def traced_argv(req):
    # bubblewrap's argv with the tracer's descriptors (--seccomp, --info-fd, --block-fd), the
    # descriptors the process gets, and the tracer's ends of the pipes (and the build's end of
    # the pipe that says the record is settled, then this side's)
    trace = req["trace"]
    load_tracer(trace["module"])
    filter_r, filter_w = os.pipe()
    os.write(filter_w, bytes.fromhex(trace["filter"]))  # a few hundred bytes: the pipe holds them
    os.close(filter_w)
    info_r, info_w = os.pipe()
    block_r, block_w = os.pipe()
    settled_r, settled_w = os.pipe()
    at, argv = trace["at"], req["argv"]
    options = ["--seccomp", str(filter_r), "--info-fd", str(info_w), "--block-fd", str(block_r)]
    return [*argv[:at + 1], *options, *argv[at + 1:]], [filter_r, info_w, block_r], [info_r, block_w, settled_r, settled_w]

def background(target, *args):
    # a thread of the spawner's own, every signal blocked from its first instruction on (so the
    # main thread, in its loop, gets them); the main thread's mask is none again after
    signal.pthread_sigmask(signal.SIG_BLOCK, signal.valid_signals())
    try:
        thread = threading.Thread(target=target, args=args, daemon=True)
        thread.start()
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, [])
    return thread

def follow(trace, info_r, block_w, pid, settled_w, gate):
    box = []
    def run():
        try:
            box.append(tracer.trace_run(info_r, block_w, pid, trace["execs"], trace["max"], trace.get("groups", []),
                                        trace.get("limits", []), gate))
        except BaseException as exc:  # its tracees die with this thread (PTRACE_O_EXITKILL): not observed
            box.append({"started": False, "lost": True, "notes": [repr(exc)[:300]]})
    traced[pid] = (background(run), box, trace["record"], float(trace.get("finish", 5.0)), settled_w)

def start(req, fds):
    global starting
    starting = True
    passed, ends = [], []
    try:
        argv = req["argv"]
        if req.get("trace"):
            argv, passed, ends = traced_argv(req)
            if req["trace"].get("held"):  # the build's gate (a 4th descriptor): the tracer lets the run go on its word
                ends.append(os.dup(fds[3]))
        proc = subprocess.Popen(argv, cwd=req["cwd"], env=req["env"], stdin=fds[0], stdout=fds[1], stderr=fds[2],
                                shell=False, start_new_session=True, close_fds=True, bufsize=0, pass_fds=passed)
    except OSError as exc:
        return {"error": [exc.errno or 0, exc.strerror or "", None if exc.filename is None else os.fsdecode(exc.filename)]}, []
    except (ValueError, TypeError, KeyError, IndexError, ImportError, AttributeError) as exc:
        return {"invalid": str(exc)}, []
    else:
        children[proc.pid] = (proc, os.pidfd_open(proc.pid))
        if not ends:
            return {"pid": proc.pid}, []
        info_r, block_w, settled_r, settled_w, *gate = ends
        follow(req["trace"], info_r, block_w, proc.pid, settled_w, gate[0] if gate else None)
        ends = []  # the tracer's now; `settled_r` is sent to the build with the answer, then closed here
        return {"pid": proc.pid}, [settled_r]
    finally:
        for fd in passed + ends:
            os.close(fd)
        starting = False
        if ending:
            end()

def keep_record(thread, box, path, bound, settled):
    # a reaped run's tracer's record, written to its file only when the tracer has finished, within
    # `bound` seconds of the reap (past that, none: the run is not observed); on a thread of its own
    # (`wait`), so that no other run's start or reap waits for it. Then `settled` is closed: the
    # build, which waits for its end of that pipe to close, reads the record
    try:
        thread.join(bound)
        if thread.is_alive() or not box:
            return
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        except OSError:
            return
        with open(fd, "w", encoding="utf-8") as stream:
            json.dump(box[0], stream)
    finally:
        os.close(settled)

def wait(req):
    pid = req["pid"]
    held = children.get(pid)
    if held is None:
        return {"status": None}
    ready, _, _ = select.select([held[1]], [], [], req["timeout"])
    if not ready:
        return {"status": None, "running": True}
    status = held[0].wait()
    os.close(held[1])
    del children[pid]
    if pid in traced:
        kept = traced.pop(pid)
        try:
            background(keep_record, *kept)
        except RuntimeError:  # no thread to be had: here, then
            keep_record(*kept)
    return {"status": status}

while True:
    try:
        msg, fds, _flags, _addr = socket.recv_fds(sock, 1 << 20, 4)
    except OSError:
        break
    if not msg:
        break
    for fd in fds:
        os.set_inheritable(fd, False)  # only their copies on 0, 1 and 2 reach the process
    req = json.loads(msg)
    reply, theirs = start(req, fds) if req["op"] == "start" else (wait(req), [])
    for fd in fds:
        os.close(fd)
    try:
        socket.send_fds(sock, [json.dumps(reply).encode()], theirs) if theirs else sock.send(json.dumps(reply).encode())
    finally:
        for fd in theirs:
            os.close(fd)
end()
"""

_MAX_REQUEST = 256 << 10  # bytes of argv, folder and environment sent at once; more: started the old way
LOST: dict[str, Any] = {"lost": True}  # `_Spawner.ask`: sent, and the spawner went away before it answered


class _Spawner:
    """The build's end of the spawner: one request and its answer at a time."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.broken = False
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.sock = ours
        ready = threading.Event()
        self.proc: subprocess.Popen[bytes] | None = None
        failed: list[BaseException] = []

        def host() -> None:  # the spawner's parent-death signal is for this thread: it waits as long as the spawner lives
            try:
                self.proc = subprocess.Popen(
                    [sys.executable, "-I", "-S", "-c", _CODE, str(theirs.fileno()), str(os.getpid())],
                    pass_fds=[theirs.fileno()], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL, env={}, close_fds=True, start_new_session=True)
            except BaseException as exc:  # noqa: BLE001 - no spawner: every process is started the old way
                failed.append(exc)
                return
            finally:
                theirs.close()
                ready.set()
            self.proc.wait()
            self.broken = True

        threading.Thread(target=host, name="toolcatalog-spawner", daemon=True).start()
        ready.wait()
        if failed or self.proc is None:
            self.broken = True
        atexit.register(self.close)

    def ask(self, request: dict[str, Any], fds: list[int], received: list[int] | None = None) -> dict[str, Any] | None:
        """Send one request (with `fds`) and read its answer (the descriptors that came with it
        added to `received`, else closed); None when it was not sent (the spawner is gone), `LOST`
        when it was sent and no answer came (the spawner went away while doing it: a process may
        have been started). Anything raised in between (Ctrl-C, the SIGTERM handler's SystemExit)
        leaves an answer unread, so the socket is not used again."""
        data = json.dumps(request).encode()
        came: list[int] = []
        with self.lock:
            if self.broken:
                return None
            try:
                try:
                    socket.send_fds(self.sock, [data], fds) if fds else self.sock.send(data)
                except OSError:
                    self.broken = True
                    return None
                try:
                    answer, came, _flags, _address = socket.recv_fds(self.sock, 1 << 16, 1)
                except OSError:
                    answer = b""
            except BaseException:
                self.broken = True
                raise
            if not answer:
                self.broken = True
                return LOST
        for fd in came:
            os.set_inheritable(fd, False)
            if received is None:
                os.close(fd)
            else:
                received.append(fd)
        found: dict[str, Any] = json.loads(answer)
        return found

    def close(self) -> None:
        """At exit: the spawner ends (its socket closed) and is reaped, with its children's usage."""
        self.broken = True
        try:
            self.sock.close()
        except OSError:
            pass
        if self.proc is not None:
            try:
                self.proc.wait(timeout=2.0)
            except subprocess.TimeoutExpired:
                self.proc.kill()


_SPAWNER: _Spawner | None = None
_spawner_lock = threading.Lock()
_SUPPORTED = sys.platform.startswith("linux") and hasattr(os, "pidfd_open") and hasattr(socket, "send_fds") \
    and hasattr(socket, "SOCK_SEQPACKET") and bool(sys.executable)


def _forgotten_in_child() -> None:
    """A forked copy of the build starts a spawner of its own if it runs anything: the parent's
    is the parent's (its socket answers the parent), and the copy's end of it is closed so the
    spawner still sees the build's exit. The lock that guards starting one is new too: another
    thread of the parent may have held it at the fork, and no thread of the copy would let it go."""
    global _SPAWNER, _spawner_lock
    _spawner_lock = threading.Lock()
    if _SPAWNER is not None:
        try:
            _SPAWNER.sock.close()
        except OSError:
            pass
        _SPAWNER.proc = None  # not the child's to reap
        _SPAWNER.broken = True
    _SPAWNER = None


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forgotten_in_child)


def _spawner() -> _Spawner | None:
    global _SPAWNER
    if not _SUPPORTED:
        return None
    if _SPAWNER is None:
        with _spawner_lock:
            if _SPAWNER is None:
                try:
                    _SPAWNER = _Spawner()
                except OSError:
                    return None
    return None if _SPAWNER.broken else _SPAWNER


def available() -> bool:
    """Whether processes can be started through the spawner here (starting it on first use)."""
    return _spawner() is not None


class Child:
    """A process the spawner started: what `subprocess.Popen` offers that run_process uses."""

    def __init__(self, owner: _Spawner, pid: int, stdin: int | None, stdout: int, stderr: int, argv: list[str]) -> None:
        self.owner = owner
        self.pid = pid
        self.args = argv
        self.stdin: IO[bytes] | None = cast(IO[bytes], os.fdopen(stdin, "wb", buffering=0)) if stdin is not None else None
        self.stdout: IO[bytes] | None = cast(IO[bytes], os.fdopen(stdout, "rb", buffering=0))
        self.stderr: IO[bytes] | None = cast(IO[bytes], os.fdopen(stderr, "rb", buffering=0))
        self.returncode: int | None = None
        self.lost = False  # the spawner went away before it could say how this process ended
        self.pidfd: int | None = os.pidfd_open(pid)
        self.gate: int | None = None  # a run started ahead (`Trace.held`): the build's end of its gate
        self.settled: int | None = None  # a traced run: closed by the spawner once its record is settled

    def release(self, go: bool = True) -> None:
        """A run started ahead let go (`go`: its tracer lets bubblewrap start the tool) or ended at
        its gate (False: the tracer kills it, the tool never started); nothing for any other run."""
        gate, self.gate = self.gate, None
        if gate is None:
            return
        try:
            if go:
                os.write(gate, b"x")
        except OSError:
            pass  # its tracer is gone (the run was ended): it never starts
        finally:
            os.close(gate)

    def exited(self) -> bool:
        """Whether it has exited (not reaped: the spawner keeps it until `wait`)."""
        return self.returncode is not None or self.lost or self._ended_within(0.0)

    def _ended_within(self, timeout: float | None) -> bool:
        """Whether it has exited within `timeout` seconds (None: however long it takes), as its
        pidfd in the build says: waiting takes no turn of the spawner's, so other runs start and
        end meanwhile. `poll`, not `select`: a build may hold descriptors past select's 1024."""
        if self.pidfd is None:
            return True
        poller = select.poll()
        poller.register(self.pidfd, select.POLLIN)
        return bool(poller.poll(None if timeout is None else math.ceil(max(0.0, timeout) * 1000)))

    def poll(self) -> int | None:
        return self.returncode if self.returncode is not None or not self.exited() else self.wait(0.0)

    def wait(self, timeout: float | None = None) -> int:
        """Its exit code (negative: the signal that ended it); reaped by the spawner once it has
        exited. Raises `subprocess.TimeoutExpired` when it has not exited within `timeout` seconds,
        and when the spawner is gone (which killed its group on the way out, but how it ended was
        not seen)."""
        if self.returncode is not None:
            return self.returncode
        if not self.lost and not self._ended_within(timeout):
            raise subprocess.TimeoutExpired(self.args, timeout or 0.0)
        answer = None if self.lost else self.owner.ask({"op": "wait", "pid": self.pid, "timeout": 0.0}, [])
        if answer is not None and answer.get("running"):  # not seen exited there yet: as a timeout, still its
            raise subprocess.TimeoutExpired(self.args, timeout or 0.0)
        if answer is None or answer.get("status") is None:  # the spawner is gone, or does not know it
            self.lost = True
            self._close_pidfd()
            raise subprocess.TimeoutExpired(self.args, timeout or 0.0)
        self.returncode = int(answer["status"])
        self._close_pidfd()
        self._settle()
        return self.returncode

    def _settle(self) -> None:
        """Once a traced run is reaped: its record written, or given up (`Trace.finish_s` after the
        reap, the run then not observed), which the spawner says by closing its end of the pipe
        (its own thread does: the spawner goes on starting and reaping other runs meanwhile). A
        spawner that dies closes it too."""
        settled, self.settled = self.settled, None
        if settled is None:
            return
        try:
            while os.read(settled, 1):
                pass
        except OSError:
            pass
        finally:
            os.close(settled)

    def _close_pidfd(self) -> None:
        self.release(go=False)  # reaped, or lost: a gate never opened is closed (its run is ended)
        if self.pidfd is not None:
            os.close(self.pidfd)
            self.pidfd = None
        if self.settled is not None and self.returncode is None:  # lost: no record to wait for
            os.close(self.settled)
            self.settled = None


@dataclass(frozen=True)
class Trace:
    """A run the spawner's own tracer watches (sandbox/ptracer.py, loaded from `module`): `argv[at]`
    is bubblewrap, which gets `--seccomp` (`program`), `--info-fd` and `--block-fd`; the first
    `execs` successful execs in its sandbox are the launcher's; at most `max_records` entries are
    recorded; the record is written to `record` (a new file) when the build reaps the run. `groups`:
    the run's control-group folders, which bubblewrap's child enters before it is let go."""

    module: str
    program: bytes
    at: int
    execs: int
    record: str
    max_records: int
    groups: tuple[str, ...] = ()
    limits: tuple[tuple[int, int], ...] = ()  # (resource, value): set on bubblewrap's child before it is let go
    held: bool = False  # started ahead: let go only once the build says so (`Child.release`)
    # Seconds the tracer of a reaped run may take to see the rest of its sandbox end (its record is
    # written once it has); past that, no record: the run is not observed.
    finish_s: float = 5.0

    @property
    def binding(self) -> bool:
        """Whether the run may start only through the tracer: it sets its caps, moves it into its
        control groups or holds it until its turn (started another way, none of that would happen)."""
        return bool(self.limits or self.groups or self.held)

    def request(self) -> dict[str, Any]:
        return {"module": self.module, "filter": self.program.hex(), "at": self.at, "execs": self.execs,
                "record": self.record, "max": self.max_records, "groups": list(self.groups),
                "limits": [list(pair) for pair in self.limits], "held": self.held, "finish": self.finish_s}


def _sendable(argv: list[str], cwd: str, env: dict[str, str]) -> bool:
    texts = [*argv, cwd, *env, *env.values()]
    return all("\0" not in t for t in texts) and all(k and "=" not in k for k in env)


def start(argv: list[str], cwd: str, env: dict[str, str], piped: bool,
          trace: Trace | None = None) -> "Child | OSError | ValueError | None":
    """Start `argv` (argv[0] an absolute path) in `cwd` with exactly `env`, stdin a pipe when
    `piped` (else /dev/null), stdout and stderr pipes: the process, the error `subprocess` raised
    for it in the spawner (an OSError with its errno, text and file name, or a ValueError), or
    None where the spawner cannot take it (the caller starts it the old way). `trace`: watched by
    the spawner's tracer (see `Trace`)."""
    owner = _spawner()
    if owner is None or not _sendable(argv, cwd, env):
        return None
    request: dict[str, Any] = {"op": "start", "argv": argv, "cwd": cwd, "env": env}
    if trace is not None:
        request["trace"] = trace.request()
    if len(json.dumps(request)) > _MAX_REQUEST:
        return None
    stdin_w: int | None = None
    if piped:
        stdin_r, stdin_w = os.pipe2(os.O_CLOEXEC)
    else:
        stdin_r = os.open(os.devnull, os.O_RDONLY | os.O_CLOEXEC)
    out_r, out_w = os.pipe2(os.O_CLOEXEC)
    err_r, err_w = os.pipe2(os.O_CLOEXEC)
    gate_r, gate_w = os.pipe2(os.O_CLOEXEC) if trace is not None and trace.held else (None, None)
    theirs = [stdin_r, out_w, err_w, *([gate_r] if gate_r is not None else [])]
    received: list[int] = []  # a traced run's: the end of the pipe that says its record is settled
    try:
        answer = owner.ask(request, theirs, received)
    finally:
        for fd in theirs:
            os.close(fd)
    if answer is None or "pid" not in answer:
        for left in (stdin_w, out_r, err_r, gate_w, *received):
            if left is not None:
                os.close(left)
        if answer is None:
            return None
        if answer is LOST:  # it may have started (and its pipes are now closed): never started twice
            return OSError(0, "the spawner ended while starting it", None)
        if "invalid" in answer:
            return ValueError(answer["invalid"])
        number, text, filename = answer["error"]
        return OSError(number, text, filename)
    child = Child(owner, int(answer["pid"]), stdin_w, out_r, err_r, argv)
    child.gate = gate_w
    child.settled = received[0] if received else None
    return child
