"""The MkDocs plugin: orchestration only.

`on_files` harvests the workspace and adds one generated page per tool plus the
catalog index; `on_nav` groups them; `on_page_content` swaps in the HTML the
renderer made from the templates; `on_post_build` writes the JSON catalog.
Problems in manifests are logged as warnings (so `mkdocs build --strict`
fails); a broken plugin setup raises `PluginError`.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any
from urllib.parse import quote, urljoin

from markupsafe import escape
from mkdocs.config import base
from mkdocs.config import config_options as c
from mkdocs.config.defaults import MkDocsConfig
from mkdocs.exceptions import PluginError
from mkdocs.plugins import BasePlugin, get_plugin_logger
from mkdocs.structure.files import File, Files, InclusionLevel
from mkdocs.structure.nav import Navigation, Section
from mkdocs.structure.pages import Page
from mkdocs.structure.toc import get_toc
from mkdocs.utils import get_relative_url

from . import exports
from . import pages as page_plan
from . import report
from .conformance import engine
from .discover import DiscoveryError
from .frontmatter import DEFAULT_MAX_BYTES
from .harvest import harvest
from .model import ERROR, FORMAT_TITLES, FORMATS, Catalog, Tool
from .options import Options
from .render import Renderer, templates_dir, tool_toc

log = get_plugin_logger(__name__)

# Copied by MkDocs with the theme's static files, since our template folder is a theme dir.
CSS_PATH = "toolcatalog/assets/toolcatalog.css"
JS_PATH = "toolcatalog/assets/toolcatalog.js"
INDEX_TITLE = "All tools"


class ToolCatalogConfig(base.Config):
    enabled = c.Type(bool, default=True)
    """Turn the plugin off without removing it (e.g. `enabled: !ENV [TOOLCATALOG, true]`)."""

    paths = c.ListOfItems(c.Type(str), default=[])
    """Folders or manifest files to harvest, relative to mkdocs.yml. Empty: search the whole
    project for the formats' conventional places (`.agent/tools/*/TOOL.md`, `.tools/**/TOOL.md`,
    `.drivers/**/DRIVER.md`, `**/smart-tool.json`, `**/SMART_TOOL.md`). A listed folder is
    searched for every manifest file name at any depth."""

    exclude = c.ListOfItems(c.Type(str), default=[])
    """gitignore-style patterns (relative to mkdocs.yml) of files and folders never harvested."""

    page_dir = c.Type(str, default="tools")
    """Folder of the generated pages inside the site: the index is `<page_dir>/index.md`,
    each tool is `<page_dir>/<id>.md`. A page you write at the same path wins over ours."""

    catalog_file = c.Type(str, default="catalog.json")
    """Path of the JSON catalog inside the built site (`""` turns it off). Its JSON Schema is
    published beside the site root as `schemas/catalog-v1.schema.json`; every build validates the
    catalog against it."""

    tool_json_dir = c.Type(str, default="tools")
    """Folder of the per-tool JSON files inside the site: `<tool_json_dir>/<slug>.json` holds one
    tool's full catalog entry, named like its page. `"."` puts them at the site root; `""` turns
    them off."""

    mcp_file = c.Type(str, default="mcp-tools.json")
    """Path of the MCP `tools/list` result (`{"tools": [...]}`) inside the site; `""` turns it off.
    Invalid tools and tools without an object input schema are left out, each with a `mcp-omitted`
    warning in the catalog."""

    llms_file = c.Type(str, default="llms.txt")
    """Path of the llms.txt index (title, summary, one link per tool) inside the site; `""` turns
    it off (do that when another plugin writes llms.txt)."""

    source_uri = c.Optional(c.Type(str))
    """Link template for manifest files on tool pages: `{path}` is the manifest's path relative to
    mkdocs.yml and `{line}` the line (e.g. `https://github.com/o/r/blob/main/{path}#L{line}`). By
    default it is derived from `repo_url` and `edit_uri`; with neither, paths are shown unlinked."""

    max_manifest_bytes = c.Type(int, default=DEFAULT_MAX_BYTES)
    """Manifests larger than this are refused with a diagnostic instead of being parsed."""

    nav_title = c.Type(str, default="Tool catalog")
    """Title of the nav section holding the catalog index and the tool pages."""

    nav_tools = c.Type((bool, int), default=100)
    """Which tool pages the nav lists, grouped by format: `true` all, `false` none (only the index,
    which links every tool), or a number N: all while the catalog has at most N tools, else none.
    Themes like Material render the whole nav into every page, so a nav with 1,000 tool pages
    makes every page of the site heavier and the build several times slower (see `bench/`)."""

    run_examples = c.Type(bool, default=True)
    """Run every runnable example and self-description check against the real implementation
    while building. Off: examples are shown and validated, never run (status `not-run`)."""

    timeout = c.Type((int, float), default=30)
    """Seconds each example process may take before its whole process group is killed. A tool's
    own smaller `timeout_ms` (AIP-14) wins."""

    jobs = c.Type(int, default=0)
    """How many example processes run at once; 0 means one per CPU."""

    cache = c.Type(bool, default=True)
    """Reuse results while nothing they depend on changed (manifest, tool folder, drivers,
    interpreter, platform, options), so a rebuild with nothing changed starts no process."""

    cache_dir = c.Type(str, default=".cache/plugin/toolcatalog")
    """Where cached results live, relative to mkdocs.yml's folder."""

    allow_mutating = c.ListOfItems(c.Type(str), default=[])
    """AIP-14 tool ids (shell-style globs) whose examples may run although the contract says they
    mutate something or need approval; no other AIP-14 tool with `mutates` or a non-`auto` approval
    ever runs. speccify and smart tools declare no machine-readable effects, so they are not gated:
    their examples always run (keep them side-effect free, as both formats ask)."""

    env = c.ListOfItems(c.Type(str), default=[])
    """Environment variables passed to tools besides the allowlist (PATH, HOME, LANG, TMPDIR, ...).
    Smart tools never receive provider credentials (`*API_KEY*`, `*_TOKEN`, `OPENAI*`, ...)."""

    max_output_bytes = c.Type(int, default=1024 * 1024)
    """stdout a process may write before it is stopped (stderr is capped at 64 KiB)."""

    fail_on = c.ListOfItems(c.Choice(("failed", "invalid", "not-run", "not-applicable", "not-implemented", "missing-requirement", "no-examples")), default=[])
    """Tool statuses that abort the build with an error, even under `-q`. Without it, failures
    and invalid manifests are warnings, which `mkdocs build --strict` turns into a failed build."""


