"""Red team: a hostile tool must not outlive the build, hang it or crash it from its folders, or fill
its disk, and nothing the build leaves behind may stay.

Each test starts a real build (`toolcatalog check` as a subprocess, or the engine in this process),
with real bubblewrap and strace, or the Landlock launcher with bubblewrap hidden from PATH, and
sends it real signals. The hostile tool's processes are `sleep` processes with a unique argument,
found in /proc; its run folders are found by the copy of its TOOL.md (which holds the same
marker), under the base folder the sandbox uses, in this version's layout and the one before.
"""

from __future__ import annotations

import fcntl
import json
import os
import random
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
from typing import Iterator

from manifests import PLATFORM, aip_driver, aip_tool, cli_entry, speccify_tool, write
from procs import alive, gone, no_leftovers  # noqa: F401 (an autouse fixture)
from sitebuild import QUIET_HOSTS, REPO, mkdocs_project, run_check, tool_of
from toolcatalog import sandbox
from toolcatalog.sandbox import landlock_launcher, layout, tree

FACTS = sandbox.probe("auto")
_HERE = f"this machine offers {FACTS.mechanism or 'no sandbox'}" + (f" ({FACTS.reason})" if FACTS.reason else "")
needs_trace = pytest.mark.skipif(FACTS.mechanism != "bwrap" or not FACTS.traced, reason=f"needs bubblewrap and strace; {_HERE}")
pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the sandbox is Linux only")

BASE = Path(layout.base_folder() or tempfile.gettempdir())

# A tool that never ends: a daemon in a session of its own, then a sleep in its own place. `sleep`
# by its system path: a sandboxed run's PATH keeps only system and workspace folders, and the
# Landlock tests' PATH is a folder of links that hides bwrap.
SLEEP = os.path.realpath(shutil.which("sleep") or "/bin/sleep")
HANG_PY = f"""
import json, os, subprocess, sys
marker = json.load(sys.stdin)["marker"]
subprocess.Popen(["sleep", marker + "1"], executable={SLEEP!r}, start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
os.execv({SLEEP!r}, ["sleep", marker])
"""
ECHO_PY = "import json, sys\nprint(json.dumps(json.load(sys.stdin)))\n"


def new_marker() -> str:
    return f"{900 + random.randrange(99)}.{random.randrange(10**6):06d}"


# Between two looks at what the build started: the loops that wait for a tool's processes would
# otherwise read /proc (or stat a file) without a pause, a core's worth of CPU taken from the very
# build they wait for, for as long as it takes to start.
POLL_S = 0.02


def sleepers(marker: str) -> list[int]:
    """Live `sleep MARKER` and `sleep MARKER1` processes."""
    wanted = {marker.encode(), (marker + "1").encode()}
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                argv = (entry / "cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if argv[:1] == [b"sleep"] and len(argv) > 1 and argv[1] in wanted and alive(int(entry.name)):
                found.append(int(entry.name))
    return found


def run_folders_of(marker: str) -> list[Path]:
    """Run folders whose copy of the working folder (bubblewrap) or trace (both) holds `marker`:
    `toolcatalog-runs-*/run-*` (this version) or `toolcatalog-run-*` (the layout before)."""
    found = []
    for entry in BASE.iterdir():
        if not entry.name.startswith("toolcatalog-run") or entry.is_symlink():
            continue
        for candidate in (entry, *(p for p in entry.glob("run-*") if not p.is_symlink())):
            for name in ("work/TOOL.md", "trace.log"):
                try:
                    held = marker.encode() in (candidate / name).read_bytes()
                except OSError:
                    continue
                if held:
                    found.append(candidate)
                    break
    return found


def landlock_path(tmp_path: Path) -> dict[str, str]:
    """An environment whose PATH has strace and sleep but no bwrap: the build falls back to Landlock."""
    folder = tmp_path / "bin"
    folder.mkdir(exist_ok=True)
    for name in ("strace", "sleep"):
        found = shutil.which(name)
        if found and not (folder / name).exists():
            (folder / name).symlink_to(found)
    return {"PATH": str(folder)}


def start_check(ws: Path, env: dict[str, str] | None = None, *args: str, timeout: str = "300") -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "toolcatalog.cli", "check", str(ws), "--no-cache", "--timeout", timeout, *args],
        cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env={**os.environ, **(env or {})},
    )


