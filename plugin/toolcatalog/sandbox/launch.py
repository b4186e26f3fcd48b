"""One sandboxed run: its host-side folder, its command line, and what it was seen to do.

    with prepare(facts, argv, cwd=..., env=..., workspace=..., network=False) as launch:
        result = run_process(launch.argv, cwd=launch.cwd, env=launch.env, ...)
        observed = launch.observe()

`prepare` creates the run's host-side folder (inside this build's folder for runs, in /dev/shm or
the system temp folder, never in the repository; see `runfolders`): `tmp` and `scratch`, the writable places the tool sees as `/tmp` and `/scratch`,
`work`, a copy of the working folder when it is small enough, `empty`, used to hide folders, and
the trace: strace's log, or our own tracer's record (`Launch.tracing`: the run must then be started
with it, by the spawner, which writes the record once the run is reaped). `observe` compares the
writable places with their state before the run and reads the trace. Leaving the `with` block
deletes the folder: nothing the tool wrote survives it.
"""

from __future__ import annotations

import atexit
import os
import queue
import tempfile
import threading
from dataclasses import dataclass, field
from pathlib import Path

from .. import shellenv, spawner
from ..observed import ELSEWHERE, SCRATCH, WORKSPACE, Connection, FileChange, Observed
from . import backends, bwrap, cgroup, execs, landlock_launcher, layout, limits, nofollow, runfolders, trace, tree, view
from .probe import OWN_TRACER, Facts, launcher_argv, tracer_trace


REFUSALS = "refused.log"  # the Landlock launcher's record of refused socket calls, in the run's host folder


@dataclass
class _Area:
    host: Path  # the folder on the host
    inside: str  # where the tool sees it
    hash_files: bool  # it had files before the run (a copy): compare contents
    before: tree.Picture = field(default_factory=dict)
    cut: bool = False


