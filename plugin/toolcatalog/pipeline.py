"""One build, the same for every host: harvest → place → check → fail_on → outputs.

The MkDocs plugin, every `toolcatalog` command, the Markdown export and any
program that uses the library drive a build through this module:

    build = pipeline.prepare(workspace, options, site=Site(name="Tools"))   # harvest and place
    pipeline.check(build)                                                   # run examples and checks
    pipeline.enforce_fail_on(build)                                         # raise FailOnError
    files = build.outputs()                                                 # {site path: text}
    pages = build.markdown_pages()                                          # {docs path: Markdown}, for plugin-less generators

`pipeline.run(...)` does all four. Options are checked by their own rules
(`Options.from_mapping`) before they get here; nothing in this module logs or
prints: hosts report what a build found (`Build.diagnostics`, `Build.stats`).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Collection, Iterable, Mapping

from . import claims, coverage, outputs, quality, sealing
from .conformance import engine, resultsfile
from .discover import MAX_DEPTH
from .harvest import harvest
from .links import SourceLink
from .model import Catalog, Diagnostic, Note, Tool
from .modelcodec import Shared
from .options import Options
from .outputs import FileDigest, Pending, Written
from .outputs.site import Site
from .placement import Placement, place

__all__ = ["Build", "FailOnError", "check", "enforce_fail_on", "fail_reasons", "failing", "notes", "prepare", "run", "user_pages"]


class FailOnError(Exception):
    """Tools fail a gate of the `fail_on` option: a status, a quality code or a coverage threshold."""

    def __init__(self, tools: list[Tool], reasons: dict[int, list[str]] | None = None):
        reasons = reasons or {}
        more = f" and {len(tools) - 20} more" if len(tools) > 20 else ""
        if all(reasons.get(id(t), [f"status {t.status.value}"]) == [f"status {t.status.value}"] for t in tools):
            names = ", ".join(f"{t.id} ({t.status.value})" for t in tools[:20])
            super().__init__(f"{len(tools)} tool(s) have a status listed in `fail_on`: {names}{more}")
        else:
            names = ", ".join(f"{t.id} ({'; '.join(reasons.get(id(t), []))})" for t in tools[:20])
            super().__init__(f"{len(tools)} tool(s) fail a `fail_on` gate: {names}{more}")
        self.tools = tools
        self.reasons = reasons


@dataclass
class Build:
    """One workspace's catalog on its way to a site."""

    workspace: Path
    options: Options
    site: Site
    catalog: Catalog
    placement: Placement
    stats: engine.Stats | None = None  # set by `check`
    diagnostics: list[Diagnostic] = field(default_factory=list)  # what placing the pages found
    directory_urls: bool = True  # how the site's URLs look (MkDocs' `use_directory_urls`)
    user_pages: list[str] = field(default_factory=list)  # the site's own pages (docs-relative paths)
    # Equal text and JSON values, one object each, from the harvest until `check` (see `modelcodec.Shared`).
    shared: Shared | None = None

    def all_diagnostics(self) -> list[Diagnostic]:
        return [*self.catalog.all_diagnostics(), *self.diagnostics]

    def outputs(self, others: Mapping[str, outputs.FileDigest] | None = None, overridden: Collection[str] = ()) -> dict[str, str]:
        """Every output for agents as `{site path: text}`. `others`: the site's own files, which the
        digest manifest lists too; `overridden`: outputs the site's own files replace (see
        `outputs.render`). Raises outputs.ExportError."""
        with claims.once():  # the catalog, the per-tool files, the MCP list and llms.txt read one record per tool
            return outputs.render(self.catalog, self.options, self.site, others, overridden)

    def write_outputs(self, folder: Path, others: Mapping[str, FileDigest] | None = None,
                      overridden: Collection[str] = ()) -> Written:
        """`outputs()` written under `folder` as each file is made, never all held at once (see
        `outputs.write_site`; the same bytes). Raises outputs.ExportError."""
        with claims.once():
            return outputs.write_site(self.catalog, self.options, self.site, folder, others, overridden)

    def write_outputs_first(self, folder: Path, overridden: Collection[str] = ()) -> Pending:
        """`write_outputs` without the digest manifest (`outputs.write_site_first`): the MkDocs
        plugin lists the site last, once the build is let go. Raises outputs.ExportError."""
        with claims.once():
            return outputs.write_site_first(self.catalog, self.options, self.site, folder, overridden)

    def markdown_pages(
        self, template_dirs: Iterable[Path] = (), source_link: SourceLink | None = None,
        generator: str = "mkdocs", extra_assets: Iterable[str] = (),
    ) -> dict[str, str]:
        """The catalog's pages as Markdown, with their stylesheet and script, as `{docs path: text}`
        (see `markdown_pages`): with `outputs()`, a docs folder any generator can publish.
        `template_dirs` override our templates; `source_link` links manifest lines to the repository;
        `generator` ("mkdocs", "zensical", "mkdocs2") whose link rules the pages follow; `extra_assets`
        the paths the config's `extra_css`/`extra_javascript` load on every page."""
        from . import markdown_pages  # here, not above: checking and exporting never load the page renderer (Jinja, markdown-it)

        with claims.once():
            return markdown_pages.render(
                self.catalog, self.placement, directory_urls=self.directory_urls, template_dirs=template_dirs,
                source_link=source_link, user_pages=self.user_pages, generator=generator, extra_assets=extra_assets,
            )


