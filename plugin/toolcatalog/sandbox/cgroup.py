"""A per-run control group that caps how many processes a run has: where the kernel's own
per-user count does not (uid 0 is exempt from RLIMIT_NPROC, see limits.py).

When the build may create control groups below its own in a `pids` hierarchy (cgroup v1, or v2
with `pids` enabled for its children; typically a build that runs as root in a VM or container),
every run gets one, `toolcatalog-<uid>-<build pid>-<n>`, with `pids.max` set to the cap plus the
launcher's own processes. The run enters it before anything else starts (a `sh` that moves itself
there and then starts strace or the launcher), so the tool and everything it starts are counted,
`setsid` daemons included. `pids.events` says afterwards whether the cap was hit; the group is
removed when the run's folder is. Empty groups left by a build that died are removed by the next.
"""

from __future__ import annotations

import functools
import itertools
import os
import time

PREFIX = "toolcatalog-"
OVERHEAD = 4  # strace, bubblewrap's two processes (or the Landlock launcher's), the entering sh
_counter = itertools.count()


def _own(controller: str) -> tuple[str, str] | None:
    """(hierarchy mount point, this process's group inside it) for `controller`, or None."""
    try:
        with open("/proc/self/cgroup", encoding="utf-8") as stream:
            lines = stream.read().splitlines()
        with open("/proc/self/mountinfo", encoding="utf-8") as stream:
            mounts = stream.read().splitlines()
    except OSError:
        return None
    groups = {}
    for line in lines:
        number, controllers, path = (line.split(":", 2) + ["", ""])[:3]
        for name in controllers.split(",") if controllers else ["" if number == "0" else controllers]:
            groups[name] = path
    for line in mounts:
        left, _, right = line.partition(" - ")
        fields, kinds = left.split(), right.split()
        if len(fields) < 5 or len(kinds) < 3:
            continue
        root, point, fstype, options = fields[3], fields[4], kinds[0], kinds[2].split(",")
        if fstype == "cgroup" and controller in options and controller in groups:
            path = groups[controller]
        elif fstype == "cgroup2" and "" in groups and controller in _read(os.path.join(point, groups[""].lstrip("/"), "cgroup.subtree_control")).split():
            path = groups[""]
        else:
            continue
        if root != "/" and (path == root or path.startswith(root.rstrip("/") + "/")):
            path = path[len(root.rstrip("/")):]
        return point, path
    return None


def _read(path: str) -> str:
    try:
        with open(path, encoding="utf-8") as stream:
            return stream.read()
    except OSError:
        return ""


@functools.lru_cache(maxsize=1)
def pids_parent() -> str | None:
    """The folder new groups are made in, when this build may make them (tried once)."""
    own = _own("pids")
    if own is None or not os.path.isdir(own[0]):
        return None
    parent = os.path.join(own[0], own[1].lstrip("/"))
    _sweep(parent)
    probe = os.path.join(parent, f"{PREFIX}{os.geteuid()}-{os.getpid()}-probe")
    try:
        os.mkdir(probe)
        ok = os.path.isfile(os.path.join(probe, "pids.max"))
        with open(os.path.join(probe, "pids.max"), "w") as stream:
            stream.write("max")
    except OSError:
        ok = False
    finally:
        _remove(probe)
    return parent if ok else None


def _sweep(parent: str) -> None:
    """Remove empty groups this user's earlier builds left (their build is no longer running)."""
    try:
        names = os.listdir(parent)
    except OSError:
        return
    for name in names:
        parts = name[len(PREFIX):].split("-") if name.startswith(PREFIX) else []
        if len(parts) == 3 and parts[0] == str(os.geteuid()) and parts[1].isdigit() and not os.path.exists(f"/proc/{parts[1]}"):
            _remove(os.path.join(parent, name))


def _remove(folder: str) -> bool:
    try:
        os.rmdir(folder)
        return True
    except FileNotFoundError:
        return True
    except OSError:
        return False


class Group:
    """One run's control group."""

    def __init__(self, folder: str, processes: int) -> None:
        self.folder = folder
        self.processes = processes

    def argv(self, command: list[str]) -> list[str]:
        """`command`, started from inside the group."""
        enter = ('echo $$ > "$1/cgroup.procs" || { echo "toolcatalog: cannot enter the control group of the run" >&2; exit 125; }; '
                 'shift; exec "$@"')
        return ["/bin/sh", "-c", enter, "sh", self.folder, *command]

    def hit(self) -> bool:
        """Whether a fork was refused because the group was full."""
        for line in _read(os.path.join(self.folder, "pids.events")).splitlines():
            name, _, count = line.partition(" ")
            if name == "max" and count.strip().isdigit() and int(count) > 0:
                return True
        return False

    def remove(self) -> None:
        """Remove the group once its processes are gone (they are being killed; allow them a moment)."""
        for _ in range(50):
            if _remove(self.folder):
                return
            time.sleep(0.01)


def create(processes: int) -> Group | None:
    """A new group capped at `processes` (plus the launcher's own), or None where there can be none."""
    parent = pids_parent() if processes > 0 else None
    if parent is None:
        return None
    folder = os.path.join(parent, f"{PREFIX}{os.geteuid()}-{os.getpid()}-{next(_counter)}")
    try:
        os.mkdir(folder)
        with open(os.path.join(folder, "pids.max"), "w") as stream:
            stream.write(str(processes + OVERHEAD))
    except OSError:
        _remove(folder)
        return None
    return Group(folder, processes)
