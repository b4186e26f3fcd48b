#!/usr/bin/env python3
"""CPU per sandboxed run, trees paired: `Context.run` over and over, as a check at one job runs them.

    .venv/bin/python bench/sandbox_runs.py --tree main=/tmp/tc-base/plugin --tree this=plugin [--runs 60] [--rounds 6]

Each `--tree NAME=PLUGIN_FOLDER` is a `plugin` folder (e.g. `git archive <commit> plugin | tar -x -C
/tmp/tc-base`). Each round runs, for every tree and mode (`--modes`, default `auto,off`: sandboxed
and unsandboxed), a fresh Python process inside a fresh `cpuacct` control group, in an order that
rotates from round to round. That process makes a context for bench/run.py's first tool (as the
engine does: `job.make_context`), does `--warmup` runs unmeasured (the spawner started, the caches
warm), then `--runs` runs, each taking the run started ahead for it and starting the next one ahead
while it runs (the engine's `meanwhile`), and waits for the clean-up thread. Measured across those
runs only: the CPU of the whole process tree (the build's process, the spawner and its tracer
threads, bubblewrap and everything in the sandbox), and the build process's own CPU. Interpreter
start-up, imports and the sandbox probe are not counted. What the kernel does on its own workers
(a network namespace's clean-up) is not in the group, for either tree.

Per-run figures are medians over the rounds; pairs are the same round's. On a shared machine read
the CPU, not the wall time.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import cpugroup  # bench/cpugroup.py (this script's folder is on the path)

HERE = Path(__file__).resolve().parent


def child(args: argparse.Namespace) -> int:
    """One measured series, in this process (its control group given by `--group`)."""
    from toolcatalog import sandbox
    from toolcatalog.conformance import job
    from toolcatalog.options import Options

    ws = Path(args.workspace)
    folder = ws / ".agent" / "tools" / "tool-001"
    ctx = job.make_context(Options(cache=False, timeout=20.0, sandbox=args.mode), ws)
    argv = [sys.executable, str(folder / "linux.py")]
    stdin = args.stdin.encode()
    start = job.Start.of(argv, folder, ctx.env, False)
    usage = Path(args.group) / "cpuacct.usage"

    def series(n: int) -> list[int]:
        codes = []
        if ctx.sandbox.mechanism is not None:
            ctx.start_ahead(start)
        for i in range(n):
            work = (lambda: ctx.start_ahead(start)) if i + 1 < n and ctx.sandbox.mechanism is not None else None
            with job.meanwhile(work):
                spawned = ctx.run(argv, cwd=folder, stdin=stdin, timeout_s=20, env=ctx.env)
            codes.append(spawned.result.exit_code)
        sandbox.flush()
        return codes

    series(args.warmup)
    tree0, self0, wall0 = int(usage.read_text()), resource.getrusage(resource.RUSAGE_SELF), time.perf_counter()
    codes = series(args.runs)
    tree1, self1, wall1 = int(usage.read_text()), resource.getrusage(resource.RUSAGE_SELF), time.perf_counter()
    mine = (self1.ru_utime + self1.ru_stime - self0.ru_utime - self0.ru_stime) * 1000
    print(json.dumps({"tree_ms": (tree1 - tree0) / 1e6 / args.runs, "self_ms": mine / args.runs,
                      "wall_ms": (wall1 - wall0) * 1000 / args.runs, "failed": sum(c != 0 for c in codes),
                      "traced": ctx.sandbox.watcher()}))
    return 0


def once(name: str, plugin: Path, mode: str, ws: Path, args: argparse.Namespace) -> dict[str, float]:
    with cpugroup.cpu_group("toolcatalog-runs") as (group, enter):
        env = {**os.environ, "PYTHONPATH": str(plugin.resolve())}
        command = [sys.executable, __file__, "--child", "--group", str(group), "--workspace", str(ws), "--mode", mode,
                   "--runs", str(args.runs), "--warmup", str(args.warmup), "--stdin", args.stdin]
        done = subprocess.run(command, env=env, capture_output=True, text=True, preexec_fn=enter, timeout=600)
        if done.returncode != 0:
            raise SystemExit(f"{name} {mode}: {done.stderr[-2000:]}")
        found: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
        if found["failed"]:
            raise SystemExit(f"{name} {mode}: {found['failed']} runs failed")
        return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--tree", action="append", default=[], help="NAME=PLUGIN_FOLDER (repeatable)")
    parser.add_argument("--modes", default="auto,off")
    parser.add_argument("--runs", type=int, default=60)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--stdin", default="")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--group", help=argparse.SUPPRESS)
    parser.add_argument("--workspace", help=argparse.SUPPRESS)
    parser.add_argument("--mode", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        return child(args)
    sys.path.insert(0, str(HERE))
    import run as bench  # noqa: PLC0415 (bench/run.py: the workspace)

    trees = [(t.split("=", 1)[0], Path(t.split("=", 1)[1])) for t in args.tree] or [("this", HERE.parent / "plugin")]
    root = Path(tempfile.mkdtemp(prefix="toolcatalog-bench-runs-"))
    try:
        ws, _ = bench.make_workspaces(root, 1, "mkdocs")
        if not args.stdin:
            args.stdin = json.dumps(bench.tool_spec(1)["cases"][0][1])
        forms = [(name, plugin, mode) for name, plugin in trees for mode in args.modes.split(",")
                 if mode == "auto" or name == trees[-1][0]]  # unsandboxed: the last tree's only
        results: dict[tuple[str, str], list[dict[str, float]]] = {}
        print(f"{args.runs} runs a series, {args.rounds} rounds; load average {os.getloadavg()[0]:.2f}", flush=True)
        for number in range(args.rounds):
            shift = number % len(forms)
            for name, plugin, mode in forms[shift:] + forms[:shift]:
                got = once(name, plugin, mode, ws, args)
                results.setdefault((name, mode), []).append(got)
                print(f"  round {number + 1} {name:<8} {mode:<4} tree {got['tree_ms']:6.2f} ms  build {got['self_ms']:5.2f} ms  "
                      f"wall {got['wall_ms']:6.2f} ms  ({got['traced'] or 'untraced'})  load {os.getloadavg()[0]:.2f}", flush=True)
    finally:
        subprocess.run(["rm", "-rf", str(root)], check=False)
    print(f"\n{'tree':<8} {'mode':<4} {'tree ms/run':>11} {'build ms/run':>12} {'wall ms/run':>11}   tree ms per round")
    for (name, mode), values in results.items():
        print(f"{name:<8} {mode:<4} {statistics.median(v['tree_ms'] for v in values):11.2f} "
              f"{statistics.median(v['self_ms'] for v in values):12.2f} {statistics.median(v['wall_ms'] for v in values):11.2f}   "
              + ", ".join(f"{v['tree_ms']:.2f}" for v in values))
    sandboxed = [name for name, _plugin in trees if (name, "auto") in results]
    for left, right in zip(sandboxed, sandboxed[1:]):
        diffs = [b["tree_ms"] - a["tree_ms"] for a, b in zip(results[(left, "auto")], results[(right, "auto")])]
        print(f"{right} - {left} (auto, paired by round): median {statistics.median(diffs):+.2f} ms/run, "
              f"{sum(d < 0 for d in diffs)} of {len(diffs)} rounds lower; " + ", ".join(f"{d:+.2f}" for d in diffs))
    print(f"load average at the end {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
