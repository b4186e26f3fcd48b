"""Expensive things built once per test run and shared by every pytest-xdist worker.

A session fixture runs once per worker, so a site built by one is built again by the other
(and by every module that builds its own copy). `shared(factory, name, make)` builds `name` once
in the run's common temporary folder: the first worker to ask takes a lock and builds it, the
others wait for it and read the result. What it builds is read-only to the tests that use it.

A worker that asks while another builds waits for it: conftest.py's `SHARED_BUILDS` names the
fixtures each build is requested through, and the tests requesting one form one xdist group
(`--dist loadgroup`, as `.ci/dev.py test` runs them), so they run on the worker that builds it.
A new fixture over `shared` belongs in that table.

A build that raises leaves no result behind: the next worker that asks builds it again (and
fails in its own tests with its own traceback).

A build that mostly waits (on the package index: the venvs of other site generators, the wheel)
can be started ahead: `@ahead("fixture_name")` over a function `start(factory)` that calls
`shared`, and conftest.py starts it in a background thread as soon as the tests are collected,
when a selected test requests that fixture. The fixture calls the same function and so waits on
the lock for the build already under way, or finds it done. Such a build runs its processes with
`ENVIRONMENT`, the environment the run started with, whichever thread runs it (a test may be
changing `os.environ` meanwhile).
"""

from __future__ import annotations

import fcntl
import os
import shutil
import sys
import threading
from pathlib import Path
from typing import Callable, TypeVar

import pytest


def run_folder(factory: pytest.TempPathFactory) -> Path:
    """The folder every worker of this run shares (the workers' own temp folders are inside it)."""
    base = factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


def shared(factory: pytest.TempPathFactory, name: str, make: Callable[[Path], None]) -> Path:
    """`make(folder)` once per test run; the folder it filled, for every worker."""
    root = run_folder(factory)
    folder = root / f"shared-{name}"
    with open(root / f"shared-{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes, even if `make` raises
        if not (folder / ".built").exists():
            shutil.rmtree(folder, ignore_errors=True)  # what a failed attempt left
            folder.mkdir()
            make(folder)
            (folder / ".built").touch()
    return folder


ENVIRONMENT: dict[str, str] = dict(os.environ)  # when conftest.py imported this, before any fixture


def suite_uv() -> Path | None:
    """The uv that .ci/dev.py put in the suite's venv (`.venv/uv`, off PATH), where it is there."""
    uv = Path(sys.prefix) / "uv" / "bin" / "uv"
    return uv if uv.is_file() else None


def installer(python: Path) -> list[str]:
    """The command that installs packages into the venv of `python`: the suite's uv (`suite_uv`: it
    downloads and unpacks in parallel, and compiles nothing), else this interpreter's pip without
    byte-compiling (each run compiles what it imports)."""
    uv = suite_uv()
    if uv is not None:
        return [str(uv), "pip", "install", "--quiet", "--python", str(python)]
    return [sys.executable, "-m", "pip", "--python", str(python), "install", "--quiet", "--no-compile"]
# Programs the suite's processes must not find, wherever the machine has them: the corpus's smart
# tools call `uv` (and its sample's `samplegood`), and every verdict the tests expect of them (the
# conformance kit's among them) was taken where neither was installed: with one found, a tool runs
# and fails instead of being skipped as "not on PATH", and its pages and summaries change.
UNINSTALLED = ("uv", "uvx", "samplegood")


def path_without(programs: tuple[str, ...], path: str, folder: Path) -> str:
    """`path` with every entry that holds one of `programs` replaced by a folder of `folder` that
    links to everything else the entry holds: each other program is found where it was, in the
    same order, and none of `programs` anywhere. An entry holding none of them is kept as it is
    (on a machine without them, the PATH is unchanged). A sandboxed run shows no entry outside the
    system folders (sandbox/layout.py), so a system folder that holds one of `programs` (a distro's
    own `/usr/bin/uv`) takes its other programs out of the sandbox's PATH too."""
    out: list[str] = []
    for entry in path.split(os.pathsep):
        held = os.path.isdir(entry) and any(os.path.lexists(os.path.join(entry, name)) for name in programs)
        if not held:
            out.append(entry)
            continue
        shadow = folder / f"path-{len(out)}"
        shadow.mkdir(parents=True, exist_ok=True)
        for name in os.listdir(entry):
            if name not in programs and not (shadow / name).is_symlink():
                (shadow / name).symlink_to(os.path.join(os.path.abspath(entry), name))
        out.append(str(shadow))
    return os.pathsep.join(out)


Start = TypeVar("Start", bound=Callable[[pytest.TempPathFactory], object])
AHEAD: dict[str, Callable[[pytest.TempPathFactory], object]] = {}


def ahead(fixture: str) -> Callable[[Start], Start]:
    """Register `start(factory)` (which calls `shared`) to be begun in the background when a
    selected test requests `fixture` (conftest.py's `pytest_collection_finish`)."""
    def register(start: Start) -> Start:
        AHEAD[fixture] = start
        return start

    return register


def begin(factory: pytest.TempPathFactory, fixtures: set[str]) -> None:
    """Begin in daemon threads the registered builds that `fixtures` need. A build that raises here
    is left for its fixture, which builds it again and fails or skips in its own tests."""
    def quietly(start: Callable[[pytest.TempPathFactory], object]) -> None:
        try:
            start(factory)
        except BaseException:  # noqa: BLE001 (pytest.skip included): the fixture reports it
            pass

    for name in sorted(fixtures & AHEAD.keys()):
        threading.Thread(target=quietly, args=(AHEAD[name],), name=f"ahead-{name}", daemon=True).start()
