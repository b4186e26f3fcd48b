"""Reviewer pages in headless Chromium: the demo catalog plus the public corpus, placed as a team would
place it (tests/teamcorpus.py), built with Material (light and dark) and the plain `mkdocs` theme, seen at
1280 and 390 px wide.

Each page is checked for what a reviewer needs at a glance: no element wider than the viewport, a
reason beside every verdict, rows that become cards on a phone, expected and actual outputs side by side
with the differing lines marked, drivers listed once with their own state, catalog problems grouped and
collapsible, and an empty catalog that says where it looked. Without ../shared/corpus the sites hold the
demo catalog alone, and the checks about corpus tools are skipped.
"""

from __future__ import annotations

import functools
import json
import re
from pathlib import Path
from typing import Any, Iterator

import pytest
import yaml

import teamcorpus
from browsing import launched_chromium, require_chromium, serve
from teamsite import THEMES, site_config
from sitebuild import Result, build, toolcatalog, write

pytestmark = pytest.mark.browser
require_chromium()
pytest.importorskip("playwright.sync_api")

CORPUS = teamcorpus.available()
needs_corpus = pytest.mark.skipif(not CORPUS, reason="the shared corpus is not beside the checkout")

# (theme, colour scheme, viewport width). The dark scheme changes colours, never widths
# (toolcatalog.css takes its colours from Material's palette variables and has no rule of its own
# for a scheme): it is checked at the desktop width, by the tests that look at colours (the index's
# contrast, the failed example's marks), not by every test (its layout is the light scheme's).
VARIANTS = [
    ("material", "light", 1280), ("material", "dark", 1280), ("material", "light", 390),
    ("mkdocs", "light", 1280), ("mkdocs", "light", 390),
]
LAYOUTS = [v for v in VARIANTS if v[1] == "light"]
NARROW = 390


def variants(*keep: tuple[str, str, int]) -> pytest.MarkDecorator:
    """A test's own variants, instead of every light one."""
    return pytest.mark.parametrize("view", list(keep), indirect=True, ids=lambda v: f"{v[0]}-{v[1]}-{v[2]}")


@pytest.fixture(scope="module")
def team(team_site: Path) -> Iterator[dict[str, Any]]:
    """The team workspace built once per theme (once per test run, for every worker):
    {theme: (base URL, site folder, build log, the server's `files`)}, served."""
    root = team_site
    sites: dict[str, Any] = {"root": root}
    servers = []
    for theme in THEMES:
        result = Result(**json.loads((root / f"build-{theme}.json").read_text(encoding="utf-8")))
        # These tests are about the plugin's pages, not the site search, whose worker would index
        # the team site's whole search index (hundreds of kilobytes) again at every page load: the
        # same index with one page is served instead. tests/test_browser.py keeps the real one.
        files = {"search/search_index.json": one_page_index(root / f"site-{theme}").encode()}
        url, server = serve(root / f"site-{theme}", files)
        servers.append(server)
        sites[theme] = (url, root / f"site-{theme}", result, files)
    yield sites
    for server in servers:
        server.shutdown()


@pytest.fixture(scope="module")
def catalog(team: dict[str, Any]) -> dict[str, Any]:
    return json.loads((team["material"][1] / "catalog.json").read_text(encoding="utf-8"))


def tool_url(catalog: dict[str, Any], **match: Any) -> str:
    for tool in catalog["tools"]:
        if all(tool.get(k) == v for k, v in match.items()):
            return tool["url"]
    raise AssertionError(f"no tool {match}")


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with launched_chromium() as instance:
        yield instance


@pytest.fixture(scope="module")
def pages(browser: Any, team: dict[str, Any]) -> Iterator[dict[tuple[str, str, int], Any]]:
    """One browser page per variant for the whole module, made on first use: a new page costs
    ≈0.5-0.8 s of CPU before its first visit (a renderer, and every stylesheet and script parsed
    again), over 50 tests here. `view` hands it to each test as a new page would be."""
    made: dict[tuple[str, str, int], Any] = {}
    yield made
    for page in made.values():
        page.context.close()


