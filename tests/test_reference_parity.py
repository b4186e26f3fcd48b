"""Reference parity on real-world manifests (issue 19, item 1), on hand-built manifests.

Each test names the reference checker's behaviour it holds us to; where we deliberately differ,
the deviation is documented in docs/formats.md and carries a warning.
"""

from __future__ import annotations

import json
from pathlib import Path

from manifests import ECHO_STDIN_PY, front_matter, speccify_tool, write
from sitebuild import run_check, tool_of
from toolcatalog.harvest import harvest
from toolcatalog.model import ERROR
from toolcatalog.options import Options
from toolcatalog.statuses import Status


def codes(tool_or_driver) -> list[str]:
    return [d.code for d in tool_or_driver.diagnostics]


# -- an invalid tool says why it is invalid first ------------------------------------------------------


def test_an_invalid_tools_status_detail_is_its_first_error_not_the_missing_implementation(tmp_path: Path) -> None:
    # Invalid (a case with no `output:` line) and without a linux.<ext>: the run would say
    # "no linux.<ext> implementation", which is not why the tool is unacceptable.
    speccify_tool(tmp_path, "broken", [("one", {"n": 1}, ...), ("two", {"n": 2}, {"n": 2})])
    catalog, _ = run_check(tmp_path)
    tool = tool_of(catalog, "broken")
    assert tool.status == Status.INVALID
    first = next(d for d in tool.diagnostics if d.severity == ERROR)
    assert tool.status_detail.startswith(first.message)
    assert "implementation" not in tool.status_detail


def test_an_invalid_tools_status_detail_is_set_before_any_check(tmp_path: Path) -> None:
    speccify_tool(tmp_path, "broken", [("one", {"n": "x"}, ...)])
    tool = tool_of(harvest(tmp_path, Options(cache=False)), "broken")
    assert tool.status == Status.INVALID
    assert tool.status_detail == next(d.message for d in tool.diagnostics if d.severity == ERROR)


def test_an_invalid_aip14_tool_without_examples_is_explained_by_its_error(tmp_path: Path) -> None:
    write(tmp_path / ".tools/bad.tool/TOOL.md", front_matter(
        {"name": "Bad", "id": "bad.tool", "description": "d", "version": "1", "inputs": {}, "outputs": {}}))
    catalog, _ = run_check(tmp_path)
    tool = tool_of(catalog, "bad.tool")
    assert tool.status == Status.INVALID
    assert "examples" not in tool.status_detail and "version" in tool.status_detail


# -- `frontmatter-position` only for a YAML mapping between two `---` ----------------------------------


def _speccify_at(tmp_path: Path, text: str):
    write(tmp_path / ".agent/tools/t/TOOL.md", text)
    (tool,) = harvest(tmp_path, Options(cache=False)).tools
    return tool


def test_a_thematic_break_in_a_body_without_front_matter_is_not_misplaced_front_matter(tmp_path: Path) -> None:
    text = "# t\n\nSome prose.\n\nMore prose.\n---\n\nA section after a rule.\n\n---\n\nThe end.\n"
    tool = _speccify_at(tmp_path, text)
    assert "frontmatter-position" not in codes(tool)
    assert "frontmatter-missing" in codes(tool)


def test_a_single_thematic_break_is_not_misplaced_front_matter(tmp_path: Path) -> None:
    tool = _speccify_at(tmp_path, "# t\n\nProse.\n\n\n---\nMore.\n")
    assert codes(tool) == ["frontmatter-missing"]


def test_front_matter_below_a_heading_is_still_misplaced_front_matter(tmp_path: Path) -> None:
    tool = _speccify_at(tmp_path, "# t\n\n---\nname: t\ndescription: d\n---\nbody\n")
    (diagnostic,) = tool.diagnostics
    assert diagnostic.code == "frontmatter-position" and diagnostic.line == 3
