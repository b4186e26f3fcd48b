"""The inline Markdown of the text we generate, as HTML for pages and as plain text for terminals.

Statuses, reasons, diagnostics, check details and run notes are written by this package
with code spans around names and values ("list its id in `allow_mutating`"). Pages show
those spans as code, and terminals, logs and search text show the words without the
backticks. Code spans are the only Markdown such text uses, so they are the only Markdown
read here: everything else (`*`, `_`, `\\`, `[`) stays as written, so a pattern or a value
quoted in a message is never reinterpreted. Manifest prose (descriptions, purposes) is full
Markdown and goes through the page renderer instead.

Code spans follow CommonMark: a run of N backticks opens a span that the next run of exactly
N backticks closes (unmatched runs are literal text); line breaks inside become spaces, and
one space is stripped from both ends when both ends have one.
"""

from __future__ import annotations

import re
from typing import Iterator

from markupsafe import Markup, escape

__all__ = ["html", "plain", "spans"]

_TICKS = re.compile(r"`+")


def spans(text: str) -> Iterator[tuple[bool, str]]:
    """`text` split into (is_code, content) pieces, in order."""
    pos = 0
    start = 0  # where the pending plain text begins
    while True:
        opener = _TICKS.search(text, pos)
        if opener is None:
            break
        width = len(opener.group(0))
        closer = _TICKS.search(text, opener.end())
        while closer is not None and len(closer.group(0)) != width:
            closer = _TICKS.search(text, closer.end())
        if closer is None:
            pos = opener.end()  # no closer of this width: these backticks are text
            continue
        if opener.start() > start:
            yield False, text[start:opener.start()]
        yield True, _code_content(text[opener.end():closer.start()])
        pos = start = closer.end()
    if start < len(text):
        yield False, text[start:]


def _code_content(raw: str) -> str:
    content = raw.replace("\r\n", " ").replace("\n", " ").replace("\r", " ")
    if len(content) >= 2 and content[0] == " " and content[-1] == " " and content.strip(" "):
        content = content[1:-1]
    return content


def html(text: object) -> Markup:
    """Generated text as safe HTML: code spans as `<code>`, everything else escaped."""
    if text is None:
        return Markup("")
    words = str(text)  # a plain str even when `text` is Markup: every piece is escaped
    if "`" not in words:  # no code span: one piece
        return escape(words)
    return Markup("").join(
        Markup("<code>{}</code>").format(piece) if is_code else escape(piece) for is_code, piece in spans(words)
    )


def plain(text: object) -> str:
    """Generated text for a terminal, a log or a search index: code spans without their backticks."""
    if text is None:
        return ""
    words = str(text)
    if "`" not in words:
        return words
    return "".join(piece for _is_code, piece in spans(words))
