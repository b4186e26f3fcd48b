"""The `toolcatalog` command: the plugin's work without MkDocs.

`toolcatalog validate [PATH]` harvests PATH (default: the current folder) with
the plugin options it finds in PATH's `mkdocs.yml` (or `-f FILE`), prints every
diagnostic, and exits 1 when any manifest is invalid. `toolcatalog check` does
the same and then runs every example and check, like a build does, with the
same cache. `toolcatalog export PATH -o DIR` writes the same files for agents
a build publishes (catalog, schema, per-tool JSON, MCP tool list, llms.txt),
byte for byte; `toolcatalog markdown PATH` writes the whole catalog into a docs
folder as ordinary Markdown pages plus those files, for site generators that run
no plugins; `toolcatalog diff OLD NEW` compares two catalogs and exits 1
when a change breaks callers; `toolcatalog verify DIR` recomputes the digests a
published catalog states and exits 1 on any mismatch. Exit codes: 0 fine, 1 problems found, 2 bad usage (or an
output that cannot be produced), 130 interrupted.
"""

from __future__ import annotations

import argparse
import dataclasses
import difflib
import os
import re
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

from . import coverage, docsdir, inline, outputs, pipeline, quality, sealing, terminal
from .report import diagnostic_line, nothing_found, plain, printable, reason
from ._version import __version__
from .conformance import resultsfile, shards
from .discover import DiscoveryError
from .files import is_inside
from .links import source_links
from .mkdocs_yml import ConfigFileError, Project, find_config_file, plugin_options
from .model import ERROR, Catalog, Tool
from .statuses import CheckStatus, ExampleStatus, Status
from .options import OptionsError
from .outputs import catalog_json

EXIT_OK, EXIT_PROBLEMS, EXIT_USAGE = 0, 1, 2
EXIT_INTERRUPTED = 130  # what a shell reports for a command stopped by Ctrl-C
SANDBOX_LEVELS = ("auto", "required", "bubblewrap", "off")  # the `sandbox` option's values (options.py)
REVIEW_WARNINGS = frozenset({"id-lookalike", "id-mixed-script"})  # shown by `check` too, though not errors


@dataclass(frozen=True)
class Flag:
    """One command-line flag: its names and `argparse.add_argument`'s keywords."""

    names: tuple[str, ...]
    options: dict[str, Any]


def _flag(*names: str, **options: Any) -> Flag:
    return Flag(names, options)