def options_from_config(cfg: ToolCatalogConfig) -> Options:
    """The library's options from a validated plugin config (also used by the command line)."""
    return Options(
        paths=list(cfg.paths),
        exclude=list(cfg.exclude),
        max_manifest_bytes=cfg.max_manifest_bytes,
        page_dir=cfg.page_dir,
        catalog_file=cfg.catalog_file,
        nav_title=cfg.nav_title,
        nav_tools=cfg.nav_tools,
        run_examples=cfg.run_examples,
        timeout=float(cfg.timeout),
        jobs=cfg.jobs,
        cache=cfg.cache,
        cache_dir=cfg.cache_dir,
        allow_mutating=list(cfg.allow_mutating),
        env=list(cfg.env),
        max_output_bytes=cfg.max_output_bytes,
        fail_on=list(cfg.fail_on),
        tool_json_dir=cfg.tool_json_dir,
        mcp_file=cfg.mcp_file,
        llms_file=cfg.llms_file,
    )


class ToolCatalogPlugin(BasePlugin[ToolCatalogConfig]):
    supports_multiple_instances = False

    def __init__(self) -> None:
        self.catalog: Catalog | None = None
        self.renderer: Renderer | None = None
        self.pages: dict[str, Tool | None] = {}  # generated src_uri -> its tool (None: the index)
        self.tool_src: dict[int, str] = {}  # id(tool) -> src_uri of its page
        self.index_uri: str | None = None
        self.workspace: Path | None = None
        self.source_link: Any = None
        self.json_paths: dict[int, str] | None = None  # id(tool) -> site path of its JSON file

    # -- setup ---------------------------------------------------------------------------------
    def options(self) -> Options:
        options = options_from_config(self.config)
        try:
            exports.check_options(options)
        except exports.ExportError as exc:
            raise PluginError(f"toolcatalog: {exc}") from None
        return options

    def on_config(self, config: MkDocsConfig) -> MkDocsConfig | None:
        if not self.config.enabled:
            return None
        page_dir = self.config.page_dir.strip("/")
        if not page_dir or page_dir.startswith("..") or "/../" in f"/{page_dir}/" or os.path.isabs(self.config.page_dir):
            raise PluginError(f"toolcatalog: `page_dir` must be a relative folder inside the site, not {self.config.page_dir!r}")
        if os.path.isabs(self.config.catalog_file) or ".." in Path(self.config.catalog_file).parts:
            raise PluginError(f"toolcatalog: `catalog_file` must be a path inside the site, not {self.config.catalog_file!r}")
        if self.config.max_manifest_bytes < 1024:
            raise PluginError("toolcatalog: `max_manifest_bytes` must be at least 1024")
        self.workspace = Path(config.config_file_path).resolve().parent if config.config_file_path else Path.cwd()
        # Our templates go last, so a theme `custom_dir` (searched first) overrides any of them.
        ours = str(templates_dir())
        if ours not in config.theme.dirs:
            config.theme.dirs.append(ours)
        if CSS_PATH not in [str(x) for x in config.extra_css]:
            config.extra_css.append(CSS_PATH)
        if JS_PATH not in [str(x) for x in config.extra_javascript]:
            config.extra_javascript.append(JS_PATH)
        self.source_link = source_links(config, self.config.source_uri)
        return config

    # -- harvesting and pages ------------------------------------------------------------------
    def on_files(self, files: Files, config: MkDocsConfig) -> Files | None:
        if not self.config.enabled:
            return None
        assert self.workspace is not None
        options = self.options()
        skip = [Path(config.docs_dir), Path(config.site_dir)]
        try:
            self.catalog = harvest(self.workspace, options, skip=skip)
            self.json_paths = None
        except DiscoveryError as exc:
            raise PluginError(str(exc)) from None
        self.renderer = Renderer([Path(d) for d in config.theme.dirs])
        self._log_diagnostics(self.catalog)
        if options.run_examples:
            stats = engine.check(self.catalog, options)
            log.info(
                "checked %d tools in %.1fs: %d processes started, %d tools' results from the cache",
                stats.tools, stats.seconds, stats.processes, stats.cached,
            )
            for line in report.failures(self.catalog):
                log.warning(line)
        failing = [t for t in self.catalog.tools if t.status in self.config.fail_on]
        if failing:
            names = ", ".join(f"{t.id} ({t.status})" for t in failing[:20])
            raise PluginError(f"toolcatalog: {len(failing)} tool(s) have a status listed in `fail_on`: {names}")

        self.pages = {}
        self.tool_src = page_plan.plan(self.catalog, self.config.page_dir, config.use_directory_urls)
        for tool in self.catalog.tools:
            src_uri = self.tool_src[id(tool)]
            if files.get_file_from_path(src_uri) is not None:
                log.info("toolcatalog: %s exists in docs_dir; it replaces the generated page for %r", src_uri, tool.id)
                file = files.get_file_from_path(src_uri)
            else:
                file = File.generated(config, src_uri, content="", inclusion=InclusionLevel.NOT_IN_NAV)
                files.append(file)
                self.pages[src_uri] = tool
            tool.url = file.url
        self.index_uri = page_plan.index_source(self.config.page_dir)
        if files.get_file_from_path(self.index_uri) is None:
            # NOT_IN_NAV only silences MkDocs' "not in nav" notice: on_nav places these pages itself.
            files.append(File.generated(config, self.index_uri, content="", inclusion=InclusionLevel.NOT_IN_NAV))
            self.pages[self.index_uri] = None  # type: ignore[assignment]
        return files

    def _log_diagnostics(self, catalog: Catalog) -> None:
        for diagnostic in catalog.all_diagnostics():
            text = f"{diagnostic.location()}: {diagnostic.message}"
            if diagnostic.severity == ERROR:
                log.warning(text)
            else:
                log.info(text)

    def on_nav(self, nav: Navigation, config: MkDocsConfig, files: Files) -> Navigation | None:
        if not self.config.enabled or self.catalog is None or self.index_uri is None:
            return None
        index_file = files.get_file_from_path(self.index_uri)
        if index_file is None:
            return None
        # Only the pages we generated (or that replace one of ours): a user's own page that happens
        # to live under page_dir keeps its place in their nav.
        ours = set(self.pages) | set(self.tool_src.values())
        index_page = index_file.page or Page(None, index_file, config)
        section_title = self.config.nav_title
        children: list[Any] = [index_page]
        if _list_tools(self.config.nav_tools, len(self.catalog.tools)):
            for fmt in FORMATS:
                pages = []
                for tool in self.catalog.tools:
                    if tool.format != fmt:
                        continue
                    file = files.get_file_from_path(self.tool_src[id(tool)])
                    if file is None:
                        continue
                    page = file.page or Page(escape(tool.name), file, config)
                    pages.append(page)
                if pages:
                    children.append(Section(FORMAT_TITLES[fmt], pages))
        section = Section(section_title, children)

        position: list[Any] | None = None
        slot = 0

        def prune(items: list[Any]) -> list[Any]:
            nonlocal position, slot
            kept = []
            for item in items:
                if getattr(item, "is_page", False) and item.file.src_uri in ours:
                    if item.file.src_uri == self.index_uri and position is None:
                        position, slot = kept, len(kept)
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
        new_nav = Navigation(items, pages)
        return new_nav

    def on_page_markdown(self, markdown: str, page: Page, config: MkDocsConfig, files: Files) -> str | None:
        if page.file.src_uri not in self.pages:
            return None
        tool = self.pages[page.file.src_uri]
        # Themes render titles without autoescaping (into <title>, the nav on every page, search):
        # a manifest's name must arrive escaped.
        page.meta["title"] = escape(tool.name) if tool is not None else INDEX_TITLE
        return ""

    def on_page_content(self, html: str, page: Page, config: MkDocsConfig, files: Files) -> str | None:
        if page.file.src_uri not in self.pages or self.catalog is None or self.renderer is None:
            return None
        tool = self.pages[page.file.src_uri]

        def url_for(target: str) -> str:
            return get_relative_url(target, page.url) if target else "."

        if tool is None:
            page.toc = get_toc([])
            return self.renderer.index_page(self.catalog, url_for)
        page.toc = get_toc(tool_toc(tool))
        if self.json_paths is None:
            self.json_paths = exports.tool_json_paths(self.catalog, self.options())
        return self.renderer.tool_page(tool, self.catalog, url_for, self.source_link, self.json_paths.get(id(tool)))

    def on_post_build(self, config: MkDocsConfig) -> None:
        if not self.config.enabled or self.catalog is None:
            return
        site = exports.Site(url=config.site_url, name=config.site_name, description=config.site_description or "")
        try:
            outputs = exports.render(self.catalog, self.options(), site)
        except exports.ExportError as exc:
            raise PluginError(f"toolcatalog: {exc}") from None
        for path in list(outputs):
            if (Path(config.docs_dir) / path).is_file():
                log.info("%s exists in docs_dir; it replaces the generated one", path)
                del outputs[path]
        exports.write(outputs, Path(config.site_dir))
        log.info("wrote %d files for agents (catalog, schema, per-tool JSON, MCP tools, llms.txt)", len(outputs))

    def on_serve(self, server: Any, config: MkDocsConfig, builder: Any) -> Any:
        # Manifest folders (and tool implementations in them) trigger a rebuild; the results
        # cache makes that rebuild re-run only the tools whose folders changed.
        if not self.config.enabled or self.workspace is None:
            return server
        watched: set[str] = set()
        if self.config.paths:
            watched.update(str((self.workspace / p).resolve()) for p in self.config.paths)
        elif self.catalog is not None:
            for tool in self.catalog.tools:
                watched.add(str(tool.abs_path.parent))
                if tool.descriptor_source:  # the whole distribution: descriptor, package, code
                    watched.add(str((self.workspace / tool.descriptor_source).parent))
            for driver in self.catalog.drivers:
                watched.add(str(driver.abs_path.parent))
            # The formats' container folders, so a new tool is noticed without a restart.
            for folder in (".agent/tools", ".tools", ".drivers"):
                if (self.workspace / folder).is_dir():
                    watched.add(str((self.workspace / folder).resolve()))
        cache = (self.workspace / self.config.cache_dir).resolve()
        for path in sorted(watched):
            if not os.path.exists(path):
                continue
            _watch_outside(server, Path(path), cache)
        return server


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


