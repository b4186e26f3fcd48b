"""Results files: the results of some tools, produced elsewhere (a sharded CI job) and used here.

`toolcatalog check --results-out FILE` writes one; the `results` option and `--results` read any
number of them (files, folders of `*.json`, globs). A result is a tool's outcome under the cache
key it was produced for, so it is used exactly like a cached result: only while the key still
matches the tool's content and this machine, and only when its outcome has the shape a runner
gives (`engine._applicable`); anything else is ignored and the tool runs here as usual.

A file is versioned and checked against `schemas/results.schema.json` as a whole (a file of
another version or shape is ignored with a note). Reading several files gives the same results in
any order: when two results share a key, the one whose outcome encodes to the smaller digest wins.
Each result also records the seconds its tool's tasks took, which `shards` uses to balance work.
"""

from __future__ import annotations

import glob
import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

from .. import jsonschemas
from .._version import __version__
from ..files import ReadError, read_capped, write_atomic
from ..jsonvalues import loads_limited
from .cache import OUTCOME_DEPTH, encode

FORMAT = "toolcatalog-results"
VERSION = 1
SCHEMA = "results.schema.json"
MAX_FILE_BYTES = 512 * 1024 * 1024  # thousands of tools with their outputs; far less than memory
_GLOB = set("*?[")


@dataclass(frozen=True)
class Result:
    key: str
    tool: str
    format: str
    source: str
    seconds: float
    outcome: dict[str, Any]


@dataclass
class ResultSet:
    """Every result read, by key, and what reading them found."""

    by_key: dict[str, Result] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)  # files missing, unreadable or of another shape
    # (format, source) -> the longest time of the results kept; made when first asked for
    _longest: dict[tuple[str, str], float] | None = field(default=None, init=False, repr=False, compare=False)

    def get(self, key: str) -> Result | None:
        return self.by_key.get(key)

    def seconds_of(self, fmt: str, source: str) -> float | None:
        """The longest recorded time of a tool (any key: an edited tool takes about as long)."""
        if self._longest is None:
            self._longest = {}
            for r in self.by_key.values():
                tool = (r.format, r.source)
                self._longest[tool] = max(r.seconds, self._longest.get(tool, r.seconds))
        return self._longest.get((fmt, source))

    def add(self, result: Result) -> None:
        self._longest = None
        other = self.by_key.get(result.key)
        if other is None or _rank(result) < _rank(other):
            self.by_key[result.key] = result


def _rank(result: Result) -> tuple[str, float]:
    return hashlib.sha256(json.dumps(result.outcome, sort_keys=True, ensure_ascii=False).encode("utf-8", "surrogatepass")).hexdigest(), result.seconds


def find(workspace: Path, patterns: Iterable[str]) -> tuple[list[Path], list[str]]:
    """The files `patterns` name (relative to `workspace`): files, folders (every `*.json` below,
    recursively) and globs. A name that matches nothing is noted, never an error: a local build
    has no CI artifacts."""
    files: list[Path] = []
    notes: list[str] = []
    for pattern in patterns:
        full = pattern if os.path.isabs(pattern) else os.path.join(workspace, pattern)
        if _GLOB & set(pattern):
            matched = sorted(Path(p) for p in glob.glob(full, recursive=True))
            found = [p for p in matched if p.is_file()] + [q for p in matched if p.is_dir() for q in sorted(p.rglob("*.json"))]
        elif os.path.isdir(full):
            found = sorted(Path(full).rglob("*.json"))
        elif os.path.exists(full):
            found = [Path(full)]
        else:
            found = []
        if not found:
            notes.append(f"results {pattern!r}: nothing there")
        files.extend(f for f in found if f not in files)
    return files, notes


def load(workspace: Path, patterns: Iterable[str]) -> ResultSet:
    files, notes = find(workspace, patterns)
    results = ResultSet(notes=notes)
    for path in files:
        problem = read_into(path, results)
        if problem:
            results.notes.append(f"results file {path}: {problem}; not used")
    return results


def read_into(path: Path, results: ResultSet) -> str | None:
    """Add the results of one file; why it was not used, or None."""
    try:
        document = loads_limited(read_capped(path, MAX_FILE_BYTES).decode("utf-8"), OUTCOME_DEPTH + 4)
    except ReadError as exc:
        return exc.message
    except (ValueError, UnicodeDecodeError) as exc:
        return f"not JSON ({str(exc)[:100]})"
    if isinstance(document, dict) and document.get("format") == FORMAT and document.get("version") != VERSION:
        return f"version {document.get('version')!r}, and this toolcatalog reads version {VERSION}"
    errors = jsonschemas.validate_bundled(SCHEMA, document)
    if errors:
        where = jsonschemas.json_path(errors[0].absolute_path)
        return f"not a results file ({where}: {errors[0].message[:150]})"
    for item in document["results"]:
        results.add(Result(item["key"], item["tool"], item["format"], item["source"], float(item["seconds"]), item["outcome"]))
    return None


def dumps(results: Iterable[Result], shard: tuple[int, int] | None = None) -> str:
    """A results file, results in a stable order (by tool, then key)."""
    items = sorted(results, key=lambda r: (r.format, r.source, r.tool, r.key))
    document = {
        "format": FORMAT,
        "version": VERSION,
        "generator": {"name": "mkdocs-toolcatalog", "version": __version__},
        "shard": {"index": shard[0], "count": shard[1]} if shard else None,
        "results": [
            {"key": r.key, "tool": r.tool, "format": r.format, "source": r.source, "seconds": round(r.seconds, 3), "outcome": r.outcome}
            for r in items
        ],
    }
    # Outcomes keep their own key order, as the cache keeps them (see cache.encode).
    head = json.dumps({k: v for k, v in document.items() if k != "results"}, ensure_ascii=False, sort_keys=True)
    lines = [
        json.dumps({k: v for k, v in item.items() if k != "outcome"}, ensure_ascii=False, sort_keys=True)[:-1]
        + ', "outcome": ' + encode(item["outcome"]) + "}"
        for item in document["results"]
    ]
    return head[:-1] + ', "results": [\n' + ",\n".join(lines) + "\n]}\n"


def write(path: Path, results: Iterable[Result], shard: tuple[int, int] | None = None) -> None:
    write_atomic(path, dumps(results, shard))
