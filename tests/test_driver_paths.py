"""Drivers whose `tool:` path misses by a conventional variant, and ids shared by many tools."""

from __future__ import annotations

from pathlib import Path

import pytest

import teamcorpus
from manifests import aip_driver, aip_tool, only, speccify_text, write
from sitebuild import toolcatalog
from toolcatalog.harvest import harvest
from toolcatalog.model import ERROR, WARNING, Catalog, Diagnostic


def driver_to(root: Path, ref: str, driver_id: str = "img-http") -> Catalog:
    aip_driver(root, driver_id, "unused", kind="http")
    path = root / ".drivers" / driver_id / "DRIVER.md"
    path.write_text(path.read_text(encoding="utf-8").replace(".tools/unused/TOOL.md", ref), encoding="utf-8")
    return harvest(root)


@pytest.mark.parametrize("ref", [
    "./tools/image-create/TOOL.md",   # agentproto's own examples: `tools/` for `.tools/`, `-` for `.`
    "tools/image.create/TOOL.md",     # only the hidden folder differs
    ".tools/image-create/TOOL.md",    # only the folder name spells the id with `-`
    "./tools/image-create",           # the folder without TOOL.md
])
def test_a_conventional_variant_attaches_with_a_warning_naming_the_tool_md(tmp_path: Path, ref: str) -> None:
    aip_tool(tmp_path, "image.create", [])
    catalog = driver_to(tmp_path, ref)
    tool = catalog.tool("image.create")
    assert [d.id for d in tool.drivers] == ["img-http"]
    driver = tool.drivers[0]
    warning = only(driver.diagnostics, "driver-path-variant")
    assert warning.severity == WARNING and driver.valid
    assert f"`{ref}`" in warning.message and "`.tools/image.create/TOOL.md`" in warning.message
    assert warning.line is not None
    assert driver.implements[0].tool_id == "image.create"
    assert not [d for d in catalog.diagnostics if d.code in ("driver-orphan", "driver-unresolved")]


def test_an_ambiguous_variant_is_not_guessed(tmp_path: Path) -> None:
    # Two tools whose folders both read `image-create`: the driver names neither for sure.
    aip_tool(tmp_path, "image.create", [])
    aip_tool(tmp_path, "image-create", [])
    catalog = driver_to(tmp_path, "./somewhere/tools/image_create/TOOL.md")
    assert all(t.drivers == [] for t in catalog.tools)
    catalog = driver_to(tmp_path, "./tools/image-create/TOOL.md".replace("tools/", "tools/x/"))
    assert all(t.drivers == [] for t in catalog.tools)
    # `tools/image.create/TOOL.md` names one of them exactly (under the hidden folder): attached.
    catalog = driver_to(tmp_path, "tools/image.create/TOOL.md")
    assert [d.id for d in catalog.tool("image.create").drivers] == ["img-http"]
    assert catalog.tool("image-create").drivers == []


def test_an_unresolved_path_names_the_closest_tools(tmp_path: Path) -> None:
    aip_tool(tmp_path, "image.create", [])
    aip_tool(tmp_path, "notes.append", [])
    catalog = driver_to(tmp_path, "./tools/image-creat/TOOL.md")
    driver = catalog.drivers[0]
    error = only(driver.diagnostics, "driver-unresolved")
    assert error.severity == ERROR
    assert error.message.endswith("; the closest: `.tools/image.create/TOOL.md`"), error.message
    # Nothing close: it says where the tools are instead of suggesting a stranger.
    catalog = driver_to(tmp_path, "./tools/fs-read/TOOL.md")
    error = only(catalog.drivers[0].diagnostics, "driver-unresolved")
    assert "no AIP-14 tool here has a name close to it (they are in `.tools/`)" in error.message
    assert "image.create" not in error.message
    # An id that does not resolve gets the closest ids.
    catalog = driver_to(tmp_path, "notes.apend")
    error = only(catalog.drivers[0].diagnostics, "driver-unresolved")
    assert error.message.endswith("; the closest: `notes.append`"), error.message


def test_duplicate_ids_list_the_paths_once(tmp_path: Path) -> None:
    for n in range(6):
        write(tmp_path / f".agent/tools/copy-{n}/TOOL.md", speccify_text("same"))
    catalog = harvest(tmp_path)
    tools = [t for t in catalog.tools if t.id == "same"]
    assert len(tools) == 6
    catalog_level = only(catalog.diagnostics, "duplicate-id")
    assert catalog_level.message.startswith("6 tools share the id 'same': ")
    assert all(catalog_level.message.count(t.source) == 1 for t in tools)
    for tool in tools:
        message = only(tool.diagnostics, "duplicate-id").message
        others = [t.source for t in tools if t is not tool]
        # The count and the first other path: not the five others (N² text over the catalog).
        assert message.startswith(f"the id 'same' is used by 6 manifests: this one, {others[0]} and 4 more")
        assert sum(source in message for source in others) == 1


def test_check_rows_of_shared_ids_name_their_manifest(tmp_path: Path) -> None:
    for n in range(3):
        write(tmp_path / f".agent/tools/copy-{n}/TOOL.md", speccify_text("same"))
    result = toolcatalog("check", "--no-cache", str(tmp_path))
    lines = result.stdout.splitlines()
    rows = [n for n, line in enumerate(lines) if line.startswith("same ")]
    assert len(rows) == 3, result.stdout
    # Right under each row, its manifest: the TOOL column stays as narrow as the ids.
    assert sorted(lines[n + 1] for n in rows) == [f"    at .agent/tools/copy-{n}/TOOL.md" for n in range(3)], result.stdout
    # The row's detail is its error: the shared id, with the count instead of every other path (said once).
    errors = [line.strip() for line in lines if "is used by 3 manifests" in line]
    assert len(errors) == 3 and all(e.count("/TOOL.md") == 1 for e in errors), result.stdout


@pytest.mark.skipif(not teamcorpus.available(), reason="the shared corpus is not beside the checkout")
def test_agentproto_example_drivers_attach_in_a_team_layout(tmp_path: Path) -> None:
    teamcorpus.place(tmp_path)
    catalog = harvest(tmp_path)
    image = catalog.tool("image.create")
    assert sorted({d.id for d in image.drivers}) == [
        "mistral-image-eu-http", "openai-dalle-3-http", "openai-images-http", "replicate-http"]
    pricing = [t for t in catalog.tools if t.source == ".tools/pricing-snapshot/TOOL.md"][0]
    assert {d.id for d in pricing.drivers} == {"apollo-pricing-http"}
    for driver in image.drivers:
        assert any(d.code == "driver-path-variant" for d in driver.diagnostics)
    # The drivers of tools the corpus does not have stay orphans, and say where the tools are.
    orphans = sorted(d.path for d in catalog.diagnostics if d.code == "driver-orphan")
    assert orphans == [".drivers/filesystem-mcp/DRIVER.md", ".drivers/gh/DRIVER.md", ".drivers/host-builtin-fs/DRIVER.md"]
