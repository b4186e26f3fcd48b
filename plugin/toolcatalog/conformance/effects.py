"""Declared against observed effects: what a contract lets a run do, and what it did beyond that.

The rules (docs/security.md, "Declared and observed effects"):

- A contract **declares no effects** when it is AIP-14 with `mutates: []`, or speccify with an
  `effects` line that starts with `none`, `no effects`, `no side effects`, `read-only` or `pure`
  (case-insensitive; `none; pure computation` counts). Smart tools, and speccify lines that say
  anything else, do not say: their effects are observed and shown, never judged.
- Judged contracts (every valid AIP-14 contract, and speccify contracts that declare no effects)
  may write only their scratch folder (`TMPDIR`, `HOME`) plus what they declare: AIP-14
  `workspace:<glob>` (relative to the workspace root) and `fs:<glob>` (absolute) mutations, and a
  CLI driver's `sandbox.fs.write` globs. Any other write, attempted or done, is an undeclared effect.
- The network is declared by AIP-14 `requires.network` or a `network:` mutation, by a driver's
  `network.egress` (which, when present, decides for runs through that driver: `[]` denies), or by
  the `allow_network` option (the only way for speccify and smart tools). A connection attempted
  without it is an undeclared effect of a judged contract; so is reaching a Unix socket outside the
  run's own folders, network or not.
- A CLI driver's `sandbox.exec.allow: false` declares that it starts no other program; a list names
  the programs it may start.

Each undeclared effect names its path or address and fails the run.
"""

from __future__ import annotations

import fnmatch
import os
import re
from dataclasses import dataclass, field
from typing import Any

from .. import formatregistry
from ..model import Driver, Run, Tool
from ..observed import ELSEWHERE, SCRATCH, WORKSPACE, Observed, SandboxReport
from ..statuses import RunStatus
from .job import Context
from .raw import mapping

NO_EFFECTS_WORDING = re.compile(r"^\s*(none|no\s+(side[\s-]*)?effects?|read[\s-]*only|pure)\b", re.IGNORECASE)
MAX_UNDECLARED = 20


@dataclass
class Declared:
    """What a contract lets a run through one implementation or driver do."""

    judged: bool  # whether undeclared effects fail the run
    network: bool  # the run may use the network (the sandbox gives it one)
    workspace: list[str] = field(default_factory=list)  # globs relative to the workspace root
    paths: list[str] = field(default_factory=list)  # absolute globs
    programs: list[str] | None = None  # programs it may start besides itself; None: any
    hidden: list[str] = field(default_factory=list)  # absolute paths the driver denies (hidden in the sandbox)


def declares_no_effects(tool: Tool) -> bool | None:
    declares = tool.format_info.effects  # how the format declares effects (formatregistry)
    if declares == formatregistry.CLASSES:
        mutates = tool.effects.mutates
        return None if mutates is None else not mutates
    if declares == formatregistry.WORDS and tool.effects.text is not None:
        return True if NO_EFFECTS_WORDING.match(tool.effects.text) else None
    return None


def network_allowed(tool: Tool, ctx: Context) -> bool:
    return any(fnmatch.fnmatchcase(tool.id, pattern) for pattern in ctx.options.allow_network)


def _egress(driver: Driver) -> list[Any] | None:
    """The driver's declared egress, from `network.egress` or (AIP-29) `sandbox.network.egress`."""
    for holder in (mapping(driver.fields.get("network")), mapping(mapping(driver.fields.get("sandbox")).get("network"))):
        egress = holder.get("egress")
        if isinstance(egress, list):
            return egress
    return None


def declared(tool: Tool, ctx: Context, driver: Driver | None = None) -> Declared:
    """What runs of `tool` (through `driver`, for AIP-14) may do."""
    no_effects = declares_no_effects(tool)
    network = network_allowed(tool, ctx)
    if tool.format_info.effects != formatregistry.CLASSES:
        return Declared(judged=no_effects is True, network=network)
    mutates = tool.effects.mutates or []
    egress = _egress(driver) if driver is not None else None
    if egress is not None:
        network = network or bool(egress)
    else:
        network = network or any(r.kind == "network" for r in tool.effects.requires) or any(m.startswith("network:") for m in mutates)
    result = Declared(judged=tool.effects.mutates is not None, network=network)
    for entry in mutates:
        kind, _, scope = entry.partition(":")
        if kind == "workspace":
            result.workspace.append(scope.lstrip("/") or "*")
        elif kind == "fs":
            result.paths.append(scope if scope.startswith("/") else "/" + scope)
    if driver is not None:
        _driver_sandbox(driver, result, str(ctx.workspace))
    return result


