"""The catalog as ordinary Markdown pages, for site generators that run no plugins.

Zensical, MkDocs 2 and other generators publish a docs folder as it is. `render` returns
the pages the plugin would generate (the index at `<page_dir>/index.md`, one page per
tool at `tool.page`) plus the stylesheet and script they use, as `{docs path: text}`;
the caller writes them into the docs folder with the agent outputs (`outputs.render`),
so every file lands at the site path the plugin would give it.

Each page is YAML front matter with its title, then one raw HTML block made by the same
renderer and templates as the plugin's pages (so verdicts, badges, schema tables and
example results are the same). Python-Markdown passes such a block through untouched.
Links inside it are written relative to the URL the generator gives the page
(`directory_urls` as in MkDocs), since no generator rewrites links inside raw HTML.
"""

from __future__ import annotations

import json
import posixpath
from pathlib import Path
from typing import Iterable

from markupsafe import escape

from .links import SourceLink
from .model import Catalog
from .placement import Placement, page_url
from .render import CSS_PATH, INDEX_TITLE, JS_PATH, Renderer, templates_dir

__all__ = ["relative_url", "render"]


def relative_url(target: str, page: str) -> str:
    """The URL of site path `target` as written on the page whose URL is `page` ("" is the site
    root, "tools/x/" a folder URL, "tools/x.html" a file URL), as MkDocs' get_relative_url does."""
    if not target:
        return "."
    folder = page if page.endswith("/") or not page else posixpath.dirname(page) + "/"
    out = posixpath.relpath("/" + target, "/" + folder)
    return out + "/" if target.endswith("/") and not out.endswith("/") else out


def render(
    catalog: Catalog,
    placement: Placement,
    *,
    directory_urls: bool = True,
    template_dirs: Iterable[Path] = (),
    source_link: SourceLink | None = None,
    user_pages: Iterable[str] = (),
) -> dict[str, str]:
    """Every page and asset as `{docs path: text}`: the index (unless `user_pages`, the site's own
    pages, has one there), each tool's page (unless the site's own page has its URL), the stylesheet
    and the script. Tools must have been placed (`placement.place`) with the same `directory_urls`."""
    dirs = [Path(d) for d in template_dirs]
    renderer = Renderer(dirs)
    files: dict[str, str] = {}
    index = placement.index_page
    if index not in set(user_pages):
        url = page_url(index, directory_urls)
        html = renderer.index_page(catalog, lambda target: relative_url(target, url))
        files[index] = _page(INDEX_TITLE, html, url)
    for tool in catalog.tools:
        if tool.page is None or tool.url is None:
            continue
        url = tool.url
        html = renderer.tool_page(tool, catalog, lambda target, url=url: relative_url(target, url), source_link)
        files[tool.page] = _page(str(escape(tool.name)), html, url)
    for asset in (CSS_PATH, JS_PATH):
        files[asset] = _asset(asset, dirs)
    return files


def _page(title: str, html: str, url: str) -> str:
    """A Markdown page: its title (already escaped: themes put it into <title> and the nav
    unescaped) and one raw HTML block that loads the stylesheet and the script itself."""
    css, js = relative_url(CSS_PATH, url), relative_url(JS_PATH, url)
    return (
        f"---\ntitle: {json.dumps(title, ensure_ascii=False)}\n---\n\n"
        f'<div class="toolcatalog-page">\n<link rel="stylesheet" href="{escape(css)}">\n'
        f"{html.strip()}\n"
        f'<script src="{escape(js)}"></script>\n</div>\n'
    )


def _asset(path: str, template_dirs: list[Path]) -> str:
    """An asset from the first template folder that has it (an override), else ours."""
    for folder in [*template_dirs, templates_dir()]:
        candidate = folder.joinpath(*path.split("/"))
        if candidate.is_file():
            return candidate.read_text(encoding="utf-8")
    raise FileNotFoundError(path)
