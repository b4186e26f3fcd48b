"""Results cache keyed by a hash of everything that determines them.

One JSON file per key under the cache folder. Writes are atomic (temporary file
and rename); a file that cannot be read or parsed is ignored, never fatal.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
from pathlib import Path
from typing import Any, Iterable

from ..catalog import write_atomic

# Folders whose content never changes what a tool does, and can be huge.
_SKIP_DIRS = frozenset({".git", ".hg", ".svn", ".venv", "venv", "node_modules", "__pycache__", ".cache", ".tox", ".mypy_cache", ".pytest_cache", "dist", "build", "site"})
_MAX_FILE_BYTES = 64 * 1024 * 1024


def hash_tree(root: Path) -> str:
    """A hash of every entry's relative path, kind, mode and content below `root`.

    Nothing is ever followed or opened that could block or never end: a symbolic link is
    hashed as the text it points to (`ln -s /dev/zero data` costs nothing), and a FIFO,
    socket or device only by its name and kind. Regular files are opened without following
    links and without blocking, and checked to still be regular files once open.
    """
    digest = hashlib.sha256()
    root = Path(root)
    if not root.is_dir():
        _hash_entry(digest, root, root.name)
        return digest.hexdigest()
    for current, dirs, files in os.walk(root):  # never descends into linked folders
        keep = []
        for name in sorted(dirs):
            if name in _SKIP_DIRS:
                continue
            full = Path(current, name)
            if full.is_symlink():
                _hash_entry(digest, full, full.relative_to(root).as_posix())
            else:
                keep.append(name)
        dirs[:] = keep
        for name in sorted(files):
            full = Path(current, name)
            _hash_entry(digest, full, full.relative_to(root).as_posix())
    return digest.hexdigest()


def _kind(mode: int) -> str:
    for test, name in ((stat.S_ISFIFO, "fifo"), (stat.S_ISCHR, "char-device"), (stat.S_ISBLK, "block-device"),
                       (stat.S_ISSOCK, "socket"), (stat.S_ISDIR, "folder")):
        if test(mode):
            return name
    return "other"


def _hash_entry(digest: Any, path: Path, name: str) -> None:
    try:
        info = os.lstat(path)
    except OSError:
        return
    digest.update(name.encode("utf-8", "surrogateescape") + b"\0")
    if stat.S_ISLNK(info.st_mode):
        try:
            target = os.readlink(path)
        except OSError:
            target = ""
        digest.update(b"symlink\0" + os.fsencode(target) + b"\0")
        return
    if not stat.S_ISREG(info.st_mode):
        digest.update(f"{_kind(info.st_mode)}\0".encode())  # recorded, never opened
        return
    digest.update(b"file\0" + oct(info.st_mode & 0o111).encode() + b"\0")
    if info.st_size > _MAX_FILE_BYTES:
        digest.update(f"size:{info.st_size}:{info.st_mtime_ns}\0".encode())
        return
    digest.update(_content_digest(path) + b"\0")


_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)


def _content_digest(path: Path) -> bytes:
    """The hex SHA-256 of a regular file's first `_MAX_FILE_BYTES` bytes; a marker when unreadable."""
    try:
        fd = os.open(path, _OPEN_FLAGS)
    except OSError:
        return b"unreadable"
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):  # swapped for something else since lstat
            return b"not-a-file"
        content = hashlib.sha256()
        left = _MAX_FILE_BYTES
        while left > 0:
            block = os.read(fd, min(1 << 20, left))
            if not block:
                break
            content.update(block)
            left -= len(block)
        return content.hexdigest().encode()
    except OSError:
        return b"unreadable"
    finally:
        os.close(fd)


def key(parts: Iterable[Any]) -> str:
    digest = hashlib.sha256()
    for part in parts:
        digest.update(json.dumps(part, sort_keys=True, default=str).encode("utf-8") + b"\0")
    return digest.hexdigest()


class ResultCache:
    def __init__(self, folder: Path | None):
        self.folder = Path(folder) if folder else None
        self.hits = 0
        self.misses = 0

    def _path(self, cache_key: str) -> Path:
        assert self.folder is not None
        return self.folder / cache_key[:2] / f"{cache_key}.json"

    def get(self, cache_key: str) -> Any | None:
        if self.folder is None:
            return None
        try:
            value = json.loads(self._path(cache_key).read_text(encoding="utf-8"))
        except (OSError, ValueError, UnicodeDecodeError, RecursionError):
            self.misses += 1
            return None
        if not isinstance(value, dict) or value.get("key") != cache_key:
            self.misses += 1
            return None
        self.hits += 1
        return value.get("outcome")

    def put(self, cache_key: str, outcome: Any) -> None:
        if self.folder is None:
            return
        try:
            write_atomic(self._path(cache_key), json.dumps({"key": cache_key, "outcome": outcome}, sort_keys=True))
        except OSError:
            pass  # a cache that cannot be written only costs time
