"""What a sandboxed tool sees: the system folders, the programs it needs, its scratch folder.

Nothing is visible unless listed here (a whitelist). Read-only: the system (`/usr`, the merged-usr
links, `/opt`, a subset of `/etc` without credentials or proxy settings), the build's own Python
installation, and the run's part of the workspace (view.py), without `.git`. Writable: the scratch folder
(`TMPDIR` and `HOME`), `/tmp` (a private, empty one: writing there is outside the scratch folder,
so it is reported) and a throwaway copy of the working folder.
"""

from __future__ import annotations

import atexit
import functools
import hashlib
import os
import re
import shutil
import stat
import sys
import tempfile
import threading
from pathlib import Path

from ..observed import SANDBOX_HOME
from . import nofollow

# Inside the sandbox: the scratch folder and the variables that point at it.
SCRATCH = "/scratch"
TMPDIR = "/scratch/tmp"
HOME = SANDBOX_HOME

SYSTEM = ("/usr", "/opt")
USR_MERGE = ("bin", "sbin", "lib", "lib32", "lib64", "libx32")
# /etc entries tools need. Not the whole of /etc: pip.conf, npmrc, gitconfig, wgetrc, environment,
# ssh/ and the like can hold credentials or proxy settings.
ETC_SUBSET = (
    "alternatives", "ca-certificates", "ca-certificates.conf", "ssl", "pki", "crypto-policies",
    "ld.so.cache", "ld.so.conf", "ld.so.conf.d", "localtime", "timezone", "zoneinfo",
    "passwd", "group", "nsswitch.conf", "host.conf", "hosts", "resolv.conf", "gai.conf",
    "services", "protocols", "networks", "mime.types", "magic", "os-release", "lsb-release",
    "debian_version", "locale.alias", "locale.conf", "default", "terminfo", "inputrc",
    "shells", "fonts", "python3", "perl",
)
# Writes to these are how programs talk to the terminal and discard output, not file changes.
QUIET_WRITES = ("/dev/null", "/dev/zero", "/dev/full", "/dev/tty", "/dev/stdin", "/dev/stdout", "/dev/stderr")
# And to a descriptor's own link (the run's pipes: `/dev/fd/1`, `/proc/self/fd/2`) or a terminal,
# exactly: a path below a link, or through `..` after one, names whatever folder the descriptor or
# process is on (`/proc/self/fd/3/x`, `/proc/thread-self/root/dev/x`), so it is a write like any.
QUIET_LINKS = re.compile(r"/dev/fd/\d+|/proc/(?:self|thread-self|\d+)(?:/task/\d+)?/fd/\d+|/dev/pts/(?:\d+|ptmx)")
MAX_COPY_ENTRIES = 5_000  # the working folder is copied (writable) only when it is at most this big
MAX_COPY_BYTES = 64 << 20


SHM = "/dev/shm"
MIN_SHM_BYTES = 2 << 30


@functools.lru_cache(maxsize=1)
def base_folder() -> str | None:
    """Where the sandbox's throwaway folders go: /dev/shm when it is a large memory filesystem
    (creating and removing folders there costs microseconds, on some disk filesystems
    milliseconds), else the system temp folder (None)."""
    try:
        info = os.statvfs(SHM)
        if info.f_bavail * info.f_frsize >= MIN_SHM_BYTES and os.access(SHM, os.W_OK | os.X_OK):
            return SHM
    except OSError:
        pass
    return None


_etc_view: str | None = None
_etc_lock = threading.Lock()


def etc_view() -> str:
    """A folder holding a copy of `ETC_SUBSET`: one bind instead of forty for every run.

    Links stay links, except those that lead out of the visible system (a `resolv.conf` in /run),
    which are copied as files; folders named `private` (`/etc/ssl/private` keys) are left out. The
    copy is named after the user and a digest of what it copies, and kept for later builds
    (about 1 MB; a changed /etc gives a new name), so a build that ends without cleaning up (a
    killed process) leaves nothing new behind. A folder of that name is used only when it is a real
    folder that this user owns and nobody else may write; otherwise the build makes a private copy
    and removes it at exit."""
    global _etc_view
    with _etc_lock:
        if _etc_view is not None and os.path.isdir(_etc_view):
            return _etc_view
        base = base_folder() or tempfile.gettempdir()
        shared = os.path.join(base, f"toolcatalog-etc-{os.geteuid()}-{_etc_digest()}")
        if not _trusted(shared):
            staging = tempfile.mkdtemp(prefix="toolcatalog-etc-", dir=base)
            _copy_etc(staging)
            try:
                os.rename(staging, shared)  # atomic; fails when another build got there first
            except OSError:
                shutil.rmtree(staging, ignore_errors=True)
        if _trusted(shared):
            _etc_view = shared
        else:  # someone else's folder of that name: a private copy instead
            folder = tempfile.mkdtemp(prefix="toolcatalog-etc-", dir=base)
            _copy_etc(folder)
            atexit.register(shutil.rmtree, folder, True)
            _etc_view = folder
        return _etc_view


