"""One verdict-and-evidence record per tool: every claim a build publishes about a tool, derived once.

The index (labels, filters), the tool page (badges, contract), catalog.json and the per-tool
files (`kind`, `effects.read_only`, `annotations`, `claims`), mcp-tools.json (which tools are
listed, their `annotations`) and llms.txt (its sections) all read `of(tool)`, so they cannot
disagree, and no claim is stronger than its evidence. Within a build the record is derived once
per tool (`Memo`: the plugin keeps one from the end of the checks to the end of its outputs,
`pipeline.Build` and each page open one with `once()`):

- `kind` (`KindClaim`): `deterministic` only with evidence: an AIP-14 contract that says so
  (`metadata.model_backed: false` or the `deterministic` tag), or a smart tool capability its
  `--help` labels `[deterministic]` while the `help-discloses-model-backed` check passed. A
  label from a `--help` that failed (or skipped) that check is not evidence: the capability is
  `unknown`. A program that names no model (speccify, an AIP-14 contract without the flag) is
  `no-model-declared`, never `deterministic` (it may call a remote API). Mixed capabilities
  give `mixed`; any unknown capability makes the tool's own kind `unknown` (the weakest wins).
- effects (`EffectsClaim`): the declared class (`safety.level`) and what the sandbox observed,
  both kept; where they disagree the observed one wins (a tool caught writing or connecting is
  not read-only, whatever it declares). A tool that declares nothing but was observed, in every
  run, sandboxed and traced in full, to change nothing outside its scratch folder and to open
  no connection is `read-only` *as observed*. Only sandboxed, fully traced runs are evidence:
  unsandboxed (`sandbox: off`) or untraced runs never make a badge look verified
  (`EffectsClaim.verified` is False and the badge is `declared`, not green). Every write
  outside the working copy is named (`EffectsClaim.writes`), a write to HOME included: in the
  sandbox HOME is a throwaway folder, outside it that write would persist.
- MCP hints (`hints`): from the contract (`safety.hints`) and from observation: a caught tool
  is `readOnlyHint: false`; a tool without a declared class observed as above is
  `readOnlyHint: true` and `destructiveHint: false`, with the observation as the reason.
- `usable`: whether an agent may use the tool (mcp-tools.json lists only these by default, and
  llms.txt puts the others under a heading saying they must not be used): valid, and `passed`,
  or not run for a reason that is no failure (`not-run`, `not-applicable`, `not-implemented`,
  `missing-requirement`, `no-examples`) and not caught with an undeclared effect.

Why a format's effects are not declared is the format's own fact (`Tool.format_info`, formatregistry).
"""

from __future__ import annotations

from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, TypeVar

from . import safety
from .model import DETERMINISTIC, MODEL_BACKED, Capability, Tool
from .observed import ELSEWHERE, SANDBOX_HOME as HOME, SCRATCH, WORKSPACE, FileChange, SandboxReport
from .statuses import CheckStatus, Status

MIXED = "mixed"
UNKNOWN = "unknown"
NO_MODEL_DECLARED = "no-model-declared"
KINDS = (DETERMINISTIC, MODEL_BACKED, MIXED, NO_MODEL_DECLARED, UNKNOWN)
DISCLOSURE_CHECK = "help-discloses-model-backed"

# What the sandbox saw, one word (the index's badge and the page's callouts use it).
OBSERVED_STATES = ("no-effects", "caught", "undeclared", "unobserved", "untraced", "unsandboxed", "not-run")

# Statuses that are no failure: the tool may still be offered to agents (with the reason).
NOT_FAILED = frozenset({Status.PASSED, Status.NOT_RUN, Status.NOT_APPLICABLE, Status.NOT_IMPLEMENTED,
                        Status.MISSING_REQUIREMENT, Status.NO_EXAMPLES})



@dataclass(frozen=True)
class CapabilityClaim:
    name: str
    kind: str  # one of KINDS but `mixed`
    reason: str
    label: str | None  # what `--help` labels it ("deterministic", "model-backed"), None when nothing does

    def as_dict(self) -> dict[str, Any]:
        return {"name": self.name, "kind": self.kind, "reason": self.reason, "label": self.label}


