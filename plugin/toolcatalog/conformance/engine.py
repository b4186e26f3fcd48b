"""Running every tool's examples and checks: plan, cache lookup, parallel run, apply.

Each format module turns a tool into a `Job`: the parts its result depends on
(hashed into the cache key) and a list of tasks, each starting at most a few
processes. Tasks of all tools run together on one thread pool. A finished job
yields an *outcome*, a plain JSON value that is both what the cache stores and
the only thing applied to the model, so a cached result and a fresh one render
and export identically.

Failure policy: a task or a `finish` that raises, or a planner that does, makes
that one tool `error` with the internal error named (its examples and the rules
it would have checked too); every other tool is still checked. An outcome of the wrong shape, fresh or cached, is never applied: from
the cache it is a miss, fresh it is such an internal error. Ctrl-C cancels every
queued task and stops the running processes instead of waiting for them.
"""

from __future__ import annotations

import copy
import os
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable

from .. import formatregistry, sandbox, sealing
from .._version import __version__
from ..files import hash_tree
from ..model import Catalog, Note, Tool
from ..statuses import Status
from ..options import Options
from ..process import cancel_on, ended_by_signals
from ..scrub import clean, scrubber
from . import shards
from . import cache as cache_mod
from .resultsfile import Result, ResultSet
from .job import Context, Job, Planner, Task, make_context
from .outcome import Outcome, skipped_outcome, valid_outcome
from .outcome import apply as _apply
from .outcome import crash_outcome as _crash_outcome

# Each tool format's planner, and what it reports when nothing may run (formatregistry: `Format.planner`, `.refused`).
PLANNERS: dict[str, Planner] = {f.id: formatregistry.resolve(f.planner) for f in formatregistry.TOOL_FORMATS if f.planner}
REFUSERS: dict[str, Callable[[Tool, str], Outcome]] = {
    f.id: formatregistry.resolve(f.refused) for f in formatregistry.TOOL_FORMATS if f.refused}


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


def check(catalog: Catalog, options: Options, only: set[str] | None = None, planners: dict[str, Planner] | None = None,
          given: ResultSet | None = None, shard: tuple[int, int] | None = None,
          progress: Progress | None = None) -> Stats:
    """Run every runnable example and check; results land on the model. Returns what it did.

    `planners` replaces the format planners (by format name); the default is `PLANNERS`.
    `given`: results produced elsewhere, used wherever their key matches (before the cache).
    `shard` (K, N): check only the K-th of N balanced parts of the tools (see `shards`); the
    other tools are left as they are. `progress(done, total, tool_id)` is told how many runs
    are done, before each wait (for a terminal's progress line; see `_tell`).
    """
    planners = PLANNERS if planners is None else planners
    started = time.monotonic()
    ctx = make_context(options, catalog.root)
    if _widened(ctx.sandbox):  # only a widened view shows them (a driver's `fs.read` of the workspace root aside: see notes)
        ctx.unseen = _build_folders(catalog, options)
    stats = Stats(sandbox=_sandbox_line(ctx), sandbox_weaker=ctx.sandbox.refused is not None or
                  (ctx.sandbox.withheld and ctx.sandbox.mode == "bubblewrap"))
    store = _result_cache(catalog.root, options, stats)
    common = [
        "toolcatalog-results-v2",
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

    keyer = cache_mod.Keyer(common)

    def key_of(tool: Tool, job: Job) -> str:
        return keyer.key([tool.format, tool.source, *job.key_parts])

    # This machine's paths leave a result here, once, so pages and catalog show the same text.
    scrub = scrubber(catalog.root, [catalog.root / p for p in options.paths])

    def apply(tool: Tool, outcome: Outcome) -> None:
        _apply(tool, clean(outcome, scrub))

    planned: list[tuple[Tool, Job, str]] = []
    for tool in catalog.tools:
        if only is not None and tool.id not in only:
            continue
        stats.tools += 1
        try:
            job = planners[tool.format](tool, ctx)
            cache_key = key_of(tool, job)
        except Exception as exc:  # a bug in a planner fails this tool, not the build
            apply(tool, crash_outcome(tool, exc, "while planning its checks"))
            continue
        if job.outcome is not None and not job.tasks:
            outcome = job.outcome if valid_outcome(tool, job.outcome) else crash_outcome(tool, None, "the planner's result is malformed")
            apply(tool, outcome)
            continue
        if ctx.sandbox.withheld:
            apply(tool, _refused(tool, _withheld_reason(ctx.sandbox)))
            continue
        planned.append((tool, job, cache_key))
    if shard is not None:
        mine = _shard(planned, given or ResultSet(), shard)
        kept = {id(tool) for tool, _, _ in mine}
        stats.elsewhere = [tool for tool, _, _ in planned if id(tool) not in kept]
        stats.tools -= len(stats.elsewhere)
        planned = mine

    pending: list[tuple[Tool, Job, str]] = []
    for tool, job, cache_key in planned:
        result = given.get(cache_key) if given is not None else None
        if result is not None and _applicable(tool, result.outcome):
            stats.given += 1
            apply(tool, result.outcome)
            stats.results.append(_result(tool, cache_key, result.seconds, result.outcome))
            store.put(cache_key, result.outcome, result.seconds)  # the next build here has it too
            continue
        found = store.lookup(cache_key)
        if found is not None and _applicable(tool, found[0]):
            stats.cached += 1
            apply(tool, found[0])
            stats.results.append(_result(tool, cache_key, found[1], found[0]))
            continue
        pending.append((tool, job, cache_key))
    stats.notes.extend(store.notes())  # every lookup is done: entries not used, and why

    tasks = [(index, task) for index, (_, job, _) in enumerate(pending) for task in job.tasks]
    results: dict[int, list[Any]] = {index: [] for index in range(len(pending))}
    seconds: dict[int, float] = {index: 0.0 for index in range(len(pending))}
    if tasks:
        workers = max(1, min(options.jobs or os.cpu_count() or 1, len(tasks)))
        stop = threading.Event()
        pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="toolcatalog")
        try:
            with ended_by_signals():  # SIGTERM and SIGHUP end the build the way Ctrl-C does
                futures = [(index, pool.submit(_guarded, task, stop)) for index, task in tasks]
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
        pool.shutdown(wait=True)
    for index, (tool, job, cache_key) in enumerate(pending):
        outcome = _finish(tool, job, results[index])
        if not outcome.get("internal_error"):
            outcome = cache_mod.roundtrip(outcome)  # applied as the cache will give it back next time
        stats.processes += int(outcome.get("processes", 0))
        if not outcome.get("internal_error"):
            store.put(cache_key, outcome, seconds[index])
            stats.results.append(_result(tool, cache_key, seconds[index], outcome))
            _store_after_run(tool, job, cache_key, outcome, planners, ctx, key_of, store)
        apply(tool, outcome)
    stats.notes += [Note(text) for text in sandbox.flush()]  # every run's throwaway folder is gone before the build goes on
    stats.seconds = time.monotonic() - started
    return stats


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
    traced = "system calls traced" if facts.tracer else f"not traced ({facts.untraced})"
    refused = f"; {facts.refused.describe()}" if facts.refused is not None else ""
    return f"sandboxed with {name} ({facts.variant}), {traced}{refused}"


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


