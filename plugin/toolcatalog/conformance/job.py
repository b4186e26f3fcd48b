"""What a format's planner hands the engine: a `Job`, built in a `Context`.

A planner turns one tool into a Job: the parts its result depends on (hashed
into the cache key) and the tasks to run, each starting at most a few
processes, plus `finish`, which turns the tasks' results into the facts the
verdict is decided from (`outcome.decided`). A Job may instead carry an outcome
decided without running anything (the tool is not applicable here, has no
examples, ...: `verdict.Blocked`).
"""

from __future__ import annotations

import contextlib
import contextvars
import os
import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator

from .. import sandbox as sandbox_mod
from ..sandbox import layout as sandbox_layout
from ..sandbox import limits as sandbox_limits
from ..model import Tool
from ..observed import Observed
from ..options import Options
from ..process import ProcessResult, Started, run_process, scrubbed_env, start_process
from ..scrub import Scrub, scrubber
from .outcome import Outcome

Task = Callable[[], Any]
# What the engine wants done while this thread's task runs its first process (`meanwhile`).
_MEANWHILE: contextvars.ContextVar[list[Callable[[], None]] | None] = contextvars.ContextVar("toolcatalog_meanwhile", default=None)


@contextlib.contextmanager
def meanwhile(work: Callable[[], None] | None) -> Iterator[None]:
    """Inside: the first process a task starts through `Context.run` calls `work` once that
    process is on its way (started ahead: its gate open), so `work` overlaps the run; when no such
    process starts, `work` is done on leaving. Exceptions of `work` are not the task's: ignored."""
    pending = [work] if work is not None else []
    token = _MEANWHILE.set(pending)
    try:
        yield
    finally:
        _MEANWHILE.reset(token)
        _do(pending)


def _do(pending: list[Callable[[], None]] | None) -> None:
    while pending:
        work = pending.pop()
        try:
            work()
        except Exception:  # noqa: BLE001 - the work is an optimisation (starting a later run ahead), never a failure
            pass


def _meanwhile_now() -> Callable[[], None] | None:
    """The pending `meanwhile` work, to be done by the caller (taken: done once)."""
    pending = _MEANWHILE.get()
    return (lambda: _do(pending)) if pending else None


@dataclass(frozen=True)
class Start:
    """The process a task starts first, when it is known before the task runs: its sandbox may then
    be set up ahead of the task's turn (`Context.start_ahead`), while another run goes on."""

    argv: tuple[str, ...]
    cwd: str
    env: tuple[tuple[str, str], ...]
    network: bool

    @staticmethod
    def of(argv: list[str], cwd: Path, env: dict[str, str], network: bool) -> "Start":
        return Start(tuple(argv), str(cwd), tuple(sorted(env.items())), network)


@dataclass
class Job:
    key_parts: list[Any]
    tasks: list[Task] = field(default_factory=list)
    finish: Callable[[list[Any]], Outcome] | None = None
    outcome: Outcome | None = None  # decided without running anything
    starts: list[Start | None] = field(default_factory=list)  # per task, what it starts first, when known (else None or no entry)