@dataclass(frozen=True)
class KindClaim:
    value: str  # one of KINDS
    reason: str
    evidence: tuple[str, ...]  # the fields or checks it follows from
    capabilities: tuple[CapabilityClaim, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        return {"value": self.value, "reason": self.reason, "evidence": list(self.evidence),
                "capabilities": [c.as_dict() for c in self.capabilities]}


@dataclass(frozen=True)
class EffectsClaim:
    declared: str | None  # the contract's class (one of safety.LEVELS), None when it declares none
    declared_why: str
    declared_read_only: bool | None  # `Effects.read_only`
    observed: str  # one of OBSERVED_STATES
    observed_why: str
    level: str  # what every output shows: one of safety.LEVELS, or "undeclared"
    read_only: bool | None  # what every output says: observed wins over declared
    source: str  # where `level` comes from: "declared", "observed" or "none"
    verified: bool  # sandboxed, traced in full, nothing outside scratch, no network
    writes: tuple[str, ...] = ()  # every write outside the working copy, named (HOME included)
    note: str = ""  # free-text effects (speccify)

    @property
    def badge(self) -> str:
        """How the badge looks: `verified` (green: the class is what was observed), `declared`
        (neutral: only the contract says so), `caught` (red: observed contradicts it), `unknown`."""
        if self.observed in ("caught", "undeclared"):
            return "caught"
        if self.level == "undeclared":
            return "unknown"
        return "verified" if self.verified else "declared"

    @property
    def label(self) -> str:
        words = {"read-only": "read-only", "writes": "writes", "external": "external effects",
                 "irreversible": "irreversible", "undeclared": "in words" if self.note else "not declared"}[self.level]
        if self.source == "observed":
            return f"{words} (observed)"
        if self.level == "read-only" and not self.verified:
            return "read-only (declared, not observed)"
        return words

    @property
    def why(self) -> str:
        if self.source == "observed":
            return f"Observed: {self.observed_why} (declared: {self.declared_why})"
        if self.level == "undeclared":
            return self.declared_why
        return f"From {self.declared_why}; observed: {self.observed_why}"

    def as_dict(self) -> dict[str, Any]:
        return {
            "declared": self.declared, "declared_read_only": self.declared_read_only, "declared_why": self.declared_why,
            "observed": self.observed, "observed_why": self.observed_why,
            "level": self.level, "read_only": self.read_only, "source": self.source, "verified": self.verified,
            "writes": list(self.writes), "label": self.label, "badge": self.badge,
        }


@dataclass(frozen=True)
class Claims:
    status: str
    usable: bool
    usable_why: str
    kind: KindClaim
    effects: EffectsClaim
    hints: dict[str, safety.Hint] = field(default_factory=dict)

    @property
    def annotations(self) -> dict[str, bool]:
        return {name: hint.value for name, hint in self.hints.items()}

    def deterministic_capabilities(self) -> list[str]:
        return [c.name for c in self.kind.capabilities if c.kind == DETERMINISTIC]

    def as_dict(self) -> dict[str, Any]:
        return {
            "status": self.status, "usable": self.usable, "usable_why": self.usable_why,
            "kind": self.kind.as_dict(), "effects": self.effects.as_dict(),
        }


# -- kind --------------------------------------------------------------------------------------


def _check_status(tool: Tool, check_id: str) -> str | None:
    return next((c.status.value for c in tool.checks if c.id == check_id), None)


def _capability(c: Capability, disclosed: bool, disclosure: str | None) -> CapabilityClaim:
    if c.kind == MODEL_BACKED:
        return CapabilityClaim(c.name, MODEL_BACKED, "`--help` labels it model-backed", c.kind)
    if c.kind == DETERMINISTIC and disclosed:
        return CapabilityClaim(c.name, DETERMINISTIC, f"`--help` labels it deterministic and the {DISCLOSURE_CHECK} check passed", c.kind)
    if c.kind == DETERMINISTIC:
        state = "failed" if disclosure == CheckStatus.FAILED.value else "did not run" if disclosure is None else disclosure
        return CapabilityClaim(c.name, UNKNOWN, f"`--help` labels it deterministic, but the {DISCLOSURE_CHECK} check {state}, "
                               "so that label is no evidence", c.kind)
    return CapabilityClaim(c.name, UNKNOWN, "nothing labels it", c.kind)


def _smart_kind(tool: Tool) -> KindClaim:
    disclosure = _check_status(tool, DISCLOSURE_CHECK)
    disclosed = disclosure == CheckStatus.PASSED.value
    caps = tuple(_capability(c, disclosed, disclosure) for c in tool.capabilities)
    evidence = (f"checks.{DISCLOSURE_CHECK}", "capabilities")
    if not caps:
        return KindClaim(UNKNOWN, "no `--help` listed its capabilities with their kinds", evidence)
    kinds = {c.kind for c in caps}
    if UNKNOWN in kinds:
        names = ", ".join(f"`{c.name}`" for c in caps if c.kind == UNKNOWN)
        return KindClaim(UNKNOWN, f"the kind of {names} is not established: {next(c.reason for c in caps if c.kind == UNKNOWN)}", evidence, caps)
    if kinds == {DETERMINISTIC}:
        return KindClaim(DETERMINISTIC, f"every capability is labelled deterministic by a `--help` that passed {DISCLOSURE_CHECK}", evidence, caps)
    if kinds == {MODEL_BACKED}:
        return KindClaim(MODEL_BACKED, "every capability is labelled model-backed", evidence, caps)
    return KindClaim(MIXED, f"some capabilities are deterministic (by a `--help` that passed {DISCLOSURE_CHECK}), some model-backed", evidence, caps)


def _declared_kind(tool: Tool) -> tuple[str | None, str]:
    """What the contract itself says: `metadata.model_backed` (a boolean), else a kind tag. A kind
    a parser assumes for a whole format (speccify: "a program") is no statement of the contract, nor
    is such text in a format whose contract has no kind (speccify's unknown front-matter keys)."""
    if not tool.format_info.declares_kind:
        return None, ""
    metadata = tool.fields.get("metadata")
    flag = metadata.get("model_backed") if isinstance(metadata, dict) else None
    if isinstance(flag, bool):
        return (MODEL_BACKED if flag else DETERMINISTIC), f"`metadata.model_backed: {str(flag).lower()}`"
    for tag in (MODEL_BACKED, DETERMINISTIC):
        if tag in tool.tags:
            return tag, f"the `{tag}` tag"
    return None, ""


def _contract_kind(tool: Tool) -> KindClaim:
    """A contract that states its kind, or one that names no model."""
    declared, where = _declared_kind(tool)
    if declared is not None:
        return KindClaim(declared, f"the contract says so ({where})", ("metadata.model_backed", "tags"))
    network = [r.name for r in tool.effects.requires if r.kind in ("network", "secret")]
    if network:
        return KindClaim(UNKNOWN, f"the contract names no model, but it needs {', '.join(f'`{n}`' for n in network[:3])}, "
                         "so its output may come from elsewhere", ("requires",))
    return KindClaim(NO_MODEL_DECLARED, "the contract names no model, and nothing shows it calls none (it may call a remote API)", ())


def kind_of(tool: Tool) -> KindClaim:
    # registry: "kind comes from --help capabilities" is a per-format fact (smart tools).
    if tool.descriptor is not None or tool.capabilities or any(c.id == DISCLOSURE_CHECK for c in tool.checks):
        return _smart_kind(tool)
    return _contract_kind(tool)


# -- effects -----------------------------------------------------------------------------------


# How a write attempt that changed nothing, or may have, is named (the other changes by their name:
# `created X`, `deleted X`).
_ATTEMPTS = {"blocked": "blocked from writing", "failed": "failed to write", "unknown": "maybe wrote"}


def _named(change: FileChange) -> str:
    what = _ATTEMPTS.get(change.change, change.change)
    if change.where == SCRATCH:
        return f"{what} {home_path(change)} (in HOME: outside a sandbox it would persist)"
    if change.where == WORKSPACE:
        return f"{what} the workspace file {change.path}"
    return f"{what} {change.path}"


def in_home(change: FileChange) -> bool:
    """A write in the run's HOME (inside its scratch folder): thrown away by the sandbox, but it
    names what the tool would leave in the user's home folder anywhere else."""
    return change.where == SCRATCH and (change.path == HOME or change.path.startswith(HOME + "/"))


def home_path(change: FileChange) -> str:
    return "~/" + change.path[len(HOME):].lstrip("/")


def writes_outside(report: SandboxReport | None) -> tuple[str, ...]:
    """Every file a run wrote outside its working copy and TMPDIR, named: the workspace, anywhere
    else, and HOME (a throwaway folder in the sandbox, the user's own outside it)."""
    if report is None or report.observed is None:
        return ()
    out = []
    for change in report.observed.files:
        if change.where in (WORKSPACE, ELSEWHERE) or in_home(change):
            out.append(_named(change))
    return tuple(out)


def _observed(report: SandboxReport | None) -> tuple[str, str]:
    if report is None or report.processes == 0:
        return "not-run", "nothing ran"
    runs = f"{report.processes} process{'es' if report.processes != 1 else ''}"
    if report.caught_mutating:
        return "caught", f"declared no effects, but caught: {'; '.join(report.undeclared[:3])}"
    if report.undeclared:
        return "undeclared", f"undeclared effects: {'; '.join(report.undeclared[:3])}"
    if not report.sandboxed:
        return "unsandboxed", f"{runs} ran unsandboxed, so nothing was observed ({report.reason or 'no sandbox'})"
    if report.verified_no_effects:
        return "no-effects", f"no writes outside its scratch folder and no network, in {runs}, sandboxed and traced in full"
    if report.observed is None or report.observed.incomplete:
        return "unobserved", f"{runs} sandboxed, but part of what they did went unseen (the trace was cut or lost)"
    if not report.observed.traced:
        return "untraced", f"{runs} sandboxed without system-call tracing, so network use was not observed"
    return "unobserved", f"{runs} sandboxed and traced; they wrote outside their scratch folder or used the network as declared"


def _observed_level(report: SandboxReport) -> str:
    o = report.observed
    if o is not None and o.connections:
        return "external"
    return "writes"


def effects_of(tool: Tool) -> EffectsClaim:
    e = tool.effects
    declared, why = safety.level(e)
    observed, observed_why = _observed(tool.sandbox)
    writes = writes_outside(tool.sandbox)
    verified = observed == "no-effects"
    if declared is None:
        why = tool.format_info.undeclared_why if not e.text else "the effects are stated in words, so they have no class"
    level, read_only, source = _effective(tool, declared, observed, verified)
    return EffectsClaim(declared=declared, declared_why=why, declared_read_only=e.read_only, observed=observed,
                        observed_why=observed_why, level=level, read_only=read_only, source=source, verified=verified,
                        writes=writes, note=e.text or "")


def _effective(tool: Tool, declared: str | None, observed: str, verified: bool) -> tuple[str, bool | None, str]:
    """(level, read_only, source): the observed effects win whenever they disagree with the contract."""
    if observed in ("caught", "undeclared") and tool.sandbox is not None:
        seen = _observed_level(tool.sandbox)
        order = safety.LEVELS
        level = seen if declared is None or order.index(seen) > order.index(declared) else declared
        return level, False, "observed"
    if declared is None and verified:
        return "read-only", True, "observed"
    if declared is None:
        return "undeclared", None, "none"
    return declared, tool.effects.read_only, "declared"


# -- hints -------------------------------------------------------------------------------------


def hints_of(tool: Tool, effects: EffectsClaim) -> dict[str, safety.Hint]:
    """MCP hints from the contract (`safety.hints`), then from observation, which wins."""
    report = tool.sandbox
    out = dict(safety.hints(tool.effects, caught_mutating=bool(report and report.caught_mutating)))
    if effects.observed in ("caught", "undeclared"):
        out["readOnlyHint"] = safety.Hint(False, ("observed",), f"a sandboxed run was seen with an effect, or an attempt at one: {effects.observed_why}")
        if out.get("destructiveHint", safety.Hint(True, (), "")).value is False:
            del out["destructiveHint"]
    elif effects.source == "observed" and effects.read_only:
        reason = f"the contract declares no effects; observed: {effects.observed_why}"
        out["readOnlyHint"] = safety.Hint(True, ("observed",), reason)
        out["destructiveHint"] = safety.Hint(False, ("observed",), "observed changing nothing, so it destroyed nothing")
    for name, value in _WORST.items():  # unknown: say what MCP clients assume anyway, and why
        out.setdefault(name, safety.Hint(value, (), "neither the contract nor an observation supports a hint, so this is MCP's default (assume the worst)"))
    return {name: out[name] for name in ("readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint") if name in out}


# MCP's defaults for an absent hint (ToolAnnotations): not read-only, destructive, open world.
_WORST = {"readOnlyHint": False, "destructiveHint": True, "openWorldHint": True}


# -- usable ------------------------------------------------------------------------------------


def _usable(tool: Tool, effects: EffectsClaim) -> tuple[bool, str]:
    if not tool.valid:
        return False, "its manifest is invalid"
    if effects.observed in ("caught", "undeclared"):
        return False, "a run was caught with an effect its contract does not declare"
    if tool.status == Status.PASSED:
        return True, "it passed its examples or checks"
    if tool.status in NOT_FAILED:
        return True, f"not verified ({tool.status.value}: {tool.status_detail or 'no reason given'}), which is no failure"
    return False, f"its status is {tool.status.value}"


def derive(tool: Tool) -> Claims:
    """The record, computed from the tool as it is now (`of` remembers it within a `Memo`)."""
    effects = effects_of(tool)
    usable, why = _usable(tool, effects)
    return Claims(tool.status.value, usable, why, kind_of(tool), effects, hints_of(tool, effects))


# -- once per tool per build -------------------------------------------------------------------


class Memo:
    """Each tool's record, derived once while this memo is active (`with memo.active():`), however
    many outputs read it: the catalog entry, the MCP list, llms.txt, the tool page and the index.

    A build's tools no longer change once their examples and checks ran, and that is when a host
    opens one (the plugin: for its pages and outputs; `pipeline.Build`: for each of its outputs).
    Keyed on the tool object itself (its identity, the object held so no other tool can take its
    id); outside an active memo `of` derives the record afresh every time."""

    def __init__(self) -> None:
        self._records: dict[tuple[Callable[[Tool], Any], int], tuple[Tool, Any]] = {}
        self.derived = 0  # how many records were derived (tests count them)

    def of(self, tool: Tool) -> Claims:
        return self.remembered(derive, tool)

    def remembered(self, how: Callable[[Tool], _Record], tool: Tool) -> _Record:
        """`how(tool)`, derived once per tool in this memo (another record of a tool that no
        longer changes, like its coverage, is remembered the same way)."""
        key = (how, id(tool))
        found = self._records.get(key)
        if found is not None and found[0] is tool:
            record: _Record = found[1]
            return record
        record = how(tool)
        self._records[key] = (tool, record)
        self.derived += 1
        return record

    @contextmanager
    def active(self) -> Iterator[Memo]:
        """`of` reads and fills this memo inside the block."""
        token = _active.set(self)
        try:
            yield self
        finally:
            _active.reset(token)


_Record = TypeVar("_Record")
_active: ContextVar[Memo | None] = ContextVar("toolcatalog_claims_memo", default=None)


def remembered(how: Callable[[Tool], _Record], tool: Tool) -> _Record:
    """`how(tool)`: once per tool while a `Memo` is active, afresh otherwise."""
    memo = _active.get()
    return how(tool) if memo is None else memo.remembered(how, tool)


@contextmanager
def once() -> Iterator[Memo]:
    """Each tool's record derived at most once inside the block: the active memo, or a new one."""
    current = _active.get()
    if current is not None:
        yield current
        return
    with Memo().active() as memo:
        yield memo


def of(tool: Tool) -> Claims:
    """The one record every output reads: derived from the tool (`derive`), once per tool while a
    `Memo` is active, never stored on the model."""
    memo = _active.get()
    return derive(tool) if memo is None else memo.of(tool)
