"""Unsandboxed runs started through the spawner (spawner.py): one exec per run, and the same
behaviour as the old start (setpriv and a shell, or a fork): pipes, exit codes, signals, timeouts,
exact environment, nothing inherited but 0, 1 and 2, the same start errors, and death with the build."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from toolcatalog import process, spawner
from toolcatalog.process import run_process, scrubbed_env

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux") or not spawner.available(), reason="the spawner is Linux-only")

PY = sys.executable


def run(argv: list[str], cwd: Path, stdin: bytes | None = b"", timeout_s: float = 10, env: dict[str, str] | None = None,
        helper: bool = True) -> process.ProcessResult:
    return run_process(argv, cwd=cwd, stdin=stdin, timeout_s=timeout_s, env=scrubbed_env() if env is None else env, helper=helper)


def gone(pid: int, within: float = 20.0) -> bool:
    end = time.monotonic() + within
    while time.monotonic() < end:  # a hang guard, not a timing assertion
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            return True
        if state in ("Z", "X"):
            return True
        time.sleep(0.02)
    return False


def test_a_spawned_run_gets_its_stdin_its_folder_its_own_session_and_nothing_else(tmp_path: Path) -> None:
    code = ("import os, signal, sys\n"
            "data = sys.stdin.read()\n"
            "print(data.upper(), os.getcwd(), os.getsid(0) == os.getpid() == os.getpgid(0), sorted(os.listdir('/proc/self/fd')),"
            " signal.pthread_sigmask(signal.SIG_BLOCK, []))\n"
            "sys.exit(3)\n")
    result = run([PY, "-c", code], tmp_path, stdin=b"hello")
    assert result.error is None and result.exit_code == 3
    words = result.stdout.decode().split(" ", 2)
    assert words[0] == "HELLO" and words[1] == str(tmp_path)
    assert words[2].strip() == "True ['0', '1', '2', '3'] set()"  # 3: the listing's own descriptor


def test_a_spawned_run_ignores_and_blocks_the_signals_an_old_start_does(tmp_path: Path) -> None:
    """None: Python ignores SIGPIPE and SIGXFSZ, the spawner SIGINT, and none of it may reach the run."""
    argv = ["/bin/grep", "-E", "^Sig(Ign|Blk)", "/proc/self/status"]
    # The old start passes on the blocked signals of the thread that starts it (a test runner's may
    # block some): it starts from a thread that blocks none. The spawner clears its own mask.
    found: list[Any] = []

    def old_start() -> None:
        signal.pthread_sigmask(signal.SIG_SETMASK, [])
        found.append(run(argv, tmp_path, stdin=None, helper=False))

    thread = threading.Thread(target=old_start)
    thread.start()
    thread.join()
    new, old = run(argv, tmp_path, stdin=None), found[0]
    assert new.stdout == old.stdout == b"SigBlk:\t0000000000000000\nSigIgn:\t0000000000000000\n"


def test_a_spawned_run_gets_exactly_the_environment_given(tmp_path: Path) -> None:
    env = {"A": "1", "PWD": "/nowhere", "IFS": "x", "a-b": "c", "EMPTY": ""}
    result = run(["/usr/bin/env"], tmp_path, stdin=None, env=env)
    assert sorted(result.stdout.decode().splitlines()) == sorted(f"{k}={v}" for k, v in env.items())


def test_exit_codes_signals_and_caps_are_as_before(tmp_path: Path) -> None:
    killed = run(["/bin/sh", "-c", "kill -9 $$"], tmp_path, stdin=None)
    assert killed.exit_code == -9 and not killed.timed_out
    capped = run(["/bin/sh", "-c", "yes | head -c 3000000"], tmp_path, stdin=None)
    assert capped.stdout_truncated and len(capped.stdout) == 1 << 20
    no_stdin = run(["/bin/sh", "-c", "cat; echo done"], tmp_path, stdin=None)
    assert no_stdin.stdout == b"done\n" and no_stdin.exit_code == 0


def test_a_timeout_kills_the_whole_group_of_a_spawned_run(tmp_path: Path) -> None:
    pid_file = tmp_path / "grandchild"
    result = run(["/bin/sh", "-c", f"sleep 300 & echo $! > {pid_file}; wait"], tmp_path, stdin=None, timeout_s=1)
    assert result.timed_out and result.exit_code == -9
    assert gone(int(pid_file.read_text()))


@pytest.mark.parametrize("case", ["no folder", "not executable", "no such command"])
def test_start_errors_are_the_same_as_the_old_starts(tmp_path: Path, case: str) -> None:
    script = tmp_path / "tool.sh"
    script.write_text("#!/bin/sh\necho hi\n")
    if case == "no folder":
        argv, cwd = ["/bin/echo", "x"], tmp_path / "missing"
    elif case == "no such command":
        argv, cwd = ["toolcatalog-no-such-command"], tmp_path
    else:
        script.chmod(0o644)
        argv, cwd = [str(script)], tmp_path
    old = run(argv, cwd, helper=False)
    new = run(argv, cwd)
    assert new.error == old.error and new.error is not None and new.exit_code is None


BUILD = textwrap.dedent("""
    import sys
    from pathlib import Path
    from toolcatalog.process import run_process, scrubbed_env
    out = sys.argv[1]
    run_process(["/bin/sh", "-c", "sleep 300 & echo $$ $! > " + out + ".tmp; mv " + out + ".tmp " + out + "; wait"],
                cwd=Path("/"), stdin=b"", timeout_s=600, env=scrubbed_env(), helper=True)