def prepare(
    workspace: Path,
    options: Options | None = None,
    *,
    site: Site | None = None,
    directory_urls: bool = True,
    skip: Iterable[Path] = (),
    user_pages: Iterable[str] = (),
) -> Build:
    """Harvest every manifest under `workspace` and give each tool its place in the site.

    `skip`: folders never harvested (the docs and site folders). `user_pages`: the site's own
    page source paths, which win over a generated page at the same URL. Raises
    discover.DiscoveryError when a `paths` entry does not exist.
    """
    options = options or Options()
    workspace = Path(os.path.abspath(workspace))
    shared = Shared()
    catalog = harvest(workspace, options, skip=list(skip), shared=shared)
    quality.add_findings(catalog)  # on the contracts alone: a finding never waits for a run
    for tool in catalog.tools:
        tool.lines = {}  # where the contract's nodes are: only the findings point there
    user_pages = list(user_pages)
    placement = place(catalog, options, directory_urls, user_pages)
    catalog.diagnostics.extend(placement.diagnostics)
    return Build(workspace, options, site or Site(), catalog, placement, directory_urls=directory_urls, user_pages=user_pages,
                 shared=shared)


def check(build: Build, only: set[str] | None = None, *, results: Iterable[str] = (),
          shard: tuple[int, int] | None = None, progress: engine.Progress | None = None) -> engine.Stats:
    """Run every runnable example and check (all tools, or the ids in `only`); results land on the tools.

    Results files named by the `results` option and by `results` (files, folders, globs, relative
    to the workspace) are used wherever their key matches; `shard` (K, N) checks only the K-th
    of N balanced parts of the tools (`toolcatalog check --shard`); `progress` is told how the
    runs go (`engine.check`)."""
    patterns = [*build.options.results, *results]
    given, notes = None, []
    if patterns:
        try:
            key: sealing.Key | None = sealing.build_key(build.workspace)
        except sealing.KeyUnavailable as exc:
            key = None  # no result can be verified: every one runs here
            notes.append(sealing.no_key_note(exc))
        given = resultsfile.load(build.workspace, patterns, key)
        notes.extend(given.notes)
    build.stats = engine.check(build.catalog, build.options, only=only, given=given, shard=shard, progress=progress)
    build.stats.notes[:0] = notes
    _share_results(build)
    return build.stats


