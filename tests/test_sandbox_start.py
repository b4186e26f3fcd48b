"""What starts the tool: the shells that replace slower helpers hand it exactly its environment.

Inside bubblewrap the caps are set by dash's `ulimit` (two file opens) instead of prlimit (which
loads its locale: about thirty opens, each a strace stop, before the tool starts), and outside it
the parent-death check runs in a shell too (process.py). dash drops variables whose names are not
shell identifiers and resets IFS, PPID and OPTIND, so both fall back to the untouched way for such
an environment (`shellenv.kept`); the tool always gets exactly the variables, limits and arguments
it was given.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from manifests import PLATFORM, speccify_tool
from procs import no_leftovers  # noqa: F401 (an autouse fixture)
from sitebuild import run_check, tool_of
from toolcatalog import sandbox, shellenv
from toolcatalog.process import run_process
from toolcatalog.sandbox import bwrap, limits

FACTS = sandbox.probe("auto")
needs_bwrap = pytest.mark.skipif(FACTS.mechanism != "bwrap", reason="needs bubblewrap with namespaces")
needs_dash = pytest.mark.skipif(limits.shell() is None or limits.limiter() is None, reason="needs dash and prlimit")
needs_linux = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the shell start is Linux-only")

# Variables a shell would drop (not identifiers), reset (IFS, PPID) or refuse (a non-numeric OPTIND).
ODD = {"IFS": ":", "PPID": "1", "OPTIND": "x", "ODD-NAME": "1", "BASH_FUNC_f%%": "() { :; }", "PLAIN": "a b"}

LOOK_PY = r"""
import json, os, resource, sys
json.load(sys.stdin)
seen = {"data": list(resource.getrlimit(resource.RLIMIT_DATA)), "fsize": list(resource.getrlimit(resource.RLIMIT_FSIZE)),
        "env": dict(os.environ), "argv": sys.argv[1:]}
