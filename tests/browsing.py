"""Headless Chromium for tests (Debian's `chromium`, driven by Playwright) and a local server for built sites.

Modules that drive the browser call `require_chromium()` at import: CI must have it (.ci/run
installs it); elsewhere the module is skipped when it is missing.
"""

from __future__ import annotations

import contextlib
import functools
import http.server
import os
import shutil
import threading
import urllib.parse
from pathlib import Path
from typing import Any, Iterator

import pytest

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
        "--disable-component-update", "--disable-sync"]


def require_chromium() -> None:
    if CHROMIUM is None:
        if os.environ.get("CI"):
            raise RuntimeError("CI must run the browser tests: install Debian's chromium (.ci/run does)")
        pytest.skip("Debian's chromium is not installed", allow_module_level=True)


@contextlib.contextmanager
def launched_chromium() -> Iterator[Any]:
    """Debian's Chromium, headless, through Playwright; closed on exit."""
    from playwright import sync_api

    with sync_api.sync_playwright() as playwright:
        instance = playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            yield instance
        finally:
            instance.close()


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def __init__(self, *args: Any, files: dict[str, bytes], **kwargs: Any) -> None:
        self.files = files
        super().__init__(*args, **kwargs)

    def log_message(self, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        body = self.files.get(urllib.parse.urlsplit(self.path).path.lstrip("/"))
        if body is None:
            super().do_GET()
            return
        self.send_response(200)
        self.send_header("Content-Type", self.guess_type(self.path if not self.path.endswith("/") else "index.html"))
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def serve(root: Path, files: dict[str, bytes] | None = None) -> tuple[str, http.server.ThreadingHTTPServer]:
    """Serve `root` on a free localhost port: (base URL ending in /, server to `shutdown()`).

    `files` maps URL paths (without the leading /) to what is served there instead of the folder's
    file; it is read at each request, so a test may add to it while it serves. (Playwright's
    `page.route` would do the same from the browser, but once a page has a route every request it
    makes goes through Playwright: ≈0.13 s of CPU more per Material page load.)"""
    handler = functools.partial(_Quiet, directory=str(root), files={} if files is None else files)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return f"http://127.0.0.1:{server.server_address[1]}/", server
