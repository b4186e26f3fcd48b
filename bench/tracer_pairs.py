#!/usr/bin/env python3
"""Two trees of the plugin, paired: `toolcatalog check --no-cache` on bench/check.py's workspace.

    .venv/bin/python bench/tracer_pairs.py --before /tmp/tc-base/plugin [--tools 50] [--jobs 1,2] [--rounds 3]

`--before` is the `plugin` folder of another tree (e.g. `git archive <commit> plugin | tar -x -C
/tmp/tc-base`); "after" is this checkout's. Each round runs, at every `--jobs`, the sandboxed check
of both trees and the unsandboxed one of this tree, in an order that rotates from round to round,
each in a fresh `cpuacct` control group: the CPU of the whole process tree (the spawner, bubblewrap
and every process of the sandbox included, which the children's rusage misses), and the wall time.
On a shared machine read the CPU: the wall time is the machine's share as much as the code's.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import check  # noqa: E402
import cpugroup  # noqa: E402
import run as bench  # noqa: E402



def once(argv: list[str], cwd: Path, env: dict[str, str], expect: int) -> tuple[float, float]:
    """(wall seconds, CPU seconds of the whole tree) of one check, which must pass every tool."""
    with cpugroup.cpu_group("toolcatalog-pairs") as (group, enter):
        started = time.perf_counter()
        done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, preexec_fn=enter)
        wall = time.perf_counter() - started
        cpu = cpugroup.cpu_seconds(group)
        mode = check.Mode("auto", 1, argv, cwd, expect)
        mode._verify(done.returncode, done.stdout + done.stderr)  # noqa: SLF001 - the same check as bench/check.py
        return wall, cpu


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--before", type=Path, required=True, help="the other tree's plugin folder")
    parser.add_argument("--tools", type=int, default=50)
    parser.add_argument("--jobs", default="1,2")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)
    after = HERE.parent / "plugin"
    root = Path(tempfile.mkdtemp(prefix="toolcatalog-bench-pairs-"))
    processes = 3 * args.tools
    results: dict[tuple[str, int], list[tuple[float, float]]] = {}
    try:
        tc, _base = bench.make_workspaces(root, args.tools, "mkdocs")
        base_env = check.measured_env(root)
        cli = [sys.executable, "-m", "toolcatalog.cli", "check", ".", "--no-cache", "-f", "mkdocs-nonav.yml"]
        forms = []
        for jobs in [int(j) for j in args.jobs.split(",")]:
            for name, plugin, sandbox in (("before", args.before, "auto"), ("after", after, "auto"), ("off", after, "off")):
                env = {**base_env, "PYTHONPATH": str(plugin.resolve())}
                forms.append((name, jobs, [*cli, "--jobs", str(jobs), "--sandbox", sandbox], env))
        for name, jobs, command, env in forms[:2]:  # unmeasured: caches and the page cache warm for both trees
            once(command, tc, env, processes)
        print(f"{args.tools} tools, {processes} processes; load average {os.getloadavg()[0]:.2f}", flush=True)
        for round_no in range(args.rounds):
            shift = round_no % len(forms)
            for name, jobs, command, env in forms[shift:] + forms[:shift]:
                wall, cpu = once(command, tc, env, processes)
                results.setdefault((name, jobs), []).append((wall, cpu))
                print(f"  round {round_no + 1} {name:<6} jobs {jobs}  wall {wall:6.2f}s  cpu {cpu:6.2f}s  "
                      f"load {os.getloadavg()[0]:.2f}", flush=True)
    finally:
        subprocess.run(["rm", "-rf", str(root)], check=False)
    print(f"\n{'form':<7} {'jobs':>4} {'wall median':>12} {'cpu median':>11} {'cpu/run ms':>11}   runs (wall / cpu)")
    for (name, jobs), values in sorted(results.items(), key=lambda item: (item[0][1], item[0][0])):
        wall = statistics.median(v[0] for v in values)
        cpu = statistics.median(v[1] for v in values)
        runs = ", ".join(f"{w:.2f}/{c:.2f}" for w, c in values)
        print(f"{name:<7} {jobs:>4} {wall:12.2f} {cpu:11.2f} {cpu * 1000 / processes:11.1f}   {runs}")
    for jobs in sorted({j for _n, j in results}):
        off = results.get(("off", jobs))
        if not off:
            continue
        for name in ("before", "after"):
            got = results.get((name, jobs))
            if got:
                print(f"jobs {jobs}: {name} / off  wall {statistics.median(v[0] for v in got) / statistics.median(v[0] for v in off):.2f}x"
                      f"  cpu {statistics.median(v[1] for v in got) / statistics.median(v[1] for v in off):.2f}x")
    print(f"load average at the end {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
