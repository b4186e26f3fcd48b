"""The built pages in a real headless Chromium (Debian's, driven by Playwright), served on localhost."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Iterator

import pytest
import yaml

from browsing import launched_chromium, require_chromium, serve
from manifests import workspace_all_formats
from sitebuild import build, write

pytestmark = pytest.mark.browser
require_chromium()
pytest.importorskip("playwright.sync_api")


@pytest.fixture(scope="module")
def demo_url(demo_site: Path) -> Iterator[str]:
    """The project's own demo site (conftest's `demo_site`, built once per run), served."""
    url, server = serve(demo_site)
    yield url
    server.shutdown()


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    with launched_chromium() as instance:
        yield instance


@pytest.fixture(scope="module")
def shared_page(browser: object) -> Iterator[object]:
    """One browser page for the module: a new context and page cost ≈0.5-0.8 s of CPU before
    the first visit. `page` hands it to each test as a new one would be."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.console_errors = []  # type: ignore[attr-defined]
    page.dialogs = []  # type: ignore[attr-defined]
    page.on("console", lambda m: page.console_errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: page.console_errors.append(str(e)))

    def on_dialog(dialog: object) -> None:
        page.dialogs.append(dialog.message)
        dialog.dismiss()

    page.on("dialog", on_dialog)
    yield page
    context.close()


@pytest.fixture
def page(shared_page: object) -> Iterator[object]:
    """The module's page, blank, with no error or dialog on record; when the test ends, the
    storage of the site it was on and the cookies are cleared."""
    page = shared_page
    page.console_errors.clear()
    page.dialogs.clear()
    yield page
    if page.url.startswith("http"):
        page.evaluate("() => { localStorage.clear(); sessionStorage.clear(); }")
    page.context.clear_cookies()
    page.goto("about:blank")


def visible_rows(page: object) -> list[str]:
    return page.eval_on_selector_all(
        "table.tc-catalog tbody tr", "rows => rows.filter(r => !r.hidden).map(r => r.dataset.status + ' ' + r.dataset.format)"
    )


def test_filters_narrow_the_table_and_the_url_restores_them(page: object, demo_url: str) -> None:
    page.goto(demo_url + "tools/")
    everything = visible_rows(page)
    assert len(everything) >= 15
    page.select_option("select[name=status]", "failed")
    failed = visible_rows(page)
    assert failed and all(row.startswith("failed ") for row in failed)
    assert len(failed) < len(everything)
    assert "status=failed" in page.url
    assert page.inner_text("[data-tc-shown]") == f"Showing {len(failed)} of {len(everything)} tools."

    page.select_option("select[name=format]", "aip-14")
    both = visible_rows(page)
    assert both == ["failed aip-14"]
    linked = page.url
    assert "format=aip-14" in linked

    # A fresh visit to the linked URL restores the same view.
    page.goto(linked)
    assert page.input_value("select[name=status]") == "failed"
    assert page.input_value("select[name=format]") == "aip-14"
    assert visible_rows(page) == both

    page.click("button.tc-reset")
    page.wait_for_function("document.querySelectorAll('table.tc-catalog tbody tr[hidden]').length === 0")
    assert "status=" not in page.url

    page.fill("input[name=q]", "redact")
    rows = page.eval_on_selector_all("table.tc-catalog tbody tr:not([hidden]) a", "links => links.map(a => a.textContent)")
    assert rows == ["Redact email addresses"]
    page.fill("input[name=q]", "no such tool anywhere")
    assert page.is_visible("[data-tc-empty]")
    assert page.console_errors == []


def test_a_property_anchor_scrolls_to_the_property(page: object, demo_url: str) -> None:
    page.goto(demo_url + "tools/json-sum/#tc-in-values")
    row = page.locator("#tc-in-values")
    assert row.is_visible()
    box = row.bounding_box()
    assert box is not None and 0 <= box["y"] < 900
    assert page.evaluate("window.scrollY") > 0
    assert page.evaluate("document.querySelector(':target').id") == "tc-in-values"


def test_collapsible_sections_open(page: object, demo_url: str) -> None:
    page.goto(demo_url + "tools/textkit/")
    details = page.locator("details.tc-help").first
    assert details.get_attribute("open") is None
    assert not details.locator("pre").is_visible()
    details.locator("summary").click()
    assert details.get_attribute("open") is not None
    assert "Deterministic." in details.locator("pre").inner_text() or "Model-backed." in details.locator("pre").inner_text()

    page.goto(demo_url + "tools/json-sum/")
    raw = page.locator("details.tc-raw").first
    raw.locator("summary").click()
    assert raw.locator("pre").is_visible()
    assert '"type"' in raw.locator("pre").inner_text()
    assert page.console_errors == []


