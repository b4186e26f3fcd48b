"""The outputs for agents: catalog.json v2 (and its schema), tools/<id>.json, mcp-tools.json, llms.txt.

They are built by real MkDocs builds and by `toolcatalog export`, validated against the shipped
catalog schema and MCP revision 2026-07-28's published schema (tests/mcprevision.py), and compared
byte for byte (two builds, cold and warm cache, plugin and command line).
"""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import jsonschema
import pytest
from mkdocs.exceptions import PluginError

from mcprevision import validate_tools_list
from manifests import workspace_all_formats, write
from sitebuild import REPO, agent_outputs, build, files_under, mkdocs_project, toolcatalog
from toolcatalog import outputs, pipeline
from toolcatalog.files import file_digest
from toolcatalog.statuses import Status
from toolcatalog.outputs import catalog_json, llms, mcp
from toolcatalog.outputs.site import Site
from toolcatalog.placement import place
from toolcatalog.safety import annotations, hints as derive_hints
from toolcatalog.harvest import harvest
from toolcatalog.model import Catalog, Effects, Requirement, Tool
from toolcatalog.options import Options
from toolcatalog.plugin import ToolCatalogPlugin
from toolcatalog import sealing

SCHEMA = json.loads((REPO / "plugin/toolcatalog/schemas/catalog.schema.json").read_text(encoding="utf-8"))

NON_ASCII_TOOL = """
---
name: creme-slug
description: Turns “Crème brûlée” into a slug — accents folded, naïvely.
inputs:
  type: object
  required: [title]
  properties:
    title: {type: string}
outputs:
  type: object
  properties:
    slug: {type: string}
effects: none
---

## Examples

### accents
input: {"title": "Crème"}
output: {"slug": "creme"}
"""


def validate_catalog(document: Any) -> None:
    jsonschema.Draft202012Validator(SCHEMA).validate(document)


def validate_tool_file(entry: Any) -> None:
    schema = {**SCHEMA, "$ref": "#/$defs/tool"}
    for key in ("required", "properties", "additionalProperties", "type"):
        schema.pop(key)
    jsonschema.Draft202012Validator(schema).validate(entry)


def validate_mcp(document: Any) -> None:
    validate_tools_list(document)


