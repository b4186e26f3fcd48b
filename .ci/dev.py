#!/usr/bin/env python3
"""Set up and run the project with nothing but python3.

    python3 .ci/dev.py demo     # create .venv, install, build the demo catalog site into site/
    python3 .ci/dev.py serve    # same, then serve it on http://127.0.0.1:8000/
    python3 .ci/dev.py test     # create .venv, install with test extras, run the whole test suite

Everything goes into .venv next to this repository; the system Python is untouched.
Installing is skipped when pyproject.toml has not changed since the last install.
"""

from __future__ import annotations

import ensurepip
import hashlib
import os
import subprocess
import sys
import tempfile
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VENV = ROOT / ".venv"
BIN = VENV / ("Scripts" if os.name == "nt" else "bin")
PYTHON = BIN / ("python.exe" if os.name == "nt" else "python")
UV = "uv>=0.9,<1"  # the installer for .venv (see `install`); only this script and the tests' venvs use it
# Kept out of .venv/bin, which is on the PATH of every process the suite starts: a tool that calls
# `uv` (the corpus's smart tools do) must find none there, as on a machine without it.
UV_HOME = VENV / "uv"


def run(*argv: str | os.PathLike[str]) -> None:
    print("+", " ".join(str(a) for a in argv), flush=True)
    subprocess.run([str(a) for a in argv], cwd=ROOT, check=True)


def setup(extras: str) -> None:
    if not PYTHON.exists():
        print(f"creating {VENV}", flush=True)
        create_venv()
    stamp = VENV / f".toolcatalog-installed-{extras}"
    digest = hashlib.sha256((ROOT / "pyproject.toml").read_bytes()).hexdigest()
    if stamp.exists() and stamp.read_text() == digest:
        return
    # A venv made before (or by ensurepip, below): its pip, unless it is older than 23.1.
    if pip_version() < (23, 1):
        run(PYTHON, "-m", "pip", "install", "--quiet", "--upgrade", "pip")
    install(f".[{extras}]")
    stamp.write_text(digest)


def install(requirement: str) -> None:
    """`requirement` installed editable into .venv, byte-compiled (the suite's workers read what the
    install compiled: under PYTHONDONTWRITEBYTECODE they write no compiled file of their own). With
    uv where it can be had from the package index: it resolves, downloads and compiles in parallel,
    a clean clone's install of the test extras in about 25 s instead of pip's 60 (a third of the CPU).
    Without the index's uv, pip, as before."""
    uv = UV_HOME / "bin" / ("uv.exe" if os.name == "nt" else "uv")
    if not uv.exists():
        subprocess.run([str(PYTHON), "-m", "pip", "install", "--quiet", "--target", str(UV_HOME), UV], cwd=ROOT, check=False)
    if uv.exists():
        run(uv, "pip", "install", "--quiet", "--python", PYTHON, "--compile-bytecode", "-e", requirement)
    else:
        run(PYTHON, "-m", "pip", "install", "--quiet", "-e", requirement)


def create_venv() -> None:
    """The venv with the current pip in it, installed by the pip wheel Python ships for ensurepip
    (run from the wheel itself): one install instead of ensurepip's (pip, and setuptools before
    Python 3.12) followed by an upgrade. The current pip resolves the test extras with about a third
    less CPU than the one Python 3.11 ships (23.2), which reads every wheel listed on the index's
    pages for each package. Without that wheel (a Python whose ensurepip is stripped), ensurepip."""
    wheels = sorted(Path(ensurepip.__file__).parent.glob("_bundled/pip-*.whl"))
    if not wheels:
        venv.EnvBuilder(with_pip=True, clear=True).create(VENV)
        return
    venv.EnvBuilder(with_pip=False, clear=True).create(VENV)
    pip = str(wheels[-1] / "pip")  # a wheel is a zip file Python can run from
    print("+", PYTHON, pip, "install", "--quiet", "--upgrade", "pip", flush=True)
    upgraded = subprocess.run([str(PYTHON), pip, "install", "--quiet", "--upgrade", "pip"], cwd=ROOT, check=False)
    if upgraded.returncode != 0:  # no package index: the bundled pip, from its wheel
        run(PYTHON, pip, "install", "--quiet", "--no-index", wheels[-1])


def pip_version() -> tuple[int, ...]:
    """The version of the pip in .venv, from its dist-info folder's name (no process started)."""
    for info in VENV.glob("lib*/python*/site-packages/pip-*.dist-info"):
        return tuple(int(part) for part in info.name[len("pip-"):-len(".dist-info")].split(".")[:2] if part.isdigit())
    return (0,)


def main(argv: list[str]) -> int:
    command = argv[0] if argv else "demo"
    if command in ("demo", "serve"):
        setup("demo")
        run(BIN / "mkdocs", "build", "--clean")
        print(f"\nDemo catalog site built in {ROOT / 'site'} (open site/index.html, or run: python3 .ci/dev.py serve)")
        if command == "serve":
            run(BIN / "mkdocs", "serve", "--dev-addr", "127.0.0.1:8000")
        return 0
    if command == "test":
        setup("test")
        # A fresh temporary root per run, removed by `rm -rf` afterwards: pytest's own clean-up of
        # earlier runs' folders recurses, and the red-team tests make folder chains deeper than
        # Python's recursion limit (one left by an interrupted run would crash the next run).
        basetemp = tempfile.mkdtemp(prefix="toolcatalog-tests-")
        env = dict(os.environ)
        folders = [basetemp]
        if env.pop("PYTHONDONTWRITEBYTECODE", None):
            # Nothing may be written beside the sources: the compiled modules (the test modules as
            # pytest rewrites their asserts, the package's) go to a folder of this run instead of
            # being compiled again by each worker and each process the tests start (tests/conftest.py
            # does the same for a run of plain pytest, from the start of its session). Three workers
            # starting and collecting: about 16 s of CPU without it, 12 s with it.
            folders.append(tempfile.mkdtemp(prefix="toolcatalog-pycache-"))
            env["PYTHONPYCACHEPREFIX"] = folders[-1]
        try:
            # loadgroup: the tests that read one once-per-run build run on one worker (tests/conftest.py).
            # Three workers on two cores: about a third of the suite's time waits (on processes it
            # stopped, timeouts, the browser, the package index), and a third worker fills it.
            # `python3 .ci/dev.py test -n 2` (or any pytest option) overrides it.
            result = subprocess.run([str(PYTHON), "-m", "pytest", "-n", "3", "--dist", "loadgroup", f"--basetemp={basetemp}", *argv[1:]], cwd=ROOT, env=env)
        finally:
            # Removed in the background once the result is known: about 25,000 files, 10 s of
            # waiting on the disk (an unlink costs 0.4 ms on an ext4 that discards) for nobody.
            subprocess.Popen(["rm", "-rf", "--one-file-system", *folders], start_new_session=True,
                             stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        return result.returncode
    print(__doc__)
    return 2


if __name__ == "__main__":
    os.environ.setdefault("NO_MKDOCS_2_WARNING", "1")
    sys.exit(main(sys.argv[1:]))
