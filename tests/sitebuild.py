"""Sites, commands and checks for tests: real MkDocs/ProperDocs builds and real `toolcatalog` runs.

In this process, where a test is about what a build or command produces:

- `build(root, "--strict")`: `mkdocs build` through MkDocs' own API, as its command line does it
  (load_config, on_startup, build, on_shutdown), with the log it would print and its exit code;
- `toolcatalog("check", path)`: `toolcatalog.cli.main`, with its stdout, stderr and exit code.

In a subprocess, where a test is about the process itself (the command, signals, hangs,
ProperDocs, which must never share an interpreter with MkDocs):

- `build(root, host="properdocs")` or `host="mkdocs"`: `python -m <host> build`;
- `toolcatalog_process(...)`: `python -m toolcatalog.cli`.

Both kinds return a `Result` with `returncode`, `stdout` and `stderr`.
"""

from __future__ import annotations

import contextlib
import io
import json
import logging
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator, Mapping

import yaml

from manifests import speccify_text, write, workspace_all_formats  # noqa: F401 (also imported from here by tests)
from toolcatalog.conformance import engine
from toolcatalog.harvest import harvest
from toolcatalog.model import Catalog, Tool
from toolcatalog.options import Options
from toolcatalog.outputs import catalog_json
from toolcatalog.outputs.published import manifest_path

REPO = Path(__file__).resolve().parent.parent
CORPUS = REPO.parent / "shared" / "corpus"
# Material prints an end-of-life banner when run as `mkdocs`; ProperDocs suggests itself (1.6.7 and older).
QUIET_HOSTS = {"NO_MKDOCS_2_WARNING": "1", "DISABLE_MKDOCS_2_WARNING": "true"}


_SMALL_DISK = ("import resource, runpy, signal, sys\n"
               "signal.signal(signal.SIGXFSZ, signal.SIG_IGN)\n"
               "resource.setrlimit(resource.RLIMIT_FSIZE, ({limit}, {limit}))\n"
               "sys.argv = ['mkdocs', 'build']\n"
               "runpy.run_module('mkdocs', run_name='__main__')\n")


def build_on_a_full_disk(root: Path, limit: int = 1024) -> subprocess.CompletedProcess[str]:
    """`mkdocs build` in `root`, in a process whose files cannot grow past `limit` bytes: a write
    beyond it fails as on a full disk (SIGXFSZ ignored). No compiled modules are written (none
    would fit)."""
    return subprocess.run([sys.executable, "-c", _SMALL_DISK.format(limit=limit)], cwd=root, capture_output=True, text=True,
                          env={**os.environ, **QUIET_HOSTS, "PYTHONDONTWRITEBYTECODE": "1"}, timeout=300)


@dataclass
class Result:
    """What a build or command did: its exit code and what it printed."""

    returncode: int
    stdout: str
    stderr: str


def mkdocs_project(root: Path, plugin: dict[str, Any] | None = None, theme: Any = "mkdocs", **extra: Any) -> Path:
    """mkdocs.yml listing the plugin with `plugin` options (plus `extra` top-level keys), and a home page."""
    config: dict[str, Any] = {
        "site_name": "Test catalog",
        "theme": theme if isinstance(theme, dict) else {"name": theme},
        "plugins": [{"toolcatalog": plugin or {}}],
        **extra,
    }
    write(root / "mkdocs.yml", yaml.safe_dump(config, sort_keys=False))
    if not (root / "docs" / "index.md").exists():
        write(root / "docs" / "index.md", "# Home\n\nWelcome.\n")
    return root


def hooked_project(root: Path, hook: str) -> Path:
    """Two speccify tools and a site with the search plugin, the plugin (no runs, no cache) and
    `hook` as its hooks file: for tests that look at the build from inside MkDocs' events."""
    for name in ("alpha-tool", "beta-tool"):
        write(root / ".agent" / "tools" / name / "TOOL.md", speccify_text(name))
    write(root / "hook.py", hook)
    return mkdocs_project(root, hooks=["hook.py"], plugins=["search", {"toolcatalog": {"run_examples": False, "cache": False}}])


def catalog(root: Path, name: str = "catalog.json") -> dict[str, Any]:
    """The catalog a build wrote into `root/site`."""
    return json.loads((root / "site" / name).read_text(encoding="utf-8"))


# -- building sites ------------------------------------------------------------------------------------


def build(root: Path, *args: str, check: bool = True, host: str | None = None) -> Result:
    """`mkdocs build ARGS` in `root`: in this process, or with `host` ("mkdocs" or "properdocs")
    as `python -m <host> build ARGS`. `check`: raise unless it exits 0.

    In this process the arguments understood are `-s/--strict`, `-q/--quiet`, `-v/--verbose`,
    `-f FILE`, `-d DIR` and `-c/--clean` (the default), with their `mkdocs build` meanings.
    """
    result = _build_in_process(root, list(args)) if host is None else _build_process(root, host, list(args))
    if check and result.returncode != 0:
        raise AssertionError(f"build failed ({result.returncode}):\n{result.stdout}\n{result.stderr}")
    return result