def hanging_build(tmp_path: Path, env: dict[str, str] | None = None) -> tuple[subprocess.Popen[str], str, list[int]]:
    """A build running a tool that never ends; returns once both of the tool's processes run."""
    marker = new_marker()
    ws = tmp_path / "ws"
    speccify_tool(ws, "hang", [("never ends", {"marker": marker}, {})], files={f"{PLATFORM}.py": HANG_PY},
                  effects="starts a background process")
    build = start_check(ws, env)
    pids: list[int] = []
    while len(pids) < 2:  # a hang guard, not a timing assertion
        if build.poll() is not None:
            pytest.fail(f"the build ended before its tool ran: {build.communicate()}")
        pids = sleepers(marker)
        time.sleep(POLL_S)
    return build, marker, pids


def mechanism_env(mechanism: str, tmp_path: Path) -> dict[str, str] | None:
    """The environment additions that make a build use `mechanism`, traced (or a skip)."""
    if FACTS.mechanism != "bwrap" or not FACTS.traced:
        pytest.skip(f"needs bubblewrap and strace; {_HERE}")
    if mechanism == "landlock":
        if landlock_launcher.abi_version() < 1:
            pytest.skip("Landlock is unavailable here")
        return landlock_path(tmp_path)
    return None


def stop_leftovers(marker: str) -> None:
    for pid in sleepers(marker):
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


# --------------------------------------------------------------------------- 1. outliving the build


@pytest.mark.parametrize("mechanism, number", [
    ("bwrap", signal.SIGTERM), ("bwrap", signal.SIGINT), ("bwrap", signal.SIGHUP), ("landlock", signal.SIGTERM),
])
def test_a_signal_to_the_build_ends_every_sandboxed_process_and_removes_its_folders(tmp_path: Path, mechanism: str, number: int) -> None:
    env = mechanism_env(mechanism, tmp_path)
    build, marker, pids = hanging_build(tmp_path, env)
    try:
        os.kill(build.pid, number)
        _, stderr = build.communicate(timeout=120)
        assert build.returncode == (130 if number == signal.SIGINT else 128 + number), stderr
        assert gone(*pids), f"the tool outlived the build: {sleepers(marker)}"
        assert run_folders_of(marker) == []
    finally:
        stop_leftovers(marker)


def test_sigterm_ends_an_unsandboxed_tools_process_group_too(tmp_path: Path) -> None:
    marker = new_marker()
    ws = tmp_path / "ws"
    speccify_tool(ws, "hang", [("never ends", {"marker": marker}, {})], files={f"{PLATFORM}.py": HANG_PY},
                  effects="starts a background process")
    build = start_check(ws, None, "--sandbox", "off")
    try:
        while len(sleepers(marker)) < 2:  # a hang guard, not a timing assertion
            assert build.poll() is None, build.communicate()
            time.sleep(POLL_S)
        main = [pid for pid in sleepers(marker) if Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[1] == marker.encode()]
        os.kill(build.pid, signal.SIGTERM)
        build.communicate(timeout=120)
        assert build.returncode == 143
        assert gone(*main), "the tool's process group outlived the build"
    finally:
        stop_leftovers(marker)  # unsandboxed, the daemon in a session of its own is not stopped (documented)


def test_at_its_timeout_a_landlock_run_leaves_no_daemon(tmp_path: Path) -> None:
    env = mechanism_env("landlock", tmp_path)
    marker = new_marker()
    ws = tmp_path / "ws"
    speccify_tool(ws, "hang", [("never ends", {"marker": marker}, {})], files={f"{PLATFORM}.py": HANG_PY},
                  effects="starts a background process")
    build = start_check(ws, env, "--json", timeout="3")
    try:
        stdout, stderr = build.communicate(timeout=120)
        assert json.loads(stdout)["tools"][0]["examples"][0]["detail"].startswith("timed out"), stderr
        assert json.loads(stdout)["tools"][0]["sandbox"]["mechanism"] == "landlock"
        assert sleepers(marker) == [] or gone(*sleepers(marker)), "the daemon outlived its run"
    finally:
        stop_leftovers(marker)


