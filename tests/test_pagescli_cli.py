"""A command line people like to use: progress, width, colour, each problem once, did you mean.

The terminal paths run `python -m toolcatalog.cli` in a real pseudo-terminal (`pty.openpty`):
stdout and stderr are a terminal exactly as in an interactive shell, nothing is faked.
"""

from __future__ import annotations

import ast
import os
import pty
import select
import subprocess
import sys
from pathlib import Path

import pytest

import toolcatalog as toolcatalog_package

from manifests import ECHO_STDIN_PY, PLATFORM, speccify_tool
from sitebuild import CORPUS, toolcatalog, toolcatalog_process

ANSI = "\x1b["
PROGRESS = "\r\x1b[2K"
ERASE = "\x1b[2K"  # what is left of PROGRESS once a text-mode pipe turned the \r into a newline


def in_terminal(*args: str, cwd: Path, env: dict[str, str] | None = None, columns: int | None = None) -> tuple[int, str]:
    """Run the command with stdout and stderr on one pseudo-terminal; its exit code and all it wrote."""
    parent, child = pty.openpty()
    environment = {k: v for k, v in os.environ.items() if k not in ("CI", "NO_COLOR", "FORCE_COLOR", "COLUMNS")}
    environment.update({"TERM": "xterm", "PYTHONPATH": str(Path(toolcatalog_package.__file__).parents[1]), **(env or {})})
    if columns:
        environment["COLUMNS"] = str(columns)
    process = subprocess.Popen([sys.executable, "-m", "toolcatalog.cli", *args], cwd=cwd, stdin=subprocess.DEVNULL,
                               stdout=child, stderr=child, env=environment)
    os.close(child)
    chunks = []
    while True:
        ready, _, _ = select.select([parent], [], [], 120)
        if not ready:
            process.kill()
            break
        try:
            data = os.read(parent, 65536)
        except OSError:  # the child side closed: everything is read
            break
        if not data:
            break
        chunks.append(data)
    os.close(parent)
    return process.wait(timeout=120), b"".join(chunks).decode("utf-8", "replace")


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    cases = [(f"case {n}", {"text": str(n)}, {"text": str(n)}) for n in range(3)]
    speccify_tool(tmp_path, "echo-words", cases, files={f"{PLATFORM}.py": ECHO_STDIN_PY})
    return tmp_path


def test_progress_on_a_terminal_and_only_there(workspace: Path) -> None:
    code, seen = in_terminal("check", str(workspace), "--no-cache", cwd=workspace)
    assert code == 0, seen
    assert PROGRESS in seen and "runs done" in seen and "echo-words" in seen
    assert "harvesting" in seen
    # Erased before the table: its heading starts a clean line.
    assert seen.split("TOOL", 1)[0].removesuffix(f"{ANSI}1m").endswith(PROGRESS)
    # The same gate decides for every command: `validate` (no runs) shows "harvesting" when it is open.
    code, shown = in_terminal("validate", str(workspace), cwd=workspace)
    assert code == 0 and PROGRESS in shown
    code, quiet = in_terminal("validate", str(workspace), "--quiet", cwd=workspace)
    assert code == 0 and ERASE not in quiet
    code, ci = in_terminal("validate", str(workspace), cwd=workspace, env={"CI": "true"})
    assert code == 0 and ERASE not in ci
    piped = toolcatalog_process("validate", str(workspace), cwd=workspace, env={"CI": ""})
    assert piped.returncode == 0 and ERASE not in piped.stderr and ANSI not in piped.stdout + piped.stderr
    asked = toolcatalog_process("validate", str(workspace), "--progress", cwd=workspace, env={"CI": "true"})
    assert asked.returncode == 0 and ERASE in asked.stderr and "harvesting" in asked.stderr


def test_colour_on_a_terminal_honours_no_color_and_force_color(workspace: Path) -> None:
    code, seen = in_terminal("check", str(workspace), "--quiet", cwd=workspace)
    assert code == 0 and f"{ANSI}32mpassed" in seen
    code, plain = in_terminal("check", str(workspace), "--quiet", cwd=workspace, env={"NO_COLOR": "1"})
    assert code == 0 and ANSI not in plain and "passed" in plain
    forced = toolcatalog_process("check", str(workspace), cwd=workspace, env={"FORCE_COLOR": "1", "NO_COLOR": ""})
    assert f"{ANSI}32mpassed" in forced.stdout


def test_the_detail_column_fits_the_terminal(tmp_path: Path) -> None:
    long_title = " ".join(["word"] * 60)
    speccify_tool(tmp_path, "wide", [(long_title, {"text": "a"}, {"text": "b"})], files={f"{PLATFORM}.py": ECHO_STDIN_PY})
    code, seen = in_terminal("check", str(tmp_path), "--quiet", cwd=tmp_path, columns=100)
    assert code == 1, seen
    lines = [line for line in seen.replace("\r\n", "\n").split("\n") if line.strip() and not line.startswith(("example processes", "1 tools"))]
    assert any("word word" in line for line in lines)
    assert max(len(line) for line in lines) <= 100, max(lines, key=len)
    # Without a terminal and without COLUMNS, nothing is wrapped: a program reading it gets whole lines.
    piped = toolcatalog("check", str(tmp_path), cwd=tmp_path, env={"COLUMNS": ""})
    assert any(len(line) > 100 for line in piped.stdout.splitlines())


def test_did_you_mean_for_an_unknown_tool(workspace: Path) -> None:
    result = toolcatalog("check", str(workspace), "--tool", "echo-word", cwd=workspace)
    assert result.returncode == 2
    assert "no tool with id echo-word; did you mean echo-words?" in result.stderr


def test_require_tools_fails_an_empty_harvest(tmp_path: Path) -> None:
    for command in ("validate", "check"):
        assert toolcatalog(command, str(tmp_path), cwd=tmp_path).returncode == 0
        result = toolcatalog(command, str(tmp_path), "--require-tools", cwd=tmp_path)
        assert result.returncode == 1 and "no tool manifest found" in result.stderr


FIXTURES = CORPUS / "smart-tools-conformance"


@pytest.mark.skipif(not FIXTURES.is_dir(), reason="the shared corpus is not here")
def test_each_smart_tool_problem_is_printed_once() -> None:
    for fixture, words in [("sample-bad-manifest-missing", "does not exist"),
                           ("sample-bad-manifest-wrong-name", "must name a file called SMART_TOOL.md"),
                           ("sample-bad-name-uppercase", "does not match the pattern")]:
        result = toolcatalog("check", str(FIXTURES / fixture), "--quiet", cwd=FIXTURES / fixture)
        assert result.stdout.count(words) == 1, result.stdout


def test_flags_are_declared_once() -> None:
    source = (Path(toolcatalog_package.__file__).parent / "cli.py").read_text(encoding="utf-8")
    calls = [node for node in ast.walk(ast.parse(source))
             if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "add_argument"]
    assert len(calls) == 2  # --version, and the one loop over the flag table
    from toolcatalog import cli

    for name, command in cli._commands().items():
        assert all(key in cli.FLAGS for key in command.flags), name
    shared = {"path", "config-file", "paths", "exclude", "quiet", "progress"}
    for name in ("validate", "check", "export", "markdown"):
        assert shared <= set(cli._commands()[name].flags), name
