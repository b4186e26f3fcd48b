"""examples/agent/call_tool.py against the real demo: a real `toolcatalog export` of the project's
own examples (in this process), then the script as its own process, which picks a passed,
observed read-only, deterministic tool by the catalog's claims, builds the call from its
`invoke` block and runs it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from sitebuild import REPO, toolcatalog
from toolcatalog import sandbox

SCRIPT = REPO / "examples" / "agent" / "call_tool.py"
FACTS = sandbox.probe("auto")


@pytest.mark.skipif(FACTS.mechanism is None or not FACTS.traced, reason="the demo's runs are verified only when sandboxed and traced")
def test_agent_picks_a_verified_deterministic_tool_and_calls_it(tmp_path: Path) -> None:
    out = tmp_path / "site"
    result = toolcatalog("export", "-o", str(out), str(REPO), cwd=REPO)
    assert result.returncode == 0, result.stdout + result.stderr
    catalog = json.loads((out / "catalog.json").read_text(encoding="utf-8"))
    done = subprocess.run([sys.executable, str(SCRIPT), str(out / "catalog.json"), str(REPO)],
                          capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr
    call = json.loads(done.stdout)
    entry = next(t for t in catalog["tools"] if t["id"] == call["tool"])
    claims = entry["claims"]
    # What it picked is what the evidence supports, and nothing it must not use.
    assert entry["status"] == "passed" and claims["usable"] and claims["effects"]["read_only"] and claims["effects"]["verified"]
    kinds = {c["name"]: c["kind"] for c in claims["kind"]["capabilities"]}
    assert (kinds[call["capability"]] if call["capability"] else claims["kind"]["value"]) == "deterministic"
    assert call["tool"] != "repo-stats"  # labels `loc` deterministic without disclosing model use
    assert call["exit_code"] == 0 and isinstance(call["output"], dict)
    if call["tool"] == "textkit":
        assert call["capability"] == "stats" and call["output"].get("words") == 2  # "hello world"


def test_no_demo_claim_is_stronger_than_its_evidence(tmp_path: Path) -> None:
    out = tmp_path / "site"
    result = toolcatalog("export", "-o", str(out), str(REPO), cwd=REPO)
    assert result.returncode == 0, result.stdout + result.stderr
    catalog = json.loads((out / "catalog.json").read_text(encoding="utf-8"))
    mcp_list = json.loads((out / "mcp-tools.json").read_text(encoding="utf-8"))
    from mcp import types as mcp_types  # here: the SDK takes ≈1 s of CPU to import, paid by the worker that runs this
    # The official SDK's types accept the list and every tool, each with its annotations.
    assert len(mcp_types.ListToolsResult.model_validate(mcp_list).tools) == len(mcp_list["tools"]) > 0
    assert all(mcp_types.Tool.model_validate(t).annotations is not None for t in mcp_list["tools"])
    listed = {t["_meta"]["toolcatalog/id"] for t in mcp_list["tools"]}
    llms_text = (out / "llms.txt").read_text(encoding="utf-8")
    for tool in catalog["tools"]:
        claims, checks = tool["claims"], {c["id"]: c["status"] for c in tool["checks"]}
        kind, effects = claims["kind"], claims["effects"]
        if kind["value"] == "deterministic":
            assert "metadata.model_backed" in kind["evidence"] or checks.get("help-discloses-model-backed") == "passed", tool["id"]
        for capability in kind["capabilities"]:
            if capability["kind"] == "deterministic":
                assert checks.get("help-discloses-model-backed") == "passed", tool["id"]
        if effects["badge"] == "verified":
            assert tool["verification"]["verified_no_effects"] and tool["verification"]["sandboxed"], tool["id"]
        if tool["annotations"]["readOnlyHint"]:
            assert not tool["verification"]["caught_mutating"] and (effects["verified"] or effects["declared_read_only"]), tool["id"]
        assert tool["effects"]["read_only"] == effects["read_only"] and tool["kind"] == kind["value"], tool["id"]
        if tool["id"] in listed:
            assert claims["usable"], tool["id"]
        assert (f"(`{tool['id']}`" in llms_text.partition("## Do not use")[0]) == claims["usable"], tool["id"]
    repo_stats = next(t for t in catalog["tools"] if t["id"] == "repo-stats")
    assert repo_stats["kind"] != "deterministic" and all(c["kind"] != "deterministic" for c in repo_stats["capabilities"])
    assert all(t["kind"] != "deterministic" for t in catalog["tools"] if t["format"] == "speccify")
