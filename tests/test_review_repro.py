"""Review: a page's reproduction command runs the program the build ran, not one found on PATH."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from manifests import PLATFORM, aip_driver, aip_tool, cli_entry, speccify_tool
from sitebuild import run_check, tool_of
from toolcatalog import repro

ECHO = "#!/usr/bin/env python3\nimport json, sys\nprint(json.dumps(json.load(sys.stdin)))\n"
ARG = "#!/bin/sh\nprintf '{\"t\": \"%s\"}\\n' \"$1\"\n"


def _replay(root: Path, command: str) -> object:
    # The reviewer's shell: PATH without the run folder (it never holds ".").
    done = subprocess.run(["/bin/sh", "-c", command], cwd=root, capture_output=True, text=True, timeout=30,
                          env={"PATH": os.environ.get("PATH", "/usr/bin:/bin")})
    assert done.returncode == 0, (command, done.stderr)
    return json.loads(done.stdout)


def test_a_program_run_from_its_folder_is_replayed_from_it(tmp_path: Path) -> None:
    folder = speccify_tool(tmp_path, "exe", [("echo", {"a": 1}, {"a": 1})], files={f"{PLATFORM}.py": ECHO})
    (folder / f"{PLATFORM}.py").chmod(0o755)
    aip_tool(tmp_path, "demo.arg", examples=[{"name": "arg", "input": {"t": "hi"}, "output": {"t": "hi"}}])
    driver = aip_driver(tmp_path, "local-sh", "demo.arg", bin="./bin/arg.sh", output={"default_format": "json"},
                        entry=cli_entry("${input.t}"), files={"bin/arg.sh": ARG})
    (driver / "bin" / "arg.sh").chmod(0o755)
    found, _ = run_check(tmp_path, sandbox="off")
    for tool_id, expected in (("exe", {"a": 1}), ("demo.arg", {"t": "hi"})):
        tool = tool_of(found, tool_id)
        example = tool.examples[0]
        assert example.status.value == "passed", (tool_id, example.detail)
        command = repro.run_command(tool, example, example.runs[0])
        assert command is not None
        assert _replay(tmp_path, command) == expected, command
