"""A refused bubblewrap is named, with its fix, and `sandbox: bubblewrap` does not settle for less.

On ubuntu-24.04 runners AppArmor refuses bubblewrap its user namespace; the build then falls back to
the weaker Landlock launcher. The refusal is real here: the build runs inside an outer bubblewrap
that may make no user namespace (`--disable-userns`), with the real `bwrap` visible, so the inner
one fails as it would on such a machine. AppArmor's own message is reproduced by a `bwrap` on PATH
that prints what Ubuntu's prints and fails. The log's `example processes:` line (a warning), every
tool's `sandbox.refused` in catalog.json and each tool page name the refusal and its fix; under
`sandbox: bubblewrap` nothing runs without bubblewrap.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from manifests import PLATFORM, speccify_tool
from sitebuild import QUIET_HOSTS, REPO, mkdocs_project, outer_box
from toolcatalog import sandbox
from toolcatalog.sandbox import landlock_launcher

FACTS = sandbox.probe("auto")
ADD = "import json, sys\nd = json.load(sys.stdin)\nprint(json.dumps({'sum': d['a'] + d['b']}))\n"
NO_USERNS = "user namespaces are disabled (user.max_user_namespaces=0)"
NO_USERNS_FIX = "sudo sysctl -w user.max_user_namespaces=15000"
APPARMOR = "AppArmor blocks unprivileged user namespaces (Ubuntu 23.10 and later)"
APPARMOR_FIX = "sudo sysctl -w kernel.apparmor_restrict_unprivileged_userns=0"
SCHEMA = json.loads((REPO / "plugin/toolcatalog/schemas/catalog.schema.json").read_text(encoding="utf-8"))

pytestmark = [
    pytest.mark.skipif(FACTS.mechanism != "bwrap", reason=f"needs a working bubblewrap to refuse one inside it ({FACTS.reason})"),
    pytest.mark.skipif(landlock_launcher.abi_version() < 1, reason="needs Landlock for the fallback"),
]


def workspace(root: Path, level: str = "auto") -> Path:
    speccify_tool(root, "adder", [("adds", {"a": 1, "b": 2}, {"sum": 3})], files={f"{PLATFORM}.py": ADD})
    mkdocs_project(root, {"sandbox": level, "cache": False})
    return root


def refused_inside(tmp_path: Path, command: list[str], cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """`command` inside an outer bubblewrap where no user namespace can be made, `bwrap` left in
    place: the build's own bubblewrap is refused for real."""
    argv = outer_box(tmp_path)
    argv += ["--chdir", str(cwd), "--", *command]
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    full = {**os.environ, **QUIET_HOSTS, "HOME": str(home), "PYTHONPATH": str(REPO / "plugin"),
            "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}", **(env or {})}
    full.pop("XDG_CACHE_HOME", None)
    return subprocess.run(argv, capture_output=True, text=True, timeout=300, env=full)


def tool_entry(site: Path) -> dict[str, Any]:
    document = json.loads((site / "catalog.json").read_text(encoding="utf-8"))
    jsonschema.validate(document, SCHEMA)
    (tool,) = document["tools"]
    return tool


def test_a_refused_bubblewrap_is_named_with_its_fix_in_log_catalog_and_page(tmp_path: Path) -> None:
    ws = workspace(tmp_path / "ws")
    done = refused_inside(tmp_path, [sys.executable, "-m", "mkdocs", "build"], ws)
    assert done.returncode == 0, done.stderr
    (line,) = [line for line in done.stderr.splitlines() if "example processes:" in line]
    assert line.startswith("WARNING"), line  # a weaker sandbox is not mere information
    assert "sandboxed with Landlock (ABI " in line and f"bubblewrap refused: {NO_USERNS} (fix: {NO_USERNS_FIX})" in line, line

    tool = tool_entry(ws / "site")
    assert tool["status"] == "passed" and tool["sandbox"]["mechanism"] == "landlock"
    assert tool["sandbox"]["refused"] == {"mechanism": "bwrap", "reason": NO_USERNS, "fix": NO_USERNS_FIX}

    page = next((ws / "site").rglob("adder/index.html")).read_text(encoding="utf-8")
    assert 'class="tc-callout tc-callout-warning tc-refused"' in page
    assert "bubblewrap was refused on this machine" in page and NO_USERNS in page and f"<code>{NO_USERNS_FIX}</code>" in page


