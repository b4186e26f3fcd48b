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

The block holds manifest text, so it is written for the layers a generator may run before
the HTML (`markdown_safe`): a CommonMark reader ends a raw HTML block at the first blank line
and reads the rest as Markdown, so no line of the block is blank (a newline that would start
one is written `&#10;`, the same character to a browser); and a template layer (mkdocs-macros,
Zensical's markdown-macros, Jekyll's Liquid) evaluates `{{ }}`, `{% %}` and `{# #}` anywhere in
a page, so every `{` is written `&#123;`. Both are character references, which HTML decodes
in text and in attribute values, so the page reads exactly as before.
"""

from __future__ import annotations

import json
import posixpath
import re
from pathlib import Path
from typing import Iterable

from markupsafe import escape

from .links import SourceLink
from .model import Catalog
from .placement import Placement, page_url
from .render import CSS_PATH, INDEX_TITLE, JS_PATH, Renderer, templates_dir

__all__ = ["markdown_safe", "relative_url", "render"]


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
    block = (
        f'<div class="toolcatalog-page">\n<link rel="stylesheet" href="{escape(css)}">\n'
        f"{html.strip()}\n"
        f'<script src="{escape(js)}"></script>\n</div>'
    )
    # The title is HTML already (see above): the same references keep a template layer off it.
    return f"---\ntitle: {json.dumps(_no_template(title), ensure_ascii=False)}\n---\n\n{markdown_safe(block)}\n"


_TAG_NAME = re.compile(r"</?([A-Za-z][A-Za-z0-9-]*)")
_TAG_PART = re.compile(r"""[^>"']*""")  # up to the tag's end or the next quoted value
_QUOTED = re.compile(r"""("[^"]*"|'[^']*')""")
_BLANK_NEXT = re.compile(r"\n(?=[ \t]*\n)")  # a newline whose next line is blank
_RAW_TEXT = {"script": re.compile(r"</script", re.I), "style": re.compile(r"</style", re.I)}  # code inside: no references


def markdown_safe(html: str) -> str:
    """`html` as the same HTML that stays one raw HTML block for every Markdown reader and that no
    template layer evaluates: no blank line (CommonMark's end of a raw block), no `{`.

    In text and attribute values a newline that would start a blank line becomes `&#10;` and
    every `{` becomes `&#123;`; between a tag's attributes such a newline becomes a space; line
    ends are LF (a CR is a line end to CommonMark too, and HTML reads it as LF), NUL is U+FFFD. Inside
    `<script>` and `<style>`, whose text is code (only a template override puts any there: the
    renderer never does, and manifest text is escaped or sanitized), blank lines are dropped.
    One pass, each character looked at a bounded number of times: a tag left open (which the
    renderer never writes) makes the rest text, so no input takes more than linear time."""
    # CommonMark reads NUL as U+FFFD, HTML drops or replaces it: written as U+FFFD, both read the same.
    html = html.replace("\r\n", "\n").replace("\r", "\n").replace("\0", "\ufffd")
    out: list[str] = []
    at, size = 0, len(html)
    while at < size:
        lt = html.find("<", at)
        if lt < 0:
            out.append(_text(html[at:]))
            break
        out.append(_text(html[at:lt]))
        if html.startswith("<!--", lt):
            close = html.find("-->", lt + 4)
            at = size if close < 0 else close + 3
            out.append(_no_template(_BLANK_NEXT.sub(" ", html[lt:at])))
            continue
        name = _TAG_NAME.match(html, lt)
        end = _tag_end(html, name.end()) if name else None
        if name is None or end is None:  # a `<` that starts no tag (or one never closed): text
            rest = lt + 1 if name is None else size
            out.append("&lt;" + _text(html[lt + 1:rest].replace("<", "&lt;")))
            at = rest
            continue
        tag = html[lt:end]
        out.append(_tag(tag))
        at = end
        raw = _RAW_TEXT.get(name.group(1).lower())
        if raw is not None and not tag.startswith("</"):
            found = raw.search(html, at)
            close = size if found is None else found.start()
            out.append(re.sub(r"\n[ \t]*(?=\n)", "", html[at:close]))
            at = close
    return "".join(out)


def _tag_end(html: str, at: int) -> int | None:
    """Where the tag whose attributes start at `at` ends (after its `>`), quoted values (which may
    hold `>`: nh3 does not escape it there) skipped; None when it never ends."""
    while True:
        at = _TAG_PART.match(html, at).end()
        if at >= len(html):
            return None
        if html[at] == ">":
            return at + 1
        close = html.find(html[at], at + 1)  # the quote that closes this value
        if close < 0:
            return None
        at = close + 1


def _no_template(text: str) -> str:
    return text.replace("{", "&#123;")


def _text(text: str) -> str:
    return _BLANK_NEXT.sub("&#10;", _no_template(text))


def _tag(tag: str) -> str:
    """A tag with its quoted values written as `_text` writes text (every newline in them as
    `&#10;`, which keeps the tag on lines that are never blank) and blank lines between
    attributes closed up."""
    parts = _QUOTED.split(tag)
    for i, part in enumerate(parts):
        parts[i] = _no_template(part).replace("\n", "&#10;") if i % 2 else _no_template(_BLANK_NEXT.sub(" ", part))
    return "".join(parts)


def _asset(path: str, template_dirs: list[Path]) -> str:
    """An asset from the first template folder that has it (an override), else ours."""
    for folder in [*template_dirs, templates_dir()]:
        candidate = folder.joinpath(*path.split("/"))
        if candidate.is_file():
            return candidate.read_text(encoding="utf-8")
    raise FileNotFoundError(path)
