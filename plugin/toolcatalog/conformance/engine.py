"""Running every tool's examples and checks: plan, reuse (results files, cache), run, settle.

Each format module turns a tool into a `Job`: the parts its result depends on
(hashed into the cache key) and a list of tasks, each starting at most a few
processes. Tasks of all tools run together on one thread pool. A finished job
yields an *outcome* (`outcome.Outcome`, its status decided by `verdict.decide`),
which goes through the same codec as what the cache stores before it is the only
thing applied to the model, so a cached result and a fresh one render and export
identically.

Failure policy: a task or a `finish` that raises, or a planner that does, makes
that one tool `error` with the internal error named (its examples and the rules
it would have checked too; a static rule that already failed keeps it `failed`);
every other tool is still checked. An outcome the codec refuses, fresh or reused,
is never applied: reused it is a miss, fresh it is such an internal error. Ctrl-C cancels every
queued task and stops the running processes instead of waiting for them.
"""

from __future__ import annotations

import functools
import os
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable

from .. import formatregistry, sandbox, sealing
from .._version import __version__
from ..files import hash_tree
from ..model import Catalog, Note, Tool
from ..statuses import ExampleStatus, Status
from ..options import Options
from ..process import cancel_on, ended_by_signals
from ..scrub import Scrub, clean, scrubber
from . import job as job_mod
from . import shards
from . import cache as cache_mod
from .resultsfile import Result, ResultSet
from .job import Context, Job, Planner, Start, Task, make_context
from .verdict import ExampleResult, Facts
from .outcome import CodecError, Outcome, decided, fits, from_json, roundtrip, skipped_outcome, to_json
from .outcome import apply as _apply
from .outcome import crash_outcome as _crash_outcome

# Each tool format's planner, and what it reports when nothing may run (formatregistry: `Format.planner`, `.refused`).
PLANNERS: dict[str, Planner] = {f.id: formatregistry.resolve(f.planner) for f in formatregistry.TOOL_FORMATS if f.planner}
REFUSERS: dict[str, Callable[[Tool, str], Outcome]] = {
    f.id: formatregistry.resolve(f.refused) for f in formatregistry.TOOL_FORMATS if f.refused}
RESULTS_KEY_VERSION = "toolcatalog-results-v2"  # part of every results key


@dataclass
class Stats:
    tools: int = 0
    cached: int = 0
    processes: int = 0
    seconds: float = 0.0
    sandbox: str = ""  # how example processes ran, in one line
    # bubblewrap was refused (`sandbox` says why), or `sandbox: bubblewrap` ran nothing without it:
    # a warning, not information (`mkdocs build --strict` fails on it; `toolcatalog check` exits 1 for the latter).
    sandbox_weaker: bool = False
    given: int = 0  # tools whose results came from results files (the `results` option, --results)
    # Every result this check has, fresh, cached or given, under the key it was produced for:
    # what `toolcatalog check --results-out` writes.
    results: list[Result] = field(default_factory=list)
    elsewhere: list[Tool] = field(default_factory=list)  # tools another shard checks (left as they were)
    notes: list[Note] = field(default_factory=list)  # cache entries and results files not used, and why


@dataclass
class _Build:
    """What one check works with: the build's context, cache, keys and the scrubbed `apply`."""

    catalog: Catalog
    options: Options
    planners: dict[str, Planner]
    ctx: Context
    store: cache_mod.ResultCache
    keyer: cache_mod.Keyer
    scrub: Scrub
    stats: Stats

    def key_of(self, tool: Tool, job: Job) -> str:
        return self.keyer.key([tool.format, tool.source, *job.key_parts])

    def apply(self, tool: Tool, outcome: Outcome) -> None:
        """Apply with this machine's paths scrubbed out, once, so pages and catalog show the same text."""
        _apply(tool, _scrubbed(outcome, self.scrub))

    def record(self, tool: Tool, cache_key: str, seconds: float, outcome: Outcome) -> None:
        self.stats.results.append(Result(cache_key, tool.id, tool.format, tool.source, seconds, outcome))


