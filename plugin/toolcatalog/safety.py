"""MCP hints from what a contract says about side effects.

Read-only-ness itself is `Effects.read_only` (model.py), which the badges, the
index filters and the catalog use too, so none of them can disagree.
"""

from __future__ import annotations

import re

from .model import Effects

# Mutation entries (`<class>:<scope>`) whose words say they remove things: `destructiveHint`.
_DELETE_WORDS = re.compile(
    r"(?<![a-z])(delete|deletes|remove|removes|destroy|destroys|drop|drops|purge|purges|wipe|wipes|erase|erases|truncate|truncates)(?![a-z])",
    re.I,
)


def annotations(effects: Effects) -> dict[str, bool]:
    """MCP ToolAnnotations hints the contract supports. Absent means unknown, never a guess.

    - `readOnlyHint`: `Effects.read_only` (no mutation and risk level 0) when it is known.
    - `destructiveHint`: true for risk level 3 or a mutation whose words say it deletes
      (`delete`, `remove`, `drop`, `purge`, `wipe`, ...); never stated false, since no
      contract field promises "additive only" (MCP's default is true anyway).
    - `idempotentHint`: the contract's `idempotent`, when it has one.
    - `openWorldHint`: true when network access is declared (a `network` requirement or a
      `network:` mutation); never stated false.
    """
    hints: dict[str, bool] = {}
    mutates = effects.mutates or []
    verdict = effects.read_only
    if verdict is not None:
        hints["readOnlyHint"] = verdict
    if effects.risk_level == 3 or any(_DELETE_WORDS.search(m) for m in mutates):
        hints["destructiveHint"] = True
    if isinstance(effects.idempotent, bool):
        hints["idempotentHint"] = effects.idempotent
    if any(r.kind == "network" for r in effects.requires) or any(m.startswith("network:") for m in mutates):
        hints["openWorldHint"] = True
    return hints
