"""What changed between two catalog.json files, and whether it breaks callers.

Tools are matched by `id` (a duplicated id by `id` and manifest path, each counted on its own).
Inputs are read contravariantly and outputs covariantly: an input
that accepts less (a new required property, a lost enum value, a narrower type, a tighter
bound, a removed property) breaks callers; an output that promises less (a removed or retyped
property, a property no longer required, a new enum value, a looser bound) breaks consumers.
The side-effect profile breaks when it grows: a wider `mutates`, a higher `risk_level`, a new
requirement, an approval that is no longer `auto`, `idempotent` turned off. Where data may go
is reviewable: a new egress host, secret or region, or a lifted driver constraint, is reported as
breaking ("needs review"). For AIP-14 tools a
breaking change to inputs, outputs or effects without a major version bump is itself breaking
(AIP-14: "a breaking contract change MUST bump major"). Everything else that changed
(descriptions, names, tags, versions, statuses, new optional inputs, new output properties,
widened input enums, ...) is reported as non-breaking.

Each module compares one thing: `schemas` (inputs, outputs), `effects`, `drivers` (access,
execution, drivers), `examples`, `coverage`; `report` holds the result and its renderings.
`diff(old, new)` returns a `Report`; `Report.markdown()` is what reviewers paste into a pull
request, `Report.text()` the same for a terminal (no Markdown escapes or code spans), and
`Report.as_dict()` the `--json` form.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from .. import formatregistry
from ..files import ReadError
from ..outputs import catalog_json
from .coverage import compare_coverage
from .drivers import compare_access, compare_drivers, compare_execution
from .effects import compare_effects
from .examples import compare_examples
from .report import Change, Report, ToolChanges
from .schemas import _canon, compare_schema

__all__ = ["Change", "DiffError", "Report", "ToolChanges", "_canon", "compare_schema", "compare_tool", "diff", "load"]

CONTRACT_AREAS = ("inputs", "outputs", "effects")


class DiffError(Exception):
    """A catalog file that cannot be read or is not a catalog."""


# -- loading ---------------------------------------------------------------------------------------
def load(path: str | Path) -> dict[str, Any]:
    """A catalog from a file (or a folder holding catalog.json). Raises DiffError."""
    target = Path(path)
    if target.is_dir():
        target = target / "catalog.json"
    if not target.exists():
        raise DiffError(f"{str(path)!r}: no such catalog file")
    try:
        # Capped, a regular file, and nested no deeper than a catalog can be: a FIFO, a huge or a
        # hostile file is an error, never a hang or a RecursionError while comparing.
        data = catalog_json.read_published(target)
    except ReadError as exc:
        raise DiffError(f"{str(path)!r} is not read: {exc.message}") from None
    except ValueError as exc:  # not UTF-8, not JSON, nested too deep
        raise DiffError(f"{str(path)!r} is not a readable JSON file: {exc}") from None
    if not isinstance(data, dict) or not isinstance(data.get("tools"), list):
        raise DiffError(f"{str(path)!r} is not a tool catalog (no `tools` list)")
    version = data.get("version", catalog_json.CATALOG_VERSION)
    if version not in catalog_json.READABLE_VERSIONS:
        readable = " and ".join(str(v) for v in catalog_json.READABLE_VERSIONS)
        raise DiffError(f"{str(path)!r} is a version {version!r} catalog; this toolcatalog reads versions {readable}")
    if not all(isinstance(t, dict) and isinstance(t.get("id"), str) for t in data["tools"]):
        raise DiffError(f"{str(path)!r} has a tool without a string `id`")
    return data


# -- matching --------------------------------------------------------------------------------------
Key = tuple[str, str | None]  # (id, manifest path): the path only for an id that is not unique


def _groups(document: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = {}
    for tool in document.get("tools", []):
        out.setdefault(tool["id"], []).append(tool)
    return out


def _source(tool: dict[str, Any]) -> str:
    return str(tool.get("source") or "")


def _pair(olds: list[dict[str, Any]], news: list[dict[str, Any]]) -> tuple[list[tuple[dict[str, Any], dict[str, Any]]], list[dict[str, Any]], list[dict[str, Any]]]:
    """Tools sharing one id, matched: one on each side are the same tool (it may have moved);
    otherwise by manifest path. Returns (pairs, only old, only new)."""
    if len(olds) == 1 and len(news) == 1:
        return [(olds[0], news[0])], [], []
    remaining = list(news)
    pairs, gone = [], []
    for tool in olds:
        match = next((t for t in remaining if _source(t) == _source(tool)), None)
        if match is None:
            gone.append(tool)
        else:
            remaining.remove(match)
            pairs.append((tool, match))
    came = remaining
    return pairs, gone, came


def diff(old: dict[str, Any], new: dict[str, Any]) -> Report:
    old_tools, new_tools = _groups(old), _groups(new)
    report = Report()
    changed: list[tuple[str, str, ToolChanges]] = []
    for tool_id in sorted(set(old_tools) | set(new_tools)):
        olds, news = old_tools.get(tool_id, []), new_tools.get(tool_id, [])
        duplicated = len(olds) > 1 or len(news) > 1
        pairs, gone, came = _pair(olds, news)
        report.added.extend(_summary(t, duplicated) for t in came)
        report.removed.extend(_summary(t, duplicated) for t in gone)
        for a, b in pairs:
            changes = compare_tool(a, b)
            if changes:
                source = _source(b) if duplicated else None
                entry = ToolChanges(tool_id, str(b.get("name") or tool_id), str(b.get("format") or ""), a.get("version"), b.get("version"), changes, source)
                changed.append((tool_id, source or "", entry))
    report.added.sort(key=lambda t: (t["id"], t.get("source") or ""))
    report.removed.sort(key=lambda t: (t["id"], t.get("source") or ""))
    report.changed = [entry for _, _, entry in sorted(changed, key=lambda x: (x[0], x[1]))]
    return report


def _summary(tool: dict[str, Any], duplicated: bool = False) -> dict[str, Any]:
    out = {"id": tool["id"], "name": tool.get("name"), "version": tool.get("version"), "format": tool.get("format")}
    if duplicated:
        out["source"] = _source(tool)
    return out


# -- comparing -------------------------------------------------------------------------------------
def compare_tool(old: dict[str, Any], new: dict[str, Any]) -> list[Change]:
    changes: list[Change] = []
    _compare_identity(old, new, changes)
    compare_schema(old.get("inputs"), new.get("inputs"), "inputs", "input", changes)
    compare_schema(old.get("outputs"), new.get("outputs"), "outputs", "output", changes)
    compare_effects(old.get("effects") or {}, new.get("effects") or {}, changes)
    _compare_platforms(old.get("platforms") or [], new.get("platforms") or [], changes)
    _compare_version(old, new, changes)
    _compare_texts(old, new, changes)
    compare_examples(old, new, changes)
    if "access" in old and "access" in new:  # catalogs written before these fields have none
        compare_access(old.get("access"), new.get("access"), changes)
        compare_execution(old.get("execution"), new.get("execution"), changes)
        compare_drivers(old, new, changes)
    if not changes and old.get("digest") and new.get("digest") and old.get("digest") != new.get("digest"):
        changes.append(Change(False, "manifest-changed", "digest", "the manifest file changed (body or formatting), the contract did not"))
    compare_coverage(old.get("coverage"), new.get("coverage"), changes.append)
    return changes


def _compare_identity(old: dict[str, Any], new: dict[str, Any], out: list[Change]) -> None:
    if old.get("format") != new.get("format"):
        out.append(Change(True, "format-changed", "format", f"the manifest format changed from {old.get('format')} to {new.get('format')}"))
    if old.get("valid", True) and not new.get("valid", True):
        out.append(Change(True, "became-invalid", "valid", "the manifest is now invalid, so agents should not use the tool"))
    elif not old.get("valid", True) and new.get("valid", True):
        out.append(Change(False, "became-valid", "valid", "the manifest is now valid"))


def _compare_platforms(old: list[Any], new: list[Any], out: list[Change]) -> None:
    gone = sorted(set(old) - set(new))
    came = sorted(set(new) - set(old))
    if gone and new:
        out.append(Change(True, "platform-removed", "platforms", f"no longer runs on {', '.join(gone)}"))
    if came:
        out.append(Change(False, "platform-added", "platforms", f"now also runs on {', '.join(came)}"))


def _compare_version(old: dict[str, Any], new: dict[str, Any], out: list[Change]) -> None:
    if old.get("version") != new.get("version"):
        out.append(Change(False, "version-changed", "version", f"version {old.get('version') or 'none'} → {new.get('version') or 'none'}"))
    if new.get("format") != old.get("format") or not _major_bump_on_break(new.get("format")):
        return
    contract_breaks = [c for c in out if c.breaking and c.path.split(".")[0].split("[")[0] in CONTRACT_AREAS]
    if contract_breaks and not _major_bumped(old.get("version"), new.get("version")):
        out.append(Change(
            True, "major-not-bumped", "version",
            f"{_label(new.get('format'))} requires a major version bump for a breaking contract change, but the version "
            + (f"stayed {new.get('version') or 'unset'}" if old.get("version") == new.get("version")
               else f"went {old.get('version') or 'none'} → {new.get('version') or 'none'}"),
        ))


def _compare_texts(old: dict[str, Any], new: dict[str, Any], out: list[Change]) -> None:
    for key, what in (("name", "name"), ("description", "description")):
        if (old.get(key) or "") != (new.get(key) or ""):
            out.append(Change(False, f"{key}-changed", key, f"the {what} changed"))
    tags_gone = sorted(set(old.get("tags") or []) - set(new.get("tags") or []))
    tags_came = sorted(set(new.get("tags") or []) - set(old.get("tags") or []))
    if tags_gone or tags_came:
        parts = [f"+{t}" for t in tags_came] + [f"-{t}" for t in tags_gone]
        out.append(Change(False, "tags-changed", "tags", "tags " + " ".join(parts)))
    if old.get("status") != new.get("status"):
        out.append(Change(False, "status-changed", "status", f"build status {old.get('status')} → {new.get('status')}"))


def _major(version: Any) -> int | None:
    match = re.match(r"^\s*v?(\d+)(?:\.|$)", version) if isinstance(version, str) else None
    return int(match.group(1)) if match else None


def _major_bumped(old: Any, new: Any) -> bool:
    a, b = _major(old), _major(new)
    return a is not None and b is not None and b > a


def _major_bump_on_break(format_id: Any) -> bool:
    """Whether the format (a catalog's `format`) requires a major version bump for a breaking change."""
    fmt = formatregistry.get(format_id) if isinstance(format_id, str) else None
    return fmt is not None and fmt.major_bump_on_break


def _label(format_id: Any) -> str:
    fmt = formatregistry.get(format_id) if isinstance(format_id, str) else None
    return fmt.label if fmt is not None else str(format_id)
