"""Where one build keeps its runs' throwaway folders, and how a later build finds the ones a build
that died left behind.

Each build process makes one folder, `toolcatalog-runs-<uid>-<random>`, in the base folder
(/dev/shm or the temp folder), and every run's folder goes inside it. A `lock` file in it, which
names the build's pid, stays locked (flock, exclusive) for as long as the build process lives. The
kernel drops that lock when the process ends however it ends, SIGKILL and the OOM killer included.
So when a later build can take the lock of such a folder, the build that made it is gone, and the
later build removes the folder. It touches a folder only when everything holds: the name, a real
folder (not a link), owned by this user, not writable by anyone else, and a `lock` file in it that is
a regular file (not a link), owned by this user. A folder still being set up cannot be taken for an
abandoned one: it is made and locked under a `toolcatalog-starting-` name first and renamed once
locked. Anything else (another user's folder, a link, a folder this version did not make) is left
alone.
"""

from __future__ import annotations

import os
import secrets
import stat
import tempfile
import threading

from . import layout, nofollow

try:
    import fcntl
except ImportError:  # Windows: no sandbox, so no run folders
    fcntl = None  # type: ignore[assignment]

__all__ = ["folder", "release", "sweep"]

_PREFIX = "toolcatalog-runs-"
_STARTING = "toolcatalog-starting-"
_LOCK = "lock"

_state_lock = threading.Lock()
_root: str | None = None
_lock_fd: int | None = None
_owner = 0  # the process that made `_root`: a forked child must not remove its parent's folder


def _base() -> str:
    return layout.base_folder() or tempfile.gettempdir()


def _prefix() -> str:
    return f"{_PREFIX}{os.geteuid()}-"


def folder() -> str:
    """This build's folder for run folders, made (and earlier builds' abandoned ones removed) on
    first use."""
    global _root, _lock_fd, _owner
    with _state_lock:
        if _root is not None and _owner == os.getpid():
            return _root
        base = _base()
        sweep(base)
        token = secrets.token_hex(8)
        staging = os.path.join(base, f"{_STARTING}{os.geteuid()}-{token}")
        os.mkdir(staging, 0o700)
        fd = os.open(os.path.join(staging, _LOCK), os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        os.write(fd, f"{os.getpid()}\n".encode())
        root = os.path.join(base, _prefix() + token)
        os.rename(staging, root)
        _root, _lock_fd, _owner = root, fd, os.getpid()
        return root


def release() -> str | None:
    """Remove this build's folder (its runs' folders must be gone or going) and drop the lock.
    None, or why something is left."""
    global _root, _lock_fd
    with _state_lock:
        root, fd, owner = _root, _lock_fd, _owner
        _root = _lock_fd = None
    if root is None or fd is None or owner != os.getpid():
        return None
    try:
        return nofollow.remove(root)
    finally:
        os.close(fd)


def sweep(base: str) -> int:
    """Remove every abandoned run folder of this user's earlier builds in `base`; how many."""
    removed = 0
    try:
        names = sorted(os.listdir(base))
    except OSError:
        return 0
    for name in names:
        if name.startswith(_prefix()) and _take_if_abandoned(base, name):
            removed += 1
    return removed


def _take_if_abandoned(base: str, name: str) -> bool:
    path = os.path.join(base, name)
    try:
        info = os.lstat(path)
    except OSError:
        return False
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.geteuid() or info.st_mode & 0o077:
        return False
    try:
        folder_fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        if (os.fstat(folder_fd).st_dev, os.fstat(folder_fd).st_ino) != (info.st_dev, info.st_ino):
            return False
        try:
            fd = os.open(_LOCK, os.O_RDWR | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK, dir_fd=folder_fd)
        except OSError:
            return False
    finally:
        os.close(folder_fd)
    try:
        lock = os.fstat(fd)
        if not stat.S_ISREG(lock.st_mode) or lock.st_uid != os.geteuid():
            return False
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return False  # its build is still running
        return nofollow.remove(path) is None
    finally:
        os.close(fd)