@dataclass
class Context:
    """Everything a planner may use besides the tool itself; one per build."""

    options: Options
    env: dict[str, str]  # for example processes
    tool_env: dict[str, str]  # for smart tools: provider variables removed too
    platform: str
    workspace: Path
    scrub: Scrub  # this machine's paths out of any text a run produces (see scrub.py)
    sandbox: sandbox_mod.Facts  # probed once per build
    roots: list[Path] = field(default_factory=list)  # folders searched outside the workspace (`paths: [../x]`)
    unseen: list[str] = field(default_factory=list)  # the build's own folders in the workspace: hidden from every run
    _ahead: dict[Start, list[tuple[sandbox_mod.Launch, Started]]] = field(default_factory=dict, repr=False)  # oldest first
    _ahead_lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _ahead_closed: bool = field(default=False, repr=False)  # `drop_ahead` was called: nothing more is started ahead

    def start_ahead(self, start: Start) -> None:
        """Start `start`'s sandbox now, gated: set up while other runs go on, its tool started only
        when a task runs that very process (`run`). Nothing where it cannot wait behind a gate."""
        facts = self.sandbox
        if facts.mechanism is None or facts.withheld or self._ahead_closed:
            return
        launch = sandbox_mod.prepare(facts, list(start.argv), cwd=Path(start.cwd), env=dict(start.env), workspace=self.workspace,
                                     network=start.network, hidden=list(self.unseen), roots=self.roots, gated=True)
        if launch.refusal or not (launch.gate or launch.held):
            launch.close()
            return
        try:
            begun = start_process(launch.argv, cwd=launch.cwd, env=launch.env, piped=True, helper=True, trace=launch.tracing)
        except BaseException:
            launch.close()
            raise
        if not isinstance(begun, Started):
            launch.close()
            return
        with self._ahead_lock:
            kept = not self._ahead_closed
            if kept:
                self._ahead.setdefault(start, []).append((launch, begun))
        if not kept:  # the check ended while this was set up (an interrupted check's worker)
            _drop((launch, begun))

    def drop_ahead(self) -> None:
        """End every run started ahead that no task took (the check is over, or was interrupted),
        and any start ahead still under way once it is set up: nothing is started ahead after this."""
        with self._ahead_lock:
            self._ahead_closed = True
            left, self._ahead = [item for items in self._ahead.values() for item in items], {}
        for item in left:
            _drop(item)

    def _take_ahead(self, argv: list[str], cwd: Path, env: dict[str, str], network: bool,
                    plain: bool) -> tuple[sandbox_mod.Launch, Started] | None:
        if not plain or not self._ahead:
            return None
        key = Start.of(argv, cwd, env, network)
        with self._ahead_lock:
            waiting = self._ahead.get(key)
            if not waiting:
                return None
            item = waiting.pop(0)
            if not waiting:
                del self._ahead[key]
            return item

    def run(self, argv: list[str], *, cwd: Path, stdin: bytes | None, timeout_s: float, env: dict[str, str],
            network: bool = False, hidden: list[str] | None = None, reads: list[Path] | None = None,
            programs: list[str] | None = None) -> "Spawned":
        """Run one process, in the sandbox when the build has one (`run_process` otherwise)."""
        facts = self.sandbox
        cap = self.options.max_output_bytes
        if facts.withheld:  # the engine refuses such tools first; never run them anyway
            return Spawned(ProcessResult(argv, None, b"", b"", False, False, False, 0.0, error=f"not run: {facts.reason}"), None, None)
        if facts.mechanism is None:
            return Spawned(run_process(argv, cwd=cwd, stdin=stdin, timeout_s=timeout_s, env=env, max_stdout=cap, helper=True), None, None)
        ahead = self._take_ahead(argv, cwd, env, network, stdin is not None and not hidden and reads is None and programs is None)
        if ahead is not None:  # started ahead, waiting behind its gate: let it go
            launch, begun = ahead
            with launch:
                result = begun.finish(launch.gate + (stdin or b""), timeout_s=timeout_s, max_stdout=cap, meanwhile=_meanwhile_now())
                observed = launch.observe() if result.error is None else None
                hit = _caps_hit(launch, result)
            result.argv = list(argv)
            _say_limit(result, facts, hit, launch.stopped)
            return Spawned(result, launch.mechanism if result.error is None else None, observed)
        _do(_MEANWHILE.get())  # not started ahead: the work waits no longer (it is this run's neighbour's)
        with sandbox_mod.prepare(facts, argv, cwd=cwd, env=env, workspace=self.workspace, network=network, hidden=[*(hidden or []), *self.unseen],
                                 roots=self.roots, reads=reads, programs=programs) as launch:
            if launch.refusal:  # its program or folder lies outside what the sandbox shows
                return Spawned(ProcessResult(list(argv), None, b"", b"", False, False, False, 0.0, error=launch.refusal), None, None)
            result = run_process(launch.argv, cwd=launch.cwd, stdin=stdin, timeout_s=timeout_s, env=launch.env, max_stdout=cap,
                                 helper=True, trace=launch.tracing)
            observed = launch.observe() if result.error is None else None
            hit = _caps_hit(launch, result)
        result.argv = list(argv)
        _say_limit(result, facts, hit, launch.stopped)
        return Spawned(result, launch.mechanism if result.error is None else None, observed)

    @contextlib.contextmanager
    def launch(self, argv: list[str], *, cwd: Path, env: dict[str, str], network: bool = False,
               hidden: list[str] | None = None, reads: list[Path] | None = None) -> Iterator[sandbox_mod.Launch | None]:
        """For processes started by someone else (the MCP SDK): the sandboxed command line to
        start, or None when the build has no sandbox. Its folders are removed at the end."""
        if self.sandbox.mechanism is None:
            yield None
            return
        with sandbox_mod.prepare(self.sandbox, argv, cwd=cwd, env=env, workspace=self.workspace, network=network,
                                 hidden=[*(hidden or []), *self.unseen], roots=self.roots, reads=reads, ours=False) as launch:
            yield launch

    def timeout_for(self, tool_timeout_ms: int | None = None) -> float:
        timeout = float(self.options.timeout)
        if tool_timeout_ms:
            timeout = min(timeout, tool_timeout_ms / 1000.0)
        return max(timeout, 0.05)