def _new_page(browser: Any, team: dict[str, Any], theme: str, scheme: str, width: int) -> Any:
    context = browser.new_context(viewport={"width": width, "height": 900}, color_scheme=scheme)
    page = context.new_page()
    page.on("console", lambda m: page.errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: page.errors.append(str(e)))
    page.base, page.theme, page.scheme, page.width = team[theme][0], theme, scheme, width
    return page


@pytest.fixture(params=LAYOUTS, ids=lambda v: f"{v[0]}-{v[1]}-{v[2]}")
def view(request: pytest.FixtureRequest, browser: Any, team: dict[str, Any], pages: dict[tuple[str, str, int], Any]) -> Iterator[Any]:
    """A page in one theme, colour scheme and width, with `.base` (the site's URL) and `.theme`:
    the variant's page, blank, with nothing a test before stored (the site's local and session
    storage and cookies cleared when that test ended) and no error on record."""
    key = request.param
    if key not in pages:
        pages[key] = _new_page(browser, team, *key)
    page = pages[key]
    page.errors = []
    yield page
    try:
        assert page.errors == []
    finally:
        # Still on the site's origin (or a page the test left): its storage is the one to clear.
        if page.url.startswith(page.base):
            page.evaluate("() => { localStorage.clear(); sessionStorage.clear(); }")
        page.context.clear_cookies()
        page.goto("about:blank")


@functools.cache
def one_page_index(site: Path) -> str:
    index = json.loads((site / "search" / "search_index.json").read_text(encoding="utf-8"))
    index["docs"] = index.get("docs", [])[:1]
    return json.dumps(index)


def visit(page: Any, path: str) -> None:
    page.goto(page.base + path)
    page.wait_for_load_state("load")
    if page.theme == "material":
        # The scheme the browser prefers is the one shown.
        assert page.evaluate("document.body.dataset.mdColorScheme") == ("slate" if page.scheme == "dark" else "default")


OVERFLOW = """() => {
  const W = document.documentElement.clientWidth;
  const wide = [];
  for (const el of document.querySelectorAll('.toolcatalog, .toolcatalog *')) {
    const r = el.getBoundingClientRect();
    if (r.width === 0 || r.right <= W + 1) continue;
    // Content scrolled inside a box that itself fits (a long JSON line in its <pre>) is not wider.
    let clipped = false;
    for (let a = el.parentElement; a && a !== document.body; a = a.parentElement) {
      if (getComputedStyle(a).overflowX !== 'visible' && a.getBoundingClientRect().right <= W + 1) { clipped = true; break; }
    }
    if (!clipped) {
      const page = el.closest('[data-tc-page]');  // on the page of every tool's content: whose
      wide.push((page ? page.dataset.tcPage + ': ' : '') + el.tagName.toLowerCase() + '.' + el.className + ' ends at ' + Math.round(r.right));
    }
  }
  return {wide: wide.slice(0, 8), page: document.documentElement.scrollWidth, viewport: W};
}"""


def assert_fits(page: Any) -> None:
    found = page.evaluate(OVERFLOW)
    assert found["wide"] == [], found
    assert found["page"] <= found["viewport"], found


# -- the index ----------------------------------------------------------------------------------


ROWS = """() => [...document.querySelectorAll('table.tc-catalog tbody tr')].map(tr => {
  const reason = tr.querySelector('.tc-reason');
  const badge = reason.querySelector('.tc-status');
  return {
    status: tr.dataset.status, name: tr.querySelector('a').textContent.trim(),
    reason: reason.textContent.replace(badge.textContent, '').trim(), display: getComputedStyle(tr).display,
    safety: tr.querySelector('.tc-safety').textContent.trim(), right: tr.getBoundingClientRect().right,
  };
})"""


