"""What the pages show that the model does not hold as such: one place for the page templates' derived values.

- `reason`: why a tool has its status, as HTML (code spans as code), for every status.
- `safety_of`: the normalized safety column (read-only, writes, external effects, irreversible, or
  not declared), with approval and what the sandbox observed; the same words on every page.
- `sorted_tools`: tools in the order their labels read (by name, then id, then manifest path).
- `problem_groups`: catalog-level diagnostics grouped by kind, errors first.
- `json_html`: a JSON value pretty-printed as HTML, with the lines at differing paths marked.
- `driver_states`: each driver of a tool once, with its own state (valid or not, ran or why not).
- `install_link`: where a requirement's `install` points: a link when it is a URL or a file in the repository.
"""

from __future__ import annotations

import json
import posixpath
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any, Callable

from markupsafe import Markup, escape

from . import claims, formatregistry, inline, safety
from .matching import difference_paths, json_key, key_path
from .model import ERROR, Diagnostic, Driver, Requirement, Tool
from .statuses import Status
from .report import reason as reason_text

__all__ = [
    "FORMAT_LABELS", "JUDGING_RULES", "KIND_TITLES", "SAFETY_LABELS", "SAFETY_LEVELS", "DriverState", "ProblemGroup",
    "Safety", "claims_of", "difference_paths", "driver_states", "install_link", "json_html", "problem_groups", "reason",
    "safety_of", "sorted_tools",
]


def reason(tool: Tool) -> Markup:
    """Why the tool has its status, as HTML, beside its badge (so without a leading "not run: ",
    which the `not-run` badge already says)."""
    text = reason_text(tool)
    if tool.status == Status.NOT_RUN:
        text = text.removeprefix("not run: ")
    return inline.html(text)


def sorted_tools(tools: list[Tool]) -> list[Tool]:
    """By what the lists show, the name (ignoring case), then id and manifest path."""
    return sorted(tools, key=lambda t: (t.name.casefold(), t.name, t.id, t.source))


# -- safety -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Safety:
    level: str  # one of safety.LEVELS, or "undeclared": `claims.EffectsClaim.level` (observed wins)
    label: str  # what the badge says
    why: str  # the fields and observations it follows from, in words (the badge's title)
    approval: str | None
    note: str  # a second line: the free-text effects of formats without a class ("" when none)
    observed: str  # what the sandbox saw: "no-effects", "caught", "undeclared", "unobserved", "untraced", "unsandboxed" or ""
    badge: str = "unknown"  # how it looks: "verified" (green), "declared", "caught" (red), "unknown"


SAFETY_LEVELS = safety.LEVELS
SAFETY_LABELS = {"read-only": "read-only", "writes": "writes", "external": "external effects", "irreversible": "irreversible",
                 "undeclared": "not declared"}

# A format's name in a row about one tool (FORMAT_TITLES name the nav's groups).
FORMAT_LABELS = formatregistry.labels()

# What a tool's or capability's kind means, for the legend and the badges' titles.
KIND_TITLES = {
    "deterministic": "Deterministic: the same input gives the same output; no model is called (the contract says so, or a --help that discloses model use labels it so)",
    "model-backed": "Model-backed: it calls a language model, so its output can vary from run to run",
    "mixed": "Mixed: some capabilities are deterministic, some model-backed",
    "no-model-declared": "No model declared: the contract names no model, but nothing shows it calls none (it may call a remote API)",
    "unknown": "Kind unknown: nothing that counts as evidence says whether it calls a model",
}


def claims_of(tool: Tool) -> claims.Claims:
    """The tool's one verdict-and-evidence record (`claims.of`), for the templates."""
    return claims.of(tool)


in_home = claims.in_home  # a sandboxed write in HOME (named on the page: it would persist elsewhere)
home_path = claims.home_path


def safety_of(tool: Tool) -> Safety:
    """The safety column and badge, from the claims record (so they say what catalog.json says)."""
    c = claims.of(tool).effects
    observed = "" if c.observed == "not-run" else c.observed
    return Safety(c.level, c.label, c.why, tool.effects.approval, c.note, observed, c.badge)


# How a run of an example is judged, in words, per format (shown under a failure; docs/formats.md
# has the full rules).
JUDGING_RULES = {fmt.id: fmt.judging_rule for fmt in formatregistry.TOOL_FORMATS if fmt.judging_rule}


# -- catalog problems ---------------------------------------------------------------------------


_GROUP_TITLES = {
    "duplicate-id": "Ids used by more than one manifest",
    "id-lookalike": "Ids that look like another tool's",
    "driver-orphan": "Drivers that implement no tool here",
    "driver-unresolved": "Driver references that name no tool",
    "symlink-outside": "Symlinks that leave the searched folder",
    "mcp-omitted": "Tools left out of the MCP list",
    "mcp-excluded": "Tools excluded from the MCP list",
    "mcp-unusable": "Tools an agent should not use, left out of the MCP list",
}


@dataclass
class ProblemGroup:
    code: str
    title: str
    severity: str  # the worst in the group
    items: list[Diagnostic] = field(default_factory=list)