def _list_tools(setting: bool | int, count: int) -> bool:
    if isinstance(setting, bool):
        return setting
    return count <= setting


def source_links(config: MkDocsConfig, template: str | None) -> Any:
    """A function (path, line) -> URL of that manifest line in the repository, or None."""
    if not template:
        repo_url, edit_uri = config.repo_url, config.edit_uri
        if not repo_url or not edit_uri:
            return lambda path, line: None
        base = urljoin(repo_url.rstrip("/") + "/", edit_uri)
        # edit_uri points at the docs folder; manifests are relative to mkdocs.yml's folder.
        docs_name = Path(config.docs_dir).name
        if base.rstrip("/").endswith("/" + docs_name):
            base = base.rstrip("/")[: -len(docs_name)]
        if not base.endswith("/"):
            base += "/"
        anchor = "#L{line}" if any(host in repo_url for host in ("github", "gitlab", "bitbucket", "codeberg")) else ""
        template = base + "{path}" + anchor

    def link(path: str, line: int | None) -> str | None:
        if path.startswith("/") or ".." in path.split("/"):
            return None  # outside the repository: no link to guess
        url = template.replace("{path}", quote(path))
        if "{line}" in url:
            url = url.replace("{line}", str(line)) if line else url.split("#", 1)[0].replace("{line}", "")
        return url

    return link


def _link_parents(items: list[Any], parent: Any, pages: list[Page]) -> None:
    for item in items:
        item.parent = parent
        if getattr(item, "is_section", False):
            _link_parents(item.children, item, pages)
        elif getattr(item, "is_page", False):
            pages.append(item)