@needs_trace
def test_sigterm_to_mkdocs_build_ends_the_plugins_runs_too(tmp_path: Path) -> None:
    marker = new_marker()
    ws = mkdocs_project(tmp_path / "site", plugin={"timeout": 300, "cache": False})
    speccify_tool(ws, "hang", [("never ends", {"marker": marker}, {})], files={f"{PLATFORM}.py": HANG_PY},
                  effects="starts a background process")
    build = subprocess.Popen([sys.executable, "-m", "mkdocs", "build"], cwd=ws, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True, env={**os.environ, **QUIET_HOSTS})
    try:
        while len(sleepers(marker)) < 2:  # a hang guard, not a timing assertion
            assert build.poll() is None, build.communicate()
            time.sleep(POLL_S)
        pids = sleepers(marker)
        build.terminate()
        build.communicate(timeout=120)
        assert build.returncode == 143
        assert gone(*pids) and run_folders_of(marker) == []
    finally:
        stop_leftovers(marker)


@pytest.mark.parametrize("mechanism", ["bwrap", "landlock"])
def test_sigkill_of_the_build_ends_its_runs_and_the_next_build_removes_their_folders(tmp_path: Path, mechanism: str) -> None:
    env = mechanism_env(mechanism, tmp_path)
    build, marker, pids = hanging_build(tmp_path, env)
    try:
        left = run_folders_of(marker)  # taken while the build runs: a killed build cannot remove them
        assert left, "the running tool's folder is not where the test looks"
        build.kill()  # as the OOM killer would: no handler runs
        build.communicate()
        assert gone(*pids), f"the tool outlived the build: {sleepers(marker)}"
        # The next build (any workspace) proves that build is gone by taking its lock, and removes them.
        # (Any build of this user may be that next build: another test's, running meanwhile, too.)
        other = tmp_path / "other"
        speccify_tool(other, "echo", [("echo", {"x": 1}, {"x": 1})], files={f"{PLATFORM}.py": ECHO_PY})
        done = subprocess.run([sys.executable, "-m", "toolcatalog.cli", "check", str(other), "--no-cache"], cwd=REPO,
                              capture_output=True, text=True, timeout=120, env={**os.environ, **(env or {})})
        assert done.returncode == 0, done.stderr
        assert ("Landlock" if mechanism == "landlock" else "bubblewrap") in done.stderr, done.stderr
        assert not any(p.exists() for p in left) and run_folders_of(marker) == []
    finally:
        stop_leftovers(marker)


