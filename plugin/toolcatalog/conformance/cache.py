"""Results cache keyed by a hash of everything that determines them.

One JSON file per key under the cache folder. Writes are atomic (temporary file
and rename); a file that cannot be read or parsed is ignored, never fatal.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any, Iterable

# Folders whose content never changes what a tool does, and can be huge.
_SKIP_DIRS = frozenset({".git", ".hg", ".svn", ".venv", "venv", "node_modules", "__pycache__", ".cache", ".tox", ".mypy_cache", ".pytest_cache", "dist", "build", "site"})
_MAX_FILE_BYTES = 64 * 1024 * 1024


def hash_tree(root: Path) -> str:
    """A hash of every file's relative path, mode and content below `root`."""
    digest = hashlib.sha256()
    root = Path(root)
    if root.is_file():
        _hash_file(digest, root, root.name)
        return digest.hexdigest()
    for current, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in _SKIP_DIRS)
        for name in sorted(files):
            full = Path(current, name)
            _hash_file(digest, full, full.relative_to(root).as_posix())
    return digest.hexdigest()


def _hash_file(digest: Any, path: Path, name: str) -> None:
    try:
        stat = path.stat()
    except OSError:
        return
    digest.update(name.encode("utf-8", "surrogateescape") + b"\0")
    digest.update(oct(stat.st_mode & 0o111).encode() + b"\0")
    if stat.st_size > _MAX_FILE_BYTES:
        digest.update(f"size:{stat.st_size}:{stat.st_mtime_ns}".encode())
        return
    try:
        with path.open("rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
    except OSError:
        digest.update(b"unreadable")


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
        path = self._path(cache_key)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=path.parent)
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                json.dump({"key": cache_key, "outcome": outcome}, handle, sort_keys=True)
            os.replace(tmp, path)
        except OSError:
            pass  # a cache that cannot be written only costs time
