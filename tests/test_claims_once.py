"""Each tool's claims (`claims.of`) are derived once per build, however many outputs read them.

The catalog entry, the per-tool file, the MCP list, llms.txt, the tool page (badges, contract,
capabilities) and the index (facets and rows) all read the same record; a build used to derive
it seven times per tool. Counted on a real MkDocs build and on the library's outputs, by
counting `claims.effects_of`, which every derivation calls once (old and new code alike).
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any, Iterator

import pytest

from manifests import speccify_text, write
from sitebuild import build, catalog, mkdocs_project
from toolcatalog import claims, pipeline
from toolcatalog.model import Tool
from toolcatalog.options import Options
from toolcatalog.statuses import Status

TOOLS = ("alpha-tool", "beta-tool", "gamma-tool")


@pytest.fixture
def derivations(monkeypatch: pytest.MonkeyPatch) -> Iterator[Counter[str]]:
    """How often each tool's claims were derived (by tool id)."""
    counts: Counter[str] = Counter()
    real = claims.effects_of

    def counted(tool: Tool) -> Any:
        counts[tool.id] += 1
        return real(tool)

    monkeypatch.setattr(claims, "effects_of", counted)
    yield counts


def _workspace(root: Path) -> Path:
    for name in TOOLS:
        write(root / ".agent" / "tools" / name / "TOOL.md", speccify_text(name))
    return root


def test_a_site_build_derives_each_tools_claims_once(tmp_path: Path, derivations: Counter[str]) -> None:
    root = mkdocs_project(_workspace(tmp_path), {"run_examples": False, "nav_tools": True})
    build(root, "-q")
    published = catalog(root)
    assert sorted(t["id"] for t in published["tools"]) == sorted(TOOLS)
    assert (root / "site" / "mcp-tools.json").is_file() and (root / "site" / "llms.txt").is_file()
    assert dict(derivations) == {name: 1 for name in TOOLS}


def test_a_second_build_derives_them_again(tmp_path: Path, derivations: Counter[str]) -> None:
    """The memo lives for one build: a rebuild (`mkdocs serve`) sees the tools as they are now."""
    root = mkdocs_project(_workspace(tmp_path), {"run_examples": False})
    build(root, "-q")
    build(root, "-q")
    assert dict(derivations) == {name: 2 for name in TOOLS}


def test_the_library_outputs_derive_each_tools_claims_once(tmp_path: Path, derivations: Counter[str]) -> None:
    built = pipeline.run(_workspace(tmp_path), Options(run_examples=False))
    files = built.outputs()
    assert "catalog.json" in files and "mcp-tools.json" in files and "llms.txt" in files
    assert dict(derivations) == {name: 1 for name in TOOLS}


def test_outside_a_memo_the_record_follows_the_tool(tmp_path: Path) -> None:
    """No memo is left active after a build: a tool changed later gets a record that says so."""
    built = pipeline.run(_workspace(tmp_path), Options(run_examples=False))
    built.outputs()
    tool = built.catalog.tools[0]
    assert claims.of(tool).usable is True
    tool.status = Status.FAILED
    after = claims.of(tool)
    assert after.status == "failed" and after.usable is False


def test_a_memo_keeps_one_record_per_tool_object(tmp_path: Path) -> None:
    built = pipeline.run(_workspace(tmp_path), Options(run_examples=False))
    with claims.once() as memo:
        first = [claims.of(t) for t in built.catalog.tools]
        again = [claims.of(t) for t in built.catalog.tools]
        with claims.once() as inner:  # nested: the same memo
            assert inner is memo
            assert claims.of(built.catalog.tools[0]) is first[0]
    assert all(a is b for a, b in zip(first, again))
    assert memo.derived == len(TOOLS)
    assert claims.of(built.catalog.tools[0]) is not first[0]  # outside: derived afresh
    assert claims.of(built.catalog.tools[0]) == first[0]  # and the same record


def test_a_site_build_derives_each_tools_coverage_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The tool page, the index and the catalog entry read one coverage record per tool."""
    from toolcatalog import coverage

    counts: Counter[str] = Counter()
    real = coverage._failure

    def counted(tool: Tool, dim: Any) -> Any:
        counts[tool.id] += 1
        return real(tool, dim)

    monkeypatch.setattr(coverage, "_failure", counted)
    root = mkdocs_project(_workspace(tmp_path), {"run_examples": False})
    build(root, "-q")
    assert all("coverage" in t for t in catalog(root)["tools"])
    assert dict(counts) == {name: 1 for name in TOOLS}