Planned = tuple[Tool, Job, str]


def check(catalog: Catalog, options: Options, only: set[str] | None = None, planners: dict[str, Planner] | None = None,
          given: ResultSet | None = None, shard: tuple[int, int] | None = None,
          progress: Progress | None = None) -> Stats:
    """Run every runnable example and check; results land on the model. Returns what it did.

    plan (each tool's job and key) -> reuse (results files, then the cache) -> run (every task on
    one pool) -> settle (the verdict of each job, stored and applied).

    `planners` replaces the format planners (by format name); the default is `PLANNERS`.
    `given`: results produced elsewhere, used wherever their key matches (before the cache).
    `shard` (K, N): check only the K-th of N balanced parts of the tools (see `shards`); the
    other tools are left as they are. `progress(done, total, tool_id)` is told how many runs
    are done, before each wait (for a terminal's progress line; see `_tell`).
    """
    started = time.monotonic()
    build = _start(catalog, options, PLANNERS if planners is None else planners)
    planned = _plan(build, [t for t in catalog.tools if only is None or t.id in only])
    if shard is not None:
        planned = _my_shard(build.stats, planned, given or ResultSet(), shard)
    pending = _reuse(build, planned, given)
    results, seconds = _run(pending, options, progress, build.ctx)
    for index, (tool, job, cache_key) in enumerate(pending):
        _settle(build, tool, job, cache_key, results[index], seconds[index])
    build.stats.notes += [Note(text) for text in sandbox.flush()]  # every run's throwaway folder is gone before the build goes on
    build.stats.seconds = time.monotonic() - started
    return build.stats


def _start(catalog: Catalog, options: Options, planners: dict[str, Planner]) -> _Build:
    ctx = make_context(options, catalog.root)
    if _widened(ctx.sandbox):  # only a widened view shows them (a driver's `fs.read` of the workspace root aside: see notes)
        ctx.unseen = _build_folders(catalog, options)
    stats = Stats(sandbox=_sandbox_line(ctx), sandbox_weaker=ctx.sandbox.refused is not None or
                  (ctx.sandbox.withheld and ctx.sandbox.mode == "bubblewrap"))
    store = _result_cache(catalog.root, options, stats)
    keyer = cache_mod.Keyer(_common_key(catalog, options, ctx))
    return _Build(catalog, options, planners, ctx, store, keyer, scrubber(catalog.root, [catalog.root / p for p in options.paths]), stats)


def _common_key(catalog: Catalog, options: Options, ctx: Context) -> list[Any]:
    """What every result of this build depends on besides its tool."""
    return [
        RESULTS_KEY_VERSION,
        __version__,
        _code_digest(),
        # Results hold this checkout's absolute paths (in details, stderr, outputs); the catalog
        # scrubs only the current root's, so a result is never reused by another checkout.
        os.path.abspath(catalog.root),
        os.path.realpath(catalog.root),
        sys.executable,
        sys.version,
        machine_identity(),
        ctx.platform,
        options.timeout,
        sorted(options.allow_mutating),
        sorted((name, os.environ.get(name)) for name in options.env),
        options.max_output_bytes,
        ctx.sandbox.key(),
        sorted(options.allow_network),
        _widened_view_digest(ctx, catalog.root, ctx.unseen),
    ]


def _plan(build: _Build, tools: list[Tool]) -> list[Planned]:
    """Each tool's job and cache key; a tool decided without running anything is applied here."""
    planned: list[Planned] = []
    for tool in tools:
        build.stats.tools += 1
        try:
            job = _planner(build.planners, tool)(tool, build.ctx)
            cache_key = build.key_of(tool, job)
        except Exception as exc:  # a bug in a planner fails this tool, not the build
            build.apply(tool, crash_outcome(tool, exc, "while planning its checks"))
            continue
        if job.outcome is not None and not job.tasks:
            build.apply(tool, _checked(tool, job.outcome, "the planner's result is malformed"))
        elif build.ctx.sandbox.withheld:
            build.apply(tool, _refused(tool, _withheld_reason(build.ctx.sandbox)))
        else:
            planned.append((tool, job, cache_key))
    return planned


