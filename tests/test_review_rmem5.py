"""The rmem5 review of the mem5 merge (issue #21, memory): what an attacker's catalog or a second
build in one process could make of the catalog let go after `on_files` and of the bounded
near-duplicate search. Counts, never timings."""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest

from toolcatalog import quality
from toolcatalog.model import Tool

from test_quality_bounded import counted_comparisons


def _tool(i: int, description: str) -> Tool:
    return Tool(id=f"t{i}", name=f"t{i}", format="speccify", source=f"t{i}", abs_path=Path("/x"), description=description)


def _rare_words(n: int, length: int) -> list[Tool]:
    """n descriptions of `length` words each, every word shared by 64 of them (random groups each
    round): no word's index is ever full, and yet each description meets nearly every other in
    the indexes of its long prefix."""
    rng = random.Random(1)
    words: list[list[str]] = [[] for _ in range(n)]
    for r in range(length):
        order = list(range(n))
        rng.shuffle(order)
        for g in range(0, n, 64):
            for t in order[g:g + 64]:
                words[t].append(f"w{r}x{g}")
    return [_tool(i, " ".join(w)) for i, w in enumerate(words)]


def test_long_descriptions_of_words_few_share_are_not_compared_pairwise(monkeypatch: pytest.MonkeyPatch) -> None:
    n = 800
    tools = _rare_words(n, 60)
    calls = counted_comparisons(monkeypatch)
    list(quality._near_duplicates(tools))
    # Before: each description compared with nearly every earlier one (≈ n²/2, 320,000 here).
    assert calls[0] <= n * quality.MAX_COMPARED, calls[0]


def _pairwise(tools: list[Tool]) -> dict[str, int]:
    sets = [quality.words(t.description) for t in tools]
    return {t.id: sum(1 for j, b in enumerate(sets) if j != i and quality.similarity(sets[i], b) >= quality.NEAR_DUPLICATE)
            for i, t in enumerate(tools)}


