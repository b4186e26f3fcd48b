"""Fixtures over the shared builders (manifests.py): write manifests into tmp_path, harvest them.

Fixtures here are named after what they write (`write_tool`, `write_file`, ...)
so other test modules can add their own without clashing.
"""

from __future__ import annotations

import gc
import json
import os
import signal
import sys
from pathlib import Path
from typing import Any, Callable, Iterator

import pytest
from hypothesis import settings


def _signals_as_from_a_terminal() -> None:
    """SIGINT and SIGQUIT not ignored, before any test module is imported (some start processes at
    import): a shell ignores both for a command it starts in the background (`&`), every process
    inherits that, and the tests of what Ctrl-C does would wait for a build that never hears it.
    Here they are what a terminal's Ctrl-C and Ctrl-\\ meet."""
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)  # started processes get SIG_DFL
    if signal.getsignal(signal.SIGQUIT) is signal.SIG_IGN:
        signal.signal(signal.SIGQUIT, signal.SIG_DFL)


_signals_as_from_a_terminal()

# The example budget of every property that sets no count of its own (test_scale_outputs,
# test_coverage, test_digest_floats, test_json_text): 50 examples each, half hypothesis' default.
# They had 150 to 500 each, 30 s of CPU a run, 17 s of it in the costly two of test_scale_outputs
# (an example there validates a whole catalog, or draws from a bundled pattern's strategy; 21
# patterns). 50 meets every branch these inputs have in one run (a pattern's matches, their
# newline-suffixed forms and free text; the three ways a catalog is edited; floats, nesting and
# keys of every kind). Not derandomized: every run draws new examples, so CI keeps exploring from
# push to push, and the example database replays a failure first. The fuzzers that run whole
# pipelines (test_fuzz, test_redteam_export) keep their own derandomized counts, and the
# red-team fuzzers of seals (test_redteam_trust) their 150, which cost under a second.
# `pytest --hypothesis-profile=thorough` runs 1,000 of each, after a change to what they guard.
settings.register_profile("suite", max_examples=50, deadline=None)
settings.register_profile("thorough", max_examples=1000, deadline=None)
settings.load_profile("suite")

from manifests import speccify_text
from once import UNINSTALLED, begin, path_without, run_folder, shared
from sitebuild import REPO, build, environment
from toolcatalog.harvest import harvest
from toolcatalog.model import Catalog
from toolcatalog.options import Options


@pytest.fixture(scope="session", autouse=True)
def user_cache_folder(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The user cache folder (the default cache and the results key) of every build the tests run,
    in this process and in the processes they start: a temporary one, never the machine's own
    `~/.cache`. A test that wants the default location logic itself sets HOME and XDG_CACHE_HOME.

    One folder for the whole run, shared by the xdist workers: a workspace checked by one worker
    (the demo, above all) is warm for the others, as it is for a user building twice. Results are
    keyed by the workspace's path, so tests with workspaces of their own never meet; the key file
    is created race-free by whichever build comes first."""
    folder = run_folder(tmp_path_factory) / "user-cache"
    folder.mkdir(exist_ok=True)
    with environment({"XDG_CACHE_HOME": str(folder), "TOOLCATALOG_RESULTS_KEY": None}):
        yield folder


@pytest.fixture(scope="session", autouse=True)
def processes_start_like_the_suite(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """What every process the tests start shares with the suite's own, so that starting one costs
    what starting Python costs (the suite starts a few thousand):

    - `python3` on PATH is the interpreter running the suite (its folder first), as it is inside
      the sandbox (`layout.sandbox_path`) and in the documented workflow's steps: never a version
      manager's shim, a shell script that runs a dozen helpers before each Python starts (tests
      about shims make their own). Tools still get only what the product passes them.
    - Compiled modules are kept for the run: where `PYTHONDONTWRITEBYTECODE` is set (nothing may be
      written beside the sources), they go to one folder in the run's temporary root
      (`PYTHONPYCACHEPREFIX`) instead of being compiled again by every process. Runs of tools are
      unaffected: the product sets `PYTHONDONTWRITEBYTECODE=1` for them (`process.scrubbed_env`).
    - SIGINT and SIGQUIT are not ignored (`_signals_as_from_a_terminal`, at this module's import).
    - No `uv` (nor the other programs of `once.UNINSTALLED`) is found on PATH, whether or not the
      machine has one installed (`once.path_without`): the corpus's smart tools call it, and the
      verdicts the tests expect of them were taken without it. The suite's own uv (`.venv/uv`,
      `once.installer`) is called by its path. (The interpreter's folder is kept as it is: a
      `python3` linked from elsewhere would not start in its venv. It is the project's venv, whose
      `bin` .ci/dev.py keeps free of uv.)"""
    others = path_without(UNINSTALLED, os.environ.get("PATH", ""), run_folder(tmp_path_factory) / f"path-{os.getpid()}")
    changes: dict[str, str | None] = {"PATH": os.pathsep.join([str(Path(sys.executable).parent), others])}
    if os.environ.get("PYTHONDONTWRITEBYTECODE"):
        changes["PYTHONDONTWRITEBYTECODE"] = None
        changes["PYTHONPYCACHEPREFIX"] = str(run_folder(tmp_path_factory) / "pycache")
    with environment(changes):
        yield


@pytest.fixture(scope="session", autouse=True)
def no_terminal_width() -> Iterator[None]:
    """No `COLUMNS`/`LINES` from the shell or from pytest-xdist's workers (which set them): the
    command line's tables then wrap only where a test asks for a width."""
    with environment({"COLUMNS": None, "LINES": None}):
        yield