def _trusted(folder: str) -> bool:
    try:
        info = os.lstat(folder)
    except OSError:
        return False
    return stat.S_ISDIR(info.st_mode) and info.st_uid == os.geteuid() and not info.st_mode & 0o022


def _etc_digest() -> str:
    digest = hashlib.sha256()
    for name in ETC_SUBSET:
        for dirpath, dirnames, filenames in os.walk("/etc/" + name) if os.path.isdir("/etc/" + name) else [("/etc", [], [name])]:
            dirnames.sort()
            for entry in sorted(filenames) + dirnames:
                path = os.path.join(dirpath, entry)
                try:
                    info = os.lstat(path)
                except OSError:
                    continue
                digest.update(f"{path}\0{info.st_mode}\0{info.st_size}\0{info.st_mtime_ns}\n".encode("utf-8", "surrogateescape"))
    return digest.hexdigest()[:16]


def _copy_etc(folder: str) -> None:
    os.chmod(folder, 0o755)
    for name in ETC_SUBSET:
        source, target = "/etc/" + name, os.path.join(folder, name)
        try:
            if os.path.islink(source) and not os.path.realpath(source).startswith(("/usr/", "/etc/", "/opt/")):
                if os.path.isfile(source):
                    shutil.copyfile(source, target)
            elif os.path.isdir(source) and not os.path.islink(source):
                shutil.copytree(source, target, symlinks=True, ignore=shutil.ignore_patterns("private"),
                                ignore_dangling_symlinks=True)
            elif os.path.islink(source):
                os.symlink(os.readlink(source), target)
            elif os.path.isfile(source):
                shutil.copy2(source, target)
        except OSError:
            continue  # unreadable: absent in the sandbox too


def scratch_env(env: dict[str, str], tmpdir: str = TMPDIR, home: str = HOME) -> dict[str, str]:
    """The run's environment with HOME and the temp variables pointing into its scratch folder."""
    out = dict(env)
    out["HOME"] = home
    out["TMPDIR"] = tmpdir
    for name in ("TEMP", "TMP"):
        if name in out:
            out[name] = tmpdir
    return out


def quiet_write(path: str) -> bool:
    return path in QUIET_WRITES or QUIET_LINKS.fullmatch(path) is not None


