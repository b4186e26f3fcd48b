"""The MkDocs plugin (also loaded by ProperDocs): MkDocs hooks only.

Every step of the work is the library's (`pipeline`); the hooks put its results
where MkDocs wants them:

- `on_config`: the options, through the same rules every host uses; our templates
  go last in the theme's folders, so a `custom_dir` overrides any of them.
- `on_files`: harvest, place, check and `fail_on` (`pipeline`); one generated page
  per tool plus the catalog index.
- `on_nav`: the catalog section (`nav.catalog_nav`).
- `on_page_markdown` / `on_page_content`: titles, and the HTML the renderer made.
- `on_env` (last): each deferred page's HTML and the outputs for agents made into a private folder
  (`sitefiles.Stage`), and the build let go, before MkDocs builds the first page; when the nav
  lists no tool page, all that is done after every plugin's `on_files` instead (priority -1000),
  before MkDocs makes a page, and what lives on is copied once the catalog is freed.
- `on_page_context` / `on_post_page`: the title as metadata while the page itself renders; a
  deferred page's HTML read back, and let go once written.
- `on_post_build`: the outputs for agents moved into the site, first of every plugin's (a docs
  file MkDocs published replaces one); the digest manifest last, of the site as it is.
- `on_serve`: watch the manifest folders.

Problems in manifests are logged as warnings (so `mkdocs build --strict` fails);
a broken setup, or a tool status listed in `fail_on`, raises `PluginError`.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import gc
import pickle
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Container, Iterator, cast

from markupsafe import escape
from mkdocs.config.defaults import MkDocsConfig
from mkdocs.exceptions import PluginError
from mkdocs.plugins import BasePlugin, CombinedEvent, event_priority, get_plugin_logger
from mkdocs.structure.files import File, Files, InclusionLevel
from mkdocs.structure.nav import Navigation
from mkdocs.structure.pages import Page
from mkdocs.structure.toc import get_toc
from mkdocs import utils as mkdocs_utils
from mkdocs.utils import get_relative_url

from . import files as files_module
from . import nav as catalog_nav
from . import claims, jsonschemas, lookalike, outputs, pipeline, report, sitefiles
from .config import ToolCatalogConfig, to_options
from .discover import DiscoveryError
from .links import SourceLink, source_links
from .model import ERROR, Catalog, Tool
from .options import Options, OptionsError
from .outputs.site import Site
from .placement import SITE_WARNINGS
from .render import CSS_PATH, INDEX_TITLE, JS_PATH, Renderer, forget_remembered, index_toc, shared_ids, templates_dir, tool_toc

if TYPE_CHECKING:
    from mkdocs.utils.templates import TemplateContext

log = get_plugin_logger(__name__)
# CSS_PATH and JS_PATH are copied by MkDocs with the theme's static files, since our template folder is a theme dir.


class ToolCatalogPlugin(BasePlugin[ToolCatalogConfig]):  # mkdocs' untyped __init_subclass__: see [tool.mypy] untyped_calls_exclude
    supports_multiple_instances = False

    def __init__(self) -> None:
        self.options: Options | None = None
        self.build: pipeline.Build | None = None
        self.renderer: Renderer | None = None
        self.pages: dict[str, Tool | None] = {}  # generated page src_uri -> its tool (None: the index)
        self.workspace: Path | None = None
        self.source_link: SourceLink | None = None
        self.shared_ids: set[str] = set()  # ids more than one manifest uses: their titles name the folder
        self.deferred: set[str] = set()  # tool pages whose HTML is made when MkDocs builds them
        self.defer: bool | None = None  # whether it is (`_defer`), decided once per build
        self.claims = claims.Memo()  # each tool's claims, derived once per build for its pages and outputs
        self.early: sitefiles.Early | None = None  # the outputs written, until the digest manifest is (on_post_build)
        self.generated: set[str] = set()  # every generated page's src_uri, kept when the build is let go (`self.pages` is not)
        self.stage: sitefiles.Stage | None = None  # deferred pages' HTML and the outputs, made before the pages are built
        self.pending: outputs.Pending | None = None  # the outputs in the stage, until on_post_build moves them into the site
        self.watched: frozenset[str] | None = None  # the catalog's folders, for on_serve once the build is let go
        self.made: _Made | None = None  # the generated pages' titles and headings, when the catalog went after on_files

    def on_config(self, config: MkDocsConfig) -> MkDocsConfig | None:
        if not self.config.enabled:
            return None
        try:
            self.options = to_options(self.config)
        except OptionsError as exc:
            raise PluginError(report.plain(f"toolcatalog: {exc}")) from None
        self.workspace = Path(config.config_file_path).resolve().parent if config.config_file_path else Path.cwd()
        ours = str(templates_dir())
        if ours not in config.theme.dirs:
            config.theme.dirs.append(ours)
        if CSS_PATH not in [str(x) for x in config.extra_css]:
            config.extra_css.append(CSS_PATH)
        if JS_PATH not in [str(x) for x in config.extra_javascript]:
            config.extra_javascript.append(JS_PATH)
        self.source_link = source_links(self.options.source_uri, config.repo_url, config.edit_uri, config.docs_dir)
        return config

    def _harvest_files(self, files: Files, config: MkDocsConfig) -> Files | None:
        if not self.config.enabled or self.options is None or self.workspace is None:
            return None
        _big_blocks_mapped()  # before the harvest: see there
        _preload()
        site = Site(url=config.site_url, name=config.site_name, description=config.site_description or "", repo_url=config.repo_url)
        user_pages = [f.src_uri for f in files.documentation_pages()]
        try:
            build = pipeline.prepare(
                self.workspace, self.options, site=site, directory_urls=config.use_directory_urls,
                skip=[Path(config.docs_dir), Path(config.site_dir)], user_pages=user_pages,
            )
        except DiscoveryError as exc:
            raise PluginError(report.plain(exc)) from None
        self.build = build
        self.shared_ids = shared_ids(build.catalog.tools)
        self.renderer = Renderer([Path(d) for d in config.theme.dirs])
        for diagnostic in build.catalog.all_diagnostics():
            loud = diagnostic.severity == ERROR or diagnostic.code in SITE_WARNINGS
            (log.warning if loud else log.info)(report.diagnostic_line(diagnostic))
        if not build.catalog.tools:
            log.warning(report.nothing_found(build.catalog))
        _check(build, self.options.run_examples)
        self.claims = claims.Memo()  # the tools are final now: from here every page and output reads one record each
        try:
            pipeline.enforce_fail_on(build)
        except pipeline.FailOnError as exc:
            raise PluginError(report.plain(f"toolcatalog: {exc}")) from None
        return self._add_pages(files, config, build)

    def _add_pages(self, files: Files, config: MkDocsConfig, build: pipeline.Build) -> Files:
        """One generated page per tool, and the catalog index unless the docs have one."""
        self.pages, self.deferred, self.defer, self.made = {}, set(), None, None
        self._close_stage()
        for tool in build.catalog.tools:
            # NOT_IN_NAV only silences MkDocs' "not in nav" notice: on_nav places these pages itself.
            files.append(File.generated(config, tool.page, content="", inclusion=InclusionLevel.NOT_IN_NAV))
            self.pages[tool.page] = tool
        index = build.placement.index_page
        if files.get_file_from_path(index) is None:
            files.append(File.generated(config, index, content="", inclusion=InclusionLevel.NOT_IN_NAV))
            self.pages[index] = None
        self.generated = set(self.pages)
        return files

    # When the tool pages are made as MkDocs builds them (`_defer`) and the nav does not list them,
    # nothing after `on_files` needs the catalog but the pages' titles and headings, the nav's
    # index and the outputs: they are made then, after every plugin's `on_files`, and the catalog
    # let go before MkDocs makes a single `Page` (`sitefiles.Stage`, `_Made`). What lives on
    # from then is copied once the catalog is freed (`_move`), our `File`s too: a few
    # small objects left among the catalog's would keep nearly all of its memory (Python's
    # allocator gives an arena back only when every object in it is freed). Otherwise the
    # catalog is let go at `on_env`, as below.

    @event_priority(-1000)  # after every plugin's on_files (-100 is MkDocs' "last"): the site's files are final
    def _let_go_after_files(self, files: Files, config: MkDocsConfig) -> Files | None:
        build, options = self.build, self.options
        if not self.config.enabled or build is None or options is None or not self._defer(config):
            return None
        if catalog_nav.list_tools(options.nav_tools, len(build.catalog.tools)):
            return None  # the nav's tool pages are made from the catalog at on_nav
        del build
        self._stage_early(files, config)
        self._move(files)  # from here, where no frame of the staging holds anything (its last tool, the stage)
        return files

    on_files = CombinedEvent(_harvest_files, _let_go_after_files)

    def _stage_early(self, files: Files, config: MkDocsConfig) -> None:
        """The stage and `self.made`, from the catalog (which `_move` then lets go)."""
        build = self.build
        assert build is not None
        self._close_stage()
        made = _Made(build.placement.index_page)
        try:
            with self._staging():
                self.stage = stage = sitefiles.Stage(Path(config.site_dir))
                for src_uri, tool in self.pages.items():
                    file = files.get_file_from_path(src_uri)
                    if file is not None:
                        stage.put_page(src_uri, self._html(src_uri, _page_url(file.url)))
                        made.note_url(src_uri, file.url, _default_url(src_uri, config))
                        made.titles[src_uri] = self._title(tool)
                        made.add_toc(src_uri, index_toc(build.catalog) if tool is None else tool_toc(tool))
                made.ours = set(self.pages) | {t.page for t in build.catalog.tools} | {build.placement.index_page}
                with self.claims.active():
                    self.pending = build.write_outputs_first(stage.outputs)
                if self.workspace is not None:
                    self.watched = catalog_nav.catalog_folders(self.workspace, build.catalog)
        finally:
            del build
            if self.stage is None:
                self._let_go()
        self.made = made

    def _move(self, files: Files) -> None:
        """Let the catalog go, and copy what lives on once its memory is free (see above): `self.made`,
        our `File`s, and every file after them, which leave `files` meanwhile and come back in their
        order, and the file digests remembered for `mkdocs serve`. Nothing made before the catalog
        was let go may still be alive while it is: each small object left would keep its arena."""
        made, self.made = self.made, None
        ours = [f for f in files if f.src_uri in self.generated]
        blob = _pack((made, self.pending, self.stage, self.generated, self.watched, ours))
        if blob is None:  # something that cannot be copied (another plugin's object on a File): kept as it is
            self.made = made
            self._let_go()
            return
        tail = _take_from(files, {id(f) for f in ours})  # None for ours
        folder = self.stage.folder if self.stage is not None else None
        del made, ours
        self.pending, self.stage, self.generated, self.watched = None, None, set(), None
        remembered = files_module.take_remembered()
        self._let_go()
        try:
            self.made, self.pending, self.stage, self.generated, self.watched, copies = pickle.loads(blob)
        except BaseException:
            if folder is not None:
                shutil.rmtree(folder, ignore_errors=True)
            raise
        finally:
            files_module.restore_remembered(remembered)
        del blob, remembered
        copied = iter(copies)
        for file in tail:
            files.append(next(copied) if file is None else file)
        _give_back()

    def on_nav(self, nav: Navigation, config: MkDocsConfig, files: Files) -> Navigation | None:
        if not self.config.enabled or self.options is None:
            return None
        if self.build is None:
            if self.made is None:
                return None
            made = self.made  # the nav lists no tool page (`_let_go_after_files`): only the index, from no catalog
            return catalog_nav.catalog_nav(nav, config, files, Catalog(Path(".")), self.options, made.index, made.ours)
        ours = set(self.pages) | {t.page for t in self.build.catalog.tools} | {self.build.placement.index_page}
        return catalog_nav.catalog_nav(nav, config, files, self.build.catalog, self.options, self.build.placement.index_page, ours)

    def on_page_markdown(self, markdown: str, page: Page, config: MkDocsConfig, files: Files) -> str | None:
        made = self.made
        if made is not None and page.file.src_uri in made.titles:  # made before the catalog was let go
            page.title = made.titles[page.file.src_uri]
            if page.file.src_uri == made.index:
                page.meta["hide"] = ["toc"]
            return ""
        if page.file.src_uri not in self.pages:
            return None
        tool = self.pages[page.file.src_uri]
        # Themes render titles without autoescaping (into <title>, the nav on every page, search):
        # a manifest's name must arrive escaped. The title is the page's own (MkDocs lets a plugin
        # set it), not its metadata's: Material looks four more things up in every nav entry whose
        # metadata is not empty, and with every tool in the nav that is a million lookups per
        # thousand tools. The page being rendered gets it as metadata too (`on_page_context`),
        # because Material's <title> prints `page.title` through `striptags`, which unescapes.
        page.title = self._title(tool)
        if tool is None:
            # The index's table wants the width; Material reads `hide` (other themes ignore it and
            # show the index's short table of contents instead of an empty box).
            page.meta["hide"] = ["toc"]
        return ""

    # A generated page's HTML (a tool's, the index's) is not held by MkDocs from the moment its
    # Markdown is rendered to the end of the build (MkDocs renders every page's Markdown before it
    # builds the first one: 5,000 tool pages were in memory at once, and the index's table, a row
    # per tool, to the end): once every page's Markdown is rendered (`on_env`, ours last), each
    # deferred page's HTML is made and kept on disk in a private folder of the site (`sitefiles.Stage`), with
    # the outputs for agents, and the build is let go; each page reads its HTML back when MkDocs
    # builds it (`on_page_context`, before the search plugin reads it) and lets it go once written
    # (`on_post_page`). MkDocs' pages and the search plugin's text are then made in the memory the
    # catalog freed, not above it. Only where no other plugin's `on_page_content` comes after ours
    # (one would see the page without its HTML).

    @event_priority(-100)  # after every other plugin's: the pages' Markdown is rendered, none is built yet
    def on_env(self, env: Any, /, *, config: MkDocsConfig, files: Files) -> Any:
        if self.config.enabled and self.build is not None:
            self._stage_and_let_go(files, Path(config.site_dir))
        return None

    def _stage_and_let_go(self, files: Files, site_dir: Path) -> None:
        build = self.build
        assert build is not None
        self._close_stage()
        try:
            with self._staging():
                self.stage = stage = sitefiles.Stage(site_dir)
                for src_uri in self.deferred:
                    file = files.get_file_from_path(src_uri)
                    if file is not None and file.page is not None:
                        stage.put_page(src_uri, self._page_html(file.page))
                with self.claims.active():
                    self.pending = build.write_outputs_first(stage.outputs)
        finally:
            del build
            self._let_go()

    @contextlib.contextmanager
    def _staging(self) -> Iterator[None]:
        """Making the stage: on any failure it is closed (removed from site_dir), and an output
        that cannot be exported is the build's error, not a traceback."""
        try:
            yield
        except outputs.ExportError as exc:
            self._close_stage()
            raise PluginError(report.plain(f"toolcatalog: {exc}")) from None
        except BaseException:
            self._close_stage()
            raise

    def _close_stage(self) -> None:
        stage, self.stage, self.pending = self.stage, None, None
        if stage is not None:
            stage.close()

    def on_build_error(self, *, error: Exception) -> None:
        self._close_stage()

    @event_priority(100)  # first: the search plugins index `page.content` in this event
    def on_page_context(self, context: TemplateContext, /, *, page: Page, config: MkDocsConfig, nav: Navigation) -> TemplateContext | None:
        if page.file.src_uri in self.generated:
            page.meta["title"] = page.title  # for this page's own render only: see on_page_markdown
            if page.file.src_uri in self.deferred:
                try:
                    staged = self.stage.take_page(page.file.src_uri) if self.stage is not None else None
                except outputs.ExportError as exc:
                    raise PluginError(report.plain(f"toolcatalog: {exc}")) from None
                if staged is not None:
                    page.content = staged
                    self._check_url(page, config)
                elif self.build is not None:  # no on_env came (a host that has none): made now
                    page.content = self._page_html(page)
        return None

    def on_post_page(self, output: str, /, *, page: Page, config: MkDocsConfig) -> str | None:
        if page.file.src_uri in self.generated:
            page.meta.pop("title", None)
            if page.file.src_uri in self.deferred:
                page.content = ""  # written: nothing reads it again
                page.toc = get_toc([])  # nor its headings (seven anchors a tool page, kept by MkDocs to the end)
        return None

    def on_page_content(self, html: str, /, *, page: Page, config: MkDocsConfig, files: Files) -> str | None:
        made = self.made
        if made is not None and page.file.src_uri in made.tocs:  # staged before the catalog was let go
            page.toc = get_toc(cast(Any, made.take_toc(page.file.src_uri)))
            self.deferred.add(page.file.src_uri)
            return ""
        if page.file.src_uri not in self.pages or self.build is None or self.renderer is None:
            return None
        tool = self.pages[page.file.src_uri]
        page.toc = get_toc(cast(Any, index_toc(self.build.catalog) if tool is None else tool_toc(tool)))
        if self._defer(config):  # the index too: its table is a row per tool (10 MB at 5,000 tools)
            self.deferred.add(page.file.src_uri)
            return ""
        return self._page_html(page)

    def _check_url(self, page: Page, config: MkDocsConfig) -> None:
        """A warning when another plugin moved a page staged after `on_files` (its relative links
        were made for the URL it had then, and the catalog is gone: they cannot be made again)."""
        made = self.made
        if made is None:
            return
        staged = made.url_of(page.file.src_uri, _default_url(page.file.src_uri, config))
        if page.file.url != staged:
            log.warning("%s moved from %s to %s after the plugin made its page (by another plugin, after "
                        "on_files); its relative links point from where it was", report.printable(page.file.src_uri),
                        report.printable(staged), report.printable(page.file.url))

    def _title(self, tool: Tool | None) -> str:
        return escape(catalog_nav.nav_title(tool, self.shared_ids)) if tool is not None else INDEX_TITLE

    def _page_html(self, page: Page) -> str:
        return self._html(page.file.src_uri, page.url)

    def _html(self, src_uri: str, page_url: str) -> str:
        assert self.build is not None and self.renderer is not None
        tool = self.pages[src_uri]

        def url_for(target: str) -> str:
            return get_relative_url(target, page_url) if target else "."

        with self.claims.active():
            if tool is None:
                return self.renderer.index_page(self.build.catalog, url_for)
            return self.renderer.tool_page(tool, self.build.catalog, url_for, self.source_link)

    def _defer(self, config: MkDocsConfig) -> bool:
        """Whether tool pages are made when built (see above): no other plugin's `on_page_content`
        runs after ours."""
        if self.defer is None:
            hooks = config.plugins.events.get("page_content", [])
            mine = [i for i, hook in enumerate(hooks) if getattr(hook, "__self__", None) is self]
            self.defer = bool(mine) and mine[-1] == len(hooks) - 1
        return self.defer

    # The outputs for agents are made at `on_env` into the stage (the catalog is let go there) and
    # moved into the site first of every plugin's `on_post_build` (priority 100), where a docs file
    # MkDocs published replaces one as before; without a stage (no `on_env` came) they are written
    # there from the catalog, which is let go then, so that the search plugin's index (its
    # `on_post_build`, MkDocs' build's peak) is made without it. The digest manifest is made last
    # (priority -100), of every file of the site as it then is, ours read again: one another
    # plugin rewrote in between is listed as it is on disk, and named in a warning.

    @event_priority(100)
    def _write_outputs(self, config: MkDocsConfig) -> None:
        self.early = None
        if not self.config.enabled:
            return
        if self.stage is not None and self.pending is not None:  # made at on_env
            try:
                self.early = sitefiles.publish(self.pending, self.stage.outputs, Path(config.site_dir), Path(config.docs_dir))
            except outputs.ExportError as exc:
                raise PluginError(report.plain(f"toolcatalog: {exc}")) from None
            finally:
                self._close_stage()
            return
        if self.build is None:
            return
        build = self.build
        try:
            with self.claims.active():
                self.early = sitefiles.outputs_first(functools.partial(build.write_outputs_first, Path(config.site_dir)),
                                                     Path(config.site_dir), Path(config.docs_dir))
        except outputs.ExportError as exc:
            raise PluginError(report.plain(f"toolcatalog: {exc}")) from None
        finally:
            del build
            self._let_go()

    def _let_go(self) -> None:
        """Everything of the build the site no longer needs: only the folders `on_serve` watches stay."""
        if self.build is not None and self.workspace is not None:
            self.watched = catalog_nav.catalog_folders(self.workspace, self.build.catalog)
        self.build, self.renderer, self.pages, self.shared_ids = None, None, {}, set()  # `deferred` and `generated` stay
        self.claims = claims.Memo()  # let the records go with the build
        _forget_caches()
        gc.collect()  # the model's objects hold cycles: free them now, before the search index is made
        _give_back()

    @event_priority(-100)
    def _write_manifest(self, config: MkDocsConfig) -> None:
        early, self.early = self.early, None
        if early is None:
            return
        published, finished = sitefiles.outputs_last(early, Path(config.site_dir))
        for path in finished.changed:
            log.warning("%s was rewritten after the plugin wrote it (by another plugin); the digest manifest "
                        "lists it as it is now", report.printable(path))
        for path in finished.gone:
            log.warning("%s was removed after the plugin wrote it (by another plugin); the digest manifest "
                        "does not list it", report.printable(path))
        _log_published(published)

    on_post_build = CombinedEvent(_write_outputs, _write_manifest)

    def on_serve(self, server: Any, config: MkDocsConfig, builder: Any) -> Any:
        if self.config.enabled and self.workspace is not None and self.options is not None:
            catalog_nav.watch_manifests(server, self.workspace, self.options, self.build.catalog if self.build else self.watched,
                                        avoid=[Path(config.docs_dir), Path(config.site_dir)])
        return server