@pytest.fixture
def write_file(tmp_path: Path) -> Callable[..., Path]:
    """Write text (or bytes) to `tmp_path / rel`, creating folders. Returns the path."""

    def write(rel: str, content: str | bytes) -> Path:
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
        return path

    return write


@pytest.fixture
def write_tool(write_file: Callable[..., Path]) -> Callable[..., Path]:
    """Write a speccify tool at `.agent/tools/<folder>/TOOL.md`.

    With no `content`, a valid tool named `name` is written; `content` (str or
    bytes) is written verbatim otherwise.
    """

    def write(name: str = "good-tool", content: str | bytes | None = None, *, folder: str | None = None, under: str = ".agent/tools") -> Path:
        text = speccify_text(name) if content is None else content
        return write_file(f"{under}/{folder or name}/TOOL.md", text)

    return write


@pytest.fixture
def harvest_tmp(tmp_path: Path) -> Callable[..., Catalog]:
    """Harvest `tmp_path` with the given Options keyword arguments."""

    def run(**options: Any) -> Catalog:
        return harvest(tmp_path, Options(**options))

    return run


@pytest.fixture
def speccify_md() -> Callable[..., str]:
    """The `speccify_text` builder: `speccify_md(name, front=None, body=..., extra="")`."""
    return speccify_text


@pytest.fixture(scope="session")
def demo_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The project's own demo site (mkdocs.yml at the top of the repository), built once per test
    run by `mkdocs build` for every test that reads it. Read-only: copy it before changing it."""
    def make(folder: Path) -> None:
        build(REPO, "-q", "-f", str(REPO / "mkdocs.yml"), "-d", str(folder / "site"))

    return shared(tmp_path_factory, "demo-site", make) / "site"


@pytest.fixture(scope="session")
def team_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The team workspace (teamsite.py: the demo plus the public corpus, where present), built in
    each theme once per test run. Read-only."""
    from teamsite import build_team

    return shared(tmp_path_factory, "team", build_team)


# What each once-per-run build (once.py) is requested through: the tests that read the same build
# form one group, run by one worker while the other runs the rest, instead of the second worker
# waiting on the first one's lock (`--dist loadgroup`, as `.ci/dev.py test` runs the suite).
SHARED_BUILDS = {
    "team_site": "team-site",
    "demo_site": "demo-site",
    **dict.fromkeys(("dist", "wheel_mkdocs_venv", "wheel_properdocs_venv"), "dist"),
    **dict.fromkeys(("reference", "properdocs_site", "zensical_site", "mkdocs2_site", "zensical_bin", "mkdocs2_bin"), "generators"),
    "attacks": "tracer-attacks",  # test_redteam_tracer.py: one check of every hostile tool (module scope)
}
GROUPS_FILE = "xdist-groups.json"


def _module_fixtures(item: pytest.Item) -> bool:
    """Whether the test uses a fixture of its module (or class) that the module defines: made once
    per worker that runs any of the module's tests (a browser, a site built and served, ...)."""
    infos = getattr(item, "_fixtureinfo", None)
    for defs in (infos.name2fixturedefs.values() if infos is not None else ()):
        if any(d.scope in ("module", "class", "package") and d.baseid.split("::")[0] == item.nodeid.split("::")[0] for d in defs):
            return True
    return False


