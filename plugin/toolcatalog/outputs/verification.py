"""What the build verified about a tool, in one object agents can filter on.

The same object appears in catalog.json, in each per-tool JSON file and in mcp-tools.json
(`_meta["toolcatalog/verification"]`):

- `status`: the tool's verdict (the catalog's `status`).
- `examples`, `checks`: how many passed, failed and did not run (`total` = the sum). Skipped
  and not-run ones count as not run, and so do those whose checking crashed (`error`: no verdict
  was reached, and the tool's own status says so). Never a pass for something that did not run.
- `processes`: how many processes ran to produce these results (0: nothing ran).
- `sandboxed`: whether those processes ran in the sandbox (`Tool.sandbox`); `null` when nothing ran.
- `observed_effects`: what the runs were seen to do (files, network, programs: the catalog's
  `sandbox.observed`); `null` when not observed (nothing ran, or it ran unsandboxed).
- `undeclared_effects`: the effects seen that the contract does not declare (each fails its run);
  `null` when not observed (also when the trace was lost or cut and nothing was caught before:
  `observed_effects.incomplete`). `verified_no_effects`: sandboxed, traced in full, and seen to
  write nothing outside its scratch folder and to open no connection. `caught_mutating`: the contract declares
  no effects, yet a run had one. These come from the sandbox report (`Tool.sandbox`), so an
  agent that reads only mcp-tools.json sees them too.
- `page`: the tool's page, which shows the evidence (every example's input, expected and actual
  output, and every check).
"""

from __future__ import annotations

import os
from typing import Any, Iterable

from ..model import Tool
from ..observed import Observed
from .site import Site

PASSED = frozenset({"passed", "pass"})
FAILED = frozenset({"failed", "fail"})


def counts(statuses: Iterable[str]) -> dict[str, int]:
    values = [str(s) for s in statuses]
    passed = sum(v in PASSED for v in values)
    failed = sum(v in FAILED for v in values)
    return {"total": len(values), "passed": passed, "failed": failed, "not_run": len(values) - passed - failed}


def observed_entry(observed: Observed) -> dict[str, Any]:
    """What runs were seen to do; programs by file name (their folders differ from machine to machine)."""
    entry = observed.as_dict()
    for key in ("programs", "spawned", "refused"):
        entry[key] = list(dict.fromkeys(os.path.basename(p) for p in getattr(observed, key)))
    return entry


def observed_effects(tool: Tool) -> dict[str, Any] | None:
    """The sandbox's observation of the tool's runs; None when not observed."""
    observed = tool.sandbox.observed if tool.sandbox is not None else None
    return None if observed is None else observed_entry(observed)


def verification(tool: Tool, site: Site) -> dict[str, Any]:
    ran = tool.processes > 0
    report = tool.sandbox
    return {
        "status": tool.status.value,
        "examples": counts(e.status.value for e in tool.examples),
        "checks": counts(c.status.value for c in tool.checks),
        "processes": tool.processes,
        "sandboxed": (tool.sandbox.sandboxed if tool.sandbox is not None else False) if ran else None,
        "observed_effects": observed_effects(tool),
        # Not observed in full (a lost trace) and nothing caught: unknown, not "none".
        "undeclared_effects": list(report.undeclared) if report is not None and report.observed is not None
        and (report.undeclared or not report.observed.incomplete) else None,
        "verified_no_effects": bool(report is not None and report.verified_no_effects),
        "caught_mutating": bool(report is not None and report.caught_mutating),
        "page": site.link(tool.url),
    }
