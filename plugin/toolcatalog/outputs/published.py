"""The digest manifest's facts: every file a build wrote into the site, by size and SHA-256.

`catalog.digests.json` (beside the catalog: the catalog file's name with `.json` replaced by
`.digests.json`) lists every file of the site but itself, the catalog included, by its exact
bytes. The catalog names it in its `written` member (`{"manifest"}`); the manifest's own SHA-256
is the site digest, which the build prints beside the catalog digest (docs/security.md).

Two outputs quote the catalog digest (the MCP list's `_meta` and llms.txt's `Catalog digest:`
line), and the build makes them before the catalog digest exists: `quoting` renders them with
two stand-ins and keeps the text between the places they went (`Quoted`).
"""

from __future__ import annotations

import hashlib
import posixpath
import zlib
from dataclasses import dataclass
from typing import Callable, Iterator

MANIFEST_VERSION = 1
MANIFEST_SUFFIX = ".digests.json"
WRITTEN_FIELD = "written"  # the catalog's member naming the manifest (`{"manifest": name}`)


def manifest_path(catalog_path: str) -> str:
    """`catalog.json` -> `catalog.digests.json`, in the same folder."""
    folder, name = posixpath.split(catalog_path)
    stem = name[: -len(".json")] if name.endswith(".json") and len(name) > len(".json") else name
    return posixpath.join(folder, stem + MANIFEST_SUFFIX)


@dataclass(frozen=True)
class FileDigest:
    size: int
    sha256: str  # hex

    def as_dict(self) -> dict[str, object]:
        return {"sha256": self.sha256, "size": self.size}


def of_bytes(data: bytes) -> FileDigest:
    return FileDigest(len(data), hashlib.sha256(data).hexdigest())


@dataclass(frozen=True)
class Quoted:
    """A text that quotes the catalog digest at known places, the digest not yet known."""

    parts: tuple[str, ...]  # the text between the places; one part: it quotes nothing

    def text(self, catalog_digest: str) -> str:
        return catalog_digest.join(self.parts)


class Spool:
    """Texts kept compressed, one by one, read back in order as often as needed: the entries of
    a big catalog (and its MCP tools) wait for the catalog digest in a fraction of their size."""

    def __init__(self) -> None:
        self.parts: list[bytes] = []

    def append(self, text: str) -> None:
        self.parts.append(zlib.compress(text.encode("utf-8"), 1))

    def __len__(self) -> int:
        return len(self.parts)

    def __iter__(self) -> Iterator[str]:
        for part in self.parts:
            yield zlib.decompress(part).decode("utf-8")

    def clear(self) -> None:
        self.parts = []


class QuotingError(Exception):
    """A stand-in for the catalog digest was found where the text does not quote it (a bug)."""


def plain(text: str) -> Quoted:
    return Quoted((text,))


def quoting(render: Callable[[str], str], seed: str) -> Quoted:
    """`render(catalog_digest)` made before the digest exists. `seed` (the entries' digests)
    makes the stand-ins, so no manifest can hold one by chance or design. Raises QuotingError."""
    one, two = ("sha256:" + hashlib.sha256(f"{which}\0{seed}".encode()).hexdigest() for which in ("one", "two"))
    first = render(one)
    parts = tuple(first.split(one))
    if two.join(parts) != render(two):
        raise QuotingError("the text quotes the catalog digest where a stand-in does not go")
    return Quoted(parts)


def safe_site_path(path: object) -> bool:
    """A path inside the site: relative, `/`-separated, no empty, `.` or `..` segment, no
    backslash, control character or drive/scheme colon in its first segment."""
    if not isinstance(path, str) or not 0 < len(path) <= 1024 or path.startswith("/") or "\\" in path:
        return False
    if any(ord(c) < 32 or ord(c) == 127 for c in path):
        return False
    segments = path.split("/")
    return ":" not in segments[0] and all(s not in ("", ".", "..") for s in segments)
