"""Files on disk: capped reads, atomic writes, content digests and tree hashes that never block.

Everything here opens files without blocking and checks they are regular files
once open, so a FIFO, device or link to `/dev/zero` named like a manifest,
planted in a tool folder or in the cache never hangs or exhausts the build.
Every file the build reads from a repository or the cache goes through
`read_capped`.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import stat
import tempfile
import time
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterable

class ReadError(Exception):
    """A file that `read_capped` refuses; `code` says why (`too-large`, `not-a-file`, `outside`, `unreadable`)."""

    def __init__(self, message: str, code: str):
        super().__init__(message)
        self.message = message
        self.code = code


@lru_cache(maxsize=256)
def _real_folder(root: str) -> str:
    """The real path of a folder checked against again and again (the cache folder, a workspace):
    resolved once per process, since every entry read checks it."""
    return os.path.realpath(root)


_READ_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)


def is_inside(path: Path | str, root: Path | str) -> bool:
    """Whether `path`, with every symbolic link resolved, is `root` or below it."""
    real, base = os.path.realpath(path), _real_folder(os.fspath(root))
    return real == base or real.startswith(base.rstrip(os.sep) + os.sep)


def read_capped(path: Path, max_bytes: int, inside: Path | None = None) -> bytes:
    """A regular file's bytes, at most `max_bytes` of them. Raises ReadError.

    The file is opened without blocking and checked to be a regular file once open (a FIFO or
    device is refused, never read); a larger file is refused without being read; with `inside`,
    a path that resolves (through symbolic links) outside that folder is refused, so a link in a
    repository cannot make the build read, or report, a file elsewhere on the machine.
    """
    if inside is not None and not is_inside(path, inside):
        raise ReadError("it is a link to a file outside the folder it belongs to; not read", "outside")
    try:
        fd = os.open(path, _READ_FLAGS)
    except OSError as exc:
        raise ReadError(f"cannot read the file: {exc.strerror or exc}", "unreadable") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise ReadError("not a regular file (a pipe, device, socket or folder)", "not-a-file")
        if info.st_size > max_bytes:
            raise ReadError(f"file is {info.st_size:,} bytes; at most {max_bytes:,} are read", "too-large")
        chunks, left = [], max_bytes + 1
        while left > 0:
            block = os.read(fd, min(1 << 20, left))
            if not block:
                break
            chunks.append(block)
            left -= len(block)
    except OSError as exc:
        raise ReadError(f"cannot read the file: {exc.strerror or exc}", "unreadable") from None
    finally:
        os.close(fd)
    data = b"".join(chunks)
    if len(data) > max_bytes:  # it grew while we read it
        raise ReadError(f"file is larger than {max_bytes:,} bytes", "too-large")
    return data


def file_digest(path: Path) -> str | None:
    """`sha256:` of a file's bytes, or None when it cannot be read or is not a regular file.

    Opened without blocking, so a FIFO or device named like a manifest never hangs the build.
    """
    h = hashlib.sha256()
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        with os.fdopen(fd, "rb", closefd=False) as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                h.update(block)
    except OSError:
        return None
    finally:
        os.close(fd)
    return "sha256:" + h.hexdigest()


def write_atomic(path: Path, text: str, inside: Path | None = None) -> None:
    """Write via a temporary file and rename, so readers never see half a catalog. `inside`: a
    folder the file must be written in, through no link: a cache folder in the checkout may hold
    links a commit planted (`.cache/00 -> /tmp/elsewhere`), and writing through one would write
    outside the build's outputs. OSError when a link is on the way."""
    write_pieces_atomic(path, (text,), inside)


def write_pieces_atomic(path: Path, pieces: Iterable[str], inside: Path | None = None) -> tuple[int, str]:
    """`write_atomic` of `"".join(pieces)`, never joined: a big file is written piece by piece.
    Returns the size and SHA-256 (hex) of the bytes written."""
    if inside is not None:
        _refuse_links_below(Path(inside), path.parent)
    path.parent.mkdir(parents=True, exist_ok=True)
    if inside is not None:
        _refuse_links_below(Path(inside), path.parent)  # nothing swapped in while the folders were made
    hasher, size = hashlib.sha256(), 0
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            for piece in pieces:
                data = piece.encode("utf-8")
                hasher.update(data)
                size += len(data)
                handle.write(data)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    return size, hasher.hexdigest()