def _planner(planners: dict[str, Planner], tool: Tool) -> Planner:
    return planners[tool.format]  # registry: the format's planner


def _my_shard(stats: Stats, planned: list[Planned], given: ResultSet, shard: tuple[int, int]) -> list[Planned]:
    mine = _shard(planned, given, shard)
    kept = {id(tool) for tool, _, _ in mine}
    stats.elsewhere = [tool for tool, _, _ in planned if id(tool) not in kept]
    stats.tools -= len(stats.elsewhere)
    return mine


def _reuse(build: _Build, planned: list[Planned], given: ResultSet | None) -> list[Planned]:
    """Apply what results files (first) and the cache hold for a tool's key; the rest must run."""
    pending: list[Planned] = []
    for tool, job, cache_key in planned:
        result = given.get(cache_key) if given is not None else None
        if result is not None and _applicable(tool, result.outcome):
            build.stats.given += 1
            build.apply(tool, result.outcome)
            build.record(tool, cache_key, result.seconds, result.outcome)
            build.store.put(cache_key, result.outcome, result.seconds)  # the next build here has it too
            continue
        found = build.store.lookup(cache_key)
        if found is not None and _applicable(tool, found[0]):
            build.stats.cached += 1
            build.apply(tool, found[0])
            build.record(tool, cache_key, found[1], found[0])
            continue
        pending.append((tool, job, cache_key))
    build.stats.notes.extend(build.store.notes())  # every lookup is done: entries not used, and why
    return pending


def _run(pending: list[Planned], options: Options, progress: "Progress | None" = None,
         ctx: Context | None = None) -> tuple[dict[int, list[Any]], dict[int, float]]:
    """Every task of every pending job on one pool: each job's task results, in order, and seconds.

    Under bubblewrap, each task first starts the sandbox of the task `workers` places after it
    (`Context.start_ahead`, where that task's first process is known: `Job.starts`), so that its
    setting up (the control groups' entry, strace, bubblewrap's namespaces and mounts) goes on
    while this task's tool runs; that tool itself still starts only in its turn."""
    tasks = [(index, task, job.starts[n] if n < len(job.starts) else None)
             for index, (_, job, _) in enumerate(pending) for n, task in enumerate(job.tasks)]
    results: dict[int, list[Any]] = {index: [] for index in range(len(pending))}
    seconds: dict[int, float] = {index: 0.0 for index in range(len(pending))}
    if not tasks:
        return results, seconds
    workers = max(1, min(options.jobs or usable_cpus(), len(tasks)))
    ahead = ctx if ctx is not None and _starts_ahead(ctx) else None
    stop = threading.Event()
    pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="toolcatalog")
    try:
        with ended_by_signals():  # SIGTERM and SIGHUP end the build the way Ctrl-C does
            futures = [(index, pool.submit(_guarded, task, stop, _ahead_of(ahead, tasks, n + workers)))
                       for n, (index, task, _) in enumerate(tasks)]
            for done, (index, future) in enumerate(futures):
                _tell(progress, done, len(futures), pending[index][0])
                value, took = future.result()
                results[index].append(value)
                seconds[index] += took
    except BaseException:
        # Ctrl-C, SIGTERM (or anything else): drop what is queued, stop what runs, and do not wait for it.
        stop.set()
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    finally:
        if ahead is not None:
            ahead.drop_ahead()  # a run started ahead that no task took is ended (it never started its tool)
    pool.shutdown(wait=True)
    return results, seconds


