"""Generated text's code spans: code on pages, plain words in terminals, logs and `toolcatalog diff`."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
from pathlib import Path

import pytest

from sitebuild import REPO, toolcatalog
from toolcatalog import inline


@pytest.mark.parametrize("text, html, plain", [
    ("list its id in `allow_mutating` to run it", "list its id in <code>allow_mutating</code> to run it",
     "list its id in allow_mutating to run it"),
    ("a ``x ` y`` b", "a <code>x ` y</code> b", "a x ` y b"),  # a longer fence holds a backtick
    ("`` `tick` ``", "<code>`tick`</code>", "`tick`"),  # one space stripped from both ends
    ("unclosed ` tick", "unclosed ` tick", "unclosed ` tick"),
    ("``` alone", "``` alone", "``` alone"),
    ("<b>`<i>`</b> & co", "&lt;b&gt;<code>&lt;i&gt;</code>&lt;/b&gt; &amp; co", "<b><i></b> & co"),
    ("`a\nb`", "<code>a b</code>", "a b"),
    # Only code spans are read: emphasis, escapes and brackets stay as written (a pattern in a
    # message is never reinterpreted).
    (r"'^[a-z]+(-[a-z]+)*$' and *this* and \d", r"&#39;^[a-z]+(-[a-z]+)*$&#39; and *this* and \d",
     r"'^[a-z]+(-[a-z]+)*$' and *this* and \d"),
])
def test_code_spans(text: str, html: str, plain: str) -> None:
    assert str(inline.html(text)) == html
    assert inline.plain(text) == plain


def test_many_unmatched_backtick_runs_stay_fast_and_literal() -> None:
    text = " ".join("`" * n for n in range(1, 300))  # every run a different width: none closes
    assert inline.plain(text) == text
    assert str(inline.html(text)) == text


OLD = {"version": 2, "tools": [{
    "id": "units_convert", "name": "Convert *units*", "format": "aip-14", "version": "1.0.0",
    "inputs": {"type": "object", "properties": {"n": {"type": "integer"}}},
    "outputs": {"type": "object"}, "effects": {"mutates": [], "risk_level": 0},
}]}
NEW = {"version": 2, "tools": [{
    **OLD["tools"][0], "version": "1.0.1",
    "inputs": {"type": "object", "properties": {"n": {"type": "integer", "minimum": 1}, "unit": {"type": "string"}}, "required": ["unit"]},
}]}


@pytest.fixture
def catalogs(tmp_path: Path) -> tuple[Path, Path]:
    old, new = tmp_path / "old.json", tmp_path / "new.json"
    old.write_text(json.dumps(OLD), encoding="utf-8")
    new.write_text(json.dumps(NEW), encoding="utf-8")
    return old, new


def test_diff_to_a_file_or_pipe_is_markdown_for_pull_requests(catalogs: tuple[Path, Path]) -> None:
    result = toolcatalog("diff", str(catalogs[0]), str(catalogs[1]))
    assert result.returncode == 1
    assert "## Tool catalog changes" in result.stdout
    assert "### `units_convert` Convert \\*units\\* (1.0.0 → 1.0.1) — breaking" in result.stdout
    assert "- **breaking**: `inputs.n`: \\`minimum\\` none → 1" in result.stdout
    assert toolcatalog("diff", "--format", "markdown", str(catalogs[0]), str(catalogs[1])).stdout == result.stdout


def test_diff_text_has_no_markdown(catalogs: tuple[Path, Path]) -> None:
    result = toolcatalog("diff", "--format", "text", str(catalogs[0]), str(catalogs[1]))
    assert result.returncode == 1
    lines = result.stdout.splitlines()
    assert lines[0] == "Tool catalog changes"
    assert "units_convert  Convert *units* (1.0.0 → 1.0.1) — breaking" in lines
    assert "  breaking: inputs.n: minimum none → 1" in lines
    assert "  breaking: inputs.unit: new required input" in lines
    assert not any(ch in result.stdout for ch in "`\\#")
    assert json.loads(toolcatalog("diff", "--format", "json", str(catalogs[0]), str(catalogs[1])).stdout)["breaking"] is True


def test_diff_in_a_terminal_prints_text(catalogs: tuple[Path, Path]) -> None:
    # A real pseudo-terminal: the command sees a tty on stdout, as in an interactive shell.
    leader, follower = pty.openpty()
    try:
        done = subprocess.run(
            [sys.executable, "-m", "toolcatalog.cli", "diff", str(catalogs[0]), str(catalogs[1])],
            stdout=follower, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, cwd=REPO, timeout=60,
            env={**os.environ, "COLUMNS": "200"},
        )
        os.close(follower)
        follower = -1
        chunks = []
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # EIO: the writer side is closed and everything was read
                break
            if not chunk:
                break
            chunks.append(chunk)
    finally:
        if follower != -1:
            os.close(follower)
        os.close(leader)
    shown = b"".join(chunks).decode("utf-8").replace("\r\n", "\n")
    assert done.returncode == 1, done.stderr
    assert shown.startswith("Tool catalog changes\n")
    assert "  breaking: inputs.n: minimum none → 1\n" in shown
    assert "`" not in shown and "\\" not in shown and "##" not in shown


def test_text_without_backticks_is_one_escaped_piece() -> None:
    """The shortcut for text with no code span gives what splitting it gives, escaped even when
    the text arrives as Markup (its words are the manifest's, not ours)."""
    from markupsafe import Markup

    from toolcatalog import inline

    for text in ["", "plain words", "<b>bold</b> & more", Markup("<i>x</i>"), 42, "line\nbreak"]:
        pieces = list(inline.spans(str(text)))
        assert inline.plain(text) == "".join(piece for _, piece in pieces)
        assert inline.html(text) == Markup("").join(Markup.escape(piece) for _, piece in pieces)
    assert str(inline.html(Markup("<i>x</i>"))) == "&lt;i&gt;x&lt;/i&gt;"
