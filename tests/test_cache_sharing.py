"""One cache folder shared by builds running at once, and restored into a fresh CI checkout.

Real processes share one workspace and one cache at the same time; leftovers of a killed writer
(a temporary file, a half-written entry) are never read as results; and the cache restored on a
new machine into a new clone at the same path, as the CI recipe in docs/ci.md does, lets the build
start no process when the jobs share the results key (the CI secret), and runs everything again,
saying why, when they do not.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from manifests import PLATFORM, speccify_tool, workspace_all_formats
from sitebuild import QUIET_HOSTS, build, mkdocs_project
from toolcatalog import sealing

ADD = "import json, sys\nd = json.load(sys.stdin)\nprint(json.dumps({'sum': d['a'] + d['b']}))\n"

pytestmark = pytest.mark.skipif(os.name != "posix", reason="POSIX processes")


def workspace(root: Path) -> Path:
    workspace_all_formats(root)
    for n in range(4):
        speccify_tool(root, f"add-{n}", [(f"c{i}", {"a": n, "b": i}, {"sum": n + i}) for i in range(2)], files={f"{PLATFORM}.py": ADD})
    mkdocs_project(root)
    return root


def check(root: Path) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "toolcatalog.cli", "check"], cwd=root, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env={**os.environ, **QUIET_HOSTS})


def finish(process: subprocess.Popen) -> tuple[str, str]:
    """The report (one row per tool: status and detail) and the summary lines."""
    out, err = process.communicate(timeout=600)
    assert process.returncode == 0, err
    return out, err


def entries(root: Path) -> list[Path]:
    return sorted(p for p in sealing.default_cache_dir(root).rglob("*") if p.is_file())


def test_builds_running_at_once_share_one_cache(tmp_path: Path) -> None:
    root = workspace(tmp_path / "ws")
    runs = [finish(p) for p in [check(root) for _ in range(3)]]
    reports = [report for report, _ in runs]
    assert reports[0] == reports[1] == reports[2] and "passed" in reports[0]
    files = entries(root)
    assert files and not [p for p in files if p.name.startswith(".")], "no temporary file is left behind"
    for path in files:  # every entry is whole, sealed, and names its own key
        seal, _, entry = path.read_text(encoding="utf-8").partition("\n")
        assert seal.startswith("toolcatalog-sealed-v2 ") and json.loads(entry)["key"] == path.stem
    report, err = finish(check(root))
    assert "0 processes started" in err
    assert report == reports[0]


def test_a_killed_writers_leftovers_are_never_read(tmp_path: Path) -> None:
    root = workspace(tmp_path / "ws")
    reference, _ = finish(check(root))
    results = [p for p in entries(root) if "parse" not in p.relative_to(sealing.default_cache_dir(root)).parts]
    # A writer killed mid-write leaves its temporary file (never a half entry under the real name,
    # since entries are renamed into place); plant both anyway, and a truncated entry.
    for path in results:
        (path.parent / f".{path.name}.x1y2z3").write_text(path.read_text()[:10], encoding="utf-8")
    victim = results[0]
    victim.write_text(victim.read_text()[: len(victim.read_text()) // 2], encoding="utf-8")
    report, err = finish(check(root))
    assert "0 processes started" not in err  # the truncated one ran again
    assert report == reference
    _, err = finish(check(root))
    assert "0 processes started" in err  # and was stored whole


@pytest.mark.parametrize("secret", [True, False])
def test_a_cache_restored_into_a_fresh_clone_on_a_new_machine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, secret: bool) -> None:
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    origin = workspace(tmp_path / "origin")
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid", "-c", "init.defaultBranch=main"]
    subprocess.run([*git, "init", "-q"], cwd=origin, check=True)
    (origin / ".gitignore").write_text("site/\n")
    subprocess.run([*git, "add", "-A"], cwd=origin, check=True)
    subprocess.run([*git, "commit", "-qm", "tools"], cwd=origin, check=True)
    if secret:  # docs/ci.md: the key given to every job as a secret
        monkeypatch.setenv(sealing.ENV_KEY, "k" * 40)

    def machine(name: str) -> Path:
        """A runner: its own user cache folder (and so its own key file)."""
        monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / name))
        return tmp_path / name / sealing.APP_FOLDER / sealing.CACHE_FOLDER

    checkout = tmp_path / "runner" / "repo"  # CI checks out at the same path every run
    cached = machine("machine-one")
    subprocess.run(["git", "clone", "-q", str(origin), str(checkout)], check=True)
    first = build(checkout)
    assert "0 processes started" not in first.stderr
    saved = tmp_path / "saved-cache"
    shutil.copytree(cached, saved)  # actions/cache/save of ~/.cache/mkdocs-toolcatalog/cache (not the key file)
    catalog = (checkout / "site/catalog.json").read_bytes()

    shutil.rmtree(checkout)  # the next run: a new machine, a fresh clone
    subprocess.run(["git", "clone", "-q", str(origin), str(checkout)], check=True)
    cached = machine("machine-two")
    shutil.copytree(saved, cached)  # actions/cache/restore
    stamps = {p: p.stat().st_mtime_ns for p in entries(checkout)}
    second = build(checkout, "--strict")  # a cache made with another key is information, not a warning
    if secret:
        assert "0 processes started" in second.stderr
        assert {p: p.stat().st_mtime_ns for p in entries(checkout)} == stamps, "nothing parsed or run again"
    else:  # the new machine made its own key: nothing verifies, everything is checked again, and the log says why
        assert "0 processes started" not in second.stderr
        assert re.search(r"INFO .*toolcatalog: \d+ cached results were sealed with another key; not used", second.stderr), second.stderr
        assert re.search(r"INFO .*toolcatalog: \d+ parsed manifests in the cache were sealed with another key", second.stderr), second.stderr
    assert (checkout / "site/catalog.json").read_bytes() == catalog