def _driver_sandbox(driver: Driver, result: Declared, workspace: str) -> None:
    """A CLI driver's `sandbox` block: `fs.write` globs are declared writes, `fs.deny` paths are
    hidden from the run, `exec.allow` says which programs it may start. `fs.read` is not honoured
    as a widening: files outside the workspace stay hidden whatever a manifest asks for."""
    block = driver.fields.get("sandbox")
    if not isinstance(block, dict):
        return
    here = str(driver.abs_path.parent)
    files = mapping(block.get("fs"))
    for pattern in _texts(files.get("write")):
        resolved = _resolve(pattern, here)
        if resolved is None:
            continue  # $TMPDIR and ~: the scratch folder, always writable
        rel = os.path.relpath(resolved, workspace)
        if not rel.startswith(".."):
            result.workspace.append(rel)
        else:
            result.paths.append(resolved)
    for pattern in _texts(files.get("deny")):
        resolved = _resolve(pattern, here)
        if resolved is not None:
            result.hidden.append(_fixed_part(resolved))
    allow = mapping(block.get("exec")).get("allow")
    if allow is False:
        result.programs = []
    elif isinstance(allow, list):
        result.programs = [str(a) for a in allow]


def _texts(value: Any) -> list[str]:
    return [v for v in value if isinstance(v, str) and v.strip()] if isinstance(value, list) else []


def _resolve(pattern: str, here: str) -> str | None:
    """An absolute glob for a driver's path pattern; None for the scratch folder ($TMPDIR, ~)."""
    pattern = pattern.strip()
    if pattern.startswith(("$TMPDIR", "${TMPDIR}", "~", "$HOME", "${HOME}")):
        return None
    return os.path.normpath(os.path.join(here, pattern)) if not pattern.startswith("/") else os.path.normpath(pattern)


def _fixed_part(pattern: str) -> str:
    """The folder a glob lies in: the path up to the first component with a wildcard."""
    parts = []
    for part in pattern.split("/"):
        if any(c in part for c in "*?["):
            break
        parts.append(part)
    return "/".join(parts) or "/"


def _covered(path: str, patterns: list[str]) -> bool:
    for pattern in patterns:
        pattern = pattern.rstrip("/")
        if pattern in ("", "*", "**") or path == pattern or path.startswith(pattern + "/") or fnmatch.fnmatchcase(path, pattern):
            return True
    return False


_FILE_WORDS = {
    "created": "wrote {}",
    "changed": "changed {}",
    "deleted": "deleted {}",
    "temporary": "wrote {} (gone when the run ended)",
    "blocked": "tried to write {} (blocked by the sandbox)",
    "failed": "tried to write {} (the call failed{}: nothing was written)",  # {}: " with ENOENT"
    "unknown": "tried to write {} (the call never returned: whether it wrote is unknown)",
}


def undeclared(rules: Declared, observed: Observed | None, workspace: str) -> list[str]:
    """Each effect `observed` shows that `rules` do not declare, naming its path or address."""
    if observed is None or not rules.judged:
        return []
    found = _undeclared_files(rules, observed, os.path.realpath(workspace))
    found += _undeclared_connections(rules, observed)
    found += _undeclared_programs(rules, observed)
    return list(dict.fromkeys(found))


def _undeclared_files(rules: Declared, observed: Observed, workspace: str) -> list[str]:
    found: list[str] = []
    for change in observed.files:
        if change.where == SCRATCH:
            continue
        if change.where == WORKSPACE and (_covered(change.path, rules.workspace) or _covered(os.path.join(workspace, change.path), rules.paths)):
            continue
        if change.where == ELSEWHERE and _covered(change.path, rules.paths):
            continue
        name = f"the workspace file {change.path}" if change.where == WORKSPACE else change.path
        found.append(_FILE_WORDS[change.change].format(name, f" with {change.error}" if change.error else ""))
    return found


