"""Run one untrusted subprocess without letting it hurt the build.

The command runs without a shell, in a new session (so it leads its own process
group), with exactly the environment it is given (see `scrubbed_env`). Its stdin
is written and then closed, and stdout and stderr are read as they come, all
from one `selectors` loop, so a child that never reads stdin, or one that fills
stdout before it reads, cannot deadlock us. Each stream is capped: once a
stream goes past its cap the whole process group is killed and the result is
marked truncated, so memory stays flat whatever the child writes. At the
deadline the whole group (grandchildren too) gets SIGKILL; we then read for at
most a short grace period, so a process outside the group that still holds
the pipes cannot keep us waiting. Whatever the group leaves behind when its
leader exits is killed as well.

A command that cannot start (missing executable, permission denied, ...) gives
a result with `error` set and `exit_code` None; `run_process` itself does not
raise for those.

Inside `with cancel_on(event):`, setting `event` (from any thread) stops the
run: a process not yet started is not started, a running one has its group
killed within a quarter of a second, and the result says it was cancelled.
This is how Ctrl-C stops the runs already under way on worker threads.

Nothing started here outlives the build. On Linux each process gets a
parent-death signal (SIGKILL when the thread that started it ends, so also when
the build is killed with SIGKILL or by the OOM killer): a sandboxed run's first
process (strace, bubblewrap or the Landlock launcher) takes its sandbox down
with it. Inside `with ended_by_signals():`, SIGTERM and SIGHUP (what `timeout`,
`docker stop`, CI cancellation and a closed terminal send) kill every process
group this module has running and then end the build like Ctrl-C does, so its
run folders are removed on the way out; a handler someone else installed (or
SIG_IGN, as under `nohup`) is left in place.

POSIX only in earnest; on Windows it falls back to `subprocess.run` with a
timeout (caps applied after the fact, untested).
"""

from __future__ import annotations

import contextlib
import contextvars
import errno
import os
import re
import selectors
import shutil
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Callable, Iterable, Iterator, Mapping, Union, cast

from . import shellenv, spawner

__all__ = [
    "CANCELLED",
    "cancel_requested",
    "die_with_parent_argv",
    "ended_by_signals",
    "parent_death_preexec",
    "ENV_ALLOWLIST",
    "PROVIDER_VARS",
    "ProcessResult",
    "cancel_on",
    "interpreter_for",
    "run_process",
    "scrubbed_env",
    "start_process",
    "Started",
]

ENV_ALLOWLIST = (
    "PATH",
    "HOME",
    "LANG",
    "LC_ALL",
    "LC_CTYPE",
    "TZ",
    "TMPDIR",
    "TEMP",
    "TMP",
    "SYSTEMROOT",
    "PATHEXT",
)

# Names that look like model-provider settings or credentials.
PROVIDER_VARS = re.compile(
    r"API_KEY|ACCESS_KEY|SECRET|_TOKEN$"
    r"|^ANTHROPIC|^OPENAI|^AZURE_OPENAI|^GOOGLE_API|^GEMINI|^MISTRAL|^COHERE|^GROQ"
    r"|^TOGETHER|^PERPLEXITY|^AMPLIFIER|^LLM|_LLM$|^MODEL|_MODEL$|PROVIDER",
    re.IGNORECASE,
)

_READ_CHUNK = 64 << 10
_WRITE_CHUNK = 64 << 10
_DRAIN_GRACE_S = 0.5  # after killing the group: how long to read what is left
_LEFTOVER_GRACE_S = 0.3  # leader exited, pipes still open: wait this long, then kill the rest
_REAP_TIMEOUT_S = 1.0  # after SIGKILL, how long to wait for the leader to be reaped
_MAX_TICK_S = 0.25

CANCELLED = "cancelled: the run was interrupted"
_CANCEL: contextvars.ContextVar[threading.Event | None] = contextvars.ContextVar("toolcatalog_cancel", default=None)


