"""The MkDocs host's navigation and `mkdocs serve` watching (MkDocs-specific; plugin.py's helpers).

`catalog_nav` puts the catalog index, and the tool pages grouped by format, into
the site's nav as one section: where the user's nav names the index, else at
the end. `watch_manifests` tells the dev server which folders to watch.
"""

from __future__ import annotations

import os
import posixpath
from pathlib import Path
from typing import Any, Iterable

from markupsafe import escape
from mkdocs.config.defaults import MkDocsConfig
from mkdocs.structure import StructureItem
from mkdocs.structure.files import Files
from mkdocs.structure.nav import Navigation, Section
from mkdocs.structure.pages import Page

from . import sealing
from .model import FORMAT_TITLES, FORMATS, Catalog, Tool
from .pageview import sorted_tools
from .render import shared_ids
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
        groups: list[tuple[str, list[StructureItem]]] = []
        shared = shared_ids(catalog.tools)
        # By the title the nav shows (with the folder of an id several manifests share), as the index lists them.
        ordered = sorted(sorted_tools(catalog.tools), key=lambda t: nav_title(t, shared).casefold())
        for fmt in FORMATS:
            group: list[StructureItem] = []
            for tool in ordered:
                if tool.format != fmt:
                    continue
                file = files.get_file_from_path(tool.page)
                if file is None:
                    continue
                # Themes render titles without autoescaping: a manifest's name arrives escaped.
                group.append(file.page or Page(escape(nav_title(tool, shared)), file, config))
            if group:
                groups.append((fmt, group))
        if len(groups) == 1:
            # One format only: its section would be the catalog's sole group, a level that says
            # nothing the index does not (and a level of nav every page of a big catalog renders).
            children += groups[0][1]
        else:
            children += [Section(FORMAT_TITLES[fmt], group) for fmt, group in groups]
    section = Section(options.nav_title, children)

    position: list[Any] | None = None

    def prune(items: list[Any]) -> list[Any]:
        nonlocal position
        kept: list[Any] = []
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


def nav_title(tool: Tool, shared: set[str]) -> str:
    """The tool's name; for an id more than one manifest uses, with its manifest's folder, so
    the entries can be told apart ("samplegood (sample-good/src/samplegood)")."""
    if tool.id not in shared:
        return tool.name
    return f"{tool.name} ({posixpath.dirname(tool.source) or tool.source})"


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


# MkDocs 1.6 polls every watched folder with a thread of its own: a few big folders cost far less
# than one per tool (1,000 tool folders kept a core busy while idle).
WATCH_LIMIT = 8


def watch_manifests(server: Any, workspace: Path, options: Options, catalog: Catalog | frozenset[str] | None,
                    avoid: Iterable[Path] = ()) -> list[Path]:
    """Rebuild when a manifest folder (or an implementation in it) changes; the results cache makes
    that rebuild re-run only the tools whose folders changed. `avoid`: folders never watched from
    here (the docs folder MkDocs watches itself, the site folder a build writes). Returns the
    folders watched recursively."""
    cache = sealing.cache_dir(workspace, options.cache_dir).resolve()
    skip = [cache, *(Path(os.path.realpath(p)) for p in avoid)]
    folders = watch_folders(workspace, options, catalog, skip)
    for folder in folders:
        _watch_outside(server, folder, skip)
    return folders


def catalog_folders(workspace: Path, catalog: Catalog) -> frozenset[str]:
    """The folders of every manifest of `catalog` (and of each distribution, each driver), which
    `watch_folders` starts from: what the dev server needs of the catalog once it is let go."""
    wanted: set[str] = set()
    for tool in catalog.tools:
        wanted.add(str(tool.abs_path.parent))
        if tool.descriptor_source:  # the whole distribution: descriptor, package, code
            wanted.add(str((workspace / tool.descriptor_source).parent))
    for driver in catalog.drivers:
        wanted.add(str(driver.abs_path.parent))
    return frozenset(wanted)


def watch_folders(workspace: Path, options: Options, catalog: Catalog | frozenset[str] | None,
                  avoid: Iterable[Path] = ()) -> list[Path]:
    """The few folders that hold every manifest folder (and the formats' container folders, so a new
    tool is noticed without a restart), none inside another, so one edit is one change event and
    one rebuild. Sibling folders are replaced by their parent until at most `WATCH_LIMIT` remain;
    the workspace itself is never watched whole (it holds the site and the docs). `catalog` may be
    its `catalog_folders`."""
    root = Path(os.path.realpath(workspace))
    wanted: set[str] = set()
    if options.paths:
        wanted.update(str(workspace / p) for p in options.paths)
    else:
        if catalog is not None:
            wanted.update(catalog if isinstance(catalog, frozenset) else catalog_folders(workspace, catalog))
        for container in (".agent/tools", ".tools", ".drivers"):
            wanted.add(str(workspace / container))
    folders = _outermost({Path(os.path.realpath(p)) for p in wanted if os.path.isdir(p)})
    blocked = [Path(os.path.realpath(p)) for p in avoid]
    while len(folders) > WATCH_LIMIT:
        parents: dict[Path, int] = {}
        for folder in folders:
            parent = folder.parent
            if root in parent.parents and not any(parent == b or parent in b.parents for b in blocked):
                parents[parent] = parents.get(parent, 0) + 1
        if not parents:
            break
        merged = max(parents, key=lambda p: (parents[p], len(p.parts), str(p)))
        folders = _outermost({merged, *folders})
    return folders


def _outermost(folders: set[Path]) -> list[Path]:
    """`folders` without those inside another one, sorted."""
    return sorted(f for f in folders if not any(parent in folders for parent in f.parents))


def _watch_outside(server: Any, path: Path, avoid: list[Path]) -> None:
    """Watch `path` recursively, except the folders in `avoid` inside it (a watched results cache
    would trigger a rebuild on every cache write, a watched site folder on every build). Folders
    on the way to an avoided one are watched flat."""
    if path in avoid:
        return
    inside = [a for a in avoid if path in a.parents]
    if not inside:
        server.watch(str(path))
        return
    server.watch(str(path), recursive=False)
    try:
        children = sorted(p for p in path.iterdir() if p.is_dir() and not p.is_symlink())
    except OSError:
        return
    for child in children:
        _watch_outside(server, child, avoid)
