"""catalog.digests.json (on whenever the catalog is): every file of the site by size and SHA-256
(see `outputs.published`), the catalog included, made last (`complete`) from every other output's
final text and the site's own files (`Plan.others`: pages, assets, search index, sitemap). The
catalog's `written` member names it; its own SHA-256 (the site digest, printed by the build) is
the trust anchor for every byte of the site, as the catalog digest is for the catalog and what is
made from it. The catalog does not hold the manifest's digest: the pages MkDocs writes carry the
build time, and the catalog stays byte-identical across builds of one commit and across
generators.

Verified by reading the manifest the catalog names, then every file it lists to its size and
digest; in a folder, every file it does not list (but itself) is a mismatch too."""

from __future__ import annotations

import hashlib
import posixpath
from typing import Any, Collection, Mapping

from ...model import Tool
from .. import catalog_json
from ..published import MANIFEST_VERSION, WRITTEN_FIELD, FileDigest, manifest_path, of_bytes, safe_site_path
from .base import Check, Draft, Drafting, Output, Plan, SourceError
from .reading import loads

MAX_FILE_BYTES = catalog_json.MAX_CATALOG_BYTES
SIGNATURE = ".sigstore.json"  # a signature bundle of the manifest or the catalog, added after the build (docs/catalog-json.md)
SITE = "site"  # every file of the site (the MkDocs plugin)
OUTPUTS = "outputs"  # the outputs for agents only: another generator makes the pages (`toolcatalog export`, `markdown`)


class Writer:
    def __init__(self, plan: Plan, catalog: str) -> None:
        self.plan, self.catalog, self.path = plan, catalog, manifest_path(catalog)

    def entry(self, tool: Tool, entry: dict[str, Any], text: str) -> None:
        return None

    def drafts(self, drafting: Drafting) -> list[Draft]:
        return [Draft(self.path, "the digest manifest", None, last=True)]  # its text: `complete`


def complete(written: Mapping[str, FileDigest], plan: Plan) -> str | None:
    """The manifest's text, once every other output is written (`written`: site path -> the
    digest of its exact bytes, the catalog too): every file of the site (`Plan.others`) and every
    output. None when there is no manifest (no catalog), or the site's own file replaces it."""
    if plan.paths.catalog is None:
        return None
    listed = dict(plan.others or {})
    listed.update(written)
    return listing(plan.paths.catalog, plan.overridden, listed, SITE if plan.others is not None else OUTPUTS)


def listing(catalog: str, overridden: Collection[str], files: Mapping[str, FileDigest], covers: str = SITE) -> str | None:
    """The manifest's text listing `files` (site path -> digest; the manifest's own path is left
    out) beside the catalog at `catalog`; None when the site's own file replaces it."""
    path = manifest_path(catalog)
    if path in overridden:
        return None
    listed = {rel: digest for rel, digest in files.items() if rel != path}
    document = {"version": MANIFEST_VERSION, "catalog": catalog, "covers": covers,
                "files": {rel: listed[rel].as_dict() for rel in sorted(listed)}}
    return catalog_json.dumps(document)


def writer(plan: Plan) -> Writer | None:
    return Writer(plan, plan.paths.catalog) if plan.paths.catalog is not None else None


# -- verifying ------------------------------------------------------------------------------------
def _reference(check: Check) -> tuple[str, dict[str, Any]] | None:
    """The manifest's site path and the catalog's `written`, or None (a problem is added)."""
    written = check.document.get(WRITTEN_FIELD)
    name = check.catalog_path
    if not isinstance(written, dict):
        check.result.problems.append(f"{name}: names no digest manifest (`{WRITTEN_FIELD}`): the site's other files cannot be checked")
        return None
    manifest = written.get("manifest")
    path = posixpath.join(posixpath.dirname(name), manifest) if isinstance(manifest, str) else None
    if path is None or "/" in str(manifest) or not safe_site_path(path) or path == name:
        check.result.problems.append(f"{name}: `{WRITTEN_FIELD}.manifest` {manifest!r} is not a file beside the catalog")
        return None
    return path, written


def _entries(check: Check, path: str, document: Any) -> dict[str, FileDigest] | None:
    files = document.get("files") if isinstance(document, dict) else None
    if not isinstance(files, dict) or document.get("version") != MANIFEST_VERSION or document.get("covers") not in (SITE, OUTPUTS):
        check.result.problems.append(f"{path}: not a version {MANIFEST_VERSION} digest manifest")
        return None
    out: dict[str, FileDigest] = {}
    for rel, item in files.items():
        ok = isinstance(item, dict) and isinstance(item.get("sha256"), str) and len(item["sha256"]) == 64
        ok = ok and isinstance(item.get("size"), int) and not isinstance(item.get("size"), bool) and 0 <= item["size"] <= MAX_FILE_BYTES
        if not ok or not safe_site_path(rel) or rel == path:
            check.result.problems.append(f"{path}: entry {rel!r} is not a file of the site with a size and a SHA-256; not fetched")
            continue
        out[rel] = FileDigest(item["size"], item["sha256"])
    return out


def _file(check: Check, rel: str, stated: FileDigest, remote: bool) -> bool:
    try:  # read first: a site over HTTP fetches each file once, capped at the size listed
        data = check.source.read(rel, stated.size if remote else MAX_FILE_BYTES)
    except SourceError as exc:
        missing = not check.source.exists(rel)
        check.result.problems.append(f"{rel}: listed in the digest manifest, but missing" if missing else f"{rel}: {exc}")
        return False
    actual = of_bytes(data)
    if actual != stated:
        check.result.problems.append(f"{rel}: its bytes are not the ones the digest manifest lists "
                                     f"({actual.size} bytes, SHA-256 {actual.sha256[:16]}…)")
        return False
    return True


def _load(check: Check, path: str) -> Any:
    try:
        data = check.source.read(path, MAX_FILE_BYTES) if check.source.exists(path) else None
    except SourceError as exc:
        check.result.problems.append(f"{path}: {exc}")
        return None
    if data is None:
        check.result.problems.append(f"{path}: the digest manifest {check.catalog_path} names is missing")
        return None
    check.site_digest = "sha256:" + hashlib.sha256(data).hexdigest()
    return data.decode("utf-8", "replace")


def verify(check: Check) -> None:
    if check.site_only:
        return
    found = _reference(check)
    if found is None:
        return
    path, _written = found
    check.manifest_paths.append(path)
    text = _load(check, path)
    if text is None:
        return
    document = loads(text)
    files = _entries(check, path, document)
    if files is None:
        return
    before = len(check.result.problems)
    listing = check.source.listing()
    agreed = sum(_file(check, rel, digest, listing is None) for rel, digest in sorted(files.items()))
    whole = document.get("covers") == SITE
    unlisted = set(listing or ()) - set(files) - {path, path + SIGNATURE, check.catalog_path + SIGNATURE}
    for rel in sorted(unlisted) if whole else ():
        check.result.problems.append(f"{rel}: not in the digest manifest (added after the build)")
    if check.catalog_path not in files:
        check.result.problems.append(f"{path}: does not list the catalog {check.catalog_path}")
    check.manifest = files
    if len(check.result.problems) == before:
        tail = ("; no other file in the folder" if listing is not None else "") if whole else \
            " (the outputs for agents; the pages are another generator's and not covered)"
        check.result.checked.append(f"{path}: {agreed} file{'s' if agreed != 1 else ''}, every byte{tail} (site digest {check.site_digest})")


OUTPUT = Output("(the digest manifest)", writer, verify, anchor=True)
