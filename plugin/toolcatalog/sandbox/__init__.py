"""Sandboxed example runs: isolate each process and watch what it does.

- `probe(mode)`: which sandbox works on this machine (once per build) -> `Facts`.
- `prepare(facts, argv, ...)`: one run's command line, environment and throwaway folders -> `Launch`;
  after the process ends, `Launch.observe()` says what it did (`observed.Observed`).

bubblewrap (namespaces) is the sandbox; the Landlock launcher is the fallback where namespaces
cannot be created; strace, when it can, watches the system calls. Each mechanism is one entry
of `backends.BACKENDS` (probe, prepare, describe); `title(mechanism)` names one for people.
See docs/security.md.
"""

from .backends import title
from .launch import Launch, flush, prepare
from .probe import Facts, probe

__all__ = ["Facts", "Launch", "flush", "prepare", "probe", "title"]