def _libc_function(name: str) -> Any | None:
    """A function of the C library this process runs on (None: not there, e.g. no glibc)."""
    try:
        return getattr(ctypes.CDLL(None), name)
    except (OSError, AttributeError):
        return None


def _give_back() -> None:
    """Return the memory the build let go to the system (glibc's `malloc_trim`), so that the search
    plugin's index, MkDocs' largest allocation, is made in it rather than above it. Elsewhere, or
    without glibc, nothing."""
    trim = _libc_function("malloc_trim")
    if trim is None:
        return
    trim.argtypes, trim.restype = [ctypes.c_size_t], ctypes.c_int
    trim(0)


M_MMAP_THRESHOLD = -3  # glibc's <malloc.h>
BIG_BLOCK = 256 * 1024  # bytes


def _big_blocks_mapped() -> None:
    """Every allocation of `BIG_BLOCK` bytes or more mapped on its own, and so given back to the
    system as soon as it is freed (glibc's `mallopt(M_MMAP_THRESHOLD)`). By default glibc raises
    that threshold to the size of each large block freed, up to 32 MB: a build's large transient
    texts (a 5,000-tool index page, the search plugin's JSON chunks) then come from the heap, and
    the heap keeps what they freed. The search plugin joins its index from a list of ~4 MB chunks
    and then encodes the joined text: with the chunks' memory kept, the index cost three times
    its size at the build's peak instead of twice. Elsewhere, or without glibc, nothing."""
    mallopt = _libc_function("mallopt")
    if mallopt is None:
        return
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    mallopt(M_MMAP_THRESHOLD, BIG_BLOCK)


