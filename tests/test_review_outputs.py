"""The review of the streamed outputs (`outputs.write_site`, the MkDocs plugin's `on_post_build`):
a link in site_dir is never written through, and a file that cannot be written is a clear
ExportError naming it, not a traceback.

MkDocs' clean (`mkdocs.utils.clean_directory`) leaves a link to a folder in place (it calls
`shutil.rmtree` on it with errors ignored), so a `site/agents -> elsewhere` link a commit planted
survives `mkdocs build`, and each per-tool file went through it, outside the build's outputs."""

from __future__ import annotations

import gc
import hashlib
import json
import tracemalloc
from pathlib import Path

import pytest

from manifests import speccify_text
from sitebuild import build as mkdocs_build
from sitebuild import mkdocs_project, write
import toolcatalog.render as render  # the module (the package also exports a function of that name)
from toolcatalog import pipeline
from toolcatalog.options import Options
from toolcatalog.outputs import ExportError


def _workspace(root: Path, count: int = 2) -> Path:
    for index in range(count):
        write(root / ".agent" / "tools" / f"tool-{index}" / "TOOL.md", speccify_text(f"tool-{index}"))
    return root


@pytest.fixture(scope="module")
def small(tmp_path_factory: pytest.TempPathFactory) -> pipeline.Build:
    return pipeline.prepare(_workspace(tmp_path_factory.mktemp("small")), Options(cache=False, run_examples=False))


def test_a_link_in_the_site_is_not_written_through(small: pipeline.Build, tmp_path: Path) -> None:
    site, elsewhere = tmp_path / "site", tmp_path / "elsewhere"
    site.mkdir()
    elsewhere.mkdir()
    (site / "tools").symlink_to(elsewhere, target_is_directory=True)
    with pytest.raises(ExportError, match=r"tools/.*\.json cannot be written into the site: .*is a link"):
        small.write_outputs(site)
    assert list(elsewhere.iterdir()) == []


def test_a_folder_where_an_output_goes_is_a_clear_error(small: pipeline.Build, tmp_path: Path) -> None:
    site = tmp_path / "site"
    (site / "catalog.json").mkdir(parents=True)  # e.g. docs/catalog.json/index.md, built by MkDocs
    with pytest.raises(ExportError, match=r"^catalog\.json cannot be written into the site"):
        small.write_outputs(site)
    assert (site / "catalog.json").is_dir()
    assert not [p for p in site.rglob(".catalog.json.*")]  # no temporary file left behind


def test_a_planted_site_link_survives_mkdocs_clean_and_is_refused(tmp_path: Path) -> None:
    root, elsewhere = _workspace(tmp_path / "project", 1), tmp_path / "elsewhere"
    elsewhere.mkdir()
    mkdocs_project(root, {"run_examples": False, "cache": False, "tool_json_dir": "agents"})
    (root / "site").mkdir()
    (root / "site" / "agents").symlink_to(elsewhere, target_is_directory=True)  # committed by the repository
    result = mkdocs_build(root, check=False)
    assert (root / "site" / "agents").is_symlink()  # MkDocs' clean left it in place
    assert list(elsewhere.iterdir()) == []  # nothing written outside the build's outputs
    assert result.returncode != 0
    log = result.stdout + result.stderr
    assert "agents/tool-0.json cannot be written into the site" in log
    assert "Traceback" not in log


# -- the short Markdown kept per process ------------------------------------------------------------


def _bomb(seed: int) -> str:
    """A text of 1 KB (kept per process by its length) whose HTML is ten times longer: empty links,
    each given its `href` and `rel`. (A table of many columns whose rows the table fills out is far
    worse: 1 KB of text, 330 KB of HTML.)"""
    return (f"[{seed}](x)" + "[](x)" * 300)[: render.REMEMBERED_CHARS]


def test_a_short_text_that_renders_to_much_html_is_not_kept_for_the_process() -> None:
    render._remembered.cache_clear()
    texts = [_bomb(seed) for seed in range(20)]
    assert all(len(text) <= render.REMEMBERED_CHARS for text in texts)
    gc.collect()
    tracemalloc.start()
    try:
        sizes = [len(render.markdown_html(text)) for text in texts]  # each page lets its HTML go
        gc.collect()
        held, _peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert min(sizes) > 5 * len(texts[0])  # each renders to far more HTML than its text
    assert held < 50_000  # bytes still allocated: none of the 200 KB of HTML is kept by the process
    assert render.markdown_html(texts[0]) == render._rendered(texts[0], 1)
    render.markdown_html("A shared *description*.")
    assert 0 < render._remembered.kept_chars() <= render.REMEMBERED_CHARS + render.REMEMBERED_HTML_CHARS


# -- docs_dir overrides ----------------------------------------------------------------------------


def test_a_docs_file_mkdocs_left_out_does_not_take_an_outputs_place(tmp_path: Path) -> None:
    """`exclude_docs` (or its default `.*` and `/templates/`, or a draft) keeps a docs file out of
    the site: the output is then written, not dropped for a file the site does not have."""
    root = _workspace(tmp_path / "project", 1)
    mkdocs_project(root, {"run_examples": False, "cache": False}, exclude_docs="llms.txt\ntools/tool-0.json\n")
    write(root / "docs" / "llms.txt", "the docs' own, left out of the site\n")
    write(root / "docs" / "tools" / "tool-0.json", "{}\n")
    result = mkdocs_build(root)
    site = root / "site"
    assert "exists in docs_dir" not in result.stdout + result.stderr
    assert (site / "llms.txt").read_text(encoding="utf-8").startswith("# ")  # ours
    assert json.loads((site / "tools" / "tool-0.json").read_text(encoding="utf-8"))["id"] == "tool-0"
    listed = json.loads((site / "catalog.digests.json").read_text(encoding="utf-8"))["files"]
    for rel in ("llms.txt", "tools/tool-0.json"):
        assert listed[rel]["sha256"] == hashlib.sha256((site / rel).read_bytes()).hexdigest()


def test_a_table_that_makes_far_more_cells_than_it_writes_is_shown_as_text() -> None:
    """1 KB of a wide header and one-cell rows: markdown-it fills each row out to every column
    (40,000 cells, 330 KB of HTML, a second of CPU each; a page's budget holds 256 of them)."""
    bomb = ("|" + "a|" * 128 + "\n" + "|" + "-|" * 128 + "\n" + "a\n" * 512)[:1024]
    shown = render._rendered(bomb, 1)
    assert "<table>" not in shown and "far more cells than it writes out" in shown
    assert len(shown) < 3 * len(bomb)
    written = "| a | b |\n|---|:-:|\n" + "| x | y |\n" * 100  # every cell written out
    assert str(render._rendered(written, 1)).count("<td") == 200
    quoted = "> |a|b|c|\n> |-|-|-|\n> |1|2|3|\n"
    assert "<table>" in render._rendered(quoted, 1)
