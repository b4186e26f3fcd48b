"""No published label is stronger than its evidence, for every tool of the team site (the demo plus
the public corpus, where present): catalog fields, MCP hints, the index's filter attributes and
llms.txt sections are each checked against the evidence the same catalog entry carries (its runs,
checks, sandbox report and declared contract), tool by tool.

These are the rules docs/catalog-json.md states; `claims.py` is the one place they are computed,
so this reads only published files, as an agent or a reviewer would.
"""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

FAILING = {"failed", "invalid", "error"}


@pytest.fixture(scope="module")
def site(team_site: Path) -> Path:
    return team_site / "site-material"


@pytest.fixture(scope="module")
def entries(site: Path) -> list[dict[str, Any]]:
    tools: list[dict[str, Any]] = json.loads((site / "catalog.json").read_text(encoding="utf-8"))["tools"]
    assert len(tools) >= 10  # the demo alone has 16
    return tools


def _observed_clean(entry: dict[str, Any]) -> bool:
    """The sandbox saw every run, traced, and no effect."""
    sandbox = entry.get("sandbox") or {}
    return bool(sandbox.get("sandboxed")) and bool(entry["verification"]["verified_no_effects"]) \
        and not sandbox.get("caught_mutating") and not sandbox.get("undeclared")


def _caught(entry: dict[str, Any]) -> bool:
    sandbox = entry.get("sandbox") or {}
    return bool(sandbox.get("caught_mutating") or sandbox.get("undeclared"))


def test_read_only_is_declared_and_never_contradicted_or_observed(entries: list[dict[str, Any]]) -> None:
    for entry in entries:
        effects, claim = entry["effects"], entry["claims"]["effects"]
        if effects["read_only"] is True:
            assert not _caught(entry), entry["id"]
            assert effects["declared_read_only"] is True or _observed_clean(entry), entry["id"]
        if claim["verified"]:
            assert _observed_clean(entry), entry["id"]
        if _caught(entry):
            assert effects["read_only"] is not True and entry["annotations"].get("readOnlyHint") is not True, entry["id"]


def test_mcp_hints_follow_the_effects(entries: list[dict[str, Any]]) -> None:
    for entry in entries:
        hints = entry["annotations"]
        assert set(hints) >= {"readOnlyHint", "destructiveHint", "openWorldHint"}, entry["id"]  # every format
        if hints["readOnlyHint"] is True:
            assert entry["effects"]["read_only"] is True, entry["id"]
            assert hints.get("destructiveHint") is not True, entry["id"]


def test_deterministic_only_with_evidence(entries: list[dict[str, Any]]) -> None:
    for entry in entries:
        kind = entry["claims"]["kind"]
        assert entry["kind"] == kind["value"], entry["id"]
        if kind["value"] != "deterministic":
            continue
        assert kind["evidence"], entry["id"]
        if entry["capabilities"]:  # a smart tool: its --help labels them, and the disclosure check passed
            assert all(c["kind"] == "deterministic" for c in entry["capabilities"]), entry["id"]
            disclosure = [c for c in entry["checks"] if c["id"] == "help-discloses-model-backed"]
            assert disclosure and disclosure[0]["status"] == "passed", entry["id"]
    by_id = {e["id"]: e for e in entries}
    if "repo-stats" in by_id:  # the demo's: a model-backed `explain` it fails to disclose
        assert by_id["repo-stats"]["kind"] != "deterministic"


def test_passed_means_something_ran_and_usable_means_no_failure(entries: list[dict[str, Any]]) -> None:
    for entry in entries:
        if entry["status"] == "passed":
            assert entry["valid"], entry["id"]
            ran = [r for e in entry["examples"] for r in e.get("runs", []) if r.get("status") == "passed"]
            checked = [c for c in entry["checks"] if c.get("status") == "passed"]
            assert ran or checked, entry["id"]
        if entry["claims"]["usable"]:
            assert entry["valid"] and entry["status"] not in FAILING and not _caught(entry), entry["id"]


def test_the_mcp_list_offers_only_usable_tools_with_their_hints(site: Path, entries: list[dict[str, Any]]) -> None:
    by_id = {e["id"]: e for e in entries}
    listed = json.loads((site / "mcp-tools.json").read_text(encoding="utf-8"))["tools"]
    assert listed
    for item in listed:
        entry = by_id[item["_meta"]["toolcatalog/id"]]
        assert entry["claims"]["usable"], entry["id"]
        assert item["annotations"]["readOnlyHint"] == entry["annotations"]["readOnlyHint"], entry["id"]


class _Rows(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.rows: list[dict[str, str | None]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        if tag == "tr" and "data-status" in values:
            self.rows.append(values)


def test_the_index_filters_say_what_the_catalog_says(site: Path, entries: list[dict[str, Any]]) -> None:
    parser = _Rows()
    parser.feed((site / "tools" / "index.html").read_text(encoding="utf-8"))
    assert len(parser.rows) == len(entries)
    by_status: dict[tuple[str, str, str], int] = {}
    for entry in entries:
        key = (entry["status"], entry["claims"]["kind"]["value"], str(entry["claims"]["usable"]))
        by_status[key] = by_status.get(key, 0) + 1
    seen: dict[tuple[str, str, str], int] = {}
    for row in parser.rows:
        key = (str(row["data-status"]), str(row["data-kind"]), str(row["data-usable"]))
        seen[key] = seen.get(key, 0) + 1
        if row["data-read-only"] == "True":
            assert row["data-safety"] == "read-only"
    assert seen == by_status
    caught = sum(1 for e in entries if _caught(e))
    assert sum(1 for r in parser.rows if r["data-read-only"] == "True") <= sum(1 for e in entries if e["effects"]["read_only"]) + caught


def test_llms_txt_files_unusable_tools_under_do_not_use(site: Path, entries: list[dict[str, Any]]) -> None:
    text = (site / "llms.txt").read_text(encoding="utf-8")
    head, _, banned = text.partition("\n## Do not use")
    assert "## Optional" not in text
    for entry in entries:
        digest = entry["entry_digest"]
        if entry["status"] in FAILING or not entry["valid"] or _caught(entry):
            assert digest in banned and digest not in head, entry["id"]
        elif entry["claims"]["usable"]:
            assert digest in head and digest not in banned, entry["id"]
    assert re.search(r"^## Do not use", text, re.M) or not any(e["status"] in FAILING for e in entries)