def _share_results(build: Build) -> None:
    """The results a check put on the tools (actual outputs, argv, sandbox reports) share text and
    JSON values with the contracts (an actual output equal to the example's is one object); the
    table is let go after, since the tools no longer change."""
    shared = build.shared if build.shared is not None else Shared()
    for tool in build.catalog.tools:
        shared.model(tool)
    build.shared = None


def notes(build: Build) -> list[Note]:
    """What the build has to say about itself (cache entries and results files not used, and
    why), each line once: for the host's log, never published."""
    found = [*build.catalog.notes, *(build.stats.notes if build.stats else [])]
    # A plain line (what other parts of the engine may add) is a warning.
    return list(dict.fromkeys(Note(n) if isinstance(n, str) else n for n in found))


def failing(build: Build) -> list[Tool]:
    """The tools that fail a gate of `fail_on` (a status, a quality code, a coverage threshold)."""
    return [t for t in build.catalog.tools if fail_reasons(build, t)]


def fail_reasons(build: Build, tool: Tool) -> list[str]:
    """Why `tool` fails `fail_on`, one phrase per gate (`status failed`, `quality-name-style`,
    `coverage inputs 0.5 below 0.8`); empty when it passes them all. A coverage dimension with no
    goal has no score and passes any threshold."""
    gates = build.options.fail_on
    reasons = [f"status {tool.status.value}"] if tool.status.value in gates else []
    codes = sorted({d.code for d in tool.diagnostics if d.code in quality.CODES and d.code in gates})
    reasons += codes
    thresholds = getattr(gates, "coverage_below", {})
    if thresholds:
        found = coverage.of(tool)
        for name, lowest in thresholds.items():
            score = found.score(name)
            if score is not None and score < lowest:
                reasons.append(f"coverage {name} {score:g} below {lowest:g}")
    return reasons


def enforce_fail_on(build: Build) -> None:
    bad = failing(build)
    if bad:
        raise FailOnError(bad, {id(t): fail_reasons(build, t) for t in bad})


def run(
    workspace: Path,
    options: Options | None = None,
    *,
    site: Site | None = None,
    directory_urls: bool = True,
    skip: Iterable[Path] = (),
    user_pages: Iterable[str] = (),
    run_checks: bool | None = None,
) -> Build:
    """`prepare`, then `check` (when `run_checks`, by default the `run_examples` option), then
    `enforce_fail_on`. The caller writes `build.outputs()` where it wants them."""
    build = prepare(workspace, options, site=site, directory_urls=directory_urls, skip=skip, user_pages=user_pages)
    if build.options.run_examples if run_checks is None else run_checks:
        check(build)
    enforce_fail_on(build)
    return build


def user_pages(docs_dir: Path) -> list[str]:
    """The Markdown pages of a docs folder as MkDocs names them (`a/b.md`), for hosts that have no
    file list of their own (the command line). Dot folders and files are skipped, as MkDocs does."""
    found: list[str] = []
    if not docs_dir.is_dir():
        return found
    # From an explicit stack, never recursion: the docs folder is the repository's, and so is how
    # deep its folders go (as in `discover`). Links to folders are not followed, as os.walk does not.
    stack = [""]
    while stack:
        folder = stack.pop()
        try:
            with os.scandir(docs_dir / folder if folder else docs_dir) as it:
                entries = sorted((e.name, _is_folder(e), e.is_symlink()) for e in it)
        except OSError:
            continue
        for name, is_dir, _ in entries:
            if not is_dir and name.endswith((".md", ".markdown")) and not name.startswith("."):
                found.append(f"{folder}/{name}" if folder else name)
        if folder.count("/") < MAX_DEPTH:
            stack.extend(f"{folder}/{name}" if folder else name
                         for name, is_dir, is_link in reversed(entries) if is_dir and not is_link and not name.startswith("."))
    return found


def _is_folder(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir()
    except OSError:
        return False
