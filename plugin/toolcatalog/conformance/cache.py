"""Results cache keyed by a hash of everything that determines them, sealed with the build's key.

One file per key under the cache folder (`<2 hex>/<key>.json`): the seal line (`sealing`), then
the JSON `{"key", "seconds", "outcome"}`. Anyone can compute a key, so a key alone proves nothing:
an entry is used only when its seal verifies with this build's key, and the seal is checked
before the JSON is even parsed. Writes are atomic (temporary file and rename); a file that cannot
be read, is not sealed with this key, does not parse, or holds no outcome the codec accepts
(`outcome.from_json`) is ignored, never fatal, and counted by reason (`refused`) so the build
logs one line per reason.

An outcome comes back exactly as it went in, key order included: pages show a tool's output in
the order the tool printed it, so a cached result must render like the fresh one (`encode` never
sorts; only the cache *key* is computed over sorted JSON). The engine applies fresh outcomes
through `outcome.roundtrip`, the same codec, so fresh and cached results cannot differ.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any, Iterable

from ..files import ReadError, read_capped, write_atomic
from ..jsonvalues import MAX_DEPTH, loads_limited
from ..model import Note
from ..sealing import UNREADABLE, Key, refused_notes
from .outcome import CodecError, Outcome, from_json, to_json

LABEL = "results-entry"  # what the seal says this file is (a parse cache entry cannot pass for one)

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


def encode(outcome: Outcome) -> str:
    """An outcome as the cache stores it: plain JSON (`outcome.to_json`), keys in their own order."""
    return json.dumps(to_json(outcome), ensure_ascii=False, allow_nan=False)


class ResultCache:
    """Results under `folder`, sealed with `key` (None for either: nothing is cached)."""

    def __init__(self, folder: Path | None, key: Key | None = None, base: Path | None = None):
        self.folder = Path(folder) if folder and key is not None else None
        self.base = Path(base) if base is not None else self.folder  # written below it through no link
        self.key = key
        self.hits = 0
        self.misses = 0
        self.refused: dict[str, int] = {}  # reason -> entries present but not used

    def _path(self, cache_key: str) -> Path:
        assert self.folder is not None
        return self.folder / cache_key[:2] / f"{cache_key}.json"

    def _refuse(self, reason: str) -> None:
        self.misses += 1
        self.refused[reason] = self.refused.get(reason, 0) + 1

    def lookup(self, cache_key: str) -> tuple[Outcome, float] | None:
        """The stored outcome and the seconds its run took (0 when not recorded), or None: an
        entry whose outcome the codec refuses (`outcome.from_json`) is a miss, never applied."""
        if self.folder is None or self.key is None:
            return None
        path = self._path(cache_key)
        try:
            # Capped, regular files only, inside the cache folder: a planted link to /dev/zero or
            # a FIFO is a miss, not a hang.
            data = read_capped(path, MAX_ENTRY_BYTES, inside=self.folder)
        except ReadError:
            if os.path.lexists(path):
                self._refuse(UNREADABLE)
            else:
                self.misses += 1
            return None
        payload, reason = self.key.unseal(LABEL, data)
        if payload is None:
            self._refuse(reason or UNREADABLE)
            return None
        try:
            # JSON nested deeper than any outcome is a miss too.
            value = loads_limited(payload.decode("utf-8"), OUTCOME_DEPTH)
        except (ValueError, UnicodeDecodeError):
            self.misses += 1
            return None
        if not isinstance(value, dict) or value.get("key") != cache_key:
            self.misses += 1  # sealed by us under another name: moved, never trusted
            return None
        try:
            outcome = from_json(value.get("outcome"))
        except CodecError:
            self.misses += 1  # sealed by us, but no outcome this version writes
            return None
        self.hits += 1
        seconds = value.get("seconds", 0.0)
        if type(seconds) not in (int, float) or not 0 <= seconds < 1e9:
            seconds = 0.0
        return outcome, float(seconds)

    def put(self, cache_key: str, outcome: Outcome, seconds: float = 0.0) -> None:
        if self.folder is None or self.key is None:
            return
        try:
            text = ('{"key": ' + json.dumps(cache_key) + ', "seconds": ' + json.dumps(round(float(seconds), 3))
                    + ', "outcome": ' + encode(outcome) + "}")
            sealed = self.key.seal(LABEL, text)
            size = len(sealed.encode("utf-8"))
        except (ValueError, TypeError, RecursionError, UnicodeEncodeError):
            return  # not storable: never cached
        if size > MAX_ENTRY_BYTES:
            return  # it could never be read back
        try:
            write_atomic(self._path(cache_key), sealed, inside=self.base)
        except OSError:
            pass  # a cache that cannot be written only costs time

    def notes(self) -> list[Note]:
        """One line per reason entries were not used."""
        return refused_notes("cached results", self.refused)
