"""Regressions for problems a review found: page names, classification, explicit YAML tags."""

from __future__ import annotations

from pathlib import Path

from sitebuild import write
from toolcatalog import outputs
from toolcatalog.placement import place
from toolcatalog.harvest import harvest
from toolcatalog.model import Catalog, Tool
from toolcatalog.options import Options


def catalog_of(*ids: str) -> Catalog:
    tools = [Tool(id=i, name=i, format="speccify", source=f"{n}/TOOL.md", abs_path=Path(f"/x/{n}/TOOL.md")) for n, i in enumerate(ids)]
    return Catalog(root=Path("/x"), tools=tools)


def page_names(catalog: Catalog) -> list[str]:
    place(catalog, Options())
    return [t.page.removeprefix("tools/").removesuffix(".md") for t in catalog.tools]


def test_renamed_pages_never_take_another_tools_name() -> None:
    catalog = catalog_of("index", "index-tool", "a b", "a-b", "Slugify_Tool", "../../etc")
    names = page_names(catalog)
    assert names == ["index_", "index-tool", "a-b", "a-b_2", "slugify-tool", "etc"]
    # Adding a tool whose slug is taken by a rename does not move anyone.
    catalog = catalog_of("index", "index-tool", "index-tool-2")
    assert page_names(catalog) == ["index_", "index-tool", "index-tool-2"]


def test_a_tool_named_like_an_output_file_does_not_break_the_build() -> None:
    catalog = catalog_of("catalog", "mcp-tools", "other")
    options = Options(tool_json_dir=".")
    place(catalog, options)
    files = outputs.render(catalog, options)
    assert {"catalog.json", "catalog_.json", "mcp-tools.json", "mcp-tools_.json", "other.json"} <= set(files)


def test_a_speccify_tool_with_a_version_or_tags_stays_speccify(tmp_path: Path) -> None:
    write(
        tmp_path / ".agent/tools/versioned/TOOL.md",
        """
        ---
        name: versioned
        description: A speccify tool that also carries a version and tags (kept as unknown keys).
        version: 1.2.0
        tags: [text]
        inputs: {type: object}
        outputs: {type: object}
        effects: none
        ---
        ## Examples
        ### one
        input: {}
        output: {}
        """,
    )
    [tool] = harvest(tmp_path, Options()).tools
    assert tool.format == "speccify" and tool.valid
    assert sorted(tool.extra) == ["tags", "version"]


def test_explicit_yaml_tags_must_fit_their_type(tmp_path: Path) -> None:
    for index, value in enumerate(["!!float abc", "!!int 1.5", "!!bool maybe", "!!null x"]):
        write(tmp_path / f".agent/tools/t{index}/TOOL.md", f"---\nname: t{index}\nodd: {value}\n---\n")
    catalog = harvest(tmp_path, Options())
    for tool in catalog.tools:
        [diagnostic] = [d for d in tool.diagnostics if d.code == "yaml-tag"]
        assert diagnostic.line == 3 and "is not a valid" in diagnostic.message


def test_a_pattern_that_runs_out_of_time_is_reported_as_unchecked_not_violated(tmp_path: Path) -> None:
    write(
        tmp_path / ".agent/tools/slow/TOOL.md",
        """
        ---
        name: slow
        description: A contract with a runaway pattern.
        inputs: {type: object, properties: {s: {type: string, pattern: "^(a|a)*$"}}}
        outputs: {type: object}
        effects: none
        ---
        ## Examples
        ### long input
        input: {"s": "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!"}
        output: {}
        """,
    )
    [tool] = harvest(tmp_path, Options()).tools
    assert tool.valid
    [diagnostic] = [d for d in tool.diagnostics if d.code.startswith("example-")]
    assert diagnostic.code == "example-undecided" and "could not be fully checked" in diagnostic.message
    assert "violates" not in diagnostic.message
