"""Writing generated files into a docs folder that the repository controls.

`toolcatalog markdown` writes into a folder of the checkout, so everything in it may be hostile:
a folder link (`docs/tools -> /home/user`) and the record of what an earlier run wrote
(`.toolcatalog-generated.json`, a file a commit can carry). So:

- Nothing is ever followed: every path is walked one component at a time from the folder's
  descriptor with `O_NOFOLLOW` (a link, wherever it is, is refused), files are written to a
  temporary name and renamed in the same folder, and only regular files are read or removed.
- The record is a claim, never proof. It maps each path written to the SHA-256 of the bytes
  written. A new run writes over a file only while it still has that digest, and over a page
  only when it also carries the page mark (`replaceable`); it deletes a file that is no longer
  generated only when it has that digest and carries its kind's mark, which only pages and
  tool files have (`removable`, `marked`). A planted record that lists the site's own pages
  names files without the mark, so they are kept; a generated file someone edited is kept too.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import re
import secrets
import stat
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["Folder", "FolderError", "RECORD", "marked"]

RECORD = ".toolcatalog-generated.json"  # in the docs folder; generators skip dot files
GENERATOR = "mkdocs-toolcatalog"
PAGE_MARK = '\n---\n\n<div class="toolcatalog-page">\n'  # after a generated page's front matter
HEADING_MARK = b'\n\n<div class="toolcatalog-page">\n'  # right after an MkDocs 2 page's one-line heading
TOOL_JSON_MARK = "#/$defs/tool"  # the end of a generated tool file's `$schema`, its first key
_TOOL_FILE = re.compile(rb'\{\s*"\$schema": "[^"\\]*catalog[^"\\]*' + re.escape(TOOL_JSON_MARK.encode()) + rb'"')
MAX_READ = 64 * 1024 * 1024  # a generated file is never larger; a larger one is not ours

_DIR_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
_READ_FLAGS = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)


class FolderError(Exception):
    """A path that cannot be written without following a link or replacing a folder."""


def marked(path: str, data: bytes) -> bool:
    """Whether `data`, the content of docs path `path`, carries the mark every file of its kind
    that the export writes has: a page's raw block right after its front matter (or, for MkDocs 2,
    right after its title heading), a tool file's
    `$schema`. Other kinds (the catalog, llms.txt, the assets) carry none: they are replaced
    only at the paths this run writes, and never removed."""
    if path.endswith(".md"):
        if data.startswith(b"# "):  # a page written for MkDocs 2: its title heading, then the block
            end = data.find(b"\n", 0, 4096)
            return end > 0 and data.startswith(HEADING_MARK, end)
        return data.startswith(b"---\ntitle: ") and PAGE_MARK.encode() in data[:4096]
    if path.endswith(".json"):  # read as text, never parsed: a planted file may nest without end
        return _TOOL_FILE.match(data) is not None
    return False


def _digest(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


@dataclass
class Folder:
    """A docs folder opened for writing: `root` is used as given (the caller decides whether a
    link there is acceptable); below it no link is ever followed."""

    root: Path
    record: dict[str, str] = field(default_factory=dict)  # path -> digest, as the last run claims

    @classmethod
    def open(cls, root: Path) -> "Folder":
        folder = cls(root)
        data = folder.read(RECORD)
        try:
            value = json.loads(data) if data is not None else None
        except ValueError:
            value = None
        files = value.get("files") if isinstance(value, dict) else None
        if isinstance(files, dict):  # a list (older records) names no digests: nothing is claimed
            folder.record = {p: d for p, d in files.items() if isinstance(p, str) and isinstance(d, str) and _clean(p)}
        return folder

    def read(self, path: str) -> bytes | None:
        """A regular file's bytes, reached without following a link; None otherwise."""
        parts = _parts(path)
        if parts is None:
            return None
        fd = self._walk(parts[:-1], create=False)
        if fd is None:
            return None
        try:
            file_fd = os.open(parts[-1], _READ_FLAGS, dir_fd=fd)
        except OSError:
            return None
        finally:
            os.close(fd)
        try:
            info = os.fstat(file_fd)
            if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_READ:
                return None
            chunks = []
            while block := os.read(file_fd, 1 << 20):
                chunks.append(block)
            return b"".join(chunks)
        except OSError:
            return None
        finally:
            os.close(file_fd)

    def obstacle(self, path: str) -> str | None:
        """What stands at `path`, or None when it is free: "link" when a link is there or stands
        in for one of its folders (or a file does), "file" when something else is there."""
        parts = _parts(path)
        if parts is None:
            return "link"
        fd = self._walk(parts[:-1], create=False, missing_ok=True)
        if fd is None:
            return "link"
        if fd == -1:
            return None
        try:
            info = os.stat(parts[-1], dir_fd=fd, follow_symlinks=False)
        except FileNotFoundError:
            return None
        except OSError:
            return "file"
        finally:
            os.close(fd)
        return "link" if stat.S_ISLNK(info.st_mode) else "file"

    def _claimed(self, path: str) -> bytes | None:
        """The file's bytes when the record names their digest (it is as this tool wrote it), else None."""
        claimed = self.record.get(path)
        data = self.read(path) if claimed is not None else None
        return data if data is not None and _digest(data) == claimed else None

    def replaceable(self, path: str) -> bool:
        """Whether a new run may write over the file at `path`: the record names its current
        digest, and a page also carries the page mark (a page of the site's own at a generated
        page's path is the site's, whatever the record says)."""
        data = self._claimed(path)
        return data is not None and (not path.endswith(".md") or marked(path, data))

    def removable(self, path: str) -> bool:
        """Whether the file at `path` may be deleted once no longer generated: the record names
        its current digest and it carries its kind's mark (only pages and tool files have one)."""
        data = self._claimed(path)
        return data is not None and marked(path, data)

    def write(self, path: str, text: str) -> str:
        """Write `text` at `path` (creating folders, never through a link), atomically. Returns its digest."""
        parts = _parts(path)
        if parts is None:
            raise FolderError(f"{path!r} is not a path inside the docs folder")
        data = text.encode("utf-8")
        fd = self._walk(parts[:-1], create=True)
        if fd is None:
            raise FolderError(f"{path!r}: a folder on the way is a link or a file; nothing is written through it")
        try:
            try:
                if stat.S_ISDIR(os.stat(parts[-1], dir_fd=fd, follow_symlinks=False).st_mode):
                    raise FolderError(f"{path!r} is a folder")
            except FileNotFoundError:
                pass
            tmp = f".{parts[-1]}.{secrets.token_hex(6)}.tmp"
            file_fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0),
                              0o644, dir_fd=fd)
            try:
                with os.fdopen(file_fd, "wb") as handle:
                    handle.write(data)
                os.replace(tmp, parts[-1], src_dir_fd=fd, dst_dir_fd=fd)  # a link there is replaced, not followed
            except BaseException:
                try:
                    os.unlink(tmp, dir_fd=fd)
                except OSError:
                    pass
                raise
        finally:
            os.close(fd)
        return _digest(data)

    def remove(self, path: str) -> bool:
        """Delete the file at `path` if it is `removable`, and the folders it leaves empty."""
        if not self.removable(path):
            return False
        parts = _parts(path)
        assert parts is not None
        fds = self._chain(parts[:-1])
        if fds is None:
            return False
        try:
            os.unlink(parts[-1], dir_fd=fds[-1])
            for depth in range(len(parts) - 1, 0, -1):  # the emptied folders, innermost first
                try:
                    os.rmdir(parts[depth - 1], dir_fd=fds[depth - 1])
                except OSError:
                    break
        except OSError:
            return False
        finally:
            for fd in fds:
                os.close(fd)
        return True

    def save_record(self, written: dict[str, str]) -> None:
        self.write(RECORD, json.dumps({"generator": GENERATOR, "files": dict(sorted(written.items()))}, indent=1) + "\n")

    # -- walking without links -------------------------------------------------------------------

    def _chain(self, folders: list[str]) -> list[int] | None:
        """Descriptors of the root and each folder in `folders`; None if one is missing or a link."""
        try:
            fds = [os.open(self.root, _DIR_FLAGS & ~getattr(os, "O_NOFOLLOW", 0))]
        except OSError:
            return None
        for name in folders:
            try:
                fds.append(os.open(name, _DIR_FLAGS, dir_fd=fds[-1]))
            except OSError:
                for fd in fds:
                    os.close(fd)
                return None
        return fds

    def _walk(self, folders: list[str], create: bool, missing_ok: bool = False) -> int | None:
        """A descriptor of the folder `folders` below the root (made when `create`), reached
        without following a link; None when a component is a link or not a folder, -1 when one is
        missing and `missing_ok`."""
        try:
            if create:
                self.root.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.root, _DIR_FLAGS & ~getattr(os, "O_NOFOLLOW", 0))
        except OSError:
            return -1 if missing_ok else None
        for name in folders:
            if create:
                try:
                    os.mkdir(name, 0o755, dir_fd=fd)
                except FileExistsError:
                    pass
                except OSError:
                    os.close(fd)
                    return None
            try:
                child = os.open(name, _DIR_FLAGS, dir_fd=fd)
            except OSError as exc:
                os.close(fd)
                return -1 if missing_ok and exc.errno == errno.ENOENT else None
            os.close(fd)
            fd = child
        return fd


def _clean(path: str) -> bool:
    return _parts(path) is not None


def _parts(path: str) -> list[str] | None:
    """The components of a relative docs path; None for anything that could leave the folder."""
    parts = path.split("/")
    if not path or path.startswith("/") or "\\" in path or "\0" in path or any(p in ("", ".", "..") for p in parts):
        return None
    return parts
