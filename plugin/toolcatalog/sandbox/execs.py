"""Which files a run may execute when its contract limits the programs it starts (`exec.allow`).

A command is more than its first file: a script runs through the interpreter its `#!` line names
(`/usr/bin/env python3` through env, then python3), and every dynamically linked program through
its ELF interpreter (`ld-linux`), which the kernel opens for execution too. `own(command, path)`
is that chain for the tool's own command: what it may always run. An `execve` that names an
interpreter itself (`/lib64/ld-linux-x86-64.so.2 /bin/cat`) is not the command starting: the
loader then runs a program Landlock does not see executed (it maps it), so the build reports it. `allowed(patterns, path)` adds
the programs the contract names (file names or globs, searched on PATH, or absolute globs) with
their own chains. Everything here is resolved on the host, by the build, before the run.

`limit` decides whether a run's `exec.allow` can be enforced (Landlock's execute right: the
launcher itself under the Landlock fallback, `limited` inside bubblewrap) or is only observed, and
`spawned` reads a trace's programs against the command's own start.
"""

from __future__ import annotations

import glob
import os
import shutil
import struct

from . import landlock_launcher, layout
from .probe import LAUNCHER, Facts

MAX_DEPTH = 4  # interpreters of interpreters: deeper than any real chain
PT_INTERP = 3


def _elf_interpreter(path: str) -> str | None:
    """The ELF interpreter a program names (PT_INTERP), or None (static, not ELF, unreadable)."""
    try:
        with open(path, "rb") as stream:
            head = stream.read(64)
            if len(head) < 64 or head[:4] != b"\x7fELF" or head[4] != 2:  # 64-bit only: ours
                return None
            order = "<" if head[5] == 1 else ">"
            phoff, = struct.unpack(order + "Q", head[32:40])
            phentsize, phnum = struct.unpack(order + "HH", head[54:58])
            for index in range(min(phnum, 64)):
                stream.seek(phoff + index * phentsize)
                entry = stream.read(56)
                if len(entry) < 56:
                    return None
                kind, = struct.unpack(order + "I", entry[:4])
                if kind == PT_INTERP:
                    offset, = struct.unpack(order + "Q", entry[8:16])
                    size, = struct.unpack(order + "Q", entry[32:40])
                    stream.seek(offset)
                    return stream.read(min(size, 4096)).split(b"\0", 1)[0].decode("utf-8", "replace") or None
    except (OSError, struct.error):
        return None
    return None


def _shebang(path: str) -> list[str]:
    try:
        with open(path, "rb") as stream:
            line = stream.readline(512)
    except OSError:
        return []
    if not line.startswith(b"#!"):
        return []
    return line[2:].decode("utf-8", "replace").split()


def _chain(program: str, path: str, found: list[str], entries: list[str] | None = None, depth: int = 0) -> None:
    """`program` (a path) and what the kernel executes to run it, into `found`; into `entries`, the
    files of that chain an `execve` names (the program, and what an `env` line looks up): the
    interpreters themselves are loaded by the kernel, never named by an `execve`."""
    if depth > MAX_DEPTH or not os.path.isfile(program):
        return
    for name in (program, os.path.realpath(program)):
        if name not in found:
            found.append(name)
        if entries is not None and name not in entries:
            entries.append(name)
    interpreter = _elf_interpreter(program)
    if interpreter:
        _chain(interpreter, path, found, None, depth + 1)
        return
    words = _shebang(program)
    if words:
        _chain(words[0], path, found, None, depth + 1)
        if os.path.basename(words[0]) == "env":
            rest = [w for w in words[1:] if not w.startswith("-")]
            target = shutil.which(rest[0], path=path) if rest else None
            if target:
                _chain(target, path, found, entries, depth + 1)


def own(command: list[str], path: str) -> tuple[list[str], list[str]]:
    """The files the tool's own command executes to start (itself, its interpreters), and of those
    the ones an `execve` of its start names (itself, an `env` line's program)."""
    found: list[str] = []
    entries: list[str] = []
    first = command[0] if "/" in command[0] else shutil.which(command[0], path=path)
    if first:
        _chain(os.path.abspath(first), path, found, entries)
    return found, entries