# -- the demo site -------------------------------------------------------------------------------------
def test_shipped_schema_is_a_valid_2020_12_schema() -> None:
    jsonschema.Draft202012Validator.check_schema(SCHEMA)
    assert SCHEMA["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    # Our shapes are closed; enums pin the formats, statuses and severities.
    for name in ("tool", "example", "run", "driver", "diagnostic", "effects", "annotations", "check", "requirement",
                 "verification", "provenance", "counts", "annotationReason"):
        assert SCHEMA["$defs"][name]["additionalProperties"] is False, name
    assert SCHEMA["$defs"]["tool"]["properties"]["format"]["enum"] == ["speccify", "aip-14", "smart-tool"]
    assert SCHEMA["$defs"]["diagnostic"]["properties"]["severity"]["enum"] == ["error", "warning"]
    assert set(SCHEMA["$defs"]["status"]["enum"]) == set(Status.values())


def test_demo_site_publishes_every_output_and_each_validates(demo_site: Path) -> None:
    data = json.loads((demo_site / "catalog.json").read_text(encoding="utf-8"))
    validate_catalog(data)
    assert data["$schema"] == catalog_json.SCHEMA_ID  # absolute and stable, whatever the site
    assert data["version"] == 2 and data["generator"]["name"] == "mkdocs-toolcatalog"
    assert "generated_at" not in data
    ids = [(t["id"], t["source"]) for t in data["tools"]]
    assert ids == sorted(ids) and len(ids) >= 10
    assert sum(data["counts"]["by_status"].values()) == data["counts"]["tools"] == len(ids)
    # The schema is published unchanged.
    assert (demo_site / "schemas/catalog-v2.schema.json").read_bytes() == (REPO / "plugin/toolcatalog/schemas/catalog.schema.json").read_bytes()

    for tool in data["tools"]:
        assert tool["digest"] == file_digest(REPO / tool["source"])
        assert tool["page"] == tool["url"] and (demo_site / tool["url"] / "index.html").is_file()
        assert tool["json"] and tool["json"].startswith("tools/")
        one = json.loads((demo_site / tool["json"]).read_text(encoding="utf-8"))
        assert one.pop("$schema") == catalog_json.SCHEMA_ID + "#/$defs/tool"
        assert one == tool
        validate_tool_file(one)

    mcp = json.loads((demo_site / "mcp-tools.json").read_text(encoding="utf-8"))
    validate_mcp(mcp)
    exported = {t["_meta"]["toolcatalog/id"] for t in mcp["tools"]}
    omitted = {d["path"] for d in data["diagnostics"] if d["code"] == "mcp-omitted"}
    for tool in data["tools"]:
        # Every tool is exported, left out with a diagnostic naming its manifest, or one an agent
        # should not use (its `claims.usable_why` says why; `mcp_list: all` lists it).
        left_out = tool["source"] in omitted or not tool["claims"]["usable"]
        assert (tool["id"] in exported) != left_out, tool["id"]
        if not tool["valid"]:
            assert tool["id"] not in exported

    llms = (demo_site / "llms.txt").read_text(encoding="utf-8")
    assert llms.startswith("# mkdocs-toolcatalog\n\n> A verified catalog of agent-tool manifests, built by MkDocs.\n")
    assert "\n## Tools\n\n" in llms
    for tool in data["tools"]:
        assert f"]({tool['url']})" in llms and f"[JSON]({tool['json']})" in llms


def test_demo_annotations_follow_the_contract(demo_site: Path) -> None:
    data = json.loads((demo_site / "catalog.json").read_text(encoding="utf-8"))
    tools = {t["id"]: t for t in data["tools"]}
    assert tools["text.redact-emails"]["annotations"] == {
        "readOnlyHint": True, "destructiveHint": False, "idempotentHint": True, "openWorldHint": False,
    }
    # Appending is a change no contract field calls additive: destructive, MCP's default.
    assert tools["workspace.notes-append"]["annotations"] == {
        "readOnlyHint": False, "destructiveHint": True, "idempotentHint": False, "openWorldHint": False,
    }
    # risk_level 3 and network requirements: destructive and open-world, although invalid.
    assert tools["release.publish"]["annotations"] == {
        "readOnlyHint": False, "destructiveHint": True, "idempotentHint": False, "openWorldHint": True,
    }
    assert tools["release.publish"]["annotation_reasons"]["destructiveHint"]["fields"] == ["risk_level"]
    for tool in tools.values():
        assert set(tool["annotation_reasons"]) == set(tool["annotations"]), tool["id"]  # every hint has its reason
        if tool["format"] != "aip-14":  # no declared class: read-only only as observed, else MCP's defaults
            observed = tool["claims"]["effects"]["source"] == "observed" and tool["claims"]["effects"]["read_only"]
            assert tool["annotations"]["readOnlyHint"] is bool(observed), tool["id"]
            assert tool["annotation_reasons"]["readOnlyHint"]["fields"] == (["observed"] if observed else []), tool["id"]


# -- reproducibility --------------------------------------------------------------------------------
def _repro_workspace(root: Path) -> Path:
    workspace_all_formats(root)
    write(root / ".agent/tools/creme-slug/TOOL.md", NON_ASCII_TOOL)
    mkdocs_project(root)
    return root


def test_two_builds_cold_and_warm_cache_give_the_same_bytes(tmp_path: Path) -> None:
    _repro_workspace(tmp_path)
    build(tmp_path)
    first = agent_outputs(tmp_path / "site")
    assert first and "catalog.json" in first
    build(tmp_path)  # warm: every result from the cache
    assert agent_outputs(tmp_path / "site") == first
    shutil.rmtree(sealing.default_cache_dir(tmp_path))
    build(tmp_path)  # cold again
    assert agent_outputs(tmp_path / "site") == first

    text = (tmp_path / "site/catalog.json").read_text(encoding="utf-8")  # as published (agent_outputs puts placeholders in)
    data = json.loads(text)
    validate_catalog(data)
    statuses = {t["id"]: t["status"] for t in data["tools"]}
    assert statuses["add-numbers"] == "passed" and statuses["text.echo"] == "passed"  # results really came from runs
    # Nothing machine-specific: no absolute paths, no timings, argv or stderr.
    assert str(tmp_path) not in text and os.path.realpath(tmp_path) not in text
    assert str(Path.home()) + "/" not in text
    assert '"duration_ms"' not in text and '"stderr"' not in text and '"generated_at"' not in text
    runs = [r for t in data["tools"] for e in t["examples"] for r in e["runs"]]
    assert runs and all(set(r) <= {"status", "detail", "driver", "actual", "exit_code", "sandbox", "observed", "undeclared_effects"} for r in runs)
    # UTF-8 without escapes, sorted keys, trailing newline.
    assert "“Crème brûlée” into a slug — accents folded, naïvely." in text and "\\u" not in text
    assert text == catalog_json.dumps(data)


def test_source_date_epoch_adds_generated_at(tmp_path: Path) -> None:
    workspace_all_formats(tmp_path)
    result = toolcatalog("export", "--no-run", "-o", str(tmp_path / "out"), str(tmp_path), cwd=REPO, env={"SOURCE_DATE_EPOCH": "1700000000"})
    assert result.returncode == 0, result.stderr
    data = json.loads((tmp_path / "out/catalog.json").read_text(encoding="utf-8"))
    assert data["generated_at"] == "2023-11-14T22:13:20Z"
    validate_catalog(data)
    result = toolcatalog("export", "--no-run", "-o", str(tmp_path / "out"), str(tmp_path), cwd=REPO, env={"SOURCE_DATE_EPOCH": "yesterday"})
    assert result.returncode == 2 and "SOURCE_DATE_EPOCH" in result.stderr


# -- export == build ---------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "plugin, extra",
    [
        ({}, {}),
        (
            {"catalog_file": "api/v1/catalog.json", "tool_json_dir": "api/v1/tools", "mcp_file": "api/mcp.json", "llms_file": "llms.txt"},
            {"site_url": "https://tools.example.org/docs", "use_directory_urls": False, "site_description": "Our agents' tools."},
        ),
    ],
    ids=["defaults", "custom-paths-site-url"],
)
def test_export_writes_the_same_bytes_as_the_build(tmp_path: Path, plugin: dict[str, str], extra: dict[str, Any]) -> None:
    _repro_workspace(tmp_path)
    mkdocs_project(tmp_path, plugin, **extra)
    build(tmp_path)
    site = agent_outputs(tmp_path / "site", plugin)
    result = toolcatalog("export", "-o", str(tmp_path / "exported"), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    raw = files_under(tmp_path / "exported")
    exported = agent_outputs(tmp_path / "exported", plugin)  # the catalogs' manifests differ by the site's pages
    assert sorted(exported) == sorted(site) == sorted(raw)
    for rel, data in exported.items():
        assert data == site[rel], rel
    exported = raw
    catalog_path = plugin.get("catalog_file", "catalog.json")
    data = json.loads(exported[catalog_path])
    validate_catalog(data)
    validate_mcp(json.loads(exported[plugin.get("mcp_file", "mcp-tools.json")]))
    if extra:
        base = "https://tools.example.org/docs/"
        assert data["$schema"] == catalog_json.SCHEMA_ID
        echo = next(t for t in data["tools"] if t["id"] == "text.echo")
        assert echo["url"] == "tools/text.echo.html"
        assert echo["page"] == base + "tools/text.echo.html"
        assert echo["json"] == base + "api/v1/tools/text.echo.json"
        entry = json.loads(exported["api/v1/tools/text.echo.json"])
        assert entry["$schema"] == catalog_json.SCHEMA_ID + "#/$defs/tool"
        llms = exported["llms.txt"].decode("utf-8")
        assert "> Our agents' tools." in llms and f"]({base}tools/text.echo.html)" in llms
    else:
        assert data["$schema"] == catalog_json.SCHEMA_ID  # absolute and stable, whatever the site


def test_nested_catalog_points_at_its_schema_by_its_id(tmp_path: Path) -> None:
    workspace_all_formats(tmp_path)
    mkdocs_project(tmp_path, {"catalog_file": "api/v1/catalog.json", "run_examples": False})
    build(tmp_path)
    data = json.loads((tmp_path / "site/api/v1/catalog.json").read_text(encoding="utf-8"))
    assert data["$schema"] == catalog_json.SCHEMA_ID
    published = json.loads((tmp_path / "site/schemas/catalog-v2.schema.json").read_text(encoding="utf-8"))
    assert published["$id"] == catalog_json.SCHEMA_ID


def test_each_output_can_be_turned_off(tmp_path: Path) -> None:
    workspace_all_formats(tmp_path)
    mkdocs_project(tmp_path, {"catalog_file": "", "tool_json_dir": "", "mcp_file": "", "llms_file": "", "run_examples": False})
    build(tmp_path)
    assert agent_outputs(tmp_path / "site") == {}
    assert not (tmp_path / "site/schemas").exists()
    result = toolcatalog("export", "--no-run", "-o", str(tmp_path / "out"), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert not (tmp_path / "out").exists() or files_under(tmp_path / "out") == {}
    # Per-tool files alone still publish the schema they point at.
    mkdocs_project(tmp_path, {"catalog_file": "", "mcp_file": "", "llms_file": "", "run_examples": False})
    build(tmp_path)
    assert sorted(agent_outputs(tmp_path / "site")) == [
        "schemas/catalog-v2.schema.json", "tools/add-numbers.json", "tools/text.echo.json", "tools/tiny-smart.json",
    ]
    # Without an MCP file, the catalog carries no MCP diagnostics.
    mkdocs_project(tmp_path, {"mcp_file": "", "run_examples": False})
    build(tmp_path)
    data = json.loads((tmp_path / "site/catalog.json").read_text(encoding="utf-8"))
    assert not [d for d in data["diagnostics"] if d["code"] == "mcp-omitted"]


@pytest.mark.parametrize(
    "plugin, message",
    [
        ({"mcp_file": "../outside.json"}, "`mcp_file` must be a path inside the site"),
        ({"llms_file": "/etc/llms.txt"}, "`llms_file` must be a path inside the site"),
        ({"tool_json_dir": "../x"}, "`tool_json_dir` must be a path inside the site"),
        ({"mcp_file": "catalog.json"}, "give each output its own file"),
        ({"llms_file": "docs/"}, "must name a file"),
    ],
)
def test_bad_output_options_fail_the_build(tmp_path: Path, plugin: dict[str, str], message: str) -> None:
    workspace_all_formats(tmp_path)
    mkdocs_project(tmp_path, {**plugin, "run_examples": False})
    message = message.replace("`", "")  # every host prints code spans as their words
    result = build(tmp_path, check=False)
    assert result.returncode != 0 and message in result.stderr, result.stderr
    result = toolcatalog("export", "--no-run", "-o", str(tmp_path / "out"), cwd=tmp_path)
    assert result.returncode == 2 and message in result.stderr


def test_a_docs_file_at_an_output_path_wins(tmp_path: Path) -> None:
    workspace_all_formats(tmp_path)
    mkdocs_project(tmp_path, {"run_examples": False})
    write(tmp_path / "docs/llms.txt", "# mine\n")
    build(tmp_path)
    assert (tmp_path / "site/llms.txt").read_text() == "# mine\n"
    assert (tmp_path / "site/mcp-tools.json").is_file()


# -- schema mismatch is an error, not a warning ------------------------------------------------------
def test_a_catalog_that_breaks_the_schema_raises(tmp_path: Path) -> None:
    workspace_all_formats(tmp_path)
    catalog = harvest(tmp_path)
    placement = place(catalog, Options())
    catalog.tools[0].version = 3  # not a type the schema allows
    with pytest.raises(outputs.ExportError, match=r"does not match catalog.schema.json.*version"):
        outputs.render(catalog, Options())

    plugin = ToolCatalogPlugin()
    errors, _warnings = plugin.load_config({})
    assert not errors
    plugin.build = pipeline.Build(tmp_path, Options(), Site(), catalog, placement)
    config = SimpleNamespace(site_url=None, site_name="x", site_description=None, docs_dir=str(tmp_path / "docs"), site_dir=str(tmp_path / "site"))
    with pytest.raises(PluginError, match="does not match"):
        for step in plugin.on_post_build.methods:  # CombinedEvent: the outputs first, the digest manifest last
            step(config)
    assert not (tmp_path / "site").exists()


# -- MCP mapping ---------------------------------------------------------------------------------------
def _tool(tool_id: str, inputs: Any = None, outputs: Any = None, effects: Effects | None = None, **kw: Any) -> Tool:
    tool = Tool(id=tool_id, name=kw.pop("name", tool_id), format=kw.pop("format", "aip-14"), source=f"{tool_id}/TOOL.md",
                abs_path=Path("/nonexistent") / tool_id, inputs=inputs, outputs=outputs, effects=effects or Effects(), **kw)
    tool.url = f"tools/{tool_id}/"
    return tool


OBJ = {"type": "object", "properties": {"x": {"type": "string"}}}


RO = {"readOnlyHint": True, "destructiveHint": False}
RW = {"readOnlyHint": False, "destructiveHint": True}
CLOSED, OPEN = {"openWorldHint": False}, {"openWorldHint": True}


@pytest.mark.parametrize(
    "effects, hints",
    [
        (Effects(mutates=[], risk_level=0, idempotent=True), {**RO, "idempotentHint": True, **CLOSED}),
        (Effects(mutates=[], risk_level=2), {**RW, **OPEN}),  # risk 2: external side effects
        (Effects(mutates=["workspace:/notes"], risk_level=1, idempotent=False), {**RW, "idempotentHint": False, **CLOSED}),
        (Effects(mutates=["db:rows.delete"], risk_level=1), {**RW, **CLOSED}),
        (Effects(mutates=["workspace:/x"], risk_level=3), {**RW, **CLOSED}),
        (Effects(mutates=["network:api.example.com"], risk_level=2), {**RW, **OPEN}),
        (Effects(mutates=[], risk_level=0, requires=[Requirement("network", "api.example.com")]), {**RO, **OPEN}),
        (Effects(mutates=[], risk_level=0, requires=[Requirement("secret", "API_KEY")]), RO),  # a secret: the world is unknown
        (Effects(mutates=[], risk_level=0, requires=[Requirement("tool", "other")]), RO),
        (Effects(text="none"), {}),  # speccify: free text is never mapped
        (Effects(requires=[Requirement("dependency", "x")]), {}),  # smart tools
        (Effects(mutates=["workspace:/removed-items"]), {**RW, **CLOSED}),  # "removed" is not "remove"
    ],
)
def test_annotations_claim_only_what_the_contract_says(effects: Effects, hints: dict[str, bool]) -> None:
    assert annotations(effects) == hints
    for name, hint in derive_hints(effects).items():
        assert hint.fields and hint.reason, name  # every hint says which contract fields it follows from


def test_destructive_reasons_name_the_field_that_decides() -> None:
    assert derive_hints(Effects(mutates=["workspace:/x"], risk_level=3))["destructiveHint"].fields == ("risk_level",)
    delete = derive_hints(Effects(mutates=["db:rows.delete"], risk_level=1))["destructiveHint"]
    assert delete.fields == ("mutates",) and "`db:rows.delete`" in delete.reason


def test_a_read_only_contract_caught_says_it_was_seen_changing_or_trying() -> None:
    # A write the sandbox refused is an attempt, not a change: the reason says both (outside a
    # sandbox the attempt would succeed, so the hint is not read-only either way).
    caught = derive_hints(Effects(mutates=[], risk_level=0), caught_mutating=True)["readOnlyHint"]
    assert caught.value is False and caught.fields == ("mutates", "observed")
    assert "to change something, to try to" in caught.reason, caught.reason


def test_mcp_names_inputs_and_omissions() -> None:
    assert mcp.mcp_name("text.echo") == "text.echo"
    assert mcp.mcp_name("Slugify Tool/v2") == "Slugify_Tool_v2"
    assert mcp.mcp_name("ünïcode") == "_n_code"
    assert mcp.mcp_name("///") == "tool"
    assert len(mcp.mcp_name("x" * 300)) == 128

    tools = [
        _tool("a b", OBJ),  # -> a_b
        _tool("a_b", OBJ),  # clashes with the mapped name above -> a_b_2
        _tool("no-type", {"properties": {"x": {"type": "string"}}}),  # object keywords, no type: type set
        _tool("nullable", {"type": ["object", "null"], "properties": {}}),
        _tool("scalar", {"type": "string"}),  # cannot be MCP arguments: left out
        _tool("boolean", True),
        _tool("no-inputs", None, format="smart-tool"),
        _tool("out-scalar", OBJ, {"type": "string"}),
        _tool("out-object", OBJ, {"type": "object", "properties": {"y": {"type": "number"}}}, description="Does y."),
    ]
    broken = _tool("broken", OBJ)
    broken.error("bad")
    catalog = Catalog(root=Path("/nonexistent"), tools=sorted([*tools, broken], key=lambda t: t.id))
    data = catalog_json.document(catalog, Options(), Site(), mcp.plan(catalog).diagnostics)
    entries = {(t["id"], t["source"]): t for t in data["tools"]}
    document = mcp.document(mcp.plan(catalog), Site(), ttl_ms=60_000, cache_scope="private", entries=entries)
    validate_mcp(document)
    assert (document["ttlMs"], document["cacheScope"], document["resultType"]) == (60_000, "private", "complete")
    by_id = {t["_meta"]["toolcatalog/id"]: t for t in document["tools"]}
    assert sorted(by_id) == ["a b", "a_b", "no-type", "nullable", "out-object", "out-scalar"]
    assert by_id["a b"]["name"] == "a_b" and by_id["a_b"]["name"] == "a_b_2"
    dialect = "https://json-schema.org/draft/2020-12/schema"
    assert by_id["no-type"]["inputSchema"] == {"$schema": dialect, "type": "object", "properties": {"x": {"type": "string"}}}
    assert by_id["nullable"]["inputSchema"]["type"] == "object"
    # The revision allows any JSON Schema as outputSchema, not only objects.
    assert by_id["out-scalar"]["outputSchema"] == {"$schema": dialect, "type": "string"}
    assert by_id["out-object"]["outputSchema"]["properties"] == {"y": {"type": "number"}}
    assert by_id["out-object"]["description"] == "Does y." and "description" not in by_id["a b"]
    assert by_id["a b"]["title"] == "a b"
    # Nothing declared, nothing observed: MCP's defaults, said explicitly, with that reason.
    assert by_id["a b"]["annotations"] == {"readOnlyHint": False, "destructiveHint": True, "openWorldHint": True}

    omitted = sorted((d["path"], d["severity"]) for d in data["diagnostics"] if d["code"] == "mcp-omitted")
    assert omitted == [(f"{i}/TOOL.md", "warning") for i in ("boolean", "broken", "no-inputs", "scalar")]


# -- llms.txt ----------------------------------------------------------------------------------------
def test_llms_txt_follows_the_convention(tmp_path: Path) -> None:
    workspace_all_formats(tmp_path)
    write(tmp_path / ".tools/bad.tool/TOOL.md", "---\nname: Bad [x](y)\nid: bad.tool\ndescription: d\nversion: '1'\ninputs: {}\noutputs: {}\nrunner: x\n---\n")
    catalog = harvest(tmp_path)
    place(catalog, Options())
    text = llms.llms_txt(catalog, Options(), Site(name="Team tools"))
    lines = text.splitlines()
    assert lines[0] == "# Team tools" and lines[1] == "" and lines[2].startswith("> A verified catalog of 4 agent tools")
    tools_at = lines.index("## Tools")
    items = [line for line in lines[tools_at + 1:] if line.startswith("- ")]
    assert items[0].startswith(
        "- [add-numbers](tools/add-numbers/): Adds two numbers and says whether the sum is even. "
        "(`add-numbers`, speccify, not-run, kind no-model-declared; [JSON](tools/add-numbers.json), "
    )
    # Invalid manifests go last, under a heading that says not to use them (not llms.txt's skippable "## Optional").
    assert "## Optional" not in lines and llms.DO_NOT_USE in lines
    bad = next(line for line in lines if "bad.tool" in line)
    assert lines.index(bad) > lines.index(llms.DO_NOT_USE)
    assert bad.startswith("- [Bad \\[x\\](y)](tools/bad.tool/)") and "do not use: its manifest is invalid" in bad
    assert re.search(r"\[catalog\.json\]\(catalog\.json\).*\[mcp-tools\.json\]\(mcp-tools\.json\)", text)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_digest_never_blocks_on_a_fifo_and_hashes_regular_files(tmp_path: Path) -> None:
    fifo = tmp_path / "TOOL.md"
    os.mkfifo(fifo)
    assert file_digest(fifo) is None  # would hang forever with a blocking open
    assert file_digest(tmp_path / "missing") is None
    assert file_digest(tmp_path) is None
    plain = write(tmp_path / "x.md", "abc")
    assert file_digest(plain) == "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
