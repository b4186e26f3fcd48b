"""The build's results key, and the seal (an HMAC-SHA256) it puts on what the build keeps.

A cached result, a parsed manifest kept between builds and every result in a results file are
evidence only because this build, or a party holding the same key, produced them: anything else
could come from the repository being catalogued (a committed cache entry, a committed results
file), and whoever wrote it could make a failing tool show `passed` or a dangerous contract look
harmless. So each of them is sealed with a key that lives outside the workspace:

- `TOOLCATALOG_RESULTS_KEY` (at least 32 characters), when set and not empty: what CI gives as a
  secret to every job that must trust the others' results (shards and the site build);
- otherwise the key file `<user cache>/mkdocs-toolcatalog/key` (`$XDG_CACHE_HOME`, else
  `~/.cache`), made on first use: 32 random bytes as hex, mode 0600, created atomically (a
  temporary file linked into place, so builds starting at once agree on one key). It is refused
  (and nothing is read from the cache or from results files) when it is a link, not a regular
  file, not ours, readable by others, or inside the workspace being built.

The key never reaches a tool: the `env` option refuses its name, and the key file is outside
every folder a sandboxed run can see. A sealed cache file is one line `toolcatalog-sealed-v2
<key id> <mac>` and then the JSON it seals; the MAC covers a label naming what the file is (a
result, a parsed manifest), so one kind can never pass for another. The key id (a digest of the
key, which reveals nothing about it) tells "made with another key" from "changed or forged".

Also here: where the cache lives by default, `<user cache>/mkdocs-toolcatalog/cache/<digest of
the workspace path>`, a folder no commit can populate.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
import stat
import threading
from dataclasses import dataclass
from pathlib import Path

from .files import is_inside
from .model import Note

ENV_KEY = "TOOLCATALOG_RESULTS_KEY"
APP_FOLDER = "mkdocs-toolcatalog"
KEY_FILE = "key"
CACHE_FOLDER = "cache"
MIN_KEY_CHARS = 32
_MAX_KEY_FILE_BYTES = 4096
HEADER = b"toolcatalog-sealed-v2"

# Why a sealed thing was not used (the counts of each are logged, one line per reason).
OLDER = "older"  # no seal, or a seal of another format: written by an older version (or by hand)
OTHER_KEY = "other-key"  # sealed with another key (another machine, a CI job without the shared secret)
FORGED = "forged"  # sealed with this key id but the MAC does not match: changed since, or forged
UNREADABLE = "unreadable"  # not a regular file, too large, a link out of the folder

REASONS = {
    OLDER: "carry no seal of this version",
    OTHER_KEY: "were sealed with another key",
    FORGED: "do not match their seal (changed since, or not written by a build holding this key)",
    UNREADABLE: "could not be read (a link, a pipe, a folder, too large)",
}


class KeyUnavailable(Exception):
    """No usable key; `message` says why."""

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


@dataclass(frozen=True)
class Key:
    secret: bytes = b""
    id: str = ""  # 16 hex digits: names the key, reveals nothing about it
    source: str = ""  # where it came from, for messages

    @classmethod
    def from_text(cls, text: str, source: str) -> "Key":
        secret = hashlib.sha256(b"toolcatalog-results-key\0" + text.strip().encode("utf-8")).digest()
        key_id = hmac.new(secret, b"key-id", hashlib.sha256).hexdigest()[:16]
        return cls(secret, key_id, source)

    def mac(self, label: str, payload: bytes) -> str:
        return hmac.new(self.secret, label.encode("ascii") + b"\0" + payload, hashlib.sha256).hexdigest()

    def verifies(self, label: str, payload: bytes, mac: object) -> bool:
        if not isinstance(mac, str) or not mac.isascii():  # compare_digest takes ASCII text only
            return False
        return hmac.compare_digest(self.mac(label, payload), mac)

    def seal(self, label: str, payload: str) -> str:
        """`payload` as a sealed file's text: the seal line, then the payload."""
        return f"{HEADER.decode()} {self.id} {self.mac(label, payload.encode('utf-8'))}\n{payload}"

    def unseal(self, label: str, data: bytes) -> tuple[bytes | None, str | None]:
        """The payload of a sealed file's bytes, or None and the reason (OLDER, OTHER_KEY, FORGED)."""
        line, newline, payload = data.partition(b"\n")
        parts = line.split(b" ")
        if not newline or len(parts) != 3 or parts[0] != HEADER:
            return None, OLDER
        if parts[1] != self.id.encode("ascii"):
            return None, OTHER_KEY
        if not self.verifies(label, payload, parts[2].decode("ascii", "replace")):
            return None, FORGED
        return payload, None


def user_cache_root() -> Path:
    """`$XDG_CACHE_HOME/mkdocs-toolcatalog` (when set to an absolute path), else `~/.cache/...`."""
    base = os.environ.get("XDG_CACHE_HOME", "")
    if not base or not os.path.isabs(base):
        base = os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / APP_FOLDER


def default_cache_dir(workspace: Path) -> Path:
    """The default cache folder of a workspace: outside it, named by a digest of its path (a
    result holds that checkout's paths and is never reused by another one anyway)."""
    digest = hashlib.sha256(os.path.abspath(workspace).encode("utf-8", "surrogateescape")).hexdigest()[:16]
    return user_cache_root() / CACHE_FOLDER / digest


