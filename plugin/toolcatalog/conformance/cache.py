"""Results cache keyed by a hash of everything that determines them.

One JSON file per key under the cache folder. Writes are atomic (temporary file
and rename); a file that cannot be read or parsed is ignored, never fatal.

An outcome comes back exactly as it went in, key order included: pages show a tool's output in
the order the tool printed it, so a cached result must render like the fresh one (`encode` never
sorts; only the cache *key* is computed over sorted JSON). The engine applies fresh outcomes
through `roundtrip`, the same encoding, so fresh and cached results cannot differ.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, Iterable

from ..files import ReadError, read_capped, write_atomic
from ..jsonvalues import MAX_DEPTH, loads_limited

# An entry holds one tool's outcome; far more than any real one, far less than memory.
MAX_ENTRY_BYTES = 64 * 1024 * 1024
# An outcome holds a tool's output (at most MAX_DEPTH levels) a few levels down.
OUTCOME_DEPTH = MAX_DEPTH + 8


def key(parts: Iterable[Any]) -> str:
    return Keyer(()).key(parts)


class Keyer:
    """`key([*common, *parts])` for many `parts` with one `common`, hashing `common` once."""

    def __init__(self, common: Iterable[Any]):
        self._digest = hashlib.sha256()
        for part in common:
            self._digest.update(json.dumps(part, sort_keys=True, default=str).encode("utf-8") + b"\0")

    def key(self, parts: Iterable[Any]) -> str:
        digest = self._digest.copy()
        for part in parts:
            digest.update(json.dumps(part, sort_keys=True, default=str).encode("utf-8") + b"\0")
        return digest.hexdigest()


def encode(outcome: Any) -> str:
    """An outcome as the cache stores it: plain JSON, keys in their own order."""
    return json.dumps(outcome, ensure_ascii=False, allow_nan=False)


def roundtrip(outcome: Any) -> Any:
    """`outcome` exactly as the cache would give it back (unchanged when it cannot be stored,
    since then it is never cached either)."""
    try:
        return json.loads(encode(outcome))
    except (ValueError, TypeError, RecursionError):
        return outcome


class ResultCache:
    def __init__(self, folder: Path | None):
        self.folder = Path(folder) if folder else None
        self.hits = 0
        self.misses = 0

    def _path(self, cache_key: str) -> Path:
        assert self.folder is not None
        return self.folder / cache_key[:2] / f"{cache_key}.json"

    def lookup(self, cache_key: str) -> tuple[Any, float] | None:
        """The stored outcome and the seconds its run took (0 when not recorded), or None."""
        if self.folder is None:
            return None
        try:
            # Capped, regular files only, inside the cache folder: a planted link to /dev/zero or
            # a FIFO is a miss, not a hang; JSON nested deeper than any outcome is a miss too.
            value = loads_limited(read_capped(self._path(cache_key), MAX_ENTRY_BYTES, inside=self.folder).decode("utf-8"), OUTCOME_DEPTH)
        except (ReadError, ValueError, UnicodeDecodeError):
            self.misses += 1
            return None
        if not isinstance(value, dict) or value.get("key") != cache_key:
            self.misses += 1
            return None
        self.hits += 1
        seconds = value.get("seconds", 0.0)
        if type(seconds) not in (int, float) or not 0 <= seconds < 1e9:
            seconds = 0.0
        return value.get("outcome"), float(seconds)

    def put(self, cache_key: str, outcome: Any, seconds: float = 0.0) -> None:
        if self.folder is None:
            return
        try:
            text = ('{"key": ' + json.dumps(cache_key) + ', "seconds": ' + json.dumps(round(float(seconds), 3))
                    + ', "outcome": ' + encode(outcome) + "}")
        except (ValueError, TypeError, RecursionError):
            return  # not storable: never cached
        if len(text.encode("utf-8")) > MAX_ENTRY_BYTES:
            return  # it could never be read back
        try:
            write_atomic(self._path(cache_key), text)
        except OSError:
            pass  # a cache that cannot be written only costs time
