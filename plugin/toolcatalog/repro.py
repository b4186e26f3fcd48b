"""Commands a reviewer can paste into a shell to reproduce a run: for pages and the command line.

`run_command` is one run of an example, outside the sandbox, from the workspace root: into
the folder it ran in, then the program with the input it was given. An implementation run
(no driver) got the example's input as JSON on stdin; a `kind: cli` driver's run got no
stdin (closed); other drivers (MCP servers, HTTP endpoints) cannot be replayed by one
command, so they get none, and `check_command` (`toolcatalog check --tool ID`) reruns them
all the way a build does.

Everything in these commands comes from the manifest, so it is attacker text: every word is
quoted for a POSIX shell (`shlex.quote`: single quotes, a `'` written as `'"'"'`), so
`$(...)`, backticks, `;`, quotes and newlines reach the program as the bytes they are and
never run. The input goes through `printf '%s\\n'`, not `echo` (dash's `echo` interprets
backslashes, which JSON is full of); JSON has no raw newline. Where the input holds a
character a terminal would act on or hide (controls, bidirectional overrides), it is written
with `\\u` escapes instead: the same JSON value.
"""

from __future__ import annotations

import json
import posixpath
import shlex
from typing import Any

from .model import Example, Run, Tool
from .report import printable

__all__ = ["check_command", "run_command"]


def check_command(tool: Tool) -> str:
    """`toolcatalog check --tool ID`, quoted: reruns everything of the tool like a build does."""
    return f"toolcatalog check --tool {shlex.quote(tool.id)}"


def run_command(tool: Tool, example: Example, run: Run) -> str | None:
    """The shell command that repeats `run` of `example` (None when no single command can)."""
    if not run.argv:
        return None
    if run.driver is None:  # registry: how a format's implementation is fed (speccify: the input on stdin)
        if not example.has_input:
            return None
        # An implementation that ran as itself is named by its file name: `./` keeps the shell from
        # looking it up on PATH instead.
        first = f"./{run.argv[0]}" if run.argv[0] in tool.implementations else run.argv[0]
        return f"{_cd(posixpath.dirname(tool.source))}printf '%s\\n' {shlex.quote(_json(example.input))} | {_words([first, *run.argv[1:]])}"
    driver = next((d for d in tool.drivers if d.id == run.driver), None)
    if driver is None or driver.kind != "cli":  # registry: which driver kinds take no stdin and one argv
        return None
    # A `bin` with a `/` ran from the driver's folder (the argv shows only its name): as written.
    binary = driver.fields.get("bin")
    first = binary if isinstance(binary, str) and "/" in binary else run.argv[0]
    return f"{_cd(posixpath.dirname(driver.source))}{_words([first, *run.argv[1:]])} < /dev/null"


def _words(argv: list[str]) -> str:
    return " ".join(shlex.quote(word) for word in argv)


def _cd(folder: str) -> str:
    return f"cd -- {shlex.quote(folder)} && " if folder and folder != "." else ""


def _json(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if printable(text) == text else json.dumps(value, ensure_ascii=True)
