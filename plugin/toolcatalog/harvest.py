"""From a workspace to a `Catalog`: discover, parse every manifest, link, order.

A manifest that cannot be parsed still becomes a tool, marked invalid with the
reason, so one bad file never hides the rest of the catalog.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Callable

from .discover import CLI_MD, DRIVER_MD, SMART_TOOL_JSON, SMART_TOOL_MD, TOOL_MD, Discovery, Found, discover, relative
from . import lookalike
from .formats import aip14, aip29, aip30, common, link, smarttool, speccify
from . import sealing
from . import formatregistry
from .formatregistry import AIP14, SMART_TOOL, SPECCIFY
from .model import ERROR, WARNING, Catalog, Diagnostic, Driver, SearchScope, Tool, invalid_reason
from .statuses import Status
from .options import Options
from .modelcodec import Shared
from .parsecache import ParseCache


# Until a check runs (it may never: `run_examples: false`, `toolcatalog validate`).
NOT_CHECKED = "not run: this build did not run examples and checks"


def harvest(workspace: Path, options: Options | None = None, skip: list[Path] | None = None,
            shared: Shared | None = None) -> Catalog:
    """Harvest every manifest under `workspace` (a folder; usually the one holding mkdocs.yml).
    Equal text and JSON values of all the tools and drivers are one object each (`shared`, or a
    table of this harvest's own: see `modelcodec.Shared`), as each manifest is read."""
    options = options or Options()
    shared = shared if shared is not None else Shared()
    workspace = Path(os.path.abspath(workspace))
    found = discover(workspace, options.paths, options.exclude, skip)
    catalog = Catalog(root=workspace, diagnostics=list(found.diagnostics))
    catalog.search = SearchScope(found.roots, list(found.patterns), list(options.exclude), found.skipped)
    max_bytes = options.max_manifest_bytes
    cache = _parse_cache(workspace, options, catalog)

    for tool in _smart_tools(found, workspace, max_bytes):
        shared.model(tool)
        catalog.tools.append(tool)
    _tool_and_driver_files(found, workspace, max_bytes, cache, catalog, shared)
    catalog.notes.extend(cache.notes())
    _settle(catalog)
    return catalog


def _smart_tools(found: Discovery, workspace: Path, max_bytes: int) -> list[Tool]:
    """Smart tools: one per distribution root (a `smart-tool.json` and the SMART_TOOL.md files
    below it), and one per folder of SMART_TOOL.md files no descriptor owns."""
    tools: list[Tool] = []
    descriptors = [f for f in found.files if f.name == SMART_TOOL_JSON]
    roots = {f.path.parent for f in descriptors}
    owned: dict[Path, list[Path]] = {root: [] for root in roots}
    standalone: dict[Path, list[Path]] = {}
    for item in found.files:
        if item.name == SMART_TOOL_MD:
            owner = _owner(item.path, roots)
            if owner is not None:
                owned[owner].append(item.path)
            else:
                standalone.setdefault(smarttool.standalone_root(item.path, item.search_root), []).append(item.path)
    for descriptor in descriptors:
        root = descriptor.path.parent
        tools.append(_guarded(
            lambda: smarttool.parse_distribution(descriptor.path, workspace, max_bytes, owned[root])[0],
            descriptor.path, workspace, SMART_TOOL.id))
    for root, manifests in sorted(standalone.items()):
        tools.append(_guarded(
            lambda: smarttool.parse_standalone(manifests, root, workspace, max_bytes),
            min(manifests), workspace, SMART_TOOL.id))
    return tools


def _tool_and_driver_files(found: Discovery, workspace: Path, max_bytes: int, cache: ParseCache, catalog: Catalog,
                           shared: Shared) -> None:
    """Every TOOL.md, DRIVER.md and CLI.md found, through the parse cache."""
    for item in found.files:
        source = relative(item.path, workspace)
        if item.name == TOOL_MD:
            tool = cache.parsed(
                Tool, item.path, source, item.hint,
                lambda raw: _guarded(lambda: _parse_tool_md(item, source, max_bytes, raw), item.path, workspace, item.hint),
                _cacheable,
            )
            _list_implementations(tool, item.path.parent)
            shared.model(tool)
            catalog.tools.append(tool)
        elif item.name in (DRIVER_MD, CLI_MD):
            driver = cache.parsed(Driver, item.path, source, item.hint,
                                  lambda raw: _parse_driver(item.path, source, max_bytes, raw, item.name == CLI_MD), _cacheable)
            driver.search_root = item.search_root
            shared.model(driver)
            catalog.drivers.append(driver)


def _settle(catalog: Catalog) -> None:
    """Link drivers to tools, order both, flag lookalike ids, and give every tool its status
    until a check runs."""
    link.link(catalog)
    for driver in catalog.drivers:
        if not any(entry.tool_id for entry in driver.implements):
            catalog.diagnostics.extend(d for d in driver.diagnostics if d.severity == ERROR)
    catalog.tools.sort(key=lambda t: (t.id, t.source))
    catalog.drivers.sort(key=lambda d: (d.id, d.source))
    _lookalike_ids(catalog)
    for tool in catalog.tools:
        tool.status = Status.INVALID if not tool.valid else Status.NOT_RUN
        tool.status_detail = NOT_CHECKED if tool.valid else invalid_reason(tool)
        for example in tool.examples:
            example.detail = NOT_CHECKED


def _lookalike_ids(catalog: Catalog) -> None:
    """Flag, for reviewers, ids that can pass for another: one that mixes scripts, and ids that
    differ but look the same (`lookalike.skeleton`). Warnings: a lookalike may be innocent, and
    an id outside a format's ASCII rule is an error there already."""
    groups: dict[str, list[Tool]] = {}
    for tool in catalog.tools:
        scripts = lookalike.mixed_scripts(tool.id)
        if scripts:
            tool.warning(f"the id {lookalike.shown(tool.id)} mixes scripts ({', '.join(s.title() for s in scripts)}): "
                         f"{lookalike.differences(tool.id)}; it can pass for an id it is not", tool.id_line, "id-mixed-script")
        groups.setdefault(lookalike.skeleton(tool.id), []).append(tool)
    for group in groups.values():
        ids = sorted({t.id for t in group})
        if len(ids) < 2:
            continue
        sources = ", ".join(f"{lookalike.shown(t.id)} in {t.source}" for t in group[:5]) + (" and more" if len(group) > 5 else "")
        catalog.diagnostics.append(Diagnostic(WARNING, f"{len(ids)} different ids look alike: {sources}", group[0].source,
                                              group[0].id_line, "id-lookalike"))
        for tool in group:
            others = [t for t in group if t.id != tool.id]  # one named, the rest counted: never N² text
            more = f" and {len(others) - 1} more" if len(others) > 1 else ""
            odd = lookalike.differences(tool.id + others[0].id)
            tool.warning(f"the id {lookalike.shown(tool.id)} looks like {lookalike.shown(others[0].id)} of {others[0].source}{more}"
                         + (f" (characters outside ASCII: {odd})" if odd else "") + "; make sure it is the tool it seems",
                         tool.id_line, "id-lookalike")


def _parse_cache(workspace: Path, options: Options, catalog: Catalog) -> ParseCache:
    """Where parse results are kept (beside the results, see `parsecache`), sealed with the build's
    key; no caching when `cache` is off or there is no key (the catalog's notes say why)."""
    if not options.cache:
        return ParseCache(None, options.max_manifest_bytes)
    try:
        key = sealing.build_key(workspace)
    except sealing.KeyUnavailable as exc:
        catalog.notes.append(sealing.no_key_note(exc))
        return ParseCache(None, options.max_manifest_bytes)
    folder = sealing.cache_dir(workspace, options.cache_dir)
    return ParseCache(folder, options.max_manifest_bytes, key, base=sealing.cache_base(workspace, folder))


def _cacheable(parsed: Tool | Driver) -> bool:
    """A parser bug's result is never kept: the next build tries again (and maybe a fixed parser)."""
    return not any(d.code == "internal-error" for d in parsed.diagnostics)


def _parse_driver(path: Path, source: str, max_bytes: int, raw: bytes | None, cli_md: bool = False) -> Driver:
    try:
        parse = aip29.parse if cli_md else aip30.parse
        return parse(path, source, max_bytes, raw)
    except Exception as exc:  # a bug in the parser: this driver is invalid, the build goes on
        driver = Driver(id=path.parent.name, name=path.parent.name, kind=None, version=None,
                        description="", source=source, abs_path=path)
        driver.diagnostics.append(_internal_error(exc, source))
        return driver


def _owner(path: Path, roots: set[Path]) -> Path | None:
    """The innermost distribution root holding `path` (a nested descriptor bounds a nested
    distribution): its nearest folder that is a root. One set lookup per parent folder, so
    harvesting N tools stays linear."""
    for parent in path.parents:
        if parent in roots:
            return parent
    return None


def _guarded(parse: Callable[[], Tool], path: Path, workspace: Path, hint: str) -> Tool:
    """`parse()`, or, when a parser has a bug that this manifest triggers, an invalid tool that
    says so: one manifest never stops the harvest of the others."""
    try:
        return parse()
    except Exception as exc:
        source = relative(path, workspace)
        tool = Tool(id=path.parent.name, name=path.parent.name, format=_tool_format(hint, path.name), source=source, abs_path=path)
        tool.diagnostics.append(_internal_error(exc, source))
        return tool


def _tool_format(hint: str, name: str) -> str:
    """The tool format a file called `name` found with `hint` is read as when its content cannot
    decide: the hint's, else the one such files are read as when nothing claims them."""
    hinted = formatregistry.get(hint)
    if hinted is not None and hinted.kind == formatregistry.TOOL:
        return hinted.id
    fallback = formatregistry.unclaimed(name)
    return fallback.id if fallback is not None else SPECCIFY.id


def _list_implementations(tool: Tool, folder: Path) -> None:
    """A tool's implementation files, for formats that have them (`Format.implementations`):
    listed here, never by the parser: the folder is not part of what the parse cache holds."""
    lister = tool.format_info.implementations
    if lister:
        tool.implementations = formatregistry.resolve(lister)(folder)


def _internal_error(exc: Exception, source: str) -> Diagnostic:
    return Diagnostic(
        ERROR,
        f"internal error while reading this manifest ({type(exc).__name__}: {str(exc)[:200]}); please report it",
        source,
        None,
        "internal-error",
    )


def _parse_tool_md(item: Found, source: str, max_bytes: int, raw: bytes | None = None) -> Tool:
    """Classify a TOOL.md by its content (AIP-14 has `id`), and say so when the folder suggests
    otherwise. `raw`: the file's bytes when already read."""
    diagnostics: list[Diagnostic] = []
    sink = common.Sink(source, diagnostics)
    manifest = common.read_manifest(item.path, sink, max_bytes, raw)
    if manifest is None:
        # Unreadable: the format the location suggests gets the tool and the reason.
        parser = formatregistry.resolve(formatregistry.of(_tool_format(item.hint, item.name)).parser)
        tool: Tool = parser(item.path, source, max_bytes, manifest=None, diagnostics=diagnostics, read=False)
        return tool
    # In speccify's own folder only an `id` makes a TOOL.md AIP-14: speccify keeps unknown keys, so
    # a speccify tool may well carry a `version` or `tags`.
    is_aip14 = "id" in manifest.data if item.hint == SPECCIFY.id else aip14.looks_like_aip14(manifest.data)
    if is_aip14:
        if item.hint == SPECCIFY.id:
            sink.warning(
                "this TOOL.md has an AIP-14 `id`, so it is read as AIP-14, but it sits in `.agent/tools/` (speccify's folder)",
                manifest.line(("id",)),
                "misclassified",
            )
        return aip14.parse(item.path, source, max_bytes, manifest=manifest, diagnostics=diagnostics)
    tool = speccify.parse(item.path, source, max_bytes, manifest=manifest, diagnostics=diagnostics)
    if item.hint == AIP14.id:
        tool.warning(
            "this TOOL.md sits in `.tools/` (AIP-14's folder) but has no `id`, so it is read as a speccify tool",
            2,
            "misclassified",
        )
    return tool
