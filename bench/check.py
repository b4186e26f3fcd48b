#!/usr/bin/env python3
"""The sandbox's cost and the jobs curve: `toolcatalog check --no-cache` against a bare loop.

Run from the repository root with the project's virtualenv (see bench/README.md):

    .venv/bin/python bench/check.py                      # 50 tools (150 processes), jobs 1,2, 3 rounds
    .venv/bin/python bench/check.py --tools 200 --jobs 1,2,4 --repeat 3 --modes off,bare   # the jobs curve

The workspace is bench/run.py's `toolcatalog/` one (N speccify tools, 3 examples each, every
example a small Python program). Three ways of running the same 3 x N processes, each at every
`--jobs`, in interleaved rounds (the order rotates from round to round, so that a change in machine
load hits every mode alike):

* `auto`: `python -m toolcatalog.cli check . --no-cache --jobs J` (the default `sandbox: auto`:
  bubblewrap and strace where they work),
* `off`: the same with `--sandbox off`,
* `bare`: a Python loop (`python bench/check.py --bare-loop`, J threads) that starts the very same
  processes (same program, file, working folder, stdin and environment) with `subprocess.run` and
  nothing else: no manifests, no cache, no checks.

Every run is timed from outside around its subprocess (interpreter start-up included). The
measured commands (not the example processes they start, whose environment is their own) run with
bytecode cached in the workspace (`PYTHONPYCACHEPREFIX`, `PYTHONDONTWRITEBYTECODE` removed), as an
installed package has it: with `PYTHONDONTWRITEBYTECODE` set, every check would compile its modules
again (about 0.2 s of CPU each time), which no real build pays. The table shows medians and the ratios auto/off and off/bare at each `--jobs`, and the jobs curve: processes
per second, and per core in use (min(jobs, CPUs)). For a check it also splits the wall time into
its fixed part ("outside": interpreter, imports, harvest and planning, the report, everything outside
the `checked in` seconds the check prints) and its runs ("inside"), and gives the ratio of the runs
alone to the bare loop's ("runs/bare"; an addition to the ratio of the targets, not a replacement). It is a benchmark, not a test: nothing asserts a
time; it stops only when a check does not pass every tool or does not start every process.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import run as bench  # noqa: E402  (bench/run.py: the workspaces and the machine facts)

ENV_NAMES = ("PATH", "HOME", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "TMPDIR", "TEMP", "TMP")


def processes_file(root: Path, tc: Path, n: int) -> Path:
    """The 3 x N processes a check starts, for the bare loop: argv, working folder, stdin."""
    listing = []
    for i in range(1, n + 1):
        spec = bench.tool_spec(i)
        folder = tc / ".agent" / "tools" / spec["name"]
        for _title, request, _expected in spec["cases"]:
            listing.append({"argv": [os.path.abspath(sys.executable), str(folder / "linux.py")], "cwd": str(folder),
                            "stdin": json.dumps(request, ensure_ascii=False)})
    path = root / "processes.json"
    path.write_text(json.dumps(listing), encoding="utf-8")
    return path


def bare_loop(listing: Path, jobs: int) -> int:
    """Start every listed process, `jobs` at a time, as a plain loop would; exit 1 if one did not answer."""
    items = json.loads(listing.read_text(encoding="utf-8"))
    env = {k: os.environ[k] for k in ENV_NAMES if k in os.environ}
    env["PYTHONDONTWRITEBYTECODE"] = "1"

    def one(item: dict[str, Any]) -> bool:
        done = subprocess.run(item["argv"], cwd=item["cwd"], input=item["stdin"].encode(), env=env,
                              capture_output=True, timeout=60)
        return done.returncode in (0, 1) and done.stdout.startswith(b"{")

    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        answered = list(pool.map(one, items))
    return 0 if all(answered) else 1


class Mode:
    def __init__(self, name: str, jobs: int, argv: list[str], cwd: Path, expect: int) -> None:
        self.name, self.jobs, self.argv, self.cwd, self.expect = name, jobs, argv, cwd, expect
        self.times: list[float] = []
        self.cpu: list[float] = []  # user + system seconds of the run and everything it started
        self.check_s: list[float] = []
        self.sandbox = ""
        self.env = measured_env(cwd.parent)

    def run(self) -> float:
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.perf_counter()
        done = subprocess.run(self.argv, cwd=self.cwd, env=self.env, capture_output=True, text=True)
        seconds = time.perf_counter() - started
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        self.cpu.append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
        output = done.stdout + done.stderr
        if self.name == "bare":
            if done.returncode != 0:
                raise bench.BenchError(f"the bare loop failed:\n{output[-2000:]}")
        else:
            self._verify(done.returncode, output)
        self.times.append(seconds)
        return seconds

    def _verify(self, code: int, output: str) -> None:
        match = re.search(r"(\d+) tools checked in ([\d.]+)s: (\d+) processes started", output)
        passed = output.count(" passed ")
        if code != 0 or match is None or int(match.group(3)) != self.expect or passed < self.expect // 3:
            raise bench.BenchError(f"`{' '.join(self.argv[1:])}` did not pass every tool (exit {code}):\n{output[-3000:]}")
        self.check_s.append(float(match.group(2)))
        self.sandbox = bench.sandbox_used(output) or self.sandbox

    @property
    def median(self) -> float:
        return statistics.median(self.times)

    @property
    def inside(self) -> float | None:
        """The median of the seconds the check itself says its runs took (None: no check)."""
        return statistics.median(self.check_s) if self.check_s else None

    @property
    def cpu_median(self) -> float:
        return statistics.median(self.cpu) if self.cpu else 0.0


def measured_env(root: Path) -> dict[str, str]:
    """The measured commands' environment: the build's, with bytecode cached under `root` (see the
    module docstring). The example processes do not see it: a check starts them with its scrubbed
    environment, the bare loop with the same names (`ENV_NAMES`), both adding PYTHONDONTWRITEBYTECODE=1."""
    env = {k: v for k, v in bench.BUILD_ENV.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = str(root / "pycache")
    return env


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tools", type=int, default=50, help="synthetic tools (3 processes each; default 50)")
    parser.add_argument("--jobs", default="1,2", help="comma-separated --jobs values (default 1,2)")
    parser.add_argument("--repeat", type=int, default=3, help="interleaved rounds; medians are reported (default 3)")
    parser.add_argument("--modes", default="auto,off,bare", help="which of auto, off, bare (default all three)")
    parser.add_argument("--out", type=Path, default=bench.OUT_DIR / "check.json", help="JSON results (default bench/out/check.json)")
    parser.add_argument("--bare-loop", nargs=2, metavar=("LIST", "JOBS"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.bare_loop:
        return bare_loop(Path(args.bare_loop[0]), int(args.bare_loop[1]))
    jobs_list = [int(x) for x in args.jobs.split(",") if x.strip()]
    modes = [x.strip() for x in args.modes.split(",") if x.strip()]
    if set(modes) - {"auto", "off", "bare"} or not jobs_list or min(jobs_list) < 1 or args.repeat < 1 or args.tools < 1:
        parser.error("--modes takes auto, off, bare; --jobs, --repeat and --tools at least 1")
    facts = bench.machine_facts()
    plugin = bench.plugin_facts()
    started = time.perf_counter()
    root = Path(tempfile.mkdtemp(prefix="toolcatalog-bench-check-"))
    try:
        tc, _base = bench.make_workspaces(root, args.tools, "mkdocs")
        listing = processes_file(root, tc, args.tools)
        processes = 3 * args.tools
        cli = [sys.executable, "-m", "toolcatalog.cli", "check", ".", "--no-cache", "-f", "mkdocs-nonav.yml"]
        table: list[Mode] = []
        for jobs in jobs_list:
            for mode in modes:
                if mode == "bare":
                    command = [sys.executable, str(Path(__file__).resolve()), "--bare-loop", str(listing), str(jobs)]
                else:
                    command = [*cli, "--jobs", str(jobs), "--sandbox", mode]
                table.append(Mode(mode, jobs, command, tc, processes))
        print(f"workspace: {root} ({args.tools} tools, {processes} processes; jobs {jobs_list}; {args.repeat} rounds); "
              f"each process: {interpreter()} linux.py; bytecode cached in {root / 'pycache'}", flush=True)
        for mode in table:  # unmeasured: imports compiled, files in the page cache, the parse cache filled
            if mode.name != "bare":
                mode.run()
                mode.times.clear()
                mode.cpu.clear()
                mode.check_s.clear()
                break
        for round_no in range(args.repeat):
            shift = round_no % len(table)
            for mode in table[shift:] + table[:shift]:
                seconds = mode.run()
                print(f"  round {round_no + 1}/{args.repeat}  {mode.name:<5} jobs {mode.jobs}  {seconds:7.2f}s  cpu {mode.cpu[-1]:6.2f}s",
                      flush=True)
    finally:
        subprocess.run(["rm", "-rf", str(root)], check=False)
    rows = report(table, processes)
    facts["loadavg_at_end"] = bench.loadavg()
    elapsed = time.perf_counter() - started
    print(f"\nplugin: {plugin}; load average at start {facts['loadavg_at_start']}, at end {facts['loadavg_at_end']}; "
          f"whole run {elapsed:.0f}s")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"benchmark": "toolcatalog check: sandbox, unsandboxed, bare loop", "tools": args.tools,
                                    "processes": processes, "repeat": args.repeat, "machine": facts, "plugin": plugin,
                                    "interpreter": interpreter(),
                                    "wall_s": round(elapsed, 1), "rows": rows}, indent=2) + "\n", encoding="utf-8")
    print(f"results: {args.out}")
    return 0


def interpreter() -> str:
    """The Python every measured process runs (speccify runs `.py` files with the build's own
    interpreter): its path and, when that is a link or a shim, what it really is."""
    real = os.path.realpath(sys.executable)
    return sys.executable if real == sys.executable else f"{sys.executable} (-> {real})"


def report(table: list[Mode], processes: int) -> list[dict[str, Any]]:
    cpus = os.cpu_count() or 1
    by = {(m.name, m.jobs): m for m in table}
    rows = []
    print(f"\n{'jobs':>4} {'mode':<5} {'median s':>9} {'min s':>7} {'cpu s':>7} {'procs/s':>8} {'per core':>8} {'outside':>8} "
          f"{'inside':>7}  ratio (wall; cpu; runs/bare)")
    for mode in table:
        cores = min(mode.jobs, cpus)
        rate = processes / mode.median
        ratio = ""
        other = {"auto": "off", "off": "bare"}.get(mode.name)
        if other and (other, mode.jobs) in by:
            base = by[(other, mode.jobs)]
            ratio = f"{mode.median / base.median:.2f}x {other}; cpu {mode.cpu_median / max(base.cpu_median, 1e-9):.2f}x"
            if other == "bare" and mode.inside is not None:
                ratio += f"; runs {mode.inside / base.median:.2f}x"
        inside = mode.inside
        split = f"{mode.median - inside:>8.2f} {inside:>7.2f}" if inside is not None else f"{'':>8} {'':>7}"
        print(f"{mode.jobs:>4} {mode.name:<5} {mode.median:>9.2f} {min(mode.times):>7.2f} {mode.cpu_median:>7.2f} {rate:>8.1f} "
              f"{rate / cores:>8.1f} {split}  {ratio}")
        rows.append({"mode": mode.name, "jobs": mode.jobs, "times_s": [round(t, 2) for t in mode.times],
                     "median_s": round(mode.median, 2), "min_s": round(min(mode.times), 2),
                     "cpu_s": [round(c, 2) for c in mode.cpu], "cpu_median_s": round(mode.cpu_median, 2),
                     "processes_per_s": round(rate, 1), "per_core": round(rate / cores, 1), "ratio": ratio,
                     "check_s": [round(c, 2) for c in mode.check_s], "sandbox": mode.sandbox,
                     "outside_s": None if inside is None else round(mode.median - inside, 2)})
    return rows


if __name__ == "__main__":
    sys.exit(main())