def test_a_search_cut_short_by_the_comparison_bound_never_claims_an_exact_count_it_did_not_see(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(quality, "MAX_COMPARED", 7)
    # Near-duplicates of three templates, a word of their own each, in a shuffled order.
    templates = ["Turns the titles of changelog entries into slugs for agents and people",
                 "Reads the weather forecast of a city and returns tomorrow's temperature in degrees",
                 "Lists the open pull requests of a repository with their authors and labels today"]
    rng = random.Random(3)
    texts = [f"{templates[k % 3]} variant n{k}" for k in range(90)]
    rng.shuffle(texts)
    tools = [_tool(i, text) for i, text in enumerate(texts)]
    truth = _pairwise(tools)
    ids = {t.id: t for t in tools}
    sets = {t.id: quality.words(t.description) for t in tools}
    seen = exact = 0
    for tool, diagnostic in quality._near_duplicates(tools):
        listed = diagnostic.message.split("with that of ", 1)[1].split(": an agent")[0]
        named = re.findall(r"`([^`]+)`", listed)
        more = re.search(r" and (at least )?(\d+) more$", listed)
        counted = len(named) + (int(more.group(2)) if more else 0)
        for other in named:  # every tool named is a near-duplicate
            assert quality.similarity(sets[tool.id], sets[other]) >= quality.NEAR_DUPLICATE, (tool.id, other)
        if listed.endswith(" and perhaps others") or (more and more.group(1)):
            assert counted <= truth[tool.id], (tool.id, listed, truth[tool.id])
        else:  # said to be exact: it is
            assert counted == truth[tool.id], (tool.id, listed, truth[tool.id])
            exact += 1
        seen += 1
        assert tool.id in ids
    assert seen == 90 and 0 < exact < 90, exact


def test_the_near_duplicate_messages_do_not_depend_on_the_hash_seed(tmp_path: Path) -> None:
    import os
    import subprocess
    import sys

    script = ("import sys, hashlib; sys.path.insert(0, sys.argv[1]); import test_review_rmem5 as t; from toolcatalog import quality\n"
              "tools = t._rare_words(300, 12) + [t._tool(1000 + k, 'Turns the titles of changelog entries into slugs n%d' % k) for k in range(200)]\n"
              "print(hashlib.sha256(repr([d.message for _x, d in quality._near_duplicates(tools)]).encode()).hexdigest())\n")
    here = str(Path(__file__).parent)
    out = {subprocess.run([sys.executable, "-c", script, here], capture_output=True, text=True, check=True,
                          env={**os.environ, "PYTHONHASHSEED": seed}).stdout for seed in ("0", "1")}
    assert len(out) == 1, out


# -- the catalog let go after on_files ----------------------------------------------------------

ODD_OBJECT_HOOK = '''
from mkdocs.plugins import event_priority


class Unpicklable:
    """An object another plugin might hang on a File: it refuses to be copied, not with a TypeError."""

    def __reduce__(self):
        raise RuntimeError("this object cannot be copied")


@event_priority(-500)  # after the plugin made its files, before it lets the catalog go (-1000)
def on_files(files, config):
    for file in files:
        if file.src_uri.startswith("tools/"):
            file.extra = Unpicklable()
    return files


def on_page_markdown(markdown, page, config, files):
    if page.file.src_uri.startswith("tools/"):
        assert isinstance(page.file.extra, Unpicklable)  # the plugin's own object, still there
    return markdown
'''


def test_an_object_on_a_file_that_refuses_any_way_to_be_copied_keeps_the_files_as_they_are(tmp_path: Path) -> None:
    from test_memory_early import LATER_CONTENT_HOOK, _project

    from sitebuild import build, files_under

    early = _project(tmp_path / "early", ODD_OBJECT_HOOK)
    result = build(early, "--strict", check=False)
    assert result.returncode == 0 and "Traceback" not in result.stderr, result.stdout + result.stderr
    later = _project(tmp_path / "later", LATER_CONTENT_HOOK)
    build(later, "--strict")
    assert files_under(early / "site") == files_under(later / "site")


MOVING_HOOK = '''
from mkdocs.plugins import event_priority


@event_priority(-2000)  # after the plugin let the catalog go (-1000): the page was made for its URL then
def on_files(files, config):
    file = files.get_file_from_path("tools/alpha-tool.md")
    file.dest_uri, file.url = "deep/er/alpha/index.html", "deep/er/alpha/"
    return files
'''


def test_a_page_another_plugin_moves_after_it_was_staged_is_named_in_a_warning(tmp_path: Path) -> None:
    from test_memory_early import _project

    from sitebuild import build

    root = _project(tmp_path, MOVING_HOOK)
    result = build(root, "--strict", check=False)
    assert result.returncode == 1, result.stderr
    assert "tools/alpha-tool.md moved from tools/alpha-tool/ to deep/er/alpha/ after the plugin made its page" in result.stderr, result.stderr
    assert "beta-tool.md moved" not in result.stderr and "toolcatalog: toolcatalog:" not in result.stderr


INTERRUPT_HOOK = '''
def on_page_markdown(markdown, page, config, files):
    if page.file.src_uri == "about.md":
        raise KeyboardInterrupt  # Ctrl-C while the pages are read: no on_build_error
    return markdown
'''


def test_a_build_interrupted_after_the_stage_was_made_leaves_no_stage_in_site_dir(tmp_path: Path) -> None:
    import os

    from test_memory_early import _project

    from sitebuild import build

    root = _project(tmp_path, INTERRUPT_HOOK)
    result = build(root, host="mkdocs", check=False)
    assert result.returncode == 1 and "Aborted!" in result.stderr, result.stderr  # click on a KeyboardInterrupt
    assert (root / "site").is_dir()
    assert not [name for name in os.listdir(root / "site") if name.startswith("toolcatalog-stage-")]
