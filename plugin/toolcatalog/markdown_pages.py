"""The catalog as ordinary Markdown pages, for site generators that run no plugins.

Zensical, MkDocs 2 and other generators publish a docs folder as it is. `render` returns
the pages the plugin would generate (the index at `<page_dir>/index.md`, one page per
tool at `tool.page`) plus the stylesheet and script they use, as `{docs path: text}`;
the caller writes them into the docs folder with the agent outputs (`outputs.render`),
so every file lands at the site path the plugin would give it.

Each page is YAML front matter with its title, then one raw HTML block made by the same
renderer and templates as the plugin's pages (so verdicts, badges, schema tables and
example results are the same). Python-Markdown passes such a block through untouched.
Generators disagree on what a relative link inside raw HTML is relative to, so the links
follow the rule of the generator named (`GENERATORS`):
- "mkdocs" (MkDocs 1.6, ProperDocs): relative to the URL the page gets (`directory_urls`),
  since MkDocs leaves raw HTML alone.
- "zensical": relative to the page's *source file*, since Zensical resolves raw HTML links
  from there and rewrites them for the page's URL (adding `../` with directory URLs).
- "mkdocs2" (MkDocs 2.0 pre-releases): relative to the URL, always a directory URL; MkDocs 2
  reads no front matter (it would show as text), so the page starts with its title as a
  Markdown heading, which MkDocs 2 takes as the page title, and the HTML's own `<h1>` goes.
Relative links work wherever the site is mounted (the domain root or a sub-path).
The stylesheet and the script are linked from each page unless the config already lists them
in `extra_css`/`extra_javascript` (`extra_assets`), when the theme loads them on every page.

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

__all__ = ["GENERATORS", "markdown_safe", "relative_url", "render"]

GENERATORS = ("mkdocs", "zensical", "mkdocs2")
_TITLE_H1 = re.compile(r'<h1 id="tc-title">.*?</h1>\n?', re.S)  # the templates' page heading


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
    generator: str = "mkdocs",
    extra_assets: Iterable[str] = (),
) -> dict[str, str]:
    """Every page and asset as `{docs path: text}`: the index (unless `user_pages`, the site's own
    pages, has one there), each tool's page (unless the site's own page has its URL), the stylesheet
    and the script. Tools must have been placed (`placement.place`) with the same `directory_urls`
    (always on for "mkdocs2"). `generator` is one of `GENERATORS`; `extra_assets` the site paths the
    config's `extra_css` and `extra_javascript` list."""
    if generator not in GENERATORS:
        raise ValueError(f"unknown generator {generator!r}")
    dirs = [Path(d) for d in template_dirs]
    renderer = Renderer(dirs)
    page = _Flavour(generator, frozenset(extra_assets))
    files: dict[str, str] = {}
    index = placement.index_page
    if index not in set(user_pages):
        base = page.base(index, page_url(index, directory_urls))
        html = renderer.index_page(catalog, lambda target: relative_url(target, base))
        files[index] = page.text(INDEX_TITLE, html, base)
    for tool in catalog.tools:
        if tool.page is None or tool.url is None:
            continue
        base = page.base(tool.page, tool.url)

        def url_for(target: str, base: str = base) -> str:
            return relative_url(target, base)

        html = renderer.tool_page(tool, catalog, url_for, source_link)
        files[tool.page] = page.text(str(escape(tool.name)), html, base)
    for asset in (CSS_PATH, JS_PATH):
        files[asset] = _asset(asset, dirs)
    return files


class _Flavour:
    """How pages are written for one generator: what their links are relative to, how the title
    is given, which assets each page links itself."""

    def __init__(self, generator: str, extra_assets: frozenset[str]) -> None:
        self.generator = generator
        self.extra_assets = extra_assets

    def base(self, source: str, url: str) -> str:
        """What the page's relative links start from, written as a URL `relative_url` reads: the
        source file itself for Zensical ("tools/x.md": its folder), else the page's URL."""
        return source if self.generator == "zensical" else url

    def text(self, title: str, html: str, base: str) -> str:
        """A Markdown page: its title (already escaped: themes put it into <title> and the nav
        unescaped) and one raw HTML block that loads the stylesheet and the script itself."""
        css = "" if CSS_PATH in self.extra_assets else f'<link rel="stylesheet" href="{escape(relative_url(CSS_PATH, base))}">\n'
        js = "" if JS_PATH in self.extra_assets else f'<script src="{escape(relative_url(JS_PATH, base))}"></script>\n'
        if self.generator == "mkdocs2":  # the Markdown heading below is the page's title: not twice
            html = _TITLE_H1.sub("", html, count=1)
        block = f'<div class="toolcatalog-page">\n{css}{html.strip()}\n{js}</div>'
        if self.generator == "mkdocs2":
            return f"# {_heading_text(title)}\n\n{markdown_safe(block)}\n"
        # The title is HTML already (see above): the same references keep a template layer off it.
        return f"---\ntitle: {json.dumps(_no_template(title), ensure_ascii=False)}\n---\n\n{markdown_safe(block)}\n"


_PLAIN = frozenset(" -.,:;/+=@?%$~^")  # no syntax inside a heading's text: kept as they are


def _heading_text(title: str) -> str:
    """`title` (HTML, escaped) as the text of a one-line Markdown heading that reads as that HTML:
    every ASCII character that Markdown or a template layer could read as syntax (`*`, `_`, `[`,
    `` ` ``, `<`, `{`, `#`, `\\`, ...) is written as a character reference (entities stay as they
    are), and line ends as spaces."""
    out = []
    for part in re.split(r"(&(?:[A-Za-z][A-Za-z0-9]*|#[0-9]+|#[xX][0-9A-Fa-f]+);)", " ".join(title.split())):
        if part.startswith("&") and part.endswith(";"):
            out.append(part)
        else:
            out.append("".join(ch if ch.isalnum() or ch in _PLAIN or not ch.isascii() else f"&#{ord(ch)};" for ch in part))
    return "".join(out) or "&#32;"


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
        part = _TAG_PART.match(html, at)
        assert part is not None  # the pattern matches the empty string too
        at = part.end()
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