@contextlib.contextmanager
def cancel_on(event: threading.Event) -> Iterator[None]:
    """Runs started in this block (this thread) stop as soon as `event` is set."""
    token = _CANCEL.set(event)
    try:
        yield
    finally:
        _CANCEL.reset(token)


def cancel_requested() -> bool:
    """Whether the runs of this block (see `cancel_on`) should stop: for processes that something
    else runs (the MCP SDK), to stop them as `run_process` would."""
    event = _CANCEL.get()
    return event is not None and event.is_set()


# --------------------------------------------------------------------------- dying with the build

_PR_SET_PDEATHSIG = 1
_running: set[int] = set()  # process groups started by run_process and not yet ended
_running_lock = threading.RLock()  # re-entrant: the signal handler may run while the main thread holds it


def _load_prctl() -> Callable[..., int] | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        import ctypes

        prctl: Callable[..., int] = ctypes.CDLL(None, use_errno=True).prctl
        return prctl
    except (OSError, AttributeError, ImportError):
        return None


_prctl = _load_prctl()


def parent_death_preexec() -> Callable[[], None] | None:
    """A `preexec_fn` that gives the child SIGKILL when its parent (the thread that starts it)
    dies, or None where the kernel has no such thing. It checks the parent afterwards: one that died
    between fork and prctl would never send the signal. Only a pre-loaded C function is called in
    the child, so it is safe with other threads running."""
    if _prctl is None:
        return None
    prctl, parent, kill, getppid, me = _prctl, os.getpid(), os.kill, os.getppid, os.getpid

    def die_with_parent() -> None:
        prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        if getppid() != parent:
            kill(me(), signal.SIGKILL)

    return die_with_parent


# Run with the build's Python by `die_with_parent_argv`: the parent-death signal, the check that the
# parent is still the one that started it, then the command itself in the same process, with the
# environment as the kernel passed it (Python's start in the C locale adds LC_CTYPE to os.environ,
# PEP 538, which the command must not get).
_SHIM = (
    "import ctypes, os, sys\n"
    "ctypes.CDLL(None).prctl(1, 9, 0, 0, 0)\n"
    "if os.getppid() != int(sys.argv[1]):\n"
    "    os._exit(137)\n"
    "with open('/proc/self/environ', 'rb') as given:\n"
    "    env = dict(item.partition(b'=')[::2] for item in given.read().split(b'\\0') if item)\n"
    "os.execvpe(sys.argv[2], sys.argv[2:], env)\n"
)


# The parent-death signal without a `preexec_fn`: a `preexec_fn` makes `subprocess` fork the whole
# build (page tables and all: 10-40 ms for a build of a few hundred megabytes), where without one it
# uses vfork (under a millisecond). `setpriv --pdeathsig KILL` sets the signal, then a shell checks
# that the parent is still the build (one that died between the start and the prctl never sends it),
# then execs the command in the same process, so its pid, session and process group are unchanged.
# The shell adds PWD to the environment: it is unset again (a command given PWD, or any variable the
# shell would drop or reset, is started the old way: `shellenv.kept`), and the probe checks that
# the command gets exactly the environment given.
_PPID_CHECK = '[ "$PPID" = "$0" ] || exit 137; unset PWD; exec "$@"'
_SETPRIV: list[str] | None = None
_setpriv_lock = threading.Lock()
_setpriv_known = False


def _setpriv_prefix() -> list[str] | None:
    """`setpriv --pdeathsig KILL -- /bin/sh -c CHECK PID`, or None where that does not work here
    (no setpriv, one older than util-linux 2.33, no /bin/sh). Tried once per process."""
    global _SETPRIV, _setpriv_known
    if _setpriv_known:
        return None if _SETPRIV is None else [*_SETPRIV, str(os.getpid())]
    with _setpriv_lock:
        if not _setpriv_known:
            _SETPRIV = _try_setpriv()
            _setpriv_known = True
    return _setpriv_prefix()