@needs_trace
def test_the_next_build_removes_only_what_it_can_prove_is_an_abandoned_run_folder(tmp_path: Path) -> None:
    uid, tag = os.geteuid(), f"{os.getpid()}-{random.randrange(10**9)}"
    victim = tmp_path / "victim"
    write(victim / "keep.txt", "mine")
    write(victim / "lock", "")

    def fake(name: str, mode: int = 0o700, lock: bool = True) -> Path:
        folder = BASE / f"toolcatalog-runs-{uid}-{tag}-{name}"
        folder.mkdir(mode=mode)
        folder.chmod(mode)
        write(folder / "run-x" / "data.txt", "left over")
        if lock:
            write(folder / "lock", "1\n")
        return folder

    abandoned = fake("abandoned")
    (abandoned / "run-x" / "out").symlink_to(victim)  # removing it must not follow this
    live = fake("live")
    held = os.open(live / "lock", os.O_RDWR)
    fcntl.flock(held, fcntl.LOCK_EX)  # a build that is still running holds its lock
    unlocked = fake("no-lock", lock=False)
    shared = fake("shared", mode=0o755)
    linked_lock = fake("lock-link", lock=False)
    (linked_lock / "lock").symlink_to(victim / "lock")
    as_link = BASE / f"toolcatalog-runs-{uid}-{tag}-link"
    as_link.symlink_to(victim)
    kept = [live, unlocked, shared, linked_lock]
    try:
        ws = tmp_path / "ws"
        speccify_tool(ws, "echo", [("echo", {"x": 1}, {"x": 1})], files={f"{PLATFORM}.py": ECHO_PY})
        done = subprocess.run([sys.executable, "-m", "toolcatalog.cli", "check", str(ws), "--no-cache"], cwd=REPO,
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        assert not abandoned.exists()
        assert all((folder / "run-x" / "data.txt").exists() for folder in kept)
        assert as_link.is_symlink() and (victim / "keep.txt").read_text() == "mine" and (victim / "lock").exists()
    finally:
        os.close(held)
        for folder in [abandoned, *kept]:
            shutil.rmtree(folder, ignore_errors=True)
        as_link.unlink()


# --------------------------------------------------------------------------- 2. the tree a tool leaves

DEEP_PY = """
import json, os, sys
json.load(sys.stdin)
for start in ("/tmp", os.environ["TMPDIR"], "."):
    fd = os.open(start, os.O_RDONLY)
    for _ in range(1500):
        os.mkdir("d", dir_fd=fd)
        child = os.open("d", os.O_RDONLY, dir_fd=fd)
        os.close(fd)
        fd = child
    os.symlink("/etc", "etc", dir_fd=fd)
    os.close(fd)
print("{}")
"""


@needs_trace
def test_a_1500_level_folder_chain_neither_crashes_nor_hangs_the_build_and_is_removed(deep_tmp: Path) -> None:
    tmp_path = deep_tmp
    marker = new_marker()
    ws = tmp_path / "ws"
    speccify_tool(ws, "deep", [("makes a deep chain", {"marker": marker}, {})], files={f"{PLATFORM}.py": DEEP_PY},
                  effects="writes temporary files")
    done = subprocess.run([sys.executable, "-m", "toolcatalog.cli", "check", str(ws), "--no-cache", "--json"], cwd=REPO,
                          capture_output=True, text=True, timeout=120)  # a hang guard: on the old code it never returned
    assert done.returncode in (0, 1), done.stderr
    tool = json.loads(done.stdout)["tools"][0]
    assert tool["status"] == "passed", tool
    run = tool["examples"][0]["runs"][0]
    assert run["observed"]["truncated"] is True  # the picture stops at its depth cap, and says so
    assert run_folders_of(marker) == []


def chain(root: Path, depth: int) -> Path:
    fd = os.open(root, os.O_RDONLY)
    for _ in range(depth):
        os.mkdir("d", dir_fd=fd)
        child = os.open("d", os.O_RDONLY, dir_fd=fd)
        os.close(fd)
        fd = child
    os.close(os.open("bottom.txt", os.O_WRONLY | os.O_CREAT, dir_fd=fd))
    os.close(fd)
    return root


@pytest.fixture
def deep_tmp(tmp_path: Path) -> Iterator[Path]:
    """tmp_path, emptied without recursion afterwards, pass or fail: pytest's own clean-up of old
    temporary folders recurses, and a 1,500-level chain left behind crashes the next test run."""
    yield tmp_path
    from toolcatalog.sandbox import nofollow
    for child in list(tmp_path.iterdir()):
        if child.is_dir() and not child.is_symlink():
            nofollow.remove(str(child))


def test_pictures_and_copies_of_a_deep_folder_stop_at_the_depth_cap_without_recursing(deep_tmp: Path) -> None:
    tmp_path = deep_tmp
    (tmp_path / "source").mkdir()
    source = chain(tmp_path / "source", 1500)
    (source / "outside").symlink_to(tmp_path / "elsewhere")
    write(tmp_path / "elsewhere" / "secret.txt", "not to be copied")
    picture, cut = tree.picture(source, hash_files=True)
    assert cut and picture["outside"] == ("link", str(tmp_path / "elsewhere")) and len(picture) < 200
    assert layout.fits_copy(source) is False  # too deep to copy whole: the run gets it read-only
    target = tmp_path / "target"
    target.mkdir()
    layout.copy_folder(source, target)  # no RecursionError; the link is copied as a link
    from toolcatalog.sandbox import nofollow  # here: the module is new, and this file's tests also run on the code before it
    assert (target / "outside").is_symlink() and (target / "d" / "d").is_dir()
    assert nofollow.remove(str(target)) is None and not target.exists()
    assert (tmp_path / "elsewhere" / "secret.txt").exists()
    assert nofollow.remove(str(source)) is None  # pytest's own clean-up of tmp_path recurses


@needs_trace
def test_a_link_in_the_working_folder_copy_makes_the_build_create_nothing_outside_it(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    name = f"tc-outside-{os.getpid()}-{random.randrange(10**9)}"
    aip_tool(ws, "t.linked", examples=[{"name": "runs", "input": {}, "output": "ok\n"}], outputs={"type": "string"})
    folder = aip_driver(ws, "linked", "t.linked", bin=f"x/{name}/run", entry=cli_entry(), output={"default_format": "text"})
    write(ws / name / "run", "#!/bin/sh\necho ok\n")
    (ws / name / "run").chmod(0o755)
    # From the driver's folder `x` is the workspace; from its copy in the run folder, the base folder.
    (folder / "x").symlink_to("../..")
    try:
        # The whole workspace visible (the program lies outside the driver's folder), so the
        # working folder's copy and its mount points are made as before least privilege.
        catalog, _ = run_check(ws, sandbox_workspace="all")
        assert not (BASE / name).exists(), "the build made a folder outside the run folder"
        linked = tool_of(catalog, "t.linked")
        assert linked.status == "passed", [r.detail for e in linked.examples for r in e.runs]
    finally:
        if (BASE / name).is_dir():
            shutil.rmtree(BASE / name)


# --------------------------------------------------------------------------- 3. MCP servers


# Before the server's own code: its hanging call leaves a mark first, so the test knows the call is under way.
IN_CALL = """
import time as _time
_sleep = _time.sleep
def _marked(seconds):
    open("in-call", "w").close()
    _sleep(seconds)
_time.sleep = _marked
"""


def hanging_mcp(root: Path, pid_file: Path) -> Path:
    from test_conformance import MCP_SERVER

    aip_tool(root, "demo.add", examples=[{"name": "two and two", "input": {"a": 2, "b": 2}, "output": {"sum": 4}}],
             inputs={"type": "object", "properties": {"a": {"type": "number"}, "b": {"type": "number"}}},
             outputs={"type": "object", "properties": {"sum": {"type": "number"}}})
    folder = aip_driver(root, "hangs", "demo.add", kind="mcp", transport="stdio",
                        server={"kind": "binary", "path": "python3", "args": ["server.py", str(pid_file)]},
                        entry={"metadata": {"mcp": {"tool_name": "add"}}}, files={"server.py": IN_CALL + MCP_SERVER})
    write(folder / "hang", "")  # the server never answers the call
    return folder


@pytest.mark.parametrize("number", [signal.SIGTERM, signal.SIGKILL])
def test_an_unsandboxed_mcp_server_dies_with_the_build(tmp_path: Path, number: int) -> None:
    pytest.importorskip("mcp")
    pid_file = tmp_path / "pids.txt"
    folder = hanging_mcp(tmp_path / "ws", pid_file)
    build = start_check(tmp_path / "ws", None, "--sandbox", "off")
    server = None
    try:
        while not (folder / "in-call").exists():  # a hang guard, not a timing assertion
            assert build.poll() is None, build.communicate()
            time.sleep(POLL_S)
        server = int(pid_file.read_text().split()[0])
        os.kill(build.pid, number)
        build.communicate(timeout=120)  # SIGTERM: the session is cancelled, not left to its 300 s timeout
        assert build.returncode == (143 if number == signal.SIGTERM else -9)
        assert gone(server), "the MCP server outlived the build"
    finally:
        if server is not None and alive(server):
            os.kill(server, signal.SIGKILL)


# an MCP server's stderr

SPAM = """
import sys
chunk = "x" * (1 << 20)
for _ in range(48):
    sys.stderr.write(chunk)
sys.stderr.write("the last line\\n")
sys.stderr.flush()
"""


def test_an_mcp_servers_stderr_never_reaches_the_disk(tmp_path: Path) -> None:
    pytest.importorskip("mcp")
    from test_conformance import MCP_SERVER

    aip_tool(tmp_path, "demo.add", examples=[{"name": "two and two", "input": {"a": 2, "b": 2}, "output": {"sum": 4}}],
             inputs={"type": "object", "properties": {"a": {"type": "number"}, "b": {"type": "number"}}},
             outputs={"type": "object", "properties": {"sum": {"type": "number"}}})
    aip_driver(tmp_path, "chatty", "demo.add", kind="mcp", transport="stdio",
               server={"kind": "binary", "path": "python3", "args": ["server.py"]},
               entry={"metadata": {"mcp": {"tool_name": "add"}}}, files={"server.py": SPAM + MCP_SERVER})

    def small_files() -> None:  # no file of the build may pass 16 MiB: 48 MiB of stderr on disk would
        resource.setrlimit(resource.RLIMIT_FSIZE, (16 << 20, 16 << 20))

    done = subprocess.run([sys.executable, "-m", "toolcatalog.cli", "check", str(tmp_path), "--no-cache", "--json", "--sandbox", "off"],
                          cwd=REPO, capture_output=True, text=True, timeout=120, preexec_fn=small_files)
    assert done.returncode == 0, done.stderr
    tool = json.loads(done.stdout)["tools"][0]
    assert tool["status"] == "passed", tool["examples"][0]  # the server was not stopped by a full disk
