#!/usr/bin/env python3
"""Where a sandboxed run's CPU goes: one real run's command line replayed in several forms.

    PYTHONPATH=plugin .venv/bin/python bench/sandbox_split.py [--runs 20] [--rounds 5]

It checks a one-tool bench workspace (bench/run.py's) with `sandbox: auto`, keeps the first
sandboxed run's command line, environment and folders as `sandbox.prepare` made them, and starts
that run again and again in these forms, interleaved round by round:

* `bare`: the tool alone (`python linux.py`, its input on stdin);
* `bwrap`: bubblewrap and the caps' dash around it, no strace (the run's own bubblewrap options);
* `outside`: the run as the build starts it (strace around bubblewrap), less the control-group
  shell in front;
* `inside`: a prototype, *not* what the build does (see bench/README.md, "A tracer inside the
  sandbox"): strace as the sandbox's PID 1 (`--as-pid-1`), an execute-only copy of strace (so
  that the kernel makes it non-dumpable), its log on an inherited descriptor (`-o /proc/self/fd/N`), which the
  caps' dash closes before the tool starts, and `-q` (exit lines kept, the proof it saw the end).

For each form: CPU per run (user + system) of the whole process tree, from a `cpuacct` control
group when the build may make one (else the children's rusage, which misses processes reaped
inside bubblewrap's PID namespace: a lower bound), wall time per run, and, for `outside`, strace's
stops counted from outside (an `strace -e trace=ptrace` around it, `PTRACE_SYSCALL` and
`PTRACE_CONT` per traced process), and the trace log's lines. Counts do not depend on load; CPU
time depends on it less than wall time does. Nothing is asserted.
"""

from __future__ import annotations

import argparse
import collections
import dataclasses
import json
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import run as bench  # noqa: E402  (bench/run.py: the workspaces)

CPUACCT = Path("/sys/fs/cgroup/cpuacct")
STDIN = b'{"a": 1, "b": 2}\n'
LOG_FD = 9  # the inside prototype's log descriptor (dash's redirections take one digit); checked free in `main`


def capture(root: Path) -> dict[str, Any]:
    """Check a one-tool workspace; keep the first sandboxed run as prepared (its folder copied)."""
    import toolcatalog.sandbox as sandbox
    from toolcatalog import cli

    bench.make_workspaces(root, 1, "mkdocs")
    keep = root / "run"
    seen: dict[str, Any] = {}
    original = sandbox.prepare
    probed = sandbox.probe
    # The forms below start from strace's command line: the build's own tracer is told not to work.
    sandbox.probe = lambda mode: dataclasses.replace(probed(mode), ptrace=False)  # type: ignore[assignment]

    def prepare(*args: Any, **kwargs: Any) -> Any:
        launch = original(*args, **kwargs)
        if not seen and launch.log is not None:
            shutil.copytree(launch.root, keep, symlinks=True)
            seen.update(argv=list(launch.argv), env=dict(launch.env), root=str(launch.root), gate=launch.gate,
                        cwd=launch.cwd_inside)
        return launch

    sandbox.prepare = prepare
    here = os.getcwd()
    os.chdir(root / "toolcatalog")
    try:
        cli.main(["check", ".", "--no-cache", "--jobs", "1"])
    except SystemExit:
        pass
    finally:
        os.chdir(here)
        sandbox.prepare = original
        sandbox.probe = probed
    if not seen:
        raise SystemExit("no traced sandboxed run here (bubblewrap and strace are needed)")
    seen["argv"] = [a.replace(seen["root"], str(keep)) for a in seen["argv"]]
    return seen


