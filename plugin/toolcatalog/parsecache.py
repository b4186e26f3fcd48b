"""Parsed manifests kept between builds, so an unchanged TOOL.md or DRIVER.md is not parsed again.

Parsing a manifest (YAML, meta-validating its schemas, checking its examples) costs milliseconds;
reading back what parsing it gave costs a fraction of one. An entry is keyed by a hash of
everything the parse depends on: the manifest's bytes (read once, and those very bytes are what
is parsed), its path, which format its folder suggests, `max_manifest_bytes`, and the code that
parses (our parser modules, bundled schemas, and the versions of Python and of the libraries
they call). A speccify tool's implementation files are listed afresh on every build, never taken
from the cache.

The cache lives in `<cache_dir>/parse/` beside the results and is as safe to share: entries are
written atomically (a reader never sees half a file), read capped and only as regular files
inside the folder, and sealed with the build's key (`sealing`): anyone can compute a key, so an
entry whose seal does not verify is a miss (counted by reason, for one log line each) and is never
parsed. A parsed contract is what reviewers read and what gates a run (`mutates`, `approval`): a
planted one could make a tool that may modify any file look read-only and run. A sealed entry
must also echo its key, and a value that is not exactly what the encoder writes
(`modelcodec.decode`) is a miss, so a damaged entry costs a parse, never a wrong tool. Smart
tools, which read several files, are always parsed.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from functools import lru_cache
from importlib import metadata, resources
from pathlib import Path
from typing import Any, Callable, TypeVar

from . import modelcodec, safeyaml
from .files import ReadError, read_capped, write_atomic
from .jsonvalues import MAX_DEPTH, loads_limited
from .model import FORMATS, Driver, Note, Tool
from .sealing import UNREADABLE, Key, refused_notes

FORMAT = "toolcatalog-parse-v2"
LABEL = "parse-entry"  # what the seal says this file is (a results entry cannot pass for one)
SUBFOLDER = "parse"
# A parsed manifest holds its front matter, body and diagnostics: a few times the manifest's size.
ENTRY_BYTES_PER_MANIFEST_BYTE = 8
# Parsed values nest at most MAX_DEPTH levels inside a few levels of model objects.
ENTRY_DEPTH = MAX_DEPTH + 12
# The code a parse result depends on, besides the formats package.
_MODULES = ("frontmatter.py", "safeyaml.py", "jsonschemas.py", "ecmapattern.py", "schemawork.py", "jsonvalues.py", "files.py", "model.py", "observed.py", "statuses.py",
            "harvest.py", "discover.py", "options.py", "parsecache.py", "modelcodec.py", "sealing.py", "lookalike.py", "formatregistry.py", "schemalint.py", "references.py")
_LIBRARIES = ("PyYAML", "jsonschema", "jsonschema-specifications", "referencing", "regex")

T = TypeVar("T", Tool, Driver)


@lru_cache(maxsize=1)
def code_digest() -> str:
    """A hash of the parsing code and what it calls, so a changed parser never reuses old parses."""
    package = Path(__file__).resolve().parent
    digest = hashlib.sha256(f"{FORMAT}\0{sys.version}\0{safeyaml._Composer.__name__}\0".encode())
    files = sorted(package.joinpath("formats").glob("*.py")) + [package / name for name in _MODULES]
    for path in files:
        digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    for schema in sorted(resources.files("toolcatalog").joinpath("schemas").iterdir(), key=lambda p: p.name):
        if schema.name.endswith(".json"):
            digest.update(schema.name.encode() + b"\0" + schema.read_bytes() + b"\0")
    for library in _LIBRARIES:
        try:
            version = metadata.version(library)
        except metadata.PackageNotFoundError:
            version = "absent"
        digest.update(f"{library}={version}\0".encode())
    return digest.hexdigest()


class ParseCache:
    """Parse results under `folder` (None: no caching, every manifest is parsed)."""

    def __init__(self, folder: Path | None, max_bytes: int, key: Key | None = None, base: Path | None = None):
        self.folder = Path(folder) / SUBFOLDER if folder and key is not None else None
        self.base = Path(base) if base is not None else (Path(folder) if folder else None)  # written below it through no link
        self.key = key
        self.max_bytes = max_bytes
        self.hits = 0
        self.misses = 0
        self.refused: dict[str, int] = {}  # reason -> entries present but not used

    def notes(self) -> list[Note]:
        return refused_notes("parsed manifests in the cache", self.refused)

    def parsed(self, kind: type[T], path: Path, source: str, hint: str, parse: Callable[[bytes | None], T],
               cacheable: Callable[[T], bool]) -> T:
        """The manifest at `path` as `parse(raw)` gives it, from the cache when its key matches.

        `parse` receives the bytes the key was computed from (None when they could not be read:
        it then reads, and reports, the file itself); its result is stored when `cacheable`.
        """
        try:
            raw: bytes | None = read_capped(path, self.max_bytes)
        except ReadError:
            raw = None  # the parser says why; an unreadable file is never cached
        if self.folder is None or raw is None:
            return parse(raw)
        key = self._key(kind, path, source, hint, raw)
        found = self._get(key, kind, path)
        if found is not None:
            self.hits += 1
            return found
        self.misses += 1
        value = parse(raw)
        if cacheable(value):
            self._put(key, kind, value)
        return value

    def _key(self, kind: type, path: Path, source: str, hint: str, raw: bytes) -> str:
        head = json.dumps([code_digest(), kind.__name__, str(path), source, hint, self.max_bytes])
        return hashlib.sha256(head.encode("utf-8", "surrogateescape") + b"\0" + raw).hexdigest()

    def _path(self, key: str) -> Path:
        assert self.folder is not None
        return self.folder / key[:2] / f"{key}.json"

    def _get(self, key: str, kind: type[T], path: Path) -> T | None:
        assert self.folder is not None and self.key is not None
        limit = ENTRY_BYTES_PER_MANIFEST_BYTE * self.max_bytes + (1 << 20)
        where = self._path(key)
        try:
            data = read_capped(where, limit, inside=self.folder)
        except ReadError:
            if os.path.lexists(where):
                self.refused[UNREADABLE] = self.refused.get(UNREADABLE, 0) + 1
            return None
        payload, reason = self.key.unseal(LABEL, data)
        if payload is None:
            self.refused[reason or UNREADABLE] = self.refused.get(reason or UNREADABLE, 0) + 1
            return None
        try:
            entry = loads_limited(payload.decode("utf-8"), ENTRY_DEPTH)
        except (ValueError, UnicodeDecodeError):
            return None
        if not isinstance(entry, dict) or entry.get("key") != key or entry.get("kind") != kind.__name__:
            return None
        try:
            value = modelcodec.decode(kind, entry.get("value"), abs_path=path)
        except (modelcodec.CodecError, RecursionError):
            return None
        if isinstance(value, Tool) and (value.format not in FORMATS or value.drivers):
            return None  # not something a parser returns
        if isinstance(value, Driver) and value.run_status:
            return None
        if not isinstance(value, kind):  # decode makes a `kind` or raises: for the checker
            return None
        _share_equal_values(value)
        return value

    def _put(self, key: str, kind: type, value: Any) -> None:
        assert self.folder is not None and self.key is not None
        try:
            text = self.key.seal(LABEL, json.dumps({"key": key, "kind": kind.__name__, "value": modelcodec.encode(value)},
                                                   ensure_ascii=False, allow_nan=False))
            data = text.encode("utf-8")
        except (modelcodec.CodecError, ValueError, TypeError, RecursionError, UnicodeEncodeError):
            return  # not storable: parsed again next time
        if len(data) > ENTRY_BYTES_PER_MANIFEST_BYTE * self.max_bytes + (1 << 20):
            return  # it could never be read back
        try:
            write_atomic(self._path(key), text, inside=self.base)
        except OSError:
            pass  # a cache that cannot be written only costs time


def _share_equal_values(value: Any) -> None:
    """A fresh parse keeps one object for a schema in `fields` and in `inputs`/`outputs` (and for
    unknown keys in `extra`); so does a cached one, which halves what a big catalog holds."""
    fields = getattr(value, "fields", None)
    if not isinstance(fields, dict):
        return
    for name in ("inputs", "outputs"):
        if hasattr(value, name) and name in fields and fields[name] == getattr(value, name):
            setattr(value, name, fields[name])
    extra = getattr(value, "extra", None)
    if isinstance(extra, dict):
        for key in extra:
            if key in fields and fields[key] == extra[key]:
                extra[key] = fields[key]
