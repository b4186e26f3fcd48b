"""A short Markdown text (a description shared by many tools or schema properties) is rendered
once per process; the page budget still counts every use of it."""

from __future__ import annotations

from typing import Any

import pytest

import toolcatalog.render as render  # the module (the package also exports a function of that name)


@pytest.fixture
def parses(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    seen: list[str] = []
    real = render._MARKDOWN.parse

    def counted(text: str, *args: Any, **kwargs: Any) -> Any:
        seen.append(text)
        return real(text, *args, **kwargs)

    monkeypatch.setattr(render._MARKDOWN, "parse", counted)
    render._remembered.cache_clear()
    return seen


def test_a_short_text_is_rendered_once(parses: list[str]) -> None:
    text = "The *number* of `words` in [the text](https://example.org)."
    first = render.markdown_html(text)
    assert [render.markdown_html(text) for _ in range(5)] == [first] * 5
    assert parses == [text]
    assert render.markdown_html(text, shift_headings=0) == render._rendered(text, 0)
    assert str(first) == str(render._rendered(text, 1))


def test_a_long_text_is_rendered_each_time(parses: list[str]) -> None:
    text = "word " * (render.REMEMBERED_CHARS // 5 + 10)
    render.markdown_html(text)
    render.markdown_html(text)
    assert parses == [text, text]


def test_the_page_budget_counts_every_use_of_a_remembered_text(parses: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    text = "A shared description."
    token = render._page_budget.set([len(text) * 3])
    try:
        shown = [render.markdown_html(text) for _ in range(4)]
    finally:
        render._page_budget.reset(token)
    assert shown[0] == shown[1] == shown[2] and "<p>A shared description.</p>" in shown[0]
    assert "Shown as plain text" in shown[3]  # the fourth use is over the page's budget
