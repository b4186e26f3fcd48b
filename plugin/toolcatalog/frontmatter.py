"""Reading a manifest file: size cap, strict UTF-8, front matter at byte 0.

The front matter grammar is speccify's reference one (`parse_tool`):
``\\A---\\r?\\n(?P<yaml>.*?)\\r?\\n---\\r?\\n?(?P<body>.*)\\Z``. Every format in the
catalog uses the same `---` fences, so all parsers share this reader and report
problems the same way.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import safeyaml
from .files import ReadError, read_capped
from .jsonvalues import TooDeepError, loads_strict

DEFAULT_MAX_BYTES = 1024 * 1024

_FRONT_MATTER = re.compile(r"\A---\r?\n(?P<yaml>.*?)\r?\n---\r?\n?(?P<body>.*)\Z", re.DOTALL)
_EMPTY_FRONT_MATTER = re.compile(r"\A---\r?\n---\r?\n?(?P<body>.*)\Z", re.DOTALL)


class ManifestError(Exception):
    """The file cannot be read as a manifest at all."""

    def __init__(self, message: str, line: int | None = None, code: str = "manifest-unreadable"):
        super().__init__(message)
        self.message = message
        self.line = line
        self.code = code


@dataclass
class Manifest:
    """A manifest's parsed front matter, its body and where things are."""

    data: Any
    body: str
    body_line: int  # the file line the body starts at
    lines: safeyaml.Document
    notes: list[safeyaml.Note] = field(default_factory=list)
    raw: bytes = b""

    def line(self, path: Any, default: int | None = None) -> int | None:
        return self.lines.line(path, default)


def read_bytes(path: Path, max_bytes: int = DEFAULT_MAX_BYTES, inside: Path | None = None) -> bytes:
    """Read at most `max_bytes` of a regular file (`files.read_capped`); a larger file is
    refused without reading it all, a FIFO or device without opening it for reading."""
    try:
        return read_capped(path, max_bytes, inside)
    except ReadError as exc:
        if exc.code == "too-large":
            raise ManifestError(
                f"{exc.message}; manifests larger than {max_bytes:,} bytes are refused (option max_manifest_bytes)",
                None,
                "manifest-too-large",
            ) from None
        if exc.code == "not-a-file":
            raise ManifestError(f"{exc.message}; manifests must be files", None, "manifest-unreadable") from None
        raise ManifestError(exc.message, None, "manifest-unreadable") from None


def decode(data: bytes) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise ManifestError(
            f"file is not UTF-8 text (byte 0x{data[exc.start]:02x} at offset {exc.start})", line, "manifest-encoding"
        ) from None


def read_json(path: Path, max_bytes: int = DEFAULT_MAX_BYTES) -> tuple[Any, bytes]:
    """Read a JSON file (smart-tool.json) with the same caps as a manifest."""
    raw = read_bytes(path, max_bytes)
    text = decode(raw)
    try:
        return loads_strict(text), raw
    except json.JSONDecodeError as exc:
        raise ManifestError(f"not valid JSON: {exc.msg}", exc.lineno, "json-syntax") from None
    except TooDeepError as exc:
        raise ManifestError(f"JSON refused: {exc}", None, "json-too-deep") from None
    except ValueError as exc:  # NaN/Infinity, or an integer too long to convert
        raise ManifestError(f"not valid JSON: {exc}", None, "json-syntax") from None


def parse(raw: bytes) -> Manifest:
    """Split and parse front matter. Raises `ManifestError` when there is none to read."""
    text = decode(raw)
    if text.startswith("\ufeff"):
        raise ManifestError(
            "file starts with a byte-order mark; the front matter's `---` must be the very first bytes",
            1,
            "frontmatter-position",
        )
    match = _FRONT_MATTER.match(text)
    yaml_text = match.group("yaml") if match else None
    if match is None:
        empty = _EMPTY_FRONT_MATTER.match(text)
        if empty is not None:
            raise ManifestError("front matter is empty; it must be a YAML mapping of fields", 1, "frontmatter-not-mapping")
        _explain_missing_front_matter(text)
    assert match is not None and yaml_text is not None
    body = match.group("body")
    body_line = text.count("\n", 0, match.start("body")) + 1
    try:
        doc = safeyaml.load(yaml_text, first_line=2)
    except safeyaml.YamlError as exc:
        raise ManifestError(exc.message, exc.line, exc.code) from None
    if not isinstance(doc.data, dict):
        kind = "empty" if doc.data is None else f"a {_json_type(doc.data)}"
        raise ManifestError(f"front matter is {kind}; it must be a YAML mapping of fields", 2, "frontmatter-not-mapping")
    return Manifest(doc.data, body, body_line, doc, list(doc.notes), raw)


def _explain_missing_front_matter(text: str) -> None:
    first = text.split("\n", 1)[0].rstrip("\r")
    if first == "---" or first.startswith("---"):
        raise ManifestError(
            "front matter opened on line 1 is never closed by a `---` line", 1, "frontmatter-unclosed"
        )
    number = _misplaced_front_matter(text.splitlines()[:200])
    if number is not None:
        raise ManifestError(
            f"front matter must start at byte 0 of the file; found `---` on line {number} instead",
            number,
            "frontmatter-position",
        )
    raise ManifestError(
        "no YAML front matter: the file must start with a `---` line, the fields, and a closing `---` line",
        1,
        "frontmatter-missing",
    )


def _misplaced_front_matter(lines: list[str]) -> int | None:
    """The line of a `---` that opens front matter somewhere other than byte 0, or None.

    A `---` line is also a Markdown thematic break, so a file without front matter may hold
    several; only a pair whose text in between is a YAML mapping is front matter out of place.
    """
    fences = [i for i, line in enumerate(lines) if line.rstrip() == "---"]
    for start, end in zip(fences, fences[1:]):
        try:
            data = safeyaml.load("\n".join(lines[start + 1 : end]), first_line=start + 2).data
        except safeyaml.YamlError:
            continue
        if isinstance(data, dict) and data:
            return start + 1
    return None


def _json_type(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "list"
    if value is None:
        return "null"
    return "mapping"


json_type = _json_type
