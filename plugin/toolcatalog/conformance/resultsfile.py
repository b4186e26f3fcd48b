"""Results files: the results of some tools, produced elsewhere (a sharded CI job) and used here.

`toolcatalog check --results-out FILE` writes one; the `results` option and `--results` read any
number of them (files, folders of `*.json`, globs). A result is a tool's outcome under the cache
key it was produced for, so it is used exactly like a cached result: only while the key still
matches the tool's content and this machine, and only when its outcome is one the codec reads
(`outcome.from_json`, after the seal is verified) and fits the tool (`engine._applicable`);
anything else is ignored and the tool runs here as usual.

A key alone proves nothing (anyone can compute one), and a results file may sit inside the
repository being catalogued (`results: [results]`), where a commit can put one. So every result
carries a seal, `mac`: an HMAC-SHA256, with the build's key (`sealing`), of the result's key, tool,
format, source, seconds and outcome; the file names the key it was sealed with (`key_id`). A result
whose seal does not verify is never used (the file's note says how many, and why); its recorded
time may still balance the shards, which changes who runs a tool, never a verdict.

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
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Iterable

from .. import jsonschemas
from .._version import __version__
from ..files import ReadError, read_capped, write_atomic
from ..jsonvalues import loads_limited
from ..model import Note
from ..sealing import FORGED, OTHER_KEY, REASONS, Key
from ..statuses import Status
from .cache import OUTCOME_DEPTH, encode
from .outcome import CodecError, Outcome, from_json, to_json

# What a result whose outcome cannot be read stands on (only its time is used: never applied).
_PLACEHOLDER = Outcome(Status.NOT_RUN, "", ())

FORMAT = "toolcatalog-results"
VERSION = 2
LABEL = "results-file-item"  # what a seal says it covers (a cache entry's seal cannot pass for one)
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
    outcome: Outcome


@dataclass
class ResultSet:
    """Every result read, by key, and what reading them found."""

    by_key: dict[str, Result] = field(default_factory=dict)  # sealed with this build's key only
    notes: list[Note] = field(default_factory=list)  # files missing, unreadable, of another shape or unsealed
    # (format, source) -> the longest time recorded by any well-formed result, sealed or not
    longest: dict[tuple[str, str], float] = field(default_factory=dict)

    def get(self, key: str) -> Result | None:
        return self.by_key.get(key)

    def seconds_of(self, fmt: str, source: str) -> float | None:
        """The longest recorded time of a tool (any key: an edited tool takes about as long)."""
        return self.longest.get((fmt, source))

    def add(self, result: Result, sealed: bool = True) -> None:
        tool = (result.format, result.source)
        self.longest[tool] = max(result.seconds, self.longest.get(tool, result.seconds))
        if not sealed:
            return
        other = self.by_key.get(result.key)
        if other is None or _rank(result) < _rank(other):
            self.by_key[result.key] = result


def _rank(result: Result) -> tuple[str, float]:
    return hashlib.sha256(json.dumps(to_json(result.outcome), sort_keys=True, ensure_ascii=False).encode("utf-8", "surrogatepass")).hexdigest(), result.seconds


def find(workspace: Path, patterns: Iterable[str]) -> tuple[list[Path], list[Note]]:
    """The files `patterns` name (relative to `workspace`): files, folders (every `*.json` below,
    recursively) and globs. A name that matches nothing is noted, never an error: a local build
    has no CI artifacts."""
    files: list[Path] = []
    notes: list[Note] = []
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
            notes.append(Note(f"results {pattern!r}: nothing there", warning=False))
        files.extend(f for f in found if f not in files)
    return files, notes


def load(workspace: Path, patterns: Iterable[str], key: Key | None) -> ResultSet:
    """Every result the files hold; only those sealed with `key` can be used (None: none can)."""
    files, notes = find(workspace, patterns)
    results = ResultSet(notes=notes)
    for path in files:
        problem = read_into(path, results, key)
        if problem:
            results.notes.append(problem if isinstance(problem, Note) else Note(f"results file {path}: {problem}; not used"))
    return results


def seal_payload(result: Result, outcome: Any = None) -> bytes:
    """What a result's seal covers, the same bytes whoever wrote or reformatted the file: its
    fields and its outcome as JSON (`outcome`: as read, before the codec; default: `to_json`)."""
    value = to_json(result.outcome) if outcome is None else outcome
    return _payload((result.key, result.tool, result.format, result.source, float(result.seconds)), value)


def _payload(fields: tuple[Any, ...], outcome: Any) -> bytes:
    return json.dumps([*fields, outcome], ensure_ascii=True, allow_nan=False).encode("ascii")


def read_into(path: Path, results: ResultSet, key: Key | None) -> str | Note | None:
    """Add the results of one file; why it (or some of it) was not used, or None."""
    try:
        document = loads_limited(read_capped(path, MAX_FILE_BYTES).decode("utf-8"), OUTCOME_DEPTH + 4)
    except ReadError as exc:
        return exc.message
    except (ValueError, UnicodeDecodeError) as exc:
        return f"not JSON ({str(exc)[:100]})"
    if isinstance(document, dict) and document.get("format") == FORMAT and document.get("version") != VERSION:
        return f"version {document.get('version')!r}, and this toolcatalog reads version {VERSION} (whose results are sealed)"
    errors = jsonschemas.validate_bundled(SCHEMA, document)
    if errors:
        # The keyword and the place, never the value: `results:` may name any file on the host,
        # and jsonschema's message quotes the instance (a key in a JSON array would reach the log).
        where = jsonschemas.json_path(errors[0].absolute_path)
        return f"not a results file ({where}: fails the results schema's `{errors[0].validator}`)"
    other_key = key is None or document["key_id"] != key.id
    unsealed = malformed = 0
    for item in document["results"]:
        try:
            stub = Result(item["key"], item["tool"], item["format"], item["source"], float(item["seconds"]), _PLACEHOLDER)
            sealed = not other_key and key is not None and key.verifies(LABEL, seal_payload(stub, item["outcome"]), item["mac"])
        except (ValueError, TypeError, OverflowError, RecursionError):  # seconds beyond a float: not one we wrote
            unsealed += 1
            continue
        outcome = _decoded(item["outcome"]) if sealed else None  # a forged outcome is never even decoded
        if outcome is None:
            unsealed += not sealed
            malformed += sealed  # sealed with this key, yet no outcome this version reads: never used
            results.add(stub, sealed=False)  # its recorded time still balances the shards
            continue
        results.add(replace(stub, outcome=outcome), sealed=True)
    if malformed and not unsealed:
        return Note(f"results file {path}: {malformed} of {len(document['results'])} results hold no outcome this version reads; "
                    "not used, checked again here", warning=False)
    if not unsealed:
        return None
    reason = OTHER_KEY if other_key else FORGED
    # Another key is what a job without the shared secret sees; a broken seal under this key is
    # a file no build holding the key wrote as it is.
    return Note(f"results file {path}: {unsealed} of {len(document['results'])} results {REASONS[reason]}; "
                "not used, checked again here", warning=reason != OTHER_KEY)


def _decoded(value: Any) -> Outcome | None:
    try:
        return from_json(value)
    except CodecError:
        return None


def dumps(results: Iterable[Result], key: Key, shard: tuple[int, int] | None = None) -> str:
    """A results file sealed with `key`, results in a stable order (by tool, then key)."""
    items = sorted(results, key=lambda r: (r.format, r.source, r.tool, r.key))
    head = {
        "format": FORMAT,
        "version": VERSION,
        "generator": {"name": "mkdocs-toolcatalog", "version": __version__},
        "key_id": key.id,
        "shard": {"index": shard[0], "count": shard[1]} if shard else None,
    }
    lines = []
    for r in items:
        rounded = Result(r.key, r.tool, r.format, r.source, round(r.seconds, 3), r.outcome)
        fields = {"key": r.key, "tool": r.tool, "format": r.format, "source": r.source, "seconds": rounded.seconds,
                  "mac": key.mac(LABEL, seal_payload(rounded))}
        # Outcomes keep their own key order, as the cache keeps them (see cache.encode).
        lines.append(json.dumps(fields, ensure_ascii=False, sort_keys=True)[:-1] + ', "outcome": ' + encode(r.outcome) + "}")
    return json.dumps(head, ensure_ascii=False, sort_keys=True)[:-1] + ', "results": [\n' + ",\n".join(lines) + "\n]}\n"


def write(path: Path, results: Iterable[Result], key: Key, shard: tuple[int, int] | None = None) -> None:
    write_atomic(path, dumps(results, key, shard))