@dataclass
class _Made:
    """What MkDocs asks of the generated pages after `on_files` when the catalog is let go there
    (`ToolCatalogPlugin._let_go_after_files`): each page's title and headings (taken once
    used), the catalog index's page, and the pages the catalog section is made of."""

    index: str  # the catalog index's src_uri
    titles: dict[str, str] = field(default_factory=dict)  # src_uri -> the title (escaped: `on_page_markdown`)
    tocs: dict[str, Any] = field(default_factory=dict)  # src_uri -> its headings, one object per distinct list (`add_toc`)
    ours: set[str] = field(default_factory=set)  # for `nav.catalog_nav`
    moved: dict[str, str] = field(default_factory=dict)  # src_uri -> its URL when staged, where not MkDocs' default (`note_url`)
    _distinct: dict[Any, Any] = field(default_factory=dict)

    def add_toc(self, src_uri: str, entries: list[dict[str, Any]]) -> None:
        """A page's headings as `render.tool_toc` gives them, kept as one tuple per distinct list
        (a few kinds of tool page: thousands of pages, a few dozen tuples) when each is a heading
        without children, else as given."""
        if all(set(e) == {"level", "id", "name", "children"} and e["children"] == [] for e in entries):
            key: Any = tuple((e["level"], e["id"], e["name"]) for e in entries)
            self.tocs[src_uri] = self._distinct.setdefault(key, key)
        else:
            self.tocs[src_uri] = entries

    def note_url(self, src_uri: str, url: str, default: str) -> None:
        """The URL the page's links were made for, kept only where it is not the default one."""
        if url != default:
            self.moved[src_uri] = url

    def url_of(self, src_uri: str, default: str) -> str:
        """The URL the page's links were made for (`note_url`)."""
        return self.moved.get(src_uri, default)

    def take_toc(self, src_uri: str) -> list[dict[str, Any]]:
        """The page's headings as `add_toc` was given them, once."""
        kept = self.tocs.pop(src_uri)
        if isinstance(kept, tuple):
            return [{"level": level, "id": anchor, "name": name, "children": []} for level, anchor, name in kept]
        return list(kept)