_CONFIG = "the config's"
# Every flag of every subcommand, written once; `COMMANDS` says which subcommand takes which.
FLAGS: dict[str, Flag] = {
    "path": _flag("path", nargs="?", default=".", help="workspace folder (default: the current folder)"),
    "config-file": _flag("-f", "--config-file", help="config file to read plugin options from (default: PATH's "
                         "properdocs.yml or mkdocs.yml, if present)"),
    "paths": _flag("--paths", action="append", help="folder or manifest to harvest (repeatable; overrides the config)"),
    "exclude": _flag("--exclude", action="append", help="gitignore-style pattern to skip (repeatable; adds to the config)"),
    "json": _flag("--json", action="store_true", help="print the catalog JSON instead of the report"),
    "tool": _flag("--tool", action="append", metavar="ID", help="check only this tool (repeatable)"),
    "jobs": _flag("--jobs", type=int, help=f"processes at once (default: {_CONFIG}, else one per CPU)"),
    "timeout": _flag("--timeout", type=float, help=f"seconds per process (default: {_CONFIG}, else 30)"),
    "no-cache": _flag("--no-cache", action="store_true", help="ignore and do not write cached results"),
    "sandbox": _flag("--sandbox", choices=SANDBOX_LEVELS, help=f"isolate example processes (default: {_CONFIG}, else auto)"),
    "coverage": _flag("--coverage", action="store_true", help="print each tool's contract coverage and what it leaves "
                      "uncovered (docs/coverage.md)"),
    "shard": _flag("--shard", metavar="K/N", help="check only the K-th of N balanced parts of the tools (one CI job each)"),
    "results-out": _flag("--results-out", metavar="FILE", help="write the results of the tools checked to FILE, for the "
                         "`results` option or --results elsewhere"),
    "results": _flag("--results", action="append", default=[], metavar="PATH",
                     help="a results file, a folder of them or a glob (repeatable; adds to the config's `results`): "
                     "results whose key still matches are used instead of running the tool"),
    "require-tools": _flag("--require-tools", action="store_true", help="exit 1 when no tool manifest is found"),
    "quiet": _flag("-q", "--quiet", action="store_true", help="no progress line"),
    "progress": _flag("--progress", action="store_true", help="a progress line on stderr even when it is not a "
                      "terminal or CI is set"),
    "output": _flag("-o", "--output", required=True, metavar="DIR", help="folder to write into; files keep their site paths"),
    "no-run": _flag("--no-run", action="store_true", help="do not run examples and checks (statuses stay not-run)"),
    "site-url": _flag("--site-url", help="base URL for absolute links (default: mkdocs.yml's site_url; \"\" for none)"),
    "docs-dir": _flag("-o", "--docs-dir", metavar="DIR",
                      help="the docs folder to write into (default: the config's docs_dir, else PATH/docs)"),
    "generator": _flag("--generator", choices=("mkdocs", "zensical", "mkdocs2"),
                       help="the site generator whose link rules the pages follow: mkdocs (also ProperDocs), "
                       "zensical, mkdocs2 (pages without front matter) (default: zensical when the config is a "
                       "zensical.toml, else mkdocs)"),
    "old": _flag("old", help="the earlier catalog.json (or a folder holding one)"),
    "new": _flag("new", help="the later catalog.json (or a folder holding one)"),
    "format": _flag("--format", choices=("text", "markdown", "json"),
                    help="text for a terminal, markdown for a pull request, json for programs "
                    "(default: text when the output is a terminal, else markdown)"),
    "format-json": _flag("--json", action="store_const", const="json", dest="format", help="the same as --format json"),
    "dir": _flag("dir", metavar="DIR|URL", help="the built site or export folder (or a catalog.json file: only it is "
                 "checked), or the http(s) URL of a published site"),
    "catalog": _flag("--catalog", default="catalog.json", metavar="PATH", help="the catalog's path in DIR (default: catalog.json)"),
    "mcp": _flag("--mcp", metavar="PATH", help="the MCP tool list's path in DIR (default: mcp-tools.json, when present)"),
    "llms": _flag("--llms", metavar="PATH", help="llms.txt's path in DIR (default: llms.txt, when present)"),
    "digest": _flag("--digest", metavar="SHA256", help="the catalog digest the build printed: the catalog must have it "
                    "(the trust anchor every other file is checked from)"),
}

_WORKSPACE = ("path", "config-file", "paths", "exclude")
_RUNNING = ("jobs", "timeout", "no-cache", "sandbox", "results")
_TERMINAL = ("quiet", "progress")


@dataclass(frozen=True)
class Command:
    help: str
    handler: Callable[[argparse.Namespace], int]
    flags: tuple[str, ...]  # keys of FLAGS, in the order --help lists them


def _commands() -> dict[str, Command]:
    return {
        "validate": Command("parse and validate every manifest; exit 1 if any is invalid", _validate,
                            (*_WORKSPACE, "json", "require-tools", *_TERMINAL)),
        "check": Command("validate, then run every example and check against the real tools; exit 1 if any failed or "
                         "is invalid", _check, (*_WORKSPACE, "tool", *_RUNNING, "json", "coverage", "shard", "results-out",
                                                "require-tools", *_TERMINAL)),
        "export": Command("write what a build publishes for agents (catalog.json, its schema, tools/<id>.json, "
                          "mcp-tools.json, llms.txt), byte for byte, without MkDocs", _export,
                          (*_WORKSPACE, "output", "no-run", *_RUNNING, "site-url", *_TERMINAL)),
        "markdown": Command("write the catalog into a docs folder as Markdown pages (index and one page per tool, with "
                            "their stylesheet and script) plus what `export` writes, for site generators that run no "
                            "plugins", _markdown, (*_WORKSPACE, "docs-dir", "no-run", *_RUNNING, "site-url", "generator",
                                                   *_TERMINAL)),
        "diff": Command("compare two catalog.json files: added, removed and changed tools; exit 1 if anything breaks",
                        _diff, ("old", "new", "format", "format-json")),
        "verify": Command("recompute the digests of a published catalog and of every file its digest manifest lists (pages, "
                          "assets, per-tool JSON, mcp-tools.json, llms.txt), in a folder or at a URL; exit 1 on any mismatch",
                          _verify, ("dir", "catalog", "mcp", "llms", "digest")),
    }


