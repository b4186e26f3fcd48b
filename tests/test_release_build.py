"""The MkDocs plugin lets the catalog go before the other plugins' `on_post_build` (issue #21,
memory): the outputs for agents are written first of every plugin's `on_post_build` and the build
released, so the search plugin's index (the build's peak at 5,000 tools) is made without the
model; the digest manifest is made last, of the site as it then is. Real builds in this process,
with a hook between the two steps that looks at what is still alive (weak references, after a
collection: no timing, no memory figure)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from sitebuild import build, hooked_project

HOOK = '''
import gc, json, weakref
from pathlib import Path
from mkdocs.plugins import event_priority

SEEN = {}


@event_priority(-200)  # after the plugin's on_files: its build and catalog exist
def on_files(files, config):
    plugin = config.plugins["toolcatalog"]
    SEEN["catalog"] = weakref.ref(plugin.build.catalog)
    SEEN["tool"] = weakref.ref(plugin.build.catalog.tools[0])
    SEEN["build"] = weakref.ref(plugin.build)


@event_priority(50)  # between the plugin's two steps, where the search plugin's (0) runs
def on_post_build(config):
    gc.collect()
    site = Path(config.site_dir)
    seen = {name: ref() is not None for name, ref in SEEN.items()}
    seen["outputs"] = sorted(p.relative_to(site).as_posix() for p in site.rglob("*.json") if "tools" in p.parts or p.parent == site)
    Path(config.config_file_path).parent.joinpath("seen.json").write_text(json.dumps(seen))
'''

REWRITE = '''
from pathlib import Path
from mkdocs.plugins import event_priority


@event_priority(-50)  # after the plugin wrote its outputs, before its digest manifest
def on_post_build(config):
    Path(config.site_dir, "llms.txt").write_text("another plugin's llms.txt\\n")
'''


def test_the_catalog_is_let_go_before_other_plugins_post_build(tmp_path: Path) -> None:
    root = hooked_project(tmp_path, HOOK)
    result = build(root)
    seen = json.loads((root / "seen.json").read_text())
    assert seen["build"] is False and seen["catalog"] is False and seen["tool"] is False, seen
    # ... and the outputs are in the site already; the digest manifest comes last
    assert "catalog.json" in seen["outputs"] and "mcp-tools.json" in seen["outputs"]
    assert "tools/alpha-tool.json" in seen["outputs"] and "catalog.digests.json" not in seen["outputs"]
    site = root / "site"
    manifest = json.loads((site / "catalog.digests.json").read_text())["files"]
    # every file of the site is listed, the search index (written after ours) and our outputs included
    on_disk = {p.relative_to(site).as_posix() for p in site.rglob("*") if p.is_file()} - {"catalog.digests.json"}
    assert set(manifest) == on_disk
    assert "search/search_index.json" in manifest
    site_digest = "sha256:" + hashlib.sha256((site / "catalog.digests.json").read_bytes()).hexdigest()
    assert f"site digest {site_digest}" in result.stderr


def test_an_output_another_plugin_rewrites_later_is_listed_as_it_is(tmp_path: Path) -> None:
    root = hooked_project(tmp_path, REWRITE)
    result = build(root)
    site = root / "site"
    assert (site / "llms.txt").read_text() == "another plugin's llms.txt\n"
    listed = json.loads((site / "catalog.digests.json").read_text())["files"]["llms.txt"]
    assert listed["sha256"] == hashlib.sha256((site / "llms.txt").read_bytes()).hexdigest()
    assert "WARNING -  toolcatalog: llms.txt was rewritten after the plugin wrote it" in result.stderr  # the logger's prefix, once
