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


# dash's variable table (var.c): 39 buckets, a variable's bucket from its name, and in each bucket
# first the shell's own variables in the order dash declares them (those it was given are exported
# in place), then the ones imported from the environment, in the order they came. `exec` hands the
# program its exported variables in that order.
_DASH_BUCKETS = 39
_DASH_OWN = ("IFS", "MAIL", "MAILPATH", "PATH", "PS1", "PS2", "PS4", "OPTIND", "LINENO")


def _dash_bucket(name: str) -> int:
    raw = name.encode()
    return ((raw[0] << 4) + sum(raw)) % _DASH_BUCKETS


def dash_order(env: Mapping[str, str]) -> dict[str, str]:
    """`env` (which `kept` keeps) in the order dash's `exec "$@"` passes it on: what a program
    started through dash got, byte for byte, now that it is started without it (tests check the
    order against dash itself)."""
    rank = {name: (_dash_bucket(name), 0, _DASH_OWN.index(name)) if name in _DASH_OWN else (_dash_bucket(name), 1, index)
            for index, name in enumerate(env)}
    return {name: env[name] for name in sorted(env, key=rank.__getitem__)}
