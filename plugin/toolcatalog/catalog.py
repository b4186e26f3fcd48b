"""The JSON catalog agents fetch: one stable, sorted document for the whole workspace.

`tool_entry` turns one tool into its catalog entry (also published alone as
`tools/<slug>.json`), `annotations` derives MCP hints from a contract,
`validate` checks a document against the shipped `catalog.schema.json`, and
`dumps` / `write_atomic` give the bytes and put them on disk. The whole
document, with its links and the other site outputs, is assembled by
`exports.catalog_document` (`build` here is a shortcut to it).

The catalog holds no timestamps (unless SOURCE_DATE_EPOCH asks for one),
durations or absolute paths, so the same sources always give the same bytes,
whether the run results came from the cache or a fresh run.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import stat
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import __version__
from . import jsonschemas
from .model import Catalog, Diagnostic, Driver, Effects, Example, Run, Tool

if TYPE_CHECKING:
    from .options import Options

CATALOG_VERSION = 1
GENERATOR = {"name": "mkdocs-toolcatalog", "version": __version__}
SCHEMA_RESOURCE = "catalog.schema.json"  # in toolcatalog/schemas/
SCHEMA_SITE_PATH = f"schemas/catalog-v{CATALOG_VERSION}.schema.json"  # where the site publishes it
TOOL_STATUSES = (
    "passed", "failed", "invalid", "not-run", "not-applicable", "not-implemented", "missing-requirement", "no-examples",
)

# Mutation entries (`<class>:<scope>`) whose words say they remove things: `destructiveHint`.
_DELETE_WORDS = re.compile(r"(?<![a-z])(delete|deletes|remove|removes|destroy|destroys|drop|drops|purge|purges|wipe|wipes|erase|erases|truncate|truncates)(?![a-z])", re.I)


class CatalogError(Exception):
    """The catalog we produced does not match our own schema: a bug, never a user error."""


@dataclass
class Links:
    """Where one tool's page and JSON live, as the catalog states them."""

    page: str  # absolute with site_url, else site-relative
    json: str | None = None  # same rules; None when per-tool files are off


# -- entries -------------------------------------------------------------------------------------
def tool_entry(tool: Tool, links: Links | None = None) -> dict[str, Any]:
    """One tool's full catalog entry (plain JSON values; not yet path-scrubbed)."""
    links = links or Links(page=tool.url)
    return {
        "id": tool.id,
        "name": tool.name,
        "format": tool.format,
        "version": tool.version,
        "description": tool.description,
        "source": tool.source,
        "descriptor": tool.descriptor_source,
        "digest": digest(tool.abs_path),
        "url": tool.url,
        "page": links.page,
        "json": links.json,
        "valid": tool.valid,
        "status": tool.status,
        "status_detail": tool.status_detail,
        "kind": tool.kind,
        "platforms": list(tool.platforms),
        "tags": list(tool.tags),
        "annotations": annotations(tool.effects),
        "diagnostics": [d.as_dict() for d in sorted_diagnostics(tool.diagnostics)],
        "inputs": tool.inputs,
        "outputs": tool.outputs,
        "effects": tool.effects.as_dict(),
        "capabilities": [c.as_dict() for c in tool.capabilities],
        "examples": [example_entry(e) for e in tool.examples],
        "checks": [c.as_dict() for c in tool.checks],
        "drivers": [driver_entry(d, tool) for d in tool.drivers],
    }


def run_entry(run: Run) -> dict[str, Any]:
    """A run as the catalog shows it: no argv, stderr or duration (those are machine-specific)."""
    d: dict[str, Any] = {"status": run.status, "detail": run.detail}
    if run.driver is not None:
        d["driver"] = run.driver
    if run.has_actual:
        d["actual"] = run.actual
    if run.exit_code is not None:
        d["exit_code"] = run.exit_code
    return d