def _below(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def _safe(folder: str, workspace: str) -> bool:
    """May `folder` be shown read-only? Never `/`, the home folder itself, or a folder holding the
    home folder or the workspace (that would show their neighbours, e.g. ~/.ssh)."""
    homes = {os.path.expanduser("~"), os.path.realpath(os.path.expanduser("~"))}
    if folder in ("/", "") or not os.path.isdir(folder):
        return False
    for kept in (*homes, workspace):
        if kept and (folder == kept or _below(kept, folder)):
            return False
    return True


def interpreter_folders() -> list[str]:
    """The build's own Python installation: `sys.prefix` (a virtualenv), `sys.base_prefix` (the
    Python it was made from) and `sys.exec_prefix`, as given and with links resolved. These come
    from the running interpreter, never from a file in the workspace: a `pyvenv.cfg`, a shim or a
    `.pth` file there says nothing about what a run may see."""
    out: list[str] = []
    for folder in (sys.prefix, sys.base_prefix, sys.exec_prefix, os.path.dirname(sys.executable or "")):
        if folder:
            for path in (os.path.normpath(folder), os.path.realpath(folder)):
                if path not in out:
                    out.append(path)
    return out


def system_folder(path: str) -> bool:
    """Whether `path` lies in the system folders every run sees (`/usr`, `/opt`, the merged-usr links)."""
    return any(_below(path, s) for s in (*SYSTEM, *("/" + name for name in USR_MERGE)))


def program_folders(workspace: str) -> list[str]:
    """Folders outside the system ones that are shown (read-only) so that the run's programs can
    start: the build's own Python installation (speccify runs `.py` files with it), when it lies
    outside the system folders. Nothing else: a program installed elsewhere on the host (a PATH
    entry in the home folder, a version manager's shims) is not shown, and a run that needs it fails
    with the reason (`unseen_program`), rather than the view growing to fit it. The same for every
    run of a build: worked out once per workspace and home folder (`_safe` reads HOME)."""
    return list(_program_folders(workspace, os.environ.get("HOME")))


@functools.lru_cache(maxsize=16)
def _program_folders(workspace: str, _home: str | None) -> tuple[str, ...]:
    out: list[str] = []
    for folder in interpreter_folders():
        if system_folder(folder) or system_folder(os.path.realpath(folder)) or not _safe(folder, workspace):
            continue
        if folder not in out:
            out.append(folder)
    # Outer folders first, and no folder inside another listed one.
    out.sort(key=len)
    return tuple(f for i, f in enumerate(out) if not any(_below(f, g) for g in out[:i]))


def sandbox_path(path_var: str, workspace: str) -> str:
    """The PATH a sandboxed run gets: the build's own Python's folder first (so `python3` is the
    build's Python), then the build's PATH entries that lie in the system folders or the workspace.
    Entries elsewhere on the host (a version manager's shims, `~/.cargo/bin`) are left out: the
    sandbox does not show them, so a program found only there is "not on PATH", said as such,
    instead of the view growing to fit it."""
    own = os.path.dirname(sys.executable) if sys.executable else ""
    out = [own] if own and os.path.isabs(own) else []
    for entry in path_var.split(os.pathsep):
        if not os.path.isabs(entry) or entry in out:
            continue
        if system_folder(entry) and system_folder(os.path.realpath(entry)) or _below(entry, workspace):
            out.append(entry)
    return os.pathsep.join(out)


def unseen_program(argv0: str, path_var: str, visible: list[str]) -> str | None:
    """Why the run's program cannot start in the sandbox (None: it can): it is installed outside
    the system folders and the folders the run sees. Links are followed (a link in the workspace to
    a host program is not that program)."""
    exe = argv0 if os.path.isabs(argv0) else (shutil.which(argv0, path=path_var) or "")
    if not exe:
        return None  # not found at all: the run fails as it would anywhere
    real = os.path.realpath(exe)
    if (system_folder(exe) and system_folder(real)) or any(_below(real, v) for v in visible):
        return None
    return (f"not run: {os.path.basename(argv0)} is installed in {os.path.dirname(real)}, which the sandbox does not show "
            f"(only the system, the build's own Python and the run's part of the workspace are visible)")


def fits_copy(folder: Path) -> bool:
    """Whether `folder` is small enough to copy for every run, and shallow enough to copy whole
    (at most `nofollow.MAX_DEPTH` folder levels, every folder readable)."""
    entries, size = 0, 0
    walk = nofollow.Walk(str(folder), skip=frozenset({".git"}))
    for _rel, info in walk:
        entries += 1
        if stat.S_ISREG(info.st_mode):
            size += info.st_size
        if entries > MAX_COPY_ENTRIES or size > MAX_COPY_BYTES:
            return False
    return not walk.cut


def copy_folder(source: Path, target: Path) -> None:
    """A copy of `source` at `target` (which exists): folders, regular files and links (as links).
    `.git` is left out, and so are FIFOs, sockets and devices (opening a FIFO could block forever).
    The source is read through directory descriptors, never through a link and never recursively
    (`nofollow.Walk`); what is written is a tree this function made itself, one level at a time."""
    walk = nofollow.Walk(str(source), skip=frozenset({".git"}))
    for rel, info in walk:
        dst = os.path.join(target, rel)
        name = os.path.basename(rel)
        try:
            if stat.S_ISLNK(info.st_mode):
                os.symlink(os.readlink(name, dir_fd=walk.folder_fd), dst)
            elif stat.S_ISDIR(info.st_mode):
                os.mkdir(dst, stat.S_IMODE(info.st_mode) | 0o700)
            elif stat.S_ISREG(info.st_mode):
                _copy_file(name, walk.folder_fd, dst)
        except OSError:
            continue  # unreadable: the tool will not find it in its copy either


def _copy_file(name: str, dir_fd: int, dst: str) -> None:
    """One regular file, with its mode and modification time (as shutil.copy2 would)."""
    src = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=dir_fd)
    try:
        info = os.fstat(src)
        if not stat.S_ISREG(info.st_mode):
            return
        out = os.open(dst, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        try:
            with os.fdopen(src, "rb", closefd=False) as reader, os.fdopen(out, "wb", closefd=False) as writer:
                shutil.copyfileobj(reader, writer, 1 << 20)
            os.fchmod(out, stat.S_IMODE(info.st_mode))
            os.utime(out, ns=(info.st_atime_ns, info.st_mtime_ns))
        finally:
            os.close(out)
    finally:
        os.close(src)