def _build_process(root: Path, host: str, args: list[str]) -> Result:
    done = subprocess.run(
        [sys.executable, "-m", host, "build", *args],
        cwd=root, capture_output=True, text=True, env={**os.environ, **QUIET_HOSTS}, timeout=300,
    )
    return Result(done.returncode, done.stdout, done.stderr)


def _build_in_process(root: Path, args: list[str]) -> Result:
    # Imported here: a test module that only runs ProperDocs in subprocesses never loads MkDocs.
    from mkdocs.commands.build import build as mkdocs_build
    from mkdocs.config import load_config
    from mkdocs.exceptions import Abort

    kwargs: dict[str, Any] = {}
    level = logging.INFO
    config_file = "mkdocs.yml"
    items = iter(args)
    for arg in items:
        if arg in ("-s", "--strict"):
            kwargs["strict"] = True
        elif arg in ("-q", "--quiet"):
            level = logging.ERROR  # as `mkdocs -q`: warnings are not even logged (nor counted by --strict)
        elif arg in ("-v", "--verbose"):
            level = logging.DEBUG
        elif arg in ("-f", "--config-file"):
            config_file = next(items)
        elif arg in ("-d", "--site-dir"):
            kwargs["site_dir"] = next(items)
        elif arg not in ("-c", "--clean"):
            raise ValueError(f"build() in this process does not understand {arg!r}; use host='mkdocs'")
    out = io.StringIO()
    with _mkdocs_log(out, level), _cwd(root):
        try:
            config = load_config(config_file=config_file, **kwargs)
            config.plugins.on_startup(command="build", dirty=False)
            try:
                mkdocs_build(config, dirty=False)
            finally:
                config.plugins.on_shutdown()
        except Abort as exc:  # what `mkdocs build` prints, then exits 1 with
            return Result(1, f"\n{exc}\n", out.getvalue())
    return Result(0, "", out.getvalue())


@contextlib.contextmanager
def _mkdocs_log(stream: io.StringIO, level: int) -> Iterator[None]:
    """The `mkdocs` logger as `mkdocs build` sets it up, writing into `stream` for one build only
    (so nothing leaks into the next build, and --strict counts only this build's warnings)."""
    logger = logging.getLogger("mkdocs")
    saved = (logger.level, logger.propagate, logger.handlers[:])
    handler = logging.StreamHandler(stream)
    handler.setFormatter(logging.Formatter("%(levelname)-8s-  %(message)s"))
    logger.handlers = [handler]
    logger.setLevel(level)
    logger.propagate = False
    try:
        yield
    finally:
        logger.setLevel(saved[0])
        logger.propagate = saved[1]
        logger.handlers = saved[2]


@contextlib.contextmanager
def _cwd(folder: Path) -> Iterator[None]:
    before = os.getcwd()
    os.chdir(folder)
    try:
        yield
    finally:
        os.chdir(before)


@contextlib.contextmanager
def environment(changes: Mapping[str, str | None] | None) -> Iterator[None]:
    """`os.environ` with `changes` (None: the variable unset), as it was again afterwards."""
    saved = {name: os.environ.get(name) for name in changes or {}}
    _set(changes or {})
    try:
        yield
    finally:
        _set(saved)


def _set(values: Mapping[str, str | None]) -> None:
    for name, value in values.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value


# -- the toolcatalog command ---------------------------------------------------------------------------


def toolcatalog(*args: str, cwd: Path = REPO, env: dict[str, str] | None = None) -> Result:
    """`toolcatalog ARGS` run in this process (`toolcatalog.cli.main`) in `cwd`, with `env` added."""
    from toolcatalog.cli import main

    out, err = io.StringIO(), io.StringIO()
    with _cwd(cwd), environment(env), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(list(args))
        except SystemExit as exc:  # argparse: bad usage, --help, --version
            code = exc.code if isinstance(exc.code, int) else 2
    return Result(code, out.getvalue(), err.getvalue())


def toolcatalog_process(*args: str, cwd: Path = REPO, env: dict[str, str] | None = None, timeout: float = 120) -> Result:
    """`python -m toolcatalog.cli ARGS` as a subprocess: for tests about the process itself."""
    done = subprocess.run(
        [sys.executable, "-m", "toolcatalog.cli", *args], cwd=cwd, capture_output=True, text=True,
        env={**os.environ, **(env or {})}, timeout=timeout,
    )
    return Result(done.returncode, done.stdout, done.stderr)


