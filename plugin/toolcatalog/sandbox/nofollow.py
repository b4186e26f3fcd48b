"""Walking, copying, creating and removing folders that a tool may have shaped: no link is ever
followed and nothing recurses.

A sandboxed tool decides what its throwaway folders hold when the build looks at them (the
picture after the run) and removes them, and the repository decides what a working folder holds
when it is copied. Python's own walkers recurse (a 1,500-level chain raises RecursionError) and
work on path strings (past 4,096 bytes a path fails, and a link swapped in for a folder between
two steps is followed). Everything here works on directory descriptors instead: each step opens
one name relative to the folder already open, with O_NOFOLLOW, and checks that the folder it
opened is the one it listed. Only two descriptors are open at a time, whatever the depth: going
back up opens `..` and checks it is the folder it came from.
"""

from __future__ import annotations

import errno
import os
import stat
from dataclasses import dataclass, field
from typing import Iterator

__all__ = ["MAX_DEPTH", "Walk", "make_inside", "remove"]

MAX_DEPTH = 100  # folder levels a walk descends (copies and pictures); deeper ones are cut and reported
# (getattr: the module is imported everywhere, and only used where the sandbox runs: Linux)
_OPEN_DIR = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NONBLOCK", 0)
_REMOVE_DEPTH = 32  # removal moves anything deeper up to the top, so a chain of any depth goes


def _ident(info: os.stat_result) -> tuple[int, int]:
    return info.st_dev, info.st_ino


def _listing(fd: int) -> list[tuple[str, os.stat_result]]:
    """The folder's entries, sorted, each with what lstat says (entries that vanish are left out)."""
    out = []
    with os.scandir(fd) as entries:
        for entry in entries:
            try:
                out.append((entry.name, entry.stat(follow_symlinks=False)))
            except OSError:
                continue
    out.sort(key=lambda item: item[0])
    return out


@dataclass
class _Frame:
    ident: tuple[int, int]
    rel: str
    subfolders: list[tuple[str, os.stat_result]]  # still to visit, in reverse order (popped from the end)


@dataclass
class Walk:
    """Every entry below `root` as (relative path, lstat result), parents before children, names
    sorted at each level. Folders below `max_depth` levels, and folders that cannot be opened or
    changed while they were walked, are not entered: `cut` says so once the walk is done.
    `skip` names are left out at every level (with what is inside them)."""

    root: str
    max_depth: int = MAX_DEPTH
    skip: frozenset[str] = frozenset()
    cut: bool = False
    reason: str = ""
    _fd: int = field(default=-1, repr=False)

    @property
    def folder_fd(self) -> int:
        """While an entry is being looked at: a descriptor of the folder that holds it."""
        return self._fd

    def _stop(self, reason: str) -> None:
        self.cut = True
        self.reason = self.reason or reason

    def __iter__(self) -> Iterator[tuple[str, os.stat_result]]:
        try:
            self._fd = os.open(self.root, _OPEN_DIR)
        except OSError:
            return
        try:
            frames = [_Frame(_ident(os.fstat(self._fd)), "", [])]
            yield from self._enter(frames[0])
            while frames:
                frame = frames[-1]
                if frame.subfolders:
                    name, listed = frame.subfolders.pop()
                    rel = os.path.join(frame.rel, name) if frame.rel else name
                    if len(frames) >= self.max_depth:
                        self._stop(f"{rel}: more than {self.max_depth} folder levels")
                        continue
                    child = self._down(name, listed)
                    if child is None:
                        self._stop(f"{rel}: could not be opened, or changed while it was read")
                        continue
                    frames.append(_Frame(child, rel, []))
                    yield from self._enter(frames[-1])
                    continue
                frames.pop()
                if frames and not self._up(frames[-1].ident):
                    self._stop(f"{frame.rel}: moved while it was read")
                    return
        finally:
            os.close(self._fd)
            self._fd = -1

    def _enter(self, frame: _Frame) -> Iterator[tuple[str, os.stat_result]]:
        try:
            listing = _listing(self._fd)
        except OSError:
            self._stop(f"{frame.rel or '.'}: could not be listed")
            return
        for name, info in listing:
            if name in self.skip:
                continue
            yield (os.path.join(frame.rel, name) if frame.rel else name), info
            if stat.S_ISDIR(info.st_mode):
                frame.subfolders.append((name, info))
        frame.subfolders.reverse()

    def _down(self, name: str, listed: os.stat_result) -> tuple[int, int] | None:
        try:
            child = os.open(name, _OPEN_DIR, dir_fd=self._fd)
        except OSError:
            return None
        ident = _ident(os.fstat(child))
        if ident != _ident(listed):  # replaced since it was listed
            os.close(child)
            return None
        os.close(self._fd)
        self._fd = child
        return ident

    def _up(self, expected: tuple[int, int]) -> bool:
        try:
            parent = os.open("..", _OPEN_DIR, dir_fd=self._fd)
        except OSError:
            return False
        os.close(self._fd)
        self._fd = parent
        return _ident(os.fstat(parent)) == expected


