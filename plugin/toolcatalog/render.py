"""HTML for tool pages and the catalog index, from overridable Jinja2 templates.

Every manifest value reaches HTML either escaped (autoescape is on) or, for
Markdown fields, rendered by markdown-it-py (CommonMark, with tables and
strikethrough; raw HTML shown as text) and then sanitized by nh3. The template
search path starts with the caller's folders (MkDocs passes the theme's, so a
`custom_dir` overrides any template) and ends with ours.

Manifest Markdown is rendered under a budget, so no manifest can make a page
slow or crash it: markdown-it-py works in linear time (Python-Markdown, which
MkDocs uses for the site's own pages, takes quadratic time on runs of `[` or
`![` and recurses on nested lists), a text longer than `MAX_MARKDOWN_CHARS`, or
past the page's `PAGE_MARKDOWN_CHARS`, or nesting deeper than `MAX_NESTING`, is
shown as plain text with a note saying why. Nothing is dropped.
"""

from __future__ import annotations

import contextvars
import json
import re
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import jinja2
import nh3
from markdown_it import MarkdownIt
from markupsafe import Markup, escape

from . import accessview, anchors, claims, coverage, inline, pageview, repro, schemaview
from .jsonvalues import indented
from .model import FORMAT_TITLES, Catalog, Check, Example, Run, Tool
from .report import reason as reason_text
from .statuses import Status, tally

TOOL_TEMPLATE = "toolcatalog/tool.html"
INDEX_TEMPLATE = "toolcatalog/index.html"
INDEX_TITLE = "All tools"  # the catalog index page's title
# The pages' stylesheet and script, at these paths in the template folders and in the site.
CSS_PATH = "toolcatalog/assets/toolcatalog.css"
JS_PATH = "toolcatalog/assets/toolcatalog.js"

_URL_SCHEMES = {"http", "https", "mailto"}
# nh3's defaults minus images: a manifest must not make readers' browsers fetch anything
# (tracking pixels, broken offline sites); links stay, with rel=noopener.
_TAGS = set(nh3.ALLOWED_TAGS) - {"img"}
_HEADING = re.compile(r"<(/?)h([1-6])\b")


def templates_dir() -> Path:
    """Our templates: inside the installed package, or at the top of a source checkout."""
    packaged = Path(__file__).parent / "site_templates"
    if packaged.is_dir():
        return packaged
    return Path(__file__).resolve().parents[2] / "site_templates"


MAX_MARKDOWN_CHARS = 64 * 1024  # one field (a description, a body)
PAGE_MARKDOWN_CHARS = 256 * 1024  # every field of one page together
MAX_NESTING = 20  # lists and block quotes inside each other

# `html: False`: raw HTML in a manifest is shown as the text it is, not passed through. A reviewer
# should see `<script>` in a description exactly as written; sanitizing alone would silently delete
# it (and hide what the manifest really says).
_MARKDOWN = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False, "maxNesting": MAX_NESTING})
_MARKDOWN.enable(["table", "strikethrough"])
_page_budget: contextvars.ContextVar[list[int] | None] = contextvars.ContextVar("toolcatalog_markdown_budget", default=None)


def markdown_html(text: str, shift_headings: int = 1) -> Markup:
    """Markdown from a manifest, rendered and sanitized: safe to insert into a page. Over the
    budget (see the module docstring) it is shown as plain text, with the reason."""
    if not text or not text.strip():
        return Markup("")
    budget = _page_budget.get()
    if len(text) > MAX_MARKDOWN_CHARS:
        return _plain(text, f"it is longer than {MAX_MARKDOWN_CHARS:,} characters")
    if budget is not None:
        budget[0] -= len(text)
        if budget[0] < 0:
            return _plain(text, f"this page's Markdown is longer than {PAGE_MARKDOWN_CHARS:,} characters in all")
    if len(text) <= REMEMBERED_CHARS:
        return _remembered(text, shift_headings)
    return _rendered(text, shift_headings)


REMEMBERED_CHARS = 1024  # texts this short (one-line descriptions) are rendered once per process
REMEMBERED_HTML_CHARS = 4 * REMEMBERED_CHARS  # and kept only when their HTML is this short too
REMEMBERED_TEXTS = 1024  # how many are kept, the least recently used let go first


