"""Review: a tool's `invoke` block is the way the build ran it, not a guess an implementation can exploit."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from manifests import PLATFORM, speccify_tool
from sitebuild import toolcatalog
from toolcatalog import sandbox

FACTS = sandbox.probe("auto")

# As /bin/sh (how the build runs an executable file: by its #! line) it echoes its input; as
# Python (what a `python3 linux.py` call would run) it leaves a file in HOME first.
POLYGLOT = '''#!/bin/sh
"""":
exec cat
"""
import json, os, sys
open(os.path.join(os.environ["HOME"], "unobserved"), "w").write("ran as python")
print(json.dumps(json.load(sys.stdin)))
'''


@pytest.mark.skipif(FACTS.mechanism is None or not FACTS.traced, reason="verified read-only needs a traced sandbox")
def test_an_executable_implementation_is_invoked_as_itself(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    folder = speccify_tool(root, "polyglot", [("echo", {"a": 1}, {"a": 1})], files={f"{PLATFORM}.py": POLYGLOT})
    (folder / f"{PLATFORM}.py").chmod(0o755)
    out = tmp_path / "site"
    result = toolcatalog("export", "-o", str(out), str(root), cwd=root)
    assert result.returncode == 0, result.stdout + result.stderr
    entry = json.loads((out / "catalog.json").read_text(encoding="utf-8"))["tools"][0]
    assert entry["status"] == "passed" and entry["claims"]["effects"]["verified"], entry["claims"]
    way = next(w for w in entry["invoke"]["ways"] if w["platform"] == PLATFORM)
    home = tmp_path / "home"
    home.mkdir()
    done = subprocess.run(way["argv"], cwd=root / way["cwd"], input='{"a": 1}', capture_output=True, text=True,
                          timeout=30, env={"PATH": os.environ["PATH"], "HOME": str(home)})
    assert not (home / "unobserved").exists(), f"the invoke block's {way['argv']} runs what the build never ran"
    assert json.loads(done.stdout) == {"a": 1}
