"""Install the built wheel (not editable) into a fresh venv and build a site with it.

Packaging mistakes (templates or schemas left out of the wheel, a wrong entry
point) only show up here: the editable install used by the other tests reads
everything straight from the source tree.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import venv
from pathlib import Path

import pytest

from sitebuild import REPO, mkdocs_project, workspace_all_formats

pytestmark = pytest.mark.slow


def run(argv: list[str], cwd: Path, timeout: int = 600) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1", "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    env.pop("PYTHONPATH", None)
    result = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=timeout, env=env)
    assert result.returncode == 0, f"{argv} failed:\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}"
    return result


def test_wheel_installs_and_builds_a_site(tmp_path: Path) -> None:
    dist = tmp_path / "dist"
    run([sys.executable, "-m", "build", "--wheel", "--outdir", str(dist), str(REPO)], cwd=tmp_path)
    wheels = list(dist.glob("mkdocs_toolcatalog-*.whl"))
    assert len(wheels) == 1

    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=True).create(env_dir)
    python = env_dir / "bin" / "python"
    run([str(python), "-m", "pip", "install", "--quiet", str(wheels[0])], cwd=tmp_path)

    # The wheel carries its templates and schemas; nothing is read from the source tree.
    listing = run(
        [str(python), "-c", "import toolcatalog.render as r, toolcatalog, pathlib; "
         "print(r.templates_dir()); print(pathlib.Path(toolcatalog.__file__).parent)"],
        cwd=tmp_path,
    ).stdout.split()
    templates, package = Path(listing[0]), Path(listing[1])
    assert templates == package / "site_templates"
    assert (templates / "toolcatalog" / "tool.html").is_file()
    assert (package / "schemas" / "aip14-tool.schema.json").is_file()
    assert not str(package).startswith(str(REPO))

    project = tmp_path / "project"
    workspace_all_formats(project)
    mkdocs_project(project)
    run([str(env_dir / "bin" / "mkdocs"), "build", "--strict"], cwd=project)
    data = json.loads((project / "site" / "catalog.json").read_text())
    assert [t["id"] for t in data["tools"]] == ["add-numbers", "text.echo", "tiny-smart"]
    assert (project / "site" / "tools" / "text.echo" / "index.html").is_file()

    validate = run([str(env_dir / "bin" / "toolcatalog"), "validate", str(project)], cwd=tmp_path)
    assert "3 tools, 0 invalid" in validate.stdout
