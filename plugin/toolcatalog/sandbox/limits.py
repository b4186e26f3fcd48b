"""Per-run resource caps: memory, processes, and the size of each file a run writes.

They are set before the tool starts, soft and hard limit alike (the tool has no capability to raise
them again), and inherited by everything the tool starts: under bubblewrap with our own tracer, by
the tracer with `prlimit(2)` on bubblewrap's process in the sandbox while it waits at its block
descriptor, before it starts the tool (`rlimits`: no process of its own, ptracer.py); otherwise
inside the sandbox, by dash's `ulimit` inside bubblewrap (`shell_wrap`: two file opens where
prlimit makes thirty, every one a stop under strace) or util-linux `prlimit` (under Landlock, where
dash is missing, or where the tool's environment has a variable the shell would change):

- memory: `RLIMIT_DATA`, the heap and private writable mappings of each process (not its reserved
  but unused address space, which runtimes such as V8 or Go reserve by the gigabyte); and, where a
  control group can be made (cgroup.py), the same cap on the whole run, files it writes to
  memory-backed folders included;
- file size: `RLIMIT_FSIZE`, the bytes one write may bring a file to; past it the write fails
  (`EFBIG`, or `SIGXFSZ` for programs that do not ignore it);
- processes: a control group per run where the build may make one (cgroup.py: exact, root builds
  included); else `RLIMIT_NPROC`, which the kernel counts per user and user namespace and never
  applies to uid 0, so it caps the run's own processes only under bubblewrap with a user namespace
  when the build is not root. Elsewhere nothing caps it (RLIMIT_NPROC would count every process of
  the build's user) and the profile says the process count is not capped.

When a failed run's output shows one of the limits was hit, `reason` says which, and the runner
adds it to the run's result (the last line of stderr, which failure details quote).
"""

from __future__ import annotations

import functools
import os
import shutil
from dataclasses import dataclass
from typing import Mapping

from .. import shellenv
from . import cgroup

MIB = 1 << 20


@dataclass(frozen=True)
class Limits:
    memory_mb: int = 0  # 0: not capped
    processes: int = 0
    file_mb: int = 0


def limiter() -> str | None:
    """`prlimit` when it is installed in the system folders the sandbox shows."""
    found = shutil.which("prlimit", path="/usr/bin:/bin:/usr/sbin:/sbin")
    return found if found and found.startswith(("/usr/", "/bin/", "/sbin/")) else None


CGROUP, RLIMIT = "cgroup", "rlimit"


def process_cap(mechanism: str | None, variant: str) -> str:
    """How a run's process count can be capped here: CGROUP, RLIMIT (when RLIMIT_NPROC counts only
    the run's own processes, see the module docstring) or "" (it cannot)."""
    if mechanism is None:
        return ""
    if cgroup.pids_parent() is not None:
        return CGROUP
    return RLIMIT if mechanism == "bwrap" and variant in ("userns", "noproc") and os.geteuid() != 0 else ""


def wrap(command: list[str], limits: Limits, program: str | None, nproc: str) -> list[str]:
    """`command` started through `prlimit` with the caps set (unchanged when nothing is capped)."""
    options: list[str] = []
    if limits.memory_mb:
        options.append(f"--data={limits.memory_mb * MIB}")
    if limits.file_mb:
        options.append(f"--fsize={limits.file_mb * MIB}")
    if limits.processes and nproc == RLIMIT:
        options.append(f"--nproc={limits.processes}")
    if not options or program is None:
        return command
    return [program, *options, "--", *command]


RLIMIT_FSIZE, RLIMIT_DATA, RLIMIT_NPROC_NUMBER = 1, 2, 6  # Linux's resource numbers (our tracer is Linux's only)


def rlimits(limits: Limits, program: str | None, nproc: str) -> tuple[tuple[int, int], ...]:
    """`wrap`'s caps as (resource, value) pairs for `prlimit(2)` on bubblewrap's process in the
    sandbox, before it starts the tool (ptracer.py): the same values, soft and hard alike, and only
    where `wrap` would set them (`describe` says so). That process is bubblewrap's init in the PID
    namespace, which counts toward RLIMIT_NPROC as it did when dash set the cap after init's fork, so
    the tool's own first process is let start at a cap of 1 as then (init's fork needs room for 2)."""
    if program is None:
        return ()
    caps: list[tuple[int, int]] = []
    if limits.memory_mb:
        caps.append((RLIMIT_DATA, limits.memory_mb * MIB))
    if limits.file_mb:
        caps.append((RLIMIT_FSIZE, limits.file_mb * MIB))
    if limits.processes and nproc == RLIMIT:
        caps.append((RLIMIT_NPROC_NUMBER, max(limits.processes, 2)))
    return tuple(caps)


@functools.lru_cache(maxsize=1)
def shell() -> str | None:
    """dash in the system folders the sandbox shows: it starts in two file opens, where prlimit
    loads its locale first (about thirty more, each a stop under strace). Not bash, which exports
    SHLVL and `_` of its own."""
    found = shutil.which("dash", path="/usr/bin:/bin")
    return found if found and found.startswith(("/usr/", "/bin/")) else None


# PWD stays: bubblewrap sets it to the working folder, and dash keeps (and exports) a PWD that names
# its working folder, so the tool gets the variable it got from prlimit.
_SCRIPT = 'ulimit {} && exec "$@"'
GATE = b"\n"  # what a gated start waits for on its stdin (`shell_wrap(gated=True)`) before the tool starts


