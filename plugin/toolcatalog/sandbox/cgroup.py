"""Per-run control groups: caps on a run's process count and total memory that the kernel's
per-process and per-user limits cannot give (limits.py: uid 0 is exempt from RLIMIT_NPROC, and
RLIMIT_DATA is per process and does not count files written to memory-backed folders).

Where the build may create control groups below its own (cgroup v1 hierarchies, or v2 with the
controller enabled for its children; typically a build that runs as root in a VM or container),
every run gets a group in each of the `pids` and `memory` hierarchies that allow it, named
`toolcatalog-<uid>-<build pid>-<n>`: `pids.max` is the process cap, the memory limit the memory cap
(both plus what the launcher itself needs). Memory counts the run's processes and the files they
write to memory-backed folders (`/dev/shm`, where the run's writable folders live when it is large
enough), so it also bounds how much a run can write there. The run enters its groups before anything
of the tool starts (`Group.argv`: a `sh` that moves itself there and then starts strace or the
launcher; under our own tracer, the tracer moves bubblewrap's child there before letting it go,
ptracer.py), so the tool and everything it starts are counted, `setsid` daemons included. The groups' event counters say
afterwards whether a cap was hit (a refused fork, an out-of-memory kill); the groups are removed
with the run's folder. Empty groups left by a build that died are removed by the next build.
"""

from __future__ import annotations

import functools
import itertools
import os
import sys
import time
from typing import Mapping

from .. import shellenv

PREFIX = "toolcatalog-"
OVERHEAD = 4  # processes: strace, bubblewrap's two processes (or the Landlock launcher's), the entering sh
MEMORY_OVERHEAD_MB = 64  # the same processes' memory
PIDS, MEMORY = "pids", "memory"
# controller -> (v1 limit file, v2 limit file)
_LIMIT = {PIDS: ("pids.max", "pids.max"), MEMORY: ("memory.limit_in_bytes", "memory.max")}
_counter = itertools.count()
# The shell's loop in Python, for environments the shell would change: the same groups, message and
# exit code. Python changes its own environment as it starts (in the C locale it sets LC_CTYPE=C.UTF-8,
# PEP 538, which -I does not turn off), so the command is started with the environment block this
# process was given, as the kernel keeps it (/proc/self/environ), not with os.environ.
_ENTER_PY = (
    "import os, sys\n"
    "n = int(sys.argv[1])\n"
    "for folder in sys.argv[2:2 + n]:\n"
    "    try:\n"
    "        with open(os.path.join(folder, 'cgroup.procs'), 'w') as stream:\n"
    "            stream.write(str(os.getpid()))\n"
    "    except OSError:\n"
    "        sys.stderr.write('toolcatalog: cannot enter the control group of the run\\n')\n"
    "        sys.exit(125)\n"
    "with open('/proc/self/environ', 'rb') as stream:\n"
    "    given = dict(item.split(b'=', 1) for item in stream.read().split(b'\\0') if b'=' in item)\n"
    "os.execvpe(sys.argv[2 + n], sys.argv[2 + n:], given)\n"
)


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


@functools.lru_cache(maxsize=None)
def parent(controller: str) -> str | None:
    """The folder this build's groups of `controller` are made in, when it may make them (tried once)."""
    own = _own(controller)
    if own is None or not os.path.isdir(own[0]):
        return None
    folder = os.path.join(own[0], own[1].lstrip("/"))
    _sweep(folder)
    probe = os.path.join(folder, f"{PREFIX}{os.geteuid()}-{os.getpid()}-probe")
    try:
        os.mkdir(probe)
        ok = _limit_file(probe, controller) is not None
    except OSError:
        ok = False
    finally:
        _remove(probe)
    return folder if ok else None


def _limit_file(folder: str, controller: str) -> str | None:
    for name in _LIMIT[controller]:
        path = os.path.join(folder, name)
        if os.path.isfile(path) and os.access(path, os.W_OK):
            return path
    return None


def pids_parent() -> str | None:
    return parent(PIDS)


def memory_parent() -> str | None:
    return parent(MEMORY)


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
    """One run's control groups, by controller."""

    def __init__(self, folders: dict[str, str]) -> None:
        self.folders = folders

    def argv(self, command: list[str], env: Mapping[str, str] | None = None) -> list[str]:
        """`command`, started from inside the groups: by /bin/sh, or by the build's Python where
        the shell would change `env` (`shellenv.kept`: the tool must get exactly its variables)."""
        if env is not None and not shellenv.kept(env):
            return [sys.executable, "-I", "-S", "-c", _ENTER_PY, str(len(self.folders)), *self.folders.values(), *command]
        enter = ('n=$1; shift; while [ "$n" -gt 0 ]; do echo $$ > "$1/cgroup.procs" || '
                 '{ echo "toolcatalog: cannot enter the control group of the run" >&2; exit 125; }; shift; n=$((n-1)); done; '
                 'unset PWD; exec "$@"')  # the shell's own PWD is not the tool's
        return ["/bin/sh", "-c", enter, "sh", str(len(self.folders)), *self.folders.values(), *command]

    def hit(self) -> list[str]:
        """The caps the run hit: PIDS (a fork was refused), MEMORY (a process was killed for memory)."""
        found = []
        if PIDS in self.folders and _counter_of(os.path.join(self.folders[PIDS], "pids.events"), "max"):
            found.append(PIDS)
        if MEMORY in self.folders:
            folder = self.folders[MEMORY]
            if _counter_of(os.path.join(folder, "memory.oom_control"), "oom_kill") or _counter_of(os.path.join(folder, "memory.events"), "oom_kill"):
                found.append(MEMORY)
        return found

    def remove(self) -> None:
        """Remove the groups once their processes are gone (they are being killed; allow them a moment)."""
        for folder in self.folders.values():
            for _ in range(50):
                if _remove(folder):
                    break
                time.sleep(0.01)


def _counter_of(path: str, name: str) -> int:
    for line in _read(path).splitlines():
        key, _, value = line.partition(" ")
        if key == name and value.strip().isdigit():
            return int(value)
    return 0


def _no_swap(folder: str, limit: str) -> None:
    """Swap counted in the memory cap too, where the kernel accounts for it (best effort)."""
    for name, value in (("memory.memsw.limit_in_bytes", limit), ("memory.swap.max", "0")):
        try:
            with open(os.path.join(folder, name), "w") as stream:
                stream.write(value)
        except OSError:
            pass


def create(processes: int, memory_mb: int) -> Group | None:
    """New groups capping the process count at `processes` and the memory at `memory_mb` MiB (each
    plus the launcher's own; 0: not capped), or None where there can be none."""
    wanted = {PIDS: str(processes + OVERHEAD) if processes else "", MEMORY: str((memory_mb + MEMORY_OVERHEAD_MB) << 20) if memory_mb else ""}
    folders: dict[str, str] = {}
    name = f"{PREFIX}{os.geteuid()}-{os.getpid()}-{next(_counter)}"
    for controller, value in wanted.items():
        base = parent(controller) if value else None
        if base is None:
            continue
        folder = os.path.join(base, name)
        try:
            os.mkdir(folder)
            limit = _limit_file(folder, controller)
            if limit is None:
                raise OSError("no limit file")
            with open(limit, "w") as stream:
                stream.write(value)
            if controller == MEMORY:
                _no_swap(folder, value)
        except OSError:
            _remove(folder)
            continue
        folders[controller] = folder
    return Group(folders) if folders else None