CONTRAST = """() => {
  const rgb = c => c.match(/[\\d.]+/g).map(Number);
  const lum = c => { const [r, g, b] = rgb(c).slice(0, 3).map(v => { v /= 255; return v <= .03928 ? v / 12.92 : ((v + .055) / 1.055) ** 2.4; });
    return .2126 * r + .7152 * g + .0722 * b; };
  const text = document.querySelector('table.tc-catalog .tc-reason');
  let back = text;
  while (back && (getComputedStyle(back).backgroundColor === 'rgba(0, 0, 0, 0)' || rgb(getComputedStyle(back).backgroundColor)[3] === 0)) back = back.parentElement;
  const [a, b] = [lum(getComputedStyle(text).color), lum(getComputedStyle(back || document.documentElement).backgroundColor)];
  return (Math.max(a, b) + .05) / (Math.min(a, b) + .05);
}"""


@variants(*VARIANTS)
def test_index_rows_fit_say_why_and_read_in_order(view: Any, catalog: dict[str, Any]) -> None:
    visit(view, "tools/")
    assert_fits(view)
    # The reasons are readable in either scheme: their colour follows the scheme's background.
    assert view.evaluate(CONTRAST) >= 4.5
    rows = view.evaluate(ROWS)
    assert len(rows) == len(catalog["tools"])
    # A reason beside every verdict, whatever the status.
    assert [r for r in rows if not r["reason"]] == []
    statuses = {r["status"] for r in rows}
    assert len(statuses) >= 6, statuses
    # Sorted by the name shown.
    names = [r["name"].casefold() for r in rows]
    assert names == sorted(names)
    # One safety class per row, in the same words everywhere.
    # (claims.EffectsClaim.label: a class seen only in sandboxed runs says "(observed)"; a read-only
    # contract no traced run confirmed says so, and never looks verified.)
    words = {"read-only", "writes", "external effects", "irreversible", "not declared", "in words"}
    assert {r["safety"] for r in rows} <= words | {f"{w} (observed)" for w in words} | {"read-only (declared, not observed)"}
    header = view.locator("table.tc-catalog thead").bounding_box()
    if view.width == NARROW:
        # Cards: one block per tool, the column header out of sight, nothing sticking out.
        assert {r["display"] for r in rows} == {"block"}
        assert header is None or header["height"] <= 1
        assert max(r["right"] for r in rows) <= NARROW
    else:
        assert {r["display"] for r in rows} == {"table-row"}
        assert header["height"] > 10
        # Compact: no row is taller than three lines of its text (name and description; badge and a
        # reason of at most two lines), where the tall rows of the first design took eight and more.
        # A tool whose id other manifests share has one more (small) line: its manifest's path.
        heights = view.eval_on_selector_all("table.tc-catalog tbody tr", "rows => rows.map(r => r.getBoundingClientRect().height - (r.querySelector('.tc-dup-path') ? r.querySelector('.tc-dup-path').getBoundingClientRect().height : 0))")
        line = view.evaluate("parseFloat(getComputedStyle(document.querySelector('table.tc-catalog td')).lineHeight)")
        assert max(heights) <= 3 * line + 16, (max(heights), line)


def test_status_counts_filter_the_rows(view: Any) -> None:
    visit(view, "tools/")
    view.click("button.tc-count[data-tc-status=failed]")
    view.wait_for_function("[...document.querySelectorAll('table.tc-catalog tbody tr')].every(r => r.hidden || r.dataset.status === 'failed')")
    assert "status=failed" in view.url
    assert view.input_value("select[name=status]") == "failed"
    view.click("button.tc-count[data-tc-status=failed]")
    view.wait_for_function("document.querySelectorAll('table.tc-catalog tbody tr[hidden]').length === 0")
    view.select_option("select[name=safety]", "read-only")
    shown = view.eval_on_selector_all("table.tc-catalog tbody tr:not([hidden]) .tc-safety", "els => els.map(e => e.textContent)")
    assert shown and {label.split(" (")[0] for label in shown} == {"read-only"}