def test_groups(items: list[pytest.Item]) -> dict[str, str]:
    """The xdist group of each test that has one. A test that requests a shared build is in that
    build's group; so is every test of its module that uses a fixture of the module, so that the
    fixture (test_pages' browser and served sites, ...) is made by one worker, not by each worker
    the module's tests land on; the other tests of a module that has such fixtures form the
    module's own group, for the same reason. Groups that a module joins are one group."""
    parent: dict[str, str] = {}

    def find(name: str) -> str:
        while parent.setdefault(name, name) != name:
            name = parent[name]
        return name

    by_item: dict[str, str] = {}
    for item in items:
        module = item.nodeid.split("::")[0]
        build = next((SHARED_BUILDS[name] for name in getattr(item, "fixturenames", ()) if name in SHARED_BUILDS), None)
        if build is not None:
            by_item[item.nodeid] = build
            if _module_fixtures(item):
                parent[find(module)] = find(build)
        elif _module_fixtures(item):
            by_item[item.nodeid] = module
    return {nodeid: find(group) for nodeid, group in by_item.items()}


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Each test gets its group (an `xdist_group` mark, `test_groups`). A worker also writes the
    groups for the scheduler (`pytest_xdist_make_scheduler`): pytest-xdist 3.8 marks the group in
    `item._nodeid`, which pytest 9 no longer reads, so its own grouping never happens."""
    groups = test_groups(items)
    for item in items:
        if item.nodeid in groups:
            item.add_marker(pytest.mark.xdist_group(groups[item.nodeid]))
    if os.environ.get("PYTEST_XDIST_WORKER"):
        folder = run_folder(config._tmp_path_factory)  # type: ignore[attr-defined]  # pytest's own, as xdist reads it
        mine = folder / f"{GROUPS_FILE}.{os.environ['PYTEST_XDIST_WORKER']}"
        mine.write_text(json.dumps(groups), encoding="utf-8")
        mine.replace(folder / GROUPS_FILE)  # whole or absent: every worker writes the same


def pytest_collection_finish(session: pytest.Session) -> None:
    """What the collected session keeps is frozen for the garbage collector (`gc.freeze`): the
    modules imported, the tests collected and their marks live to the end of the run, and every
    full collection walked them again: each build in this process ends with one (the plugin frees
    its model's cycles), and the interpreter makes more of its own. With them frozen, a collection
    walks what was made since: 38 of those of the plugin's, in a worker that collected the suite,
    cost 4.9 s of CPU, and 1.7 s frozen. Nothing made by a test is frozen, so a test that checks
    that something is let go (test_memory_release, test_release_build, ...) sees it freed as before.

    Then the builds registered with `once.ahead` that the selected tests need, begun in the
    background by one process of the run (the first worker, or pytest itself without xdist): they
    wait on the package index while the tests before theirs run."""
    gc.collect()  # what collecting left behind, freed rather than frozen
    gc.freeze()
    if os.environ.get("PYTEST_XDIST_WORKER", "gw0") != "gw0" or session.config.option.collectonly:
        return
    wanted = {name for item in session.items for name in getattr(item, "fixturenames", ())}
    begin(session.config._tmp_path_factory, wanted)  # type: ignore[attr-defined]


@pytest.hookimpl(optionalhook=True)  # a hook of pytest-xdist: `pytest -p no:xdist` runs without it
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """`--dist loadgroup` by the groups the workers wrote: one unit per group, every other test a
    unit of its own; the groups (the most tests first) are handed out before the single tests."""
    if config.getoption("dist") != "loadgroup":
        return None
    from xdist.scheduler import LoadScopeScheduling

    groups_file = run_folder(config._tmp_path_factory) / GROUPS_FILE  # type: ignore[attr-defined]

    class BuildGroups(LoadScopeScheduling):
        groups: dict[str, str] | None = None

        def _split_scope(self, nodeid: str) -> str:
            if self.groups is None:  # read once every worker has collected (and so written it)
                self.groups = json.loads(groups_file.read_text(encoding="utf-8")) if groups_file.is_file() else {}
            return self.groups.get(nodeid, nodeid)

    return BuildGroups(config, log)
