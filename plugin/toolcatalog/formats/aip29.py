"""agentproto AIP-29 `CLI.md` (`.cli/<name>/CLI.md`), read as a `kind: cli` driver.

AIP-30 says a CLI.md is itself a `kind: cli` driver. Its front matter is closed and checked
against `schemas/aip29-cli.schema.json` (written from AIP-29's field rules). It has no
`implements`: its `commands` tree maps subcommand paths to the TOOL.md files they implement
(`commands.pr.create: ./tools/pr-create/TOOL.md` is `<bin> pr create`), so each leaf becomes an
`implements` entry whose argv is that path. The entries are then linked and run like any CLI
driver's (`link`, `conformance/agentproto.py`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..model import Driver, Implementation
from . import common

SCHEMA = "aip29-cli.schema.json"
MAX_COMMAND_DEPTH = 8  # subcommand paths deeper than this are not real CLIs; not walked


def parse(path: Path, source: str, max_bytes: int, raw: bytes | None = None) -> Driver:
    """Parse one CLI.md (from its bytes `raw` when already read) into a `kind: cli` driver."""
    driver, manifest, _ = common.read_driver(path, source, max_bytes, raw, SCHEMA, "cli", ("id", "name", "version"))
    if manifest is None:
        return driver
    commands = driver.fields.get("commands")
    if isinstance(commands, dict):
        for argv, tool_ref in _leaves(commands, ()):
            driver.implements.append(Implementation(
                tool_ref=tool_ref, version_range=None, line=manifest.line(("commands", *argv)),
                metadata={"cli": {"argv": list(argv)}},
            ))
    return driver


def _leaves(tree: dict[str, Any], above: tuple[str, ...]) -> list[tuple[tuple[str, ...], str]]:
    """(subcommand path, TOOL.md path) for every leaf of a `commands` tree, in file order."""
    out: list[tuple[tuple[str, ...], str]] = []
    if len(above) >= MAX_COMMAND_DEPTH:
        return out
    for key, value in tree.items():
        if isinstance(value, str) and value.strip():
            out.append(((*above, str(key)), value.strip()))
        elif isinstance(value, dict):
            out.extend(_leaves(value, (*above, str(key))))
    return out