def _preload() -> None:
    """What the harvest loads once for the whole process, loaded before it: the id check's table of
    confusable characters (made from ≈ 6 MB of data, which is let go once it is made). Made in
    the middle of the harvest, among the catalog's objects, it kept their memory from going back
    to the system when the catalog was let go (Python's allocator gives back a 1 MB arena only
    once every object in it is freed)."""
    lookalike.skeleton("a")


def _forget_caches() -> None:
    """The caches keyed by the catalog's texts, schemas and URLs, emptied when it is let go (the
    same reason as `_preload`): the remembered renderings, the compiled schemas and patterns,
    and MkDocs' cache of normalized URL paths (filled by the relative links of our pages; a
    cache only, filled again as needed)."""
    forget_remembered()
    jsonschemas.forget_compiled()
    norm_parts = getattr(mkdocs_utils, "_norm_parts", None)
    clear = getattr(norm_parts, "cache_clear", None)
    if callable(clear):
        clear()


def _default_url(src_uri: str, config: MkDocsConfig) -> str:
    """The URL MkDocs gives a file of that path unless a plugin changes it."""
    return File(src_uri, None, config.site_dir, config.use_directory_urls).url


def _page_url(file_url: str) -> str:
    """The URL MkDocs' `Page` of a file has (`Page.url`): the site's root is ''."""
    return "" if file_url in (".", "./") else file_url


