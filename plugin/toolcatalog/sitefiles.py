"""The files a host already wrote into the site (pages, assets, search index, sitemap), by size
and SHA-256, for the digest manifest (`outputs.published`): every regular file under the folder,
read once, no link followed (a link is listed by what it is, never read through)."""

from __future__ import annotations

import hashlib
import re
import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Collection, Mapping

from .outputs.published import FileDigest, manifest_path, of_bytes

_DIGEST = re.compile(r'^  "catalog_digest": "(sha256:[0-9a-f]{64})",$', re.MULTILINE)
_FLAGS = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)


def _digest(path: str) -> FileDigest | None:
    try:
        fd = os.open(path, _FLAGS)
    except OSError:
        return None  # a link, or gone
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        hasher, size = hashlib.sha256(), 0
        while block := os.read(fd, 1 << 20):
            hasher.update(block)
            size += len(block)
        return FileDigest(size, hasher.hexdigest())
    finally:
        os.close(fd)


def site_files(folder: Path) -> tuple[dict[str, FileDigest], list[str]]:
    """`{site path: digest}` of every regular file under `folder`, and the site paths of what is
    not one (links, pipes), which the manifest cannot vouch for."""
    files: dict[str, FileDigest] = {}
    skipped: list[str] = []
    for top, folders, names in os.walk(folder):
        rel = Path(top).relative_to(folder).as_posix()
        for name in sorted(names + [f for f in folders if os.path.islink(os.path.join(top, f))]):
            site_path = name if rel == "." else f"{rel}/{name}"
            found = _digest(os.path.join(top, name))
            if found is None:
                skipped.append(site_path)
            else:
                files[site_path] = found
    return files, skipped



@dataclass
class Published:
    files: dict[str, str]  # site path -> text, to write
    overridden: list[str]  # outputs a file of docs_dir replaces (not written; the manifest lists the docs' file)
    skipped: list[str]  # what in site_dir is not a regular file (not listed)
    catalog_digest: str | None  # the trust anchors, for the log
    site_digest: str | None


def outputs_for_site(render: Callable[[Mapping[str, FileDigest], Collection[str]], dict[str, str]],
                     site_dir: Path, docs_dir: Path, catalog_path: str | None) -> Published:
    """The outputs for agents of a site MkDocs has written (`render(others, overridden)`, e.g.
    `pipeline.Build.outputs`), whose digest manifest lists every file already in `site_dir`."""
    others, skipped = site_files(site_dir)
    files = render(others, ())
    overridden = [path for path in files if docs_dir.joinpath(*path.split("/")).is_file()]
    if overridden:
        files = render(others, overridden)
    found = _DIGEST.search(files[catalog_path][:4096]) if catalog_path in files else None  # sorted keys: near the top
    manifest = manifest_path(catalog_path) if catalog_path else None
    site_digest = "sha256:" + hashlib.sha256(files[manifest].encode("utf-8")).hexdigest() if manifest in files else None
    return Published(files, overridden, skipped, found.group(1) if found else None, site_digest)

__all__ = ["FileDigest", "Published", "of_bytes", "outputs_for_site", "site_files"]
