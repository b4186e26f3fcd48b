"""The git checkout a workspace lives in: its top folder and the commit checked out.

Read from the files under `.git` (HEAD, loose refs, packed-refs), never by running git: running
git in a repository someone else wrote can run programs its config names (`core.fsmonitor`,
aliases, hooks in some commands), fails on "dubious ownership" in CI containers, and would start
one process per build. What is handled: a `.git` folder; a `.git` file (worktrees, submodules)
with its `gitdir:` and `commondir`; a detached HEAD; a branch HEAD through a loose ref or
packed-refs; SHA-1 and SHA-256 object names. Anything else (the reftable ref format, an unborn
branch, a damaged file) gives no commit: absent, never invented.
"""

from __future__ import annotations

import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path

_OBJECT_NAME = re.compile(r"^(?:[0-9a-f]{40}|[0-9a-f]{64})$")
_REF_NAME = re.compile(r"^refs/[A-Za-z0-9._/+@-]+$")
_MAX_SMALL_FILE = 64 * 1024  # HEAD, a loose ref, `commondir`, a `.git` file
_MAX_PACKED_REFS = 32 * 1024 * 1024
_MAX_SYMREF_HOPS = 5


@dataclass(frozen=True)
class Checkout:
    top: Path  # the folder holding `.git`
    commit: str | None  # HEAD's object name, lower-case hex; None when it cannot be read


def find(start: Path) -> Checkout | None:
    """The checkout holding `start` (a folder), looking upwards; None when it is in none."""
    folder = Path(os.path.abspath(start))
    for candidate in (folder, *folder.parents):
        marker = candidate / ".git"
        try:
            info = os.lstat(marker)
        except OSError:
            continue
        git_dir = _git_dir(marker, info.st_mode)
        if git_dir is None:
            return Checkout(candidate, None)
        return Checkout(candidate, head_commit(git_dir))
    return None


def _git_dir(marker: Path, mode: int) -> Path | None:
    if stat.S_ISDIR(mode):
        return marker
    if stat.S_ISREG(mode):  # a worktree or submodule: "gitdir: <path>"
        text = _read_small(marker)
        if text and text.startswith("gitdir:"):
            target = text[len("gitdir:"):].strip()
            path = Path(target) if os.path.isabs(target) else marker.parent / target
            return path if path.is_dir() else None
    return None


def head_commit(git_dir: Path) -> str | None:
    """The commit HEAD names in `git_dir`, or None."""
    common = git_dir
    pointer = _read_small(git_dir / "commondir")
    if pointer:
        target = pointer.strip()
        common = Path(target) if os.path.isabs(target) else git_dir / target
    if (common / "reftable").exists():
        return None  # reftable storage is binary; not read here
    value = _read_small(git_dir / "HEAD")
    for _ in range(_MAX_SYMREF_HOPS):
        if value is None:
            return None
        value = value.strip()
        if _OBJECT_NAME.match(value):
            return value
        if not value.startswith("ref:"):
            return None
        ref = value[len("ref:"):].strip()
        if not _REF_NAME.match(ref) or ".." in ref.split("/"):
            return None
        # Per-worktree refs live in the worktree's own folder, shared ones in the common folder.
        value = _read_small(git_dir / ref) if (git_dir / ref).is_file() else _read_small(common / ref)
        if value is None:
            value = _packed_ref(common, ref)
    return None


def _packed_ref(common: Path, ref: str) -> str | None:
    text = _read_small(common / "packed-refs", _MAX_PACKED_REFS)
    if text is None:
        return None
    for line in text.splitlines():
        if line.startswith(("#", "^")):
            continue
        name, _, refname = line.partition(" ")
        if refname.strip() == ref and _OBJECT_NAME.match(name):
            return name
    return None


def _read_small(path: Path, limit: int = _MAX_SMALL_FILE) -> str | None:
    """A regular file's text, or None (missing, not a regular file, too large, not UTF-8)."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)
    try:
        fd = os.open(path, flags)
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > limit:
            return None
        blocks, size = [], 0
        while size <= limit:
            block = os.read(fd, 1 << 16)
            if not block:
                break
            blocks.append(block)
            size += len(block)
        if size > limit:
            return None
        return b"".join(blocks).decode("utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    finally:
        os.close(fd)
