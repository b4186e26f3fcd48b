"""The diff report: each change, each changed tool, and the report in Markdown, text and JSON."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Callable

from .. import inline


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
    source: str | None = None  # the manifest path, only when the id is not unique in a catalog

    @property
    def breaking(self) -> bool:
        return any(c.breaking for c in self.changes)

    def as_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "id": self.id,
            "name": self.name,
            "format": self.format,
            "old_version": self.old_version,
            "new_version": self.new_version,
            "breaking": self.breaking,
            "changes": [c.as_dict() for c in self.changes],
        }
        if self.source is not None:
            d["source"] = self.source
        return d


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
            where = f" at {_code(tool.source)}" if tool.source is not None else ""
            lines += ["", f"### {_code(tool.id)} {_md(tool.name)}{version}{where}{' — breaking' if tool.breaking else ''}", ""]
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
            at = f" at {_one_line(tool.source)}" if tool.source is not None else ""
            lines += ["", f"{_one_line(tool.id)}  {_one_line(tool.name)}{version}{at}{' — breaking' if tool.breaking else ''}"]
            for change in sorted(tool.changes, key=lambda c: not c.breaking):
                where = f"{_one_line(change.path)}: " if change.path else ""
                lines.append(f"  {'breaking' if change.breaking else 'non-breaking'}: {where}{_one_line(inline.plain(change.message))}")
        return "\n".join(lines) + "\n"


def _one_line(text: Any) -> str:
    return " ".join(str(text).split())


def _plain_label(tool: dict[str, Any]) -> str:
    version = f" {_one_line(tool['version'])}" if tool.get("version") else ""
    at = f" at {_one_line(tool['source'])}" if tool.get("source") else ""
    return f"{_one_line(tool['id'])}  {_one_line(tool.get('name') or '')}{version}".rstrip() + at


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
    at = f" at {_code(tool['source'])}" if tool.get("source") else ""
    return f"{_code(tool['id'])} {_md(tool.get('name') or '')}{version}".rstrip() + at
