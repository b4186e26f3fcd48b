"""What changed between two catalog.json files, and whether it breaks callers.

Tools are matched by `id`. Inputs are read contravariantly and outputs covariantly: an input
that accepts less (a new required property, a lost enum value, a narrower type, a tighter
bound, a removed property) breaks callers; an output that promises less (a removed or retyped
property, a property no longer required, a new enum value, a looser bound) breaks consumers.
The side-effect profile breaks when it grows: a wider `mutates`, a higher `risk_level`, a new
requirement, an approval that is no longer `auto`, `idempotent` turned off. For AIP-14 tools a
breaking change to inputs, outputs or effects without a major version bump is itself breaking
(AIP-14: "a breaking contract change MUST bump major"). Everything else that changed
(descriptions, names, tags, versions, statuses, new optional inputs, new output properties,
widened input enums, ...) is reported as non-breaking.

`diff(old, new)` returns a `Report`; `Report.markdown()` is what reviewers paste into a pull
request, `Report.text()` the same for a terminal (no Markdown escapes or code spans), and
`Report.as_dict()` the `--json` form.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from . import formatregistry, inline
from .files import ReadError
from .outputs import catalog_json

CONTRACT_AREAS = ("inputs", "outputs", "effects")
_LOWER = ("minimum", "exclusiveMinimum", "minLength", "minItems", "minProperties", "minContains")
_UPPER = ("maximum", "exclusiveMaximum", "maxLength", "maxItems", "maxProperties", "maxContains")
_OPAQUE = ("pattern", "format", "const", "multipleOf")
_APPROVAL_ORDER = {"auto": 0, "on-mutate": 1, "always": 2}


class DiffError(Exception):
    """A catalog file that cannot be read or is not a catalog."""


@dataclass
class Change:
    breaking: bool
    code: str  # stable identifier, e.g. "input-required-added"
    path: str  # where: "inputs.unit", "outputs.items[].id", "effects.mutates", "version", ...
    message: str

    def as_dict(self) -> dict[str, Any]:
        return {"breaking": self.breaking, "code": self.code, "path": self.path, "message": self.message}


@dataclass
class ToolChanges:
    id: str
    name: str
    format: str
    old_version: str | None
    new_version: str | None
    changes: list[Change] = field(default_factory=list)

    @property
    def breaking(self) -> bool:
        return any(c.breaking for c in self.changes)

    def as_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "name": self.name,
            "format": self.format,
            "old_version": self.old_version,
            "new_version": self.new_version,
            "breaking": self.breaking,
            "changes": [c.as_dict() for c in self.changes],
        }


@dataclass
class Report:
    added: list[dict[str, Any]] = field(default_factory=list)
    removed: list[dict[str, Any]] = field(default_factory=list)
    changed: list[ToolChanges] = field(default_factory=list)

    @property
    def breaking(self) -> bool:
        return bool(self.removed) or any(t.breaking for t in self.changed)

    def counts(self) -> dict[str, int]:
        changes = [c for t in self.changed for c in t.changes]
        return {
            "added": len(self.added),
            "removed": len(self.removed),
            "changed": len(self.changed),
            "breaking_changes": sum(c.breaking for c in changes) + len(self.removed),
            "other_changes": sum(not c.breaking for c in changes) + len(self.added),
        }

    def as_dict(self) -> dict[str, Any]:
        return {
            "breaking": self.breaking,
            "counts": self.counts(),
            "added": self.added,
            "removed": self.removed,
            "changed": [t.as_dict() for t in self.changed],
        }

    def _summary(self) -> tuple[str, str]:
        """The report's first line, as (verdict, tally), for every rendering of it."""
        counts = self.counts()
        n = counts["breaking_changes"]
        verdict = f"{n} breaking change{_s(n)}." if self.breaking else "No breaking changes."
        other = counts["other_changes"] - counts["added"]
        tally = (f"Tools: {counts['added']} added, {counts['removed']} removed, {counts['changed']} changed "
                 f"({other} non-breaking change{_s(other)}).")
        return verdict, tally

    def markdown(self) -> str:
        lines = ["## Tool catalog changes", ""]
        if not (self.added or self.removed or self.changed):
            return "\n".join(lines + ["No tool changed.", ""])
        verdict, tally = self._summary()
        lines.append(f"**{verdict}** {tally}")
        if self.removed:
            lines += ["", "### Removed tools (breaking)", ""]
            lines += [f"- {_tool_label(t)}" for t in self.removed]
        if self.added:
            lines += ["", "### Added tools", ""]
            lines += [f"- {_tool_label(t)}" for t in self.added]
        for tool in self.changed:
            version = _version_note(tool, _md)
            lines += ["", f"### {_code(tool.id)} {_md(tool.name)}{version}{' — breaking' if tool.breaking else ''}", ""]
            for change in sorted(tool.changes, key=lambda c: not c.breaking):
                mark = "**breaking**" if change.breaking else "non-breaking"
                where = f"{_code(change.path)}: " if change.path else ""
                lines.append(f"- {mark}: {where}{_md(change.message)}")
        return "\n".join(lines) + "\n"

    def text(self) -> str:
        """The report as plain text for a terminal: the same content as `markdown`, without Markdown."""
        lines = ["Tool catalog changes"]
        if not (self.added or self.removed or self.changed):
            return "\n".join(lines + ["No tool changed.", ""])
        verdict, tally = self._summary()
        lines.append(f"{verdict} {tally}")
        if self.removed:
            lines += ["", "Removed tools (breaking):"]
            lines += [f"  {_plain_label(t)}" for t in self.removed]
        if self.added:
            lines += ["", "Added tools:"]
            lines += [f"  {_plain_label(t)}" for t in self.added]
        for tool in self.changed:
            version = _version_note(tool, _one_line)
            lines += ["", f"{_one_line(tool.id)}  {_one_line(tool.name)}{version}{' — breaking' if tool.breaking else ''}"]
            for change in sorted(tool.changes, key=lambda c: not c.breaking):
                where = f"{_one_line(change.path)}: " if change.path else ""
                lines.append(f"  {'breaking' if change.breaking else 'non-breaking'}: {where}{_one_line(inline.plain(change.message))}")
        return "\n".join(lines) + "\n"


