"""A published site read over HTTP(S) for `toolcatalog verify URL`, as a hostile server could serve it.

- Only `http://` and `https://` base URLs; every file is fetched at the base URL plus its site
  path, each segment percent-encoded, so a listed path can never leave the base (paths with
  `..`, a leading `/`, a backslash, a scheme or a control character are refused before any
  request; see `outputs.published.safe_site_path`).
- Redirects: at most `Limits.redirects`, and only to the same origin (scheme, host and port):
  any other is refused. No handler but HTTP(S) exists, so `file://`, `ftp://` or `data:` are
  never opened.
- Each file is capped (the size the manifest lists, or `Limits.max_file`): a larger
  `Content-Length` is refused before reading, a longer body as soon as it passes the cap; a
  body shorter than its `Content-Length` is refused; every fetch has a socket timeout and an
  overall deadline (`Limits.timeout`, `Limits.deadline`), the status line and headers included:
  at the deadline its socket is shut down (`_Watch`); at most `Limits.max_files` files and
  `Limits.max_total` bytes per run.

Each file is fetched once (the checks that read it again get the same bytes).
"""

from __future__ import annotations

import http.client
import socket
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from http.client import HTTPMessage
from typing import IO
from urllib.parse import quote, urljoin, urlsplit

from .outputs.documents.base import SourceError
from .outputs.published import safe_site_path


class FetchError(Exception):
    """The base URL cannot be used."""


@dataclass(frozen=True)
class Limits:
    max_file: int = 256 * 1024 * 1024
    max_total: int = 2 * 1024 * 1024 * 1024
    max_files: int = 100_000
    timeout: float = 20.0  # seconds per socket operation
    deadline: float = 120.0  # seconds per file
    redirects: int = 5


def _origin(url: str) -> tuple[str, str, int | None]:
    parts = urlsplit(url)
    port = parts.port or {"http": 80, "https": 443}.get(parts.scheme)
    return parts.scheme, (parts.hostname or "").lower(), port


class _SameOrigin(urllib.request.HTTPRedirectHandler):
    def __init__(self, origin: tuple[str, str, int | None], limit: int) -> None:
        self.origin = origin
        setattr(self, "max_redirections", limit)  # urllib reads the class attribute's name on the instance

    def redirect_request(self, req: urllib.request.Request, fp: IO[bytes], code: int, msg: str, headers: HTTPMessage,
                         newurl: str) -> urllib.request.Request | None:
        target = urljoin(req.full_url, newurl)
        if _origin(target) != self.origin:
            raise SourceError(f"redirected off the site's origin, to {target[:200]!r}; not followed")
        return super().redirect_request(req, fp, code, msg, headers, target)

    def http_error_302(self, req: urllib.request.Request, fp: IO[bytes], code: int, msg: str,
                       headers: HTTPMessage) -> IO[bytes] | None:
        location = headers.get("location") or headers.get("uri")
        if location is not None:  # before urllib's own checks, so every refusal says where it went
            target = urljoin(req.full_url, location)
            if _origin(target) != self.origin:
                raise SourceError(f"redirected off the site's origin, to {target[:200]!r}; not followed")
        return super().http_error_302(req, fp, code, msg, headers)

    http_error_301 = http_error_303 = http_error_307 = http_error_308 = http_error_302


class _Watch:
    """The socket of the fetch under way (fetches are one at a time), shut down when that file's
    deadline passes: a server that trickles its reply a byte at a time, status line and headers
    included, stays inside every socket timeout, so only this ends the wait."""

    def __init__(self) -> None:
        self.sock: socket.socket | None = None
        self.expired = False

    def expire(self) -> None:
        self.expired = True
        sock = self.sock
        if sock is not None:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


def _watched(base: type[http.client.HTTPConnection], watch: _Watch) -> type[http.client.HTTPConnection]:
    class Watched(base):  # type: ignore[valid-type,misc]
        def connect(self) -> None:
            super().connect()
            watch.sock = self.sock
            if watch.expired:
                watch.expire()
    return Watched


class _HTTP(urllib.request.HTTPHandler):
    def __init__(self, watch: _Watch) -> None:
        super().__init__()
        self.watch = watch

    def http_open(self, req: urllib.request.Request) -> http.client.HTTPResponse:
        return self.do_open(_watched(http.client.HTTPConnection, self.watch), req)


class _HTTPS(urllib.request.HTTPSHandler):
    def __init__(self, watch: _Watch) -> None:
        super().__init__()
        self.watch = watch

    def https_open(self, req: urllib.request.Request) -> http.client.HTTPResponse:
        return self.do_open(_watched(http.client.HTTPSConnection, self.watch), req, context=getattr(self, "_context", None))


