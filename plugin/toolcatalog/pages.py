"""Where each tool's page lives in a site: one stable, safe file name per tool id.

Shared by the MkDocs plugin and the command line so that the `url` of a tool in
the catalog is the same whoever wrote it.
"""

from __future__ import annotations

import re

from .model import Catalog

# `_` is never in a slug: it marks our own renames (`index_`, `name_2`), so a renamed page can
# never take the name another tool's id maps to.
_UNSAFE = re.compile(r"[^a-z0-9.-]+")
INDEX = "index"


def slug(tool_id: str) -> str:
    """A file-name-safe form of an id (ids come from untrusted manifests: no `/`, no `..`)."""
    value = _UNSAFE.sub("-", tool_id.lower()).strip("-.")
    return value[:100] or "tool"


def names(catalog: Catalog, reserved: frozenset[str] = frozenset()) -> dict[int, str]:
    """id(tool) -> its file name stem: the safe slug of the id; `index` and `reserved` stems get a
    `_`, clashes are numbered `_2`, `_3` in id order. Pages and per-tool JSON files share these."""
    used: set[str] = set()
    out: dict[int, str] = {}
    for tool in catalog.tools:
        base = slug(tool.id)
        if base == INDEX or base in reserved:
            base += "_"
        name, n = base, 2
        while name in used:
            name, n = f"{base}_{n}", n + 1
        used.add(name)
        out[id(tool)] = name
    return out


def plan(catalog: Catalog, page_dir: str = "tools", directory_urls: bool = True) -> dict[int, str]:
    """Assign every tool a page; returns id(tool) -> source path (`<page_dir>/<slug>.md`)."""
    page_dir = page_dir.strip("/")
    sources: dict[int, str] = {}
    stems = names(catalog)
    for tool in catalog.tools:
        name = stems[id(tool)]
        sources[id(tool)] = f"{page_dir}/{name}.md"
        tool.url = f"{page_dir}/{name}/" if directory_urls else f"{page_dir}/{name}.html"
    return sources


def index_source(page_dir: str = "tools") -> str:
    return f"{page_dir.strip('/')}/{INDEX}.md"
