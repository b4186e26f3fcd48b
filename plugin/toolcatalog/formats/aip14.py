"""agentproto AIP-14 `TOOL.md` (`.tools/<id>/TOOL.md`).

The front matter is a closed contract, checked against `schemas/aip14-tool.schema.json`
(written from the AIP-14 text), then `inputs`/`outputs` are checked as JSON
Schemas in their own right and every `examples[]` entry against them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import jsonschema

from .. import jsonschemas
from ..frontmatter import Manifest
from ..model import DETERMINISTIC, MODEL_BACKED, Diagnostic, Effects, Example, Requirement, Tool
from . import access, common

SCHEMA = "aip14-tool.schema.json"

# Fields AIP-14 removed from TOOL.md: they describe how to run a tool, which is a driver's job.
REMOVED_FIELDS = ("code", "run", "runner", "secrets", "network", "entry")
# Keys that only an AIP-14 TOOL.md has: used to tell it from a speccify TOOL.md.
AIP14_ONLY = frozenset(
    {"id", "version", "mutates", "approval", "risk_level", "cost_class", "timeout_ms", "retry", "idempotent",
     "default_implementation", "driver_constraints", "tags", "examples", "metadata"}
)
SPECCIFY_ONLY = frozenset({"effects", "runtime", "platforms"})
DEFAULT_TIMEOUT_MS = 30000


def looks_like_aip14(data: Any) -> bool:
    """A TOOL.md is AIP-14 when it has an `id`, or AIP-14-only fields and no speccify-only ones."""
    if not isinstance(data, dict):
        return False
    if "id" in data:
        return True
    keys = set(data)
    return bool(keys & AIP14_ONLY) and not keys & SPECCIFY_ONLY


def parse(path: Path, source: str, max_bytes: int, manifest: Any = None, diagnostics: list[Diagnostic] | None = None,
          read: bool = True) -> Tool:
    """Parse one TOOL.md; pass `manifest` (and the diagnostics reading it produced) when already read."""
    tool = Tool(id=path.parent.name, name=path.parent.name, format="aip-14", source=source, abs_path=path)
    tool.diagnostics.extend(diagnostics or [])
    sink = common.Sink(source, tool.diagnostics)
    if manifest is None and read:
        manifest = common.read_manifest(path, sink, max_bytes)
    if manifest is None:
        return tool
    data: dict[str, Any] = manifest.data
    tool.fields = data
    tool.body, tool.body_line = manifest.body, manifest.body_line
    tool.lines = common.contract_lines(manifest)
    _check_fields(tool, manifest, sink)
    _identity(tool, data, manifest)
    usable = {}
    for key in ("inputs", "outputs"):
        value = data.get(key)
        setattr(tool, key, value)
        usable[key] = isinstance(value, dict) and common.check_io_schema(sink, manifest, key, value)
    tool.schema_ok = usable
    tool.effects = _effects(data)
    tags = data.get("tags")
    tool.tags = [str(t) for t in tags] if isinstance(tags, list) else []
    tool.kind = _kind(data, tool.tags)
    tool.execution = access.execution(data)
    _examples(tool, data, manifest, sink, usable)
    if not tool.examples:
        sink.warning("no `examples`: nothing shows how to call the tool or can be checked", manifest.line(("examples",), 2), "no-examples")
    return tool


def _check_fields(tool: Tool, manifest: Manifest, sink: common.Sink) -> None:
    """Removed fields get their own message (and line); the rest goes through the schema. Keys
    the format does not define are kept in `tool.extra`."""
    data: dict[str, Any] = manifest.data
    for key in REMOVED_FIELDS:
        if key in data:
            sink.error(
                f"`{key}` was removed from AIP-14 TOOL.md: how a tool runs belongs on a DRIVER.md (AIP-30)",
                manifest.line((key,)),
                "removed-field",
            )
    checked = {k: v for k, v in data.items() if k not in REMOVED_FIELDS}
    common.schema_diagnostics(sink, manifest, jsonschemas.validate_bundled(SCHEMA, checked), _explain)
    for key in data:
        if key not in (jsonschemas.bundled(SCHEMA).get("properties") or {}):
            tool.extra[key] = data[key]


def _identity(tool: Tool, data: dict[str, Any], manifest: Manifest) -> None:
    if isinstance(data.get("id"), str):
        tool.id = data["id"]
        tool.id_line = manifest.line(("id",))
    if isinstance(data.get("name"), str):
        tool.name = data["name"]
    if isinstance(data.get("version"), str):
        tool.version = data["version"]
    if isinstance(data.get("description"), str):
        tool.description = data["description"].strip()


def _mapping(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _effects(data: dict[str, Any]) -> Effects:
    requires = _mapping(data.get("requires"))
    requirements: list[Requirement] = []
    for key, kind in (("network", "network"), ("secrets", "secret"), ("tools", "tool")):
        values = requires.get(key)
        if isinstance(values, list):
            requirements.extend(Requirement(kind, str(v)) for v in values)
    # Defaults are the spec's; a malformed value becomes None ("unknown"), never a reassuring
    # default: a `mutates: "workspace:/x"` string must not read as read-only.
    mutates = data.get("mutates", [])
    risk = data.get("risk_level", 0)
    return Effects(
        mutates=[str(m) for m in mutates] if isinstance(mutates, list) else None,
        risk_level=risk if isinstance(risk, int) and not isinstance(risk, bool) else None,
        approval=_typed(data, "approval", "auto", str),
        idempotent=_typed(data, "idempotent", False, bool),
        cost_class=_typed(data, "cost_class", "trivial", str),
        requires=requirements,
    )


def _examples(tool: Tool, data: dict[str, Any], manifest: Manifest, sink: common.Sink, usable: dict[str, bool]) -> None:
    examples = data.get("examples")
    if not isinstance(examples, list):
        return
    checkers = common.schema_checkers(tool, usable)
    names: dict[str, int] = {}
    for index, entry in enumerate(examples):
        if not isinstance(entry, dict):
            continue
        name = entry.get("name")
        title = name if isinstance(name, str) else f"example {index + 1}"
        example = Example(title=title, line=manifest.line(("examples", index)))
        if "input" in entry:
            example.input = entry["input"]
        if "output" in entry:
            example.output = entry["output"]
        if isinstance(entry.get("note"), str):
            example.note = entry["note"]
        if title in names:
            sink.warning(f"example {title!r} has the same name as the one on line {names[title]}", example.line, "example-title")
        names.setdefault(title, example.line or 0)
        common.check_example(sink, example, *checkers, f"example {title!r}")
        tool.examples.append(example)


def _typed(data: dict[str, Any], key: str, default: Any, kind: type) -> Any:
    value = data.get(key, default)
    return value if isinstance(value, kind) else None


def _explain(error: jsonschema.ValidationError) -> str | None:
    if error.validator == "maxItems" and tuple(error.absolute_path) == ("mutates",):
        return (
            "`approval` is `auto` (also the default when absent), which forbids a non-empty `mutates`; "
            "declare `approval: on-mutate` (or stricter) or leave `mutates` empty"
        )
    return None


def _kind(data: dict[str, Any], tags: list[str]) -> str | None:
    """AIP-14 has no such field; honour an explicit tag or `metadata.model_backed` only."""
    flag = _mapping(data.get("metadata")).get("model_backed")
    if isinstance(flag, bool):
        return MODEL_BACKED if flag else DETERMINISTIC
    if MODEL_BACKED in tags:
        return MODEL_BACKED
    if DETERMINISTIC in tags:
        return DETERMINISTIC
    return None


def timeout_ms(tool: Tool) -> int:
    return tool.timeout_ms or DEFAULT_TIMEOUT_MS  # the model's rule (`Tool.timeout_ms`), the registry's default