def problem_groups(diagnostics: list[Diagnostic]) -> list[ProblemGroup]:
    """Catalog-level diagnostics by code: errors' groups first, then by size, then by title."""
    groups: dict[str, ProblemGroup] = {}
    for d in diagnostics:
        code = d.code or "other"
        group = groups.setdefault(code, ProblemGroup(code, _GROUP_TITLES.get(code, code.replace("-", " ").capitalize()), d.severity))
        group.items.append(d)
        if d.severity == ERROR:
            group.severity = ERROR
    return sorted(groups.values(), key=lambda g: (g.severity != ERROR, -len(g.items), g.title))


# -- JSON with differences ----------------------------------------------------------------------

MAX_JSON_LINES = 2000


def json_html(value: Any, marked: list[str] | tuple[str, ...] = ()) -> Markup:
    """`value` as `json.dumps(value, indent=2)` would print it, as HTML: the lines of values at
    (or inside) a `marked` JSON path (`$.a[0]["b c"]`, as `matching` writes them) wrapped in
    `<mark class="tc-diff">`. At most 2000 lines (then a note says how many more)."""
    lines: list[tuple[str, str]] = []
    _json_lines(value, "$", "", "", 0, lines)
    marks = tuple(marked)

    def is_marked(path: str) -> bool:
        return any(path == m or path.startswith(m + ".") or path.startswith(m + "[") for m in marks)

    out = []
    for path, text in lines[:MAX_JSON_LINES]:
        if marks and is_marked(path):
            out.append(Markup('<mark class="tc-diff">{}</mark>').format(text))
        else:
            out.append(escape(text))
    if len(lines) > MAX_JSON_LINES:
        out.append(escape(f"… {len(lines) - MAX_JSON_LINES} more lines"))
    return Markup("\n").join(out)


def _json_lines(value: Any, path: str, prefix: str, suffix: str, depth: int, out: list[tuple[str, str]]) -> None:
    pad = "  " * depth
    if len(out) > MAX_JSON_LINES:
        return
    if isinstance(value, dict) and value:
        out.append((path, f"{pad}{prefix}{{"))
        items = list(value.items())
        for index, (key, item) in enumerate(items):
            name = json.dumps(json_key(key), ensure_ascii=False)
            _json_lines(item, key_path(path, key), f"{name}: ", "," if index < len(items) - 1 else "", depth + 1, out)
        out.append((path, f"{pad}}}{suffix}"))
    elif isinstance(value, (list, tuple)) and value:
        out.append((path, f"{pad}{prefix}["))
        for index, item in enumerate(value):
            _json_lines(item, f"{path}[{index}]", "", "," if index < len(value) - 1 else "", depth + 1, out)
        out.append((path, f"{pad}]{suffix}"))
    else:
        try:
            text = json.dumps(value, ensure_ascii=False)
        except (TypeError, ValueError):
            text = json.dumps(repr(value), ensure_ascii=False)
        out.append((path, f"{pad}{prefix}{text}{suffix}"))


# -- drivers ------------------------------------------------------------------------------------


@dataclass
class DriverState:
    driver: Driver
    errors: list[Diagnostic]
    ran: bool
    why_not: str  # its own reason for not running ("" when it ran, or when it is the tool's reason)
    checked: bool  # a check looked at it (False: this build ran no examples)


def driver_states(tool: Tool) -> tuple[list[DriverState], str]:
    """Each driver once with its own state, and the reason they share with the tool (stated once on
    the page instead of in every row; "" when the drivers have reasons of their own)."""
    states = []
    shared = ""
    reasons = {d.run_status.get(tool.id) for d in tool.drivers}
    if len(reasons) == 1 and tool.status_detail and reasons == {tool.status_detail}:
        shared = tool.status_detail
    for d in tool.drivers:
        status = d.run_status.get(tool.id)
        errors = [x for x in d.diagnostics if x.severity == ERROR]
        why = "" if status in (None, "ran") or status == shared else status.removeprefix("not run: ")
        states.append(DriverState(d, errors, status == "ran", why, status is not None))
    return states, shared


# -- requirements -------------------------------------------------------------------------------


def install_link(tool: Tool, requirement: Requirement, source_url: Callable[[str, int | None], str | None]) -> str | None:
    """Where `install` points, as a link: the URL itself, or for a doc path the file's link in the
    repository when the file exists (beside smart-tool.json, else beside the manifest). None: show
    it as text (no such file here, or no repository link configured)."""
    value = (requirement.install or "").strip()
    if value.startswith(("https://", "http://")) and not any(c.isspace() for c in value):
        return value
    if not value or "://" in value or value.startswith(("/", "~", "\\")) or any(c.isspace() for c in value):
        return None
    for folder in _doc_folders(tool):
        target = posixpath.normpath(posixpath.join(folder, value))
        if target.startswith("../") or target == "..":
            continue
        if _workspace_of(tool).joinpath(*target.split("/")).is_file():
            return source_url(target, None)
    return None


def _workspace_of(tool: Tool) -> Path:
    """The workspace root: the manifest's path without its workspace-relative `source`."""
    return tool.abs_path.parents[len(PurePosixPath(tool.source).parts) - 1]


def _doc_folders(tool: Tool) -> list[str]:
    """Workspace-relative folders a doc path is relative to: the distribution root (where
    smart-tool.json is) first, then the manifest's folder."""
    folders = [posixpath.dirname(tool.descriptor_source)] if tool.descriptor_source else []
    folders.append(posixpath.dirname(tool.source))
    return list(dict.fromkeys(folders))