def _pack(kept: Any) -> bytes | None:
    """`kept` as one block of bytes, to be made again as new objects (None: it cannot be copied).
    Any exception: another plugin's object on a `File` may refuse in its own way (its
    `__reduce__` raising what it likes), and the files are then kept as they are."""
    try:
        return pickle.dumps(kept, protocol=pickle.HIGHEST_PROTOCOL)
    except Exception:
        return None


def _take_from(files: Files, ours: Container[int]) -> list[File | None]:
    """The files from the first of `ours` (by id) to the last file, removed from `files`, in their
    order, None in place of each of ours (nothing here keeps one alive)."""
    listed = list(files)
    first = next((n for n, f in enumerate(listed) if id(f) in ours), len(listed))
    tail: list[File | None] = []
    for file in listed[first:]:
        files.remove(file)
        tail.append(None if id(file) in ours else file)
    return tail


def _log_published(published: sitefiles.Published) -> None:
    for path in published.overridden:
        log.info("%s exists in docs_dir; it replaces the generated one", report.printable(path))
    for path in published.skipped:
        log.warning("%s in site_dir is not a regular file; the digest manifest does not list it", report.printable(path))
    log.info("wrote %d files for agents (catalog, schema, per-tool JSON, MCP tools, llms.txt, digest manifest)", len(published.files))
    if published.catalog_digest:  # the trust anchors of `toolcatalog verify --digest`
        log.info("catalog digest %s", published.catalog_digest)
    if published.site_digest:
        log.info("site digest %s (every file of the site, by its digest manifest)", published.site_digest)


def _check(build: pipeline.Build, run_examples: bool) -> None:
    """Run the examples (when the options say so) and log what happened."""
    stats = pipeline.check(build) if run_examples else None
    # Cache entries and results files not used, and why (a results file missing is only information:
    # a local build has no CI artifacts).
    for note in pipeline.notes(build):
        (log.warning if note.warning else log.info)(report.printable(f"toolcatalog: {note.text}"))
    if stats is None:
        return
    log.info(
        "checked %d tools in %.1fs: %d processes started, %d tools' results from the cache%s",
        stats.tools, stats.seconds, stats.processes, stats.cached,
        f", {stats.given} from results files" if stats.given else "",
    )
    (log.warning if stats.sandbox_weaker else log.info)("example processes: %s", stats.sandbox)
    for line in report.failures(build.catalog):
        log.warning(line)
    # Each result's outcome as run or read from the cache, which the tools hold a scrubbed copy
    # of: only a results file (`toolcatalog check --results-out`) reads these, never a site.
    stats.results.clear()
