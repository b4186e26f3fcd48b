"""Review of branch mem4's staging folder (`sitefiles.Stage`, made in site_dir at on_env): a killed
build's stage under `mkdocs build --dirty`, a disk that cannot take the stage, a stage another
build of the same site_dir cleaned away. Real MkDocs builds in tmp folders, no mocks."""

from __future__ import annotations

import json
import os
from pathlib import Path

from manifests import speccify_text
from sitebuild import build, build_on_a_full_disk, mkdocs_project, write

KILL_HOOK = '''
import os, signal
from pathlib import Path
from mkdocs.plugins import event_priority


@event_priority(200)  # the stage exists: on_env came
def on_page_context(context, page, config, nav):
    if Path(config.config_file_path).parent.joinpath("kill.flag").exists():
        os.kill(os.getpid(), signal.SIGKILL)
'''

CLEANED_HOOK = '''
import shutil
from mkdocs.plugins import event_priority


@event_priority(200)  # before the plugin reads the page back: as another build's clean of site_dir
def on_page_context(context, page, config, nav):
    stage = config.plugins["toolcatalog"].stage
    if stage is not None:
        shutil.rmtree(stage.folder, ignore_errors=True)
'''


def _project(root: Path, hook: str) -> Path:
    for name in ("alpha-tool", "beta-tool"):
        write(root / ".agent" / "tools" / name / "TOOL.md", speccify_text(name))
    write(root / "hook.py", hook)
    return mkdocs_project(root, hooks=["hook.py"], plugins=[{"toolcatalog": {"run_examples": False, "cache": False}}])


def _stages(site: Path) -> list[str]:
    return sorted(name for name in os.listdir(site) if name.startswith("toolcatalog-stage-"))


def test_a_killed_builds_stage_is_not_published_by_a_dirty_build(tmp_path: Path) -> None:
    """`mkdocs build --dirty` does not clean site_dir: the stage a killed build left must not be
    published, nor listed in the digest manifest."""
    root = _project(tmp_path, KILL_HOOK)
    write(root / "kill.flag", "")
    killed = build(root, check=False, host="mkdocs")
    assert killed.returncode != 0
    assert _stages(root / "site"), "the killed build made no stage: the test sees nothing"
    (root / "kill.flag").unlink()
    build(root, "--dirty", host="mkdocs")
    assert _stages(root / "site") == []
    listed = json.loads((root / "site" / "catalog.digests.json").read_text())["files"]
    assert [path for path in listed if path.startswith("toolcatalog-stage-")] == []


def test_a_link_named_like_a_stage_is_left_alone(tmp_path: Path) -> None:
    """The sweep never follows a link planted in site_dir (MkDocs' clean leaves links in place)."""
    root = _project(tmp_path, "")
    outside = tmp_path / "outside"
    write(outside / ".toolcatalog-stage", "0\n")
    write(outside / "precious.txt", "keep me")
    (root / "site").mkdir()
    (root / "site" / "toolcatalog-stage-planted").symlink_to(outside, target_is_directory=True)
    build(root)
    assert (outside / "precious.txt").read_text() == "keep me"
    assert (root / "site" / "toolcatalog-stage-planted").is_symlink()


def test_a_disk_that_cannot_take_the_stage_is_a_clear_error(tmp_path: Path) -> None:
    """A file-size limit (as a full disk: the write fails) while the pages are staged stops the
    build with the plugin's error, not a traceback, and leaves no stage."""
    root = _project(tmp_path, "")
    done = build_on_a_full_disk(root)
    assert done.returncode == 1, done.stderr
    assert "toolcatalog:" in done.stderr and "cannot be staged" in done.stderr, done.stderr
    assert "Traceback" not in done.stderr, done.stderr
    assert _stages(root / "site") == []


def test_a_stage_cleaned_away_mid_build_is_a_clear_error(tmp_path: Path) -> None:
    """Another build of the same site_dir cleans it (MkDocs' clean) while this one builds its
    pages: the page whose HTML is gone is a clear error naming it, never an empty page."""
    root = _project(tmp_path, CLEANED_HOOK)
    result = build(root, check=False)
    assert result.returncode == 1
    assert "toolcatalog: the staged HTML of tools/" in result.stderr, result.stderr
    assert _stages(root / "site") == []


def test_a_planted_stage_whose_mark_is_a_pipe_does_not_hang_the_build(tmp_path: Path) -> None:
    """`--dirty` leaves what was planted in site_dir: a folder named like a stage whose mark is a
    pipe (or a link to one) is not waited on."""
    root = _project(tmp_path, "")
    planted = root / "site" / "toolcatalog-stage-planted"
    planted.mkdir(parents=True)
    os.mkfifo(planted / ".toolcatalog-stage")
    build(root, "--dirty", host="mkdocs")
    assert (planted / ".toolcatalog-stage").exists()
    assert (root / "site" / "catalog.json").is_file()