def cache_base(workspace: Path, folder: Path) -> Path:
    """The folder below which cache writes follow no link: the workspace when the cache folder lies
    in it (a commit can plant links anywhere in the checkout), else the cache folder itself."""
    ws, target = os.path.abspath(workspace), os.path.abspath(folder)
    return Path(ws) if target == ws or target.startswith(ws.rstrip(os.sep) + os.sep) else Path(target)


def cache_dir(workspace: Path, configured: str | None) -> Path:
    """The cache folder for `cache_dir` (None: the default; relative: to the workspace)."""
    if not configured:
        return default_cache_dir(workspace)
    folder = Path(configured).expanduser()
    return folder if folder.is_absolute() else Path(os.path.abspath(workspace)) / folder


_lock = threading.Lock()
_loaded: dict[tuple[str, str, str], Key] = {}


def build_key(workspace: Path) -> Key:
    """The key this build seals and checks with. Raises KeyUnavailable (with the reason)."""
    text = os.environ.get(ENV_KEY, "")
    path = user_cache_root() / KEY_FILE
    memo = (hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest(), str(path), os.path.abspath(workspace))
    with _lock:
        found = _loaded.get(memo)
        if found is None:
            found = _key_from_env(text) if text.strip() else _key_from_file(path, workspace)
            _loaded[memo] = found
        return found


def _key_from_env(text: str) -> Key:
    if len(text.strip()) < MIN_KEY_CHARS:
        raise KeyUnavailable(f"{ENV_KEY} is shorter than {MIN_KEY_CHARS} characters (use e.g. `openssl rand -hex 32`)")
    return Key.from_text(text, ENV_KEY)


def _key_from_file(path: Path, workspace: Path) -> Key:
    folder = path.parent
    if not path.is_absolute():  # no home folder (HOME unset, no passwd entry): never a folder relative to here
        raise KeyUnavailable(f"there is no home folder to keep the key in; set {ENV_KEY}, or XDG_CACHE_HOME to an absolute path")
    if is_inside(folder, workspace) or is_inside(path, workspace):
        raise KeyUnavailable(f"the key file {path} would be inside the workspace, where a commit could put one; "
                             f"set {ENV_KEY} or XDG_CACHE_HOME to a folder outside it")
    try:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    except OSError as exc:
        raise KeyUnavailable(f"cannot create {folder}: {exc.strerror or exc}") from None
    try:
        return Key.from_text(_read_key_file(path), str(path))
    except FileNotFoundError:
        pass
    _create_key_file(path)
    return Key.from_text(_read_key_file(path), str(path))


def _read_key_file(path: Path) -> str:
    """The key file's text. FileNotFoundError when there is none; KeyUnavailable when it is unsafe."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        raise
    except OSError as exc:  # ELOOP: a symbolic link
        raise KeyUnavailable(f"the key file {path} cannot be used ({exc.strerror or exc}; a link is refused)") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise KeyUnavailable(f"the key file {path} is not a regular file")
        if hasattr(os, "geteuid") and info.st_uid != os.geteuid():
            raise KeyUnavailable(f"the key file {path} belongs to another user")
        if os.name != "nt" and info.st_mode & 0o077:  # (Windows reports no permission bits to check)
            raise KeyUnavailable(f"the key file {path} may be read or written by others (mode {stat.S_IMODE(info.st_mode):o}; it must be 600)")
        data = os.read(fd, _MAX_KEY_FILE_BYTES + 1)
    finally:
        os.close(fd)
    text = data.decode("ascii", "replace").strip()
    if len(data) > _MAX_KEY_FILE_BYTES or len(text) < MIN_KEY_CHARS:
        raise KeyUnavailable(f"the key file {path} does not hold a key (at least {MIN_KEY_CHARS} characters); delete it to make a new one")
    return text


def _create_key_file(path: Path) -> None:
    """A new random key, linked into place only when there is none (two builds starting at once
    keep the first one's)."""
    tmp = path.parent / f".{path.name}.{secrets.token_hex(8)}"
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
        try:
            os.write(fd, (secrets.token_hex(32) + "\n").encode("ascii"))
            os.fsync(fd)
        finally:
            os.close(fd)
        try:
            os.link(tmp, path)
        except FileExistsError:
            pass  # another build made it first: use theirs
    except OSError as exc:
        raise KeyUnavailable(f"cannot create the key file {path}: {exc.strerror or exc}") from None
    finally:
        try:
            os.unlink(tmp)
        except OSError:
            pass


def refused_notes(what: str, counts: dict[str, int]) -> list[Note]:
    """One line per reason, e.g. `3 cached results were sealed with another key; not used, ...`.
    Another key is what a fresh machine or a CI job without the shared secret sees (information);
    anything else is a file no build holding this key wrote, which a reviewer should look at."""
    return [Note(f"{n} {what} {REASONS[reason]}; not used, checked again here", warning=reason != OTHER_KEY)
            for reason, n in sorted(counts.items()) if n]


def no_key_note(exc: KeyUnavailable) -> Note:
    return Note(f"no results key: {exc.message}; nothing is taken from the cache or from results files, every tool is checked here")