def parser() -> argparse.ArgumentParser:
    """The command line: each subcommand with its flags from `FLAGS`."""
    top = argparse.ArgumentParser(prog="toolcatalog", description="Harvest and validate agent-tool manifests.")
    top.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    subs = top.add_subparsers(dest="command", required=True)
    for name, command in _commands().items():
        sub = subs.add_parser(name, help=inline.plain(command.help))
        for key in command.flags:
            flag = FLAGS[key]
            options = {**flag.options, "help": inline.plain(flag.options["help"])} if "help" in flag.options else flag.options
            sub.add_argument(*flag.names, **options)
        sub.set_defaults(handler=command.handler)
    return top


def main(argv: Sequence[str] | None = None) -> int:
    args = parser().parse_args(argv)
    try:
        code: int = args.handler(args)
        return code
    except _usage_errors() as exc:
        # ExportError covers a bad SOURCE_DATE_EPOCH and (a bug) outputs that break their own
        # schema: either way one line, never a traceback.
        print(f"toolcatalog: {plain(exc)}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:  # queued runs were cancelled and running ones stopped (engine.check)
        print("toolcatalog: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED


def _usage_errors() -> tuple[type[Exception], ...]:
    """The errors that are bad usage: one line, exit 2. `diff` and `verify` load their modules
    (catalogdiff; verify, with HTTP and TLS) only when they run, so `check` and `export` start
    without them; their errors are only looked for once loaded (evaluated when an error is matched)."""
    found: list[type[Exception]] = [ConfigFileError, OptionsError, DiscoveryError, outputs.ExportError, shards.ShardError]
    for module, name in (("toolcatalog.catalogdiff", "DiffError"), ("toolcatalog.verify", "VerifyError")):
        loaded = sys.modules.get(module)
        if loaded is not None:
            found.append(getattr(loaded, name))
    return tuple(found)


def _progress(args: argparse.Namespace) -> terminal.Progress:
    """The progress line on stderr for this command (`terminal.progress_wanted`)."""
    on = terminal.progress_wanted(sys.stderr, getattr(args, "progress", False), getattr(args, "quiet", False))
    return terminal.Progress(sys.stderr, on, terminal.width(sys.stderr))


def _load(args: argparse.Namespace, progress: terminal.Progress) -> pipeline.Build:
    """Harvest and place, with the options of PATH's mkdocs.yml (or -f) and the command's flags,
    each checked by the same rules MkDocs applies."""
    workspace, project = _read_project(args)
    progress.say(f"harvesting {workspace}")
    try:
        return _prepare(args, workspace, project, project.docs_dir)
    finally:
        progress.done()


def _run(build: pipeline.Build, progress: terminal.Progress, **how: Any) -> Any:
    """`pipeline.check` with the progress line (erased when it ends, however it ends)."""
    try:
        return pipeline.check(build, progress=progress.runs if progress.enabled else None, **how)
    finally:
        progress.done()


def _read_project(args: argparse.Namespace) -> tuple[Path, Project]:
    """The workspace and what its config file says (PATH's properdocs.yml or mkdocs.yml, or -f)."""
    workspace = Path(args.path)
    if not workspace.is_dir():
        raise DiscoveryError(f"{args.path!r} is not a folder")
    config_file = Path(args.config_file) if args.config_file else find_config_file(workspace)
    project = plugin_options(config_file, required=bool(args.config_file))
    for warning in project.warnings:
        print(f"toolcatalog: {plain(warning)}", file=sys.stderr)
    if args.config_file:
        workspace = config_file.resolve().parent
    return workspace, project


def _prepare(args: argparse.Namespace, workspace: Path, project: Project, docs_dir: Path | None,
             not_users: frozenset[str] | set[str] = frozenset()) -> pipeline.Build:
    """`pipeline.prepare` with the project's options changed by the command's flags. The pages of
    `docs_dir` are the site's own (they win over generated ones), except those in `not_users`."""
    changes: dict[str, Any] = {}
    if args.paths:
        changes["paths"] = list(args.paths)
    if args.exclude:
        changes["exclude"] = [*project.options.exclude, *args.exclude]
    for name in ("jobs", "timeout", "sandbox"):
        value = getattr(args, name, None)
        if value is not None:
            changes[name] = value
    if getattr(args, "no_cache", False):
        changes["cache"] = False
    options = project.options.replace(**changes)
    site = project.site
    if getattr(args, "site_url", None) is not None:
        site = dataclasses.replace(site, url=args.site_url)
    user_pages = [p for p in pipeline.user_pages(docs_dir) if p not in not_users] if docs_dir else []
    skip = [*project.skip, *([docs_dir.resolve()] if docs_dir else [])]
    return pipeline.prepare(workspace, options, site=site, directory_urls=project.directory_urls, skip=skip, user_pages=user_pages)


def _notes(build: pipeline.Build) -> str:
    """The build's notes about itself (cache entries and results files not used), a line each."""
    return "".join(printable(f"toolcatalog: {note.text}") + "\n" for note in pipeline.notes(build))


def _stats_line(build: pipeline.Build) -> str:
    stats = build.stats
    assert stats is not None
    notes = _notes(build)
    given = f", {stats.given} from results files" if stats.given else ""
    return (f"{notes}{stats.tools} tools checked in {stats.seconds:.1f}s: {stats.processes} processes started, "
            f"{stats.cached} from the cache{given}\n{'toolcatalog: warning: ' if stats.sandbox_weaker else ''}"
            f"example processes: {stats.sandbox}")


def _validate(args: argparse.Namespace) -> int:
    build = _load(args, _progress(args))
    catalog = build.catalog
    invalid = [t for t in catalog.tools if not t.valid]
    catalog_errors = [d for d in catalog.diagnostics if d.severity == ERROR]
    if args.json:
        sys.stdout.write(catalog_json.dumps(outputs.catalog_document(catalog, build.options, build.site)))
    else:
        _report(catalog)
    sys.stderr.write(_notes(build))
    empty = args.require_tools and not catalog.tools
    return EXIT_PROBLEMS if invalid or catalog_errors or empty else EXIT_OK


def _unknown_tools(wanted: set[str], catalog: Catalog) -> str | None:
    """The error for `--tool` ids the catalog does not have, with the closest ids it has."""
    ids = sorted({t.id for t in catalog.tools})
    unknown = sorted(wanted - set(ids))
    if not unknown:
        return None
    close = [match for name in unknown for match in difflib.get_close_matches(name, ids, n=3, cutoff=0.6)]
    hint = f"; did you mean {' or '.join(dict.fromkeys(close))}?" if close else ""
    return printable(f"toolcatalog: no tool with id {', '.join(unknown)}{hint}")


def _check(args: argparse.Namespace) -> int:
    progress = _progress(args)
    build = _load(args, progress)
    catalog = build.catalog
    if not _keep_only(args.tool, catalog):
        return EXIT_USAGE
    shard = shards.parse(args.shard) if args.shard else None
    stats = _run(build, progress, results=args.results, shard=shard)
    if stats.elsewhere:  # another shard's tools: not this run's to report
        others = {id(tool) for tool in stats.elsewhere}
        catalog.tools = [t for t in catalog.tools if id(t) not in others]
    if args.results_out and not _write_results(args, build, stats, shard):
        return EXIT_USAGE
    _print_check(args, build)
    bad = [t for t in catalog.tools if t.status in (Status.FAILED, Status.INVALID, Status.ERROR)]
    # `sandbox: bubblewrap` without bubblewrap ran nothing: in CI that must not pass as green.
    withheld = build.options.sandbox == "bubblewrap" and stats.sandbox_weaker and bool(catalog.tools)
    empty = args.require_tools and not catalog.tools
    return EXIT_PROBLEMS if bad or withheld or empty else EXIT_OK


def _keep_only(wanted: list[str] | None, catalog: Catalog) -> bool:
    """--tool: keep the tools with these ids (False, said, when one is not in the catalog);
    an empty catalog is said too."""
    if wanted:
        problem = _unknown_tools(set(wanted), catalog)
        if problem:
            print(problem, file=sys.stderr)
            return False
        catalog.tools = [t for t in catalog.tools if t.id in set(wanted)]
    if not catalog.tools:
        print(f"toolcatalog: {nothing_found(catalog)}", file=sys.stderr)
    return True


def _write_results(args: argparse.Namespace, build: pipeline.Build, stats: Any, shard: tuple[int, int] | None) -> bool:
    """--results-out: the results, sealed with the workspace's key (False, said, when there is none)."""
    try:
        key = sealing.build_key(build.workspace)
    except sealing.KeyUnavailable as exc:
        print(printable(f"toolcatalog: --results-out: no results key to seal them with: {exc.message}"), file=sys.stderr)
        return False
    resultsfile.write(Path(args.results_out), stats.results, key, shard)
    return True


def _print_check(args: argparse.Namespace, build: pipeline.Build) -> None:
    """What `check` prints: the JSON, the coverage table or the results table, then its notes."""
    if args.json:
        sys.stdout.write(catalog_json.dumps(outputs.catalog_document(build.catalog, build.options, build.site)))
        sys.stderr.write(_notes(build))  # cache entries and results files not used: said even here
        return
    _coverage_table(build.catalog) if args.coverage else _table(build.catalog)
    print(_stats_line(build), file=sys.stderr)


def _export(args: argparse.Namespace) -> int:
    progress = _progress(args)
    build = _load(args, progress)
    if build.options.run_examples and not args.no_run:
        _run(build, progress, results=args.results)
        print(_stats_line(build), file=sys.stderr)
    files = build.outputs()
    folder, written, problems = docsdir.Folder(Path(args.output)), 0, 0
    for path, text in files.items():  # never through a link below the folder (it may be inside the checkout)
        try:
            folder.write(path, text)
            written += 1
        except (docsdir.FolderError, OSError) as exc:
            problems += 1
            print(printable(f"toolcatalog: {path} not written: {exc}"), file=sys.stderr)
    print(printable(f"wrote {written} files to {args.output}"), file=sys.stderr)
    failing = _say_failing(build)
    return EXIT_PROBLEMS if failing or problems else EXIT_OK


def _say_failing(build: pipeline.Build) -> bool:
    """Print why each tool fails `fail_on`; whether any does."""
    failing = pipeline.failing(build)
    for tool in failing:
        print(f"toolcatalog: {printable(tool.id)}: {plain(_gate_words(build, tool))}", file=sys.stderr)
    return bool(failing)


def _markdown_folder(args: argparse.Namespace, workspace: Path, project: Project) -> Path:
    """Where `markdown` writes: -o, else the config's docs_dir (never outside the workspace or in its .git)."""
    docs = Path(args.docs_dir) if args.docs_dir else project.docs_dir or workspace / "docs"
    if args.docs_dir:
        return docs
    if not is_inside(docs, workspace):  # the config file is the repository's: so is its docs_dir
        raise outputs.ExportError(f"the docs folder {str(docs)!r} is outside the workspace (through `docs_dir` or a link); "
                                  "pass -o DIR to write there")
    if ".git" in os.path.relpath(os.path.realpath(docs), os.path.realpath(workspace)).split(os.sep):
        raise outputs.ExportError(f"the docs folder {str(docs)!r} is inside the checkout's .git (through `docs_dir` or a link); "
                                  "pass -o DIR to write there")
    return docs


def _markdown(args: argparse.Namespace) -> int:
    workspace, project = _read_project(args)
    docs = _markdown_folder(args, workspace, project)
    folder = docsdir.Folder.open(docs)
    # What the last run wrote and nobody changed since: ours to replace, never the site's own pages.
    ours = {path for path in folder.record if folder.replaceable(path)}
    generator = args.generator or ("zensical" if project.zensical else "mkdocs")
    if generator == "mkdocs2":  # MkDocs 2 has no option: every page gets a directory URL
        project = dataclasses.replace(project, directory_urls=True)
    progress = _progress(args)
    progress.say(f"harvesting {workspace}")
    try:
        build = _prepare(args, workspace, project, docs, not_users=ours)
    finally:
        progress.done()
    if build.options.run_examples and not args.no_run:
        _run(build, progress, results=args.results)
        print(_stats_line(build), file=sys.stderr)
    files = _markdown_files(build, project, generator)
    problems = _keep_obstacles(files, folder, ours, docs)
    written: dict[str, str] = {}
    for path, text in files.items():
        try:
            written[path] = folder.write(path, text)
        except (docsdir.FolderError, OSError) as exc:
            problems += 1
            print(printable(f"toolcatalog: {path} not written: {exc}"), file=sys.stderr)
    _remove_gone(folder, files, docs)
    folder.save_record(written)
    print(printable(f"wrote {len(written)} files to {docs}"), file=sys.stderr)
    failing = _say_failing(build)
    return EXIT_PROBLEMS if failing or problems else EXIT_OK


def _markdown_files(build: pipeline.Build, project: Project, generator: str) -> dict[str, str]:
    """The pages and the outputs for agents `markdown` writes, by path."""
    link = source_links(build.options.source_uri, project.repo_url, project.edit_uri, str(project.docs_dir or "docs"))
    pages = build.markdown_pages([project.custom_dir] if project.custom_dir else [], link, generator, project.extra_assets)
    files = build.outputs()
    for path, text in pages.items():
        if path in files:
            raise outputs.ExportError(f"a page and an output for agents are both {path!r}; change `page_dir` or the file options")
        files[path] = text
    return files


def _keep_obstacles(files: dict[str, str], folder: docsdir.Folder, ours: set[str], docs: Path) -> int:
    """Drop from `files` what must not be written (a link on its way, a file that is not ours);
    the number of problems (links) found."""
    problems = 0
    for path in sorted(files):
        obstacle = None if path in ours else folder.obstacle(path)
        if obstacle == "link":  # never written through: the repository put a link where the export writes
            problems += 1
            print(printable(f"toolcatalog: {path} not written: a link in {docs} is on its way; links are never "
                            "followed"), file=sys.stderr)
            del files[path]
        elif obstacle == "file" and folder.read(path) != files[path].encode("utf-8"):
            print(printable(f"toolcatalog: {path} exists in {docs} and was not written by toolcatalog "
                            "(or was changed since); it is kept"), file=sys.stderr)
            del files[path]
    return problems


def _remove_gone(folder: docsdir.Folder, files: dict[str, str], docs: Path) -> None:
    """Remove the pages of tools that are gone; say which are kept (not ours, or changed)."""
    kept = [path for path in sorted(set(folder.record) - set(files))
            if not folder.remove(path) and folder.obstacle(path)]
    for path in kept[:10]:  # a planted record can list any number: a few named, the rest counted
        print(plain(f"toolcatalog: {path} is no longer generated but is kept: it is not a file this tool "
                    "wrote, unchanged, with its mark (see `toolcatalog markdown` in the docs)"), file=sys.stderr)
    if len(kept) > 10:
        print(f"toolcatalog: and {len(kept) - 10} more files the record names are kept", file=sys.stderr)


def _diff(args: argparse.Namespace) -> int:
    from . import catalogdiff  # here: only `diff` needs it (see `_usage_errors`)

    report = catalogdiff.diff(catalogdiff.load(args.old), catalogdiff.load(args.new))
    # The Markdown report is for pull requests (its escapes and code spans are noise in a
    # terminal), so a terminal gets text unless asked; a pipe or file gets Markdown as before.
    fmt = args.format or ("text" if sys.stdout.isatty() else "markdown")
    if fmt == "json":
        sys.stdout.write(catalog_json.dumps(report.as_dict()))
    else:
        text = report.text() if fmt == "text" else report.markdown()
        sys.stdout.write("".join(printable(line) + "\n" for line in text.splitlines()))
    return EXIT_PROBLEMS if report.breaking else EXIT_OK


def _verify(args: argparse.Namespace) -> int:
    from . import verify  # here: only `verify` needs it, and HTTP and TLS with it (see `_usage_errors`)

    if verify.is_url(args.dir):
        result = verify.verify_url(args.dir, args.catalog, args.mcp, args.llms, args.digest)
    else:
        result = verify.verify(Path(args.dir), args.catalog, args.mcp, args.llms, args.digest)
    for line in result.checked:
        print(printable(f"ok: {line}"))
    for line in result.problems:
        print(printable(f"MISMATCH: {line}"))
    print(f"{len(result.problems)} mismatch{'es' if len(result.problems) != 1 else ''}" if result.problems else "every digest matches")
    return EXIT_PROBLEMS if result.problems else EXIT_OK


def _gate_words(build: pipeline.Build, tool: Tool) -> str:
    """Why a tool fails `fail_on`: the words used since statuses were its only gate, when they are."""
    reasons = pipeline.fail_reasons(build, tool)
    if reasons == [f"status {tool.status.value}"]:
        return f"status {tool.status.value} is listed in `fail_on`"
    return "fails `fail_on`: " + "; ".join(reasons)


STATUS_STYLES = {"passed": "green", "failed": "red", "invalid": "red", "error": "red"}  # the rest: plain
TOOL_COLUMN = 32  # widest TOOL column; a longer id pushes its own row's columns right


def _table(catalog: Catalog) -> None:
    """One row per tool (TOOL, FORMAT, STATUS, DETAIL), the DETAIL wrapped to the terminal's width;
    below a row, what else a reviewer must see, each thing once: the manifest of an id other
    manifests share, failed examples and checks, errors not in the detail, id lookalikes."""
    out = sys.stdout
    columns, on = terminal.width(out), terminal.colour(out)
    shared = {tool_id for tool_id, n in Counter(t.id for t in catalog.tools).items() if n > 1}
    width = min(max([len(printable(t.id)) for t in catalog.tools] + [4]), TOOL_COLUMN)
    out.write(terminal.paint(f"{'TOOL':<{width}}  {'FORMAT':<10}  {'STATUS':<19}  DETAIL", "bold", on) + "\n")
    for tool in catalog.tools:
        name = printable(tool.id)
        detail = plain(tool.status_detail or reason(tool))
        status = terminal.paint(f"{tool.status.value:<19}", STATUS_STYLES.get(tool.status.value, ""), on)
        lead = f"{name:<{width}}  {tool.format:<10}  "
        first = len(lead) + 21
        lines = terminal.wrap(detail, first, first, columns)
        out.write(f"{lead}{status}  {lines[0]}\n" + "".join(line + "\n" for line in lines[1:]))
        below = ([f"at {printable(tool.source)}"] if tool.id in shared else []) + _below_lines(tool, detail)
        for line in below:
            wrapped = terminal.wrap(line, 4, 6, columns)
            out.write(f"    {wrapped[0]}\n" + "".join(text + "\n" for text in wrapped[1:]))


_MORE = re.compile(r" \(and \d+ more errors?\)$")
_FILE_PREFIX = re.compile(r"^[\w.-]+\.(json|md|yaml|yml|toml): ")


def _phrases(text: str) -> list[str]:
    """The phrases of a plain message ("a; b" -> ["a", "b"]), without "(and N more errors)" or a
    leading "smart-tool.json: ": what `_below_lines` compares to print each problem once."""
    return [_FILE_PREFIX.sub("", part.strip()) for part in _MORE.sub("", text).split("; ") if part.strip()]


def _below_lines(tool: Tool, detail: str) -> list[str]:
    """The lines under a tool's row, printable: failed examples and checks, then the errors and
    review warnings, each skipped when everything it says was said above it (a smart tool's
    static rule repeats its manifest error; the detail is the first error)."""
    said = set(_phrases(detail))
    lines: list[str] = []

    def add(prefix: str, message: str) -> None:
        phrases = _phrases(message)
        new = [p for p in phrases if p not in said]
        if phrases and not new:
            return
        said.update(phrases)
        # A message part of which was said above: only the rest of it (a static rule that repeats
        # the manifest error, plus one more finding).
        lines.append(prefix + ("; ".join(new) if len(new) < len(phrases) else message))

    for example in tool.examples:
        if example.status in (ExampleStatus.FAILED, ExampleStatus.ERROR):
            flag = " (error)" if example.status == ExampleStatus.ERROR else ""
            add(printable(f"example {example.title!r}{flag}: "), plain(example.detail))
    for check in tool.checks:
        if check.status in (CheckStatus.FAILED, CheckStatus.ERROR):
            flag = " (error)" if check.status == CheckStatus.ERROR else ""
            add(printable(f"check {check.id}{flag}: "), plain(check.detail))
    shown = [d for d in tool.diagnostics if d.severity == ERROR or d.code in REVIEW_WARNINGS]
    for diagnostic in shown:
        where = printable(diagnostic.location())
        severity = "" if diagnostic.severity == ERROR else f"{diagnostic.severity}: "
        add(f"{where}: {severity}", plain(diagnostic.message))
    return lines


def _score(value: float | None) -> str:
    return "-" if value is None else f"{value:.0%}"


def _coverage_table(catalog: Catalog) -> None:
    """One row per tool: the total and each dimension's score (`-`: no goal), then what is uncovered."""
    out = sys.stdout
    ids = {id(t): printable(t.id) for t in catalog.tools}
    width = max([len(i) for i in ids.values()] + [4])
    heads = ["TOTAL", *(d.upper() for d in coverage.DIMENSIONS)]
    out.write(f"{'TOOL':<{width}}  {'STATUS':<19}  " + "  ".join(f"{h:>7}" for h in heads) + "  FINDINGS\n")
    for tool in sorted(catalog.tools, key=lambda t: (t.id, t.source)):
        found = coverage.of(tool)
        scores = [found.total, *(found.dimensions[d].score for d in coverage.DIMENSIONS)]
        findings = sum(d.code in quality.CODES for d in tool.diagnostics)
        out.write(f"{ids[id(tool)]:<{width}}  {tool.status.value:<19}  " + "  ".join(f"{_score(x):>7}" for x in scores)
                  + f"  {findings:>8}\n")
        for item in found.uncovered():
            out.write(f"{'':<{width}}    uncovered: {plain(item)}\n")
        if found.undeclared_outputs:
            out.write(f"{'':<{width}}    output keys not in the schema: {printable(', '.join(found.undeclared_outputs))}\n")


def _report(catalog: Catalog) -> None:
    out = sys.stdout
    if not catalog.tools:
        print(f"toolcatalog: {nothing_found(catalog)}", file=sys.stderr)
    for diagnostic in sorted(catalog.all_diagnostics(), key=lambda d: (d.path, d.line or 0)):
        out.write(diagnostic_line(diagnostic, severity=True) + "\n")
    invalid = sum(not t.valid for t in catalog.tools)
    errors = sum(d.severity == ERROR for d in catalog.all_diagnostics())
    warnings = sum(d.severity != ERROR and d.code not in quality.CODES for d in catalog.all_diagnostics())
    findings = sum(d.code in quality.CODES for d in catalog.all_diagnostics())
    if findings:  # contract quality is its own count: a clean manifest still has 0 warnings
        out.write(f"{findings} contract quality finding{'s' if findings != 1 else ''} (codes quality-*, docs/coverage.md)\n")
    out.write(
        f"{len(catalog.tools)} tool{'s' if len(catalog.tools) != 1 else ''}, {invalid} invalid; "
        f"{len(catalog.drivers)} driver{'s' if len(catalog.drivers) != 1 else ''}; "
        f"{errors} error{'s' if errors != 1 else ''}, {warnings} warning{'s' if warnings != 1 else ''}\n"
    )


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
