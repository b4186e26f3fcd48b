"""When the nav lists no tool page and the pages are made as MkDocs builds them, the catalog is let
go after every plugin's `on_files`, before MkDocs makes a `Page`, and what lives on (our `File`s,
the staged pages' record, the outputs' digests) is made again once the catalog's memory is free
(issue #21, memory: a few small objects left among the catalog's kept nearly all of its arenas).
Real builds in this process with hooks that look from outside (weak references); no timing, no
memory figure."""

from __future__ import annotations

import filecmp
import json
import os
from pathlib import Path

import pytest

from manifests import speccify_text
from sitebuild import build, build_on_a_full_disk, mkdocs_project, write

EARLY_HOOK = '''
import gc, json, weakref
from pathlib import Path
from mkdocs.plugins import event_priority

SEEN = {}


@event_priority(-200)  # after the plugin's on_files: its build, catalog and File objects exist
def on_files(files, config):
    plugin = config.plugins["toolcatalog"]
    SEEN["catalog"] = weakref.ref(plugin.build.catalog)
    SEEN["tool"] = weakref.ref(plugin.build.catalog.tools[0])
    SEEN["files"] = [weakref.ref(f) for f in files if f.src_uri in plugin.generated]
    SEEN["order"] = [f.src_uri for f in files]


@event_priority(200)  # before the plugin's on_nav, after MkDocs made the nav (no tool page in it)
def on_nav(nav, config, files):
    gc.collect()
    plugin = config.plugins["toolcatalog"]
    ours = [f for f in files if f.src_uri in plugin.generated]
    Path(config.config_file_path).parent.joinpath("early.json").write_text(json.dumps({
        "catalog": SEEN["catalog"]() is not None, "tool": SEEN["tool"]() is not None,
        "old files alive": sum(r() is not None for r in SEEN["files"]), "ours": len(ours),
        "order": [f.src_uri for f in files] == SEEN["order"],
        "stage": plugin.stage is not None and plugin.stage.folder.is_dir(),
    }))
'''

# An `on_page_content` after the plugin's: the pages are then made from the catalog as MkDocs
# renders them (not deferred), and the catalog lives to on_env: the other way to the same site.
LATER_CONTENT_HOOK = '''
from mkdocs.plugins import event_priority


@event_priority(-200)
def on_page_content(html, page, config, files):
    return None
'''


def _project(root: Path, hook: str, theme: str = "material", **options: object) -> Path:
    for name in ("alpha-tool", "beta-tool", "gamma-tool"):
        write(root / ".agent" / "tools" / name / "TOOL.md", speccify_text(name))
    write(root / "docs" / "about.md", "# About\n\nA page of the site's own.\n")
    write(root / "hook.py", hook)
    plugin = {"run_examples": False, "cache": False, "nav_tools": False, **options}
    return mkdocs_project(root, hooks=["hook.py"], plugins=["search", {"toolcatalog": plugin}], theme=theme)


def test_the_catalog_goes_after_on_files_and_our_files_are_made_again(tmp_path: Path) -> None:
    root = _project(tmp_path, EARLY_HOOK)
    build(root, "--strict")
    seen = json.loads((root / "early.json").read_text())
    assert seen == {"catalog": False, "tool": False, "old files alive": 0, "ours": 4, "order": True, "stage": True}, seen
    site = root / "site"
    assert "alpha-tool" in (site / "tools" / "alpha-tool" / "index.html").read_text()
    assert 'href="gamma-tool/"' in (site / "tools" / "index.html").read_text()
    assert json.loads((site / "tools" / "beta-tool.json").read_text())["id"] == "beta-tool"
    assert not [name for name in os.listdir(site) if name.startswith("toolcatalog-stage-")]


def test_a_nav_that_lists_the_tools_keeps_the_catalog_to_on_env(tmp_path: Path) -> None:
    root = _project(tmp_path, EARLY_HOOK, nav_tools=True)
    build(root, "--strict")
    seen = json.loads((root / "early.json").read_text())
    assert seen["catalog"] and seen["tool"] and seen["old files alive"] == 4 and not seen["stage"], seen


def test_the_site_is_the_same_whichever_way_the_pages_are_made(tmp_path: Path) -> None:
    early = _project(tmp_path / "early", EARLY_HOOK)
    later = _project(tmp_path / "later", LATER_CONTENT_HOOK)
    build(early, "--strict")
    build(later, "--strict")
    assert json.loads((early / "early.json").read_text())["catalog"] is False
    left, right = early / "site", later / "site"
    names = sorted(str(p.relative_to(left)) for p in left.rglob("*") if p.is_file())
    assert names == sorted(str(p.relative_to(right)) for p in right.rglob("*") if p.is_file())
    assert any(name.endswith("search_index.json") for name in names) and "catalog.digests.json" in names
    _match, mismatch, errors = filecmp.cmpfiles(left, right, names, shallow=False)
    assert mismatch == [] and errors == []


