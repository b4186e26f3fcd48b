#!/usr/bin/env python3
"""Where a sandboxed check's per-run time goes in the build process: wall and thread CPU per phase.

    PYTHONPATH=plugin .venv/bin/python bench/sandbox_phases.py [--tools 50] [--jobs 1,2]

It makes bench/run.py's workspace (N speccify tools, 3 examples each), then runs
`toolcatalog check . --no-cache --jobs J` in this process once per `--jobs` value, with timers
around the sandbox's per-run steps (`sandbox.prepare` and its parts, the tree pictures, starting
the process, `Started.finish`, `Launch.observe` and the trace parse, `Launch.close`, the runs
started ahead). For each phase: calls, wall and thread-CPU milliseconds per call and in all. Thread
CPU is the build's own work (what the GIL serializes); wall minus CPU is waiting (the process
chain, a lock, a sleep). It also prints the build process's own CPU for the whole check.

What the timers cannot show is the kernel's side: run `perf sched record -g` around the same check
and read where the run's processes sleep (bench/README.md shows that picture: a cgroup v1 entry
waits for an RCU grace period). Nothing is asserted; the numbers depend on load, the counts do not.
"""

from __future__ import annotations

import argparse
import functools
import os
import resource
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, Callable

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import run as bench  # noqa: E402  (bench/run.py: the workspaces)

Stats = dict[str, list[float]]


def instrument(stats: Stats, lock: threading.Lock) -> None:
    """Timers around the per-run steps (module attributes replaced in this process only)."""
    from toolcatalog import process
    from toolcatalog.conformance import job
    from toolcatalog.sandbox import cgroup, launch, layout, trace, tree

    def wrap(owner: Any, name: str, label: str) -> None:
        original: Callable[..., Any] = getattr(owner, name)

        @functools.wraps(original)
        def timed(*args: Any, **kwargs: Any) -> Any:
            wall, cpu = time.perf_counter(), time.thread_time()
            try:
                return original(*args, **kwargs)
            finally:
                wall, cpu = time.perf_counter() - wall, time.thread_time() - cpu
                with lock:
                    entry = stats.setdefault(label, [0, 0.0, 0.0])
                    entry[0] += 1
                    entry[1] += wall
                    entry[2] += cpu

        setattr(owner, name, timed)

    for owner, name, label in (
        (job.Context, "run", "Context.run (one run, all of it)"),
        (job.Context, "start_ahead", "  start_ahead (prepare + start, gated)"),
        (launch, "_visible", "  prepare: the view"),
        (launch, "_bubblewrap", "  prepare: bubblewrap's command line"),
        (layout, "copy_folder", "    the working folder's copy"),
        (launch, "_make_mount_points", "    mount points"),
        (launch, "_enter_group", "  prepare: control groups"),
        (tree, "picture", "  tree.picture (before and after)"),
        (process, "start_process", "  start_process"),
        (process.Started, "finish", "  Started.finish (gate to exit, reading)"),
        (launch.Launch, "observe", "  Launch.observe"),
        (trace, "parse", "    trace.parse"),
        (launch.Launch, "caps_hit", "  Launch.caps_hit"),
        (launch.Launch, "close", "  Launch.close"),
        (cgroup.Group, "remove", "cgroup.Group.remove (cleanup thread)"),
    ):
        wrap(owner, name, label)


def one(tc: Path, jobs: int) -> None:
    from toolcatalog import cli

    stats: Stats = {}
    lock = threading.Lock()
    instrument(stats, lock)
    here = os.getcwd()
    os.chdir(tc)
    wall, before = time.perf_counter(), resource.getrusage(resource.RUSAGE_SELF)
    try:
        cli.main(["check", ".", "--no-cache", "-f", "mkdocs-nonav.yml", "--jobs", str(jobs)])
    except SystemExit:
        pass
    finally:
        os.chdir(here)
    after = resource.getrusage(resource.RUSAGE_SELF)
    wall = time.perf_counter() - wall
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    print(f"\n--jobs {jobs}: wall {wall:.2f} s, the build process's own CPU {cpu:.2f} s; load average {os.getloadavg()[0]:.2f}")
    print(f"{'phase':<44}{'calls':>6}{'wall ms':>9}{'cpu ms':>8}{'wall s':>8}{'cpu s':>7}")
    for label, (calls, seconds, used) in stats.items():
        n = max(int(calls), 1)
        print(f"{label:<44}{int(calls):>6}{1000 * seconds / n:>9.2f}{1000 * used / n:>8.2f}{seconds:>8.2f}{used:>7.2f}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tools", type=int, default=50)
    parser.add_argument("--jobs", default="1,2")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="tc-phases-") as tmp:
        tc, _ = bench.make_workspaces(Path(tmp), args.tools, "mkdocs")
        for jobs in [int(j) for j in args.jobs.split(",") if j.strip()]:
            one(tc, jobs)  # each check wraps the steps again, into a table of its own: nothing is counted twice
    return 0


if __name__ == "__main__":
    sys.exit(main())
