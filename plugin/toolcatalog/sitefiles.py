"""The files a host already wrote into the site (pages, assets, search index, sitemap), by size
and SHA-256, for the digest manifest (`outputs.published`): every regular file under the folder,
read once, no link followed (a link is listed by what it is, never read through)."""

from __future__ import annotations

import atexit
import hashlib
import os
import shutil
import stat
import tempfile
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Callable, Collection, Container, Iterator, Mapping

from .files import write_pieces_atomic
from .outputs import ExportError, Finished, Pending, Written, finish_site
from .outputs.published import FileDigest, of_bytes

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
    files: list[str]  # the site paths written
    overridden: list[str]  # outputs a file of docs_dir replaces (not written; the manifest lists the docs' file)
    skipped: list[str]  # what in site_dir is not a regular file (not listed)
    catalog_digest: str | None  # the trust anchors, for the log
    site_digest: str | None


class InDocs:
    """The outputs a file of docs_dir replaces, asked path by path (`outputs.write_site`'s
    `overridden`), each one found noted in the order asked. Only a docs file MkDocs published
    replaces an output: one it left out (`exclude_docs`, its default `.*` and `/templates/`, a
    draft) is not in `site_files`, and the output is written as if it were not there."""

    def __init__(self, docs_dir: Path, published: Container[str]) -> None:
        self.docs_dir = docs_dir
        self.published = published  # the site's own files (`site_files`)
        self.found: dict[str, bool] = {}  # site path -> a file of docs_dir is there, and in the site

    def __contains__(self, path: object) -> bool:
        if not isinstance(path, str):
            return False
        if path not in self.found:
            self.found[path] = path in self.published and self.docs_dir.joinpath(*path.split("/")).is_file()
        return self.found[path]

    def __iter__(self) -> Iterator[str]:
        return iter([path for path, there in self.found.items() if there])

    def __len__(self) -> int:
        return sum(self.found.values())


def outputs_for_site(write: Callable[[Mapping[str, FileDigest], Collection[str]], Written],
                     site_dir: Path, docs_dir: Path) -> Published:
    """Write the outputs for agents of a site MkDocs has written (`write(others, overridden)`,
    e.g. `pipeline.Build.write_outputs` into `site_dir`), whose digest manifest lists every file
    already in `site_dir`. Each output is written as soon as it is final, none held whole."""
    others, skipped = site_files(site_dir)
    in_docs = InDocs(docs_dir, others.keys())
    done = write(others, in_docs)
    return Published(done.paths, list(in_docs), skipped, done.catalog_digest, done.site_digest)


@dataclass
class Early:
    """What `outputs_first` wrote (paths and digests only) and the docs' files it found."""

    pending: Pending
    in_docs: InDocs


class InSite:
    """The site paths of regular files now in `site_dir` (what MkDocs published), asked path by
    path: `outputs_first` runs before the site is read whole (`outputs_last` does that)."""

    def __init__(self, site_dir: Path) -> None:
        self.site_dir = site_dir

    def __contains__(self, path: object) -> bool:
        if not isinstance(path, str):
            return False
        try:
            return stat.S_ISREG(os.lstat(self.site_dir.joinpath(*path.split("/"))).st_mode)
        except OSError:
            return False


def outputs_first(write: Callable[[Collection[str]], Pending], site_dir: Path, docs_dir: Path) -> Early:
    """Every output for agents but the digest manifest (`write(overridden)`, e.g.
    `pipeline.Build.write_outputs_first` into `site_dir`); `outputs_last` adds it. A docs file
    replaces an output only when MkDocs published it into `site_dir` (`InDocs`)."""
    in_docs = InDocs(docs_dir, InSite(site_dir))
    return Early(write(in_docs), in_docs)


STAGE_PREFIX = "toolcatalog-stage-"
STAGE_MARK = ".toolcatalog-stage"  # in each stage: the id of the process whose stage it is


def _stale(folder: str) -> bool:
    """Whether `folder` is a stage (a real folder, not a link, with our mark) of a process that is
    gone, or of this one (each build of a process closes its stage before it makes the next)."""
    try:
        if not stat.S_ISDIR(os.lstat(folder).st_mode):
            return False
        fd = os.open(os.path.join(folder, STAGE_MARK), _FLAGS)  # never through a link, never waits (a pipe)
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                return False
            pid = int(os.read(fd, 32).strip() or b"0")
        finally:
            os.close(fd)
    except (OSError, ValueError):
        return False
    if pid <= 0 or pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except OSError:
        return False
    return False


def sweep_stale_stages(site_dir: Path) -> None:
    """Remove the stages a killed build left in `site_dir` (MkDocs' clean removes them, but
    `mkdocs build --dirty` does not clean: they would be published and listed in the digest
    manifest). Never a link, nor a live build's stage."""
    for name in sorted(os.listdir(site_dir)):
        folder = os.path.join(site_dir, name)
        if name.startswith(STAGE_PREFIX) and _stale(folder):
            shutil.rmtree(folder, ignore_errors=True)


_OPEN_STAGES: set[str] = set()  # the stages of this process not closed yet (`_remove_open_stages`)