print(json.dumps({"ok": True, "seen": json.dumps(seen, sort_keys=True)}))
"""


def test_the_shell_is_used_only_for_environments_it_keeps() -> None:
    assert shellenv.kept({"PATH": "/usr/bin", "HOME": "/h", "LC_ALL": "C.UTF-8", "_X1": ""})
    for name in ODD:
        if name != "PLAIN":
            assert not shellenv.kept({"PATH": "/usr/bin", name: ODD[name]}), name
    assert not shellenv.kept({"PWD": "/x"})


@needs_linux
def test_an_unsandboxed_run_gets_every_variable_unchanged(tmp_path: Path) -> None:
    env = {"PATH": "/usr/bin:/bin", **ODD}
    result = run_process(["/usr/bin/env"], cwd=tmp_path, stdin=None, timeout_s=10, env=env)
    assert result.ok, result
    seen = dict(line.split("=", 1) for line in result.stdout.decode().splitlines())
    assert seen == env


@needs_dash
def test_the_caps_are_set_by_dash_with_the_values_prlimit_gets() -> None:
    caps = limits.Limits(memory_mb=300, processes=50, file_mb=7)
    command = ["python3", "tool.py", "a b", '"$x"', "-c"]
    argv = limits.shell_wrap(command, caps, limits.limiter(), limits.RLIMIT, {"PATH": "/usr/bin"}, limits.shell())
    assert argv[0] == limits.shell() and argv[-len(command):] == command
    assert "ulimit -d 307200 && ulimit -f 14336 && ulimit -p 50 && exec \"$@\"" == argv[2]
    for name, value in ODD.items():  # a variable the shell would change: prlimit, as before
        if name != "PLAIN":
            fallback = limits.shell_wrap(["t"], caps, limits.limiter(), limits.RLIMIT, {name: value}, limits.shell())
            assert fallback == limits.wrap(["t"], caps, limits.limiter(), limits.RLIMIT), name
    assert limits.shell_wrap(["t"], limits.Limits(), limits.limiter(), limits.RLIMIT, {}, limits.shell()) == ["t"]
    assert limits.shell_wrap(["t"], caps, None, limits.RLIMIT, {}, limits.shell()) == ["t"]  # nothing caps without prlimit either


def test_a_copied_working_folder_is_mounted_once(tmp_path: Path) -> None:
    cwd = str(tmp_path / "ws" / "tool")
    argv = bwrap.argv("bwrap", "userns", ["t"], cwd=cwd, workspace=str(tmp_path / "ws"), host=tmp_path / "run", copied=True,
                      visible=[cwd], hidden=[], network=False, masked=[str(tmp_path / "ws")])
    binds = [argv[i + 1:i + 3] for i, word in enumerate(argv) if word in ("--ro-bind", "--bind")]
    assert [b for b in binds if b[1] == cwd] == [[str(tmp_path / "run" / "work"), cwd]]
    shown = bwrap.argv("bwrap", "userns", ["t"], cwd=cwd, workspace=str(tmp_path / "ws"), host=tmp_path / "run", copied=False,
                       visible=[cwd], hidden=[], network=False)
    assert ["--ro-bind", cwd, cwd] == shown[shown.index(cwd) - 1:shown.index(cwd) + 2]


@needs_bwrap
@needs_dash
def test_a_sandboxed_tool_gets_the_caps_and_exactly_its_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ws = tmp_path / "ws"
    speccify_tool(ws, "look", [("looks", {"x": 1}, {"ok": True})], files={f"{PLATFORM}.py": LOOK_PY})
    found, _ = run_check(ws, sandbox_memory_mb=300, sandbox_file_mb=7)
    run = tool_of(found, "look").examples[0].runs[0]
    assert run.sandbox == "bwrap" and run.has_actual, (run.detail, run.stderr)
    seen = json.loads(run.actual["seen"])
    assert seen["data"] == [300 << 20, 300 << 20] and seen["fsize"] == [7 << 20, 7 << 20], seen
    # bubblewrap's PWD (the working folder, shown relative: results are scrubbed of the workspace
    # path), as prlimit passed it on; nothing of the shell's own.
    assert seen["env"].get("PWD", "").endswith(".agent/tools/look") and not {"SHLVL", "_", "OLDPWD"} & set(seen["env"]), seen["env"]
    # The variables the build passes on (`env`) arrive as they are, whichever starter ran.
    for name, value in ODD.items():
        monkeypatch.setenv(name, value)
    found, _ = run_check(ws, sandbox_memory_mb=300, sandbox_file_mb=7, env=list(ODD))
    run = tool_of(found, "look").examples[0].runs[0]
    assert run.sandbox == "bwrap" and run.has_actual, (run.detail, run.stderr)
    seen = json.loads(run.actual["seen"])
    assert {name: seen["env"].get(name) for name in ODD} == ODD, seen["env"]
    assert seen["data"] == [300 << 20, 300 << 20] and seen["fsize"] == [7 << 20, 7 << 20], seen


@pytest.mark.skipif(limits.shell() is None, reason="needs dash")
def test_the_order_dash_hands_the_environment_on_is_known_exactly(tmp_path: Path) -> None:
    # Our tracer's runs start the tool without dash in front: where dash stood there before, the
    # tool gets its environment in dash's order (its variable table's), PWD included.
    import random
    import string
    import subprocess

    pick = random.Random(21)
    own = ["MAIL", "MAILPATH", "PATH", "PS1", "PS2", "PS4", "LINENO", "TERM", "HISTSIZE", "ATTY", "HOME", "TMPDIR"]
    for _ in range(60):
        names = set(pick.sample(own, pick.randint(0, len(own))))
        while len(names) < pick.randint(4, 30):
            names.add(pick.choice(string.ascii_letters + "_") + "".join(pick.choice(string.ascii_letters + string.digits + "_")
                                                                         for _ in range(pick.randint(0, 8))))
        ordered = list(names)
        pick.shuffle(ordered)
        env = {name: f"v {i}" for i, name in enumerate(ordered)}
        env["PWD"] = str(tmp_path)  # as bubblewrap sets it: last
        done = subprocess.run([str(limits.shell()), "-c", 'exec "$@"', "sh", "/usr/bin/env", "-0"], env=env, cwd=tmp_path,
                              capture_output=True, timeout=30, check=True)
        assert done.stdout == b"".join(f"{k}={v}".encode() + b"\0" for k, v in shellenv.dash_order(env).items())


def test_our_tracers_caps_are_the_values_prlimit_gets() -> None:
    caps = limits.Limits(memory_mb=300, processes=50, file_mb=7)
    assert limits.rlimits(caps, "/usr/bin/prlimit", limits.RLIMIT) == ((2, 300 << 20), (1, 7 << 20), (6, 50))
    assert limits.rlimits(caps, "/usr/bin/prlimit", limits.CGROUP) == ((2, 300 << 20), (1, 7 << 20))  # the group caps processes
    assert limits.rlimits(caps, None, limits.RLIMIT) == ()  # nothing caps without prlimit, as with dash (describe says so)
    assert limits.rlimits(limits.Limits(processes=1), "/p", limits.RLIMIT) == ((6, 2),)  # bubblewrap's init counts too
    assert limits.wrap(["t"], caps, "/p", limits.RLIMIT) == ["/p", f"--data={300 << 20}", f"--fsize={7 << 20}", "--nproc=50", "--", "t"]
