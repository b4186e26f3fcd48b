"""run_process / scrubbed_env / interpreter_for, against real subprocesses."""

from __future__ import annotations

import json
import os
import resource
import stat
import sys
import time
from pathlib import Path

import pytest

from toolcatalog.process import PROVIDER_VARS, ProcessResult, interpreter_for, run_process, scrubbed_env

PY = sys.executable


def run(argv, tmp_path: Path, stdin: bytes | None = None, timeout_s: float = 10, **kw) -> ProcessResult:
    return run_process(argv, cwd=tmp_path, stdin=stdin, timeout_s=timeout_s, env=kw.pop("env", scrubbed_env()), **kw)


def py(code: str) -> list[str]:
    return [PY, "-c", code]


def is_dead(pid: int) -> bool:
    """Gone, or a zombie waiting for init to reap it (init reaps lazily in some containers)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return True
    return state in ("Z", "X")


def wait_dead(pid: int, within: float = 10.0) -> bool:
    """Whether `pid` is dead within `within` seconds (a loaded machine may take a while to deliver SIGKILL)."""
    end = time.monotonic() + within
    while time.monotonic() < end:
        if is_dead(pid):
            return True
        time.sleep(0.02)
    return is_dead(pid)


# --------------------------------------------------------------------------- basics


def test_stdin_passes_through_to_stdout(tmp_path):
    r = run(py("import sys; sys.stdout.write(sys.stdin.read().upper()); sys.stderr.write('note')"), tmp_path, b"hello")
    assert r.error is None
    assert r.exit_code == 0
    assert r.stdout == b"HELLO"
    assert r.stderr == b"note"
    assert not (r.timed_out or r.stdout_truncated or r.stderr_truncated)
    assert r.ok
    assert r.duration_s > 0
    assert r.argv[0] == PY


def test_child_reads_stdin_to_eof(tmp_path):
    data = os.urandom(3 << 20)  # larger than any pipe buffer
    r = run(py("import sys, hashlib; print(hashlib.sha256(sys.stdin.buffer.read()).hexdigest())"), tmp_path, data)
    import hashlib

    assert r.exit_code == 0, r.stderr
    assert r.stdout.decode().strip() == hashlib.sha256(data).hexdigest()


def test_no_stdin_means_devnull(tmp_path):
    r = run(py("import sys; print(repr(sys.stdin.read()))"), tmp_path, None)
    assert r.exit_code == 0
    assert r.stdout.strip() == b"''"


def test_exit_code_and_cwd(tmp_path):
    r = run(py("import os, sys; print(os.getcwd()); sys.exit(3)"), tmp_path)
    assert r.exit_code == 3
    assert not r.ok
    assert Path(r.stdout.decode().strip()).resolve() == tmp_path.resolve()


def test_child_that_never_reads_stdin_does_not_deadlock(tmp_path):
    r = run(py("import time; print('done'); time.sleep(0.2)"), tmp_path, b"x" * (1 << 20), timeout_s=30)
    assert r.exit_code == 0  # a deadlock on the stdin pipe would end in the timeout instead
    assert r.stdout == b"done\n"
    assert not r.timed_out


def test_child_writes_lots_before_reading_stdin(tmp_path):
    # 512 KB out before it reads 1 MB in: both pipes must be serviced at once.
    code = "import sys; sys.stdout.write('y' * (512 << 10)); sys.stdout.flush(); n = len(sys.stdin.buffer.read()); sys.stderr.write(str(n))"
    r = run(py(code), tmp_path, b"x" * (1 << 20), timeout_s=10)
    assert r.exit_code == 0
    assert r.stdout == b"y" * (512 << 10)
    assert r.stderr == str(1 << 20).encode()


# --------------------------------------------------------------------------- timeouts and process groups


def test_timeout_kills_grandchild_holding_the_pipe(tmp_path):
    script = tmp_path / "hold.sh"
    survived = tmp_path / "survived"
    script.write_text(f"(sleep 30; touch {survived}) &\necho $!\nsleep 60\n")
    r = run(["sh", str(script)], tmp_path, timeout_s=1.0)
    assert r.timed_out
    assert r.exit_code is not None and r.exit_code < 0  # killed by a signal
    grandchild = int(r.stdout.split()[0])
    assert wait_dead(grandchild)
    assert not survived.exists()  # killed with the group, not waited for until its pipe closed


def test_timeout_kills_python_grandchild(tmp_path):
    survived = tmp_path / "survived"
    grandchild = f"import time; time.sleep(30); open({str(survived)!r}, 'w')"
    code = (
        "import subprocess, sys, time\n"
        f"p = subprocess.Popen([sys.executable, '-c', {grandchild!r}])\n"
        "print(p.pid, flush=True)\n"
        "time.sleep(60)\n"
    )
    r = run(py(code), tmp_path, timeout_s=1.0)
    assert r.timed_out
    assert wait_dead(int(r.stdout.split()[0]))
    assert not survived.exists()


def test_leader_exits_but_background_child_keeps_pipe(tmp_path):
    # `sh -c 'sleep 100 & echo hi'`: the leader is done; the leftover must not keep us until the deadline.
    r = run(["sh", "-c", "sleep 100 & echo $!; echo hi"], tmp_path, timeout_s=60)
    assert not r.timed_out  # waiting for the leftover's pipe would have ended in the timeout
    assert r.exit_code == 0
    pid_line, hi = r.stdout.split()
    assert hi == b"hi"
    assert wait_dead(int(pid_line))


def test_background_child_with_own_stdio_is_killed_after_leader_exits(tmp_path):
    r = run(["sh", "-c", "sleep 100 >/dev/null 2>&1 </dev/null & echo $!"], tmp_path, timeout_s=60)
    assert r.exit_code == 0 and not r.timed_out
    assert wait_dead(int(r.stdout.split()[0]))


# --------------------------------------------------------------------------- caps


def test_stdout_cap_keeps_memory_flat(tmp_path):
    code = "import sys\nb = b'x' * (1 << 20)\nfor _ in range(300): sys.stdout.buffer.write(b)\n"
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux
    r = run(py(code), tmp_path, timeout_s=60)
    after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    assert r.stdout_truncated
    assert not r.timed_out  # stopped by the cap, not by the clock
    assert len(r.stdout) <= 1 << 20
    assert len(r.stdout) > 0
    assert after - before < 60 * 1024


def test_custom_stdout_cap_exact_fit_is_not_truncated(tmp_path):
    r = run(py("import sys; sys.stdout.write('a' * 1000)"), tmp_path, max_stdout=1000)
    assert r.stdout == b"a" * 1000
    assert not r.stdout_truncated
    r = run(py("import sys; sys.stdout.write('a' * 1001)"), tmp_path, max_stdout=1000)
    assert r.stdout == b"a" * 1000
    assert r.stdout_truncated


def test_stderr_cap(tmp_path):
    code = "import sys\nsys.stdout.write('ok')\nsys.stdout.flush()\nb = b'e' * 65536\nfor _ in range(200): sys.stderr.buffer.write(b)\n"
    r = run(py(code), tmp_path, max_stderr=4096)
    assert r.stderr_truncated
    assert not r.stdout_truncated
    assert len(r.stderr) <= 4096
    assert r.stdout == b"ok"
    assert not r.ok


# --------------------------------------------------------------------------- failures to start


def test_missing_binary(tmp_path):
    r = run(["definitely-not-a-command-xyz"], tmp_path)
    assert r.exit_code is None
    assert r.error == "command not found: definitely-not-a-command-xyz"
    assert r.stdout == b"" and r.stderr == b""
    assert not r.ok


def test_not_executable(tmp_path):
    script = tmp_path / "plain.sh"
    script.write_text("echo hi\n")
    r = run([str(script)], tmp_path)
    assert r.exit_code is None
    assert r.error is not None and "permission denied" in r.error


def test_missing_working_directory(tmp_path):
    r = run_process(["true"], cwd=tmp_path / "nope", stdin=None, timeout_s=5, env=scrubbed_env())
    assert r.exit_code is None
    assert r.error is not None and "working directory" in r.error


def test_empty_argv(tmp_path):
    r = run([], tmp_path)
    assert r.exit_code is None and r.error


# --------------------------------------------------------------------------- environment


def test_scrubbed_env_drops_provider_vars_and_keeps_path(tmp_path, monkeypatch):
    monkeypatch.setenv("FOO_API_KEY", "secret")
    monkeypatch.setenv("MY_SETTING", "kept")
    monkeypatch.setenv("UNLISTED_THING", "not copied")
    env = scrubbed_env(extra_names=["FOO_API_KEY", "MY_SETTING"], extra={"EXTRA_ONE": "1"}, drop_provider_vars=True)
    assert "FOO_API_KEY" not in env
    assert env["MY_SETTING"] == "kept"
    assert env["EXTRA_ONE"] == "1"
    assert env["PATH"] == os.environ["PATH"]
    assert env["PYTHONDONTWRITEBYTECODE"] == "1"
    assert "UNLISTED_THING" not in env

    r = run(py("import json, os; print(json.dumps(dict(os.environ)))"), tmp_path, env=env)
    seen = json.loads(r.stdout)
    seen.pop("LC_CTYPE", None)  # Python may coerce the C locale (PEP 538)
    expected = dict(env)
    expected.pop("LC_CTYPE", None)
    assert seen == expected


def test_scrubbed_env_keeps_listed_names_without_drop(monkeypatch):
    monkeypatch.setenv("FOO_API_KEY", "secret")
    assert scrubbed_env(extra_names=["FOO_API_KEY"])["FOO_API_KEY"] == "secret"
    assert "FOO_API_KEY" not in scrubbed_env()


@pytest.mark.parametrize(
    "name",
    ["FOO_API_KEY", "aws_access_key_id", "MY_SECRET", "GH_TOKEN", "anthropic_base_url", "OPENAI_ORG",
     "AZURE_OPENAI_ENDPOINT", "GOOGLE_API_KEY", "GEMINI_X", "MISTRAL", "COHERE_X", "GROQ_X", "TOGETHER_X",
     "PERPLEXITY_X", "AMPLIFIER_HOME", "LLM_URL", "DEFAULT_LLM", "MODEL_NAME", "CHAT_MODEL", "MY_PROVIDER_URL"],
)
def test_provider_vars_match(name):
    assert PROVIDER_VARS.search(name)


@pytest.mark.parametrize("name", ["PATH", "HOME", "TOKENIZER", "LANG", "MY_TOKEN_FILE", "TZ"])
def test_provider_vars_do_not_match(name):
    assert not PROVIDER_VARS.search(name)


# --------------------------------------------------------------------------- interpreter_for


def test_interpreter_for_python_uses_sys_executable(tmp_path):
    tool = tmp_path / "linux.py"
    tool.write_text("import sys, json; json.dump({'ok': True}, sys.stdout)\n")
    argv = interpreter_for(tool)
    assert argv == [os.path.abspath(sys.executable), str(tool)]
    r = run(argv, tmp_path)
    assert r.stdout == b'{"ok": true}'


def test_interpreter_for_executable_runs_directly(tmp_path):
    tool = tmp_path / "tool.sh"
    tool.write_text("#!/bin/sh\necho direct\n")
    tool.chmod(tool.stat().st_mode | stat.S_IXUSR)
    assert interpreter_for(tool) == [str(tool)]
    r = run(interpreter_for(tool), tmp_path)
    assert r.exit_code == 0 and r.stdout == b"direct\n"


def test_interpreter_for_shell_script_not_executable(tmp_path):
    tool = tmp_path / "tool.sh"
    tool.write_text("echo via-shell\n")
    argv = interpreter_for(tool)
    assert argv is not None and os.path.isabs(argv[0]) and os.path.basename(argv[0]) in ("bash", "sh")
    assert argv[-1] == str(tool)
    assert run(argv, tmp_path).stdout == b"via-shell\n"


def test_interpreter_for_unknown_suffix(tmp_path):
    tool = tmp_path / "tool.xyz"
    tool.write_text("whatever\n")
    assert interpreter_for(tool) is None
    assert interpreter_for(tmp_path / "missing.xyz") is None


def test_interpreter_for_ps1_never_runs_directly(tmp_path):
    tool = tmp_path / "tool.ps1"
    tool.write_text("Write-Output hi\n")
    tool.chmod(tool.stat().st_mode | stat.S_IXUSR)
    argv = interpreter_for(tool)
    assert argv != [str(tool)]
    if argv is not None:
        assert argv[1:] == ["-NoProfile", "-File", str(tool)]