@dataclass
class Launch:
    argv: list[str]
    env: dict[str, str]
    cwd: Path  # where to start the launcher (a host folder that exists)
    mechanism: str
    network: bool
    workspace: str
    root: Path  # the run's host-side folder
    areas: list[_Area]
    log: Path | None  # the strace log, when traced
    scratch_host: str  # the host path the tool sees as /scratch (Landlock: the same path)
    cwd_inside: str  # the working folder as the tool sees it
    roots: list[str] = field(default_factory=list)  # folders searched outside the workspace: "workspace" too
    refusal: str = ""  # why the run must not start (its program or folder is not in its view); "" to start it
    launcher_execs: int = 1  # successful execve calls before the tool's own (see trace.parse): bwrap or the launcher, prlimit, the exec limiter
    group: cgroup.Group | None = None  # the run's control groups, which cap its process count and memory
    command: list[str] = field(default_factory=list)  # the tool's own command, as given
    own: list[str] | None = None  # the files an execve of its own start names (None: not known, see execs.own_start)
    exec_limit: str = ""  # "enforced" when only the allowed programs can be executed, else why not ("": no limit)
    gate: bytes = b""  # started ahead of its turn (`prepare(gated=True)`) behind a shell: the tool starts once this is written to its stdin
    held: bool = False  # started ahead of its turn behind our tracer's gate: the tool starts once `Started.finish` lets it go
    rlimits: tuple[tuple[int, int], ...] = ()  # the caps our tracer sets before bubblewrap starts the tool (limits.rlimits)
    record: Path | None = None  # our own tracer's record (ptracer.py), when it watches the run
    tracing: spawner.Trace | None = None  # how the spawner starts and traces it (with `record`); None: no own tracer
    stopped: str = ""  # after `observe`: why the tracer ended a process of the tool ("" when it did not)

    @property
    def tracer(self) -> str:
        """Who watches this run: probe.OWN_TRACER, "strace" or "" (nobody)."""
        return OWN_TRACER if self.record is not None else ("strace" if self.log is not None else "")

    def __enter__(self) -> "Launch":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """The run's folder and control groups removed, on the cleanup thread (`flush` waits for
        it): a group is removed only once its last process is gone, which after a kill can take a
        moment the next run need not wait for."""
        group, self.group = self.group, None
        _discard(self.root, group)

    def caps_hit(self) -> list[str]:
        """The caps its control groups say the run reached (cgroup.PIDS, cgroup.MEMORY)."""
        return self.group.hit() if self.group is not None else []

    def _seen_as(self, path: str) -> str:
        """The path as a reader should see it: the scratch folder is /scratch whatever the mechanism."""
        if self.scratch_host != layout.SCRATCH and (path == self.scratch_host or path.startswith(self.scratch_host + "/")):
            return layout.SCRATCH + path[len(self.scratch_host):]
        return path

    def _change(self, inside: str, change: str, error: str = "") -> FileChange:
        path = self._seen_as(inside)
        if path == layout.SCRATCH or path.startswith(layout.SCRATCH + "/"):
            return FileChange(path, SCRATCH, change, error)
        if any(_below(path, root) for root in (self.workspace, *self.roots)):
            return FileChange(os.path.relpath(path, self.workspace), WORKSPACE, change, error)
        return FileChange(path, ELSEWHERE, change, error)

    def observe(self) -> Observed:
        """What the run did, from the folders it could write and (when traced) its system calls."""
        files: list[FileChange] = []
        diffed: set[str] = set()
        truncated = False
        for area in self.areas:
            after, cut = tree.picture(area.host, hash_files=False)
            truncated = truncated or cut or area.cut  # a folder too large to compare: changes may be missed
            for rel, change in tree.changes(area.before, after, area.host):
                inside = _text(os.path.normpath(os.path.join(area.inside, rel)))
                diffed.add(inside)
                files.append(self._change(inside, change))
        observed = Observed(traced=self.tracer != "", files=files, incomplete=truncated)
        seen = None
        if self.record is not None:
            seen = trace.load_record(self.record)
        elif self.log is not None:
            seen = trace.parse(self.log, launcher_execs=self.launcher_execs, cwd=self.cwd_inside, max_bytes=trace.MAX_LOG_BYTES)
        if seen is not None:
            observed.incomplete = observed.incomplete or seen.lost
            self.stopped = seen.stopped
            self._add_trace(observed, seen, diffed)
        self._add_refusals(observed)
        observed.cap()
        return observed

    def _add_trace(self, observed: Observed, seen: trace.Seen, diffed: set[str]) -> None:
        # Each file once (found in constant time): the comparison's change, else the attempt that
        # says the least (one that wrote over one that failed: never "nothing was written" for a
        # file a later call wrote).
        known: dict[tuple[str, str], int] = {(f.path, f.where): -1 for f in observed.files}
        ordered = sorted(diffed)  # what lies below a path follows it in order (a write per lookup, not per change)
        for write in seen.writes:
            path = write.path
            if layout.quiet_write(path) or path in diffed or tree.holds(ordered, path):
                continue
            located = self._change(path, *_attempt(write, self._writable(path), self.mechanism == "bwrap"))
            key = (located.path, located.where)
            index = known.get(key)
            if index is None:
                known[key] = len(observed.files)
                observed.files.append(located)
            elif index >= 0 and _WEAKER.index(located.change) > _WEAKER.index(observed.files[index].change):
                observed.files[index] = located
        kept = {(c.address, c.allowed, c.contained) for c in observed.connections}  # each once, found in constant time
        for address, error in seen.connections:
            if address.startswith("unix:/") and self._private(address[len("unix:"):]):
                continue  # a socket the tool made in its own throwaway folders
            item = Connection(address, self.network, contained=self._contained(address, error))
            if (item.address, item.allowed, item.contained) not in kept:
                kept.add((item.address, item.allowed, item.contained))
                observed.connections.append(item)
        observed.programs = [self._seen_as(p) for p in seen.programs]
        observed.spawned = [self._seen_as(p) for p in execs.spawned(seen.execs, seen.spawned, self.command, self.own)]
        observed.refused = [self._seen_as(p) for p in seen.refused]

    def _add_refusals(self, observed: Observed) -> None:
        """The socket calls the Landlock launcher's filter refused (strace cannot see those)."""
        record = self.root / REFUSALS
        try:
            lines = record.read_text(encoding="utf-8", errors="replace").splitlines()[:landlock_launcher.MAX_RECORDED] if self.mechanism == "landlock" else []
        except OSError:
            lines = []
        for line in lines:
            if line.strip() == "socket:unix":
                # Refused before it had an address, and system libraries try one routinely (glibc
                # asks nscd at every user lookup: bash does at start): nothing happened, no report.
                continue
            item = Connection(line.strip()[:100], self.network, contained=True)
            if item.address and item not in observed.connections:
                observed.connections.append(item)

    def _contained(self, address: str, error: str) -> bool:
        """Whether the sandbox provably kept a connection from leaving: refused (EACCES, EPERM:
        Landlock's answer; a failure such as EINPROGRESS proves nothing), or inside bubblewrap's
        own network namespace (which holds abstract Unix sockets too, not path ones, nor VM sockets)."""
        if error in ("EACCES", "EPERM"):
            return True
        return self.mechanism == "bwrap" and not self.network and not address.startswith(("unix:/", "vsock:"))

    def _writable(self, path: str) -> bool:
        """Whether the sandbox lets the run write at `path`: its own throwaway folders, and
        bubblewrap's private /dev/shm."""
        return self._private(path) or (self.mechanism == "bwrap" and _below(os.path.normpath(path), "/dev/shm"))

    def _private(self, path: str) -> bool:
        """Whether a path lies in the run's own throwaway folders, where it may write (so a Unix
        socket there is one the tool made)."""
        path = os.path.normpath(path)
        if any(_below(path, place) for place in (self.scratch_host, layout.SCRATCH, *(a.inside for a in self.areas if a.hash_files))):
            return True
        # bubblewrap's /tmp is private, except for the host folders shown inside it (a workspace below /tmp).
        shown = (self.workspace, *self.roots)
        return self.mechanism == "bwrap" and _below(path, "/tmp") and not any(_below(path, folder) for folder in shown)


