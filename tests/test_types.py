"""The package type-checks: `mypy --strict` over plugin/ (the `[tool.mypy]` section of pyproject.toml).

One mypy process, cold, writing no cache (`--cache-dir=/dev/null`: a cache that outlives the run
could hide an error that a fresh clone shows; writing one that nothing reads cost 0.3-0.5 s of CPU). It follows the imports into the dependencies,
so a hook whose signature drifts from MkDocs' own, or a call that an SDK no longer accepts, is an
error here; on 2 cores that costs about 6-8 s of CPU.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib

REPO = Path(__file__).resolve().parent.parent
PACKAGE = REPO / "plugin" / "toolcatalog"
_ERROR = re.compile(r"^(?P<file>[^:\n]+\.pyi?):(?P<line>\d+): error: ", re.M)


def _mypy() -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MYPY")}
    return subprocess.run(
        [sys.executable, "-m", "mypy", "--config-file", str(REPO / "pyproject.toml"), "--cache-dir", os.devnull,
         "--no-color-output", "--no-error-summary", "--show-error-codes"],
        cwd=REPO, capture_output=True, text=True, timeout=600, env=env,
    )


def test_mypy_strict_finds_no_error() -> None:
    result = _mypy()
    errors = _ERROR.findall(result.stdout)
    per_module = Counter(file for file, _line in errors)
    summary = "\n".join(f"  {count:4d}  {file}" for file, count in sorted(per_module.items(), key=lambda i: (-i[1], i[0])))
    assert result.returncode == 0 and not errors, (
        f"mypy --strict: {len(errors)} errors in {len(per_module)} modules (exit {result.returncode})\n"
        f"{summary}\n\n{result.stdout}{result.stderr}"
    )


def test_the_checked_configuration_is_strict_over_the_whole_package() -> None:
    # A test that passes because it checks nothing is worse than none: pin what it checks.
    config = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["mypy"]
    assert config["strict"] is True
    assert config["files"] == ["plugin/toolcatalog"]
    assert config["python_version"] == "3.10"  # the oldest `requires-python` allows
    for override in config.get("overrides", []):
        # Only for a dependency without hints or stubs; never to silence the package's own modules.
        assert set(override) == {"module", "ignore_missing_imports"}, override
        assert not any(m == "toolcatalog" or m.startswith("toolcatalog.") for m in override["module"]), override


def test_the_package_says_it_is_typed() -> None:
    # PEP 561: without py.typed, a project that imports toolcatalog gets no checking of its calls.
    assert (PACKAGE / "py.typed").is_file()