def test_sandbox_bubblewrap_runs_nothing_under_landlock(tmp_path: Path) -> None:
    ws = workspace(tmp_path / "ws", level="bubblewrap")
    check = [sys.executable, "-m", "toolcatalog.cli", "check"]
    done = refused_inside(tmp_path, [*check, str(ws)], ws)
    assert done.returncode == 1, done.stderr  # nothing ran: in CI that is no pass
    assert ": 0 processes started" in done.stderr, done.stderr
    assert ("toolcatalog: warning: example processes: bubblewrap required but unavailable, nothing runs: "
            f"`sandbox: bubblewrap`, and bwrap (userns): {NO_USERNS}") in done.stderr, done.stderr
    listed = refused_inside(tmp_path, [*check, "--json", str(ws)], ws)
    (tool,) = json.loads(listed.stdout)["tools"]
    assert tool["status"] == "not-run" and tool["sandbox"] is None
    assert tool["status_detail"].startswith("not run: `sandbox: bubblewrap`, and bwrap (userns): " + NO_USERNS), tool["status_detail"]

    # The mkdocs build fails under --strict: the warning is what CI sees.
    built = refused_inside(tmp_path, [sys.executable, "-m", "mkdocs", "build", "--strict"], ws)
    assert built.returncode != 0 and "WARNING -  toolcatalog: example processes: bubblewrap required but unavailable" in built.stderr, built.stderr

    # The same build under `--sandbox auto` runs it, under Landlock: the level is what refused.
    auto = refused_inside(tmp_path, [*check, "--sandbox", "auto", str(ws)], ws)
    assert auto.returncode == 0, auto.stderr
    assert "toolcatalog: warning: example processes: sandboxed with Landlock" in auto.stderr, auto.stderr


def fake_apparmor_bwrap(folder: Path) -> Path:
    """A `bwrap` that fails as Ubuntu 24.04's does under `kernel.apparmor_restrict_unprivileged_userns=1`."""
    folder.mkdir()
    program = folder / "bwrap"
    program.write_text("#!/bin/sh\necho 'bwrap: setting up uid map: Permission denied' >&2\nexit 1\n")
    program.chmod(0o755)
    return folder


def test_apparmor_refusal_names_the_sysctl_and_bubblewrap_level_refuses(tmp_path: Path) -> None:
    ws = workspace(tmp_path / "ws")
    path = f"{fake_apparmor_bwrap(tmp_path / 'apparmor')}{os.pathsep}{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"
    env = {**os.environ, **QUIET_HOSTS, "PATH": path, "PYTHONPATH": str(REPO / "plugin"), "HOME": str(tmp_path / "home")}
    env.pop("XDG_CACHE_HOME", None)
    done = subprocess.run([sys.executable, "-m", "toolcatalog.cli", "check", str(ws)], capture_output=True, text=True,
                          timeout=300, env=env)
    assert done.returncode == 0, done.stderr
    assert f"bubblewrap refused: {APPARMOR} (fix: {APPARMOR_FIX})" in done.stderr, done.stderr
    listed = subprocess.run([sys.executable, "-m", "toolcatalog.cli", "check", "--json", str(ws)], capture_output=True, text=True,
                            timeout=300, env=env)
    (tool,) = json.loads(listed.stdout)["tools"]
    assert tool["sandbox"]["refused"] == {"mechanism": "bwrap", "reason": APPARMOR, "fix": APPARMOR_FIX}

    strict = subprocess.run([sys.executable, "-m", "toolcatalog.cli", "check", "--sandbox", "bubblewrap", str(ws)],
                            capture_output=True, text=True, timeout=300, env=env)
    assert strict.returncode == 1 and ": 0 processes started" in strict.stderr, strict.stderr
    assert f"nothing runs: `sandbox: bubblewrap`, and bwrap (userns): {APPARMOR} (fix: `{APPARMOR_FIX}`)" in strict.stderr, strict.stderr


def test_where_bubblewrap_works_the_level_runs_it_and_nothing_is_refused(tmp_path: Path) -> None:
    ws = workspace(tmp_path / "ws", level="bubblewrap")
    env = {**os.environ, **QUIET_HOSTS, "PYTHONPATH": str(REPO / "plugin"), "HOME": str(tmp_path / "home"),
           "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    done = subprocess.run([sys.executable, "-m", "toolcatalog.cli", "check", str(ws)], capture_output=True, text=True,
                          timeout=300, env=env)
    assert done.returncode == 0, done.stderr
    assert "example processes: sandboxed with bubblewrap" in done.stderr and "refused" not in done.stderr, done.stderr
    listed = subprocess.run([sys.executable, "-m", "toolcatalog.cli", "check", "--json", str(ws)], capture_output=True, text=True,
                            timeout=300, env=env)
    (tool,) = json.loads(listed.stdout)["tools"]
    assert tool["sandbox"]["mechanism"] == "bwrap" and tool["sandbox"]["refused"] is None


def test_a_missing_bubblewrap_is_not_called_refused_but_the_level_still_refuses(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    empty = tmp_path / "bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    assert shutil.which("bwrap") is None
    facts = sandbox.probe("auto")
    assert facts.mechanism == "landlock" and facts.refused is None
    strict = sandbox.probe("bubblewrap")
    assert strict.mechanism is None and strict.withheld and "bubblewrap (`bwrap`) is not installed" in strict.reason
