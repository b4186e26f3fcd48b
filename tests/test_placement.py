"""Where each tool lands in a site (`placement.place`): page names that never collide."""

from __future__ import annotations

from pathlib import Path

from toolcatalog import outputs
from toolcatalog.model import Catalog, Tool
from toolcatalog.options import Options
from toolcatalog.placement import place


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
