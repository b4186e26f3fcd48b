"""Smart tools kept as catalog copies (a SMART_TOOL.md with the catalog's source.json beside it,
as microsoft/amplifier-smart-tools-catalog keeps them): the manifest is checked, the tool is not
run, and nothing says it failed for lacking a descriptor that lives in its own repository."""

from __future__ import annotations

import json
from pathlib import Path

from manifests import write
from sitebuild import build, catalog, mkdocs_project
from toolcatalog import Options, prepare
from toolcatalog.conformance import engine

MANIFEST = """---
smart_tool_format: 1
name: notes-digest
version: 1.0.0
description: Digest a folder of notes.
use_cases:
  - Summarise a week of notes
platforms:
  - linux
---

Digest notes.
"""


def copy_of(root: Path, source: dict | str | None) -> None:
    write(root / "smart-tools/notes-digest/SMART_TOOL.md", MANIFEST)
    if source is not None:
        text = source if isinstance(source, str) else json.dumps(source)
        write(root / "smart-tools/notes-digest/source.json", text)


def checks_and_status(root: Path) -> tuple[dict[str, tuple[str, str]], str, str]:
    build = prepare(root, Options(cache=False))
    engine.check(build.catalog, build.options)
    [tool] = build.catalog.tools
    return {c.id: (c.status.value, c.detail) for c in tool.checks}, tool.status.value, tool.status_detail


def test_a_catalog_copy_is_checked_but_not_run_and_not_failed(tmp_path: Path) -> None:
    copy_of(tmp_path, {"repository": "https://github.com/example/notes-digest", "ref": "main"})
    checks, status, detail = checks_and_status(tmp_path)
    assert status == "not-run" and "a catalog copy" in detail and "https://github.com/example/notes-digest" in detail
    assert checks["descriptor-present"][0] == "skipped" and "catalog copy" in checks["descriptor-present"][1]
    assert checks["manifest-present"][0] == "skipped"
    assert checks["manifest-frontmatter-parses"][0] == "passed" and checks["manifest-name-format"][0] == "passed"
    assert all(s != "failed" for s, _ in checks.values())
    mkdocs_project(tmp_path)
    build(tmp_path, "--strict")  # a catalog copy fails nothing
    [entry] = catalog(tmp_path)["tools"]
    assert entry["upstream"] == {"repository": "https://github.com/example/notes-digest", "ref": "main"}
    page = (tmp_path / "site/tools/notes-digest/index.html").read_text()
    assert 'a catalog copy of <a href="https://github.com/example/notes-digest"' in page


def test_without_source_json_the_missing_descriptor_fails_as_the_kit_says(tmp_path: Path) -> None:
    copy_of(tmp_path, None)
    checks, status, _detail = checks_and_status(tmp_path)
    assert status == "failed" and checks["descriptor-present"][0] == "failed"


def test_a_source_json_without_an_https_repository_does_not_make_a_copy(tmp_path: Path) -> None:
    copy_of(tmp_path, {"repository": "javascript:alert(1)"})
    checks, status, _detail = checks_and_status(tmp_path)
    assert status == "failed" and checks["descriptor-present"][0] == "failed"
