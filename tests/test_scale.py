"""Big catalogs: what `mkdocs serve` watches, and a warm build that starts no process at all.

Times are measured by bench/, never here: these tests check the structural facts the speed rests
on. The dev server polls each watched folder with a thread of its own, so the plugin watches a few
folders that do not overlap (one edit, one change event, one rebuild), never the docs, the site or
the cache. A warm build starts no process, not even the `uname -p` that `platform.platform()`
starts: an audit hook sees every process Python starts.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from manifests import aip_driver, aip_tool, cli_entry, smart_tool, speccify_tool, write
from sitebuild import QUIET_HOSTS, _cwd, _mkdocs_log, build, mkdocs_project

EXAMPLE = [("one", {"a": 1, "b": 2}, {"sum": 3})]
ADD = "import json, sys\nd = json.load(sys.stdin)\nprint(json.dumps({'sum': d['a'] + d['b']}))\n"


def many_tools(root: Path, speccify: int = 30, smart: int = 12) -> Path:
    from manifests import PLATFORM

    for n in range(speccify):
        speccify_tool(root, f"add-{n:02d}", EXAMPLE, files={f"{PLATFORM}.py": ADD})
    for n in range(smart):
        smart_tool(root, f"smart-{n:02d}")
    aip_tool(root, "demo.echo", examples=[{"name": "echo", "input": {"t": "hi"}, "output": {"t": "hi"}}])
    aip_driver(root, "echo-cli", "demo.echo", bin="python3", bin_args=["e.py"], output={"default_format": "json"},
               entry=cli_entry("${input.t}"), files={"e.py": "import json, sys\nprint(json.dumps({'t': sys.argv[1]}))\n"})
    return root


def _serve_watches(root: Path) -> tuple[dict[str, bool], Any]:
    """Build `root` in this process as `mkdocs serve` does, then hand the plugin a real (never
    started) dev server: {watched folder: recursive?} and the config."""
    from mkdocs.commands.build import build as mkdocs_build
    from mkdocs.config import load_config
    from mkdocs.livereload import LiveReloadServer

    with _mkdocs_log(__import__("io").StringIO(), 30), _cwd(root):
        config = load_config(config_file="mkdocs.yml")
        config.plugins.on_startup(command="serve", dirty=False)
        try:
            mkdocs_build(config, dirty=False)
            server = LiveReloadServer(builder=lambda: None, host="127.0.0.1", port=0, root=str(root / "site"))
            config.plugins.on_serve(server, config=config, builder=lambda: None)
        finally:
            config.plugins.on_shutdown()
    return {path: server._watch_refs[path].is_recursive for path in server._watched_paths}, config


def test_serve_watches_a_few_folders_that_do_not_overlap(tmp_path: Path) -> None:
    root = many_tools(tmp_path / "ws")
    mkdocs_project(root, {"run_examples": False})  # what is watched does not depend on running examples
    watched, config = _serve_watches(root)
    real = Path(os.path.realpath(root))
    assert sorted(watched) == sorted(str(real / p) for p in (".agent/tools", ".drivers", ".tools", "dists"))
    assert all(watched.values())
    folders = [Path(p) for p in watched]
    for folder in folders:  # one edit is seen by one watcher only
        assert not any(other != folder and other in folder.parents for other in folders)
    for avoided in (config.docs_dir, config.site_dir, root / ".cache/plugin/toolcatalog"):
        avoided = Path(os.path.realpath(avoided))
        assert not any(avoided == f or f in avoided.parents for f in folders)
    tools = list((root / ".agent/tools").iterdir()) + list((root / "dists").iterdir())
    for tool in tools:
        assert sum(f in Path(os.path.realpath(tool)).parents for f in folders) == 1


def test_serve_splits_a_watch_around_the_cache_and_the_site(tmp_path: Path) -> None:
    root = many_tools(tmp_path / "ws", speccify=3, smart=0)
    # The results cache and the site inside the tools' folder: never watched, the rest is.
    mkdocs_project(root, {"cache_dir": ".agent/tools/.cache", "run_examples": False}, site_dir=".agent/tools/public")
    watched, _ = _serve_watches(root)
    real = Path(os.path.realpath(root))
    assert watched[str(real / ".agent/tools")] is False
    for n in range(3):
        assert watched[str(real / f".agent/tools/add-{n:02d}")] is True
    assert not any("/.cache" in p or "/public" in p for p in watched)


# `mkdocs build` in a fresh interpreter that reports every process Python starts (an audit hook
# sees subprocess, os.posix_spawn, fork and exec), so nothing a module caches hides one.
BUILD_REPORTING_PROCESSES = """
import atexit, json, sys
events = []
def hook(event, args):
    if event in ("subprocess.Popen", "os.posix_spawn", "os.exec", "os.fork", "os.system", "os.spawn"):
        events.append([event, repr(args)[:200]])
sys.addaudithook(hook)
atexit.register(lambda: sys.stderr.write("PROCESSES " + json.dumps(events) + "\\n"))
from mkdocs.__main__ import cli
cli(["build"])
"""


@pytest.mark.parametrize("sandbox", ["off", "auto"])
def test_a_warm_build_starts_no_process(tmp_path: Path, sandbox: str) -> None:
    root = many_tools(tmp_path / "ws", speccify=3, smart=2)
    mkdocs_project(root, {"sandbox": sandbox})
    build(root)  # cold: every example runs
    done = subprocess.run([sys.executable, "-c", BUILD_REPORTING_PROCESSES], cwd=root, capture_output=True, text=True,
                          env={**os.environ, **QUIET_HOSTS}, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "0 processes started" in done.stderr
    (line,) = [line for line in done.stderr.splitlines() if line.startswith("PROCESSES ")]
    started = json.loads(line[len("PROCESSES "):])
    if sandbox == "auto":
        # Which sandbox works is asked by starting it (sandbox/probe.py): those are the only ones,
        # with the spawner, which starts and traces the probe of our own tracer.
        spawner_start = "import ctypes, json, os, select, signal, socket, subprocess, sys, threading"
        started = [e for e in started if not any(probe in e[1] for probe in ("bwrap", "strace", "landlock_launcher", spawner_start))]
    assert started == []
    catalog = json.loads((root / "site" / "catalog.json").read_text(encoding="utf-8"))
    assert catalog["counts"]["by_status"]["passed"] == 6


@pytest.mark.parametrize("outside", [False, True])
def test_paths_option_watches_what_it_lists(tmp_path: Path, outside: bool) -> None:
    root = tmp_path / "ws"
    tools = tmp_path / "elsewhere" if outside else root / "catalog"
    speccify_tool(tools, "add-00", EXAMPLE, files={"linux.py": ADD})
    write(root / "docs/index.md", "# Home\n")
    mkdocs_project(root, {"paths": [str(tools) if outside else "catalog"]})
    watched, _ = _serve_watches(root)
    assert str(Path(os.path.realpath(tools))) in watched