@atexit.register
def _remove_open_stages() -> None:
    """The stages a build interrupted in this process left (a KeyboardInterrupt is no `Exception`:
    MkDocs calls no `on_build_error` for it), removed when the interpreter exits, not left for
    the next build's sweep."""
    for folder in sorted(_OPEN_STAGES):
        shutil.rmtree(folder, ignore_errors=True)
    _OPEN_STAGES.clear()


class Stage:
    """A private folder (mode 0700, a fresh name made in `site_dir`: on the site's disk, never in a
    RAM-backed /tmp, and removed by MkDocs' next clean if a build is killed) where the MkDocs
    plugin keeps what it made before MkDocs wants it, so that the catalog can be let go before
    MkDocs builds the first page: each generated page's HTML (`put_page`, read back once by
    `take_page`) and the outputs for agents (`outputs`, moved into the site by `publish`). Nothing
    of it is read from the repository; `close` removes it (in the plugin's `on_post_build`,
    priority 100: before the digest manifest and every plugin of a lower priority; one of a higher
    priority, or one that walks site_dir while the pages are built, sees it). The stage a killed
    build left is removed by the next one (`sweep_stale_stages`)."""

    def __init__(self, site_dir: Path) -> None:
        """Raises ExportError (the folder cannot be made: a full disk, a site_dir that is a file)."""
        try:
            site_dir.mkdir(parents=True, exist_ok=True)
            sweep_stale_stages(site_dir)
            self.folder = Path(tempfile.mkdtemp(prefix=STAGE_PREFIX, dir=site_dir))
            _OPEN_STAGES.add(str(self.folder))
            self.folder.joinpath(STAGE_MARK).write_text(f"{os.getpid()}\n", encoding="ascii")
        except OSError as exc:
            raise ExportError(f"no staging folder can be made in {site_dir}: {exc.strerror or exc}") from None
        self.outputs = self.folder / "outputs"
        self.pages: dict[str, int] = {}  # page src_uri -> the number of its HTML's file (`_page_file`): no Path per page kept
        self.made = 0  # pages put

    def _page_file(self, number: int) -> Path:
        return self.folder / f"page-{number}.html"

    def put_page(self, src_uri: str, html: str) -> None:
        """Raises ExportError (a full disk)."""
        path = self._page_file(self.made)
        try:
            path.write_text(html, encoding="utf-8")
        except OSError as exc:
            raise ExportError(f"the page of {src_uri} cannot be staged in {self.folder}: {exc.strerror or exc}") from None
        self.pages[src_uri] = self.made
        self.made += 1

    def take_page(self, src_uri: str) -> str | None:
        """The page's HTML, once (None: not staged). Raises ExportError when the staged file is
        gone (another build of the same site_dir cleaned it away meanwhile)."""
        number = self.pages.pop(src_uri, None)
        if number is None:
            return None
        path = self._page_file(number)
        try:
            return path.read_text(encoding="utf-8")
        except OSError as exc:
            raise ExportError(f"the staged HTML of {src_uri} cannot be read back ({exc.strerror or exc}): "
                              "did another build of the same site_dir clean it away?") from None
        finally:
            path.unlink(missing_ok=True)

    def close(self) -> None:
        shutil.rmtree(self.folder, ignore_errors=True)
        _OPEN_STAGES.discard(str(self.folder))  # a copy of the stage (the plugin's `_move`) closes it too
        self.pages = {}


def _chunks(path: Path) -> Iterator[str]:
    with open(path, encoding="utf-8", newline="") as handle:
        while piece := handle.read(1 << 16):
            yield piece


def publish(pending: Pending, staged: Path, site_dir: Path, docs_dir: Path) -> Early:
    """The outputs `write_site_first` wrote under `staged` (with nothing overridden), each moved
    into `site_dir` as `outputs_first` would have written it there now: one a docs file MkDocs
    published replaces (`InDocs`) is left out, the others are written through the same link-safe
    writer, byte for byte what was staged. Raises ExportError."""
    in_docs = InDocs(docs_dir, InSite(site_dir))
    written: dict[str, FileDigest] = {}
    for path in pending.written:
        if path in in_docs:
            continue
        try:
            size, sha256 = write_pieces_atomic(site_dir.joinpath(*path.split("/")), _chunks(staged.joinpath(*path.split("/"))),
                                               inside=site_dir)
        except OSError as exc:
            raise ExportError(f"{path} cannot be written into the site: {exc.strerror or exc}") from None
        written[path] = FileDigest(size, sha256)
    catalog_digest = pending.catalog_digest if pending.catalog is not None and pending.catalog in written else None
    return Early(replace(pending, written=written, catalog_digest=catalog_digest, overridden=in_docs), in_docs)


def outputs_last(early: Early, site_dir: Path) -> tuple[Published, Finished]:
    """The digest manifest of every file in `site_dir` as it is now, ours re-read too (one another
    plugin rewrote after ours is listed as it is: `Finished.changed`)."""
    files, skipped = site_files(site_dir)
    finished = finish_site(early.pending, site_dir, files)
    done = finished.written
    return Published(done.paths, list(early.in_docs), skipped, done.catalog_digest, done.site_digest), finished


__all__ = ["Early", "FileDigest", "InDocs", "InSite", "Published", "Stage", "of_bytes", "outputs_first", "outputs_for_site", "outputs_last",
           "publish", "site_files"]
