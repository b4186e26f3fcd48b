"""What a MkDocs build with the plugin keeps alive, and how its large blocks go back to the system
(issue #21, memory: 5,000 tools in 250 MB). Real builds in this process, with a hook that looks at
the build from outside (the pages MkDocs holds, weak references, glibc's own counters): no timing
and no memory figure is asserted."""

from __future__ import annotations

import ctypes
import ctypes.util
import gc
import json
from pathlib import Path

import pytest

from sitebuild import build, hooked_project

PAGES_HOOK = '''
import json
from pathlib import Path
from mkdocs.plugins import event_priority

FILES, OURS = [], set()


@event_priority(-200)  # after the plugin added its pages
def on_files(files, config):
    FILES[:] = [files]
    OURS.update(config.plugins["toolcatalog"].pages)


@event_priority(150)  # every page written, before any plugin's on_post_build
def on_post_build(config):
    held = {}
    for file in FILES[0]:
        if file.src_uri in OURS:
            page = file.page
            held[file.src_uri] = {"content": len(page.content or ""), "markdown": len(page.markdown or ""),
                                  "source": len(file.content_string), "toc": len(list(page.toc))}
    Path(config.config_file_path).parent.joinpath("held.json").write_text(json.dumps(held))
'''

# glibc raises its mmap threshold to the size of each mapped block freed (up to 32 MB): a hook
# frees a 16 MB block before the plugin's on_post_build, and after it (where the search plugin
# joins its index) looks whether a 4 MB block is mapped on its own (given back when freed) or
# taken from the heap (kept by the process once freed).
MALLOC_HOOK = '''
import ctypes, json
from pathlib import Path
from mkdocs.plugins import CombinedEvent, event_priority


class _Info(ctypes.Structure):
    _fields_ = [(n, ctypes.c_size_t) for n in
                ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks", "fordblks", "keepcost")]


_mallinfo2 = ctypes.CDLL(None).mallinfo2
_mallinfo2.restype = _Info


@event_priority(150)
def _before(config):
    block = bytes(16 << 20)
    del block


@event_priority(50)
def _after(config):
    mapped = _mallinfo2().hblkhd
    block = bytes(4 << 20)
    grew = _mallinfo2().hblkhd - mapped
    del block
    Path(config.config_file_path).parent.joinpath("mapped.json").write_text(json.dumps({"grew": grew}))


on_post_build = CombinedEvent(_before, _after)
'''


# The catalog is let go once every page's Markdown is rendered, before MkDocs builds the first page
# (where the search plugin starts keeping every page's text): a hook that runs before the plugin
# in each page's on_page_context looks whether the catalog is still alive, and where the plugin
# keeps the pages' HTML meanwhile.
LET_GO_HOOK = '''
import gc, json, weakref
from pathlib import Path
from mkdocs.plugins import event_priority

SEEN = {}


@event_priority(-200)  # after the plugin's on_files: its build and catalog exist
def on_files(files, config):
    plugin = config.plugins["toolcatalog"]
    SEEN["catalog"] = weakref.ref(plugin.build.catalog)
    SEEN["tool"] = weakref.ref(plugin.build.catalog.tools[0])


@event_priority(200)  # before the plugin's (100), which reads the page's HTML back
def on_page_context(context, page, config, nav):
    if "alive" not in SEEN:
        gc.collect()
        plugin = config.plugins["toolcatalog"]
        SEEN["alive"] = {name: SEEN[name]() is not None for name in ("catalog", "tool")}
        SEEN["stage"] = str(plugin.stage.folder) if plugin.stage is not None else None
        Path(config.config_file_path).parent.joinpath("let-go.json").write_text(json.dumps(
            {"alive": SEEN["alive"], "stage": SEEN["stage"]}))
'''


# The same look, with the collector off for the whole build and no collection of the hook's own:
# only the plugin's `gc.collect()` in its let-go frees the model's cycles before the pages.
UNCOLLECTED_HOOK = LET_GO_HOOK.replace("        gc.collect()\n", "").replace(
    "SEEN = {}\n", "SEEN = {}\ngc.disable()  # the test turns it on again\n")


