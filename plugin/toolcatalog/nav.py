"""The MkDocs host's navigation and `mkdocs serve` watching (MkDocs-specific; plugin.py's helpers).

`catalog_nav` puts the catalog index, and the tool pages grouped by format, into
the site's nav as one section: where the user's nav names the index, else at
the end. `watch_manifests` tells the dev server which folders to watch.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from markupsafe import escape
from mkdocs.config.defaults import MkDocsConfig
from mkdocs.structure.files import Files
from mkdocs.structure.nav import Navigation, Section
from mkdocs.structure.pages import Page

from .model import FORMAT_TITLES, FORMATS, Catalog
from .options import Options


def catalog_nav(nav: Navigation, config: MkDocsConfig, files: Files, catalog: Catalog, options: Options,
                index_uri: str, ours: set[str]) -> Navigation | None:
    """`nav` with the catalog section in place. `ours`: the source paths of the pages this plugin
    placed (generated, or a user's page that replaces one): the only pages moved into the section,
    so a user's own page under `page_dir` keeps its place in their nav."""
    index_file = files.get_file_from_path(index_uri)
    if index_file is None:
        return None
    index_page = index_file.page or Page(None, index_file, config)
    children: list[Any] = [index_page]
    if list_tools(options.nav_tools, len(catalog.tools)):
        for fmt in FORMATS:
            pages = []
            for tool in catalog.tools:
                if tool.format != fmt:
                    continue
                file = files.get_file_from_path(tool.page)
                if file is None:
                    continue
                # Themes render titles without autoescaping: a manifest's name arrives escaped.
                pages.append(file.page or Page(escape(tool.name), file, config))
            if pages:
                children.append(Section(FORMAT_TITLES[fmt], pages))
    section = Section(options.nav_title, children)

    position: list[Any] | None = None

    def prune(items: list[Any]) -> list[Any]:
        nonlocal position
        kept = []
        for item in items:
            if getattr(item, "is_page", False) and item.file.src_uri in ours:
                if item.file.src_uri == index_uri and position is None:
                    position = kept
                    if item.title:  # the title the user gave the catalog in their nav
                        section.title = item.title
                    kept.append(section)
                continue
            if getattr(item, "is_section", False):
                item.children = prune(item.children)
                if not item.children:
                    continue
            kept.append(item)
        return kept

    items = prune(list(nav.items))
    if position is None:
        items.append(section)
    pages: list[Page] = []
    _link_parents(items, None, pages)
    for previous, page, following in zip([None, *pages[:-1]], pages, [*pages[1:], None]):
        page.previous_page, page.next_page = previous, following
    return Navigation(items, pages)


def list_tools(setting: bool | int, count: int) -> bool:
    """Whether the nav lists the tool pages (`nav_tools`: true, false, or up to N tools)."""
    if isinstance(setting, bool):
        return setting
    return count <= setting


def _link_parents(items: list[Any], parent: Any, pages: list[Page]) -> None:
    for item in items:
        item.parent = parent
        if getattr(item, "is_section", False):
            _link_parents(item.children, item, pages)
        elif getattr(item, "is_page", False):
            pages.append(item)


def watch_manifests(server: Any, workspace: Path, options: Options, catalog: Catalog | None) -> None:
    """Rebuild when a manifest folder (or an implementation in it) changes; the results cache makes
    that rebuild re-run only the tools whose folders changed."""
    watched: set[str] = set()
    if options.paths:
        watched.update(str((workspace / p).resolve()) for p in options.paths)
    elif catalog is not None:
        for tool in catalog.tools:
            watched.add(str(tool.abs_path.parent))
            if tool.descriptor_source:  # the whole distribution: descriptor, package, code
                watched.add(str((workspace / tool.descriptor_source).parent))
        for driver in catalog.drivers:
            watched.add(str(driver.abs_path.parent))
        # The formats' container folders, so a new tool is noticed without a restart.
        for folder in (".agent/tools", ".tools", ".drivers"):
            if (workspace / folder).is_dir():
                watched.add(str((workspace / folder).resolve()))
    cache = (workspace / options.cache_dir).resolve()
    for path in sorted(watched):
        if os.path.exists(path):
            _watch_outside(server, Path(path), cache)


def _watch_outside(server: Any, path: Path, cache: Path) -> None:
    """Watch `path` recursively, except the results cache inside it: a watched cache would
    trigger a rebuild on every cache write. Folders on the way to the cache are watched flat."""
    if cache != path and path not in cache.parents:
        server.watch(str(path))
        return
    if cache == path:
        return
    server.watch(str(path), recursive=False)
    try:
        children = sorted(p for p in path.iterdir() if p.is_dir() and not p.is_symlink())
    except OSError:
        return
    for child in children:
        _watch_outside(server, child, cache)