def forms(seen: dict[str, Any], root: Path) -> dict[str, tuple[list[str], bytes]]:
    argv = seen["argv"]
    outside = argv[argv.index(next(a for a in argv if a.endswith("/strace"))):]  # less the control-group shell
    bwrap = outside[outside.index("--") + 1:]
    end = bwrap.index("--", 1)
    inner = bwrap[end + 1:]  # dash -c SCRIPT sh TOOL...
    tool = inner[4:]
    strace_options = outside[1:outside.index("--")]
    quiet = os.path.join(root, "strace-x")
    shutil.copy(outside[0], quiet)
    os.chmod(quiet, 0o111)  # execute-only: the kernel makes the process non-dumpable
    options = [f"/proc/self/fd/{LOG_FD}" if o.endswith("trace.log") else ("-q" if o == "-qq" else o) for o in strace_options]
    inside = [*bwrap[:end], "--as-pid-1", "--ro-bind", quiet, outside[0], "--", outside[0], *options, "--",
              inner[0], inner[1], f"exec {LOG_FD}>&- && " + inner[2], *inner[3:]]
    gate = seen["gate"]
    return {"bare": (tool, STDIN), "bwrap": (bwrap, gate + STDIN), "outside": (outside, gate + STDIN),
            "inside": (inside, gate + STDIN)}


class Meter:
    """CPU of everything started, from a cpuacct control group where one can be made."""

    def __init__(self) -> None:
        self.group: Path | None = None
        try:
            group = CPUACCT / f"toolcatalog-split-{os.getpid()}"
            group.mkdir()
            self.group = group
        except OSError:
            pass

    def enter(self) -> None:
        if self.group is not None:
            (self.group / "cgroup.procs").write_text(str(os.getpid()))

    def read(self) -> float:
        if self.group is not None:
            return int((self.group / "cpuacct.usage").read_text()) / 1e6
        usage = resource.getrusage(resource.RUSAGE_CHILDREN)
        return (usage.ru_utime + usage.ru_stime) * 1000

    def close(self) -> None:
        if self.group is not None:
            self.group.rmdir()


def once(argv: list[str], stdin: bytes, env: dict[str, str], cwd: str, meter: Meter | None = None) -> None:
    done = subprocess.run(argv, input=stdin, env=env, cwd=cwd, capture_output=True, pass_fds=(LOG_FD,),
                          preexec_fn=meter.enter if meter else None)
    if done.returncode != 0:
        raise SystemExit(f"{argv[0]}: exit {done.returncode}: {done.stderr[-300:]!r}")


def stops(argv: list[str], stdin: bytes, env: dict[str, str], cwd: str, work: Path) -> dict[str, Any]:
    """strace's resumes of its tracees, counted by an strace around it (not -f: its own calls only)."""
    log = work / "ptrace.log"
    once(["strace", "-qq", "-e", "trace=ptrace", "-e", "signal=none", "-o", str(log), "--", *argv], stdin, env, cwd)
    per: collections.Counter[str] = collections.Counter()
    for line in log.read_text().splitlines():
        match = re.match(r"ptrace\((PTRACE_SYSCALL|PTRACE_CONT), (\d+)", line)
        if match:
            per[match.group(2)] += 1
    return {"resumes": sum(per.values()), "per process": sorted(per.values(), reverse=True)}


# What a tool tries against the inside prototype's tracer (its PID 1), and the file its trace must
# show (None: the tool must die or the trace must lack its exit line). Each ends with a write.
ATTACKS = {
    "kill every process it can see, then pid 1": (
        "import os, signal\ntry: os.kill(-1, signal.SIGKILL)\nexcept OSError: pass\nos.kill(1, signal.SIGKILL)\n"
        "import time; time.sleep(0.1)\nopen('/tmp/after-kill', 'w').write('x')", "/tmp/after-kill"),
    "SIGTERM, SIGHUP, SIGINT, SIGSTOP to pid 1": (
        "import os, signal, time\nfor s in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT, signal.SIGSTOP): os.kill(1, s)\n"
        "time.sleep(0.1)\nopen('/tmp/after-signals', 'w').write('x')", "/tmp/after-signals"),
    "write fake lines through /proc/1/fd/*, ptrace pid 1": (
        "import os, ctypes\nfor fd in os.listdir('/proc/1/fd'):\n"
        "    try: os.write(os.open('/proc/1/fd/' + fd, os.O_WRONLY | os.O_APPEND), b'1 +++ exited with 0 +++\\n')\n"
        "    except OSError: pass\n"
        "ctypes.CDLL(None).ptrace(16, 1, 0, 0)\nopen('/tmp/after-fds', 'w').write('x')", "/tmp/after-fds"),
    "lower pid 1's file size cap around a write": (
        "import resource as r\nhard = r.prlimit(1, r.RLIMIT_FSIZE)[1]\nr.prlimit(1, r.RLIMIT_FSIZE, (1, hard))\n"
        "open('/tmp/hidden', 'w').write('x')\nr.prlimit(1, r.RLIMIT_FSIZE, (hard, hard))", "/tmp/hidden"),
}