def allowed(patterns: list[str], path: str) -> list[str]:
    """The files matching `patterns` (on PATH for bare names), with their chains."""
    found: list[str] = []
    for pattern in patterns:
        if "/" in pattern:
            matches = glob.glob(pattern)
        else:
            matches = [m for folder in path.split(os.pathsep) if folder for m in glob.glob(os.path.join(folder, pattern))]
        for match in sorted(matches):
            if os.path.isfile(match) and os.access(match, os.X_OK):
                _chain(match, path, found)
    return found


# -- a run's limit ---------------------------------------------------------------------------------


def own_start(command: list[str], path: str) -> tuple[list[str], list[str]] | None:
    """The files the tool's own command executes to start, and those an execve of it names (see
    own); None when that is not knowable before the run: a version manager's shim (a `shims`
    folder) runs helper programs before it becomes the program, and which ones depends on the machine.
    Every run of a tool asks the same: kept per program and PATH while its first file is unchanged
    (the same file, size and modification time), so a run reads no `#!` line or ELF header again."""
    key = (command[0], path)
    kept = _OWN.get(key)
    if kept is not None and kept[0] is not None and _signature(kept[0][0]) == kept[1]:
        return None if kept[2] is None else (list(kept[2][0]), list(kept[2][1]))
    chain, entries = own(command, path)
    found = None if not chain or os.path.basename(os.path.dirname(chain[0])) == "shims" else (chain, entries)
    signature = _signature(chain[0]) if chain else None
    if signature is not None and len(_OWN) < _MAX_KEPT:
        _OWN[key] = (chain, signature, None if found is None else (tuple(chain), tuple(entries)))
    return None if found is None else (list(chain), list(entries))


_OWN: dict[tuple[str, str], tuple[list[str] | None, tuple[int, int, int, int] | None,
                                  tuple[tuple[str, ...], tuple[str, ...]] | None]] = {}
_MAX_KEPT = 4096


def _signature(path: str) -> tuple[int, int, int, int] | None:
    try:
        info = os.stat(path)
    except OSError:
        return None
    return info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns


def limit(facts: Facts, command: list[str], path: str, start: tuple[list[str], list[str]] | None,
          programs: list[str] | None) -> tuple[str, list[str] | None]:
    """("enforced", the files the run may execute), or (why the limit is only observed, None);
    ("", None) without a limit."""
    if programs is None or any(p.strip() in ("*", "**") for p in programs):
        return "", None
    if start is None:
        return f"only observed: {command[0]} starts through a version manager's shim", None
    if landlock_launcher.abi_version() < 1:
        return "only observed: Landlock is unavailable, so execution cannot be limited", None
    if facts.mechanism == "bwrap" and _system_python() is None:
        return "only observed: no system Python (/usr/bin/python3) to limit execution inside bubblewrap", None
    return "enforced", list(dict.fromkeys([*start[0], *allowed(programs, path)]))


def _system_python() -> str | None:
    """A Python inside the system folders bubblewrap shows, to run the execution limiter."""
    for candidate in ("/usr/bin/python3",):
        real = os.path.realpath(candidate)
        if os.path.isfile(real) and any(real.startswith(folder + "/") for folder in layout.SYSTEM):
            return candidate
    return None


def limited(command: list[str], files: list[str]) -> list[str]:
    """`command` started through the Landlock launcher inside bubblewrap, restricted to executing
    `files` (Landlock's execute right: in place and in every child). The launcher's source is
    given with `-c`, so nothing more has to be made visible."""
    source = LAUNCHER.read_text(encoding="utf-8")
    argv = [_system_python() or "/usr/bin/python3", "-I", "-S", "-c", source, "--only-exec"]
    for path in files:
        argv += ["--exec", path]
    return [*argv, "--", *command]


def spawned(started: list[str], children: list[str], command: list[str], own: list[str] | None) -> list[str]:
    """The programs started besides the tool's own command: in a child or in place of the tool,
    before or after its last exec. With `own` unknown (a version manager's shim, which runs helpers
    before it becomes the program), everything after the first start of a program of the command's
    name, plus what the trace saw children start."""
    if own is not None:
        mine = set(own) | {os.path.realpath(p) for p in own}
        return list(dict.fromkeys(p for p in started if p not in mine and os.path.realpath(p) not in mine))
    name = os.path.basename(command[0]) if command else ""
    became = next((i for i, p in enumerate(started) if i > 0 and os.path.basename(p) == name), None)
    after = started[became + 1:] if became is not None else []
    return list(dict.fromkeys([*after, *children]))