def _guarded(task: Task, stop: threading.Event) -> tuple[Any, float]:
    """The task's result (or the exception it raised) and the seconds it took."""
    started = time.monotonic()
    with cancel_on(stop):
        try:
            value = task()
        except Exception as exc:
            value = _Crash(exc)
    return value, time.monotonic() - started


def _result(tool: Tool, cache_key: str, seconds: float, outcome: Outcome) -> Result:
    return Result(cache_key, tool.id, tool.format, tool.source, seconds, outcome)


def _shard(planned: list[tuple[Tool, Job, str]], given: ResultSet, shard: tuple[int, int]) -> list[tuple[Tool, Job, str]]:
    """The planned tools of shard K of N. Every job computes the same split from the same tools
    and results files (see `shards`)."""
    recorded = {id(tool): given.seconds_of(tool.format, tool.source) for tool, _, _ in planned}
    timed = [(recorded[id(tool)], len(job.tasks)) for tool, job, _ in planned if recorded[id(tool)] is not None]
    per_task = sum(s for s, _ in timed) / max(1, sum(n for _, n in timed)) if timed else 1.0
    work = [
        shards.Work((tool.format, tool.source, tool.id),
                    shards.estimate(len(job.tasks), given.get(key) is not None, recorded[id(tool)], per_task))
        for tool, job, key in planned
    ]
    index, count = shard
    return [item for item, part in zip(planned, shards.assign(work, count)) if part == index]


def _finish(tool: Tool, job: Job, results: list[Any]) -> Outcome:
    """The job's outcome from its task results; an internal-error outcome when anything went wrong."""
    crashed = next((r for r in results if isinstance(r, _Crash)), None)
    if crashed is not None:
        return crash_outcome(tool, crashed.exc, "while running its checks")
    if job.finish is None:
        return crash_outcome(tool, None, "a job with tasks has no `finish`")
    try:
        outcome = job.finish(results)
    except Exception as exc:
        return crash_outcome(tool, exc, "while judging its results")
    if not valid_outcome(tool, outcome):
        return crash_outcome(tool, None, "the runner produced a malformed result")
    return outcome


def _store_after_run(tool: Tool, job: Job, cache_key: str, outcome: Outcome, planners: dict[str, Planner],
                     ctx: Context, key_of: Callable[[Tool, Job], str], store: cache_mod.ResultCache) -> None:
    """Also store the outcome under the key the tool has *after* its run.

    A tool that writes into its own folder changes the tree its key hashes. Without this, the
    next build (and `mkdocs serve`, whose watcher sees that very write) misses the cache, runs
    the tool again, which writes again: a rebuild loop. Planning again is cheap (hashing only).
    """
    if store.folder is None:
        return
    try:
        after = key_of(tool, planners[tool.format](tool, ctx))
    except Exception:
        return
    if after != cache_key:
        store.put(after, outcome)


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


def _applicable(tool: Tool, outcome: Any) -> bool:
    """Whether `apply` accepts a cached outcome: a damaged or planted entry is a miss, never fatal.

    The shape is checked strictly first (`valid_outcome`); then `apply` is tried on a throwaway
    copy, so a half-applied bad entry never reaches the model.
    """
    if not valid_outcome(tool, outcome) or outcome.get("internal_error"):
        return False
    probe = replace(
        tool,
        examples=[copy.copy(e) for e in tool.examples],
        drivers=[replace(d, run_status={}) for d in tool.drivers],
    )
    try:
        _apply(probe, outcome)
    except Exception:  # any shape error (AttributeError, TypeError, ...) valid_outcome missed
        return False
    return True
