"""Before/after pictures of the folders a sandboxed tool may write, and what changed between them.

The writable places of a sandboxed run are throwaway folders on the host (its scratch folder, its
`/tmp`, the copy of its working folder). Comparing a picture taken before the run with one taken
after tells which files were created, changed or deleted: the writes are observed, never inferred.
Links are recorded as the text they point to and never followed, and the walk never recurses (see
`nofollow`); FIFOs, sockets and devices by
kind only; file contents are hashed only where a file existed before the run (nothing to compare
a new file with).
"""

from __future__ import annotations

import bisect
import hashlib
import os
import stat
from pathlib import Path
from typing import Any

from . import nofollow

MAX_ENTRIES = 20_000  # per folder: past this the picture stops (and the result says truncated)

Picture = dict[str, tuple[Any, ...]]


def picture(root: Path, hash_files: bool) -> tuple[Picture, bool]:
    """{relative path: what is there} for everything under `root`, and whether it was cut short
    (more than MAX_ENTRIES entries, more than `nofollow.MAX_DEPTH` folder levels, or a folder that
    could not be read): a cut picture cannot prove that nothing else changed."""
    out: Picture = {}
    walk = nofollow.Walk(str(root))
    for rel, info in walk:
        if len(out) >= MAX_ENTRIES:
            return out, True
        name = os.path.basename(rel)
        if stat.S_ISLNK(info.st_mode):
            try:
                out[rel] = ("link", os.readlink(name, dir_fd=walk.folder_fd))
            except OSError:
                out[rel] = ("link", "?")
        elif stat.S_ISDIR(info.st_mode):
            out[rel] = ("dir", stat.S_IMODE(info.st_mode))
        elif stat.S_ISREG(info.st_mode):
            digest = _digest(name, walk.folder_fd) if hash_files else None
            out[rel] = ("file", stat.S_IMODE(info.st_mode), info.st_size, info.st_mtime_ns, digest)
        else:
            out[rel] = ("special", stat.S_IFMT(info.st_mode))
    return out, walk.cut


def _digest(path: str, dir_fd: int | None = None) -> str | None:
    """The SHA-256 of a regular file, opened without following a link and without blocking (a
    FIFO put in its place must not hang the build)."""
    digest = hashlib.sha256()
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=dir_fd)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        with os.fdopen(fd, "rb", closefd=False) as stream:
            for chunk in iter(lambda: stream.read(1 << 20), b""):
                digest.update(chunk)
    except OSError:
        return None
    finally:
        os.close(fd)
    return digest.hexdigest()


def changes(before: Picture, after: Picture, root: Path) -> list[tuple[str, str]]:
    """[(relative path, "created" | "changed" | "deleted")], sorted by path.

    A new file's content is hashed now; a file that existed before counts as changed when its kind,
    mode, size or content differ (an unchanged size and modification time are trusted only when no
    content hash was taken). A folder is listed only when nothing listed lies inside it."""
    found: list[tuple[str, str]] = []
    for rel in after.keys() - before.keys():
        found.append((rel, "created"))
    for rel in before.keys() - after.keys():
        found.append((rel, "deleted"))
    for rel in before.keys() & after.keys():
        old, new = before[rel], after[rel]
        if old[0] == "file" and new[0] == "file" and old[4] is not None:
            new = (*new[:4], _digest(str(root / rel)))
            if old[1] != new[1] or old[2] != new[2] or old[4] != new[4]:
                found.append((rel, "changed"))
        elif old != new:
            found.append((rel, "changed"))
    listed = sorted({rel for rel, _ in found})  # what lies inside a folder follows it in order
    kept = []
    for rel, change in sorted(found):
        kind = (after.get(rel) or before.get(rel) or ("?",))[0]
        if kind == "dir" and holds(listed, rel):
            continue
        if kind == "dir" and change == "changed":
            continue  # a folder's mode changed: its contents say more
        kept.append((rel, change))
    return kept


def holds(ordered: list[str], folder: str) -> bool:
    """Whether a path of `ordered` (sorted) lies inside `folder`: one lookup, not a pass over all."""
    at = bisect.bisect_left(ordered, folder + os.sep)
    return at < len(ordered) and ordered[at].startswith(folder + os.sep)
