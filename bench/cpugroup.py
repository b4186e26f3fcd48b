"""A cgroup v1 `cpuacct` group for one measured process tree: its CPU (user + system of every
process in it, those reaped inside bubblewrap's PID namespace too, which `getrusage` misses)."""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path

CPUACCT = Path("/sys/fs/cgroup/cpuacct")


@contextlib.contextmanager
def cpu_group(prefix: str) -> Iterator[tuple[Path, Callable[[], None]]]:
    """A new group and a `preexec_fn` that moves the child into it; the group is removed after
    (retried: it is busy until the kernel has let its last process go)."""
    group = CPUACCT / f"{prefix}-{os.getpid()}-{time.monotonic_ns()}"
    group.mkdir()
    procs = str(group / "cgroup.procs")

    def enter() -> None:
        with open(procs, "w") as stream:
            stream.write(str(os.getpid()))

    try:
        yield group, enter
    finally:
        for _ in range(100):
            try:
                group.rmdir()
                break
            except OSError:
                time.sleep(0.05)


def cpu_seconds(group: Path) -> float:
    """The group's CPU so far, in seconds."""
    return int((group / "cpuacct.usage").read_text()) / 1e9