def gate_possible(env: Mapping[str, str]) -> bool:
    """Whether a start can wait behind a gate (`shell_wrap(gated=True)`): dash is there and keeps `env`."""
    return shell() is not None and shellenv.kept(env)


def gate_variable(env: Mapping[str, str]) -> str:
    """The shell variable the gate's `read` fills: one not in `env`, so that the tool never gets a
    variable of its environment emptied (the shell exports a variable it was given, and `read`
    sets it to the gate's empty line)."""
    name = "_"
    while name in env:
        name += "g"
    return name


def shell_wrap(command: list[str], limits: Limits, program: str | None, nproc: str, env: Mapping[str, str],
               sh: str | None, gated: bool = False) -> list[str]:
    """`wrap`, with the caps set by `sh` (`shell()`) instead of prlimit where the shell hands the
    tool its environment unchanged (`shellenv.kept`). The same limits, soft and hard alike (dash's
    `ulimit` sets both without -S or -H), the same argv and descriptors, one exec as prlimit's; the
    numbers are literal words of the script, so no variable (not even IFS) changes them, and a
    `ulimit` that fails ends the chain before the tool starts. Without prlimit nothing is capped
    either way (`describe` says so), so the shell is used only where prlimit would be."""
    caps = []
    if limits.memory_mb:
        caps.append(f"-d {limits.memory_mb * 1024}")  # KiB
    if limits.file_mb:
        caps.append(f"-f {limits.file_mb * 2048}")  # 512-byte blocks
    if limits.processes and nproc == RLIMIT:
        caps.append(f"-p {limits.processes}")
    if not caps or program is None:
        caps = []
    if gated:
        # Started ahead of its turn: the shell reads one line of stdin (byte by byte, so nothing of
        # the tool's own input) and starts the tool only then; at end of file (the build is gone)
        # it exits without starting it. Only where the shell keeps `env` (`gate_possible`).
        assert sh is not None and shellenv.kept(env), "gate_possible() first"
        script = f"read -r {gate_variable(env)} && " + "".join(f"ulimit {c} && " for c in caps) + 'exec "$@"'
        return [sh, "-c", script, "sh", *command]
    if not caps:
        return command
    if sh is None or not shellenv.kept(env):
        return wrap(command, limits, program, nproc)
    return [sh, "-c", _SCRIPT.format(" && ulimit ".join(caps)), "sh", *command]


def memory_group() -> bool:
    """Whether each run's total memory is capped by a control group here."""
    return cgroup.memory_parent() is not None


def describe(limits: Limits, program: str | None, nproc: str, whole_run: bool = False) -> str:
    """The caps in words, for the sandbox profile. `whole_run`: memory is capped per run too."""
    if program is None or not (limits.memory_mb or limits.file_mb):
        caps = "no memory or file size cap (`prlimit` is not installed)" if program is None else "no memory or file size cap"
    else:
        caps = ", ".join(part for part in (
            f"memory {limits.memory_mb} MiB" if limits.memory_mb else "",
            f"files {limits.file_mb} MiB" if limits.file_mb else "") if part) + " per process"
        if whole_run and limits.memory_mb:
            caps += f" (memory {limits.memory_mb} MiB per run too, files in memory included)"
    if limits.processes and (nproc == CGROUP or (nproc == RLIMIT and program is not None)):
        return f"{caps}, at most {limits.processes} processes"
    if not limits.processes:
        return f"{caps}; process count not capped"
    return (f"{caps}; process count not capped (no control group can be made here, and the kernel applies "
            f"RLIMIT_NPROC to none but unprivileged user namespaces)")


_MEMORY = (b"MemoryError", b"Cannot allocate memory", b"out of memory", b"bad_alloc", b"memory allocation failed")
_PROCESSES = (b"Resource temporarily unavailable", b"BlockingIOError", b"fork: retry", b"Cannot fork", b"can't fork")
_FILE = (b"File too large", b"file size limit exceeded")
SIGXFSZ = 25


def reason(exit_code: int | None, stderr: bytes, limits: Limits, nproc: str, hit: list[str] | tuple[str, ...] = ()) -> str | None:
    """Which cap a failed run hit, from how it ended (None: none that shows). `hit`: the caps its
    control groups say were reached (cgroup.PIDS, cgroup.MEMORY)."""
    if exit_code in (None, 0):
        return None
    if cgroup.MEMORY in hit:
        return f"exceeded the memory limit of {limits.memory_mb} MiB (`sandbox_memory_mb`)"
    if cgroup.PIDS in hit:
        return f"exceeded the process limit of {limits.processes} (`sandbox_processes`)"
    if limits.file_mb and (exit_code in (-SIGXFSZ, 128 + SIGXFSZ) or any(s in stderr for s in _FILE)):
        return f"exceeded the file size limit of {limits.file_mb} MiB (`sandbox_file_mb`)"
    if limits.memory_mb and any(s in stderr for s in _MEMORY):
        return f"exceeded the memory limit of {limits.memory_mb} MiB (`sandbox_memory_mb`)"
    if limits.processes and nproc == RLIMIT and any(s in stderr for s in _PROCESSES):
        return f"exceeded the process limit of {limits.processes} (`sandbox_processes`)"
    return None