def test_a_disk_that_cannot_take_the_stage_after_on_files_is_a_clear_error(tmp_path: Path) -> None:
    root = _project(tmp_path, "")
    done = build_on_a_full_disk(root)
    assert done.returncode == 1, done.stderr
    assert "toolcatalog:" in done.stderr and "cannot be staged" in done.stderr, done.stderr
    assert "Traceback" not in done.stderr, done.stderr
    assert not [name for name in os.listdir(root / "site") if name.startswith("toolcatalog-stage-")]


CACHES_HOOK = '''
import json
from pathlib import Path
from mkdocs.plugins import event_priority
from toolcatalog import jsonschemas, render

SEEN = {}


@event_priority(200)  # the first page built: the catalog is let go (after on_files here, at on_env with the tools in the nav)
def on_page_context(context, page, config, nav):
    if not SEEN:
        SEEN["remembered"] = len(render._remembered._kept)
        SEEN["compiled"] = len(jsonschemas._COMPILED) + jsonschemas.compile_pattern.cache_info().currsize
        Path(config.config_file_path).parent.joinpath("caches.json").write_text(json.dumps(SEEN))
'''


def test_the_caches_keyed_by_the_catalog_are_emptied_when_it_is_let_go(tmp_path: Path) -> None:
    for nav_tools in (False, True):
        root = _project(tmp_path / str(nav_tools), CACHES_HOOK, nav_tools=nav_tools)
        build(root)
        assert json.loads((root / "caches.json").read_text()) == {"remembered": 0, "compiled": 0}, nav_tools


# The moment the catalog is let go after on_files (the plugin's `_let_go`, watched from a hook):
# nothing made before it that lives on may be alive then, or its small objects keep the arenas
# the catalog's objects shared with them (issue #21, mem6: the pages' titles and the stage's
# record of the pages, held by the frame that made them, and the file digests remembered for
# `mkdocs serve` kept ≈ 45 arenas of 1 MB at 5,000 tools). They are copied once it is freed.
MOMENT_HOOK = '''
import gc, json
from pathlib import Path
from mkdocs.plugins import CombinedEvent, event_priority
from toolcatalog import files as files_module

SEEN = {}


@event_priority(300)  # before the plugin's harvest
def _watch(files, config):
    plugin = config.plugins["toolcatalog"]
    let_go = plugin._let_go

    def watched():
        let_go()
        if "Stage" not in SEEN:
            gc.collect()
            alive = [type(o).__name__ for o in gc.get_objects()]
            SEEN.update({name: alive.count(name) for name in ("_Made", "Stage", "Tool", "Catalog")})
            SEEN["remembered"] = len(files_module._DIGESTS)
    plugin._let_go = watched


@event_priority(-500)  # after the plugin's harvest, before it lets the catalog go (-1000)
def _remember(files, config):
    files_module.hash_tree(Path(config.config_file_path).parent / ".agent")
    SEEN["remembered before"] = len(files_module._DIGESTS)


on_files = CombinedEvent(_watch, _remember)


@event_priority(200)
def on_nav(nav, config, files):
    SEEN["remembered after"] = len(files_module._DIGESTS)
    Path(config.config_file_path).parent.joinpath("moment.json").write_text(json.dumps(SEEN))
'''


def test_nothing_that_lives_on_is_alive_while_the_catalog_is_let_go(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from toolcatalog import files as files_module
    monkeypatch.setattr(files_module, "_DIGESTS", {})
    monkeypatch.setattr(files_module, "_SETTLED_NS", -(1 << 62))  # files written just now are remembered too
    root = _project(tmp_path, MOMENT_HOOK)
    build(root, "--strict")
    seen = json.loads((root / "moment.json").read_text())
    assert seen["remembered before"] >= 3, seen  # each tool's TOOL.md
    # While the catalog is let go: no tool, no page's titles and headings, no stage (its record of
    # the pages), no remembered digest; after it, all of them back but the catalog (the site's
    # pages have their titles: checked by the tests above).
    assert seen == {"_Made": 0, "Stage": 0, "Tool": 0, "Catalog": 0, "remembered": 0,
                    "remembered before": seen["remembered before"], "remembered after": seen["remembered before"]}, seen
    assert "alpha-tool" in (root / "site" / "tools" / "alpha-tool" / "index.html").read_text()
