"""`mkdocs serve` watches the manifest folders and re-runs only the tools that changed."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

from manifests import workspace_all_formats
from sitebuild import mkdocs_project

CHECKED = re.compile(r"checked (\d+) tools in [\d.]+s: (\d+) processes started, (\d+) tools' results from the cache")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_serve_reruns_only_the_changed_tool(tmp_path: Path) -> None:
    workspace_all_formats(tmp_path)
    mkdocs_project(tmp_path)
    process = subprocess.Popen(
        [sys.executable, "-m", "mkdocs", "serve", "--dev-addr", f"127.0.0.1:{free_port()}"],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        # Its temporary site folder in the test's own: `mkdocs serve` removes it only when stopped
        # by Ctrl-C, and the test stops it otherwise (one folder left in /tmp per run, before).
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1", "TMPDIR": str(tmp_path)},
        start_new_session=True,
    )
    lines: list[str] = []
    reader = threading.Thread(target=lambda: lines.extend(iter(process.stdout.readline, "")), daemon=True)
    reader.start()

    def wait_for(predicate, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if predicate():
                return
            if process.poll() is not None:
                raise AssertionError("mkdocs serve exited:\n" + "".join(lines))
            time.sleep(0.1)
        raise AssertionError("timed out; output so far:\n" + "".join(lines))

    def checks() -> list[tuple[int, int, int]]:
        return [tuple(map(int, m.groups())) for m in CHECKED.finditer("".join(lines))]

    try:
        wait_for(lambda: "Serving on" in "".join(lines))
        assert checks() == [(3, 8, 0)]  # first build: every tool runs
        implementation = tmp_path / ".agent/tools/add-numbers/linux.py"
        implementation.write_text(implementation.read_text() + "\n# a change\n")
        wait_for(lambda: len(checks()) >= 2)
        # One example of the changed tool ran; the other two tools came from the cache.
        assert checks()[1] == (3, 1, 2)
        # A new tool folder is noticed without a restart (the `.agent/tools` folder is watched).
        new = tmp_path / ".agent/tools/add-more"
        new.mkdir()
        (new / "linux.py").write_text(implementation.read_text())
        (new / "TOOL.md").write_text(
            (tmp_path / ".agent/tools/add-numbers/TOOL.md").read_text().replace("name: add-numbers", "name: add-more")
        )
        # (Files appear one by one, so intermediate rebuilds may come first.)
        wait_for(lambda: (4, 1, 3) in checks()[2:])
    finally:
        os.killpg(process.pid, 15)
        process.wait(timeout=10)
