"""Whether a POSIX shell started with `exec "$@"` hands the program exactly the environment it got.

Two start-up helpers exec the program through `/bin/sh -c '... exec "$@"'` (process.py: the
parent-death check; sandbox/limits.py: the caps set with `ulimit`) because a shell starts in a
fraction of the time of the program it replaces. A shell is not transparent for every environment,
though: dash (Debian's /bin/sh) drops variables whose names are not shell identifiers
(`BASH_FUNC_f%%`, `a-b`), resets `IFS` and `PPID`, refuses a non-numeric `OPTIND`, and sets `PWD`
(the helpers unset it again). `kept(env)` says whether none of that can happen; where it could, the
helpers start the program the slower way, which passes the environment untouched.
"""

from __future__ import annotations

import re
from typing import Mapping

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
SHELL_OWN = frozenset({"IFS", "OPTIND", "PPID", "PWD"})  # the shell sets, resets or checks these itself


def kept(env: Mapping[str, str]) -> bool:
    """Whether `/bin/sh -c 'unset PWD; exec "$@"'` passes `env` on unchanged."""
    return all(_NAME.match(name) is not None and name not in SHELL_OWN for name in env)
