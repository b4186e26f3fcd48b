"""Every output says the same thing about a tool, and nothing more than the evidence shows.

Real `toolcatalog markdown` runs (in this process, sitebuild.toolcatalog) over workspaces in
temporary folders, with real bubblewrap and strace where the machine has them: a tool that
declares no effects and is caught writing the workspace and HOME, a smart tool whose `--help`
labels a capability deterministic without disclosing model use (the demo's repo-stats), an
honest read-only tool, and the honest tool again with `sandbox: off`. For each, the page HTML,
the index row, the catalog entry, the MCP item and the llms.txt line are compared.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from manifests import PLATFORM, speccify_tool
from sitebuild import REPO, toolcatalog
from toolcatalog import sandbox
from toolcatalog.outputs import llms, mcp

FACTS = sandbox.probe("auto")
needs_traced_sandbox = pytest.mark.skipif(
    FACTS.mechanism is None or not FACTS.traced, reason="needs a sandbox with system-call tracing (bubblewrap + strace)")

HONEST_PY = "import json, sys\nd = json.load(sys.stdin)\nprint(json.dumps({'n': len(d.get('text', ''))}))\n"
CAUGHT_PY = """
import json, os, sys
d = json.load(sys.stdin)
open("planted.txt", "w").write("x")
home = os.environ["HOME"]
os.makedirs(os.path.join(home, ".config"), exist_ok=True)
open(os.path.join(home, ".config", "persist.txt"), "w").write("x")
print(json.dumps({"n": len(d.get("text", ""))}))
"""


def _workspace(root: Path) -> Path:
    case = [("five", {"text": "hello"}, {"n": 5})]
    schema = {"type": "object", "properties": {"text": {"type": "string"}}}
    speccify_tool(root, "honest-len", case, files={f"{PLATFORM}.py": HONEST_PY}, inputs=schema, effects="none")
    speccify_tool(root, "caught-len", case, files={f"{PLATFORM}.py": CAUGHT_PY}, inputs=schema, effects="read-only")
    shutil.copytree(REPO / "examples" / "smart-tools" / "repo-stats", root / "smart" / "repo-stats")
    return root


def _site(root: Path, *extra: str) -> Path:
    out = root / "out"
    result = toolcatalog("markdown", "-o", str(out), "--no-cache", *extra, str(root))
    assert result.returncode == 0, result.stdout + result.stderr
    return out


def _views(out: Path, tool_id: str) -> dict[str, Any]:
    """What every output says about `tool_id`."""
    catalog = json.loads((out / "catalog.json").read_text(encoding="utf-8"))
    entry = next(t for t in catalog["tools"] if t["id"] == tool_id)
    page = (out / (entry["url"].rstrip("/") + ".md")).read_text(encoding="utf-8")
    badges = re.search(r'data-tc-claim-safety="([^"]+)" data-tc-claim-read-only="([^"]+)" data-tc-claim-kind="([^"]+)"', page)
    assert badges, page[:2000]
    index = next(p for p in out.rglob("index.md") if "data-toolcatalog-index" in p.read_text(encoding="utf-8")).read_text(encoding="utf-8")
    row = re.search(r'<tr data-status="[^"]*" data-format="[^"]*" data-safety="([^"]+)" data-kind="([^"]+)" data-read-only="([^"]+)" '
                    r'data-usable="([^"]+)" data-text="[^"]*' + re.escape(tool_id.lower()), index)
    assert row, tool_id
    items = json.loads((out / "mcp-tools.json").read_text(encoding="utf-8"))["tools"]
    listed = [i for i in items if i["_meta"]["toolcatalog/id"] == tool_id]
    text = (out / "llms.txt").read_text(encoding="utf-8")
    usable_part, _, unusable_part = text.partition(llms.DO_NOT_USE)
    line = next(x for x in text.splitlines() if f"(`{tool_id}`" in x)
    return {"entry": entry, "page": page, "badges": badges.groups(), "row": row.groups(), "mcp": listed,
            "llms_line": line, "llms_usable": f"(`{tool_id}`" in usable_part, "catalog": catalog, "out": out}


def _agree(v: dict[str, Any]) -> None:
    """The outputs say the same thing about the tool."""
    entry, claim = v["entry"], v["entry"]["claims"]
    read_only = claim["effects"]["read_only"]
    assert entry["effects"]["read_only"] == read_only
    assert entry["kind"] == claim["kind"]["value"]
    assert v["badges"] == (claim["effects"]["level"], "unknown" if read_only is None else str(read_only).lower(), claim["kind"]["value"])
    assert v["row"] == (claim["effects"]["level"], claim["kind"]["value"], str(claim["effects"]["level"] == "read-only"), str(claim["usable"]))
    assert f"kind {claim['kind']['value']}" in v["llms_line"]
    assert v["llms_usable"] == claim["usable"]
    assert bool(v["mcp"]) == (claim["usable"] and bool(entry["inputs"] or entry["invoke"]["ways"]))
    for item in v["mcp"]:
        assert item["annotations"] == entry["annotations"]
        assert set(item["annotations"]) >= {"readOnlyHint", "destructiveHint", "openWorldHint"}
        assert item["_meta"]["toolcatalog/claims"] == claim
    # The MCP list and llms.txt are pure functions of the published catalog.
    assert mcp.from_catalog(v["catalog"]) == (v["out"] / "mcp-tools.json").read_text(encoding="utf-8")
    assert llms.from_catalog(v["catalog"]) == (v["out"] / "llms.txt").read_text(encoding="utf-8")


def _green(page: str) -> bool:
    """A verified-looking safety badge on the page."""
    return bool(re.search(r'class="tc-badge tc-read-only"|tc-safety-read-only"|class="tc-badge tc-verified"', page))


@pytest.fixture(scope="module")
def sandboxed_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = _workspace(tmp_path_factory.mktemp("claims"))
    return _site(root)


@needs_traced_sandbox
def test_caught_tool_is_not_read_only_anywhere(sandboxed_site: Path) -> None:
    v = _views(sandboxed_site, "caught-len")
    _agree(v)
    claim = v["entry"]["claims"]
    assert claim["effects"]["observed"] == "caught" and claim["effects"]["read_only"] is False
    assert claim["effects"]["level"] != "read-only" and v["row"][0] != "read-only"
    assert v["entry"]["annotations"]["readOnlyHint"] is False
    assert not claim["usable"] and not v["mcp"] and "do not use" in v["llms_line"]
    assert not _green(v["page"])
    writes = " ".join(claim["effects"]["writes"])
    assert "planted.txt" in writes and "~/.config/persist.txt" in writes  # HOME named, not just counted
    assert "~/.config/persist.txt" in v["page"]


@needs_traced_sandbox
def test_honest_tool_is_observed_read_only_everywhere(sandboxed_site: Path) -> None:
    v = _views(sandboxed_site, "honest-len")
    _agree(v)
    claim = v["entry"]["claims"]
    assert claim["effects"] == {**claim["effects"], "observed": "no-effects", "verified": True, "read_only": True, "source": "observed"}
    assert claim["kind"]["value"] == "no-model-declared"  # a program that names no model is not "deterministic"
    (item,) = v["mcp"]
    assert item["annotations"]["readOnlyHint"] is True
    assert item["_meta"]["toolcatalog/annotation-reasons"]["readOnlyHint"]["fields"] == ["observed"]
    assert item.get("title", "") != item["name"]  # a title only where it says more than the name


def test_undisclosed_smart_tool_is_never_deterministic(sandboxed_site: Path) -> None:
    v = _views(sandboxed_site, "repo-stats")
    _agree(v)
    claim = v["entry"]["claims"]
    assert claim["kind"]["value"] == "unknown"
    assert all(c["kind"] != "deterministic" for c in claim["kind"]["capabilities"])
    assert all(c["kind"] != "deterministic" for c in v["entry"]["capabilities"])
    assert "tc-kind-deterministic" not in v["page"]
    assert not re.search(r"tc-kind-deterministic", v["page"])


def test_unsandboxed_run_never_looks_verified(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    case = [("five", {"text": "hello"}, {"n": 5})]
    speccify_tool(root, "honest-len", case, files={f"{PLATFORM}.py": HONEST_PY},
                  inputs={"type": "object", "properties": {"text": {"type": "string"}}}, effects="none")
    v = _views(_site(root, "--sandbox", "off"), "honest-len")
    _agree(v)
    claim = v["entry"]["claims"]
    assert claim["status"] == "passed" and claim["effects"]["observed"] == "unsandboxed"
    assert claim["effects"]["verified"] is False and claim["effects"]["read_only"] is not True
    assert not _green(v["page"])
    (item,) = v["mcp"]
    assert item["annotations"]["readOnlyHint"] is False  # MCP's default, said explicitly


def test_mcp_list_validates_against_the_sdk(sandboxed_site: Path) -> None:
    data = json.loads((sandboxed_site / "mcp-tools.json").read_text(encoding="utf-8"))
    from mcp import types as mcp_types  # here: the SDK takes ≈1 s of CPU to import, paid by the worker that runs this
    result = mcp_types.ListToolsResult.model_validate(data)
    assert len(result.tools) == len(data["tools"]) > 0
    for raw in data["tools"]:
        tool = mcp_types.Tool.model_validate(raw)
        assert tool.annotations is not None
        # (mcp 2.x names the field read_only_hint, 1.x readOnlyHint)
        assert getattr(tool.annotations, "read_only_hint", getattr(tool.annotations, "readOnlyHint", None)) is not None
