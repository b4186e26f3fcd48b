"""The reproduction commands in a real browser: the copy button copies exactly the command, and
without JavaScript the command is plain selectable text (headless Chromium, a real MkDocs build)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterator

import pytest

from browsing import launched_chromium, require_chromium, serve
from manifests import ECHO_STDIN_PY, PLATFORM, speccify_tool
from sitebuild import build, mkdocs_project

require_chromium()

INPUT = {"text": "it's $(touch X) `y`"}


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    root = tmp_path_factory.mktemp("site")
    speccify_tool(root, "echo-quotes", [("Hostile input", INPUT, INPUT)], files={f"{PLATFORM}.py": ECHO_STDIN_PY})
    mkdocs_project(root, {"cache": False})
    build(root)
    base, server = serve(root / "site")
    try:
        yield base
    finally:
        server.shutdown()


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with launched_chromium() as instance:
        yield instance


def test_the_copy_button_copies_the_command(site: str, browser: Any) -> None:
    context = browser.new_context(permissions=["clipboard-read", "clipboard-write"])
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(f"{e}\n{e.stack}"))
    page.goto(site + "tools/echo-quotes/")
    run = page.locator("#tc-ex-hostile-input .tc-repro pre.tc-copy")
    command = run.locator("code").inner_text()
    assert command.startswith("cd -- .agent/tools/echo-quotes && printf '%s\\n' ")
    run.locator("button.tc-copy-button").click()
    page.wait_for_function("document.querySelector('#tc-ex-hostile-input .tc-copy-button').textContent === 'Copied'")
    assert page.evaluate("navigator.clipboard.readText()") == command
    # The ¶ link goes to the example's own anchor.
    page.click("#tc-ex-hostile-input-title a.tc-anchor")
    assert page.url.endswith("#tc-ex-hostile-input")
    assert [e for e in errors if "toolcatalog.js" in e] == []  # (the mkdocs theme's own scripts fail offline: not ours)
    context.close()


def test_without_javascript_the_command_is_plain_text(site: str, browser: Any) -> None:
    context = browser.new_context(java_script_enabled=False)
    page = context.new_page()
    page.goto(site + "tools/echo-quotes/")
    assert page.locator("button.tc-copy-button").count() == 0
    codes = page.locator("pre.tc-copy code").all_inner_texts()
    assert "toolcatalog check --tool echo-quotes" in codes
    assert any("'\"'\"'" in code for code in codes)  # the quote, quoted for a shell, as text
    context.close()
