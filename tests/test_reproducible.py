"""Two builds of the same sources give the same bytes: every file of the site, not only the JSON.

A cold build (results computed) and the warm build after it (results from the cache) must agree on
pages, the search index, the sitemap and every output for agents. `SOURCE_DATE_EPOCH` pins the
build date MkDocs writes into the sitemap (and its gzip header), as reproducible builds do.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from sitebuild import mkdocs_project, workspace_all_formats, write
from toolcatalog import sealing

# A tool whose output keys are deliberately not in sorted order, nested too: a page shows the output
# as the tool printed it, whether the result is fresh or from the cache.
UNSORTED_TOOL = """
---
name: unsorted-keys
description: Prints an object whose keys are not in alphabetical order.
inputs:
  type: object
  properties:
    n: {type: integer}
outputs:
  type: object
effects: none
---

## Examples

### keys in the tool's order
input: {"n": 1}
output: {"zebra": 1}
"""

UNSORTED_PY = """
import json, sys
json.load(sys.stdin)
print(json.dumps({"zebra": 1, "apple": {"yak": True, "ant": [3, 2, 1]}, "mango": None}))
"""


def files_under(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def build(root: Path) -> dict[str, bytes]:
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1", "SOURCE_DATE_EPOCH": "1700000000"}
    result = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--clean"], cwd=root, capture_output=True, text=True, env=env, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    return files_under(root / "site")


def test_cold_then_warm_build_gives_the_same_bytes_in_every_file(tmp_path: Path) -> None:
    workspace_all_formats(tmp_path)
    write(tmp_path / ".agent/tools/unsorted-keys/TOOL.md", UNSORTED_TOOL)
    write(tmp_path / ".agent/tools/unsorted-keys/linux.py", UNSORTED_PY)
    mkdocs_project(tmp_path, plugins=["search", {"toolcatalog": {}}], repo_url="https://example.org/team/tools")
    commit = _commit_all(tmp_path)  # provenance names the commit, when git is there to make one
    cold = build(tmp_path)
    assert any(sealing.default_cache_dir(tmp_path).rglob("*.json")), "the cold build cached its results"
    warm = build(tmp_path)

    assert sorted(warm) == sorted(cold)
    differing = [path for path in cold if cold[path] != warm[path]]
    assert not differing, f"cold and warm builds differ in {differing}"

    # The page shows the tool's own key order (the fresh order), so the test above compared it.
    page = cold["tools/unsorted-keys/index.html"].decode("utf-8")
    assert page.index("zebra") < page.index("apple") < page.index("mango"), "actual output keeps the tool's key order"
    assert page.index("yak") < page.index("ant")
    for name in ("search/search_index.json", "catalog.json", "mcp-tools.json", "llms.txt", "tools/unsorted-keys.json", "sitemap.xml.gz"):
        assert name in cold, name
    # Provenance and the runner's identity are in the bytes compared above.
    catalog = json.loads(cold["catalog.json"])
    assert catalog["runner"]["python"] and catalog["catalog_digest"].startswith("sha256:")
    for tool in catalog["tools"]:
        assert tool["provenance"] == {"repository": "https://example.org/team/tools", "commit": commit, "path": tool["source"]}

    # And a second cold build (cache removed, every tool run again) gives the same bytes again:
    # pages show nothing that varies from run to run (no run times).
    shutil.rmtree(sealing.default_cache_dir(tmp_path))
    again = build(tmp_path)
    assert sorted(again) == sorted(cold)
    assert [path for path in cold if again[path] != cold[path]] == []


def _commit_all(root: Path) -> str | None:
    git = shutil.which("git")
    if git is None:
        return None
    env = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_SYSTEM": os.devnull, "GIT_AUTHOR_NAME": "t",
           "GIT_AUTHOR_EMAIL": "t@example.org", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.org"}
    write(root / ".gitignore", "site/\n.cache/\n")
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "tools"]):
        subprocess.run([git, *args], cwd=root, env=env, check=True, capture_output=True, timeout=60)
    return subprocess.run([git, "rev-parse", "HEAD"], cwd=root, env=env, check=True, capture_output=True, text=True, timeout=60).stdout.strip()