# The errors that are the sandbox's refusal where the tool sees the host's own folders (Landlock):
# a read-only mount, Landlock's answer, a permission. There any other failure is the call's own
# (`ENOENT`: no such folder, on the host as in the run).
REFUSED_WRITE = ("EROFS", "EACCES", "EPERM")
# A traced write's changes, from the strongest claim to the weakest (`_add_trace` keeps the weakest).
_WEAKER = ("failed", "blocked", "unknown", "temporary")


def _attempt(write: trace.Write, writable: bool, own_view: bool) -> tuple[str, str]:
    """What a traced write the comparison did not find was, and the error it failed with: written and
    left no trace in a writable place (or written in a private in-sandbox folder such as /dev/shm):
    `temporary`; its call never returned (or was cut short by a signal: `ERESTART*`, which no
    program ever sees): `unknown`; failed in a place the sandbox lets the run write (`writable`):
    `failed`, whatever the error (a file's own mode gives `EACCES` there); failed anywhere else:
    `blocked` where the run sees a view of its own (`own_view`, bubblewrap: a few host folders bound
    read-only, the rest absent or empty, so `.git/hooks/x` or `/var/tmp/x` fail with `ENOENT` or a
    rename onto a read-only file with `EXDEV` because of the sandbox), else by the error: refused
    (`REFUSED_WRITE`) `blocked`, otherwise `failed`."""
    if write.ok:
        return "temporary", ""
    if write.error == trace.UNFINISHED or write.error.startswith("ERESTART"):
        return "unknown", ""
    if writable:
        return "failed", write.error
    if own_view or write.error in REFUSED_WRITE:
        return "blocked", ""
    return "failed", write.error


# Removing a run's folder is slow on some filesystems (overlayfs: milliseconds per folder), and its
# control groups can be removed only once the last of its killed processes is gone, so both happen
# on a thread of its own instead of delaying the next run; `flush` waits for it. The folder
# holds whatever the tool left (links, chains thousands of levels deep, unreadable folders), so the
# removal never follows a link, never recurses, and a failure is noted, never the end of the thread.
_trash: "queue.Queue[tuple[Path, cgroup.Group | None]]" = queue.Queue()
_remover: threading.Thread | None = None
_remover_lock = threading.Lock()
_left: list[str] = []  # what could not be removed, for the build log


def _remove_forever() -> None:
    while True:
        folder, group = _trash.get()
        try:
            if group is not None:
                group.remove()
            problem = nofollow.remove(str(folder))
        except Exception as exc:  # noqa: BLE001 - the thread must live on, or `flush` waits forever
            problem = f"{folder}: {type(exc).__name__}: {exc}"
        finally:
            _trash.task_done()
        if problem:
            _left.append(f"a run's throwaway folder is not fully removed: {problem}")


