"""Review: `toolcatalog verify` against hostile sites and servers gives a clear exit, never a traceback."""

from __future__ import annotations

import functools
import http.server
import socketserver
import threading
from pathlib import Path
from typing import Any, Iterator

import pytest

from manifests import ECHO_STDIN_PY, PLATFORM, speccify_tool
from sitebuild import toolcatalog, toolcatalog_process


class _Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True


class _Handler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        return None

    def do_GET(self) -> None:
        if self.path.endswith("/llms.txt"):
            self.send_error(500, "broken")
            return
        super().do_GET()


@pytest.fixture
def published(tmp_path: Path) -> Iterator[tuple[Path, str]]:
    root = tmp_path / "repo"
    speccify_tool(root, "echo", [("one", {"a": 1}, {"a": 1})], files={f"{PLATFORM}.py": ECHO_STDIN_PY})
    out = tmp_path / "site"
    result = toolcatalog("export", "-o", str(out), str(root), cwd=root)
    assert result.returncode == 0, result.stdout + result.stderr
    server = _Server(("127.0.0.1", 0), functools.partial(_Handler, directory=str(tmp_path)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield out, f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


def test_http_errors_are_mismatches_not_a_traceback(published: tuple[Path, str]) -> None:
    out, base = published
    (out / "mcp-tools.json").unlink()  # listed in the manifest: a 404 now; llms.txt: a 500
    done = toolcatalog_process("verify", base + "site/", cwd=out)
    assert "Traceback" not in done.stderr, done.stderr
    assert done.returncode == 1, done.stdout + done.stderr
    assert "mcp-tools.json: listed in the digest manifest, but missing" in done.stdout, done.stdout
    assert "llms.txt: HTTP 500" in done.stdout, done.stdout


def test_no_catalog_at_the_url_is_a_clear_error(published: tuple[Path, str]) -> None:
    out, base = published
    done = toolcatalog_process("verify", base + "nothing-here/", cwd=out)
    assert "Traceback" not in done.stderr, done.stderr
    assert done.returncode == 2 and "catalog 'catalog.json' does not exist" in done.stderr, done.stderr


class _Trickle(http.server.BaseHTTPRequestHandler):
    """Sends catalog.json's status line, then a header a byte at a time, each well inside the
    socket timeout: a server can keep a verifier waiting that way for as long as it likes."""

    stop = threading.Event()

    def log_message(self, format: str, *args: Any) -> None:
        return None

    def do_GET(self) -> None:
        self.wfile.write(b"HTTP/1.0 200 OK\r\nX-Slow: ")
        for _ in range(60):
            if self.stop.wait(0.1):
                return
            self.wfile.write(b"a")
            self.wfile.flush()
        self.wfile.write(b"\r\nContent-Length: 2\r\n\r\n{}")


def test_a_trickled_reply_is_cut_at_the_files_deadline() -> None:
    from toolcatalog import sitefetch, verify

    server = _Server(("127.0.0.1", 0), _Trickle)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        with pytest.raises(verify.VerifyError) as caught:
            verify.verify_url(f"http://127.0.0.1:{server.server_address[1]}/",
                              limits=sitefetch.Limits(timeout=2.0, deadline=1.0))
    finally:
        _Trickle.stop.set()
        server.shutdown()
        server.server_close()
    assert "took longer than 1 s" in str(caught.value), caught.value
