"""What the suite's processes see does not depend on what the machine has installed.

The corpus's smart tools call `uv`, and the verdicts the tests expect of them were taken where it
was not installed: conftest.py's `processes_start_like_the_suite` gives every process a PATH on
which none of `once.UNINSTALLED` is found (`once.path_without`), whatever the machine has.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from once import UNINSTALLED, path_without


def test_no_process_of_the_suite_finds_uv_whatever_the_machine_has() -> None:
    for name in UNINSTALLED:
        assert shutil.which(name) is None, f"{name} is found on the suite's PATH: {shutil.which(name)}"
    # A process started with the suite's environment, as every build and tool run is.
    found = subprocess.run(["sh", "-c", "command -v uv uvx samplegood"], capture_output=True, text=True)
    assert found.stdout == "", found.stdout


def _program(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\necho " + path.name + "\n", encoding="utf-8")
    path.chmod(0o755)
    return path


def test_path_without_hides_only_the_named_programs(tmp_path: Path) -> None:
    _program(tmp_path / "a" / "uv")
    _program(tmp_path / "a" / "tool")
    _program(tmp_path / "b" / "tool")  # found after a/tool: the order of the entries is kept
    _program(tmp_path / "b" / "other")
    _program(tmp_path / "c" / "samplegood")
    (tmp_path / "a" / "uvx").symlink_to(tmp_path / "a" / "uv")
    original = os.pathsep.join([str(tmp_path / "a"), str(tmp_path / "b"), "", str(tmp_path / "missing"), str(tmp_path / "c")])
    path = path_without(UNINSTALLED, original, tmp_path / "shadows")
    entries = path.split(os.pathsep)
    assert entries[1:4] == [str(tmp_path / "b"), "", str(tmp_path / "missing")]  # holding none of them: as they were
    assert all(shutil.which(name, path=path) is None for name in UNINSTALLED)
    tool = shutil.which("tool", path=path)
    assert tool is not None and Path(tool).resolve() == tmp_path / "a" / "tool"
    assert subprocess.run([tool], capture_output=True, text=True).stdout == "tool\n"
    assert Path(shutil.which("other", path=path) or "") == tmp_path / "b" / "other"
    assert path_without(UNINSTALLED, original, tmp_path / "shadows") == path  # made again: the same
