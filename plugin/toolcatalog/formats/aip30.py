"""agentproto AIP-30 `DRIVER.md` (`.drivers/<id>/DRIVER.md`).

The universal front matter is checked against `schemas/aip30-driver.schema.json`
(open at the top level: kind-specific fields belong to subtypes). For
`kind: cli` the `bin`, `bin_args` and `output` block are checked too, since
they are what a build-time run relies on. Linking a driver to the tools it
implements happens later, in `link`, once every tool is known.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .. import jsonschemas
from ..frontmatter import Manifest
from ..model import Driver, Implementation
from . import common

SCHEMA = "aip30-driver.schema.json"
KINDS = ("cli", "http", "mcp", "sdk", "builtin")


def parse(path: Path, source: str, max_bytes: int, raw: bytes | None = None) -> Driver:
    """Parse one DRIVER.md (from its bytes `raw` when already read)."""
    driver, manifest, sink = common.read_driver(path, source, max_bytes, raw, SCHEMA, None, ("id", "name", "version", "kind"))
    if manifest is None:
        return driver
    data: dict[str, Any] = manifest.data

    if driver.kind == "cli":
        _check_cli(data, manifest, sink)
    entries = data.get("implements")
    if isinstance(entries, list):
        for index, entry in enumerate(entries):
            if isinstance(entry, dict) and isinstance(entry.get("tool"), str):
                driver.implements.append(_implementation(entry, manifest.line(("implements", index))))
    return driver


def _check_cli(data: dict[str, Any], manifest: Manifest, sink: common.Sink) -> None:
    """`kind: cli`: the `output` block and `bin` against AIP-29's definitions, `bin_args` a list of strings."""
    schema = jsonschemas.bundled(SCHEMA)
    defs = schema.get("$defs", {})
    for key, def_name in (("output", "cliOutput"), ("bin", "cliBin")):
        if key in data and def_name in defs:
            for problem in jsonschemas.validate_bundled_def(SCHEMA, def_name, data[key], limit=5):
                sink.error(
                    f"{common.field_name((key,) + problem.path)}: {problem.message}",
                    manifest.line((key,) + problem.path),
                    "cli-subtype",
                )
    if "bin" not in data:
        sink.warning("a `kind: cli` driver without `bin` cannot be run", manifest.line(("kind",)), "cli-bin")
    bin_args = data.get("bin_args")
    if bin_args is not None and not (isinstance(bin_args, list) and all(isinstance(a, str) for a in bin_args)):
        sink.error("`bin_args` must be a list of strings", manifest.line(("bin_args",)), "cli-subtype")


def _mapping(value: Any) -> dict[str, Any] | None:
    return value if isinstance(value, dict) else None


def _implementation(entry: dict[str, Any], line: int | None) -> Implementation:
    narrowing = _mapping(entry.get("schema_narrowing")) or {}
    timeout = entry.get("timeout_override_ms")
    version = entry.get("version")
    return Implementation(
        tool_ref=entry["tool"],
        version_range=version if isinstance(version, str) else None,
        line=line,
        drop_inputs=_names(narrowing.get("drop_inputs")),
        drop_outputs=_names(narrowing.get("drop_outputs")),
        metadata=_mapping(entry.get("metadata")) or {},
        timeout_override_ms=timeout if isinstance(timeout, int) and not isinstance(timeout, bool) else None,
        retry_override=_mapping(entry.get("retry_override")),
        cost_override=_mapping(entry.get("cost_override")),
    )


def _names(value: Any) -> list[str]:
    """The strings of a list; nothing from anything else (the schema reports the wrong type)."""
    return [x for x in value if isinstance(x, str)] if isinstance(value, list) else []
