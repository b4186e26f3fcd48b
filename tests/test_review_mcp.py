"""Review: mcp-tools.json's hints for a smart tool's capabilities are no stronger than what was observed of them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from manifests import smart_tool, write
from sitebuild import toolcatalog
from toolcatalog import sandbox

FACTS = sandbox.probe("auto")


@pytest.mark.skipif(FACTS.mechanism is None or not FACTS.traced, reason="observed hints need a traced sandbox")
def test_a_model_backed_capability_gets_no_hint_from_the_tools_other_runs(tmp_path: Path) -> None:
    # The tool's runs (its --help, its deterministic smoke) were seen changing nothing, so the tool
    # is read-only as observed; `summarize` calls a model and never ran: listed with `mcp_list: all`,
    # nothing observed says it is read-only or harmless.
    root = tmp_path / "repo"
    smart_tool(root, "tk", smoke=["stats", "--text", "hello world"])
    write(root / "mkdocs.yml", "site_name: x\nplugins:\n  - toolcatalog:\n      mcp_list: all\n")
    out = tmp_path / "site"
    result = toolcatalog("export", "-o", str(out), str(root), cwd=root)
    assert result.returncode == 0, result.stdout + result.stderr
    entry = json.loads((out / "catalog.json").read_text(encoding="utf-8"))["tools"][0]
    assert entry["claims"]["effects"]["observed"] == "no-effects" and entry["annotations"]["readOnlyHint"] is True
    items = {t["name"]: t for t in json.loads((out / "mcp-tools.json").read_text(encoding="utf-8"))["tools"]}
    assert items["tk.stats"]["annotations"]["readOnlyHint"] is True  # deterministic: what ran is what is listed
    summarize = items["tk.summarize"]["annotations"]
    assert summarize["readOnlyHint"] is False and summarize["destructiveHint"] is True, summarize
    verified = toolcatalog("verify", str(out), cwd=root)
    assert verified.returncode == 0, verified.stdout + verified.stderr