def _try_setpriv() -> list[str] | None:
    if _prctl is None or not os.path.isfile("/bin/sh"):
        return None
    found = shutil.which("setpriv", path="/usr/bin:/bin:/usr/sbin:/sbin")
    if found is None:
        return None
    prefix = [found, "--pdeathsig", "KILL", "--", "/bin/sh", "-c", _PPID_CHECK]
    env_program = shutil.which("env", path="/usr/bin:/bin")
    if env_program is None:
        return None
    given = {"PATH": "/usr/bin:/bin", "TOOLCATALOG_PROBE": "1"}
    try:
        done = subprocess.run([*prefix, str(os.getpid()), env_program], capture_output=True,
                              timeout=10, stdin=subprocess.DEVNULL, env=given)
    except (OSError, subprocess.SubprocessError):
        return None
    seen = sorted(done.stdout.decode("utf-8", "replace").splitlines())
    return prefix if done.returncode == 0 and seen == sorted(f"{k}={v}" for k, v in given.items()) else None


def _execs_as_is(path: str) -> bool:
    """Whether `path` (absolute) is a file the kernel execs itself: an executable regular file
    that starts with `#!` or is ELF. Only those go through the shell of `_setpriv_prefix`, whose
    `exec` would run a file without either as a shell script, and whose errors differ from Popen's."""
    try:
        if not (os.path.isfile(path) and os.access(path, os.X_OK)):
            return False
        with open(path, "rb") as stream:
            head = stream.read(4)
    except OSError:
        return False
    return head[:2] == b"#!" or head == b"\x7fELF"


def _spawn_argv(argv: list[str], env: Mapping[str, str]) -> tuple[list[str], Callable[[], None] | None]:
    """What to start for `argv` and the `preexec_fn` to start it with: the `setpriv` prefix (no
    `preexec_fn`, so `subprocess` can use vfork) when it works here and `argv[0]` is a path the
    kernel execs as it is (an absolute path: a relative one is found from the child's folder) and the
    shell passes `env` on unchanged (`shellenv.kept`: no PWD, IFS or a name that is no shell
    identifier); otherwise `argv` with `parent_death_preexec` (a fork, the errors of Popen)."""
    if os.path.isabs(argv[0]) and shellenv.kept(env) and _execs_as_is(argv[0]):
        prefix = _setpriv_prefix()
        if prefix is not None:
            return [*prefix, *argv], None
    return argv, parent_death_preexec()


def die_with_parent_argv(argv: list[str]) -> list[str]:
    """`argv` prefixed so that it gets SIGKILL when the thread that starts it ends: for processes
    that something else starts (the MCP SDK has no `preexec_fn`). Unchanged where there is no
    parent-death signal."""
    if _prctl is None or not sys.executable:
        return list(argv)
    return [sys.executable, "-I", "-S", "-c", _SHIM, str(os.getpid()), *argv]


def _kill_running() -> None:
    with _running_lock:
        groups = list(_running)
    for group in groups:
        try:
            os.killpg(group, signal.SIGKILL)
        except OSError:
            pass


@contextlib.contextmanager
def ended_by_signals(signals: tuple[str, ...] = ("SIGTERM", "SIGHUP")) -> Iterator[None]:
    """Inside: SIGTERM and SIGHUP kill every running process group and raise SystemExit(128 + n)
    in the main thread, so the build unwinds (cancelling the runs queued and under way) and its
    folders are removed. Only where the signal has its default action (ending the process on the
    spot, with nothing cleaned up); elsewhere, and outside the main thread, nothing changes."""
    if os.name != "posix" or threading.current_thread() is not threading.main_thread():
        yield
        return
    previous: dict[int, Any] = {}

    def end(number: int, _frame: object) -> None:
        _kill_running()
        raise SystemExit(128 + number)

    for number in (getattr(signal, name) for name in signals if hasattr(signal, name)):
        if signal.getsignal(number) is signal.SIG_DFL:
            previous[number] = signal.signal(number, end)
    try:
        yield
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)