def usable_cpus() -> int:
    """The CPUs this build may run on (a container or `taskset` can allow fewer than the machine has)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # no affinity call on this platform
        return os.cpu_count() or 1


def _starts_ahead(ctx: Context) -> bool:
    """Whether tasks start later tasks' sandboxes ahead: where a sandbox can wait behind a gate
    (bubblewrap), whatever the number of workers. Not only for a spare core: much of a sandboxed
    start is spent asleep, not computing (entering a run's cgroup v1 groups waits for an RCU grace
    period, about 10 ms, in the kernel's `cgroup_procs_write_start`; bubblewrap's unmounts wait for
    expedited ones), and a start ahead sleeps there while other runs use the cores."""
    return ctx.sandbox.mechanism == "bwrap" and not ctx.sandbox.withheld


def _ahead_of(ctx: Context | None, tasks: list[tuple[int, Task, Start | None]], n: int) -> Callable[[], None] | None:
    """What a task does before it runs: start task `n`'s sandbox ahead (None: nothing)."""
    start = tasks[n][2] if ctx is not None and n < len(tasks) else None
    if ctx is None or start is None:
        return None
    return functools.partial(ctx.start_ahead, start)


def _settle(build: _Build, tool: Tool, job: Job, cache_key: str, results: list[Any], seconds: float) -> None:
    """The job's outcome from its results: stored (unless an internal error) and applied."""
    outcome = _finish(tool, job, results)
    build.stats.processes += outcome.processes
    if not outcome.internal_error:
        build.store.put(cache_key, outcome, seconds)
        build.record(tool, cache_key, seconds, outcome)
        _store_after_run(tool, job, cache_key, outcome, build)
    build.apply(tool, outcome)


Progress = Callable[[int, int, str], None]  # (runs done, runs in all, the id of the tool waited on)


def _tell(progress: Progress | None, done: int, total: int, tool: Tool) -> None:
    """Tell `progress` where the runs are; what it does with that never stops the build."""
    if progress is None:
        return
    try:
        progress(done, total, tool.id)
    except Exception:  # a progress line is a courtesy: a broken terminal must not fail the checks
        pass


def _result_cache(workspace: Path, options: Options, stats: Stats) -> cache_mod.ResultCache:
    """The results cache, sealed with the build's key; none (and a note saying why) without a key."""
    if not options.cache:
        return cache_mod.ResultCache(None)
    try:
        key = sealing.build_key(workspace)
    except sealing.KeyUnavailable as exc:
        stats.notes.append(sealing.no_key_note(exc))
        return cache_mod.ResultCache(None)
    folder = sealing.cache_dir(workspace, options.cache_dir)
    return cache_mod.ResultCache(folder, key, base=sealing.cache_base(workspace, folder))


def _widened(facts: sandbox.Facts) -> bool:
    """Runs see more of the workspace than their own folders (`sandbox_workspace`)."""
    return facts.mechanism is not None and (facts.workspace != "tool" or bool(facts.workspace_extra))


def _build_folders(catalog: Catalog, options: Options) -> list[str]:
    """The build's own folders inside the workspace (the site's docs and output folders, the cache
    folder): never shown to a run, so a widened view's key can leave them out (they change with
    every build) without a run seeing anything its key does not cover."""
    root = os.path.realpath(catalog.root)
    folders = [os.path.realpath(os.path.join(root, rel)) for rel in catalog.search.skipped] if catalog.search else []
    if options.cache:
        folders.append(os.path.realpath(sealing.cache_dir(catalog.root, options.cache_dir)))
    return sorted({f for f in folders if f != root and f.startswith(root + os.sep)})


def _widened_view_digest(ctx: Context, workspace: Path, unseen: list[str]) -> list[str]:
    """What a `sandbox_workspace` wider than a run's own folders shows it, hashed: a run may read
    it, so a result must not outlive a change to it (a file beside mkdocs.yml that switches a
    tool's behaviour). `tool` (the default) adds nothing: each runner keys its own folders."""
    facts = ctx.sandbox
    if not _widened(facts):
        return []
    if facts.workspace == "all":
        return [hash_tree(Path(os.path.realpath(workspace)), exclude=unseen)]  # real paths, as `unseen` holds
    root = os.path.realpath(workspace)
    reals = [os.path.realpath(os.path.join(root, folder)) for folder in facts.workspace_extra]
    # A listed folder that is a committed link out of the workspace is not shown (view.py), so it
    # is not hashed either: the key never walks the host (`lnk -> /proc`).
    return [hash_tree(Path(real), exclude=unseen) if real.startswith(root + os.sep) else "outside" for real in reals]