def _one_line(text: Any) -> str:
    return " ".join(str(text).split())


def _plain_label(tool: dict[str, Any]) -> str:
    version = f" {_one_line(tool['version'])}" if tool.get("version") else ""
    return f"{_one_line(tool['id'])}  {_one_line(tool.get('name') or '')}{version}".rstrip()


def _version_note(tool: ToolChanges, show: Callable[[Any], str]) -> str:
    """" (1.0.0 → 2.0.0)", " (2.0.0)" or "", each version passed through `show`."""
    if tool.old_version != tool.new_version:
        return f" ({show(tool.old_version or 'no version')} → {show(tool.new_version or 'no version')})"
    return f" ({show(tool.new_version)})" if tool.new_version else ""


def _s(n: int) -> str:
    return "" if n == 1 else "s"


def _md(text: Any) -> str:
    line = _one_line(text)
    for ch in "\\`*_[]<>#|":
        line = line.replace(ch, "\\" + ch)
    return line


def _code(text: Any) -> str:
    """A Markdown code span that survives backticks in untrusted text."""
    value = _one_line(text)[:200]
    longest = max((len(m) for m in re.findall(r"`+", value)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if value.startswith("`") or value.endswith("`") or not value else ""
    return f"{fence}{pad}{value}{pad}{fence}"


def _tool_label(tool: dict[str, Any]) -> str:
    version = f" {_md(tool['version'])}" if tool.get("version") else ""
    return f"{_code(tool['id'])} {_md(tool.get('name') or '')}{version}".rstrip()


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


# -- comparing -------------------------------------------------------------------------------------
def diff(old: dict[str, Any], new: dict[str, Any]) -> Report:
    old_tools = _by_id(old)
    new_tools = _by_id(new)
    report = Report()
    for tool_id in sorted(set(new_tools) - set(old_tools)):
        report.added.append(_summary(new_tools[tool_id]))
    for tool_id in sorted(set(old_tools) - set(new_tools)):
        report.removed.append(_summary(old_tools[tool_id]))
    for tool_id in sorted(set(old_tools) & set(new_tools)):
        changes = compare_tool(old_tools[tool_id], new_tools[tool_id])
        if changes:
            a, b = old_tools[tool_id], new_tools[tool_id]
            report.changed.append(
                ToolChanges(tool_id, str(b.get("name") or tool_id), str(b.get("format") or ""), a.get("version"), b.get("version"), changes)
            )
    return report


def _by_id(document: dict[str, Any]) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for tool in document.get("tools", []):
        out.setdefault(tool["id"], tool)  # duplicate ids: the first (catalogs sort by id, then source)
    return out


def _summary(tool: dict[str, Any]) -> dict[str, Any]:
    return {"id": tool["id"], "name": tool.get("name"), "version": tool.get("version"), "format": tool.get("format")}


def compare_tool(old: dict[str, Any], new: dict[str, Any]) -> list[Change]:
    changes: list[Change] = []
    add = changes.append

    if old.get("format") != new.get("format"):
        add(Change(True, "format-changed", "format", f"the manifest format changed from {old.get('format')} to {new.get('format')}"))
    if old.get("valid", True) and not new.get("valid", True):
        add(Change(True, "became-invalid", "valid", "the manifest is now invalid, so agents should not use the tool"))
    elif not old.get("valid", True) and new.get("valid", True):
        add(Change(False, "became-valid", "valid", "the manifest is now valid"))

    compare_schema(old.get("inputs"), new.get("inputs"), "inputs", "input", changes)
    compare_schema(old.get("outputs"), new.get("outputs"), "outputs", "output", changes)
    _compare_effects(old.get("effects") or {}, new.get("effects") or {}, changes)

    gone = sorted(set(old.get("platforms") or []) - set(new.get("platforms") or []))
    came = sorted(set(new.get("platforms") or []) - set(old.get("platforms") or []))
    if gone and new.get("platforms"):
        add(Change(True, "platform-removed", "platforms", f"no longer runs on {', '.join(gone)}"))
    if came:
        add(Change(False, "platform-added", "platforms", f"now also runs on {', '.join(came)}"))

    if old.get("version") != new.get("version"):
        add(Change(False, "version-changed", "version", f"version {old.get('version') or 'none'} → {new.get('version') or 'none'}"))
    if new.get("format") == old.get("format") and _major_bump_on_break(new.get("format")):
        contract_breaks = [c for c in changes if c.breaking and c.path.split(".")[0].split("[")[0] in CONTRACT_AREAS]
        if contract_breaks and not _major_bumped(old.get("version"), new.get("version")):
            add(Change(
                True, "major-not-bumped", "version",
                "AIP-14 requires a major version bump for a breaking contract change, but the version "
                + (f"stayed {new.get('version') or 'unset'}" if old.get("version") == new.get("version")
                   else f"went {old.get('version') or 'none'} → {new.get('version') or 'none'}"),
            ))

    for key, what in (("name", "name"), ("description", "description")):
        if (old.get(key) or "") != (new.get(key) or ""):
            add(Change(False, f"{key}-changed", key, f"the {what} changed"))
    tags_gone = sorted(set(old.get("tags") or []) - set(new.get("tags") or []))
    tags_came = sorted(set(new.get("tags") or []) - set(old.get("tags") or []))
    if tags_gone or tags_came:
        parts = [f"+{t}" for t in tags_came] + [f"-{t}" for t in tags_gone]
        add(Change(False, "tags-changed", "tags", "tags " + " ".join(parts)))
    if old.get("status") != new.get("status"):
        add(Change(False, "status-changed", "status", f"build status {old.get('status')} → {new.get('status')}"))
    old_examples = [e.get("title") for e in old.get("examples") or [] if isinstance(e, dict)]
    new_examples = [e.get("title") for e in new.get("examples") or [] if isinstance(e, dict)]
    if old_examples != new_examples:
        add(Change(False, "examples-changed", "examples", f"examples: {len(old_examples)} → {len(new_examples)}"))
    if not changes and old.get("digest") and new.get("digest") and old.get("digest") != new.get("digest"):
        add(Change(False, "manifest-changed", "digest", "the manifest file changed (body or formatting), the contract did not"))
    _compare_coverage(old.get("coverage"), new.get("coverage"), add)
    return changes


def _percent(score: Any) -> str:
    return f"{score:.0%}" if isinstance(score, (int, float)) and not isinstance(score, bool) else "none"


def _compare_coverage(old: Any, new: Any, add: Callable[[Change], None]) -> None:
    """Coverage that dropped (the total or a dimension) and goals newly left uncovered: never
    breaking (the contract did not change), but what a reviewer should see. A catalog written
    before coverage existed has none: nothing is compared."""
    if not isinstance(old, dict) or not isinstance(new, dict):
        return
    if _lower(old.get("total"), new.get("total")):
        add(Change(False, "coverage-dropped", "coverage", f"coverage {_percent(old.get('total'))} → {_percent(new.get('total'))}"))
    old_dims = old.get("dimensions") if isinstance(old.get("dimensions"), dict) else {}
    new_dims = new.get("dimensions") if isinstance(new.get("dimensions"), dict) else {}
    for name in sorted(set(old_dims) & set(new_dims)):
        a, b = old_dims[name], new_dims[name]
        if not isinstance(a, dict) or not isinstance(b, dict):
            continue
        if _lower(a.get("score"), b.get("score")):
            add(Change(False, "coverage-dropped", f"coverage.{name}", f"{name} coverage {_percent(a.get('score'))} → {_percent(b.get('score'))}"))
        before = {str(x) for x in a.get("uncovered") or [] if isinstance(x, str)}
        came = [str(x) for x in b.get("uncovered") or [] if isinstance(x, str) and x not in before]
        if came:
            add(Change(False, "coverage-uncovered-added", f"coverage.{name}", "newly uncovered: " + "; ".join(came[:10])
                       + (f"; and {len(came) - 10} more" if len(came) > 10 else "")))


def _lower(a: Any, b: Any) -> bool:
    numbers = all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in (a, b))
    return numbers and b < a


def _major(version: Any) -> int | None:
    match = re.match(r"^\s*v?(\d+)(?:\.|$)", version) if isinstance(version, str) else None
    return int(match.group(1)) if match else None


def _major_bumped(old: Any, new: Any) -> bool:
    a, b = _major(old), _major(new)
    return a is not None and b is not None and b > a


# -- schemas ---------------------------------------------------------------------------------------
def _types(schema: dict[str, Any]) -> set[str] | None:
    declared = schema.get("type")
    if isinstance(declared, str):
        types = {declared}
    elif isinstance(declared, list) and all(isinstance(t, str) for t in declared):
        types = set(declared)
    else:
        return None  # any type
    if "number" in types:
        types.add("integer")
    return types


def _canon(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


def _show(value: Any) -> str:
    text = _canon(value)
    return text if len(text) <= 60 else text[:57] + "..."


def compare_schema(old: Any, new: Any, where: str, side: str, out: list[Change]) -> None:
    """Changes between two JSON Schemas at `where`; `side` is "input" or "output"."""
    inp = side == "input"
    if old == new:
        return
    if not isinstance(old, dict) or not isinstance(new, dict):
        if old is None:
            out.append(Change(False, f"{side}-schema-declared", where, f"the {side} schema is now declared"))
        elif new is None:
            out.append(Change(True, f"{side}-schema-removed", where, f"the {side} schema is no longer declared"))
        else:
            out.append(Change(True, f"{side}-schema-replaced", where, f"the {side} schema was replaced by one that cannot be compared"))
        return

    # type
    a, b = _types(old), _types(new)
    if a != b:
        def label(t: set[str] | None) -> str:
            return "any" if t is None else "|".join(sorted(t - {"integer"} if "number" in t else t))
        narrowed = a is None or (b is not None and b < a)
        widened = b is None or (a is not None and a < b)
        if narrowed:
            breaking, how = inp, "narrowed"
        elif widened:
            breaking, how = not inp, "widened"
        else:
            breaking, how = True, "changed"
        out.append(Change(breaking, f"{side}-type-{how}", where, f"{side} type {how}: {label(a)} → {label(b)}"))

    # enum
    old_enum, new_enum = old.get("enum"), new.get("enum")
    if old_enum != new_enum:
        if isinstance(old_enum, list) and isinstance(new_enum, list):
            # Each side's canonical forms computed once (a set per entry made long enums quadratic).
            old_keys, new_keys = {_canon(x) for x in old_enum}, {_canon(x) for x in new_enum}
            lost = [v for v in old_enum if _canon(v) not in new_keys]
            gained = [v for v in new_enum if _canon(v) not in old_keys]
            if lost:
                out.append(Change(inp, f"{side}-enum-narrowed", where, f"{side} enum lost {', '.join(_show(v) for v in lost)}"))
            if gained:
                out.append(Change(not inp, f"{side}-enum-widened", where, f"{side} enum gained {', '.join(_show(v) for v in gained)}"))
        elif isinstance(new_enum, list):
            out.append(Change(inp, f"{side}-enum-narrowed", where, f"{side} is now limited to {', '.join(_show(v) for v in new_enum)}"))
        elif isinstance(old_enum, list):
            out.append(Change(not inp, f"{side}-enum-widened", where, f"{side} is no longer limited to an enum"))

    # bounds and other constraints
    for key in _LOWER + _UPPER:
        x, y = old.get(key), new.get(key)
        if x == y or not all(v is None or isinstance(v, (int, float)) and not isinstance(v, bool) for v in (x, y)):
            continue
        if x is None:
            tighter = True
        elif y is None:
            tighter = False
        else:
            tighter = (y > x) if key in _LOWER else (y < x)
        out.append(Change(
            inp == tighter, f"{side}-constraint-{'tightened' if tighter else 'loosened'}", where,
            f"`{key}` {'none' if x is None else x} → {'none' if y is None else y}",
        ))
    for key in _OPAQUE:
        x, y = old.get(key), new.get(key)
        if _canon(x) == _canon(y):
            continue
        if x is None:
            breaking, how = inp, "added"
        elif y is None:
            breaking, how = not inp, "removed"
        else:
            breaking, how = True, "changed"
        out.append(Change(breaking, f"{side}-{key.lower()}-{how}", where, f"`{key}` {how}: {_show(x) if x is not None else 'none'} → {_show(y) if y is not None else 'none'}"))
    if inp and old.get("additionalProperties") is not False and new.get("additionalProperties") is False:
        out.append(Change(True, "input-closed", where, "unknown input properties are now rejected (`additionalProperties: false`)"))

    # properties and required
    old_props = old.get("properties") if isinstance(old.get("properties"), dict) else {}
    new_props = new.get("properties") if isinstance(new.get("properties"), dict) else {}
    old_req = {r for r in old.get("required") or [] if isinstance(r, str)} if isinstance(old.get("required"), list) else set()
    new_req = {r for r in new.get("required") or [] if isinstance(r, str)} if isinstance(new.get("required"), list) else set()
    for name in sorted(set(new_props) - set(old_props)):
        path = f"{where}.{name}"
        if inp:
            if name in new_req:
                out.append(Change(True, "input-required-added", path, "new required input"))
            else:
                out.append(Change(False, "input-optional-added", path, "new optional input"))
        else:
            out.append(Change(False, "output-added", path, "new output property"))
    for name in sorted(set(old_props) - set(new_props)):
        path = f"{where}.{name}"
        if inp:
            out.append(Change(True, "input-removed", path, "input property removed"))
        else:
            out.append(Change(True, "output-removed", path, "output property removed"))
    for name in sorted(set(old_props) & set(new_props)):
        compare_schema(old_props[name], new_props[name], f"{where}.{name}", side, out)
    for name in sorted((new_req - old_req) - (set(new_props) - set(old_props))):
        path = f"{where}.{name}"
        if inp:
            out.append(Change(True, "input-now-required", path, "input is now required"))
        else:
            out.append(Change(False, "output-now-required", path, "output is now always present"))
    for name in sorted((old_req - new_req) - (set(old_props) - set(new_props))):
        path = f"{where}.{name}"
        if inp:
            out.append(Change(False, "input-now-optional", path, "input is no longer required"))
        else:
            out.append(Change(True, "output-now-optional", path, "output is no longer always present"))

    # arrays
    if isinstance(old.get("items"), dict) and isinstance(new.get("items"), dict):
        compare_schema(old["items"], new["items"], f"{where}[]", side, out)

    if (old.get("description") or "") != (new.get("description") or "") and where.count(".") > 0:
        out.append(Change(False, f"{side}-description-changed", where, "description changed"))


# -- effects ---------------------------------------------------------------------------------------
def _compare_effects(old: dict[str, Any], new: dict[str, Any], out: list[Change]) -> None:
    a, b = old.get("mutates"), new.get("mutates")
    if a != b:
        if isinstance(a, list) and isinstance(b, list):
            wider = sorted(set(map(str, b)) - set(map(str, a)))
            narrower = sorted(set(map(str, a)) - set(map(str, b)))
            if wider:
                out.append(Change(True, "mutates-widened", "effects.mutates", f"now also mutates {', '.join(wider)}"))
            if narrower:
                out.append(Change(False, "mutates-narrowed", "effects.mutates", f"no longer mutates {', '.join(narrower)}"))
        elif a is None and isinstance(b, list):
            out.append(Change(False, "mutates-declared", "effects.mutates", "the side effects are now declared: " + (", ".join(map(str, b)) or "none")))
        elif isinstance(a, list) and b is None:
            out.append(Change(True, "mutates-undeclared", "effects.mutates", "the side effects are no longer declared"))

    x, y = old.get("risk_level"), new.get("risk_level")
    if x != y:
        if isinstance(x, int) and isinstance(y, int):
            out.append(Change(y > x, "risk-raised" if y > x else "risk-lowered", "effects.risk_level", f"risk level {x} → {y}"))
        else:
            out.append(Change(isinstance(y, int) and y > 0, "risk-changed", "effects.risk_level", f"risk level {x} → {y}"))

    x, y = old.get("approval"), new.get("approval")
    if x != y:
        rank_x, rank_y = _APPROVAL_ORDER.get(x or "auto", 3), _APPROVAL_ORDER.get(y or "auto", 3)
        stricter = rank_y > rank_x or (rank_y == rank_x == 3)
        out.append(Change(stricter, "approval-stricter" if stricter else "approval-looser", "effects.approval", f"approval {x or 'none'} → {y or 'none'}"))

    x, y = old.get("idempotent"), new.get("idempotent")
    if x != y:
        out.append(Change(x is True, "idempotent-changed", "effects.idempotent", f"idempotent {_flag(x)} → {_flag(y)}"))

    x, y = old.get("cost_class"), new.get("cost_class")
    if x != y:
        # Not breaking: calls still work, they cost more (review budgets).
        out.append(Change(False, "cost-changed", "effects.cost_class", f"cost class {x or 'none'} → {y or 'none'}"))

    def keyed(reqs: Any) -> set[str]:
        return {f"{r.get('kind')}:{r.get('name')}" for r in reqs or [] if isinstance(r, dict) and not r.get("optional")}

    came = sorted(keyed(new.get("requires")) - keyed(old.get("requires")))
    gone = sorted(keyed(old.get("requires")) - keyed(new.get("requires")))
    if came:
        out.append(Change(True, "requirement-added", "effects.requires", f"now requires {', '.join(came)}"))
    if gone:
        out.append(Change(False, "requirement-removed", "effects.requires", f"no longer requires {', '.join(gone)}"))

    if (old.get("text") or "") != (new.get("text") or ""):
        out.append(Change(False, "effects-text-changed", "effects.text", "the effects text changed (free text: review it)"))


def _flag(value: Any) -> str:
    return "unknown" if value is None else str(bool(value)).lower()


def _major_bump_on_break(format_id: Any) -> bool:
    """Whether the format (a catalog's `format`) requires a major version bump for a breaking change."""
    fmt = formatregistry.get(format_id) if isinstance(format_id, str) else None
    return fmt is not None and fmt.major_bump_on_break
