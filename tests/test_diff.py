"""`toolcatalog diff OLD NEW`: real catalogs from two workspaces, one tool per kind of change.

Each tool in the pair differs in exactly one way (or one declared set of ways), so every
expected change code, and nothing else, must show up for it.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from manifests import write
from sitebuild import toolcatalog
from toolcatalog import catalogdiff

BASE: dict[str, Any] = {
    "description": "Looks a place up.",
    "version": "1.0.0",
    "mutates": [],
    "risk_level": 0,
    "idempotent": True,
    "inputs": {
        "type": "object",
        "required": ["query"],
        "properties": {
            "query": {"type": "string"},
            "mode": {"type": "string", "enum": ["fast", "exact", "fuzzy"]},
        },
    },
    "outputs": {
        "type": "object",
        "required": ["name"],
        "properties": {"name": {"type": "string"}, "lat": {"type": "number"}, "score": {"type": "number"}},
    },
}


def aip14(tool_id: str, data: dict[str, Any]) -> str:
    front = {"name": tool_id.title(), "id": tool_id, **data}
    return "---\n" + yaml.safe_dump(front, sort_keys=False) + "---\n\n## Description\n\nA test tool.\n"


def speccify(name: str, inputs: dict[str, Any]) -> str:
    front = {"name": name, "description": "Echoes.", "inputs": inputs, "outputs": {"type": "object"}, "effects": "none"}
    return "---\n" + yaml.safe_dump(front, sort_keys=False) + "---\n\n## Behaviour\n\nEchoes.\n"


def changed(**edits: Any) -> dict[str, Any]:
    """BASE with `edits` applied; a callable edit gets a deep copy of BASE to mutate."""
    data = copy.deepcopy(BASE)
    for key, value in edits.items():
        if callable(value):
            value(data)
        else:
            data[key] = value
    return data


def _add_required_input(d: dict[str, Any]) -> None:
    d["inputs"]["properties"]["country"] = {"type": "string"}
    d["inputs"]["required"].append("country")


def _add_optional_input_and_output(d: dict[str, Any]) -> None:
    d["inputs"]["properties"]["limit"] = {"type": "integer"}
    d["outputs"]["properties"]["lon"] = {"type": "number"}
    d["inputs"]["properties"]["mode"]["enum"].append("phonetic")


# tool id -> (old front matter, new front matter, expected change codes, breaking?)
PAIRS: dict[str, tuple[dict[str, Any], dict[str, Any], set[str], bool]] = {
    "t.required-input": (BASE, changed(x=_add_required_input),
                         {"input-required-added", "major-not-bumped"}, True),
    "t.output-removed": (BASE, changed(x=lambda d: d["outputs"]["properties"].pop("lat")),
                         {"output-removed", "major-not-bumped"}, True),
    "t.output-retyped": (BASE, changed(x=lambda d: d["outputs"]["properties"]["score"].update(type="string")),
                         {"output-type-changed", "major-not-bumped"}, True),
    "t.enum-narrowed": (BASE, changed(x=lambda d: d["inputs"]["properties"]["mode"].update(enum=["fast", "exact"])),
                        {"input-enum-narrowed", "major-not-bumped"}, True),
    "t.mutates-widened": (
        changed(mutates=["workspace:/cache"], approval="on-mutate", risk_level=1),
        changed(mutates=["workspace:/cache", "network:geo.example.com"], approval="on-mutate", risk_level=1, version="1.1.0"),
        {"mutates-widened", "version-changed", "major-not-bumped"}, True,
    ),
    "t.risk-raised": (BASE, changed(risk_level=2, version="1.0.1"), {"risk-raised", "version-changed", "major-not-bumped"}, True),
    "t.major-bumped": (BASE, changed(x=_add_required_input, version="2.0.0"), {"input-required-added", "version-changed"}, True),
    "t.non-breaking": (
        BASE,
        changed(x=_add_optional_input_and_output, description="Looks a place up, faster.", version="1.1.0"),
        {"input-optional-added", "output-added", "input-enum-widened", "description-changed", "version-changed"}, False,
    ),
    "t.unchanged": (BASE, BASE, set(), False),
}


@pytest.fixture(scope="module")
def catalogs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("diff")
    for side in ("old", "new"):
        workspace = root / side
        for tool_id, (old, new, _codes, _breaking) in PAIRS.items():
            write(workspace / f".tools/{tool_id}/TOOL.md", aip14(tool_id, old if side == "old" else new))
        if side == "old":
            write(workspace / ".tools/t.removed/TOOL.md", aip14("t.removed", BASE))
            write(workspace / ".agent/tools/echo/TOOL.md", speccify("echo", {"type": "object", "properties": {"text": {"type": "string"}}}))
        else:
            write(workspace / ".tools/t.added/TOOL.md", aip14("t.added", BASE))
            write(workspace / ".agent/tools/echo/TOOL.md", speccify("echo", {"type": "object", "required": ["text"], "properties": {"text": {"type": "string"}}}))
        result = toolcatalog("export", "--no-run", "-o", str(root / f"{side}-site"), str(workspace))
        assert result.returncode == 0, result.stderr
        data = json.loads((root / f"{side}-site/catalog.json").read_text(encoding="utf-8"))
        assert all(t["valid"] for t in data["tools"]), [(t["id"], t["diagnostics"]) for t in data["tools"] if not t["valid"]]
    return root / "old-site/catalog.json", root / "new-site/catalog.json"


def test_every_listed_change_is_found_and_classified(catalogs: tuple[Path, Path]) -> None:
    old, new = catalogs
    result = toolcatalog("diff", "--json", str(old), str(new))
    assert result.returncode == 1, result.stderr  # something breaks
    report = json.loads(result.stdout)
    assert report["breaking"] is True
    assert [t["id"] for t in report["added"]] == ["t.added"]
    assert [t["id"] for t in report["removed"]] == ["t.removed"]
    by_id = {t["id"]: t for t in report["changed"]}
    for tool_id, (_old, _new, codes, breaking) in PAIRS.items():
        if not codes:
            assert tool_id not in by_id
            continue
        entry = by_id[tool_id]
        # Coverage follows the contract (a new input is a goal never met): test_coverage_changes has those.
        assert {c["code"] for c in entry["changes"] if not c["code"].startswith("coverage-")} == codes, tool_id
        assert entry["breaking"] is breaking, tool_id
    # Which individual changes break.
    flat = {(t["id"], c["code"]): c for t in report["changed"] for c in t["changes"]}
    assert flat[("t.required-input", "input-required-added")]["path"] == "inputs.country"
    assert flat[("t.required-input", "input-required-added")]["breaking"] is True
    assert flat[("t.output-removed", "output-removed")]["path"] == "outputs.lat"
    assert flat[("t.output-retyped", "output-type-changed")]["message"] == "output type changed: number → string"
    assert "'exact'" not in flat[("t.enum-narrowed", "input-enum-narrowed")]["message"]
    assert flat[("t.enum-narrowed", "input-enum-narrowed")]["message"] == 'input enum lost "fuzzy"'
    assert flat[("t.mutates-widened", "mutates-widened")]["message"] == "now also mutates network:geo.example.com"
    assert flat[("t.risk-raised", "risk-raised")]["message"] == "risk level 0 → 2"
    assert "stayed 1.0.0" in flat[("t.required-input", "major-not-bumped")]["message"]
    for code in ("input-optional-added", "output-added", "input-enum-widened", "description-changed", "version-changed"):
        assert flat[("t.non-breaking", code)]["breaking"] is False, code
    # speccify has no versioning rule: the breaking change is reported without a version complaint.
    assert {c["code"] for c in by_id["echo"]["changes"]} == {"input-now-required"}
    assert by_id["echo"]["breaking"] is True
    assert report["counts"] == {
        "added": 1, "removed": 1, "changed": len(by_id),
        "breaking_changes": 1 + sum(c["breaking"] for t in report["changed"] for c in t["changes"]),
        "other_changes": 1 + sum(not c["breaking"] for t in report["changed"] for c in t["changes"]),
    }


def test_markdown_report_is_ready_for_a_pull_request(catalogs: tuple[Path, Path]) -> None:
    old, new = catalogs
    result = toolcatalog("diff", str(old), str(new))
    assert result.returncode == 1
    text = result.stdout
    assert text.startswith("## Tool catalog changes\n\n**")
    assert "### Removed tools (breaking)\n\n- `t.removed` T.Removed 1.0.0" in text
    assert "### Added tools\n\n- `t.added` T.Added 1.0.0" in text
    assert "### `t.required-input` T.Required-Input (1.0.0) — breaking" in text
    assert "- **breaking**: `inputs.country`: new required input" in text
    assert "### `t.non-breaking` T.Non-Breaking (1.0.0 → 1.1.0)\n" in text
    assert "- non-breaking: `inputs.limit`: new optional input" in text
    assert "t.unchanged" not in text
    # Breaking changes are listed before the others.
    section = text.split("### `t.mutates-widened`")[1].split("###")[0]
    assert section.index("**breaking**") < section.index("non-breaking")


def test_only_non_breaking_changes_exit_0(tmp_path: Path, catalogs: tuple[Path, Path]) -> None:
    old, new = (json.loads(p.read_text(encoding="utf-8")) for p in catalogs)
    keep = {"t.non-breaking", "t.unchanged"}
    for data, path in ((old, tmp_path / "old.json"), (new, tmp_path / "new.json")):
        data["tools"] = [t for t in data["tools"] if t["id"] in keep]
        path.write_text(json.dumps(data), encoding="utf-8")
    result = toolcatalog("diff", str(tmp_path / "old.json"), str(tmp_path / "new.json"))
    assert result.returncode == 0, result.stdout
    assert "**No breaking changes.**" in result.stdout
    result = toolcatalog("diff", str(catalogs[0]), str(catalogs[0].parent))  # a folder holding catalog.json
    assert result.returncode == 0 and "No tool changed." in result.stdout


def test_unreadable_catalogs_are_usage_errors(tmp_path: Path) -> None:
    write(tmp_path / "bad.json", "{not json")
    write(tmp_path / "other.json", '{"tools": "nope"}')
    write(tmp_path / "v9.json", '{"version": 9, "tools": []}')
    for name, message in (("missing.json", "no such catalog file"), ("bad.json", "not a readable JSON file"),
                          ("other.json", "not a tool catalog"), ("v9.json", "version 9 catalog")):
        result = toolcatalog("diff", str(tmp_path / name), str(tmp_path / name))
        assert result.returncode == 2 and message in result.stderr, (name, result.stderr)


@pytest.mark.parametrize(
    "old, new, code, breaking",
    [
        ({"type": "string"}, {"type": ["string", "null"]}, "input-type-widened", False),
        ({"type": "number"}, {"type": "integer"}, "input-type-narrowed", True),
        ({"type": "string", "maxLength": 10}, {"type": "string", "maxLength": 5}, "input-constraint-tightened", True),
        ({"type": "string", "maxLength": 10}, {"type": "string"}, "input-constraint-loosened", False),
        ({"type": "string"}, {"type": "string", "pattern": "^a"}, "input-pattern-added", True),
    ],
)
def test_input_schema_rules(old: dict[str, Any], new: dict[str, Any], code: str, breaking: bool) -> None:
    out: list[catalogdiff.Change] = []
    catalogdiff.compare_schema({"type": "object", "properties": {"v": old}}, {"type": "object", "properties": {"v": new}}, "inputs", "input", out)
    assert [(c.code, c.breaking, c.path) for c in out] == [(code, breaking, "inputs.v")]


def test_output_rules_are_the_mirror_image() -> None:
    def run(old: dict[str, Any], new: dict[str, Any]) -> list[tuple[str, bool]]:
        out: list[catalogdiff.Change] = []
        catalogdiff.compare_schema(old, new, "outputs", "output", out)
        return [(c.code, c.breaking) for c in out]

    enum = lambda *v: {"type": "object", "properties": {"s": {"enum": list(v)}}}  # noqa: E731
    assert run(enum("a"), enum("a", "b")) == [("output-enum-widened", True)]  # consumers may not handle "b"
    assert run(enum("a", "b"), enum("a")) == [("output-enum-narrowed", False)]
    req = lambda *r: {"type": "object", "required": list(r), "properties": {"a": {}, "b": {}}}  # noqa: E731
    assert run(req("a", "b"), req("a")) == [("output-now-optional", True)]
    assert run(req("a"), req("a", "b")) == [("output-now-required", False)]
    nested_old = {"type": "object", "properties": {"items": {"type": "array", "items": {"type": "object", "properties": {"id": {"type": "string"}}}}}}
    nested_new = copy.deepcopy(nested_old)
    del nested_new["properties"]["items"]["items"]["properties"]["id"]
    out: list[catalogdiff.Change] = []
    catalogdiff.compare_schema(nested_old, nested_new, "outputs", "output", out)
    assert [(c.code, c.path) for c in out] == [("output-removed", "outputs.items[].id")]


def test_markdown_escapes_untrusted_text() -> None:
    old = {"version": 1, "tools": [{"id": "x`y", "name": "A *bold* <img src=x>", "version": "1.0.0", "format": "speccify"}]}
    new = {"version": 1, "tools": []}
    text = catalogdiff.diff(old, new).markdown()
    assert "``x`y``" in text and "A \\*bold\\* \\<img src=x\\>" in text


def test_coverage_changes_are_reviewable_and_never_breaking() -> None:
    def entry(total: float, inputs: float, uncovered: list[str]) -> dict[str, Any]:
        dims = {"inputs": {"score": inputs, "covered": 0, "goals": 0, "uncovered": uncovered, "uncovered_count": len(uncovered)}}
        return {"id": "t", "name": "t", "format": "speccify", "coverage": {"total": total, "dimensions": dims, "undeclared_outputs": []}}

    changes = catalogdiff.compare_tool(entry(0.8, 1.0, []), entry(0.5, 0.5, ["`precision` never set"]))
    assert [(c.code, c.path, c.message, c.breaking) for c in changes] == [
        ("coverage-dropped", "coverage", "coverage 80% → 50%", False),
        ("coverage-dropped", "coverage.inputs", "inputs coverage 100% → 50%", False),
        ("coverage-uncovered-added", "coverage.inputs", "newly uncovered: `precision` never set", False),
    ]
    assert catalogdiff.compare_tool(entry(0.5, 0.5, ["a"]), entry(0.8, 1.0, [])) == []  # better coverage is no finding
    old = entry(0.5, 0.5, [])
    del old["coverage"]  # a catalog from before coverage: nothing to compare
    assert catalogdiff.compare_tool(old, entry(0.1, 0.1, ["x"])) == []
