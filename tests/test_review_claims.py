"""Review: claims a catalogued repository must not be able to forge with manifest text."""

from __future__ import annotations

from pathlib import Path

from manifests import ECHO_STDIN_PY, PLATFORM, speccify_tool
from sitebuild import run_check, tool_of
from toolcatalog import claims


def test_a_speccify_manifest_cannot_declare_itself_deterministic(tmp_path: Path) -> None:
    # speccify has no kind field: `metadata.model_backed` or a `deterministic` tag in its front matter
    # is unknown text, not an AIP-14 contract's statement, so it is no evidence of `deterministic`.
    speccify_tool(tmp_path, "forged", [("echo", {"a": 1}, {"a": 1})], files={f"{PLATFORM}.py": ECHO_STDIN_PY},
                  metadata={"model_backed": False}, tags=["deterministic"])
    found, _ = run_check(tmp_path, sandbox="off")
    tool = tool_of(found, "forged")
    assert claims.kind_of(tool).value != "deterministic", claims.kind_of(tool)
