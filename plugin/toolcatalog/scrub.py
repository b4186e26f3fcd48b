"""This machine's absolute paths in text a tool printed, rewritten so no page or catalog shows them.

A tool's output, stderr and error messages can hold the workspace's absolute path, the folders
searched outside it (`paths: [../other-repo]`) and the home folder. `scrubber` rewrites them
(workspace-relative, `../other-repo`, `~`); the engine applies it once to every result before it
reaches the model, so pages, catalog.json and the command line all show the same text.
"""

from __future__ import annotations

import math
import os
import re
from pathlib import Path
from typing import Any, Callable, Iterable

Scrub = Callable[[str], str]


def scrubber(root: Path, others: Iterable[Path] = ()) -> Scrub:
    """A function that rewrites this machine's absolute paths in a string.

    The workspace `root` becomes relative (`<root>/a/b` -> `a/b`, `<root>` -> `.`), each folder of
    `others` (folders searched outside it) its path relative to `root` (`../other-repo`), and the
    home folder `~`. Longest first, and only whole path components (`/work/main` never matches
    inside `/work/main2`), where a path starts: a home of `/root` is not rewritten inside
    `/proc/thread-self/root/dev/x` (nor `/srv/root`), which would read `/proc/thread-self~/dev/x`.
    """
    candidates: dict[str, str] = {}
    home = os.path.expanduser("~")
    for value in (home, os.path.realpath(home)):
        candidates[value.rstrip(os.sep)] = "~"
    for other in others:
        label = os.path.relpath(os.path.abspath(other), os.path.abspath(root)) if _same_drive(other, root) else ""
        if not label or label == "." or not label.startswith(".."):
            continue  # inside the workspace: the root's own rule covers it
        label = label.replace(os.sep, "/")
        for value in (os.path.abspath(other), os.path.realpath(other)):
            candidates[value.rstrip(os.sep) + os.sep] = label + "/"
            candidates[value.rstrip(os.sep)] = label
    for value in (str(root), os.path.realpath(root)):
        candidates[value.rstrip(os.sep) + os.sep] = ""
        candidates[value.rstrip(os.sep)] = "."
    # A one-component prefix ("/") would rewrite every path; "/root" or "/home" is fine.
    usable = sorted(((p, r) for p, r in candidates.items() if len(p.strip(os.sep)) > 0), key=lambda x: (-len(x[0]), x[0]))
    # Not after a name's character (`.` and `-` included): there the path is a part of another.
    pattern = re.compile(r"(?<![\w.\-])(?:" + "|".join(re.escape(p) + ("" if p.endswith(os.sep) else r"(?![\w\-]|\.[\w\-])")
                                                       for p, _ in usable) + ")")
    table = dict(usable)

    def scrub(text: str) -> str:
        if not usable or os.sep not in text:
            return text
        return pattern.sub(lambda m: table[m.group(0)], text)

    return scrub


def _same_drive(a: Path, b: Path) -> bool:
    return os.path.splitdrive(os.path.abspath(a))[0].lower() == os.path.splitdrive(os.path.abspath(b))[0].lower()


_DOUBLE_MAX = int(1.7976931348623157e308)  # the largest finite double, as an integer


def clean(value: Any, scrub: Scrub | None = None) -> Any:
    """`value` as strict JSON: `scrub` applied to every string; NaN, infinities and integers too
    large for a double (beyond about 1.8e308, which a JSON reader would make infinite) made null."""
    if isinstance(value, str):
        return scrub(value) if scrub else value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) > _DOUBLE_MAX:
        return None
    if isinstance(value, dict):
        return {(scrub(k) if scrub and isinstance(k, str) else k): clean(v, scrub) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [clean(v, scrub) for v in value]
    return value
