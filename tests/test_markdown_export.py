"""`toolcatalog markdown`: the catalog as Markdown pages in a docs folder, for generators that run no plugins.

The command writes into a project whose mkdocs.yml does not list the plugin, a real `mkdocs build
--strict` publishes the folder, and the site is checked: the pages carry the same verdicts,
badges, schema tables and example results as the plugin's pages, every link on them resolves,
and the files for agents are byte for byte the ones the plugin publishes for the same workspace.
"""

from __future__ import annotations

import html.parser
import json
import posixpath
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

from manifests import workspace_all_formats, write
from sitebuild import agent_outputs, build, files_under, mkdocs_project, toolcatalog
from toolcatalog.markdown_pages import relative_url

GENERATED = ".toolcatalog-generated.json"
TOOLS = {"add-numbers": "add-numbers", "text.echo": "Echo text", "tiny-smart": "tiny-smart"}  # slug: title


def plain_project(root: Path, **extra: Any) -> Path:
    """A MkDocs project that does not use the plugin: the generated Markdown is all it publishes."""
    config = {"site_name": "Test catalog", "theme": {"name": "mkdocs"}, **extra}
    write(root / "mkdocs.yml", yaml.safe_dump(config, sort_keys=False))
    write(root / "docs" / "index.md", "# Home\n\nWelcome.\n")
    return root


def page_file(site: Path, url: str) -> Path:
    return site / url / "index.html" if url.endswith("/") or not url else site / url


def published(site: Path, page_url: str, link: str) -> bool:
    """Whether a relative link on the page at `page_url` reaches a file of the site."""
    folder = "/" + (page_url if page_url.endswith("/") or not page_url else posixpath.dirname(page_url) + "/")
    target = site / posixpath.normpath(posixpath.join(folder, link)).lstrip("/")
    return (target / "index.html").is_file() if link.endswith("/") or target.is_dir() else target.is_file()


def raw_block(markdown_page: str) -> str:
    """A generated page without its front matter: the raw HTML block."""
    assert markdown_page.startswith("---\ntitle: ")
    return markdown_page.split("\n---\n", 1)[1].strip()


def tool_block(html: str) -> str:
    """A tool's content as the renderer made it, with the two character references the export
    writes for the Markdown layer (`&#123;` for `{`, `&#10;` for a newline) read as a browser does."""
    start = html.index('<div class="toolcatalog tc-tool"')
    end = html.index("</div>", html.index('<p class="tc-source">', start))
    return html[start:end].replace("&#123;", "{").replace("&#10;", "\n")