# -- an outer box: a machine where the build's own sandbox cannot be made --------------------------------


def outer_box(tmp_path: Path) -> list[str]:
    """The start of a `bwrap` command line for an outer box where no user namespace can be made and
    no capability is left: the whole file system read-only, a fresh /tmp, `tmp_path` writable, the
    checkout and its venv visible where they are under /tmp. Tests add what their box changes
    (a seccomp filter, bubblewrap masked), then `--chdir DIR -- COMMAND`.

    The suite's compiled-module folder (`PYTHONPYCACHEPREFIX`, conftest's
    `processes_start_like_the_suite`) stays visible too: under a fresh /tmp it would be empty, and
    every Python started in the box would compile the package, MkDocs and the standard library
    from their sources again (about a second of CPU per start). The tools the build runs in there
    never use it (the product sets PYTHONDONTWRITEBYTECODE and no prefix for them)."""
    argv = ["bwrap", "--unshare-user", "--disable-userns", "--unshare-pid", "--die-with-parent", "--cap-drop", "ALL",
            "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp", "--bind", str(tmp_path), str(tmp_path)]
    for needed in (REPO, Path(sys.prefix)):  # a checkout (and its .venv) under /tmp stays visible
        if Path("/tmp") in needed.resolve().parents:
            argv += ["--ro-bind", str(needed.resolve()), str(needed.resolve())]
    prefix = os.environ.get("PYTHONPYCACHEPREFIX")
    if prefix and Path("/tmp") in Path(prefix).resolve().parents:
        folder = Path(prefix).resolve()
        folder.mkdir(parents=True, exist_ok=True)
        argv += ["--bind", str(folder), str(folder)]
    return argv


# -- the library ---------------------------------------------------------------------------------------


def run_check(root: Path, planners: dict | None = None, **options: Any) -> tuple[Catalog, engine.Stats]:
    """Harvest `root` and run every example and check (no cache, two jobs, unless `options` say otherwise)."""
    opts = Options(**{"jobs": 2, "cache": False, "timeout": 20.0, **options})
    found = harvest(root, opts)
    stats = engine.check(found, opts) if planners is None else engine.check(found, opts, planners=planners)
    return found, stats


def tool_of(found: Catalog, tool_id: str) -> Tool:
    tool = found.tool(tool_id)
    assert tool is not None, [t.id for t in found.tools]
    return tool


def catalog_text(found: Catalog) -> str:
    """The catalog document of a harvested (and maybe checked) catalog, as published."""
    return catalog_json.dumps(catalog_json.document(found))


# -- what a site holds ---------------------------------------------------------------------------------


def files_under(folder: Path) -> dict[str, bytes]:
    """Every file under `folder` by its relative path."""
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def agent_outputs(site: Path, options: dict[str, str] | None = None) -> dict[str, bytes]:
    """The files a build wrote for agents (not the HTML pages), with the plugin `options` for their paths.

    The catalog digest covers the digest manifest, which lists the site's pages and assets too (and
    the MkDocs theme dates its home page unless SOURCE_DATE_EPOCH is set): so the catalog's
    `written` and `catalog_digest`, and the catalog digest the MCP list and llms.txt quote, are
    replaced by placeholders, and the manifest keeps only its entries for these files. Everything
    else is compared byte for byte (tests/test_reproducible.py compares every file's bytes)."""
    o = {"catalog_file": "catalog.json", "tool_json_dir": "tools", "mcp_file": "mcp-tools.json", "llms_file": "llms.txt", **(options or {})}
    manifest = manifest_path(o["catalog_file"]) if o["catalog_file"] else None
    out = {}
    for rel, data in files_under(site).items():
        folder, _, name = rel.rpartition("/")
        if rel in (o["catalog_file"], o["mcp_file"], o["llms_file"], catalog_json.SCHEMA_SITE_PATH, manifest) or (
            o["tool_json_dir"] and folder == o["tool_json_dir"].strip("/") and name.endswith(".json")
        ):
            out[rel] = data
    if o["catalog_file"] in out:
        catalog = json.loads(out[o["catalog_file"]])
        digest = catalog["catalog_digest"].encode()
        out[o["catalog_file"]] = catalog_json.dumps({**catalog, "catalog_digest": "<digest>", "written": "<site files>"}).encode()
        for rel in (o["mcp_file"], o["llms_file"]):
            if rel in out:
                out[rel] = out[rel].replace(digest, b"<catalog digest>")
    if manifest in out:
        listed = json.loads(out[manifest])
        listed["files"] = {rel: item for rel, item in listed["files"].items() if rel in out}
        listed["covers"] = "<site or outputs>"
        out[manifest] = catalog_json.dumps(listed).encode()
    return out
