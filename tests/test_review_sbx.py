"""A review of the sandbox start-cost change (issue 21: dash's `ulimit`, runs started ahead behind a
gate): the holes found by attacking it, each closed. Real bubblewrap, strace and processes."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import pytest

from manifests import PLATFORM, speccify_tool
from procs import gone, no_leftovers, processes_under  # noqa: F401 (an autouse fixture)
from toolcatalog import process, sandbox
from toolcatalog.conformance import job
from toolcatalog.options import Options
from toolcatalog.sandbox import limits

FACTS = sandbox.probe("auto")
needs_gate = pytest.mark.skipif(FACTS.mechanism != "bwrap" or limits.shell() is None,
                                reason="needs bubblewrap with namespaces and dash")

ENV_PY = r"""
import json, os, sys
sys.stdin.buffer.read()
print(json.dumps(dict(os.environ), sort_keys=True))
"""


def _tool(ws: Path) -> Path:
    return speccify_tool(ws, "env", [("prints", {"x": 1}, {"ok": True})], files={f"{PLATFORM}.py": ENV_PY})


@needs_gate
def test_the_gate_does_not_empty_a_variable_of_the_tool_named_like_its_own(tmp_path: Path) -> None:
    # The gate's `read -r _` set `_`, a variable the shell exports when the environment has it
    # (`env: [_]` passes the build's own `_`): the tool got `_=` instead of its value.
    ws = tmp_path / "ws"
    folder = _tool(ws)
    ctx = job.make_context(Options(cache=False, timeout=20.0), ws)
    env = {**ctx.env, "_": "kept", "_g": "kept too"}
    argv = [sys.executable, str(folder / f"{PLATFORM}.py")]
    ctx.start_ahead(job.Start.of(argv, folder, env, False))
    assert ctx._ahead, "the run was started ahead"
    spawned = ctx.run(argv, cwd=folder, stdin=b"{}", timeout_s=20, env=env)
    assert not ctx._ahead, "the run started ahead was taken"
    assert spawned.result.exit_code == 0, spawned.result
    seen = json.loads(spawned.result.stdout)
    assert seen["_"] == "kept" and seen["_g"] == "kept too", seen
    plain = ctx.run(argv, cwd=folder, stdin=b"{}", timeout_s=20, env=env)  # started in its turn: the same
    assert json.loads(plain.result.stdout) == seen