def make_inside(base: str, rel: str, folder: bool) -> bool:
    """Create `rel` (a folder, or else an empty file) below the existing folder `base`, with the
    folders on the way, never through a link: a link (or a file) on the way, or at the end, stops
    it and nothing is created. True when `rel` is there as asked (made now or before)."""
    parts = [p for p in rel.split("/") if p not in ("", ".")]
    if not parts or ".." in parts:
        return False
    try:
        fd = os.open(base, _OPEN_DIR)
    except OSError:
        return False
    try:
        for i, name in enumerate(parts):
            last = i == len(parts) - 1
            if not last or folder:
                try:
                    os.mkdir(name, 0o755, dir_fd=fd)
                except FileExistsError:
                    pass
                try:
                    child = os.open(name, _OPEN_DIR, dir_fd=fd)  # a link here fails (ELOOP / ENOTDIR)
                except OSError:
                    return False
                os.close(fd)
                fd = child
                continue
            try:
                os.close(os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644, dir_fd=fd))
            except FileExistsError:
                info = os.stat(name, dir_fd=fd, follow_symlinks=False)
                return stat.S_ISREG(info.st_mode)
        return True
    except OSError:
        return False
    finally:
        os.close(fd)


def remove(path: str) -> str | None:
    """Remove `path` and everything below it without following a link; None when it is gone (or
    was never there), else why something is left.

    The folder that holds `path` is trusted (the build made it); below it, a tool may have built
    anything. Descriptors stay few: folders deeper than a few dozen levels are moved up to the
    top folder first and removed from there, so a chain of any depth goes in linear time."""
    parent_path, name = os.path.split(os.path.normpath(path))
    try:
        parent = os.open(parent_path or ".", _OPEN_DIR)
    except OSError as exc:
        return None if exc.errno == errno.ENOENT else f"{path}: {exc.strerror}"
    try:
        return _remove_in(parent, name, path)
    finally:
        os.close(parent)


def _remove_in(parent: int, name: str, path: str) -> str | None:
    try:
        info = os.stat(name, dir_fd=parent, follow_symlinks=False)
    except FileNotFoundError:
        return None
    except OSError as exc:
        return f"{path}: {exc.strerror}"
    if not stat.S_ISDIR(info.st_mode):
        return _unlink(parent, name, path)
    top = _open_to_empty(parent, name)
    if top is None:
        return f"{path}: cannot be opened"
    problem: str | None = None
    stack: list[tuple[int, str, list[str]]] = [(top, name, _empty_out(top))]
    moved = 0
    try:
        while stack:
            fd, here, subfolders = stack[-1]
            if subfolders:
                sub = subfolders.pop()
                if len(stack) >= _REMOVE_DEPTH:
                    moved = _move_up(fd, sub, top, moved, stack[0][2])
                    continue
                child = _open_to_empty(fd, sub)
                if child is None:  # no folder any more: whatever is there goes
                    problem = _unlink(fd, sub, path) or problem
                    continue
                stack.append((child, sub, _empty_out(child)))
                continue
            stack.pop()
            if stack:  # `here` is empty now: remove it from the folder that holds it
                os.close(fd)
                try:
                    os.rmdir(here, dir_fd=stack[-1][0])
                except OSError as exc:
                    problem = problem or f"{path}: {here}: {exc.strerror}"
    finally:
        for fd, _, _ in stack[1:]:  # only when an unexpected error ended the loop
            os.close(fd)
        os.close(top)
    try:
        os.rmdir(name, dir_fd=parent)
    except OSError as exc:
        problem = problem or f"{path}: {exc.strerror}"
    return problem


def _move_up(fd: int, name: str, top: int, moved: int, pending: list[str]) -> int:
    """Move a folder from deep down to the top folder under a fresh name; the top's frame removes it."""
    for _ in range(100):
        moved += 1
        fresh = f".toolcatalog-deep-{moved}"
        try:
            os.rename(name, fresh, src_dir_fd=fd, dst_dir_fd=top)
        except OSError as exc:
            if exc.errno in (errno.EEXIST, errno.ENOTEMPTY):
                continue
            break
        pending.append(fresh)
        break
    return moved


def _open_to_empty(fd: int, name: str) -> int | None:
    """Open the folder `name` (never a link) and make it ours to empty: a tool may have left it
    unreadable or read-only (`chmod 000`), which stops its owner as much as anyone but root."""
    try:
        child = os.open(name, _OPEN_DIR, dir_fd=fd)
    except PermissionError:
        try:  # its mode, changed through a descriptor that cannot be a link
            handle = os.open(name, os.O_PATH | os.O_NOFOLLOW | os.O_DIRECTORY | os.O_CLOEXEC, dir_fd=fd)
        except (OSError, AttributeError):
            return None
        try:
            os.chmod(f"/proc/self/fd/{handle}", 0o700)
            child = os.open(name, _OPEN_DIR, dir_fd=fd)
        except OSError:
            return None
        finally:
            os.close(handle)
    except OSError:
        return None
    try:
        os.fchmod(child, 0o700)
    except OSError:
        pass
    return child


def _unlink(fd: int, name: str, path: str) -> str | None:
    try:
        os.unlink(name, dir_fd=fd)
    except FileNotFoundError:
        pass
    except OSError as exc:
        return f"{path}: {name}: {exc.strerror}"
    return None


def _empty_out(fd: int) -> list[str]:
    """Unlink every entry of the open folder that is not a folder; the names of its subfolders."""
    subfolders = []
    try:
        with os.scandir(fd) as entries:
            for entry in entries:
                try:
                    if entry.is_dir(follow_symlinks=False):
                        subfolders.append(entry.name)
                    else:
                        os.unlink(entry.name, dir_fd=fd)
                except OSError:
                    continue
    except OSError:
        pass
    return subfolders