FAILING_HOOK = '''
from pathlib import Path
from mkdocs.plugins import event_priority


@event_priority(200)
def on_page_context(context, page, config, nav):
    stage = config.plugins["toolcatalog"].stage
    Path(config.config_file_path).parent.joinpath("stage.txt").write_text(str(stage.folder) if stage else "")
    raise RuntimeError("a page cannot be built")
'''


def test_no_generated_page_keeps_its_html_once_written(tmp_path: Path) -> None:
    """Every generated page, the index (a row per tool) included, lets its HTML and headings go
    once written, and none has Markdown source to keep."""
    root = hooked_project(tmp_path, PAGES_HOOK)
    build(root)
    held = json.loads((root / "held.json").read_text())
    assert "tools/index.md" in held and "tools/alpha-tool.md" in held, held
    for page, kept in held.items():
        assert kept == {"content": 0, "markdown": 0, "source": 0, "toc": 0}, (page, kept)
    # ... and the pages were written in full
    index = (root / "site" / "tools" / "index.html").read_text()
    assert "alpha-tool" in index and "beta-tool" in index


def test_the_catalog_is_let_go_before_the_first_page_is_built(tmp_path: Path) -> None:
    """Every generated page's HTML and the outputs are made once the pages' Markdown is rendered
    (on_env) and kept in a private folder, and the catalog let go, before MkDocs builds a page;
    the folder is gone after the build, and the site has every page and output."""
    root = hooked_project(tmp_path, LET_GO_HOOK)
    build(root)
    seen = json.loads((root / "let-go.json").read_text())
    assert seen["alive"] == {"catalog": False, "tool": False}, seen
    assert seen["stage"] is not None and not Path(seen["stage"]).exists(), seen
    assert Path(seen["stage"]).parent == root / "site"  # on the site's disk, not in a RAM-backed /tmp
    site = root / "site"
    assert "alpha-tool" in (site / "tools" / "alpha-tool" / "index.html").read_text()
    assert json.loads((site / "tools" / "beta-tool.json").read_text())["id"] == "beta-tool"
    listed = json.loads((site / "catalog.digests.json").read_text())["files"]
    assert "catalog.json" in listed and "tools/index.html" in listed


def test_the_let_go_frees_the_models_cycles_itself(tmp_path: Path) -> None:
    """The model's objects hold reference cycles, which only a collection frees: the plugin runs
    one as it lets the catalog go, so the memory is free before MkDocs builds the pages and the
    search plugin joins its index, whenever the collector would next have run on its own."""
    root = hooked_project(tmp_path, UNCOLLECTED_HOOK)
    assert gc.isenabled()
    try:
        build(root)
    finally:
        gc.enable()
    seen = json.loads((root / "let-go.json").read_text())
    assert seen["alive"] == {"catalog": False, "tool": False}, seen


def test_a_failed_build_leaves_no_stage_behind(tmp_path: Path) -> None:
    root = hooked_project(tmp_path, FAILING_HOOK)
    with pytest.raises(RuntimeError, match="a page cannot be built"):
        build(root, check=False)
    stage = (root / "stage.txt").read_text()
    assert stage and not Path(stage).exists(), stage


def _glibc_mallinfo2() -> bool:
    try:
        return hasattr(ctypes.CDLL(None), "mallinfo2") and ctypes.util.find_library("c") is not None
    except OSError:
        return False


@pytest.mark.skipif(not _glibc_mallinfo2(), reason="glibc's mallinfo2 is needed to see where a block comes from")
def test_large_blocks_are_mapped_on_their_own_after_the_build_is_let_go(tmp_path: Path) -> None:
    """Where the search plugin builds its index, a large block is mapped on its own and so given
    back when freed, however large a block freed before was (glibc's dynamic threshold is off)."""
    root = hooked_project(tmp_path, MALLOC_HOOK)
    # In a process of its own: glibc serves a request from a free heap block large enough before it
    # looks at the threshold, and a test worker that ran hundreds of builds has such blocks.
    build(root, host="mkdocs")
    grew = json.loads((root / "mapped.json").read_text())["grew"]
    assert grew >= 4 << 20, grew
