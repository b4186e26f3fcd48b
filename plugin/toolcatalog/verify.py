"""`toolcatalog verify DIR|URL`: recompute every digest a published catalog states, and compare.

DIR is a built site (or a `toolcatalog export` folder); URL is a published site (`http(s)://`,
see `sitefetch`: only the files the manifest lists are fetched, each capped at its listed size,
never outside the site's origin). What is checked, in the order of `outputs.registry.OUTPUTS`
(each output's verifier is in its own module of `outputs.documents`):

- the catalog (`catalog.json`, or `--catalog`): its `catalog_digest` and every tool's
  `entry_digest`, recomputed from the document itself;
- the digest manifest its `written` member names (`catalog.digests.json`): every file it lists,
  byte for byte (the catalog, pages, assets, search index, sitemap, MCP list, llms.txt, per-tool
  JSON); in a folder, a file it does not list is a mismatch too;
- every per-tool file the catalog links (`json`): its own `entry_digest`, and that it is the
  catalog's entry for that tool;
- `mcp-tools.json` (or `--mcp`): the list's catalog digest, and every tool re-derived from its
  catalog entry, field by field;
- `llms.txt` (or `--llms`): its `Catalog digest:` line, one entry digest per tool, and every tool
  line re-derived from its catalog entry.

The build prints two trust anchors: the catalog digest (the catalog, and everything made from it:
per-tool JSON, MCP list, llms.txt) and the site digest (the manifest's own SHA-256, so every byte
of the site). `--digest` takes either: the files it anchors must then be exactly the build's,
even if someone rewrote the site and its manifest to agree with each other. Given a catalog file
instead of a folder, only the catalog itself is checked.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from . import sitefetch
from .files import ReadError, read_capped
from .outputs import registry
from .outputs.documents import catalog as catalog_output
from .outputs.documents.base import Check, Result, SourceError
from .outputs.documents.reading import load_json

VERSION = 2

__all__ = ["Folder", "Result", "VerifyError", "verify", "verify_source", "verify_url"]


class VerifyError(Exception):
    """Nothing to verify: the catalog is missing, unreadable or has no digests."""


class Folder:
    """A site folder as a `Source`: regular files only, never through a link out of it."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)

    def _path(self, path: str) -> Path:
        return self.root.joinpath(*path.split("/"))

    def exists(self, path: str) -> bool:
        return os.path.lexists(self._path(path))

    def read(self, path: str, limit: int) -> bytes:
        try:
            return read_capped(self._path(path), limit, inside=self.root)
        except ReadError as exc:
            raise SourceError(f"cannot be read: {exc}") from None

    def listing(self) -> list[str]:
        out = []
        for top, folders, names in os.walk(self.root):  # links are listed, never followed
            rel = Path(top).relative_to(self.root).as_posix()
            for name in names + [f for f in folders if os.path.islink(os.path.join(top, f))]:
                out.append(name if rel == "." else f"{rel}/{name}")
        return sorted(out)


class CatalogFile(Folder):
    """A lone catalog file: only it can be read."""

    def __init__(self, path: Path) -> None:
        super().__init__(path.parent)
        self.name = path.name

    def exists(self, path: str) -> bool:
        return path == self.name and super().exists(path)


def _document(source: Any, path: str) -> dict[str, Any]:
    try:
        document = load_json(source, path, "catalog")
    except SourceError as exc:
        raise VerifyError(str(exc)) from None
    if not isinstance(document, dict) or not isinstance(document.get("tools"), list):
        raise VerifyError(f"{path!r} is not a tool catalog (no `tools` list)")
    if document.get("version") != VERSION:
        raise VerifyError(f"{path!r} is a version {document.get('version')!r} catalog; only version {VERSION} catalogs carry digests")
    return document


def verify_source(source: Any, catalog: str = "catalog.json", mcp: str | None = None, llms: str | None = None,
                  expected_digest: str | None = None, site_only: bool = False) -> Result:
    """Check the catalog at site path `catalog` of `source` and every file beside it.
    `expected_digest`: the catalog digest or the site digest the build printed (the trust anchor).
    Raises VerifyError when there is no version 2 catalog to check."""
    document = _document(source, catalog)
    check = Check(source, catalog, document, catalog_output.catalog_digest(document), {}, Result(),
                  mcp_path=mcp, llms_path=llms, site_only=site_only)
    registry.verify(check)
    if expected_digest is not None and expected_digest not in (check.catalog_digest, check.site_digest):
        check.result.problems.insert(0, f"{catalog}: its digest is {check.catalog_digest!r}"
                                     + (f" and the site digest {check.site_digest!r}" if check.site_digest else "")
                                     + f", not the expected {expected_digest!r}")
    return check.result


def verify(target: Path, catalog: str = "catalog.json", mcp: str | None = None, llms: str | None = None,
           expected_digest: str | None = None) -> Result:
    """Check the catalog at `target` (a site folder, or a catalog file) and the files beside it.
    Raises VerifyError when there is no version 2 catalog to check."""
    target = Path(target)
    if target.is_file():
        return verify_source(CatalogFile(target), target.name, expected_digest=expected_digest, site_only=True)
    if not target.is_dir():
        raise VerifyError(f"catalog {str(target.joinpath(*catalog.split('/')))!r} does not exist")
    return verify_source(Folder(target), catalog, mcp, llms, expected_digest)


def verify_url(url: str, catalog: str = "catalog.json", mcp: str | None = None, llms: str | None = None,
               expected_digest: str | None = None, limits: sitefetch.Limits | None = None) -> Result:
    """Check a published site at `url` (its base, ending in `/`), fetching only what the checks
    read. Raises VerifyError (no catalog there, or not an http(s) URL)."""
    try:
        site = sitefetch.Site(url, limits or sitefetch.Limits())
    except sitefetch.FetchError as exc:
        raise VerifyError(str(exc)) from None
    return verify_source(site, catalog, mcp, llms, expected_digest)


def is_url(target: str) -> bool:
    return "://" in target