def test_hostile_manifest_executes_nothing(page: object, demo_url: str) -> None:
    page.goto(demo_url + "tools/hostile-markup/")
    page.wait_for_load_state("load")
    text = page.inner_text("div.toolcatalog")
    # The markup is shown as text, not executed or turned into elements.
    assert "<script>alert(1)</script>" in text or "alert(1)" in text
    assert page.dialogs == []
    injected = page.evaluate(
        """() => ({
            scripts: [...document.querySelectorAll('div.toolcatalog script')].length,
            handlers: [...document.querySelectorAll('div.toolcatalog *')].filter(e => [...e.attributes].some(a => a.name.startsWith('on'))).length,
            jsLinks: [...document.querySelectorAll('a')].filter(a => (a.getAttribute('href') || '').trim().toLowerCase().startsWith('javascript:')).length,
            images: [...document.querySelectorAll('div.toolcatalog img')].length,
        })"""
    )
    assert injected == {"scripts": 0, "handlers": 0, "jsLinks": 0, "images": 0}
    page.goto(demo_url + "tools/")
    assert page.dialogs == []


def test_no_page_logs_a_console_error(page: object, demo_url: str, demo_site: Path) -> None:
    page.goto(demo_url + "tools/")
    links = page.eval_on_selector_all("table.tc-catalog tbody a", "links => links.map(a => a.href)")
    assert len(links) >= 15 and all(link.startswith(demo_url) for link in links)
    for link in [demo_url, demo_url + "tools/"]:
        page.goto(link)
        page.wait_for_load_state("load")
        assert page.console_errors == [], (link, page.console_errors)
    # The search worker indexes the same site-wide index at every load, on every page alike: it
    # ran with the real one on the two pages above. The tool pages are served (by a server of their
    # own) a one-page index: indexing ≈470 kB again on each of them was ≈0.2 s of CPU a page.
    index = json.loads((demo_site / "search" / "search_index.json").read_text(encoding="utf-8"))
    index["docs"] = index["docs"][:1]
    url, server = serve(demo_site, {"search/search_index.json": json.dumps(index).encode()})
    try:
        for link in links:
            page.goto(url + link.removeprefix(demo_url))
            page.wait_for_load_state("load")
            assert page.console_errors == [], (link, page.console_errors)
    finally:
        server.shutdown()
    assert page.dialogs == []


def test_filters_work_with_the_plain_theme_and_material_instant_navigation(page: object, tmp_path: Path) -> None:
    # One workspace, built with each theme: the second build reuses the first one's runs.
    workspace_all_formats(tmp_path)
    write(tmp_path / "docs" / "index.md", "# Home\n\nSee [the catalog](tools/index.md).\n")
    # The mkdocs theme loads highlight.js from a CDN by default; offline, that is its error, not ours.
    # Its scripts also expect the search plugin, which every real mkdocs.yml has.
    themes = {
        "plain": ({"name": "mkdocs", "highlightjs": False}, ["search", {"toolcatalog": {}}]),
        "instant": ({"name": "material", "font": False, "features": ["navigation.instant"]}, [{"toolcatalog": {}}]),
    }
    servers = []
    try:
        for name, (theme, plugins) in themes.items():
            # Served before it is built: Material's instant navigation needs site_url (it swaps in
            # only the pages its sitemap lists, by their full URL); without one, a click reloads.
            url, server = serve(tmp_path / f"site-{name}")
            servers.append(server)
            config = {"site_name": "Test catalog", "site_url": url, "theme": theme, "plugins": plugins, "site_dir": f"site-{name}"}
            write(tmp_path / f"mkdocs-{name}.yml", yaml.safe_dump(config, sort_keys=False))
            build(tmp_path, "-f", f"mkdocs-{name}.yml")
            if name == "instant":
                # Instant navigation swaps the page without a reload; the filters must still wake up.
                page.goto(url)
                page.evaluate("window.tcNotReloaded = true")
                page.click("article a[href$='tools/']")
                page.wait_for_selector("form.tc-filters")
                assert page.evaluate("window.tcNotReloaded === true")  # swapped in, not loaded
            else:
                page.goto(url + "tools/")
            page.select_option("select[name=format]", "speccify")
            page.wait_for_function("document.querySelectorAll('table.tc-catalog tbody tr:not([hidden])').length === 1")
            assert visible_rows(page) == ["passed speccify"]
            assert "format=speccify" in page.url
    finally:
        for server in servers:
            server.shutdown()
    assert page.console_errors == []


def coverage_order(page: object) -> list[float]:
    return page.eval_on_selector_all("table.tc-catalog tbody tr", "rows => rows.map(r => Number(r.dataset.coverage))")


def test_the_index_sorts_by_coverage_and_the_url_keeps_it(page: object, demo_url: str) -> None:
    page.goto(demo_url + "tools/")
    first = coverage_order(page)
    assert first != sorted(first)  # the demo's name order is not its coverage order: sorting shows
    assert {0.0, 1.0} <= set(first) and any(0 < x < 1 for x in first)  # full, partial and no coverage
    page.click("button[data-tc-sort=coverage]")
    assert coverage_order(page) == sorted(first)
    assert page.get_attribute("th.tc-cell-coverage", "aria-sort") == "ascending"
    assert "sort=coverage" in page.url
    page.click("button[data-tc-sort=coverage]")
    assert coverage_order(page) == sorted(first, reverse=True)
    linked = page.url
    assert "sort=-coverage" in linked
    page.goto(linked)
    assert coverage_order(page) == sorted(first, reverse=True)
    # The weakest contracts are named above the table, lowest first.
    weakest = page.eval_on_selector_all("#tc-weakest li a", "links => links.map(a => a.textContent)")
    assert len(weakest) == 5 and "csv-headers" in weakest
    assert page.console_errors == []