@dataclass
class ProcessResult:
    """What happened when a command ran (or failed to start).

    `exit_code` follows `subprocess`: negative for death by signal (a killed
    child reports -9); None when the process never started or could not be reaped.
    """

    argv: list[str]
    exit_code: int | None
    stdout: bytes
    stderr: bytes
    timed_out: bool
    stdout_truncated: bool
    stderr_truncated: bool
    duration_s: float
    error: str | None = None  # e.g. "command not found: foo" when it could not start

    @property
    def ok(self) -> bool:
        """Started, finished in time, exited 0, nothing cut off."""
        return (
            self.error is None
            and not self.timed_out
            and self.exit_code == 0
            and not self.stdout_truncated
            and not self.stderr_truncated
        )


def scrubbed_env(
    extra_names: Iterable[str] = (),
    extra: Mapping[str, str] | None = None,
    drop_provider_vars: bool = False,
) -> dict[str, str]:
    """A minimal environment for a child process.

    The allowlisted names and `extra_names` are copied from `os.environ` when
    set, `PYTHONDONTWRITEBYTECODE=1` is added (example runs must not litter
    `__pycache__` into the user's repository), then `extra` is applied. With
    `drop_provider_vars`, every name matching `PROVIDER_VARS` is removed from the
    result, whichever way it got there.
    """
    env: dict[str, str] = {}
    for name in (*ENV_ALLOWLIST, *extra_names):
        value = os.environ.get(name)
        if value is not None:
            env[name] = value
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    if extra:
        env.update({str(k): str(v) for k, v in extra.items()})
    if drop_provider_vars:
        env = {k: v for k, v in env.items() if not PROVIDER_VARS.search(k)}
    return env


# --------------------------------------------------------------------------- launching

_BY_SUFFIX: dict[str, tuple[tuple[str, ...], ...]] = {
    ".sh": (("bash",), ("sh",)),
    ".bash": (("bash",),),
    ".zsh": (("zsh",),),
    ".js": (("node",),),
    ".mjs": (("node",),),
    ".ts": (("bun",), ("deno", "run"), ("tsx",)),
    ".rb": (("ruby",),),
    ".pl": (("perl",),),
    ".ps1": (("pwsh", "-NoProfile", "-File"), ("powershell", "-NoProfile", "-File")),
}


def _is_executable(path: Path) -> bool:
    if not path.is_file():
        return False
    if os.name == "nt":
        exts = os.environ.get("PATHEXT", ".COM;.EXE;.BAT;.CMD").lower().split(";")
        return path.suffix.lower() in exts
    return os.access(path, os.X_OK)


def interpreter_for(path: Path) -> list[str] | None:
    """The argv prefix that launches the implementation file `path` (speccify's rule).

    An executable file (other than `.ps1`) runs directly: `[str(path)]`.
    Otherwise the suffix picks the interpreter, the first one found on PATH
    (absolute path); `.py` always uses `sys.executable`. The file itself is the
    last element. None when nothing can launch it.
    """
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix != ".ps1" and _is_executable(path):
        return [str(path)]
    if suffix == ".py":
        exe = sys.executable
        return [os.path.abspath(exe), str(path)] if exe else None
    for candidate in _BY_SUFFIX.get(suffix, ()):
        found = shutil.which(candidate[0])
        if found:
            return [os.path.abspath(found), *candidate[1:], str(path)]
    return None


# --------------------------------------------------------------------------- running


def _start_error(exc: OSError, argv: list[str], cwd: Path) -> str:
    name = argv[0] if argv else ""
    if exc.filename is not None and str(exc.filename) == str(cwd) and str(cwd) != name:
        # subprocess reports a failed chdir with the directory as the filename
        return f"cannot use working directory {cwd}: {exc.strerror or exc}"
    if isinstance(exc, FileNotFoundError):
        return f"command not found: {name}"
    if isinstance(exc, PermissionError):
        return f"permission denied: {name}"
    if exc.errno == errno.ENOEXEC:
        return f"not an executable format (missing #! line?): {name}"
    return f"could not start {name}: {exc.strerror or exc}"


def _failed(argv: list[str], message: str, started: float) -> ProcessResult:
    return ProcessResult(
        argv=argv,
        exit_code=None,
        stdout=b"",
        stderr=b"",
        timed_out=False,
        stdout_truncated=False,
        stderr_truncated=False,
        duration_s=time.monotonic() - started,
        error=message,
    )


