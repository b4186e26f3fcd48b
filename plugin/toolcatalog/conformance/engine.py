"""Running every tool's examples and checks: plan, cache lookup, parallel run, apply.

Each format module turns a tool into a `Job`: the parts its result depends on
(hashed into the cache key) and a list of tasks, each starting at most a few
processes. Tasks of all tools run together on one thread pool. A finished job
yields an *outcome*, a plain JSON value that is both what the cache stores and
the only thing applied to the model, so a cached result and a fresh one render
and export identically.
"""

from __future__ import annotations

import copy
import os
import platform as platform_module
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from functools import lru_cache
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any, Callable

from .. import __version__
from ..model import Catalog, Check, Capability, Run, Tool
from ..options import Options
from ..process import scrubbed_env
from . import cache as cache_mod

Outcome = dict[str, Any]
_RUN_FIELDS = frozenset(f.name for f in fields(Run))
Task = Callable[[], Any]


@dataclass
class Job:
    key_parts: list[Any]
    tasks: list[Task] = field(default_factory=list)
    finish: Callable[[list[Any]], Outcome] | None = None
    outcome: Outcome | None = None  # decided without running anything


@dataclass
class Context:
    options: Options
    env: dict[str, str]  # for example processes
    tool_env: dict[str, str]  # for smart tools: provider variables removed too
    platform: str
    workspace: Path

    def timeout_for(self, tool_timeout_ms: int | None = None) -> float:
        timeout = float(self.options.timeout)
        if tool_timeout_ms:
            timeout = min(timeout, tool_timeout_ms / 1000.0)
        return max(timeout, 0.05)


@dataclass
class Stats:
    tools: int = 0
    cached: int = 0
    processes: int = 0
    seconds: float = 0.0


def current_platform() -> str:
    """speccify's platform names: darwin -> macos, win* -> windows, everything else -> linux."""
    if sys.platform == "darwin":
        return "macos"
    if sys.platform.startswith("win"):
        return "windows"
    return "linux"


def make_context(options: Options, workspace: Path) -> Context:
    return Context(
        options=options,
        env=scrubbed_env(options.env),
        tool_env=scrubbed_env(options.env, drop_provider_vars=True),
        platform=current_platform(),
        workspace=workspace,
    )


def check(catalog: Catalog, options: Options, only: set[str] | None = None) -> Stats:
    """Run every runnable example and check; results land on the model. Returns what it did."""
    from . import agentproto, smarttool, speccify

    planners = {"speccify": speccify.plan, "aip-14": agentproto.plan, "smart-tool": smarttool.plan}
    started = time.monotonic()
    ctx = make_context(options, catalog.root)
    folder = None
    if options.cache:
        folder = Path(options.cache_dir)
        if not folder.is_absolute():
            folder = catalog.root / folder
    store = cache_mod.ResultCache(folder)
    common = [
        "toolcatalog-results-v1",
        __version__,
        _code_digest(),
        sys.executable,
        sys.version,
        platform_module.platform(),
        ctx.platform,
        options.timeout,
        sorted(options.allow_mutating),
        sorted((name, os.environ.get(name)) for name in options.env),
        options.max_output_bytes,
    ]
    stats = Stats()
    pending: list[tuple[Tool, Job, str]] = []
    for tool in catalog.tools:
        if only is not None and tool.id not in only:
            continue
        stats.tools += 1
        job = planners[tool.format](tool, ctx)
        cache_key = cache_mod.key([*common, tool.format, tool.source, *job.key_parts])
        if job.outcome is not None and not job.tasks:
            apply(tool, job.outcome)
            continue
        cached = store.get(cache_key)
        if cached is not None and _applicable(tool, cached):
            stats.cached += 1
            apply(tool, cached)
            continue
        pending.append((tool, job, cache_key))

    tasks = [(index, task) for index, (_, job, _) in enumerate(pending) for task in job.tasks]
    results: dict[int, list[Any]] = {index: [] for index in range(len(pending))}
    if tasks:
        workers = max(1, min(options.jobs or os.cpu_count() or 1, len(tasks)))
        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="toolcatalog") as pool:
            futures = [(index, pool.submit(task)) for index, task in tasks]
            for index, future in futures:
                results[index].append(future.result())
    for index, (tool, job, cache_key) in enumerate(pending):
        assert job.finish is not None
        outcome = job.finish(results[index])
        stats.processes += int(outcome.get("processes", 0))
        store.put(cache_key, outcome)
        apply(tool, outcome)
    stats.seconds = time.monotonic() - started
    return stats


@lru_cache(maxsize=1)
def _code_digest() -> str:
    """A hash of the code that produces results, so a changed runner never reuses stale results
    (the version alone does not change between development builds)."""
    package = Path(__file__).resolve().parent.parent
    files = sorted([*package.joinpath("conformance").glob("*.py"), package / "process.py", package / "matching.py"])
    return cache_mod.key([(f.name, f.read_bytes().hex()) for f in files if f.is_file()])


def apply(tool: Tool, outcome: Outcome) -> None:
    """Put an outcome (fresh or cached) on the model."""
    tool.status = "invalid" if not tool.valid else outcome.get("status", "not-run")
    tool.status_detail = outcome.get("status_detail", "")
    for example, result in zip(tool.examples, outcome.get("examples", [])):
        example.status = result.get("status", "not-run")
        example.detail = result.get("detail", "")
        example.runs = [Run(**{k: v for k, v in run.items() if k in _RUN_FIELDS}) for run in result.get("runs", [])]
    if "checks" in outcome:
        tool.checks = [Check(**check) for check in outcome["checks"]]
    if outcome.get("capabilities") is not None:
        tool.capabilities = [Capability(**c) for c in outcome["capabilities"]]
        tool.capability_help = dict(outcome.get("capability_help", {}))
        tool.kind = outcome.get("kind", tool.kind)
    for driver in tool.drivers:
        reason = outcome.get("drivers", {}).get(driver.id)
        if reason is not None:
            driver.run_status[tool.id] = reason


def _applicable(tool: Tool, outcome: Any) -> bool:
    """Whether `apply` accepts a cached outcome: a damaged cache entry is a miss, never fatal.

    Tried on a throwaway copy, so a half-applied bad entry never reaches the model.
    """
    probe = replace(
        tool,
        examples=[copy.copy(e) for e in tool.examples],
        drivers=[replace(d, run_status={}) for d in tool.drivers],
    )
    try:
        apply(probe, outcome)
    except Exception:  # any shape error (AttributeError, TypeError, ...) in a tampered or stale entry
        return False
    return True


def not_run_outcome(tool: Tool, status: str, detail: str) -> Outcome:
    """Nothing runs: every example is `not-run` with the same reason."""
    return {
        "status": status,
        "status_detail": detail,
        "examples": [{"status": "not-run", "detail": detail, "runs": []} for _ in tool.examples],
        "processes": 0,
    }


def excerpt(data: bytes, limit: int = 2000) -> str:
    text = data.decode("utf-8", "replace")
    return text if len(text) <= limit else "…" + text[-limit:]


def last_line(data: bytes) -> str:
    lines = [line for line in data.decode("utf-8", "replace").splitlines() if line.strip()]
    return lines[-1].strip()[:300] if lines else ""