class _Remembered:
    """`_rendered`, kept for the same text: a description many tools or schema properties share
    is rendered once. At most `REMEMBERED_TEXTS` texts are kept, each with HTML of at most
    `REMEMBERED_HTML_CHARS` (about 5 MB in all): a short text can render to far more HTML
    than it holds (a 1 KB table of many columns and rows is some 300 KB), and such a rendering
    is made again at each use rather than held for the life of the process."""

    def __init__(self) -> None:
        self._kept: dict[tuple[str, int], Markup] = {}  # in order of use, the oldest first

    def __call__(self, text: str, shift_headings: int) -> Markup:
        key = (text, shift_headings)
        found = self._kept.pop(key, None)
        if found is None:
            found = _rendered(text, shift_headings)
            if len(found) > REMEMBERED_HTML_CHARS:
                return found
            while len(self._kept) >= REMEMBERED_TEXTS:
                self._kept.pop(next(iter(self._kept)), None)
        self._kept[key] = found  # the most recently used last
        return found

    def cache_clear(self) -> None:
        self._kept.clear()

    def kept_chars(self) -> int:
        """How many characters of texts and HTML are kept (tests hold it to the bound)."""
        return sum(len(text) + len(html) for (text, _shift), html in self._kept.items())


_remembered = _Remembered()


def forget_remembered() -> None:
    """Let the remembered renderings go (the MkDocs plugin, once the catalog is let go: their keys
    are the catalog's texts, and nothing renders again in that build)."""
    _remembered.cache_clear()


# A table's delimiter row (`|---|:--:|`), after any quote markers and indentation.
_DELIMITER_ROW = re.compile(r"^[\s>]*\|?\s*:?-+:?\s*(?:\|\s*:?-+:?\s*)+\|?\s*$|^[\s>]*\|\s*:?-+:?\s*\|\s*$")


def table_cells(text: str) -> int:
    """An upper bound of the cells the tables of `text` make: each table's columns (its delimiter
    row's) times the lines that follow it up to a blank one. markdown-it fills every row out to
    the header's columns, so a 1 KB text of a wide header and one-cell rows makes 40,000 cells
    (330 KB of HTML, a second of CPU); a table whose cells are written out has fewer cells than
    half its characters."""
    cells = 0
    lines = text.splitlines()
    for index, line in enumerate(lines):
        if "|" not in line or "-" not in line or not _DELIMITER_ROW.match(line):
            continue
        columns = line.strip().strip(">").strip().strip("|").count("|") + 1
        rows = 1  # the header
        for after in lines[index + 1:]:
            if not after.strip(" \t>"):
                break
            rows += 1
        cells += columns * rows
    return cells


def _rendered(text: str, shift_headings: int) -> Markup:
    """The sanitized HTML of `text` (its budget already counted)."""
    if "|" in text and table_cells(text) > len(text) + 256:
        return _plain(text, "its tables have far more cells than it writes out")
    try:
        tokens = _MARKDOWN.parse(text)
        if any(token.level >= MAX_NESTING - 1 for token in tokens):
            # markdown-it stops nesting there and drops the rest; show all of it instead.
            return _plain(text, f"it nests lists or quotes more than {MAX_NESTING - 2} levels deep")
        html = _MARKDOWN.renderer.render(tokens, _MARKDOWN.options, {}).rstrip("\n")
    except RecursionError:
        return _plain(text, "it nests too deeply")
    if shift_headings:
        html = _HEADING.sub(lambda m: f"<{m.group(1)}h{min(6, int(m.group(2)) + shift_headings)}", html)
    clean = nh3.clean(
        html,
        tags=_TAGS,
        url_schemes=_URL_SCHEMES,
        link_rel="noopener noreferrer nofollow",
    )
    return Markup(clean)


def _plain(text: str, why: str) -> Markup:
    return Markup(f'<p class="tc-note">Shown as plain text: {escape(why)}.</p>\n<pre class="tc-plain"><code>{escape(text)}</code></pre>')


def pretty_json(value: Any) -> str:
    return indented(value, sort_keys=False, allow_nan=True)  # json.dumps(value, ensure_ascii=False, indent=2), faster


def compact_json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


class _CompiledTemplates(jinja2.BytecodeCache):
    """Compiled templates kept for the life of the process, by template file and source checksum.

    A Renderer is made for every build (so `mkdocs serve` sees an edited template at the next one),
    and compiling the templates cost ≈0.15 s of CPU each time: every rebuild under `mkdocs serve`,
    and every build of a process that makes many. Jinja looks an entry up by the template's name
    and file and by a checksum of its source, so an edited template is compiled again. Every
    Renderer's environment has the same options (they decide the compiled code); at most
    `MAX_ENTRIES` are kept, the oldest dropped first, so edits under `serve` cannot grow it."""

    MAX_ENTRIES = 256

    def __init__(self) -> None:
        self._code: dict[tuple[str, str], Any] = {}
        self._lock = threading.Lock()  # pages may be rendered from several threads

    def load_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        with self._lock:
            bucket.code = self._code.get((bucket.key, bucket.checksum))

    def dump_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        with self._lock:
            if len(self._code) >= self.MAX_ENTRIES:
                del self._code[next(iter(self._code))]
            self._code[(bucket.key, bucket.checksum)] = bucket.code