""")


def test_a_spawned_run_and_its_group_die_when_the_build_is_killed(tmp_path: Path) -> None:
    """SIGKILL of the build, as the OOM killer would: no handler of the build runs, and the run
    ends, with the process it started in its group (the old start's parent-death signal ended only
    the run's own process)."""
    pid_file = tmp_path / "pids"
    build = subprocess.Popen([PY, "-c", BUILD, str(pid_file)], env={**os.environ})
    pids: list[int] = []
    try:
        end = time.monotonic() + 60
        while not pid_file.exists():  # a hang guard, not a timing assertion
            assert build.poll() is None and time.monotonic() < end, "the build ended before its run started"
            time.sleep(0.02)
        pids = [int(p) for p in pid_file.read_text().split()]
        assert len(pids) == 2 and all(Path(f"/proc/{pid}").exists() for pid in pids)
        build.kill()
        build.wait()
        assert gone(pids[0]), "the run outlived the build"
        assert gone(pids[1]), "the process the run started in its group outlived the build"
    finally:
        if build.poll() is None:
            build.kill()
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass


def test_signals_the_build_was_started_ignoring_reach_no_spawned_run(tmp_path: Path) -> None:
    """A build started from a shell's background job (SIGINT and SIGQUIT ignored) or under nohup
    (SIGHUP): a disposition of SIG_IGN survives exec, and a run must not depend on how the build
    was started."""
    code = textwrap.dedent(f"""
        import signal, sys
        sys.path.insert(0, {str(Path(process.__file__).parent.parent)!r})
        for number in (signal.SIGINT, signal.SIGQUIT, signal.SIGHUP, signal.SIGUSR1):
            signal.signal(number, signal.SIG_IGN)
        from pathlib import Path
        from toolcatalog import spawner
        from toolcatalog.process import run_process, scrubbed_env
        assert spawner.available()
        result = run_process(["/bin/grep", "-E", "^SigIgn", "/proc/self/status"], cwd=Path({str(tmp_path)!r}), stdin=None,
                             timeout_s=10, env=scrubbed_env(), helper=True)
        sys.stdout.write(result.stdout.decode())
    """)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "SigIgn:\t0000000000000000\n"  # the old spawner's run: 0x207 (SIGINT, SIGQUIT, SIGHUP, SIGUSR1)