def _caps_hit(launch: sandbox_mod.Launch, result: ProcessResult) -> list[str]:
    """The caps the run's control groups say it reached, read only where they can matter: a run
    that exited 0 (or never started) is said to have hit none (limits.reason)."""
    return launch.caps_hit() if result.exit_code not in (None, 0) else []


def _drop(item: tuple[sandbox_mod.Launch, Started]) -> None:
    launch, begun = item
    begun.discard()
    launch.close()


def _say_limit(result: ProcessResult, facts: sandbox_mod.Facts, hit: list[str], stopped: str = "") -> None:
    """A run that hit a resource cap, or a process of which the tracer ended (`stopped`: a 32-bit
    system call), says so as the last line of its stderr (failure details quote it)."""
    nproc = facts.nproc if facts.limiter is not None or facts.nproc == sandbox_limits.CGROUP else ""
    why = stopped or sandbox_limits.reason(result.exit_code, result.stderr, facts.caps, nproc, hit)
    if why:
        result.stderr = result.stderr.rstrip(b"\n") + f"\ntoolcatalog: {why}\n".encode()


@dataclass
class Spawned:
    """A finished process: its result, the sandbox it ran in (None: none) and what it was seen to do."""

    result: ProcessResult
    mechanism: str | None
    observed: Observed | None


Planner = Callable[[Tool, Context], Job]


def current_platform() -> str:
    """speccify's platform names: darwin -> macos, win* -> windows, everything else -> linux."""
    if sys.platform == "darwin":
        return "macos"
    if sys.platform.startswith("win"):
        return "windows"
    return "linux"


def make_context(options: Options, workspace: Path, sandbox: sandbox_mod.Facts | None = None) -> Context:
    """The build's context; the sandbox is probed here (once per build) unless given."""
    facts = configured(sandbox if sandbox is not None else sandbox_mod.probe(options.sandbox), options)
    return Context(
        options=options,
        env=sandboxed_path(scrubbed_env(options.env), facts, workspace),
        tool_env=sandboxed_path(scrubbed_env(options.env, drop_provider_vars=True), facts, workspace),
        platform=current_platform(),
        workspace=workspace,
        scrub=scrubber(workspace, [workspace / p for p in options.paths]),
        sandbox=facts,
        roots=[workspace / p for p in options.paths if (workspace / p).is_dir()],
    )


def sandboxed_path(env: dict[str, str], facts: sandbox_mod.Facts, workspace: Path) -> dict[str, str]:
    """`env` with the PATH a sandboxed run can use (layout.sandbox_path), when there is a sandbox."""
    if facts.mechanism is None:
        return env
    return {**env, "PATH": sandbox_layout.sandbox_path(env.get("PATH", ""), os.path.realpath(workspace))}


def configured(facts: sandbox_mod.Facts, options: Options) -> sandbox_mod.Facts:
    """The probed sandbox with what this build's options make visible and the caps they set."""
    view = options.sandbox_workspace
    setting, extra = (view, ()) if isinstance(view, str) else ("tool", tuple(view))
    caps = sandbox_limits.Limits(options.sandbox_memory_mb, options.sandbox_processes, options.sandbox_file_mb)
    return facts.configured(setting, extra, caps)
