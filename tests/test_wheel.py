"""Install the built wheel (not editable) into a fresh venv and build a site with it.

Packaging mistakes (templates or schemas left out of the wheel, a wrong entry
point) only show up here: the editable install used by the other tests reads
everything straight from the source tree.
"""

from __future__ import annotations

import email
import json
import os
import subprocess
import sys
import tarfile
import venv
import zipfile
from pathlib import Path

import pytest

from manifests import workspace_all_formats
import once
from once import shared
from sitebuild import REPO, mkdocs_project

pytestmark = pytest.mark.slow


def run(argv: list[str], cwd: Path, timeout: int = 600, base: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """`argv` in `cwd`, which must exit 0; `base`: the environment (`os.environ` by default)."""
    env = {**(os.environ if base is None else base), "NO_MKDOCS_2_WARNING": "1", "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    env.pop("PYTHONPATH", None)
    result = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=timeout, env=env)
    assert result.returncode == 0, f"{argv} failed:\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}"
    return result


# The distributions and the two venvs the wheel is installed into are built once per run, begun as
# soon as the tests are collected (once.ahead: building and installing mostly wait on the package
# index), with the environment the run started with (once.ENVIRONMENT: they may run in a thread).


@once.ahead("dist")
def distributions(factory: pytest.TempPathFactory) -> Path:
    """The sdist, and the wheel built from that sdist (as `python -m build` does by default). The
    isolated build environment (hatchling) is installed by the suite's uv where it is there (`build
    --installer uv`, which finds it on PATH): 1.4 s of CPU instead of pip's 3.1 s; the same backend
    builds the same files."""
    def make(out: Path) -> None:
        uv, env = once.suite_uv(), dict(once.ENVIRONMENT)
        installer = ["--installer", "uv"] if uv is not None else []
        if uv is not None:  # for this command alone: no tool of the suite may find a uv (conftest.py)
            env["PATH"] = os.pathsep.join([str(uv.parent), env.get("PATH", "")])
        run([sys.executable, "-m", "build", *installer, "--outdir", str(out), str(REPO)], cwd=out, base=env)

    return shared(factory, "dist", make)


def the_wheel(dist: Path) -> Path:
    wheels = list(dist.glob("mkdocs_toolcatalog-*.whl"))
    assert len(wheels) == 1
    return wheels[0]


@once.ahead("wheel_mkdocs_venv")
def wheel_with_mkdocs(factory: pytest.TempPathFactory) -> Path:
    """A fresh venv with the wheel and its `mkdocs` extra."""
    wheel = the_wheel(distributions(factory))
    return shared(factory, "venv-wheel-mkdocs", lambda where: new_venv(where, f"{wheel}[mkdocs]"))


@once.ahead("wheel_properdocs_venv")
def wheel_with_properdocs(factory: pytest.TempPathFactory) -> Path:
    """A fresh venv with the wheel, its `properdocs` extra and ProperDocs' mkdocs theme: no MkDocs."""
    wheel = the_wheel(distributions(factory))
    return shared(factory, "venv-wheel-properdocs", lambda where: new_venv(where, f"{wheel}[properdocs]", "properdocs-theme-mkdocs"))


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return distributions(tmp_path_factory)


@pytest.fixture(scope="module")
def wheel_mkdocs_venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return wheel_with_mkdocs(tmp_path_factory)


@pytest.fixture(scope="module")
def wheel_properdocs_venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return wheel_with_properdocs(tmp_path_factory)


def test_distributions_pass_twine_check_and_carry_the_license(dist: Path) -> None:
    (sdist,) = dist.glob("mkdocs_toolcatalog-*.tar.gz")
    (built,) = dist.glob("mkdocs_toolcatalog-*.whl")
    check = run([sys.executable, "-m", "twine", "check", "--strict", str(sdist), str(built)], cwd=dist)
    assert check.stdout.count("PASSED") == 2, check.stdout
    license_text = (REPO / "LICENSE").read_text(encoding="utf-8")
    with tarfile.open(sdist) as archive:
        names = {name.split("/", 1)[1] for name in archive.getnames() if "/" in name}
        assert "LICENSE" in names
        member = archive.extractfile(f"{sdist.name[:-len('.tar.gz')]}/LICENSE")
        assert member is not None and member.read().decode() == license_text
    with zipfile.ZipFile(built) as archive:
        # PEP 561: the wheel says its package is typed, so projects that import it get its hints checked.
        assert "toolcatalog/py.typed" in archive.namelist()
        licenses = [n for n in archive.namelist() if n.endswith(".dist-info/licenses/LICENSE")]
        assert len(licenses) == 1 and archive.read(licenses[0]).decode() == license_text
        metadata = next(n for n in archive.namelist() if n.endswith(".dist-info/METADATA"))
        fields = email.message_from_bytes(archive.read(metadata))
    assert fields["License-Expression"] == "MIT" and fields["License-File"] == "LICENSE"
    urls = dict(value.split(", ", 1) for value in fields.get_all("Project-URL"))
    assert {"Homepage", "Source", "Issues", "Documentation"} <= set(urls)
    assert all(url.startswith("https://") for url in urls.values())
    classifiers = fields.get_all("Classifier")
    assert "Framework :: MkDocs" in classifiers and "Operating System :: POSIX :: Linux" in classifiers
    assert any(c.startswith("Programming Language :: Python :: 3.1") for c in classifiers)


def new_venv(where: Path, *requirements: str) -> None:
    """A fresh venv in `where` with `requirements` installed by the suite's installer (`once.installer`:
    no ensurepip per venv; no byte-compiling of every installed module: each run compiles what it imports)."""
    venv.EnvBuilder(with_pip=False).create(where)
    run([*once.installer(where / "bin" / "python"), *requirements],
        cwd=where.parent, base=once.ENVIRONMENT)


def test_wheel_installs_and_builds_a_site(tmp_path: Path, wheel_mkdocs_venv: Path) -> None:
    env_dir = wheel_mkdocs_venv
    python = env_dir / "bin" / "python"

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


def test_with_only_properdocs_installed_the_plugin_and_the_command_line_work(tmp_path: Path, wheel_properdocs_venv: Path) -> None:
    bin_dir = wheel_properdocs_venv / "bin"
    # Nothing of MkDocs itself is installed: ProperDocs alone hosts the plugin.
    probe = subprocess.run([str(bin_dir / "python"), "-c", "import mkdocs"], capture_output=True, text=True)
    assert probe.returncode != 0 and "No module named 'mkdocs'" in probe.stderr

    project = tmp_path / "project"
    workspace_all_formats(project)
    mkdocs_project(project)
    (project / "mkdocs.yml").rename(project / "properdocs.yml")
    run([str(bin_dir / "properdocs"), "build", "--strict"], cwd=project)
    data = json.loads((project / "site" / "catalog.json").read_text())
    assert [t["status"] for t in data["tools"]] == ["passed", "passed", "passed"]
    # The command line reads properdocs.yml and needs no site generator at all.
    export = run([str(bin_dir / "toolcatalog"), "export", str(project), "-o", str(tmp_path / "out")], cwd=tmp_path)
    assert "wrote" in export.stderr
    assert (tmp_path / "out" / "catalog.json").read_bytes() == (project / "site" / "catalog.json").read_bytes()