@needs_corpus
def test_catalog_problems_are_grouped_and_collapsible(view: Any) -> None:
    visit(view, "tools/")
    groups = view.locator("details.tc-problems")
    assert groups.count() >= 3
    titles = view.eval_on_selector_all("details.tc-problems > summary", "els => els.map(e => e.textContent.trim())")
    assert any("Ids used by more than one manifest" in t for t in titles), titles
    assert all(g.get_attribute("open") is None for g in groups.all())
    first = groups.first
    assert not first.locator("li").first.is_visible()
    first.locator("summary").click()
    assert first.get_attribute("open") is not None and first.locator("li").first.is_visible()
    count = int(first.locator(".tc-problem-count").inner_text())
    assert first.locator("li").count() == count
    assert_fits(view)  # opened, its long paths still fit


# At the desktop width only: on a phone Material hides its sidebars whatever the page holds.
@variants(*(v for v in LAYOUTS if v[2] != NARROW))
def test_plain_theme_index_has_no_empty_sidebar(view: Any) -> None:
    visit(view, "tools/")
    if view.theme == "mkdocs":
        entries = view.eval_on_selector_all(".bs-sidebar li", "els => els.map(e => e.textContent.trim())")
        assert entries and entries[0] == "Tools"
    else:  # Material: the index keeps its width (no table of contents beside it)
        assert not view.locator(".md-sidebar--secondary .md-nav__link").first.is_visible()


# -- tool pages ---------------------------------------------------------------------------------


@variants(*VARIANTS)
def test_a_failed_example_shows_expected_and_actual_side_by_side(view: Any, catalog: dict[str, Any]) -> None:
    visit(view, tool_url(catalog, id="json-sum"))
    assert_fits(view)
    failed = view.locator("section.tc-example-failed").first
    cells = failed.locator(".tc-io-compare > .tc-io-cell")
    assert cells.count() == 2
    expected, actual = cells.nth(0), cells.nth(1)
    assert "Expected output" in expected.inner_text() and "Actual output" in actual.inner_text()
    # The differing line is marked in both.
    assert [m.strip() for m in expected.locator("mark.tc-diff").all_inner_texts()] == ['"sum": 122.75,']
    assert [m.strip() for m in actual.locator("mark.tc-diff").all_inner_texts()] == ['"sum": 22.75,']
    assert actual.locator(".tc-io-label .tc-status-failed").inner_text() == "differs"
    assert failed.locator(".tc-differences code").first.inner_text() == "$.sum"
    assert "How a run is judged:" in failed.inner_text()
    a, b = expected.bounding_box(), actual.bounding_box()
    if view.width == NARROW:
        assert b["y"] >= a["y"] + a["height"] - 1  # stacked
    else:
        assert abs(a["y"] - b["y"]) < 1 and b["x"] > a["x"] + a["width"] - 1  # side by side
    # The run table stays inside its card.
    card, runs = failed.bounding_box(), failed.locator("table.tc-runs").bounding_box()
    assert runs["x"] + runs["width"] <= card["x"] + card["width"] + 1
    # Passing examples mark nothing.
    assert view.locator("section.tc-example-passed mark.tc-diff").count() == 0


@needs_corpus
def test_drivers_are_listed_once_with_their_own_state(view: Any, catalog: dict[str, Any]) -> None:
    entry = next(t for t in catalog["tools"] if t["id"] == "image.create")
    visit(view, entry["url"])
    assert_fits(view)
    rows = view.locator("table.tc-drivers > tbody > tr:not(.tc-driver-diagnostics)")
    assert rows.count() == len(entry["drivers"]) >= 4
    section = view.evaluate("""() => { const h = document.getElementById('tc-drivers'); let text = '';
        for (let e = h.nextElementSibling; e && e.tagName !== 'H2'; e = e.nextElementSibling) text += e.innerText + '\\n'; return text; }""")
    # The tool's own reason for not running is said once on the page (in its verdict), not in every row.
    assert section.count("allow_mutating") == 0, section
    assert "None ran, for the tool's reason (above)" in section
    states = rows.evaluate_all("rows => rows.map(r => r.querySelector('td[data-label=State]').innerText)")
    invalid = [d for d in entry["drivers"] if not d["valid"]]
    assert sum("invalid" in s for s in states) == len(invalid) >= 1
    # A driver kind is one word on one line ("http", never "htt/p").
    lines = rows.evaluate_all("rows => rows.map(r => r.querySelector('.tc-driver-kind').getClientRects().length)")
    assert set(lines) == {1}
    # The path variant it was attached by is named on the driver.
    view.locator("table.tc-drivers details summary").first.click()
    assert "which does not exist; it was attached to .tools/image.create/TOOL.md" in view.locator("table.tc-drivers details").first.inner_text()


