"""The `mcp` extra's floor is a release that works: an MCP example passes with exactly that SDK.

The newest SDK is what the test extras install and every other MCP test uses; this one installs
the floor named in pyproject.toml into a folder of its own (with the dependencies pip picks for it
today) and runs the demo's MCP tool with that folder first on the path.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import once
from once import shared
from sitebuild import REPO

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

pytestmark = pytest.mark.slow

OFFLINE = ("NewConnectionError", "Temporary failure in name resolution", "Network is unreachable")


def floor() -> str:
    extras = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]["optional-dependencies"]
    (spec,) = extras["mcp"]
    match = re.fullmatch(r"mcp>=([0-9.]+)", spec)
    assert match, f"the mcp extra is a plain floor: {spec}"
    assert f"mcp>={match.group(1)}" in extras["test"], "the test extra asks for the same floor"
    return match.group(1)


@once.ahead("floor_sdk")
def install_floor(factory: pytest.TempPathFactory) -> Path:
    """The floor SDK installed from the package index into `sdk` of a folder of its own, once per
    run, begun as soon as the tests are collected (once.ahead: pip mostly waits on the index)."""
    def make(folder: Path) -> None:
        env = {**once.ENVIRONMENT, "PIP_DISABLE_PIP_VERSION_CHECK": "1"}  # maybe in a thread
        uv = once.suite_uv()  # 1.3 s of CPU instead of pip's 3.3 s; both byte-compile (the SDK's server starts compile nothing)
        command = ([str(uv), "pip", "install", "--quiet", "--compile-bytecode", "--python", sys.executable] if uv is not None
                   else [sys.executable, "-m", "pip", "install", "--quiet"])
        install = subprocess.run([*command, "--target", str(folder / "sdk"), f"mcp=={floor()}"],
                                 capture_output=True, text=True, timeout=300, env=env)
        if install.returncode != 0 and any(word in install.stderr for word in OFFLINE):
            pytest.skip(f"the package index cannot be reached: {install.stderr.strip().splitlines()[-1]}")
        assert install.returncode == 0, install.stderr[-3000:]

    return shared(factory, "mcp-floor", make) / "sdk"


@pytest.fixture(scope="session")
def floor_sdk(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return install_floor(tmp_path_factory)


def test_an_mcp_example_passes_with_the_oldest_sdk_the_extra_allows(floor_sdk: Path) -> None:
    version = floor()
    target = floor_sdk
    env = {**os.environ, "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    env["PYTHONPATH"] = os.pathsep.join([str(REPO / "plugin"), str(target)])
    probe = subprocess.run([sys.executable, "-c", "import mcp, importlib.metadata as m; print(m.version('mcp'), mcp.__file__)"],
                           capture_output=True, text=True, env=env, timeout=60)
    assert probe.stdout.split()[0] == version and str(target) in probe.stdout, probe.stdout + probe.stderr
    result = subprocess.run([sys.executable, "-m", "toolcatalog.cli", "check", "--tool", "math.add", "--no-cache", "--sandbox", "off"],
                            cwd=REPO, capture_output=True, text=True, timeout=120, env=env)
    assert result.returncode == 0, result.stdout + result.stderr
    rows = [line.split(None, 3) for line in result.stdout.splitlines()[1:]]
    assert rows == [["math.add", "aip-14", "passed", "2 passed, 0 failed, 0 skipped"]], result.stdout


@pytest.mark.parametrize("body, reason", [
    ("raise ImportError(\"cannot import name 'eval_type_backport' from 'pydantic'\")",
     "the MCP SDK does not import: ImportError: cannot import name 'eval_type_backport' from 'pydantic'"),
    (None, "the MCP SDK is not installed"),
])
def test_an_sdk_that_does_not_import_is_not_reported_as_missing(tmp_path: Path, body: str | None, reason: str) -> None:
    shadow = tmp_path / "shadow"
    if body is not None:  # an installed SDK that breaks at import, as old releases do against a new pydantic
        (shadow / "mcp").mkdir(parents=True)
        (shadow / "mcp" / "__init__.py").write_text(body + "\n")
    else:  # no SDK at all: a meta path finder hides it, whatever the venv has
        shadow.mkdir()
        (shadow / "sitecustomize.py").write_text(
            "import sys\n"
            "class Hide:\n"
            "    def find_spec(self, name, path=None, target=None):\n"
            "        if name == 'mcp' or name.startswith('mcp.'):\n"
            "            raise ModuleNotFoundError(\"No module named 'mcp'\", name='mcp')\n"
            "sys.meta_path.insert(0, Hide())\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(shadow), str(REPO / "plugin")])}
    result = subprocess.run([sys.executable, "-m", "toolcatalog.cli", "check", "--tool", "math.add", "--no-cache", "--sandbox", "off"],
                            cwd=REPO, capture_output=True, text=True, timeout=120, env=env)
    assert reason in result.stdout, result.stdout + result.stderr
