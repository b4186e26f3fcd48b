"""Files the commands read besides manifests (published catalogs, config files) are untrusted too:
capped, regular files only, nested no deeper than they can be; a bad one is a usage error with a
message, never a hang or a traceback."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from manifests import write, workspace_all_formats
from sitebuild import toolcatalog, toolcatalog_process


def _deep(levels: int) -> str:
    return "[" * levels + "]" * levels


@pytest.mark.parametrize("command", ["verify", "diff"])
def test_a_published_catalog_that_is_a_pipe_is_refused_without_reading(tmp_path: Path, command: str) -> None:
    os.mkfifo(tmp_path / "catalog.json")  # a blocking open() would wait here forever
    args = [command, str(tmp_path)] + ([str(tmp_path)] if command == "diff" else [])
    result = toolcatalog_process(*args, cwd=tmp_path, timeout=60)
    assert result.returncode == 2, result.stderr
    assert "not a regular file" in result.stderr and "Traceback" not in result.stderr


@pytest.mark.parametrize("command", ["verify", "diff"])
def test_a_published_catalog_nested_too_deep_is_refused(tmp_path: Path, command: str) -> None:
    write(tmp_path / "catalog.json", '{"version": 2, "tools": [' + _deep(100_000) + "]}")
    args = [command, str(tmp_path)] + ([str(tmp_path)] if command == "diff" else [])
    result = toolcatalog(*args, cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    assert "not a readable JSON file" in result.stderr and "Traceback" not in result.stderr


def test_llms_txt_that_is_a_pipe_is_a_problem_not_a_hang(tmp_path: Path) -> None:
    workspace_all_formats(tmp_path)
    out = tmp_path / "out"
    assert toolcatalog("export", str(tmp_path), "--no-run", "-o", str(out), cwd=tmp_path).returncode == 0
    (out / "llms.txt").unlink()
    os.mkfifo(out / "llms.txt")
    result = toolcatalog_process("verify", str(out), "--llms", "llms.txt", cwd=tmp_path, timeout=60)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "llms.txt: cannot be read" in result.stdout + result.stderr


def test_a_config_file_that_is_a_pipe_is_refused(tmp_path: Path) -> None:
    workspace_all_formats(tmp_path)
    os.mkfifo(tmp_path / "mkdocs.yml")
    result = toolcatalog_process("validate", str(tmp_path), cwd=tmp_path, timeout=60)
    assert result.returncode == 2, result.stderr
    assert "cannot read" in result.stderr and "not a regular file" in result.stderr