_COMPILED = _CompiledTemplates()


class Renderer:
    def __init__(self, template_dirs: list[Path] | None = None):
        dirs = [str(d) for d in (template_dirs or [])]
        ours = str(templates_dir())
        if ours not in dirs:
            dirs.append(ours)
        self.env = jinja2.Environment(
            loader=jinja2.FileSystemLoader(dirs),
            autoescape=True,
            undefined=jinja2.StrictUndefined,
            trim_blocks=True,
            lstrip_blocks=True,
            keep_trailing_newline=True,
            # One Renderer per build (the plugin makes a new one in every on_files, so `mkdocs serve`
            # sees an edited template at the next build): no template file is checked again for
            # changes at each page and each include.
            auto_reload=False,
            bytecode_cache=_COMPILED,
        )
        self.env.filters["markdown"] = markdown_html
        self.env.filters["pretty_json"] = pretty_json
        self.env.filters["compact_json"] = compact_json
        self.env.globals["format_titles"] = FORMAT_TITLES
        self.env.globals["tally"] = tally
        # What the pages derive from the model (pageview.py): one place for every template.
        self.env.filters["inline"] = inline.html
        self.env.filters["plain"] = inline.plain  # for attributes (tooltips): the words, without backticks
        self.env.filters["json_html"] = pageview.json_html
        self.env.globals["kind_titles"] = pageview.KIND_TITLES
        self.env.globals["format_labels"] = pageview.FORMAT_LABELS
        self.env.globals["judging_rules"] = pageview.JUDGING_RULES
        self.env.globals["safety_labels"] = pageview.SAFETY_LABELS
        self.env.globals["reason"] = pageview.reason
        self.env.globals["safety_of"] = pageview.safety_of
        self.env.globals["claims_of"] = pageview.claims_of
        self.env.globals["home_path"] = pageview.home_path
        self.env.tests["in_home"] = pageview.in_home
        self.env.globals["driver_states"] = pageview.driver_states
        self.env.globals["difference_paths"] = pageview.difference_paths
        self.env.globals["install_link"] = pageview.install_link
        self.env.globals["coverage_of"] = coverage.of
        # Stable anchors, reproduction commands and each shared reason said once (below).
        self.env.globals["example_views"] = example_views
        self.env.globals["check_rows"] = check_rows
        self.env.globals["check_command"] = repro.check_command
        self.env.globals["reason_parts"] = reason_parts
        self.env.globals["access_of"] = accessview.of

    def tool_page(
        self,
        tool: Tool,
        catalog: Catalog,
        url_for: Callable[[str], str],
        source_url: Callable[[str, int | None], str | None] | None = None,
    ) -> str:
        token = _page_budget.set([PAGE_MARKDOWN_CHARS])
        try:
            with claims.once():  # the badges, the contract and the capabilities read one record
                return self._tool_page(tool, catalog, url_for, source_url)
        except jinja2.TemplateError:
            raise  # a template (perhaps the site's own override) is broken: say so, loudly
        except Exception as exc:  # a bug this manifest triggers: this page says so, the build goes on
            return _broken_page(tool, exc)
        finally:
            _page_budget.reset(token)

    def _tool_page(
        self,
        tool: Tool,
        catalog: Catalog,
        url_for: Callable[[str], str],
        source_url: Callable[[str, int | None], str | None] | None,
    ) -> str:
        body = tool.shown_body
        return self.env.get_template(TOOL_TEMPLATE).render(
            tool=tool,
            body=body,
            inputs=schemaview.build(tool.inputs, "tc-in") if tool.inputs is not None else None,
            outputs=schemaview.build(tool.outputs, "tc-out") if tool.outputs is not None else None,
            catalog=catalog,
            url_for=url_for,
            source_url=source_url or _no_link,
        )

    def index_page(self, catalog: Catalog, url_for: Callable[[str], str]) -> str:
        with claims.once():  # the facets and every row read each tool's record
            return self._index_page(catalog, url_for)

    def _index_page(self, catalog: Catalog, url_for: Callable[[str], str]) -> str:
        counts: dict[str, int] = {}
        for tool in catalog.tools:
            counts[tool.status.value] = counts.get(tool.status.value, 0) + 1
        tools = pageview.sorted_tools(catalog.tools)
        coverages = [coverage.of(tool) for tool in tools]
        return self.env.get_template(INDEX_TEMPLATE).render(
            catalog=catalog, tools=tools, counts={s: counts[s] for s in Status.values() if s in counts},
            facets=facets(catalog), problems=pageview.problem_groups(catalog.diagnostics), url_for=url_for,
            coverages=coverages, weakest=weakest(tools, coverages), shared_ids=shared_ids(catalog.tools),
        )


