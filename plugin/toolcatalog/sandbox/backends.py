"""Every sandbox mechanism, listed once, each behind one interface: probe, prepare, describe.

A `Backend` is what `Facts.mechanism` names. Its three functions:

- `probe(mode) -> Attempt`: whether it works on this machine, by really starting it (`probe.py`);
- `prepare(facts, command, cwd, env, ws, root, visible, network, log, hidden, allowed, gated=False, own=False) -> Launch`:
  one run's command line and throwaway folders, once the common part is done (`launch.py`; `gated`:
  it may wait behind a gate, `Launch.held` or `Launch.gate`, where the backend can do that, else it
  is ignored; `own`: our tracer watches it, which can set its caps and hold it at its gate);
- `describe(facts, network) -> str`: the one line pages and the catalog show for a run's profile.

`BACKENDS` is the order they are tried in (best first); `OFF` is the absence of a sandbox
(`sandbox: off`, or nothing works), which has no launcher. The functions are named by reference
(`"toolcatalog.sandbox.probe:probe_bwrap"`) because they live in modules above this one:
`probe.py` binds the probe and describe references and `launch.py` the prepare ones, each only
into modules it may import anyway (tests/test_registry.py checks it). Adding a backend: its
module(s) with the three functions, and one entry in `BACKENDS`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Callable

from .. import references

_REFERENCE = re.compile(r"^toolcatalog\.sandbox\.[a-z_]+:[A-Za-z_][A-Za-z0-9_]*$")


@dataclass(frozen=True)
class Backend:
    """One sandbox mechanism."""

    id: str  # `Facts.mechanism` (and a run's `sandbox`), e.g. "bwrap"
    title: str  # its name in the log and on pages, e.g. "bubblewrap"
    probe: str  # "module:function" (mode) -> probe.Attempt
    prepare: str  # "module:function" (...) -> launch.Launch; "" when nothing is launched
    describe: str  # "module:function" (facts, network) -> str
    modes: tuple[str, ...]  # the `sandbox` option's values under which it may be chosen


BWRAP = Backend("bwrap", "bubblewrap", "toolcatalog.sandbox.probe:probe_bwrap",
                "toolcatalog.sandbox.launch:start_bubblewrap", "toolcatalog.sandbox.probe:describe_bwrap",
                ("auto", "required", "bubblewrap"))
LANDLOCK = Backend("landlock", "Landlock", "toolcatalog.sandbox.probe:probe_landlock",
                   "toolcatalog.sandbox.launch:start_landlock", "toolcatalog.sandbox.probe:describe_landlock",
                   ("auto", "required"))
OFF = Backend("off", "no sandbox", "toolcatalog.sandbox.probe:probe_off", "", "toolcatalog.sandbox.probe:describe_off",
              ("off",))

# Tried in this order; the first that works is the build's sandbox.
BACKENDS: tuple[Backend, ...] = (BWRAP, LANDLOCK)
_BY_ID = {b.id: b for b in (*BACKENDS, OFF)}


def get(mechanism: str | None) -> Backend:
    """The backend `mechanism` names; `OFF` for None (no sandbox). An id no entry has is an error
    of the caller's, said with the ids there are."""
    if mechanism is None:
        return OFF
    backend = _BY_ID.get(mechanism)
    if backend is None:
        raise LookupError(f"no sandbox backend {mechanism!r} (there are: {', '.join(sorted(_BY_ID))})")
    return backend


def title(mechanism: str | None) -> str:
    """The mechanism's name for people; never fails (an unknown id is shown as it is)."""
    backend = _BY_ID.get(mechanism) if mechanism is not None else OFF
    return backend.title if backend is not None else str(mechanism)


def resolve(reference: str) -> Callable[..., Any]:
    """The function `"toolcatalog.sandbox.module:function"` names."""
    return references.resolve(reference, _REFERENCE, "the sandbox package")
