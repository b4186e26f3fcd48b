"""What every output module is made of: a writer (`Writer`, built from a `Plan`) and a verifier
(a function of a `Check`). The list of outputs is `outputs.registry.OUTPUTS`.

Writing goes in three steps, so that a big catalog's entries are made one at a time and no
output's whole text needs to be held:

1. `entry(tool, entry, text)`: each tool's sealed catalog entry (and its text, `dumps(entry)`),
   in the published order; the writer keeps what it needs of it, or hands a file that is final
   already (a per-tool file) to the plan's `Sink` at once and keeps only its digest.
2. `drafts(drafting)`: the files it writes, each a `Draft`: a function from the sealed catalog
   head to the text's pieces (the catalog digest is not known yet), or the digest of the file it
   put already. The manifest is drafted last; it is made from every other file's digest
   (`manifest.complete`).
3. the catalog digest is computed over the head, and each draft's pieces go to the sink, which
   writes them (a folder) or keeps them (`Collect`, `outputs.render`) and returns the digest.

Verifying reads the published files through a `Source` (a folder, or a site fetched over HTTP)
and adds each agreement or mismatch to the `Result`, naming the file and, where it can, the field.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Collection, Iterable, Mapping, Protocol

from ...model import Catalog, Tool
from ...options import Options, OutputPaths
from ..mcp import McpPlan
from ..published import FileDigest, Quoted, of_bytes
from ..site import Site


class Sink(Protocol):
    """Where finished files go: `put(path, pieces)` (joined, the pieces are the text), which
    returns the digest of the bytes it took."""

    def put(self, path: str, pieces: Iterable[str]) -> FileDigest: ...


class Collect:
    """A sink that keeps every text (`outputs.render`'s `{site path: text}`)."""

    def __init__(self) -> None:
        self.files: dict[str, str] = {}

    def put(self, path: str, pieces: Iterable[str]) -> FileDigest:
        text = self.files[path] = "".join(pieces)
        return of_bytes(text.encode("utf-8"))


@dataclass(frozen=True)
class Plan:
    """What every writer knows before the first entry."""

    catalog: Catalog
    options: Options
    site: Site
    paths: OutputPaths
    mcp_plan: McpPlan | None
    others: Mapping[str, FileDigest] | None  # the site's files that are not outputs for agents (pages,
    # assets); None: the pages are another generator's (`toolcatalog export`, `markdown`), so the manifest covers only ours
    overridden: Collection[str] = frozenset()  # outputs the site's own file replaces (listed from `others`, never
    # written); only asked path by path (`path in overridden`)
    sink: Sink = field(default_factory=Collect)


@dataclass
class Draft:
    path: str  # the site path
    what: str  # for messages
    final: Callable[[dict[str, Any]], Iterable[str]] | None  # the text's pieces, given the sealed catalog head;
    # None: put to the sink already (`written`), or the manifest (`last`)
    written: FileDigest | None = None  # what the sink returned for it (None: not put, e.g. overridden)
    last: bool = False  # the digest manifest: made of every other file's digest (`manifest.complete`)


def quoted_draft(path: str, what: str, quoted: Quoted) -> Draft:
    return Draft(path, what, lambda head: (quoted.text(head["catalog_digest"]),))


@dataclass
class Drafting:
    head: dict[str, Any]  # the catalog head, without `catalog_digest`
    digests: list[dict[str, str]]  # {id, source, entry_digest} of every entry, in order
    seed: str  # for `published.quoting`
    drafts: list[Draft]  # the drafts so far


class Writer(Protocol):
    def entry(self, tool: Tool, entry: dict[str, Any], text: str) -> None: ...

    def drafts(self, drafting: Drafting) -> list[Draft]: ...


class Source(Protocol):
    """The published files: a folder, or a site over HTTP."""

    def read(self, path: str, limit: int) -> bytes:
        """The file at site path `path`, at most `limit` bytes. Raises SourceError."""
        ...

    def exists(self, path: str) -> bool: ...

    def listing(self) -> list[str] | None:
        """Every file's site path (a folder), or None where files cannot be listed (a URL)."""
        ...


class SourceError(Exception):
    """A published file cannot be read (missing, too large, refused)."""


@dataclass
class Result:
    checked: list[str] = field(default_factory=list)  # what agreed
    problems: list[str] = field(default_factory=list)  # every mismatch

    @property
    def ok(self) -> bool:
        return not self.problems


@dataclass
class Check:
    """What the verifiers share: the source, the catalog as read, and where the rest is."""

    source: Source
    catalog_path: str  # site path ("" when only a catalog file is checked)
    document: dict[str, Any]
    catalog_digest: str | None  # recomputed from the document (None: it cannot be)
    entries: dict[str, dict[str, Any]]  # recomputed entry digest -> entry
    result: Result
    mcp_path: str | None = None  # named with --mcp (then it must exist)
    llms_path: str | None = None
    manifest: dict[str, FileDigest] | None = None  # site path -> digest, once the manifest was read
    manifest_paths: list[str] = field(default_factory=list)  # where the manifest is
    site_only: bool = False  # only the catalog file was given
    site_digest: str | None = None  # the digest manifest's own digest, once it was read (the site's trust anchor)


@dataclass(frozen=True)
class Output:
    """One output for agents: its writer (None when its option turns it off) and its verifier."""

    name: str
    writer: Callable[[Plan], Writer | None]
    verify: Callable[[Check], None]
    anchor: bool = False  # checked before the others, which are checked from it (the catalog, the manifest)


class Listed:
    """`source` reading only the files the manifest lists (and the catalog and manifest): a site
    over HTTP is never asked for a file the build did not publish."""

    def __init__(self, source: Source, allowed: set[str]) -> None:
        self.source, self.allowed = source, allowed

    def read(self, path: str, limit: int) -> bytes:
        if path not in self.allowed:
            raise SourceError(f"{path!r} is not in the digest manifest; not fetched")
        return self.source.read(path, limit)

    def exists(self, path: str) -> bool:
        return path in self.allowed and self.source.exists(path)

    def listing(self) -> list[str] | None:
        return self.source.listing()
