"""MCP hints from what a contract says about side effects, each with the fields it follows from.

Read-only-ness itself is `Effects.read_only` (model.py), which the badges, the
index filters and the catalog use too, so none of them can disagree.

Hosts that review tools ask for the readOnly, destructive and openWorld hints with a written
justification, so every hint here carries one (`Hint.fields`, `Hint.reason`): the catalog and
mcp-tools.json publish it beside the hint. A hint the contract does not support is absent, which
means unknown (MCP clients then assume the worst: not read-only, destructive, open world).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .model import Effects

# Mutation entries (`<class>:<scope>`) whose words say they remove things: `destructiveHint`.
_DELETE_WORDS = re.compile(
    r"(?<![a-z])(delete|deletes|remove|removes|destroy|destroys|drop|drops|purge|purges|wipe|wipes|erase|erases|truncate|truncates)(?![a-z])",
    re.I,
)
EXTERNAL_RISK = 2  # AIP-14 risk levels: 0 read-only, 1 scoped writes, 2 external side effects, 3 irreversible
IRREVERSIBLE_RISK = 3


@dataclass(frozen=True)
class Hint:
    """One MCP ToolAnnotations hint and why: the contract fields it follows from, as the manifest
    names them (`mutates`, `risk_level`, `idempotent`, `requires.network`, ...), and a sentence."""

    value: bool
    fields: tuple[str, ...]
    reason: str

    def as_dict(self) -> dict[str, object]:
        return {"value": self.value, "fields": list(self.fields), "reason": self.reason}


def _code(value: object) -> str:
    text = str(value).replace("`", "'")
    return f"`{text[:120]}`"


def _risk(effects: Effects) -> int | None:
    risk = effects.risk_level
    return risk if isinstance(risk, int) and not isinstance(risk, bool) else None


def _declared(effects: Effects) -> list[str]:
    return [m for m in effects.mutates or [] if isinstance(m, str)]


def _read_only_hints(effects: Effects, caught_mutating: bool) -> dict[str, Hint]:
    """`readOnlyHint` and `destructiveHint` from `Effects.read_only`."""
    risk = _risk(effects)
    read_only = effects.read_only
    if read_only is True and caught_mutating:
        return {"readOnlyHint": Hint(
            False, ("mutates", "observed"),
            "the contract declares no mutation, but a sandboxed run of its examples was seen to change "
            "something, to try to (a write the sandbox refused would succeed outside it), or to use the "
            "network (see the verification's undeclared effects)",
        )}
    if read_only is True:
        fields = ("mutates",) + (("risk_level",) if risk is not None else ())
        risk_text = f" and risk level {risk}" if risk is not None else " and no risk level"
        return {"readOnlyHint": Hint(True, fields, f"the contract declares no mutation (`mutates: []`){risk_text}"),
                "destructiveHint": Hint(False, fields, "a read-only tool changes nothing, so it destroys nothing")}
    if read_only is False:
        return _mutating_hints(effects, risk)
    return {}


def _mutating_hints(effects: Effects, risk: int | None) -> dict[str, Hint]:
    declared = _declared(effects)
    deleting = [m for m in declared if _DELETE_WORDS.search(m)]
    fields: list[str] = []
    parts: list[str] = []
    if declared:
        fields.append("mutates")
        parts.append(f"it mutates {', '.join(_code(m) for m in declared[:5])}{' and more' if len(declared) > 5 else ''}")
    if risk is not None and risk >= 1:
        fields.append("risk_level")
        parts.append(f"its risk level is {risk}")
    out = {"readOnlyHint": Hint(False, tuple(fields), "the contract says " + " and ".join(parts))}
    if risk == IRREVERSIBLE_RISK:
        out["destructiveHint"] = Hint(True, ("risk_level",), "risk level 3 means irreversible changes")
    elif deleting:
        out["destructiveHint"] = Hint(True, ("mutates",), f"the mutation {_code(deleting[0])} says it deletes")
    else:
        out["destructiveHint"] = Hint(
            True, tuple(fields),
            "the contract declares changes and no field of it promises they are only additive (MCP's default)",
        )
    return out


def _open_world_hint(effects: Effects) -> Hint | None:
    risk = _risk(effects)
    network_mutations = [m for m in _declared(effects) if m.startswith("network:")]
    network_requires = [r.name for r in effects.requires if r.kind == "network"]
    reaches_out = [r.name for r in effects.requires if r.kind in ("secret", "tool")]  # an API key, another tool: unknown
    if network_requires or network_mutations:
        fields: list[str] = []
        parts: list[str] = []
        if network_requires:
            fields.append("requires.network")
            parts.append(f"it requires network access to {', '.join(_code(n) for n in network_requires[:5])}")
        if network_mutations:
            fields.append("mutates")
            parts.append(f"it mutates {_code(network_mutations[0])}")
        return Hint(True, tuple(fields), "the contract says " + " and ".join(parts))
    if risk == EXTERNAL_RISK:
        return Hint(True, ("risk_level",), "risk level 2 means side effects outside the tool's own scope")
    if effects.mutates is not None and not reaches_out:
        return Hint(
            False, ("requires", "mutates") + (("risk_level",) if risk is not None else ()),
            "the contract names no network access, secret or other tool in `requires` and no `network:` mutation"
            + (", and its risk level is not 2" if risk is not None else ""),
        )
    return None


def hints(effects: Effects, caught_mutating: bool = False) -> dict[str, Hint]:
    """The hints the contract supports, in MCP's order. Absent means unknown, never a guess.

    `caught_mutating`: the contract declares no effects, yet a sandboxed run was seen with one
    (`SandboxReport.caught_mutating`). The contract's read-only claim is then not repeated to
    agents: `readOnlyHint` is false, with that reason, and `destructiveHint` is left unknown.

    - `readOnlyHint`: `Effects.read_only` when it is known.
    - `destructiveHint`: false for a read-only tool (it changes nothing); true for risk level 3,
      a mutation whose words say it deletes (`delete`, `remove`, `drop`, `purge`, `wipe`, ...),
      or any other declared change, since no contract field promises "additive only" (MCP's
      reading of `false`).
    - `idempotentHint`: the contract's `idempotent`, when it has one.
    - `openWorldHint`: true when network access is declared (a `network` requirement or a
      `network:` mutation) or the risk level is 2 (external side effects); false when the contract
      declares its requirements and mutations (AIP-14) and none of them is the network, a secret
      or another tool, and its risk level is not 2; otherwise unknown.
    """
    out = _read_only_hints(effects, caught_mutating)
    if isinstance(effects.idempotent, bool):
        out["idempotentHint"] = Hint(effects.idempotent, ("idempotent",), f"the contract says `idempotent: {str(effects.idempotent).lower()}`")
    open_world = _open_world_hint(effects)
    if open_world is not None:
        out["openWorldHint"] = open_world
    return out


def annotations(effects: Effects, caught_mutating: bool = False) -> dict[str, bool]:  # type: ignore[no-redef]
    """MCP ToolAnnotations hints the contract supports (`hints` without the reasons)."""
    return {name: hint.value for name, hint in hints(effects, caught_mutating).items()}


# The safety classes every page uses, across formats: AIP-14's risk levels in words.
LEVELS = ("read-only", "writes", "external", "irreversible")
_BY_RISK = {1: "writes", 2: "external", 3: "irreversible"}


def level(effects: Effects) -> tuple[str | None, str]:
    """The contract's safety class (one of LEVELS) and the fields it follows from, in words; the
    class is None when the contract does not say (no `mutates` in the format, or a malformed one).

    Read-only is `Effects.read_only` (the badges' definition). Otherwise the risk level names the
    class (1 writes, 2 external effects, 3 irreversible); a contract that declares mutations
    without a usable risk level is `external` when one of them is a `network:` mutation, else
    `writes`."""
    read_only = effects.read_only
    if read_only is True:
        return "read-only", "the contract declares no mutation (`mutates: []`) and risk level 0"
    if read_only is None:
        return None, "the contract does not declare its effects in a form that can be compared"
    risk = _risk(effects)
    if risk is not None and risk in _BY_RISK:
        return _BY_RISK[risk], f"risk level {risk}"
    declared = _declared(effects)
    network = [m for m in declared if m.startswith("network:")]
    if network:
        return "external", f"it mutates {_code(network[0])}"
    return "writes", f"it mutates {', '.join(_code(m) for m in declared[:3])}" if declared else "it declares changes"
