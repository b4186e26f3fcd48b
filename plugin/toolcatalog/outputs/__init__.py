"""Everything a site publishes for agents, built the same way by every host.

`render(catalog, options, site)` returns every output as `{site path: text}`; the outputs are
listed once, in `registry.OUTPUTS`, each one module of `documents` with its writer and its
verifier:

- `catalog_file` (default `catalog.json`): the catalog document (`catalog_json`), validated
  against the shipped `schemas/catalog.schema.json`, which is published beside it as
  `schemas/catalog-v2.schema.json`, and digested (`integrity`).
- `tool_json_dir` (default `tools`): one `<slug>.json` per tool (the tool's catalog entry plus a
  `$schema` pointing at `#/$defs/tool`), at `tool.json_path` (see `placement`).
- `mcp_file` (default `mcp-tools.json`): an MCP `tools/list` result (`mcp`), whose tools repeat
  their catalog entry's verification, provenance and digest.
- `llms_file` (default `llms.txt`): the llms.txt index of the tools (`llms`), with the digests.
- the digest manifest (`catalog.digests.json` beside the catalog, whenever the catalog is on):
  every file of the site by size and SHA-256 (`published`), the catalog and the site's own files
  (`others`, given by the host: pages, assets) included; the catalog's `written` member names it,
  and its own digest (the site digest) anchors every published byte.

An empty string turns an output off. Nothing here reads the clock (except SOURCE_DATE_EPOCH,
when set), the machine's paths, or the order files were found in, so the same sources give the
same bytes; `write` puts each file in place atomically. Tools must have been placed first.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Collection, Iterable, Mapping, TypeVar

from .. import files
from ..files import write_atomic
from ..model import Catalog
from ..options import Options, OptionsError, output_paths
from . import catalog_json, integrity, mcp, registry
from .documents import manifest
from .published import FileDigest, QuotingError, manifest_path, of_bytes
from .site import Site

__all__ = ["ExportError", "FileDigest", "Finished", "Pending", "Site", "Written", "catalog_document", "finish_site", "of_bytes", "render", "write",
           "write_pieces_atomic", "write_site", "write_site_first"]

T = TypeVar("T")


class ExportError(Exception):
    """An output cannot be produced: a bad SOURCE_DATE_EPOCH, or (a bug) an output that breaks its own schema."""


def _guarded(make: Callable[[], T]) -> T:
    try:
        return make()
    except registry.RenderError as exc:
        raise ExportError(str(exc)) from None
    except (integrity.DigestError, QuotingError) as exc:
        raise ExportError(f"internal error, please report it: the catalog cannot be digested: {exc}") from None
    except (catalog_json.CatalogError, mcp.McpShapeError) as exc:
        raise ExportError(f"internal error, please report it: {exc}") from None
    except OptionsError as exc:  # SOURCE_DATE_EPOCH
        raise ExportError(str(exc)) from None


def catalog_document(catalog: Catalog, options: Options | None = None, site: Site | None = None) -> dict[str, Any]:
    """The catalog document exactly as `render` publishes it (with the MCP list's omissions when
    that output is on, and the digest manifest's reference when the catalog is). Raises ExportError."""
    options = options or Options()
    site = site or Site()
    plan = registry.mcp_plan(catalog, options)
    try:
        return catalog_json.document(catalog, options, site, plan.diagnostics if plan else None)
    except catalog_json.CatalogError as exc:
        raise ExportError(f"internal error, please report it: {exc}") from None
    except OptionsError as exc:  # SOURCE_DATE_EPOCH
        raise ExportError(str(exc)) from None


def render(catalog: Catalog, options: Options | None = None, site: Site | None = None,
           others: Mapping[str, FileDigest] | None = None, overridden: Collection[str] = ()) -> dict[str, str]:
    """Every enabled output as `{site path: text}`, in a stable order. Raises ExportError.

    A big catalog's entries are far larger as Python objects than as text, so they are made one
    at a time (`registry.render`): each is digested into the running catalog digest, checked
    against the schema, turned into text once and handed to every output's writer, then let go.
    The bytes are those of `catalog_document` and `mcp.document` (tests/test_scale_outputs.py
    holds them equal). `others`: the site's own files (pages, assets), which the digest manifest
    lists too; `overridden`: outputs whose path the site's own file takes (not written; the
    manifest lists the site's file)."""
    return _guarded(lambda: registry.render(catalog, options or Options(), site or Site(), others, overridden)).files


@dataclass
class Written:
    paths: list[str]  # the site paths written, in the registry's order
    catalog_digest: str | None  # the trust anchors, when the catalog / its digest manifest were written
    site_digest: str | None


def write_pieces_atomic(path: Path, pieces: Iterable[str], inside: Path | None = None) -> FileDigest:
    """`files.write_pieces_atomic` (written piece by piece via a temporary file and rename, through
    no link below `inside`), with the digest of the bytes written. OSError when a link is on the way."""
    return FileDigest(*files.write_pieces_atomic(path, pieces, inside))


class _Folder:
    """A sink that writes each file under `folder` as it comes, atomically, piece by piece, and
    never through a link: a site_dir may hold a link to a folder elsewhere (MkDocs' clean leaves a
    link to a folder in place, so a `site/tools` link a commit planted survives `mkdocs build`).
    A file that cannot be written (a link on the way, a folder where the file goes) is an
    ExportError naming it."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def put(self, path: str, pieces: Iterable[str]) -> FileDigest:
        try:
            return write_pieces_atomic(self.folder.joinpath(*path.split("/")), pieces, inside=self.folder)
        except OSError as exc:
            raise ExportError(f"{path} cannot be written into the site: {exc.strerror or exc}") from None


def write_site(catalog: Catalog, options: Options, site: Site, folder: Path, others: Mapping[str, FileDigest] | None = None,
               overridden: Collection[str] = ()) -> Written:
    """`write(render(...), folder)` without holding the outputs: each file is written under
    `folder` as soon as it is final (a per-tool file when its entry is made; the catalog and the
    MCP list piece by piece at the end), the same bytes. `overridden` is only asked path by path
    (`path in overridden`). On an error, the files written so far stay. Raises ExportError."""
    done = _guarded(lambda: registry.emit(catalog, options, site, _Folder(folder), others, overridden))
    catalog_path = output_paths(options).catalog
    manifest = manifest_path(catalog_path) if catalog_path else None
    digest = done.head.get(integrity.CATALOG_FIELD) if catalog_path in done.written else None
    site_digest = done.written.get(manifest) if manifest else None
    return Written(list(done.written), digest if isinstance(digest, str) else None,
                   "sha256:" + site_digest.sha256 if site_digest else None)


@dataclass
class Pending:
    """The outputs `write_site_first` wrote, all but the digest manifest (`finish_site` adds it):
    only paths and digests, nothing of the catalog."""

    written: dict[str, FileDigest]  # site path -> digest of the bytes written, in the registry's order
    catalog_digest: str | None
    catalog: str | None  # the catalog's site path (the manifest goes beside it), None: no catalog, no manifest
    overridden: Collection[str]  # as given to `write_site_first`


@dataclass
class Finished:
    written: Written
    changed: list[str]  # our outputs whose bytes on disk are not those written (another plugin's, later)
    gone: list[str]  # our outputs no longer in the site


def write_site_first(catalog: Catalog, options: Options, site: Site, folder: Path, overridden: Collection[str] = ()) -> Pending:
    """`write_site` without the digest manifest, which `finish_site` makes once the host and
    every other plugin are done with the site: the MkDocs plugin writes its outputs first, lets
    the catalog go, and lists the site last. Raises ExportError."""
    done = _guarded(lambda: registry.emit(catalog, options, site, _Folder(folder), {}, overridden, manifest_now=False))
    catalog_path = output_paths(options).catalog
    digest = done.head.get(integrity.CATALOG_FIELD) if catalog_path in done.written else None
    return Pending(done.written, digest if isinstance(digest, str) else None, catalog_path, overridden)


def finish_site(pending: Pending, folder: Path, site_files: Mapping[str, FileDigest]) -> Finished:
    """The digest manifest of `folder`, whose files are `site_files` (read from disk now, our
    outputs too: one a later plugin rewrote is listed as it is, and named in `changed`)."""
    written = dict(pending.written)
    site_digest = None
    if pending.catalog is not None:
        text = manifest.listing(pending.catalog, pending.overridden, site_files)
        if text is not None:
            path = manifest_path(pending.catalog)
            written[path] = write_pieces_atomic(folder.joinpath(*path.split("/")), (text,))
            site_digest = "sha256:" + written[path].sha256
    changed = [path for path, digest in pending.written.items() if path in site_files and site_files[path] != digest]
    gone = [path for path in pending.written if path not in site_files]
    return Finished(Written(list(written), pending.catalog_digest, site_digest), changed, gone)


def write(files: dict[str, str], folder: Path) -> list[Path]:
    """Write every output under `folder`, each atomically. Returns the paths written."""
    written = []
    for rel, text in files.items():
        target = folder.joinpath(*rel.split("/"))
        write_atomic(target, text)
        written.append(target)
    return written
