#!/usr/bin/env python3
"""Does the kernel serialize sandboxed starts? Bare loops at parallelism 1 and 2, per form.

    PYTHONPATH=plugin .venv/bin/python bench/sandbox_loops.py [--runs 20] [--rounds 3] [--forms bare,bwrap,...]

The forms: one real sandboxed run replayed as bench/sandbox_split.py captures it (`bare`: the tool
alone; `bwrap`: bubblewrap and the caps' dash around it; `outside`: strace around that, as the
build runs it, less the control-group shell), and `/bin/true` under bubblewrap with no namespace
(`bw-none`: `--ro-bind / / --dev /dev`), with each `--unshare-*` alone, and with all of them as
the build uses them (`bw-all`, `bw-all-sharenet`). Each form runs `--runs` times in a row with one
thread and with two, round after round; the table gives the medians of CPU per run (the whole
process tree, from a `cpuacct` control group where one can be made) and wall time per run, and
processes per second at parallelism 2. Where two threads get about twice the processes per second
of one, nothing serializes them; where they do not on an otherwise idle machine, something
does. Nothing is asserted; wall times depend on load.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import sandbox_split as split  # noqa: E402

BWRAP = "/usr/bin/bwrap"
TRUE = ["/bin/true"]
ROOT = ["--ro-bind", "/", "/", "--dev", "/dev"]
UNSHARE = {"bw-none": [], "bw-user": ["--unshare-user"], "bw-pid": ["--unshare-pid"], "bw-net": ["--unshare-net"],
           "bw-ipc": ["--unshare-ipc"], "bw-uts": ["--unshare-uts"], "bw-cgroup": ["--unshare-cgroup"],
           "bw-all": ["--unshare-all", "--unshare-user", "--disable-userns"],
           "bw-all-sharenet": ["--unshare-all", "--unshare-user", "--disable-userns", "--share-net"]}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--forms", default="", help="comma-separated subset (default: all)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="tc-loops-", dir="/dev/shm" if os.path.isdir("/dev/shm") else None) as tmp:
        root = Path(tmp)
        seen = split.capture(root)
        table = split.forms(seen, root)
        log = os.open(root / "unused.log", os.O_WRONLY | os.O_CREAT, 0o600)
        os.dup2(log, split.LOG_FD)  # sandbox_split.once passes this descriptor on
        os.close(log)
        env, cwd = seen["env"], str(root / "run")
        forms = {name: (table[name][0], table[name][1], seen["cwd"] if name == "bare" else cwd) for name in ("bare", "bwrap", "outside")}
        forms["true"] = (TRUE, b"", "/")
        forms.update({name: ([BWRAP, *flags, *ROOT, "--", *TRUE], b"", "/") for name, flags in UNSHARE.items()})
        wanted = [f for f in args.forms.split(",") if f]
        forms = {k: v for k, v in forms.items() if not wanted or k in wanted}
        meter = split.Meter()
        results: dict[tuple[str, int], list[tuple[float, float]]] = {(k, p): [] for k in forms for p in (1, 2)}
        try:
            for _ in range(args.rounds):
                for name, (command, stdin, folder) in forms.items():
                    for parallel in (1, 2):
                        cpu, wall = meter.read(), time.perf_counter()
                        with concurrent.futures.ThreadPoolExecutor(parallel) as pool:
                            list(pool.map(lambda _: split.once(command, stdin, env, folder, meter), range(args.runs)))
                        results[(name, parallel)].append(((meter.read() - cpu) / args.runs,
                                                          (time.perf_counter() - wall) / args.runs * 1000))
        finally:
            time.sleep(0.5)  # the last namespaces' processes leave the group
            try:
                meter.close()
            except OSError:
                pass
    print(f"load average {os.getloadavg()[0]:.2f}; CPU from {'a cpuacct control group' if meter.group else 'rusage (lower bound)'}")
    print(f"{'form':16} {'1: cpu ms':>9} {'wall ms':>8} {'2: cpu ms':>9} {'wall ms':>8} {'procs/s 1':>9} {'procs/s 2':>9}")
    for name in forms:
        one = [statistics.median(v[i] for v in results[(name, 1)]) for i in (0, 1)]
        two = [statistics.median(v[i] for v in results[(name, 2)]) for i in (0, 1)]
        print(f"{name:16} {one[0]:9.1f} {one[1]:8.1f} {two[0]:9.1f} {two[1]:8.1f} {1000 / one[1]:9.1f} {1000 / two[1]:9.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