class _Links(html.parser.HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.links: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for name, value in attrs:
            if name in ("href", "src") and value and not re.match(r"^[a-z]+:|^#|^//", value):
                self.links.append(value.split("#", 1)[0].split("?", 1)[0])


def relative_links(html: str) -> list[str]:
    parser = _Links()
    parser.feed(html)
    return [link for link in parser.links if link]


@pytest.mark.parametrize(
    "theme, directory_urls", [("mkdocs", True), ("mkdocs", False), ("material", True)], ids=["plain", "file-urls", "material"]
)
def test_a_site_without_the_plugin_publishes_the_catalog(tmp_path: Path, theme: str, directory_urls: bool) -> None:
    extra = {"theme": {"name": theme}, "use_directory_urls": directory_urls}
    workspace = workspace_all_formats(tmp_path / "plain")
    with_plugin = shutil.copytree(workspace, tmp_path / "plugin")  # the same tools, built by the plugin
    plain_project(workspace, **extra)
    mkdocs_project(with_plugin, {"jobs": 2}, **extra)

    result = toolcatalog("markdown", str(workspace), "--jobs", "2")
    assert result.returncode == 0, result.stderr
    assert "3 tools checked" in result.stderr and re.search(r"wrote \d+ files to .*docs", result.stderr)
    build(workspace, "--strict")
    build(with_plugin, "--strict")
    site, plugin_site = workspace / "site", with_plugin / "site"
    docs = workspace / "docs"

    # The files for agents are the plugin's, byte for byte (their URLs point at the generated pages).
    assert agent_outputs(site) == agent_outputs(plugin_site) and "catalog.json" in agent_outputs(site)
    catalog = json.loads((site / "catalog.json").read_text(encoding="utf-8"))
    assert {t["id"]: t["status"] for t in catalog["tools"]} == {"add-numbers": "passed", "text.echo": "passed", "tiny-smart": "passed"}

    for tool in catalog["tools"]:
        page = page_file(site, tool["url"])
        assert page.is_file(), tool["url"]
        html = page.read_text(encoding="utf-8")
        # Python-Markdown passed the page's HTML through untouched, and it is the plugin's page content.
        slug = tool["json"].rsplit("/", 1)[1].removesuffix(".json")
        assert raw_block((docs / "tools" / f"{slug}.md").read_text(encoding="utf-8")) in html
        assert tool_block(html) == tool_block(page_file(plugin_site, tool["url"]).read_text(encoding="utf-8")), tool["id"]
        assert f"<title>{TOOLS[slug]} - Test catalog" in html
        # Every link on the page reaches a published file: other pages, the JSON, the stylesheet, the script.
        for link in relative_links(html[html.index('<div class="toolcatalog-page">'):]):
            assert published(site, tool["url"], link), (tool["id"], link)

    adder = page_file(site, catalog["tools"][0]["url"]).read_text(encoding="utf-8")
    assert 'tc-status-passed' in adder and "1 passed, 0 failed, 0 skipped" in adder  # the verdict
    assert "The first addend." in adder and "two and two" in adder  # the schema table and the example
    assert "toolcatalog/assets/toolcatalog.css" in adder and "toolcatalog/assets/toolcatalog.js" in adder
    index = page_file(site, "tools/" if directory_urls else "tools/index.html").read_text(encoding="utf-8")
    assert "data-toolcatalog-index" in index
    for slug in TOOLS:
        assert f'href="{slug}/"' in index if directory_urls else f'href="{slug}.html"' in index


def test_links_are_written_as_mkdocs_writes_them() -> None:
    from mkdocs.utils import get_relative_url

    pages = ["", "tools/", "tools/x/", "tools/x.html", "a/b/c/", "a/b/c.html", "index.html"]
    targets = ["", "tools/", "tools/y/", "tools/y.json", "toolcatalog/assets/toolcatalog.css", "catalog.json", "a/"]
    for page in pages:
        for target in targets:
            expected = get_relative_url(target, page) if target else "."
            assert relative_url(target, page) == expected, (target, page)


def test_running_it_again_replaces_only_what_it_wrote(tmp_path: Path) -> None:
    workspace_all_formats(tmp_path)
    plain_project(tmp_path)
    docs = tmp_path / "docs"
    write(docs / "tools/text.echo.md", "# Our own echo page\n")  # the site's own page at a tool's URL is kept
    write(docs / "llms.txt", "# ours\n")  # and so does its own file at an output's path
    first = toolcatalog("markdown", str(tmp_path), "--no-run")
    assert first.returncode == 0, first.stderr
    assert (docs / "tools/text.echo.md").read_text() == "# Our own echo page\n"
    assert (docs / "llms.txt").read_text() == "# ours\n"
    assert "llms.txt exists in" in first.stderr and "it is kept" in first.stderr
    record = json.loads((docs / GENERATED).read_text())["files"]
    assert "tools/add-numbers.md" in record and "tools/text.echo.md" not in record and "llms.txt" not in record
    assert "tools/text.echo_2.md" in record  # the tool's own page, numbered like any clash
    index = (docs / "tools/index.md").read_text()
    assert 'href="text.echo_2/"' in index and 'href="text.echo/"' not in index
    written = files_under(docs)

    again = toolcatalog("markdown", str(tmp_path), "--no-run")  # its own pages are not taken for the site's
    assert again.returncode == 0, again.stderr
    assert files_under(docs) == written

    shutil.rmtree(tmp_path / ".agent/tools/add-numbers")  # a tool that is gone loses its page and JSON
    gone = toolcatalog("markdown", str(tmp_path), "--no-run")
    assert gone.returncode == 0, gone.stderr
    left = set(files_under(docs))
    assert "tools/add-numbers.md" not in left and "tools/add-numbers.json" not in left
    assert {"index.md", "tools/text.echo.md", "tools/tiny-smart.md", "tools/index.md", "llms.txt"} <= left
    build(tmp_path, "--strict")
    assert "Our own echo page" in (tmp_path / "site/tools/text.echo/index.html").read_text()


def test_a_hostile_tool_name_stays_text(tmp_path: Path) -> None:
    write(
        tmp_path / ".tools/evil/TOOL.md",
        '---\nname: "<img src=x onerror=alert(1)>"\nid: evil\ndescription: d\nversion: 1.0.0\ninputs: {}\noutputs: {}\n---\n',
    )
    plain_project(tmp_path)
    assert toolcatalog("markdown", str(tmp_path), "--no-run").returncode == 0
    build(tmp_path)
    for page in (tmp_path / "site/index.html", tmp_path / "site/tools/evil/index.html"):
        html = page.read_text()
        assert "<img src=x" not in html, page
        assert "&lt;img src=x onerror=alert(1)&gt;" in html, page


def test_fail_on_is_honoured_after_writing(tmp_path: Path) -> None:
    write(tmp_path / ".agent/tools/broken/TOOL.md", "---\nname: Broken Name\ndescription: x\ninputs: {}\noutputs: {}\n---\n")
    plain_project(tmp_path)
    write(tmp_path / "options.yml", "plugins:\n  - toolcatalog:\n      fail_on: [invalid]\n      run_examples: false\n")
    result = toolcatalog("markdown", str(tmp_path), "-f", str(tmp_path / "options.yml"), "-o", str(tmp_path / "docs"))
    assert result.returncode == 1
    assert "Broken Name: status invalid is listed in fail_on" in result.stderr
    assert (tmp_path / "docs/tools/broken-name.md").is_file()  # written first, as `export` does
