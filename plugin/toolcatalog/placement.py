"""Where each tool lives in a site, decided once per build and carried on the tool.

Every tool gets a page source path (`tool.page`, e.g. `tools/text.echo.md`), the
URL that page has (`tool.url`) and, when per-tool JSON files are on, the site
path of its JSON file (`tool.json_path`). The plugin, the command line and the
Markdown export all call `place`, so a tool's URL is the same whoever wrote it.

Names come from tool ids, which come from untrusted manifests, so they are made
safe (`slug`) and can never collide:

- with each other: clashes are numbered `_2`, `_3` in id order (`_` never occurs
  in a slug, so a renamed page never takes the name another id maps to);
- with the catalog's own files: the index page, and a slug that ends like a file
  name (`x.json`, `index.html`) gets a `_`, so `tools/x.json` can never be both a
  page folder and a JSON file;
- with the user's pages: a page of the user's at the URL a tool would get
  (`tools/setup.md` or `tools/setup/index.md`) is kept, and the tool's page is
  numbered like any other clash (`tools/setup_2/`), so the tool's `url` is always
  its own page; a warning says so (`mkdocs build --strict` stops on it).
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass, field
from typing import Iterable

from .model import WARNING, Catalog, Diagnostic, Tool
from .options import Options, output_paths

# Warnings about the site itself rather than a manifest: a host reports them as warnings (so
# `mkdocs build --strict` stops), while a manifest's warnings are information.
SITE_WARNINGS = frozenset({"page-taken"})

_UNSAFE = re.compile(r"[^a-z0-9.-]+")
INDEX = "index"
# Suffixes that would make a page folder look like a file a browser or server treats specially.
_FILE_SUFFIXES = frozenset(
    "html htm xhtml json md markdown txt xml js mjs css map svg png jpg jpeg gif webp ico pdf yml yaml gz zip".split()
)


def slug(tool_id: str) -> str:
    """A file-name-safe form of an id: lower case `a-z0-9.-`, no `/`, no `..`, at most 100 characters."""
    value = _UNSAFE.sub("-", str(tool_id).lower()).strip("-.")
    value = re.sub(r"\.{2,}", ".", value)[:100].strip("-.")
    return value or "tool"


def _stem(tool_id: str, reserved: set[str]) -> str:
    base = slug(tool_id)
    suffix = base.rsplit(".", 1)[1] if "." in base else ""
    if base == INDEX or base in reserved or suffix in _FILE_SUFFIXES:
        base += "_"
    return base


def page_url(src: str, directory_urls: bool) -> str:
    """The URL MkDocs gives the page at source path `src` (`a/b.md` -> `a/b/`; `a/index.md` -> `a/`)."""
    stem, _ext = posixpath.splitext(src)
    folder, name = posixpath.split(stem)
    if name in ("index", "README"):
        return f"{folder}/" if folder else ""
    if directory_urls:
        return f"{stem}/"
    return f"{stem}.html"


@dataclass
class Placement:
    """What `place` decided beyond the tools' own fields."""

    index_page: str  # source path of the catalog index page
    index_url: str
    diagnostics: list[Diagnostic] = field(default_factory=list)


def place(catalog: Catalog, options: Options, directory_urls: bool = True, user_pages: Iterable[str] = ()) -> Placement:
    """Give every tool its page, URL and JSON path. `user_pages`: the source paths of the
    site's own Markdown pages (docs_dir), which win over generated ones at the same URL."""
    page_dir = options.page_dir
    taken: dict[str, str] = {}
    for src in user_pages:
        if src.endswith((".md", ".markdown")):
            taken.setdefault(page_url(src, directory_urls), src)
    index_page = f"{page_dir}/{INDEX}.md"
    result = Placement(index_page, page_url(index_page, directory_urls))
    paths = output_paths(options)
    json_dir = paths.tool_json_dir
    # Our own files beside the JSON files: a tool never takes their names.
    reserved = {
        posixpath.basename(p)[: -len(".json")] for p in paths.files()
        if p.endswith(".json") and posixpath.dirname(p) == ("" if json_dir in (None, ".") else json_dir)
    }
    used: set[str] = set()
    next_number: dict[str, int] = {}  # per base name: where numbering goes on (k clashes cost k steps, not k²)
    def url_of(name: str) -> str:
        return page_url(f"{page_dir}/{name}.md", directory_urls)

    for tool in sorted(catalog.tools, key=lambda t: (t.id, t.source)):
        base = _stem(tool.id, reserved)
        name, n = base, next_number.get(base, 2)
        while name in used or url_of(name) in taken:
            name, n = f"{base}_{n}", n + 1
        next_number[base] = n
        used.add(name)
        tool.page = f"{page_dir}/{name}.md"
        tool.url = page_url(tool.page, directory_urls)
        tool.json_path = None if json_dir is None else (f"{name}.json" if json_dir == "." else f"{json_dir}/{name}.json")
        owner = taken.get(url_of(base))
        if owner is not None and name != base:
            result.diagnostics.append(
                Diagnostic(
                    WARNING,
                    f"the site's own page {owner} has the URL of tool {tool.id!r}'s page ({url_of(base)}); "
                    f"the site's page is kept and the tool's page is at {tool.url}",
                    tool.source,
                    None,
                    "page-taken",
                )
            )
    return result


def tools_by_page(catalog: Catalog) -> dict[str, Tool]:
    return {tool.page: tool for tool in catalog.tools}
