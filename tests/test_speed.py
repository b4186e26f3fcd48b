"""Speed and memory work (issue 21) that must not change what is built or what a run may do.

- Tool pages' HTML is made when MkDocs builds each page and let go once it is written
  (plugin.py), unless another plugin's `on_page_content` comes after ours: the pages and the
  search index hold the same content either way.
- Example processes start without a `preexec_fn` (process.py: setpriv sets the parent-death
  signal), so `subprocess` can vfork; the command still gets exactly its environment, the
  parent-death signal and its own session.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
import yaml

from manifests import speccify_tool, write
from sitebuild import build
from toolcatalog import process

HOOK_RELEASED = """
import json
from pathlib import Path
from mkdocs.plugins import event_priority

seen = {}


def on_files(files, config):
    seen["files"] = files
    return files


@event_priority(150)  # before the plugin's own on_post_build (100), which lets its pages go
def on_post_build(config):
    plugin = config.plugins["toolcatalog"]
    held = {f.src_uri: len(f.page.content or "") for f in seen["files"].documentation_pages()
            if f.src_uri in plugin.generated}  # the tool pages and the index (`plugin.pages` went with the catalog)
    Path(config.config_file_path).with_name("held.json").write_text(json.dumps(held))
"""

HOOK_LATER_CONTENT = """
from pathlib import Path
from mkdocs.plugins import event_priority


@event_priority(-100)
def on_page_content(html, page, config, files):
    if "data-tool-id" in html:
        with Path(config.config_file_path).with_name("later.txt").open("a") as out:
            out.write(page.file.src_uri + "\\n")
    return html
"""


def _site(root: Path, hook: str, tools: int = 3) -> Path:
    for i in range(tools):
        speccify_tool(root, f"tool-{i}", [("adds", {"a": i}, {"a": i})])
    write(root / "hook.py", hook)
    config = {
        "site_name": "Speed", "theme": {"name": "mkdocs"}, "hooks": ["hook.py"],
        "plugins": ["search", {"toolcatalog": {"run_examples": False, "nav_tools": True}}],
    }
    write(root / "mkdocs.yml", yaml.safe_dump(config, sort_keys=False))
    write(root / "docs" / "index.md", "# Home\n")
    return root


def _search_text(root: Path) -> str:
    return (root / "site" / "search" / "search_index.json").read_text(encoding="utf-8")


def test_tool_pages_are_let_go_once_written_and_keep_their_content(tmp_path: Path) -> None:
    root = _site(tmp_path, HOOK_RELEASED)
    build(root, "-q")
    held = json.loads((root / "held.json").read_text())
    assert len(held) == 4  # three tool pages and the catalog index
    assert set(held.values()) == {0}, f"tool pages still held after the build: {held}"  # old code: every page held
    for i in range(3):
        pages = list((root / "site").rglob(f"tool-{i}/index.html"))
        assert pages and f'data-tool-id="tool-{i}"' in pages[0].read_text(encoding="utf-8")
        assert f"Test tool tool-{i}." in _search_text(root)  # the search plugin saw the page's HTML


def test_a_later_page_content_hook_still_gets_each_tool_page(tmp_path: Path) -> None:
    root = _site(tmp_path, HOOK_LATER_CONTENT)
    build(root, "-q")
    later = (root / "later.txt").read_text().split()
    assert len(later) == len(set(later)) == 3  # each tool page once, with its HTML
    assert "Test tool tool-0." in _search_text(root)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the parent-death signal is Linux's")
def test_a_command_started_for_vfork_has_its_environment_signal_and_session(tmp_path: Path) -> None:
    probe = tmp_path / "probe.py"
    probe.write_text(
        "import ctypes, json, os, signal, sys\n"
        "sig = ctypes.c_int(0)\n"
        "ctypes.CDLL(None).prctl(2, ctypes.byref(sig), 0, 0, 0)\n"  # PR_GET_PDEATHSIG
        "json.dump({'env': dict(os.environ), 'pdeathsig': sig.value, 'session': os.getsid(0) == os.getpid()}, sys.stdout)\n"
    )
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "ONLY_THIS": "1"}
    result = process.run_process([os.path.realpath(sys.executable), "-I", "-S", str(probe)], cwd=tmp_path, stdin=None,
                                 timeout_s=30, env=env)
    assert result.ok, result
    seen = json.loads(result.stdout)
    assert seen["pdeathsig"] == 9
    assert seen["session"] is True
    assert {k: v for k, v in seen["env"].items() if k != "LC_CTYPE"} == env  # nothing added, PWD included


def test_a_file_without_an_interpreter_line_is_still_refused(tmp_path: Path) -> None:
    script = tmp_path / "no-shebang"
    script.write_text("echo this would run as a shell script\n")
    script.chmod(0o755)
    result = process.run_process([str(script)], cwd=tmp_path, stdin=None, timeout_s=30, env={"PATH": "/usr/bin:/bin"})
    assert result.error is not None and "not an executable format" in result.error
    assert b"would run" not in result.stdout
