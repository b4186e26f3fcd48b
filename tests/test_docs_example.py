"""The Python example in docs/hosts.md runs as written: the test reads it from the page."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

from manifests import workspace_all_formats, write
from sitebuild import REPO

PAGE = REPO / "docs" / "hosts.md"


def example(page: Path, heading: str) -> str:
    """The first ```python block after `heading` on `page`."""
    text = page.read_text(encoding="utf-8")
    section = text[text.index(f"\n{heading}\n"):]
    found = re.search(r"\n```python\n(.*?)\n```\n", section, re.S)
    assert found, f"no python block after {heading!r} in {page.name}"
    return found.group(1)


def test_the_library_example_runs_as_documented(tmp_path: Path) -> None:
    code = example(PAGE, "## Drive it from Python")
    workspace_all_formats(tmp_path / "examples")
    write(tmp_path / "examples/.agent/tools/broken/TOOL.md", "---\nname: Broken Name\ndescription: x\ninputs: {}\noutputs: {}\n---\n")
    result = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    # `fail_on: [invalid]` stops it with the library's message, after the files were written.
    assert result.returncode == 1, result.stderr
    assert result.stderr.strip() == "1 tool(s) have a status listed in `fail_on`: Broken Name (invalid)"
    lines = result.stdout.splitlines()
    assert re.fullmatch(r"4 tools checked, \d+ processes started", lines[0]), lines
    assert "add-numbers: passed (1 passed, 0 failed, 0 skipped (linux.py))" in lines
    assert any(line.startswith("Broken Name: invalid") for line in lines)
    catalog = json.loads((tmp_path / "public/catalog.json").read_text(encoding="utf-8"))
    assert len(catalog["tools"]) == 4 and (tmp_path / "public/mcp-tools.json").is_file()
    assert lines[-1] == f"wrote {sum(1 for p in (tmp_path / 'public').rglob('*') if p.is_file())} files"
