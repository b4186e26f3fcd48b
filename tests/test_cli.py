"""The `toolcatalog` command, run in this process (`toolcatalog.cli.main`) and once as a real one."""

from __future__ import annotations

import json
import os
from pathlib import Path

from manifests import workspace_all_formats, write
from sitebuild import REPO, build, mkdocs_project, toolcatalog, toolcatalog_process
from toolcatalog.outputs import integrity

GOLDEN = Path(__file__).parent / "golden" / "catalog.json"


def test_validate_clean_workspace_exits_0(tmp_path: Path) -> None:
    workspace_all_formats(tmp_path)
    result = toolcatalog_process("validate", str(tmp_path), cwd=REPO)  # `python -m toolcatalog.cli` works too
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.strip().splitlines()[-1] == "3 tools, 0 invalid; 1 driver; 0 errors, 0 warnings"


def test_validate_reports_each_problem_and_exits_1(tmp_path: Path) -> None:
    workspace_all_formats(tmp_path)
    write(tmp_path / ".agent/tools/bad/TOOL.md", "---\nname: bad\ndescription: [not, text]\ninputs: {}\noutputs: {}\neffects: x\n---\n")
    result = toolcatalog("validate", cwd=tmp_path)
    assert result.returncode == 1
    # Terminals get the message's words without Markdown code spans.
    assert ".agent/tools/bad/TOOL.md:3: error: description must be a string, not a list" in result.stdout
    assert "4 tools, 1 invalid" in result.stdout


def test_check_json_equals_the_plugins_catalog(tmp_path: Path) -> None:
    workspace_all_formats(tmp_path)
    mkdocs_project(tmp_path)
    build(tmp_path)
    result = toolcatalog("check", "--json", str(tmp_path), cwd=REPO)
    assert result.returncode == 0, result.stderr
    # The same document: the digest manifest it names lists the pages too, but the catalog only names it.
    printed, published = json.loads(result.stdout), json.loads((tmp_path / "site" / "catalog.json").read_text(encoding="utf-8"))
    assert printed == published


def test_catalog_matches_the_golden_file(tmp_path: Path) -> None:
    workspace_all_formats(tmp_path)
    write(tmp_path / ".tools/bad.tool/TOOL.md", "---\nname: Bad\nid: bad.tool\ndescription: d\nversion: '1'\ninputs: {}\noutputs: {}\nrunner: x\n---\n")
    result = toolcatalog("validate", "--json", str(tmp_path), cwd=REPO)
    assert result.returncode == 1
    # The runner (Python, platform) is this machine's, and the catalog digest covers it: both are
    # replaced by placeholders, so the golden file holds on any machine.
    data = json.loads(result.stdout)
    assert set(data["runner"]) == {"toolcatalog", "python", "platform"}
    assert data["catalog_digest"] == integrity.catalog_digest(data)
    data["runner"] = {"toolcatalog": "<version>", "python": "<python>", "platform": "<platform>"}
    data["catalog_digest"] = "<digest>"
    assert data["written"] == {"manifest": "catalog.digests.json"}
    portable = json.dumps(data, ensure_ascii=False, sort_keys=True, indent=2) + "\n"
    if os.environ.get("UPDATE_GOLDEN"):
        GOLDEN.write_text(portable, encoding="utf-8")
    assert portable == GOLDEN.read_text(encoding="utf-8")


def test_options_come_from_mkdocs_yml_and_flags(tmp_path: Path) -> None:
    workspace_all_formats(tmp_path)
    mkdocs_project(tmp_path, {"exclude": [".tools/", ".drivers/"]})
    # mkdocs.yml files carry tags the CLI must read without running anything.
    config = (tmp_path / "mkdocs.yml").read_text() + "extra:\n  x: !!python/name:os.system\n  y: !ENV [TC_UNSET_VAR, fallback]\n"
    (tmp_path / "mkdocs.yml").write_text(config)
    result = toolcatalog("validate", "--json", cwd=tmp_path)
    ids = [t["id"] for t in json.loads(result.stdout)["tools"]]
    assert ids == ["add-numbers", "tiny-smart"]
    # --paths replaces the configured paths; the configured excludes still apply.
    result = toolcatalog("validate", "--json", "--paths", "packages", cwd=tmp_path)
    assert [t["id"] for t in json.loads(result.stdout)["tools"]] == ["tiny-smart"]
    result = toolcatalog("validate", "--json", "--paths", ".tools", cwd=tmp_path)
    assert json.loads(result.stdout)["tools"] == []


def test_bad_usage_exits_2(tmp_path: Path) -> None:
    result = toolcatalog("validate", str(tmp_path / "missing"), cwd=tmp_path)
    assert result.returncode == 2 and "is not a folder" in result.stderr
    result = toolcatalog("validate", "--paths", "nope", str(tmp_path), cwd=tmp_path)
    assert result.returncode == 2 and "paths entry 'nope' does not exist" in result.stderr
    assert "`" not in result.stderr  # no Markdown in a terminal
    result = toolcatalog("validate", "-f", str(tmp_path / "none.yml"), cwd=tmp_path)
    assert result.returncode == 2 and "does not exist" in result.stderr


def test_options_in_mkdocs_yml_are_checked_like_mkdocs_does(tmp_path: Path) -> None:
    workspace_all_formats(tmp_path)
    write(tmp_path / "mkdocs.yml", "site_name: x\nplugins:\n  - toolcatalog:\n      paths: examples\n")
    result = toolcatalog("validate", cwd=tmp_path)
    assert result.returncode == 2
    assert "paths must be a list of text values, not 'examples'" in result.stderr and "`" not in result.stderr
    write(tmp_path / "mkdocs.yml", "site_name: x\nplugins:\n  - toolcatalog:\n      nav_title: T\n      colour: blue\n")
    result = toolcatalog("validate", cwd=tmp_path)
    assert result.returncode == 0
    assert "colour is not an option of the toolcatalog plugin; ignored" in result.stderr and "`" not in result.stderr