def crash_outcome(tool: Tool, exc: BaseException | None, when: str) -> Outcome:
    """`outcome.crash_outcome`, naming the runtime rules a smart tool would have checked."""
    return _crash_outcome(tool, exc, when, tool.format_info.runtime_rule_ids)


def _sandbox_line(ctx: Context) -> str:
    """The log's `example processes:` line; a refused bubblewrap is named with its fix."""
    facts = ctx.sandbox
    if facts.withheld:
        if facts.mode == "bubblewrap":
            return f"bubblewrap required but unavailable, nothing runs: {facts.reason}"
        return f"sandbox required but unavailable, nothing runs: {facts.reason}"
    if facts.mechanism is None:
        return f"not sandboxed: {facts.reason}"
    name = sandbox.title(facts.mechanism)
    traced = _traced_words(facts)
    refused = f"; {facts.refused.describe()}" if facts.refused is not None else ""
    return f"sandboxed with {name} ({facts.variant}), {traced}{refused}"


def _traced_words(facts: sandbox.Facts) -> str:
    """Who watches the runs' system calls, for the log line."""
    if facts.own_tracer:
        mcp = "strace for MCP servers" if facts.tracer else f"MCP servers not traced: {facts.untraced}"
        return f"system calls traced by toolcatalog's own tracer ({mcp})"
    return "system calls traced by strace" if facts.tracer else f"not traced ({facts.untraced})"


def _withheld_reason(facts: sandbox.Facts) -> str:
    """Why a tool did not run under `sandbox: required` or `sandbox: bubblewrap`."""
    if facts.mode == "bubblewrap":
        return f"not run: {facts.reason}"  # the reason starts with "`sandbox: bubblewrap`, and"
    return f"not run: `sandbox: required`, and {facts.reason}"


def _refused(tool: Tool, reason: str) -> Outcome:
    """Nothing runs without the sandbox; a smart tool still shows its static checks."""
    refuse = REFUSERS.get(tool.format)
    if refuse is not None:
        return refuse(tool, reason)
    return skipped_outcome(tool, Status.NOT_RUN, reason)


class _Crash:
    """What a task that raised leaves in place of its result."""

    def __init__(self, exc: BaseException) -> None:
        self.exc = exc


def _guarded(task: Task, stop: threading.Event, before: Callable[[], None] | None = None) -> tuple[Any, float]:
    """The task's result (or the exception it raised) and the seconds it took. `before`: a later
    task's start ahead (`_ahead_of`), done while this task's first process runs (its tool on its
    way, its pipes read meanwhile: `process.Started.finish`); when it fails, that task simply starts in its turn."""
    with cancel_on(stop):
        started = time.monotonic()
        with job_mod.meanwhile(before):  # done while the task's first process runs (job.meanwhile)
            try:
                value = task()
            except Exception as exc:
                value = _Crash(exc)
            took = time.monotonic() - started
    return value, took


def _shard(planned: list[Planned], given: ResultSet, shard: tuple[int, int]) -> list[Planned]:
    """The planned tools of shard K of N. Every job computes the same split from the same tools
    and results files (see `shards`)."""
    recorded = {id(tool): given.seconds_of(tool.format, tool.source) for tool, _, _ in planned}
    timed = [(seconds, len(job.tasks)) for tool, job, _ in planned if (seconds := recorded[id(tool)]) is not None]
    per_task = sum(s for s, _ in timed) / max(1, sum(n for _, n in timed)) if timed else 1.0
    work = [
        shards.Work((tool.format, tool.source, tool.id),
                    shards.estimate(len(job.tasks), given.get(key) is not None, recorded[id(tool)], per_task))
        for tool, job, key in planned
    ]
    index, count = shard
    return [item for item, part in zip(planned, shards.assign(work, count)) if part == index]