def attacks(table: dict[str, tuple[list[str], bytes]], env: dict[str, str], cwd: str, root: Path) -> None:
    """Each attack under the inside prototype, its log a file (as `inside`) and a pipe: does the log
    show the attack's write, or lack the tool's exit (not observed)? Either is safe; a log that shows
    a clean exit without the write is a forged result."""
    command, gate = table["inside"]
    tool_at = command.index("sh", command.index("-c")) + 1  # dash -c SCRIPT sh TOOL...
    for name, (code, path) in ATTACKS.items():
        argv = [*command[:tool_at], sys.executable, "-c", code]
        for via in ("file", "pipe"):
            log = root / "attack.log"
            if via == "file":
                opened = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
                os.dup2(opened, LOG_FD)
                os.close(opened)
                reader = None
            else:
                read, write = os.pipe()
                os.dup2(write, LOG_FD)
                os.close(write)
                reader = subprocess.Popen(["cat"], stdin=read, stdout=open(log, "wb"))
                os.close(read)
            subprocess.run(argv, input=gate, env=env, cwd=cwd, capture_output=True, pass_fds=(LOG_FD,), timeout=30)
            os.close(LOG_FD)
            if reader is not None:
                reader.wait()
            text = log.read_text(errors="replace")
            exited = re.search(r"^\d+ +\+\+\+ exited with", text, re.M) is not None
            shown = f'"{path}"' in text
            verdict = "observed, write shown" if exited and shown else ("not observed (no exit line)" if not exited else "FORGED: clean exit, write missing")
            print(f"  {name} [{via} log]: {verdict}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=20, help="runs per form and round")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--attacks", action="store_true", help="only run the attacks against the inside prototype")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="tc-split-", dir="/dev/shm" if os.path.isdir("/dev/shm") else None) as tmp:
        root = Path(tmp)
        seen = capture(root)
        try:
            os.fstat(LOG_FD)
            raise SystemExit(f"descriptor {LOG_FD} is in use here")
        except OSError:
            pass
        table = forms(seen, root)
        log = os.open(root / "inside.log", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.dup2(log, LOG_FD)  # the inside prototype's log descriptor (the other forms ignore it)
        os.close(log)
        env, cwd = seen["env"], str(root / "run")
        if args.attacks:
            attacks(table, env, cwd, root)
            return 0
        meter = Meter()
        results: dict[str, list[tuple[float, float]]] = {name: [] for name in table}
        try:
            for _ in range(args.rounds):
                for name, (command, stdin) in table.items():
                    cpu, wall = meter.read(), time.perf_counter()
                    for _ in range(args.runs):
                        once(command, stdin, env, cwd if name != "bare" else seen["cwd"], meter)
                    results[name].append(((meter.read() - cpu) / args.runs, (time.perf_counter() - wall) / args.runs * 1000))
            counted = stops(*table["outside"], env, cwd, root)
            lines = {"outside": len((root / "run" / "trace.log").read_text().splitlines()),
                     "inside": len((root / "inside.log").read_text().splitlines())}  # strace reopens it truncated: the last run
        finally:
            meter.close()
        print(f"load average {os.getloadavg()[0]:.2f}; CPU from {'a cpuacct control group' if meter.group else 'rusage (lower bound)'}")
        print(f"{'form':8} {'cpu ms/run':>10} {'wall ms/run':>11}")
        for name, values in results.items():
            print(f"{name:8} {statistics.median(v[0] for v in values):10.1f} {statistics.median(v[1] for v in values):11.1f}")
        print(f"outside: strace resumes per run {counted['resumes']} (per process {counted['per process']}), "
              f"trace log lines {lines['outside']}; inside: trace log lines {lines['inside']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