def _refuse_links_below(base: Path, folder: Path) -> None:
    """OSError unless `folder` lies inside `base` and no existing part of it below `base` is a link."""
    base_abs, folder_abs = os.path.abspath(base), os.path.abspath(folder)
    if folder_abs != base_abs and not folder_abs.startswith(base_abs.rstrip(os.sep) + os.sep):
        raise OSError(f"{folder} is not inside {base}")
    current = base_abs
    for part in os.path.relpath(folder_abs, base_abs).split(os.sep):
        if part in ("", "."):
            continue
        current = os.path.join(current, part)
        if os.path.islink(current):
            raise OSError(f"{current} is a link: nothing is written through it")


# The only folder a tool folder's hash leaves out: no commit can hold a `.git` (git refuses the
# name), and the sandbox hides the workspace's. Everything else a run can read there is hashed,
# `build/`, `dist/`, `node_modules/`, `venv/`, `__pycache__/` included: code in them changes what a
# tool does as much as code beside its manifest, and a key that skipped them would let a commit
# change the tool while the old result is reused.
_SKIP_DIRS = frozenset({".git"})
_MAX_FILE_BYTES = 64 * 1024 * 1024
# Content is hashed for the first files of a tree up to these budgets; past them a file is keyed
# by its size and modification time (nanoseconds), which a commit cannot set: a checkout writes
# every file it changes, so the key still changes with it. A big `node_modules` costs a walk, not a
# read of every byte on every build.
MAX_HASHED_BYTES = 256 * 1024 * 1024
MAX_HASHED_FILES = 20_000


def hash_tree(root: Path, exclude: Iterable[str] = ()) -> str:
    """A hash of every entry's relative path, kind, mode and content below `root` (`.git` aside).

    Nothing is ever followed or opened that could block or never end: a symbolic link is
    hashed as the text it points to (`ln -s /dev/zero data` costs nothing), and a FIFO,
    socket or device only by its name and kind. Regular files are opened without following
    links and without blocking, and checked to still be regular files once open.
    """
    digest = hashlib.sha256()
    budget = _Budget()
    root = Path(root)
    if root.is_symlink() or not root.is_dir():  # a link is hashed as the text it points to, never walked
        _hash_entry(digest, root, root.name, budget)
        return digest.hexdigest()
    # An explicit stack, not os.walk (which recurses on Python 3.11): a tool folder may hold a
    # folder chain deeper than the recursion limit. Each folder's subfolders are named, then its
    # other entries hashed, in name order; subfolders are visited depth first in name order.
    left_out = {os.path.abspath(p) for p in exclude}  # folders not hashed (absolute paths)
    pending = [root]
    while pending:
        current = pending.pop()
        try:
            entries = sorted(os.scandir(current), key=lambda entry: entry.name)
        except OSError:
            continue
        folders: list[Path] = []
        for entry in entries:
            if entry.is_dir(follow_symlinks=False) and entry.name not in _SKIP_DIRS and os.path.abspath(entry.path) not in left_out:
                full = Path(entry.path)
                digest.update(full.relative_to(root).as_posix().encode("utf-8", "surrogateescape") + b"\0folder\0")
                folders.append(full)
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                continue  # a folder: hashed above (or left out)
            if entry.is_symlink() and entry.name in _SKIP_DIRS and entry.is_dir():
                continue
            full = Path(entry.path)
            _hash_entry(digest, full, full.relative_to(root).as_posix(), budget)
        pending.extend(reversed(folders))
    return digest.hexdigest()


class _Budget:
    """How much content one tree's hash may still read."""

    def __init__(self) -> None:
        self.files = MAX_HASHED_FILES
        self.bytes = MAX_HASHED_BYTES

    def take(self, size: int) -> bool:
        if self.files <= 0 or size > self.bytes or size > _MAX_FILE_BYTES:
            return False
        self.files -= 1
        self.bytes -= size
        return True