def example_entry(example: Example) -> dict[str, Any]:
    d: dict[str, Any] = {
        "title": example.title,
        "line": example.line,
        "input": example.input if example.has_input else None,
        "has_input": example.has_input,
        "output": example.output if example.has_output else None,
        "has_output": example.has_output,
        "status": example.status,
        "detail": example.detail,
        "runs": [run_entry(r) for r in example.runs],
    }
    if example.note is not None:
        d["note"] = example.note
    actual = next((r for r in example.runs if r.has_actual), None)
    if actual is not None:
        d["actual"] = actual.actual
    return d


def driver_entry(driver: Driver, tool: Tool) -> dict[str, Any]:
    """A driver as seen from one tool it implements, with the results of its own runs."""
    d: dict[str, Any] = {
        "id": driver.id,
        "name": driver.name,
        "kind": driver.kind,
        "version": driver.version,
        "description": driver.description,
        "source": driver.source,
        "valid": driver.valid,
        "diagnostics": [x.as_dict() for x in sorted_diagnostics(driver.diagnostics)],
    }
    entry = driver.entry_for(tool.id)
    if entry is not None:
        d["implements"] = entry.as_dict()
    if tool.id in driver.run_status:
        d["run"] = driver.run_status[tool.id]
    results = []
    for example in tool.examples:
        for run in example.runs:
            if run.driver == driver.id:
                result = {"example": example.title, **{k: v for k, v in run_entry(run).items() if k != "driver"}}
                results.append(result)
    d["results"] = results
    return d


def annotations(effects: Effects) -> dict[str, bool]:
    """MCP ToolAnnotations hints the contract supports. Absent means unknown, never a guess.

    - `readOnlyHint`: true when `mutates` is declared empty and the risk level (if any) is 0;
      false when something is mutated or the risk level is 1 or more.
    - `destructiveHint`: true for risk level 3 or a mutation whose words say it deletes
      (`delete`, `remove`, `drop`, `purge`, `wipe`, ...); never stated false, since no
      contract field promises "additive only" (MCP's default is true anyway).
    - `idempotentHint`: the contract's `idempotent`, when it has one.
    - `openWorldHint`: true when network access is declared (a `network` requirement or a
      `network:` mutation); never stated false.
    """
    hints: dict[str, bool] = {}
    mutates = effects.mutates
    risk = effects.risk_level
    if (mutates is not None and len(mutates) > 0) or (isinstance(risk, int) and risk >= 1):
        hints["readOnlyHint"] = False
    elif mutates is not None and risk in (None, 0):
        hints["readOnlyHint"] = True
    if risk == 3 or any(_DELETE_WORDS.search(m) for m in mutates or []):
        hints["destructiveHint"] = True
    if isinstance(effects.idempotent, bool):
        hints["idempotentHint"] = effects.idempotent
    if any(r.kind == "network" for r in effects.requires) or any(m.startswith("network:") for m in mutates or []):
        hints["openWorldHint"] = True
    return hints


def digest(path: Path) -> str | None:
    """`sha256:` of a file's bytes, or None when it cannot be read or is not a regular file.

    Opened without blocking, so a FIFO or device named like a manifest never hangs the build.
    """
    h = hashlib.sha256()
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        with os.fdopen(fd, "rb", closefd=False) as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                h.update(block)
    except OSError:
        return None
    finally:
        os.close(fd)
    return "sha256:" + h.hexdigest()


def sorted_diagnostics(diagnostics: list[Diagnostic]) -> list[Diagnostic]:
    return sorted(diagnostics, key=lambda d: (d.path, d.line or 0, d.severity, d.code, d.message))


def status_counts(tools: list[Tool]) -> dict[str, Any]:
    by_status = {status: 0 for status in TOOL_STATUSES}
    for tool in tools:
        by_status[tool.status] = by_status.get(tool.status, 0) + 1
    return {"tools": len(tools), "invalid": sum(not t.valid for t in tools), "by_status": by_status}