@needs_corpus
# What it reads is the page's text and links, the same at any width; the page fits a phone as every
# tool page does (test_every_tool_page_fits_a_phone).
@variants(*(v for v in LAYOUTS if v[2] != NARROW))
def test_smart_tool_pages_show_use_cases_and_install_links(view: Any, catalog: dict[str, Any]) -> None:
    gmail = next(t for t in catalog["tools"] if t["id"] == "gmail")
    visit(view, gmail["url"])
    assert_fits(view)
    assert view.eval_on_selector_all(".tc-use-cases li", "els => els.map(e => e.innerText.trim())") == gmail["use_cases"]
    # Doc paths that are not in this repository stay text.
    assert view.locator(".tc-req-install a").count() == 0
    assert view.locator(".tc-req-install code").first.inner_text() == "docs/network.md"


# What it reads is the page's text and links, the same at any width; the page fits a phone as every
# tool page does (test_every_tool_page_fits_a_phone).
@variants(*(v for v in LAYOUTS if v[2] != NARROW))
def test_install_references_are_links_when_they_lead_somewhere(view: Any, catalog: dict[str, Any]) -> None:
    visit(view, tool_url(catalog, id="repo-stats"))
    assert view.locator(".tc-req-install a").first.get_attribute("href") == "https://git.example.com/platform/llm-gateway/-/blob/main/README.md"
    visit(view, tool_url(catalog, id="textkit"))  # a doc path at the distribution root, linked into the repository
    href = view.locator(".tc-req-install a").first.get_attribute("href")
    assert href == "https://example.invalid/team/blob/main/examples/smart-tools/textkit/docs/providers.md"
    # Capability kinds come with a legend saying what each means.
    legend = view.locator("dl.tc-legend").inner_text()
    assert "no model is called" in legend and "calls a language model" in legend
    assert_fits(view)


def test_an_invalid_manifest_shows_its_first_errors(view: Any, catalog: dict[str, Any]) -> None:
    visit(view, tool_url(catalog, id="release.publish"))
    assert_fits(view)
    banner = view.locator(".tc-invalid")
    assert banner.is_visible()
    text = banner.inner_text()
    assert text.startswith("Invalid manifest: 2 errors.")
    assert "runner was removed from AIP-14 TOOL.md" in text and "see Diagnostics" not in text
    assert banner.locator("code").first.inner_text().startswith("examples/.tools/release.publish/TOOL.md:")


def toolcatalog_block(html: str) -> tuple[int, int]:
    """Where a built page's `<div class="toolcatalog ...">` begins and ends (its closing tag
    included): the plugin's content, without the theme's header, navigation and footer."""
    start = html.index('<div class="toolcatalog')
    depth = 0
    for tag in re.finditer(r"<(/?)div\b[^>]*>", html[start:]):
        depth += -1 if tag.group(1) else 1
        if depth == 0:
            return start, start + tag.end()
    raise AssertionError("the toolcatalog block is never closed")


EVERY_TOOL = "tools/every-tool-page/"