def _kind(mode: int) -> str:
    for test, name in ((stat.S_ISFIFO, "fifo"), (stat.S_ISCHR, "char-device"), (stat.S_ISBLK, "block-device"),
                       (stat.S_ISSOCK, "socket"), (stat.S_ISDIR, "folder")):
        if test(mode):
            return name
    return "other"


def _hash_entry(digest: Any, path: Path, name: str, budget: _Budget) -> None:
    try:
        info = os.lstat(path)
    except OSError:
        return
    digest.update(name.encode("utf-8", "surrogateescape") + b"\0")
    if stat.S_ISLNK(info.st_mode):
        try:
            target = os.readlink(path)
        except OSError:
            target = ""
        digest.update(b"symlink\0" + os.fsencode(target) + b"\0")
        return
    if not stat.S_ISREG(info.st_mode):
        digest.update(f"{_kind(info.st_mode)}\0".encode())  # recorded, never opened
        return
    digest.update(b"file\0" + oct(info.st_mode & 0o111).encode() + b"\0")
    if not budget.take(info.st_size):
        digest.update(f"size:{info.st_size}:{info.st_mtime_ns}:{info.st_ino}\0".encode())
        return
    # Within one process (`mkdocs serve` rebuilds), a file whose identity, size, modification and
    # change times are all the same is not read again: any write changes its change time, which
    # nothing in user space can set back. As git does with its index, a file changed in the last
    # seconds is not remembered (timestamps are coarser than writes; a second write could keep them).
    identity = _identity(path, info)
    remembered = _DIGESTS.get(identity)
    if remembered is not None:
        known = remembered.hex().encode()
    else:
        known = _content_digest(path)
        settled = time.time_ns() - max(info.st_ctime_ns, info.st_mtime_ns) > _SETTLED_NS
        if settled and known not in (b"unreadable", b"not-a-file"):
            if len(_DIGESTS) >= _MAX_REMEMBERED:
                _DIGESTS.clear()
            _DIGESTS[identity] = bytes.fromhex(known.decode())
    digest.update(known + b"\0")


# File identity (`_identity`) -> the raw SHA-256 of its content, for this process. Both kept as two
# small bytes objects: the identity's tuple and its path, its integers and the hex text of the digest
# held ≈ 470 bytes a file, 4.7 MB for a catalog of 5,000 tools, to the end of every build.
_DIGESTS: dict[bytes, bytes] = {}


def _identity(path: Path, info: os.stat_result) -> bytes:
    """A file's path, device, inode, size, modification and change times, as a 16-byte digest."""
    fields = (os.fspath(path), info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)
    return hashlib.blake2b(repr(fields).encode("utf-8", "backslashreplace"), digest_size=16).digest()


def take_remembered() -> bytes:
    """The remembered digests as one block of bytes, forgotten here until `restore_remembered` (the
    MkDocs plugin, while it lets the catalog go: made during the harvest, among the catalog's
    objects, they would keep its memory; made again after it, they fill what it freed)."""
    global _DIGESTS
    blob = pickle.dumps(_DIGESTS, protocol=pickle.HIGHEST_PROTOCOL)
    _DIGESTS = {}
    return blob


def restore_remembered(blob: bytes) -> None:
    """The digests `take_remembered` gave, remembered again (our own bytes, made just now)."""
    global _DIGESTS
    _DIGESTS = pickle.loads(blob)


_MAX_REMEMBERED = 200_000
_SETTLED_NS = 3_000_000_000

_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)


def _content_digest(path: Path) -> bytes:
    """The hex SHA-256 of a regular file's first `_MAX_FILE_BYTES` bytes; a marker when unreadable."""
    try:
        fd = os.open(path, _OPEN_FLAGS)
    except OSError:
        return b"unreadable"
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):  # swapped for something else since lstat
            return b"not-a-file"
        content = hashlib.sha256()
        left = _MAX_FILE_BYTES
        while left > 0:
            block = os.read(fd, min(1 << 20, left))
            if not block:
                break
            content.update(block)
            left -= len(block)
        return content.hexdigest().encode()
    except OSError:
        return b"unreadable"
    finally:
        os.close(fd)
