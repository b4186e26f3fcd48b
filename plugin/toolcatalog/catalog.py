"""The JSON catalog agents fetch: one stable, sorted document for the whole workspace.

The catalog holds no timestamps, durations or absolute paths, so the same
sources always give the same bytes.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

from . import __version__
from .model import Catalog, Tool

CATALOG_VERSION = 1


def tool_entry(tool: Tool) -> dict[str, Any]:
    return {
        "id": tool.id,
        "name": tool.name,
        "format": tool.format,
        "version": tool.version,
        "description": tool.description,
        "source": tool.source,
        "descriptor": tool.descriptor_source,
        "url": tool.url,
        "valid": tool.valid,
        "status": tool.status,
        "status_detail": tool.status_detail,
        "kind": tool.kind,
        "platforms": tool.platforms,
        "tags": tool.tags,
        "diagnostics": [d.as_dict() for d in _sorted(tool.diagnostics)],
        "inputs": tool.inputs,
        "outputs": tool.outputs,
        "effects": tool.effects.as_dict(),
        "capabilities": [c.as_dict() for c in tool.capabilities],
        "examples": [e.as_dict() for e in tool.examples],
        "checks": [c.as_dict() for c in tool.checks],
        "drivers": [d.as_dict(tool.id) for d in tool.drivers],
    }


def _sorted(diagnostics: list) -> list:
    return sorted(diagnostics, key=lambda d: (d.path, d.line or 0, d.severity, d.message))


def build(catalog: Catalog) -> dict[str, Any]:
    counts: dict[str, int] = {}
    for tool in catalog.tools:
        counts[tool.status] = counts.get(tool.status, 0) + 1
    return {
        "version": CATALOG_VERSION,
        "generator": {"name": "mkdocs-toolcatalog", "version": __version__},
        "counts": {"tools": len(catalog.tools), "invalid": sum(not t.valid for t in catalog.tools), "by_status": dict(sorted(counts.items()))},
        "tools": [tool_entry(t) for t in catalog.tools],
        "diagnostics": [d.as_dict() for d in _sorted(catalog.diagnostics)],
    }


def dumps(document: Any) -> str:
    return json.dumps(document, ensure_ascii=False, sort_keys=True, indent=2) + "\n"


def write_atomic(path: Path, text: str) -> None:
    """Write via a temporary file and rename, so readers never see half a catalog."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
            handle.write(text)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