class _Failed:
    def __init__(self, message: str, missing: bool) -> None:
        self.message, self.missing = message, missing


class Site:
    """A `Source` over HTTP(S): `read(path, limit)`, `exists(path)`; it cannot be listed."""

    def __init__(self, url: str, limits: Limits) -> None:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise FetchError(f"{url[:200]!r} is not an http:// or https:// URL")
        if parts.username or parts.password:
            raise FetchError("a URL with a user name or password is not fetched")
        path = parts.path if parts.path.endswith("/") else parts.path + "/"
        self.base = parts._replace(path=path, query="", fragment="").geturl()
        self.limits = limits
        self.opener = urllib.request.OpenerDirector()
        self.watch = _Watch()
        for handler in (urllib.request.ProxyHandler(), _HTTP(self.watch), _HTTPS(self.watch),
                        _SameOrigin(_origin(self.base), limits.redirects), urllib.request.HTTPErrorProcessor(),
                        urllib.request.HTTPDefaultErrorHandler()):  # without it an error status opens as None
            self.opener.add_handler(handler)
        self.cache: dict[str, bytes | _Failed] = {}
        self.fetched = 0
        self.total = 0

    def url(self, path: str) -> str:
        return self.base + "/".join(quote(segment, safe="") for segment in path.split("/"))

    def listing(self) -> None:
        return None

    def exists(self, path: str) -> bool:
        found = self._get(path, self.limits.max_file)
        return not (isinstance(found, _Failed) and found.missing)

    def read(self, path: str, limit: int) -> bytes:
        found = self._get(path, min(limit, self.limits.max_file))
        if isinstance(found, _Failed):
            raise SourceError(found.message)
        if len(found) > limit:
            raise SourceError(f"is larger than {limit:,} bytes; not read")
        return found

    def _get(self, path: str, limit: int) -> bytes | _Failed:
        if path in self.cache:
            return self.cache[path]
        if not safe_site_path(path):
            found: bytes | _Failed = _Failed(f"{path[:200]!r} is not a path inside the site; not fetched", True)
        elif self.fetched >= self.limits.max_files or self.total >= self.limits.max_total:
            found = _Failed("not fetched: the run's limit on files or bytes is reached", False)
        else:
            self.fetched += 1
            found = self._fetch(self.url(path), limit)
            self.total += len(found) if isinstance(found, bytes) else 0
        self.cache[path] = found
        return found

    def _fetch(self, url: str, limit: int) -> bytes | _Failed:
        request = urllib.request.Request(url, headers={"Accept-Encoding": "identity", "User-Agent": "toolcatalog-verify"})
        self.watch.sock, self.watch.expired = None, False
        timer = threading.Timer(self.limits.deadline, self.watch.expire)
        timer.daemon = True
        timer.start()
        try:
            found = self._open(request, url, limit)
            # A reply cut by the deadline can look whole (headers ended by the cut, an empty body).
            return _Failed(f"took longer than {self.limits.deadline:g} s to arrive; not read", False) if self.watch.expired else found
        finally:
            timer.cancel()
            self.watch.sock = None

    def _open(self, request: urllib.request.Request, url: str, limit: int) -> bytes | _Failed:
        try:
            response = self.opener.open(request, timeout=self.limits.timeout)
            if response is None:  # no handler took the reply
                return _Failed(f"no usable reply from {url[:200]}", False)
            with response:
                return self._body(response, limit)
        except urllib.error.HTTPError as exc:
            return _Failed(f"HTTP {exc.code} from {url[:200]}", exc.code in (404, 410))
        except SourceError as exc:
            return _Failed(str(exc), False)
        except (urllib.error.URLError, http.client.HTTPException, socket.timeout, OSError, ValueError) as exc:
            return _Failed(f"cannot be fetched from {url[:200]}: {getattr(exc, 'reason', exc)}", False)

    def _body(self, response: http.client.HTTPResponse, limit: int) -> bytes:
        length = response.headers.get("Content-Length")
        if length is not None and length.strip().isdigit() and int(length) > limit:
            raise SourceError(f"is {int(length):,} bytes (Content-Length); at most {limit:,} are read")
        if response.headers.get("Content-Encoding", "identity").lower() not in ("identity", ""):
            raise SourceError(f"was sent with Content-Encoding {response.headers.get('Content-Encoding')!r}; not read")
        started, chunks, size = time.monotonic(), [], 0
        while True:
            if time.monotonic() - started > self.limits.deadline:
                raise SourceError(f"took longer than {self.limits.deadline:g} s to arrive; not read")
            block = response.read1(min(1 << 16, limit + 1 - size))
            if not block:
                break
            chunks.append(block)
            size += len(block)
            if size > limit:
                raise SourceError(f"is larger than {limit:,} bytes; not read")
        return b"".join(chunks)