def run_process(
    argv: list[str],
    *,
    cwd: Path,
    stdin: bytes | None,
    timeout_s: float,
    env: dict[str, str],
    max_stdout: int = 1 << 20,
    max_stderr: int = 64 << 10,
    helper: bool = False,
    trace: spawner.Trace | None = None,
) -> ProcessResult:
    """Run `argv` (no shell) in `cwd` with exactly `env`; see the module docstring. `helper`,
    `trace`: see `start_process`."""
    argv = [os.fspath(a) for a in argv]
    started = time.monotonic()
    cancel = _CANCEL.get()
    if os.name != "posix" and argv and not (cancel is not None and cancel.is_set()):  # pragma: no cover - Windows fallback, untested
        return _run_simple(argv, cwd, stdin, timeout_s, env, max_stdout, max_stderr, started)
    begun = start_process(argv, cwd=cwd, env=env, piped=stdin is not None, helper=helper, trace=trace)
    if isinstance(begun, ProcessResult):
        return begun
    return begun.finish(stdin, timeout_s=timeout_s, max_stdout=max_stdout, max_stderr=max_stderr, since=started)


def start_process(argv: list[str], *, cwd: Path, env: dict[str, str], piped: bool = True,
                  helper: bool = False, trace: spawner.Trace | None = None) -> "Started | ProcessResult":
    """Start `argv` as `run_process` does, without waiting for it: a `Started` to `finish` (or
    `discard`), or the result of a start that failed. `piped`: its stdin is a pipe (else
    /dev/null). A run that is started ahead of its turn waits behind a gate of its own (the
    sandbox's: see sandbox/launch.py) until `finish` opens it (our tracer's, `Trace.held`) or
    writes the first line of its stdin (a shell's).
    `helper`: start it through the spawner (spawner.py: one exec, the same parent-death signal)
    where the spawner can take it, the old way elsewhere. `trace`: a bubblewrap run the spawner's
    own tracer watches (implies `helper`); where the spawner cannot take it, it starts the old way
    untraced, and its missing record makes the run "not observed", unless the tracer was to set its
    caps, move it into its control groups or hold it at its gate (`Trace.binding`): then it does
    not start at all (a start that failed)."""
    argv = [os.fspath(a) for a in argv]
    started = time.monotonic()
    if not argv:
        return _failed(argv, "empty command", started)
    cancel = _CANCEL.get()
    if cancel is not None and cancel.is_set():
        return _failed(argv, CANCELLED, started)
    if helper or trace is not None:
        spawned = _start_spawned(argv, cwd, env, piped, started, trace)
        if spawned is not None:
            return spawned
        if trace is not None and trace.binding:  # its caps, groups or gate are the tracer's: never without it
            return _failed(argv, f"could not start {argv[0]}: the build's spawner, which sets its caps, cannot start it", started)
    started_argv, preexec = _spawn_argv(argv, env)
    try:
        proc = subprocess.Popen(
            started_argv,
            cwd=cwd,
            env=env,
            stdin=subprocess.PIPE if piped else subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            shell=False,
            start_new_session=True,
            close_fds=True,
            bufsize=0,
            preexec_fn=preexec,
        )
    except OSError as exc:
        return _failed(argv, _start_error(exc, argv, Path(cwd)), started)
    except (ValueError, TypeError) as exc:  # e.g. an embedded NUL byte
        return _failed(argv, f"could not start {argv[0]}: {exc}", started)
    with _running_lock:  # one started in the moment a signal handler ran is stopped by the cancel instead
        _running.add(proc.pid)
    return Started(proc, argv)


