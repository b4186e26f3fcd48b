"""A run's control groups are removed on the cleanup thread, with its folder (issue 21): `close`
hands them over and returns, `flush` (which the engine calls at the end of a check) waits until
they are gone, and a group is removed only once its last process is gone. Real control groups and
processes; nothing here measures time."""

from __future__ import annotations

import os
import subprocess
import tempfile
import threading
import time
from pathlib import Path

import pytest

from toolcatalog import sandbox
from toolcatalog.sandbox import cgroup, launch, runfolders

needs_groups = pytest.mark.skipif(cgroup.pids_parent() is None and cgroup.memory_parent() is None,
                                  reason="needs control groups this build may create")


def _group() -> cgroup.Group:
    group = cgroup.create(5, 64)
    assert group is not None
    return group


def _launch(group: cgroup.Group) -> launch.Launch:
    root = Path(tempfile.mkdtemp(prefix="run-", dir=runfolders.folder()))
    return launch.Launch([], {}, root, "bwrap", False, str(root), root, [], None, "/scratch", "/", group=group)


def _inside(pid: int, folder: str) -> bool:
    return str(pid) in Path(folder, "cgroup.procs").read_text().split()


class _Held:
    """Stands in the cleanup queue before a run's groups, so the test sees what `close` itself did."""

    def __init__(self) -> None:
        self.go = threading.Event()

    def remove(self) -> None:
        assert self.go.wait(30)


@needs_groups
def test_closing_a_run_leaves_its_groups_to_the_cleanup_thread_and_flush_waits_for_them() -> None:
    group = _group()
    run = _launch(group)
    held = _Held()
    blocker = Path(tempfile.mkdtemp(prefix="run-", dir=runfolders.folder()))
    launch._discard(blocker, held)  # type: ignore[arg-type]  # the cleanup thread is busy with this first
    try:
        run.close()
        assert run.group is None
        assert all(os.path.isdir(folder) for folder in group.folders.values())  # not removed by close itself
    finally:
        held.go.set()
    assert sandbox.flush() == []
    assert not any(os.path.exists(folder) for folder in group.folders.values())
    assert not run.root.exists() and not blocker.exists()


@needs_groups
def test_a_group_with_a_process_left_is_not_removed_and_the_process_keeps_its_caps() -> None:
    # The cleanup thread never removes a group under a living process (the kernel refuses: EBUSY),
    # so a run's leftover stays capped; once it is gone, the group can go.
    group = _group()
    sleeper = subprocess.Popen(group.argv(["/bin/sleep", "30"]), stdin=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 20  # until the shell has moved itself into the groups
        while not all(_inside(sleeper.pid, folder) for folder in group.folders.values()) and time.monotonic() < deadline:
            time.sleep(0.01)
        run = _launch(group)
        run.close()
        assert sandbox.flush() == []
        assert sleeper.poll() is None
        assert all(_inside(sleeper.pid, folder) for folder in group.folders.values())
    finally:
        sleeper.kill()
        sleeper.wait()
    group.remove()
    assert not any(os.path.exists(folder) for folder in group.folders.values())