def every_tool_page(site: Path, catalog: dict[str, Any]) -> str:
    """One page holding every tool page's content: the first tool page as built (its header,
    navigation, stylesheets and scripts), its toolcatalog block replaced by the blocks of all
    of them, each in a `div[data-tc-page]` naming its page. Served at `EVERY_TOOL`, as deep as
    every tool page (their relative links resolve alike), so the theme's scripts and
    toolcatalog.js treat every block as they do on its own page (tables wrapped or classed, copy
    buttons added), and one load lays out all of them at the same width."""
    pages = {tool["url"]: (site / tool["url"] / "index.html").read_text(encoding="utf-8") for tool in catalog["tools"]}
    assert {url.count("/") for url in pages} == {EVERY_TOOL.count("/")}
    blocks = []
    for url, html in pages.items():
        begin, end = toolcatalog_block(html)
        blocks.append(f'<div data-tc-page="{url}" style="display: flow-root">{html[begin:end]}</div>')
    first = next(iter(pages.values()))
    begin, end = toolcatalog_block(first)
    return first[:begin] + "\n".join(blocks) + first[end:]


def chrome_samples(site: Path, catalog: dict[str, Any]) -> list[str]:
    """The tool pages visited as they are: for each format, its longest page; and the page with
    the longest title (the theme's header and footer show it)."""
    size = {t["url"]: (site / t["url"] / "index.html").stat().st_size for t in catalog["tools"]}
    longest = {}
    for tool in catalog["tools"]:
        if tool["format"] not in longest or size[tool["url"]] > size[longest[tool["format"]]]:
            longest[tool["format"]] = tool["url"]
    titled = max(catalog["tools"], key=lambda t: len(t.get("name") or t["id"]))["url"]
    return sorted({*longest.values(), titled})


# In each theme's light scheme only: the dark one changes colours, never widths.
@variants(*(v for v in LAYOUTS if v[2] == NARROW))
def test_every_tool_page_fits_a_phone(view: Any, team: dict[str, Any], catalog: dict[str, Any]) -> None:
    """Every tool page's content, laid out at once in one page (`every_tool_page`): a visit per
    page cost ≈0.4 s of CPU, 118 times. The theme's own header and footer around that content
    are seen on real visits to a few pages (`chrome_samples`)."""
    site, files = team[view.theme][1], team[view.theme][3]
    files[EVERY_TOOL] = every_tool_page(site, catalog).encode()
    visit(view, EVERY_TOOL)
    shown = view.eval_on_selector_all("[data-tc-page] > .toolcatalog", "els => els.length")
    assert shown == len(catalog["tools"])
    found = view.evaluate(OVERFLOW)
    assert found["wide"] == [] and found["page"] <= found["viewport"], found
    for url in chrome_samples(site, catalog):
        visit(view, url)
        found = view.evaluate(OVERFLOW)
        assert found["wide"] == [] and found["page"] <= found["viewport"], (url, found)


# -- text, nav and the build log ------------------------------------------------------------------


def test_generated_text_reaches_pages_nav_search_and_log_without_markdown(team: dict[str, Any], catalog: dict[str, Any]) -> None:
    url, site, result, _ = team["mkdocs"]
    # The build log: code spans are printed as their words.
    lines = [line for line in result.stderr.splitlines() if "toolcatalog:" in line]
    assert lines and not [line for line in lines if "`" in line]
    # The search index is made from the page HTML: code, not backticks.
    index = json.loads((site / "search" / "search_index.json").read_text(encoding="utf-8"))
    texts = " ".join(doc["text"] for doc in index["docs"] if doc["location"].startswith("tools/"))
    assert "allow_mutating" in texts and "`allow_mutating`" not in texts
    not_run = next(t for t in catalog["tools"] if "`allow_mutating`" in t["status_detail"])
    page = (site / not_run["url"] / "index.html").read_text(encoding="utf-8")
    assert "<code>allow_mutating</code>" in page and "`allow_mutating`" not in page
    # The nav lists tools by the name it shows.
    html = (site / "index.html").read_text(encoding="utf-8")
    for fmt in ("speccify", "agentproto AIP-14", "Smart tools"):
        section = html.split(f">{fmt}<", 1)[1].split("</ul>", 1)[0]
        names = [n.strip().casefold() for n in re.findall(r'class="dropdown-item[^"]*"[^>]*>([^<]+)</a>', section)]
        assert names and names == sorted(names), (fmt, names)