def _start_spawned(argv: list[str], cwd: Path, env: dict[str, str], piped: bool, started: float,
                   trace: spawner.Trace | None = None) -> "Started | ProcessResult | None":
    """`argv` started by the spawner (spawner.py), where there is a parent-death signal for it to
    use; None: not taken (started the old way). The spawner's Popen raised what the build's would
    have, so a start that failed reads the same."""
    if _prctl is None:
        return None
    child = spawner.start(argv, os.fspath(cwd), dict(env), piped, trace)
    if child is None:
        return None
    if isinstance(child, OSError):
        return _failed(argv, _start_error(child, argv, Path(cwd)), started)
    if isinstance(child, ValueError):
        return _failed(argv, f"could not start {argv[0]}: {child}", started)
    with _running_lock:
        _running.add(child.pid)
    return Started(child, argv)


_Proc = Union["subprocess.Popen[bytes]", spawner.Child]


class Started:
    """A process `start_process` started: `finish` runs it to its end (once), `discard` ends it unused."""

    def __init__(self, proc: _Proc, argv: list[str]) -> None:
        self.proc = proc
        self.argv = argv
        self.done = False

    def finish(self, stdin: bytes | None, *, timeout_s: float, max_stdout: int = 1 << 20, max_stderr: int = 64 << 10,
               since: float | None = None, meanwhile: Callable[[], None] | None = None) -> ProcessResult:
        """Let a run held at our tracer's gate go (`spawner.Child.release`), write `stdin` (after the
        gate's line, when it waits behind a shell's gate instead: `stdin` then starts with it) and
        read until the end, as `run_process`; the deadline counts from `since` (default now).
        `meanwhile`: called on a thread of its own once the first of `stdin` is written (the tool is
        on its way) and waited for before this returns: other work that overlaps the run, while the
        run's pipes are read and its timeout counted as without it."""
        assert not self.done, "a started process is finished once"
        self.done = True
        started = time.monotonic() if since is None else since
        if isinstance(self.proc, spawner.Child):
            self.proc.release()  # a run started ahead behind our tracer's gate: its turn has come
        try:
            return _Runner(self.proc, self.argv, stdin, timeout_s, max_stdout, max_stderr, started, _CANCEL.get()).run(meanwhile)
        finally:
            with _running_lock:
                _running.discard(self.proc.pid)

    def discard(self) -> None:
        """End it unused: its whole group killed, the leader reaped, its pipes closed."""
        if self.done:
            return
        self.done = True
        if isinstance(self.proc, spawner.Child):
            self.proc.release(go=False)  # held at our tracer's gate: ended there, the tool never started
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except OSError:
            pass
        for stream in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            if stream is not None:
                try:
                    stream.close()
                except OSError:
                    pass
        try:
            self.proc.wait(timeout=_REAP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            pass
        with _running_lock:
            _running.discard(self.proc.pid)


class _Runner:
    """The selectors loop for one started process (POSIX)."""

    def __init__(self, proc: _Proc, argv: list[str], stdin: bytes | None,
                 timeout_s: float, max_stdout: int, max_stderr: int, started: float,
                 cancel: threading.Event | None = None) -> None:
        self.proc = proc
        self.cancel = cancel
        self.cancelled = False
        self.argv = argv
        self.started = started
        self.deadline = started + max(0.0, float(timeout_s))
        self.sel = selectors.DefaultSelector()
        self.out = bytearray()
        self.err = bytearray()
        self.caps = {"out": max(0, max_stdout), "err": max(0, max_stderr)}
        self.truncated = {"out": False, "err": False}
        self.timed_out = False
        self.killed_at: float | None = None
        self.leader_exited_at: float | None = None
        self.pending = memoryview(stdin or b"")
        self.pidfd: int | None = None

    # -- helpers

    def _kill_group(self) -> None:
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except OSError:  # already gone (ESRCH), or macOS's EPERM for a group of zombies
            pass
        if self.killed_at is None:
            self.killed_at = time.monotonic()
            self._close_stdin()

    def _close_stdin(self) -> None:
        stream = self.proc.stdin
        if stream is not None and not stream.closed:
            self._close_stream(stream)

    def _close_stream(self, stream: IO[bytes]) -> None:
        try:
            self.sel.unregister(stream)
        except (KeyError, ValueError):
            pass
        try:
            stream.close()
        except OSError:
            pass

    def _leader_exited(self) -> bool:
        """Has the leader exited? Does not reap it, so its pid stays reserved as our pgid."""
        if self.proc.returncode is not None:
            return True
        if isinstance(self.proc, spawner.Child):  # the spawner's child, not ours: its pidfd says
            return self.proc.exited()
        waitid = getattr(os, "waitid", None)
        if waitid is not None and hasattr(os, "WNOWAIT"):
            try:
                return waitid(os.P_PID, self.proc.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
            except ChildProcessError:
                return True
            except OSError:
                pass
        return self.proc.poll() is not None

    def _pipes_open(self) -> bool:
        return any(s is not None and not s.closed for s in (self.proc.stdout, self.proc.stderr))

    # -- the loop

    def _register(self) -> None:
        proc = self.proc
        for stream, tag in ((proc.stdout, "out"), (proc.stderr, "err")):
            assert stream is not None  # both are pipes (run_process)
            os.set_blocking(stream.fileno(), False)
            self.sel.register(stream, selectors.EVENT_READ, tag)
        if proc.stdin is not None:
            if len(self.pending):
                os.set_blocking(proc.stdin.fileno(), False)
                self.sel.register(proc.stdin, selectors.EVENT_WRITE, "in")
            else:
                self._close_stdin()
        pidfd_open = getattr(os, "pidfd_open", None)
        if pidfd_open is not None:
            try:
                self.pidfd = pidfd_open(proc.pid)
                self.sel.register(self.pidfd, selectors.EVENT_READ, "exit")
            except OSError:
                self.pidfd = None

    def _write_stdin(self, stream: IO[bytes]) -> None:
        try:
            n = os.write(stream.fileno(), self.pending[:_WRITE_CHUNK])
        except BlockingIOError:
            return
        except OSError:  # EPIPE: the child closed its stdin; the rest is not wanted
            self._close_stdin()
            return
        self.pending = self.pending[n:]
        if not len(self.pending):
            self._close_stdin()

    def _read(self, stream: IO[bytes], tag: str) -> None:
        try:
            chunk = os.read(stream.fileno(), _READ_CHUNK)
        except BlockingIOError:
            return
        except OSError:
            chunk = b""
        if not chunk:
            self._close_stream(stream)
            return
        if self.truncated[tag]:
            return  # the group is already being killed; drop the rest
        buf = self.out if tag == "out" else self.err
        room = self.caps[tag] - len(buf)
        if len(chunk) > room:
            buf += chunk[: max(0, room)]
            self.truncated[tag] = True
            self._kill_group()
        else:
            buf += chunk

    def _next_wait(self, now: float) -> float | None:
        """Seconds to wait in select(); None means the loop is done."""
        pipes_open = self._pipes_open()
        if self.killed_at is None and self.cancel is not None and self.cancel.is_set():
            self.cancelled = True
            self._kill_group()
            return 0.0
        if self.killed_at is not None:
            if not pipes_open or now - self.killed_at >= _DRAIN_GRACE_S:
                return None
            return min(_DRAIN_GRACE_S - (now - self.killed_at), _MAX_TICK_S)
        if self.leader_exited_at is None and self._leader_exited():
            self.leader_exited_at = now
        if self.leader_exited_at is not None:
            if not pipes_open:
                return None
            left = min(_LEFTOVER_GRACE_S - (now - self.leader_exited_at), self.deadline - now)
            if left <= 0:
                self._kill_group()  # leftovers hold the pipes open: end them
                return 0.0
            return min(left, _MAX_TICK_S)
        if now >= self.deadline:
            self.timed_out = True
            self._kill_group()
            return 0.0
        tick = _MAX_TICK_S if self.pidfd is not None else (0.1 if pipes_open else 0.01)
        return min(self.deadline - now, tick)

    def run(self, meanwhile: Callable[[], None] | None = None) -> ProcessResult:
        """The loop; `meanwhile` is called once the process has its first stdin (its gate open),
        while the loop goes on beside it (`_beside`): the process's pipes are read and written, and
        its time counted, as without it."""
        try:
            self._register()
            if meanwhile is None:
                self._loop()
            else:
                self._beside(meanwhile)
            exit_code = self._finish()
        finally:
            self._cleanup()
        return ProcessResult(
            argv=self.argv,
            exit_code=exit_code,
            stdout=bytes(self.out),
            stderr=bytes(self.err),
            timed_out=self.timed_out,
            stdout_truncated=self.truncated["out"],
            stderr_truncated=self.truncated["err"],
            duration_s=time.monotonic() - self.started,
            error=CANCELLED if self.cancelled else None,
        )

    def _beside(self, meanwhile: Callable[[], None]) -> None:
        """`meanwhile` on this thread, the loop on a thread of its own until both are done. Not the
        other way round: a process started with a parent-death signal (`_spawn_argv`) gets it when
        the thread that started it ends, so what `meanwhile` starts (a later run, started ahead)
        must be started by this long-lived thread."""
        stdin = self.proc.stdin
        if stdin is not None and not stdin.closed and len(self.pending):
            self._write_stdin(stdin)  # what fits in the pipe now: the gate's line and the input's start
        failed: list[BaseException] = []

        def loop() -> None:
            try:
                self._loop()
            except BaseException as exc:  # noqa: BLE001 - raised again on the calling thread
                failed.append(exc)

        reader = threading.Thread(target=loop, name="toolcatalog-reader", daemon=True)
        reader.start()
        try:
            meanwhile()
        finally:
            reader.join()
        if failed:
            raise failed[0]

    def _loop(self) -> None:
        """Select until the process is done: its output read, its input written, its deadline kept."""
        while True:
            wait = self._next_wait(time.monotonic())
            if wait is None:
                break
            for key, _mask in self.sel.select(max(0.0, wait)):
                tag = key.data
                if tag == "in":
                    self._write_stdin(cast(IO[bytes], key.fileobj))
                elif tag == "exit":
                    self.sel.unregister(key.fileobj)  # _next_wait notices the exit
                else:
                    self._read(cast(IO[bytes], key.fileobj), tag)

    def _finish(self) -> int | None:
        # Nothing of the group may outlive the run: kill leftovers while the
        # (unreaped) leader still reserves the group id, then reap the leader.
        self._kill_group()
        try:
            return self.proc.wait(timeout=_REAP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            return None

    def _cleanup(self) -> None:
        proc = self.proc
        for stream in (proc.stdin, proc.stdout, proc.stderr):
            if stream is not None and not stream.closed:
                self._close_stream(stream)
        if self.pidfd is not None:
            try:
                os.close(self.pidfd)
            except OSError:
                pass
            self.pidfd = None
        self.sel.close()
        if proc.returncode is None:  # an exception got us here: do not leave it running
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except OSError:
                pass
            try:
                proc.wait(timeout=_REAP_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                pass


def _run_simple(argv: list[str], cwd: Path, stdin: bytes | None, timeout_s: float, env: dict[str, str],  # pragma: no cover
                max_stdout: int, max_stderr: int, started: float) -> ProcessResult:
    """Windows: no process groups or non-blocking pipes; plain subprocess with a timeout."""
    timed_out = False
    try:
        done = subprocess.run(
            argv, cwd=cwd, env=env, input=stdin,
            stdin=subprocess.DEVNULL if stdin is None else None,
            capture_output=True, timeout=timeout_s, shell=False,
        )
        code, out, err = done.returncode, done.stdout or b"", done.stderr or b""
    except subprocess.TimeoutExpired as exc:
        timed_out, code = True, None
        out, err = exc.stdout or b"", exc.stderr or b""
    except OSError as exc:
        return _failed(argv, _start_error(exc, argv, Path(cwd)), started)
    return ProcessResult(
        argv=argv,
        exit_code=code,
        stdout=out[:max_stdout],
        stderr=err[:max_stderr],
        timed_out=timed_out,
        stdout_truncated=len(out) > max_stdout,
        stderr_truncated=len(err) > max_stderr,
        duration_s=time.monotonic() - started,
    )