def _undeclared_connections(rules: Declared, observed: Observed) -> list[str]:
    found: list[str] = []
    for connection in observed.connections:
        # A host's Unix socket (a Docker socket, an ssh-agent) is no network, and never declared by one.
        host_socket = connection.address.startswith("unix:/")
        if rules.network and not host_socket:
            continue
        why = "a Unix socket outside the sandbox's own folders" if host_socket else "no network was declared"
        kind, _, what = connection.address.partition(":")
        if kind in ("socket", "send"):  # refused before it had an address (the Landlock launcher's filter)
            name = "TCP Fast Open send" if what == "tcp-fast-open" else f"{what} socket"
            found.append(f"tried to open a {name} ({why}: refused by the sandbox)")
            continue
        # "Went nowhere" only where the sandbox proves it (refused, or no network to reach).
        fate = "it went nowhere" if connection.contained else "the sandbox did not stop it, so it may have arrived"
        found.append(f"connected to {connection.address} ({why}: {fate})")
    return found


def _undeclared_programs(rules: Declared, observed: Observed) -> list[str]:
    patterns = rules.programs
    if patterns is None:
        return []

    def allowed(program: str) -> bool:
        return any(fnmatch.fnmatchcase(program, p) or fnmatch.fnmatchcase(os.path.basename(program), p) for p in patterns)

    found = [f"started {p} (the driver's sandbox does not allow it)" for p in observed.spawned if not allowed(p)]
    return found + [f"tried to start {p} (the driver's sandbox does not allow it: refused)" for p in observed.refused if not allowed(p)]


def settle(run: Run, rules: Declared, workspace: str) -> Run:
    """Fail `run` for each undeclared effect its process was seen to have."""
    run.undeclared = undeclared(rules, run.observed, workspace)
    if run.undeclared:
        shown = run.undeclared[:MAX_UNDECLARED]
        more = f" (and {len(run.undeclared) - len(shown)} more)" if len(run.undeclared) > len(shown) else ""
        note = "undeclared effect: " + "; ".join(shown) + more
        run.detail = note + (f"; {run.detail}" if run.detail else "")
        run.status = RunStatus.FAILED
    return run


def report(tool: Tool, runs: list[Run], ctx: Context, network: bool, mcp: bool = False) -> SandboxReport | None:
    """The tool's sandbox report (an outcome's `sandbox`) over `runs`; None when none started.
    `mcp`: some runs are MCP servers (their tracer is strace: the profile says so)."""
    started = [run for run in runs if run.started]
    if not started:
        return None
    mechanisms = {run.sandbox for run in started}
    mechanism = mechanisms.pop() if len(mechanisms) == 1 else None
    reason = "" if mechanism is not None else (ctx.sandbox.reason or "some processes ran without the sandbox")
    return SandboxReport(
        mechanism=mechanism,
        profile=ctx.sandbox.profile(network, mcp) if mechanism is not None else "",
        reason=reason,
        refused=ctx.sandbox.refused.as_dict() if ctx.sandbox.refused is not None else None,
        processes=len(started),
        observed=_merged(started) if mechanism is not None else None,
        undeclared=list(dict.fromkeys(u for run in started for u in run.undeclared))[:MAX_UNDECLARED * 5],
        declared_no_effects=declares_no_effects(tool),
    )


def _merged(started: list[Run]) -> Observed:
    """What every run was seen to do, each item once, capped; one unseen run leaves the whole unseen."""
    merged = Observed(traced=all(run.observed is not None and run.observed.traced for run in started))
    for run in started:
        seen = run.observed or Observed()
        merged.truncated = merged.truncated or seen.truncated
        merged.incomplete = merged.incomplete or seen.incomplete  # one unseen run: the tool is not observed
        for name in ("files", "connections", "programs", "spawned", "refused"):
            _add_new(getattr(merged, name), getattr(seen, name))
    merged.cap()
    return merged


def _add_new(have: list[Any], items: list[Any]) -> None:
    for item in items:
        if item not in have:
            have.append(item)