WEAKEST = 5  # contracts named in the index's summary


def shared_ids(tools: list[Tool]) -> set[str]:
    """The ids more than one manifest uses: lists show those tools' manifest paths too."""
    seen: set[str] = set()
    shared: set[str] = set()
    for tool in tools:
        (shared if tool.id in seen else seen).add(tool.id)
    return shared


def weakest(tools: list[Tool], coverages: list[Any]) -> list[tuple[Tool, Any]]:
    """The least covered contracts (total below 1), lowest first, ties in the index's order."""
    pairs = [(t, c) for t, c in zip(tools, coverages) if c.total is not None and c.total < 1]
    return sorted(pairs, key=lambda pair: pair[1].total)[:WEAKEST]


def _broken_page(tool: Tool, exc: Exception) -> str:
    problems = "".join(
        f"<li><code>{escape(d.location())}</code> {escape(d.message)}</li>" for d in tool.diagnostics
    )
    return (
        f'<div class="toolcatalog tc-tool" data-tool-id="{escape(tool.id)}" data-status="{escape(tool.status)}">\n'
        f'<h1 id="tc-title">{escape(tool.name)}</h1>\n'
        f'<div class="tc-callout tc-callout-error" role="alert"><strong>This page could not be rendered</strong> '
        f"(internal error: {escape(type(exc).__name__)}: {escape(str(exc)[:300])}; please report it). "
        f"Status: <code>{escape(tool.status)}</code>. Manifest: <code>{escape(tool.source)}</code>.</div>\n"
        f'<ul class="tc-diag-list">{problems}</ul>\n</div>\n'
    )


def _no_link(path: str, line: int | None) -> None:
    return None


def facets(catalog: Catalog) -> dict[str, list[str]]:
    """The filter values present in the catalog, in a stable order."""
    order = {"status": Status.values(), "safety": [*pageview.SAFETY_LEVELS, "undeclared"]}
    values: dict[str, set[str]] = {"status": set(), "safety": set(), "format": set(), "kind": set()}
    for tool in catalog.tools:
        values["status"].add(tool.status.value)
        values["safety"].add(pageview.safety_of(tool).level)
        values["format"].add(tool.format)
        values["kind"].add(pageview.claims_of(tool).kind.value)
    out = {}
    for name, found in values.items():
        preferred = order.get(name, [])
        out[name] = [v for v in preferred if v in found] + sorted(v for v in found if v not in preferred)
    return out


def tool_toc(tool: Tool) -> list[dict[str, Any]]:
    """Table-of-contents entries matching the section ids in tool.html."""
    sections = []
    if tool.use_cases:
        sections.append(("use-cases", "When to use it"))
    if tool.capabilities:
        sections.append(("capabilities", "Capabilities"))
    sections.append(("contract", "Contract"))
    if accessview.of(tool).declared or tool.execution.declared:  # as partials/access.html decides
        sections.append(("access", "Data and access"))
    sections += [("inputs", "Inputs"), ("outputs", "Outputs")]
    if tool.examples:
        sections.append(("examples", "Examples"))
    sections.append(("coverage", "Coverage"))
    if tool.drivers:
        sections.append(("drivers", "Drivers"))
    if tool.checks:
        sections.append(("checks", "Checks"))
    body = tool.shown_body
    if body.strip():
        sections.append(("details", "Details"))
    if tool.diagnostics:
        sections.append(("diagnostics", "Diagnostics"))
    return [{"level": 2, "id": f"tc-{anchor}", "name": name, "children": []} for anchor, name in sections]


