"""Review: examples/agent/call_tool.py calls only a way the build ran and observed."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from manifests import aip_driver, aip_tool, cli_entry, write
from sitebuild import REPO, toolcatalog
from toolcatalog import sandbox

SCRIPT = REPO / "examples" / "agent" / "call_tool.py"
FACTS = sandbox.probe("auto")
ECHO = "import json, sys\nprint(json.dumps({'text': sys.argv[1]}))\n"


@pytest.mark.skipif(FACTS.mechanism is None or not FACTS.traced, reason="verified read-only needs a traced sandbox")
def test_a_driver_that_never_ran_is_not_called(tmp_path: Path) -> None:
    # Two CLI drivers of one read-only, deterministic tool: the first names a program the build
    # machine lacks (so it never ran, and nothing of it was observed), the second ran and passed.
    # An agent's machine may have that program: the script must call the way the evidence is about.
    root = tmp_path / "repo"
    aip_tool(root, "echo", [{"name": "one", "input": {"text": "hi"}, "output": {"text": "hi"}}],
             metadata={"model_backed": False})
    aip_driver(root, "a-unseen", "echo", entry=cli_entry("${input.text}"), bin="toolcatalog-review-unseen", bin_args=[],
               output={"default_format": "json"})
    aip_driver(root, "b-seen", "echo", entry=cli_entry("${input.text}"), bin="python3", bin_args=["echo.py"],
               output={"default_format": "json"}, files={"echo.py": ECHO})
    unseen = tmp_path / "bin" / "toolcatalog-review-unseen"
    out = tmp_path / "site"
    result = toolcatalog("export", "-o", str(out), str(root), cwd=root)
    assert result.returncode == 0, result.stdout + result.stderr
    entry = next(t for t in json.loads((out / "catalog.json").read_text(encoding="utf-8"))["tools"] if t["id"] == "echo")
    assert entry["status"] == "passed" and entry["claims"]["effects"]["verified"], entry["claims"]
    ran = {w["driver"]: w["ran"] for w in entry["invoke"]["ways"]}
    assert ran["b-seen"] == "ran" and ran["a-unseen"] != "ran", ran
    write(unseen, "#!/bin/sh\necho unobserved > \"$0.called\"\necho '{}'\n").chmod(0o755)
    env = {"PATH": f"{unseen.parent}:/usr/bin:/bin"}
    done = subprocess.run([sys.executable, str(SCRIPT), str(out / "catalog.json"), str(root)], env=env,
                          capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert not Path(f"{unseen}.called").exists(), "call_tool ran a driver the build never ran"
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["argv"][:2] == ["python3", "echo.py"]