def _discard(folder: Path, group: cgroup.Group | None = None) -> None:
    global _remover
    with _remover_lock:
        if _remover is None:
            _remover = threading.Thread(target=_remove_forever, name="toolcatalog-sandbox-cleanup", daemon=True)
            _remover.start()
    _trash.put((folder, group))


def flush() -> list[str]:
    """Wait until every finished run's folder is removed (the engine calls this at the end); what
    could not be removed since the last call."""
    _trash.join()
    notes, _left[:] = list(_left), []
    return notes


def _at_exit() -> None:
    flush()
    runfolders.release()


atexit.register(_at_exit)


def _text(path: str) -> str:
    """A name the tool gave, as text: bytes that are not UTF-8 (surrogates from the folder listing)
    replaced by U+FFFD, as both tracers report them; a surrogate would make the run's result
    unwritable (an internal error instead of what was caught)."""
    return path.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def _below(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def prepare(
    facts: Facts,
    command: list[str],
    *,
    cwd: Path,
    env: dict[str, str],
    workspace: Path,
    network: bool,
    hidden: list[str] | None = None,
    roots: list[Path] | None = None,
    reads: list[Path] | None = None,
    programs: list[str] | None = None,
    gated: bool = False,
    ours: bool = True,
) -> Launch:
    """Get one run ready. `facts.mechanism` must not be None. `roots`: folders searched for
    manifests besides the workspace (the run may lie in one); `reads`: folders of the workspace the
    run sees besides its working folder (see view.py); `programs`: the only programs it may start
    besides its own command (`exec.allow`; None: any). When `Launch.refusal` is set, do not start it.
    `gated`: the run may be started ahead of its turn, its sandbox set up while another run goes on;
    where that can be done (bubblewrap) it waits behind a gate and the tool itself starts only once
    the gate opens: `Launch.held`, our tracer's (`Started.finish` opens it), else `Launch.gate`, the
    line to write to its stdin before its input, which a shell reads (where one keeps the environment).
    `ours`: the build starts the run (`process.run_process(..., trace=launch.tracing)`), so our own
    tracer may watch it; False for a process something else starts (strace then, where it works)."""
    assert facts.mechanism is not None
    ws = os.path.realpath(workspace)
    here = os.path.realpath(cwd)
    hidden = [os.path.realpath(p) for p in (hidden or [])]
    outside = sorted({os.path.realpath(r) for r in (roots or []) if not _below(os.path.realpath(r), ws) and os.path.isdir(r)})
    hidden += [os.path.join(r, ".git") for r in outside if os.path.lexists(os.path.join(r, ".git"))]
    root = Path(tempfile.mkdtemp(prefix="run-", dir=runfolders.folder()))
    try:
        return _prepare(facts, command, root, here, env, ws, network, hidden, outside, [str(r) for r in reads or []], programs,
                        gated, ours)
    except BaseException:
        nofollow.remove(str(root))  # nothing half-made is left behind
        raise


def _visible(facts: Facts, command: list[str], env: dict[str, str], here: str, ws: str, outside: list[str],
             reads: list[str]) -> tuple[list[str], str]:
    """The folders the run sees besides the system (program folders and its view of the
    workspace), and why it must not start ("" when it may)."""
    seen = view.workspace_view(facts.workspace, facts.workspace_extra, ws, outside, here, reads)
    visible = [*layout.program_folders(ws), *seen.folders]
    if here not in seen.folders and not any(_below(here, f) for f in seen.folders):
        return visible, "not run: its folder is a link that leads out of the workspace, which the sandbox does not show"
    return visible, layout.unseen_program(command[0], env.get("PATH", ""), visible) or ""


def _prepare(facts: Facts, command: list[str], root: Path, here: str, env: dict[str, str], ws: str, network: bool,
             hidden: list[str], outside: list[str], reads: list[str], programs: list[str] | None = None,
             gated: bool = False, ours: bool = True) -> Launch:
    for name in ("tmp", "scratch", "scratch/tmp", "scratch/home", "work", "empty"):
        (root / name).mkdir(mode=0o700, exist_ok=True)
    visible, refusal = _visible(facts, command, env, here, ws, outside, reads)
    own = facts.watcher(ours) == OWN_TRACER
    log = root / "trace.log" if facts.tracer and not own else None
    if refusal:  # nothing to start: a command that only says why (for callers that start it anyway)
        said = ["/bin/sh", "-c", 'echo "toolcatalog: $1" >&2; exit 126', "sh", refusal]
        return Launch(said, dict(env), root, facts.mechanism or "", network, ws, root, [], None, layout.SCRATCH, here,
                      refusal=refusal)
    own_start = execs.own_start(command, env.get("PATH", ""))
    limit, allowed = execs.limit(facts, command, env.get("PATH", ""), own_start, programs)
    start = backends.resolve(backends.get(facts.mechanism).prepare)  # the backend's own part (backends.py)
    launch: Launch = start(facts, command, here, env, ws, root, visible, network, log, hidden, allowed, gated=gated, own=own)
    launch.roots, launch.refusal = outside, refusal
    launch.command, launch.own, launch.exec_limit = list(command), own_start[1] if own_start else None, limit
    _enter_group(launch, facts, shell=not own)
    if own:
        # Our tracer sees no exec before the sandbox's own (bubblewrap's is the launcher's first),
        # and it moves bubblewrap's child into the run's groups itself (no shell before bubblewrap).
        launch.record = root / "trace.json"
        groups = tuple(launch.group.folders.values()) if launch.group is not None else ()
        launch.tracing = tracer_trace(launch.record, 0, launch.launcher_execs - 1, groups, launch.rlimits, launch.held)
    for area in launch.areas:
        area.before, area.cut = tree.picture(area.host, hash_files=area.hash_files)
    return launch


def start_landlock(facts: Facts, command: list[str], here: str, env: dict[str, str], ws: str, root: Path,
                   visible: list[str], network: bool, log: Path | None, hidden: list[str], allowed: list[str] | None,
                   gated: bool = False, own: bool = False) -> Launch:
    """The Landlock backend's part of `prepare`: prlimit inside the launcher (never gated: it starts in its turn)."""
    limited = limits.wrap(command, facts.caps, facts.limiter, facts.nproc)
    if allowed is not None and limited is not command:
        allowed = [*allowed, os.path.realpath(limited[0])]  # prlimit starts the tool inside the launcher
    launch = _landlock(facts, limited, here, env, ws, root, visible, network, log, hidden, allowed)
    launch.launcher_execs += limited is not command
    return launch


def start_bubblewrap(facts: Facts, command: list[str], here: str, env: dict[str, str], ws: str, root: Path,
                     visible: list[str], network: bool, log: Path | None, hidden: list[str], allowed: list[str] | None,
                     gated: bool = False, own: bool = False) -> Launch:
    """The bubblewrap backend's part of `prepare`: the exec limiter inside bubblewrap, and the caps:
    set by our tracer (`own`: `_held`), else by dash's `ulimit` or prlimit (`limits.shell_wrap`)
    inside bubblewrap."""
    inner = execs.limited(command, allowed) if allowed is not None else command
    tool_env = layout.scratch_env(env)
    if own:
        return _held(facts, inner, here, env, ws, root, visible, network, hidden, gated, tool_env, inner is not command)
    gated = gated and limits.gate_possible(tool_env)
    limited = limits.shell_wrap(inner, facts.caps, facts.limiter, facts.nproc, tool_env, limits.shell(), gated)
    launch = _bubblewrap(facts, limited, here, env, ws, root, visible, network, log, hidden)
    launch.gate = limits.GATE if gated else b""
    launch.launcher_execs += (inner is not command) + (limited is not inner)  # the exec limiter's and the caps' (dash or prlimit) own starts
    return launch


def _held(facts: Facts, command: list[str], here: str, env: dict[str, str], ws: str, root: Path, visible: list[str],
          network: bool, hidden: list[str], gated: bool, tool_env: dict[str, str], limited: bool) -> Launch:
    """bubblewrap starting the tool itself, traced by ours: the caps set by the tracer with
    prlimit(2) before bubblewrap's child is let go, and a run started ahead held there until its
    turn (no shell in front of the tool, no gate line on its stdin). Where dash would have stood in
    front of the tool (`shell_wrap`: a gate, or caps, and an environment it keeps) the tool gets its
    environment in the order dash handed it on, PWD included, as before (`shellenv.dash_order`)."""
    launch = _bubblewrap(facts, command, here, env, ws, root, visible, network, None, hidden)
    launch.rlimits = limits.rlimits(facts.caps, facts.limiter, facts.nproc)
    launch.held = gated
    if limits.shell() is not None and shellenv.kept(tool_env) and (gated or launch.rlimits):
        launch.env = shellenv.dash_order({**launch.env, "PWD": here})  # bubblewrap sets PWD in place
    launch.launcher_execs += limited  # the exec limiter's own start
    return launch


def _bubblewrap(facts: Facts, command: list[str], cwd: str, env: dict[str, str], ws: str, root: Path,
                visible: list[str], network: bool, log: Path | None, hidden: list[str]) -> Launch:
    copied = layout.fits_copy(Path(cwd))
    if copied:
        layout.copy_folder(Path(cwd), root / "work")
    _make_mount_points(bwrap.mount_points(cwd, ws, visible, hidden), [("/tmp", root / "tmp")] + ([(cwd, root / "work")] if copied else []))
    argv = bwrap.argv(facts.program, facts.variant, command, cwd=cwd, workspace=ws, host=root, copied=copied,
                      visible=visible, hidden=hidden, network=network, masked=_masked(ws, visible))
    areas = [_Area(root / "tmp", "/tmp", False), _Area(root / "scratch", layout.SCRATCH, False)]
    if copied:
        areas.append(_Area(root / "work", cwd, True))
    if log is not None:
        argv = trace.wrap(facts.tracer or "strace", log, argv, refuse_filters=True)
    return Launch(argv, layout.scratch_env(env), root, "bwrap", network, ws, root, areas, log, layout.SCRATCH, cwd)


def _make_mount_points(points: list[str], writable: list[tuple[str, Path]]) -> None:
    """Mount points bubblewrap would create inside a writable folder: made now, so they are not
    mistaken for the tool's writes. The copy of the working folder holds the repository's links,
    which point elsewhere from the copy than from the original: nothing is made through a link."""
    for point in points:
        for base, host in writable:
            if point.startswith(base.rstrip("/") + "/"):
                nofollow.make_inside(str(host), os.path.relpath(point, base), os.path.isdir(point))


def _enter_group(launch: Launch, facts: Facts, shell: bool = True) -> None:
    """Start the run inside control groups of its own where they cap its processes or memory
    (cgroup.py): entered by a shell before the launcher, or (`shell=False`) by our tracer, which
    moves bubblewrap's child into them before letting it go (`spawner.Trace.groups`)."""
    processes = facts.caps.processes if facts.nproc == limits.CGROUP else 0
    memory = facts.caps.memory_mb if facts.memory_group else 0
    if processes or memory:
        launch.group = cgroup.create(processes, memory)
        if launch.group is not None and shell:
            launch.argv = launch.group.argv(launch.argv, launch.env)


def _masked(ws: str, visible: list[str]) -> list[str]:
    """The workspace, unless the run sees all of it (bwrap.argv: `masked`)."""
    return [] if any(_below(ws, folder) for folder in visible) else [ws]


def _landlock(facts: Facts, command: list[str], cwd: str, env: dict[str, str], ws: str, root: Path,
              visible: list[str], network: bool, log: Path | None, hidden: list[str], allowed: list[str] | None = None) -> Launch:
    scratch = str(root / "scratch")
    argv = launcher_argv()
    reads = [*layout.SYSTEM, *("/" + n for n in layout.USR_MERGE), *("/etc/" + n for n in layout.ETC_SUBSET),
             *visible, "/dev/urandom", "/dev/random"]
    for path in reads:
        if os.path.lexists(path):
            argv += ["--ro", path]
    for path in [os.path.join(ws, ".git"), *hidden]:
        argv += ["--hide", path]
    argv += ["--rw", scratch, "--rw", "/dev/null", "--rw", "/dev/zero", "--rw", "/dev/full"]
    if network:
        argv.append("--net")
    for path in allowed if allowed is not None else []:
        argv += ["--exec", path]
    argv += ["--refusals", str(root / REFUSALS)]
    argv += ["--cwd", cwd, "--", *command]
    if log is not None:
        argv = trace.wrap(facts.tracer or "strace", log, argv)
    env = layout.scratch_env(env, tmpdir=scratch + "/tmp", home=scratch + "/home")
    areas = [_Area(root / "scratch", scratch, False)]
    return Launch(argv, env, root, "landlock", network, ws, root, areas, log, scratch, cwd)