def index_toc(catalog: Catalog) -> list[dict[str, Any]]:
    """Table-of-contents entries matching the section ids in index.html (themes that always show a
    table of contents, like MkDocs' own, would show an empty box without them)."""
    sections = [("tc-tools", "Tools")] if catalog.tools else [("tc-title", "Tool catalog")]
    if catalog.diagnostics:
        sections.append(("tc-catalog-diagnostics", "Catalog problems"))
    return [{"level": 2, "id": anchor, "name": name, "children": []} for anchor, name in sections]



# -- what the examples, runs and checks sections show -------------------------------------------


@dataclass(frozen=True)
class RunView:
    run: Run
    anchor: str  # stable: the example's anchor and the driver's name
    command: str | None  # the shell command that repeats it (`repro.run_command`), when one can


@dataclass(frozen=True)
class ExampleView:
    example: Example
    anchor: str  # from the title (`anchors.unique`), not the position
    runs: list[RunView]
    tool_reason: bool  # its detail is the tool's own reason, shown once in the verdict above


def example_views(tool: Tool) -> list[ExampleView]:
    """Each example with its stable anchor, its runs' anchors and commands, and whether its
    detail only repeats the tool's verdict."""
    out = []
    for example, anchor in zip(tool.examples, anchors.unique("tc-ex-", (e.title for e in tool.examples))):
        run_anchors = anchors.unique(f"{anchor}-run-", (run.driver or "implementation" for run in example.runs))
        runs = [RunView(run, a, repro.run_command(tool, example, run)) for run, a in zip(example.runs, run_anchors)]
        out.append(ExampleView(example, anchor, runs, _is_tool_reason(tool, example.detail)))
    return out


@dataclass(frozen=True)
class CheckRow:
    check: Check
    anchor: str  # `tc-check-` and the rule id's slug
    span: int  # rows the detail cell spans: 0 when the row above holds it (the same detail)
    tool_reason: bool  # the detail is the tool's own reason, shown once in the verdict above


def check_rows(tool: Tool) -> list[CheckRow]:
    """The checks in order; a run of rules with one status and one detail (a cascade: "not run:
    a catalog copy" for seven rules) shows that detail once, in a cell spanning their rows."""
    rows: list[CheckRow] = []
    ids = anchors.unique("tc-check-", (c.id for c in tool.checks))
    index = 0
    while index < len(tool.checks):
        group = _same_run(tool.checks, index)
        for offset, check in enumerate(group):
            rows.append(CheckRow(check, ids[index + offset], 0 if offset else len(group), _is_tool_reason(tool, check.detail)))
        index += len(group)
    return rows


def _same_run(checks: list[Check], start: int) -> list[Check]:
    """`checks[start]` and those right after it with the same status and detail (no stderr)."""
    first = checks[start]
    run = [first]
    if not first.detail or first.stderr:
        return run
    for check in checks[start + 1:]:
        if check.stderr or (check.status, check.detail) != (first.status, first.detail):
            break
        run.append(check)
    return run


def _is_tool_reason(tool: Tool, detail: str) -> bool:
    """`detail` says only what the verdict says (the tool's not-run reason)."""
    return bool(detail) and tool.status.value != "passed" and detail in (tool.status_detail, reason_text(tool))


REASON_LEAD = 48  # characters of a reason the index shows before "more" (two lines of its column)
MIN_LEAD = 8  # a phrase that ends sooner is too short a lead; a word boundary is used instead


def reason_parts(tool: Tool) -> tuple[Markup, Markup]:
    """The tool's reason for the index, split where a phrase ends at most `REASON_LEAD`
    characters in (after "; ", else ", " or ": ", outside code spans; else between words): the
    lead shown, the rest behind "more". Nothing is dropped: the whole reason is on the page."""
    text = reason_text(tool)
    if tool.status.value == "not-run":
        text = text.removeprefix("not run: ")
    cut = _phrase_end(text, REASON_LEAD)
    if cut is None:
        return inline.html(text), Markup("")
    return inline.html(text[:cut]), inline.html(text[cut:].lstrip())


def _phrase_end(text: str, limit: int) -> int | None:
    """Where to end the lead: after the last phrase boundary between `MIN_LEAD` and `limit` outside code spans
    (an even number of backticks before it), else after the last space there; None when the
    text fits (or has neither)."""
    if len(text) <= limit + 8:  # a word more never needs a "more"
        return None
    for mark in ("; ", ", ", ": ", " "):
        ends = [i + len(mark.rstrip()) for i in range(limit - 1)
                if text.startswith(mark, i) and text.count("`", 0, i) % 2 == 0 and i >= MIN_LEAD]
        if ends:
            return ends[-1]
    return None