def test_an_empty_catalog_says_where_it_looked(tmp_path: Path, browser: Any) -> None:
    write(tmp_path / "docs" / "index.md", "# Home\n")
    write(tmp_path / "tools" / "README.md", "Our tools will live here.\n")
    for n, theme in enumerate(THEMES):
        result = build(tmp_path, "-f", site_config(tmp_path, theme))
        assert "no tool manifest found: searched . for **/.agent/tools/*/TOOL.md (speccify tools)" in result.stderr
        if n == 0:  # It is a warning: `mkdocs build --strict` stops on it (in any theme: once).
            assert build(tmp_path, "-f", f"mkdocs-{theme}.yml", "--strict", check=False).returncode == 1
        url, server = serve(tmp_path / f"site-{theme}")
        context = browser.new_context(viewport={"width": 1280, "height": 900})
        try:
            page = context.new_page()
            for width in (1280, NARROW):
                page.set_viewport_size({"width": width, "height": 900})
                page.goto(url + "tools/")
                text = page.locator(".tc-nothing-found").inner_text()
                assert text.startswith("No tool manifest was found. The catalog searched . (the folder holding the site's configuration) for:")
                for glob in ("**/.agent/tools/*/TOOL.md", "**/.tools/**/TOOL.md", "**/.drivers/**/DRIVER.md", "**/SMART_TOOL.md"):
                    assert glob in text
                assert "site-" in text  # the site folder, never searched
                assert page.locator("form.tc-filters").count() == 0 and page.locator("[data-tc-empty]").count() == 0
                assert_fits(page)
        finally:
            context.close()
            server.shutdown()
    # The command line says the same.
    result = toolcatalog("validate", str(tmp_path))
    assert result.returncode == 0
    assert "toolcatalog: no tool manifest found: searched . for" in result.stderr
    result = toolcatalog("validate", "--paths", "tools", str(tmp_path))
    assert "searched tools for **/TOOL.md, **/DRIVER.md, **/SMART_TOOL.md, **/smart-tool.json (every format, at any depth)" in result.stderr


# -- the readthedocs theme ------------------------------------------------------------------------


READTHEDOCS = {"name": "readthedocs", "highlightjs": False}
COLUMNS = """() => { const t = document.querySelector('table.tc-catalog');
  const area = t.closest('.rst-content').getBoundingClientRect();
  return {area: [area.left, area.right], cells: [...t.querySelectorAll('thead th')].map(th => {
    const r = th.getBoundingClientRect(); return [th.textContent.trim(), r.left, r.right]; })}; }"""


@pytest.fixture(scope="module")
def readthedocs_site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The demo catalog built with the readthedocs theme, once for the module, served."""
    import shutil

    root = tmp_path_factory.mktemp("readthedocs")
    shutil.copytree(Path(__file__).resolve().parent.parent / "examples", root / "examples")
    write(root / "docs" / "index.md", "# Home\n")
    write(root / "mkdocs.yml", yaml.safe_dump({
        "site_name": "RTD", "theme": READTHEDOCS,
        "plugins": [{"toolcatalog": {"paths": ["examples"], "run_examples": False}}],
    }))
    build(root)
    url, server = serve(root / "site")
    yield url
    server.shutdown()


@pytest.mark.parametrize("width", [1280, NARROW])
def test_readthedocs_index_keeps_every_column_in_the_content_area(readthedocs_site: str, browser: Any, width: int) -> None:
    """readthedocs makes tables blocks whose cells never wrap: the Verdict, Safety and Format columns
    ended past the content area, off-screen at 1280 px."""
    context = browser.new_context(viewport={"width": width, "height": 900})
    try:
        page = context.new_page()
        page.goto(readthedocs_site + "tools/")
        page.wait_for_load_state("load")
        assert_fits(page)
        if width != NARROW:  # a table (on a phone: cards, checked by assert_fits)
            found = page.evaluate(COLUMNS)
            left, right = found["area"]
            assert [c[0] for c in found["cells"]] == ["Tool", "Verdict", "Coverage", "Safety", "Format"]
            assert all(left - 1 <= c[1] and c[2] <= right + 1 for c in found["cells"]), found
    finally:
        context.close()
