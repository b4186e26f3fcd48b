"""What the command line does differently on a terminal: progress, colour and width.

A line of progress goes to stderr, rewritten in place (`\\r` and "erase line"), only where a
person watches: stderr is a terminal and `CI` is not set, unless `--progress` asks for it
(then it is written even to a pipe or a CI log) or `--quiet` silences it. It says how many
of the runs are done, their rate and the tool being waited on, and is erased when the work
ends, so what is printed after it starts on a clean line.

Colour follows the conventions of no-color.org and force-color.org: `NO_COLOR` (non-empty)
turns it off, `FORCE_COLOR` (non-empty, not `0`) turns it on even in a pipe, and otherwise a
terminal that is not `TERM=dumb` gets it. The width of a table is `COLUMNS` when it is a
positive number, else the terminal's; a pipe without `COLUMNS` has no width (lines are not
wrapped, so a program reading them gets whole lines).

Everything shown here passes through `report.printable` first: a tool's id or name never
moves the cursor.
"""

from __future__ import annotations

import os
import shutil
import textwrap
import threading
import time
from typing import Mapping, TextIO

from .report import printable

__all__ = ["Progress", "colour", "paint", "progress_wanted", "width", "wrap"]

_ERASE = "\r\x1b[2K"
_CODES = {"red": "31", "green": "32", "yellow": "33", "blue": "34", "dim": "2", "bold": "1"}


def _is_tty(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # a closed or replaced stream
        return False


def colour(stream: TextIO, env: Mapping[str, str] | None = None) -> bool:
    """Whether to colour what goes to `stream` (NO_COLOR, FORCE_COLOR, then: a terminal)."""
    env = os.environ if env is None else env
    if env.get("NO_COLOR"):
        return False
    forced = env.get("FORCE_COLOR")
    if forced is not None and forced != "":
        return forced != "0"
    return _is_tty(stream) and env.get("TERM") != "dumb"


def paint(text: str, style: str, on: bool) -> str:
    """`text` in `style` (a key of the colour table) when `on`."""
    return f"\x1b[{_CODES[style]}m{text}\x1b[0m" if on and style in _CODES else text


def width(stream: TextIO, env: Mapping[str, str] | None = None) -> int | None:
    """The columns a table may use: `COLUMNS`, else the terminal's, else None (no limit)."""
    env = os.environ if env is None else env
    given = env.get("COLUMNS", "")
    if given.isdigit() and int(given) > 0:
        return int(given)
    if not _is_tty(stream):
        return None
    try:
        return os.get_terminal_size(stream.fileno()).columns or None
    except (OSError, ValueError, AttributeError):
        return shutil.get_terminal_size((0, 0)).columns or None


def wrap(text: str, first: int, indent: int, limit: int | None) -> list[str]:
    """`text` as lines of at most `limit` columns: the first starts at column `first`, the
    others at `indent` (spaces added). Words longer than a line are broken; no limit: one line."""
    if limit is None or limit - first < 20:  # too narrow to wrap usefully: whole lines
        return [text]
    lines = textwrap.wrap(text, width=limit - first, break_long_words=True, break_on_hyphens=False) or [""]
    rest = " ".join(lines[1:])
    if not rest:
        return lines[:1]
    more = textwrap.wrap(rest, width=max(20, limit - indent), break_long_words=True, break_on_hyphens=False)
    return [lines[0], *(" " * indent + line for line in more)]


def progress_wanted(stream: TextIO, asked: bool, quiet: bool, env: Mapping[str, str] | None = None) -> bool:
    """Progress is shown when asked (`--progress`), never when `--quiet`, else on a terminal outside CI."""
    env = os.environ if env is None else env
    if quiet:
        return False
    return asked or (_is_tty(stream) and not env.get("CI"))


class Progress:
    """One line of progress on `stream`, rewritten in place; `done()` erases it."""

    def __init__(self, stream: TextIO, enabled: bool, columns: int | None = None):
        self.stream = stream
        self.enabled = enabled
        self.columns = columns
        self.started = time.monotonic()
        self.shown = False
        self.lock = threading.Lock()

    def say(self, text: str) -> None:
        """Show `text` (a status: "harvesting ./"), replacing what was shown."""
        if not self.enabled:
            return
        line = printable(text)
        if self.columns:
            line = line[: max(1, self.columns - 1)]
        with self.lock:
            self.stream.write(_ERASE + line)
            self.stream.flush()
            self.shown = True

    def runs(self, finished: int, total: int, current: str) -> None:
        """A count of runs: how many of `total` are done, their rate, the tool waited on."""
        seconds = max(time.monotonic() - self.started, 1e-6)
        rate = f", {finished / seconds:.1f}/s" if finished else ""
        self.say(f"checking: {finished}/{total} runs done{rate}; {current}")

    def done(self) -> None:
        """Erase the line (what is printed next starts at column 0)."""
        if self.enabled and self.shown:
            with self.lock:
                self.stream.write(_ERASE)
                self.stream.flush()
                self.shown = False
