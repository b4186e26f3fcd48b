"""Results cache keyed by a hash of everything that determines them.

One JSON file per key under the cache folder. Writes are atomic (temporary file
and rename); a file that cannot be read or parsed is ignored, never fatal.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, Iterable

from ..files import write_atomic


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