# -- machine-specific text ---------------------------------------------------------------------
def scrubber(root: Path) -> Any:
    """A function that rewrites this machine's absolute paths in a string.

    The workspace becomes relative (`<root>/a/b` -> `a/b`, `<root>` -> `.`) and the home folder
    `~`. Longest first, and only whole path components (`/work/main` never matches inside
    `/work/main2`). Only text that comes from running tools (details, outputs, diagnostics) is
    scrubbed; contract text is published as written.
    """
    candidates: dict[str, str] = {}
    home = os.path.expanduser("~")
    for value, label in ((home, "~"), (os.path.realpath(home), "~")):
        candidates[value.rstrip(os.sep)] = label
    for value in (str(root), os.path.realpath(root)):
        candidates[value.rstrip(os.sep) + os.sep] = ""
        candidates[value.rstrip(os.sep)] = "."
    # A one-component prefix ("/") would rewrite every path; "/root" or "/home" is fine.
    usable = sorted(((p, r) for p, r in candidates.items() if len(p.strip(os.sep)) > 0), key=lambda x: (-len(x[0]), x[0]))
    pattern = re.compile("|".join(re.escape(p) + ("" if p.endswith(os.sep) else r"(?![\w\-]|\.[\w\-])") for p, _ in usable))
    table = dict(usable)

    def scrub(text: str) -> str:
        if not usable or os.sep not in text:
            return text
        return pattern.sub(lambda m: table[m.group(0)], text)

    return scrub


def clean(value: Any, scrub: Any = None) -> Any:
    """`value` as strict JSON: `scrub` applied to every string, NaN and infinities made null."""
    if isinstance(value, str):
        return scrub(value) if scrub else value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {(scrub(k) if scrub and isinstance(k, str) else k): clean(v, scrub) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [clean(v, scrub) for v in value]
    return value


# -- the document ----------------------------------------------------------------------------------
def build(catalog: Catalog, options: Options | None = None, site: Any = None) -> dict[str, Any]:
    """The whole catalog document, exactly as the site publishes it (see `exports`)."""
    from . import exports

    return exports.catalog_document(catalog, options, site)


def validate(document: Any, where: str = "catalog") -> None:
    """Raise CatalogError when `document` does not match the shipped catalog schema."""
    errors = jsonschemas.validate_bundled(SCHEMA_RESOURCE, document)
    if errors:
        lines = [f"{jsonschemas.json_path(e.absolute_path)}: {e.message[:300]}" for e in errors[:10]]
        more = f" (and {len(errors) - 10} more)" if len(errors) > 10 else ""
        raise CatalogError(f"the {where} does not match {SCHEMA_RESOURCE}{more}: " + "; ".join(lines))


def validate_tool(entry: Any, where: str = "tool file") -> None:
    """Raise CatalogError when `entry` is not a valid `$defs/tool` of the catalog schema."""
    wrapper = {
        "$schema": "x", "version": CATALOG_VERSION, "generator": dict(GENERATOR), "tools": [entry], "diagnostics": [],
        "counts": {"tools": 1, "invalid": 0, "by_status": {s: 0 for s in TOOL_STATUSES}},
    }
    validate(wrapper, where)


def schema_text() -> str:
    """The shipped schema, byte for byte as packaged (it is published into the site unchanged)."""
    from importlib import resources

    return resources.files("toolcatalog").joinpath("schemas", SCHEMA_RESOURCE).read_text(encoding="utf-8")


def dumps(document: Any) -> str:
    """Sorted keys, two-space indent, non-ASCII as UTF-8 (no escapes), final newline."""
    return json.dumps(document, ensure_ascii=False, sort_keys=True, indent=2, allow_nan=False) + "\n"


def write_atomic(path: Path, text: str) -> None:
    """Write via a temporary file and rename, so readers never see half a catalog."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
            handle.write(text)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