def _finish(tool: Tool, job: Job, results: list[Any]) -> Outcome:
    """The job's outcome from its task results, as the cache will give it back next time; an
    internal-error outcome when anything went wrong."""
    crashed = next((r for r in results if isinstance(r, _Crash)), None)
    if crashed is not None:
        return crash_outcome(tool, crashed.exc, "while running its checks")
    if job.finish is None:
        return crash_outcome(tool, None, "a job with tasks has no `finish`")
    try:
        outcome = job.finish(results)
    except Exception as exc:
        return crash_outcome(tool, exc, "while judging its results")
    return _checked(tool, outcome, "the runner produced a malformed result")


def _checked(tool: Tool, outcome: Any, malformed: str) -> Outcome:
    """`outcome` through the codec (what a later build reads back), or an internal error when it
    is no outcome of `tool` at all."""
    if not isinstance(outcome, Outcome):
        return crash_outcome(tool, None, malformed)
    if outcome.internal_error:
        return outcome  # never stored: applied as it is
    try:
        stored = roundtrip(outcome)
    except CodecError:
        return crash_outcome(tool, None, malformed)
    return stored if fits(tool, stored) else crash_outcome(tool, None, malformed)


def _scrubbed(outcome: Outcome, scrub: Scrub) -> Outcome:
    """`outcome` with this machine's paths rewritten in every text it holds."""
    try:
        return from_json(clean(to_json(outcome), scrub))
    except CodecError:  # scrubbing made it another shape: show what is known to be true
        return outcome if outcome.internal_error else _unscrubbable(outcome)


def _unscrubbable(outcome: Outcome) -> Outcome:
    detail = "internal error: a result could not be cleaned of this machine's paths; please report it"
    examples = tuple(ExampleResult(ExampleStatus.ERROR, detail) for _ in outcome.examples)
    return decided(Facts(examples, crashed=detail))


def _store_after_run(tool: Tool, job: Job, cache_key: str, outcome: Outcome, build: _Build) -> None:
    """Also store the outcome under the key the tool has *after* its run.

    A tool that writes into its own folder changes the tree its key hashes. Without this, the
    next build (and `mkdocs serve`, whose watcher sees that very write) misses the cache, runs
    the tool again, which writes again: a rebuild loop. Planning again is cheap (hashing only).
    """
    if build.store.folder is None:
        return
    try:
        after = build.key_of(tool, _planner(build.planners, tool)(tool, build.ctx))
    except Exception:
        return
    if after != cache_key:
        build.store.put(after, outcome)


@lru_cache(maxsize=1)
def machine_identity() -> list[str]:
    """The operating system, kernel release, architecture and C library results may depend on,
    as `platform.platform()` says them, but read without starting a process (`platform` runs
    `uname -p` for the processor, which a build would start every time)."""
    uname = getattr(os, "uname", None)
    if uname is None:  # Windows: platform.uname() may run `ver`; the version numbers say enough
        version = getattr(sys, "getwindowsversion", lambda: ())()
        return [sys.platform, ".".join(str(v) for v in tuple(version)[:3]), os.environ.get("PROCESSOR_ARCHITECTURE", "")]
    info = uname()
    libc = ""
    try:
        libc = os.confstr("CS_GNU_LIBC_VERSION") or ""
    except (AttributeError, ValueError, OSError):  # not glibc (musl, macOS)
        pass
    return [info.sysname, info.release, info.machine, libc]


@lru_cache(maxsize=1)
def _code_digest() -> str:
    """A hash of the code that produces results, so a changed runner never reuses stale results
    (the version alone does not change between development builds)."""
    package = Path(__file__).resolve().parent.parent
    files = sorted([*package.joinpath("conformance").glob("*.py"), *package.joinpath("sandbox").glob("*.py"),
                    *(package / name for name in ("process.py", "matching.py", "files.py", "jsonschemas.py", "schemawork.py"))])
    return cache_mod.key([(f.name, f.read_bytes().hex()) for f in files if f.is_file()])


def _applicable(tool: Tool, outcome: Outcome) -> bool:
    """Whether a reused outcome (the codec has checked its shape) is one of `tool`'s: one result
    per example, and no internal error (never stored, so a stored one is planted)."""
    return fits(tool, outcome) and not outcome.internal_error
