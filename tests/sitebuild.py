"""Helpers for tests that build real MkDocs sites in temporary folders."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parent.parent
CORPUS = REPO.parent / "shared" / "corpus"


def write(path: Path, text: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return path


def mkdocs_project(root: Path, plugin: dict[str, Any] | None = None, theme: Any = "mkdocs", **extra: Any) -> Path:
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


def build(root: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    result = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", *args],
        cwd=root,
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    if check and result.returncode != 0:
        raise AssertionError(f"mkdocs build failed ({result.returncode}):\n{result.stdout}\n{result.stderr}")
    return result


def catalog(root: Path, name: str = "catalog.json") -> dict[str, Any]:
    return json.loads((root / "site" / name).read_text(encoding="utf-8"))


SPECCIFY_TOOL = """
---
name: add-numbers
description: Adds two numbers and says whether the sum is even.
inputs:
  type: object
  required: [a, b]
  properties:
    a: {type: number, description: The first addend.}
    b: {type: number}
outputs:
  type: object
  required: [sum]
  properties:
    sum: {type: number}
effects: none; pure computation
requires: python3
platforms: linux, macos
---

## Behaviour

Adds `a` and `b`.

## Examples

### two and two
input: {"a": 2, "b": 2}
output: {"sum": 4}
"""

AIP14_TOOL = """
---
name: Echo text
id: text.echo
description: Echoes its input text back.
version: 1.2.0
mutates: []
risk_level: 0
idempotent: true
inputs:
  type: object
  required: [text]
  properties:
    text: {type: string}
outputs:
  type: object
  properties:
    text: {type: string}
tags: [text]
examples:
  - name: hello
    input: {text: hello}
    output: {text: hello}
---

## Description

Echo.
"""

AIP30_DRIVER = """
---
name: Echo CLI
id: echo-cli
description: Runs echo.py.
version: 1.0.0
kind: cli
bin: python3
bin_args: [echo.py]
output: {default_format: json}
implements:
  - tool: .tools/text.echo/TOOL.md
    version: "^1.0.0"
    metadata:
      cli:
        argv: ["--text", "${input.text}"]
---
"""

SMART_TOOL_MD = """
---
smart_tool_format: 1
name: tiny-smart
version: 0.3.0
description: A tiny smart tool for tests.
use_cases:
  - Testing
platforms:
  - linux
---

# tiny-smart

Guidance.
"""


ADD_NUMBERS_PY = """
import json, sys
data = json.load(sys.stdin)
print(json.dumps({"sum": data["a"] + data["b"]}))
"""

ECHO_PY = """
import argparse, json
parser = argparse.ArgumentParser()
parser.add_argument("--text", required=True)
print(json.dumps({"text": parser.parse_args().text}))
"""

TINY_SMART_CLI = r'''
import json, sys
HELP = """# tiny-smart

## Capabilities

- `count` [deterministic] -- Count words.
- `guess` [model-backed] -- Guess what the text means.
"""
args = sys.argv[1:]
if args in (["--help"], []):
    print(HELP)
elif args == ["-h"]:
    print("usage: tiny-smart <capability> [--help]")
elif args == ["count", "--help"]:
    print("# tiny-smart count\n\nDeterministic. Counts words.")
elif args == ["guess", "--help"]:
    print("# tiny-smart guess\n\nModel-backed. Needs a provider.")
elif args[:1] == ["count"]:
    print(json.dumps({"words": len(" ".join(args[1:]).split())}))
else:
    print(json.dumps({"error": {"code": "unknown_capability", "message": args[0], "remedy": "run --help"}}))
    sys.exit(2)
'''


def workspace_all_formats(root: Path) -> Path:
    """One valid, passing tool of every format, laid out where default discovery finds them."""
    write(root / ".agent/tools/add-numbers/TOOL.md", SPECCIFY_TOOL)
    write(root / ".agent/tools/add-numbers/linux.py", ADD_NUMBERS_PY)
    write(root / ".tools/text.echo/TOOL.md", AIP14_TOOL)
    write(root / ".drivers/echo-cli/DRIVER.md", AIP30_DRIVER)
    write(root / ".drivers/echo-cli/echo.py", ECHO_PY)
    dist = root / "packages/tiny-smart"
    descriptor = {"manifest": "src/tiny_smart/SMART_TOOL.md", "cli_argv": ["python3", "cli.py"], "deterministic_smoke": ["count", "a b"]}
    write(dist / "smart-tool.json", json.dumps(descriptor))
    write(dist / "pyproject.toml", '[project]\nname = "tiny-smart"\nversion = "0.3.0"\n')
    write(dist / "src/tiny_smart/SMART_TOOL.md", SMART_TOOL_MD)
    write(dist / "cli.py", TINY_SMART_CLI)
    return root
