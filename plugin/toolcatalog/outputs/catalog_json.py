"""catalog.json: one stable, sorted document for the whole workspace, and each tool's entry.

`tool_entry` turns one tool into its catalog entry (also published alone as
`tools/<slug>.json`), `document` assembles the whole catalog, `validate` checks
it against the shipped `schemas/catalog.schema.json`, and `dumps` gives the bytes.

Each entry carries what the build verified (`verification`), where its manifest
came from (`provenance`) and its own digest (`entry_digest`); the document
carries the runner's identity (`runner`) and its digest (`catalog_digest`), see
`integrity`.

The catalog holds no timestamps (unless SOURCE_DATE_EPOCH asks for one),
durations or absolute paths, so the same sources always give the same bytes,
whether the run results came from the cache or a fresh run.
"""

from __future__ import annotations

import datetime as dt
import json
import re
import zlib
import posixpath
from importlib import resources
from pathlib import Path
from typing import Any, Iterator, Protocol

from .. import accessview, claims, coverage, invoke, jsonschemas, quality
from ..jsonvalues import MAX_DEPTH, indented, loads_limited
from .._version import __version__
from .. import checkout
from ..files import ReadError, file_digest, read_capped
from ..model import Catalog, Diagnostic, Driver, Example, Run, Tool
from ..observed import SandboxReport
from .published import WRITTEN_FIELD, manifest_path
from ..statuses import Status
from ..options import CATALOG_SCHEMA_SITE_PATH, Options, output_paths
from ..scrub import Scrub, clean, scrubber
from . import integrity
from .provenance import Origin, runner
from .site import Site, generated_at, reference
from .verification import observed_entry, verification

CATALOG_VERSION = 2
READABLE_VERSIONS = (1, 2)  # what `toolcatalog diff` reads
GENERATOR = {"name": "mkdocs-toolcatalog", "version": __version__}
SCHEMA_RESOURCE = "catalog.schema.json"  # in toolcatalog/schemas/
SCHEMA_SITE_PATH = CATALOG_SCHEMA_SITE_PATH
# The catalog schema's stable `$id` (also the document's `$schema`): the catalog version's schema as
# the project's own documentation site publishes it (that site is built with this plugin, which
# writes the schema at SCHEMA_SITE_PATH). A new catalog version gets a new URL; this one never changes.
SCHEMA_ID = "https://mkdocs-toolcatalog.github.io/mkdocs-toolcatalog/" + CATALOG_SCHEMA_SITE_PATH
_MAX_COMMIT_OBJECT = 1024 * 1024
MAX_CATALOG_BYTES = 256 * 1024 * 1024  # reading a published catalog (diff, verify)
# A catalog holds manifest values (at most MAX_DEPTH levels) a few levels down.
CATALOG_DEPTH = MAX_DEPTH + 16


def read_published(path: Path) -> Any:
    """A published JSON file (catalog, per-tool file, MCP list), read as untrusted: capped, a regular
    file, nested no deeper than a catalog can be. Raises ReadError, or ValueError (not UTF-8, not
    JSON, too deep)."""
    return loads_limited(read_capped(path, MAX_CATALOG_BYTES).decode("utf-8"), CATALOG_DEPTH)


class CatalogError(Exception):
    """The catalog we produced does not match our own schema: a bug, never a user error."""


# -- entries -------------------------------------------------------------------------------------
def tool_entry(tool: Tool, site: Site | None = None, origin: Origin | None = None) -> dict[str, Any]:
    """One tool's full catalog entry (plain JSON values; not yet path-scrubbed, no digest yet).
    `origin`: the workspace's repository and checkout (none: provenance names only the path)."""
    site = site or Site()
    origin = origin or Origin(tool.abs_path.parent)
    claim = claims.of(tool)
    derived = claim.hints
    entry = {
        "id": tool.id,
        "name": tool.name,
        "format": tool.format,
        "version": tool.version,
        "description": tool.description,
        "source": tool.source,
        "descriptor": tool.descriptor_source,
        "digest": file_digest(tool.abs_path),
        "url": tool.url,
        "page": site.link(tool.url),
        "json": site.link(tool.json_path) if tool.json_path else None,
        "valid": tool.valid,
        "status": tool.status.value,
        "status_detail": tool.status_detail,
        "kind": claim.kind.value,
        "platforms": list(tool.platforms),
        "tags": list(tool.tags),
        "annotations": {name: hint.value for name, hint in derived.items()},
        "annotation_reasons": {name: {"fields": list(hint.fields), "reason": hint.reason} for name, hint in derived.items()},
        "verification": verification(tool, site),
        "provenance": origin.of_manifest(tool.source),
        "diagnostics": [d.as_dict() for d in sorted_diagnostics(tool.diagnostics)],
        "inputs": tool.inputs,
        "outputs": tool.outputs,
        "effects": effects_entry(tool, claim),
        "claims": claim.as_dict(),
        "invoke": invoke.of(tool, claim),
        "capabilities": capabilities_entry(tool, claim),
        "use_cases": list(tool.use_cases),
        "examples": [example_entry(e) for e in tool.examples],
        "checks": [c.as_dict() for c in tool.checks],
        "drivers": [driver_entry(d, tool) for d in tool.drivers],
        "sandbox": sandbox_entry(tool.sandbox),
        "coverage": coverage.of(tool).as_dict(),
        "quality": quality_entry(tool),
    }
    if tool.upstream is not None:
        entry["upstream"] = dict(tool.upstream)
    entry.update(contract_entry(tool))
    return entry


def contract_entry(tool: Tool) -> dict[str, Any]:
    """The contract fields a reviewer judges a tool by (accessview): where its data may go and what
    it needs (`access`), and how an AIP-14 contract asks to be executed (`execution`)."""
    return {"access": accessview.of(tool).as_dict(), "execution": tool.execution.as_dict()}


def capabilities_entry(tool: Tool, claim: claims.Claims) -> list[dict[str, Any]]:
    """Each capability with its kind as the evidence supports it (`kind`) and as `--help` labels it (`label`)."""
    by_name = {c.name: c for c in claim.kind.capabilities}
    out = []
    for c in tool.capabilities:
        known = by_name.get(c.name)
        out.append({**c.as_dict(), "kind": known.kind if known else "unknown", "label": c.kind})
    return out


def effects_entry(tool: Tool, claim: claims.Claims) -> dict[str, Any]:
    """The contract's effects, with `read_only` as every output states it (the observed effects win
    over the declared ones) and `declared_read_only` as the contract alone says."""
    entry = tool.effects.as_dict()
    entry["declared_read_only"] = entry["read_only"]
    entry["read_only"] = claim.effects.read_only
    return entry


def quality_entry(tool: Tool) -> dict[str, Any]:
    codes: dict[str, int] = {}
    for d in tool.diagnostics:
        if d.code in quality.CODES:
            codes[d.code] = codes.get(d.code, 0) + 1
    return {"findings": sum(codes.values()), "codes": dict(sorted(codes.items()))}


def sandbox_entry(report: SandboxReport | None) -> dict[str, Any] | None:
    if report is None:
        return None
    entry = report.as_dict()
    if report.observed is not None:
        entry["observed"] = observed_entry(report.observed)
    return entry


def run_entry(run: Run) -> dict[str, Any]:
    """A run as the catalog shows it: no argv, stderr or duration (those are machine-specific)."""
    d: dict[str, Any] = {"status": run.status.value, "detail": run.detail}
    if run.driver is not None:
        d["driver"] = run.driver
    if run.has_actual:
        d["actual"] = run.actual
    if run.exit_code is not None:
        d["exit_code"] = run.exit_code
    if run.sandbox is not None:
        d["sandbox"] = run.sandbox
    if run.observed is not None:
        d["observed"] = observed_entry(run.observed)
    if run.undeclared:
        d["undeclared_effects"] = list(run.undeclared)
    return d


def example_entry(example: Example) -> dict[str, Any]:
    d: dict[str, Any] = {
        "title": example.title,
        "line": example.line,
        "input": example.input if example.has_input else None,
        "has_input": example.has_input,
        "output": example.output if example.has_output else None,
        "has_output": example.has_output,
        "status": example.status.value,
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
    d["access"] = accessview.of_driver(driver, tool).as_dict()
    return d


def sorted_diagnostics(diagnostics: list[Diagnostic]) -> list[Diagnostic]:
    return sorted(diagnostics, key=lambda d: (d.path, d.line or 0, d.severity, d.code, d.message))


def status_counts(tools: list[Tool]) -> dict[str, Any]:
    by_status = {status: 0 for status in Status.values()}
    for tool in tools:
        by_status[tool.status.value] += 1
    return {"tools": len(tools), "invalid": sum(not t.valid for t in tools), "by_status": by_status}


# -- machine-specific text ---------------------------------------------------------------------
# `scrubber` and `clean` live in scrub.py: the engine scrubs results once, before the model sees
# them; the catalog applies them again to what running tools produced, which changes nothing more.


def validate(document: Any, where: str = "catalog") -> None:
    """Raise CatalogError when `document` does not match the shipped catalog schema."""
    errors = jsonschemas.validate_bundled(SCHEMA_RESOURCE, document)
    if errors:
        lines = [f"{jsonschemas.json_path(e.absolute_path)}: {e.message[:300]}" for e in errors[:10]]
        more = f" (and {len(errors) - 10} more)" if len(errors) > 10 else ""
        raise CatalogError(f"the {where} does not match {SCHEMA_RESOURCE}{more}: " + "; ".join(lines))


def validate_tool(entry: Any, where: str = "tool file") -> None:
    """Raise CatalogError when `entry` is not a valid `$defs/tool` of the catalog schema (the schema
    puts no rule across entries, so checking a catalog's entries one by one checks its list)."""
    wrapper = {
        "$schema": "x", "version": CATALOG_VERSION, "generator": dict(GENERATOR), "runner": runner(), "tools": [entry],
        "generated": {"time": None, "time_source": None, "generator": dict(GENERATOR), "commit": None},
        "published": published(Options(), Site()),
        "diagnostics": [], "counts": {"tools": 1, "invalid": 0, "by_status": {s: 0 for s in Status.values()}},
        "catalog_digest": integrity.PREFIX + "0" * 64,
    }
    validate(wrapper, where)


def schema_text() -> str:
    """The shipped schema, byte for byte as packaged (it is published into the site unchanged)."""
    return resources.files("toolcatalog").joinpath("schemas").joinpath(SCHEMA_RESOURCE).read_text(encoding="utf-8")


def dumps(document: Any) -> str:
    """Sorted keys, two-space indent, non-ASCII as UTF-8 (no escapes), final newline."""
    return indented(document) + "\n"  # what json.dumps(..., indent=2, allow_nan=False) writes, faster


# Python writes indented JSON with its slow, pure-Python encoder. Each tool's entry is written once
# (`dumps(entry)`) and that text is reused for the catalog and the tool's own file: exactly the
# bytes `dumps` gives for those documents (tests compare them), in half the time.
_TOOLS_LINE = '\n  "tools": []'


TOOLS_HOLE = _TOOLS_LINE  # where a document's `tools` go in its skeleton (`skeleton`)


class Texts(Protocol):
    """Entry texts, counted and read in order (a list, or `published.Spool`)."""

    def __len__(self) -> int: ...

    def __iter__(self) -> Iterator[str]: ...


def skeleton(document: dict[str, Any]) -> str | None:
    """`dumps` of `document` with no tools, when its `tools` line is found exactly once (always:
    strings never hold a raw newline); the entries go in place of `TOOLS_HOLE` (`tools_body`)."""
    text = dumps({**document, "tools": []})
    return text if text.count(_TOOLS_LINE) == 1 else None


def tools_body(entry_texts: Texts) -> Iterator[str]:
    """What replaces `TOOLS_HOLE` in `skeleton(document)` so that the whole is `dumps` of the
    document whose `tools` are the values written as `entry_texts`, piece by piece."""
    if not entry_texts:
        yield _TOOLS_LINE
        return
    yield '\n  "tools": [\n'
    for index, text in enumerate(entry_texts):
        yield (",\n    " if index else "    ") + text.rstrip("\n").replace("\n", "\n    ")
    yield "\n  ]"


def catalog_pieces(document: dict[str, Any], entry_texts: Texts) -> Iterator[str]:
    """`dumps_catalog(document, entry_texts)` piece by piece: the whole text never exists."""
    frame = skeleton(document)
    if frame is None:  # cannot happen, see `skeleton`
        yield dumps({**document, "tools": [json.loads(text) for text in entry_texts]})
        return
    before, after = frame.split(_TOOLS_LINE)
    yield before
    yield from tools_body(entry_texts)
    yield after


def dumps_catalog(document: dict[str, Any], entry_texts: Texts) -> str:
    """`dumps` of `document` whose `tools` are the values written as `entry_texts` (`dumps(value)`
    each): `document["tools"]` itself is not read, so the caller may have let the values go. (The
    MCP list is written this way too.)"""
    return "".join(catalog_pieces(document, entry_texts))


def dumps_tool_file(schema: str, entry: dict[str, Any], entry_text: str) -> str:
    """`dumps({"$schema": schema, **entry})`, with `entry_text` = `dumps(entry)`: `$schema` sorts
    before every key of an entry, so it is the first line."""
    if not entry or not entry_text.startswith("{\n") or "$schema" in entry or min(entry) < "$schema":
        return dumps({"$schema": schema, **entry})
    return '{\n  "$schema": ' + json.dumps(schema, ensure_ascii=False) + ",\n" + entry_text[2:]


def _scrub_entry(entry: dict[str, Any], scrub: Any) -> dict[str, Any]:
    """Strip machine-specific paths from what running the tool produced; contract data stays as written."""
    out: dict[str, Any] = clean(entry)
    # `clean(..., scrub)` below builds new values, so these keep the contract's text as written.
    contract_examples = [(example["input"], example["output"]) for example in out["examples"]]
    contract_drivers = [
        {key: driver[key] for key in ("implements", "name", "description", "source", "version", "kind", "id", "access") if key in driver}
        for driver in out["drivers"]
    ]
    for key in ("status_detail", "diagnostics", "examples", "checks", "capabilities", "drivers", "sandbox", "claims"):
        out[key] = clean(out[key], scrub)
    for key in ("observed_effects", "undeclared_effects"):  # the sandbox's findings, as in `sandbox`
        out["verification"][key] = clean(out["verification"][key], scrub)
    # Contract data inside examples and drivers (`input`, `output`, `implements`) is copied back unscrubbed.
    for cleaned, example in zip(out["examples"], contract_examples):
        cleaned["input"], cleaned["output"] = example
    for cleaned, driver in zip(out["drivers"], contract_drivers):
        cleaned.update(driver)
    return out


def head(catalog: Catalog, options: Options | None = None, site: Site | None = None, extra_diagnostics: list[Diagnostic] | None = None) -> dict[str, Any]:
    """The catalog document without its `tools` and `catalog_digest`: everything known before the
    first entry is made. `extra_diagnostics`: catalog-level findings of the outputs themselves
    (tools left out of the MCP list)."""
    options = options or Options()
    site = site or Site()
    paths = output_paths(options)
    diagnostics = [*catalog.diagnostics, *(extra_diagnostics or [])]
    out: dict[str, Any] = {
        "$schema": SCHEMA_ID,
        "generated": generated(catalog),
        "published": published(options, site),
        "version": CATALOG_VERSION,
        "generator": dict(GENERATOR),
        "runner": runner(),
        "counts": status_counts(catalog.tools),
        "diagnostics": clean([d.as_dict() for d in sorted_diagnostics(diagnostics)], _scrubber(catalog, options)),
    }
    stamp = generated_at()
    if stamp is not None:
        out["generated_at"] = stamp
    if paths.catalog is not None:  # where the digest manifest is (it lists this file too; docs/catalog-json.md)
        out[WRITTEN_FIELD] = {"manifest": posixpath.basename(manifest_path(paths.catalog))}
    return out


def generated(catalog: Catalog) -> dict[str, Any]:
    """When and by what the catalog was made, reproducibly: the time is SOURCE_DATE_EPOCH when set,
    else the checked-out commit's committer time (read from a loose object; null when the commit is
    packed or there is none), never the clock, so two builds of one commit give the same bytes."""
    found = checkout.find(catalog.root)
    commit = found.commit if found is not None else None
    stamp, source = generated_at(), "SOURCE_DATE_EPOCH"
    if stamp is None:
        epoch = _commit_time(found.top, commit) if found is not None and commit else None
        stamp, source = (_iso(epoch), "commit") if epoch is not None else (None, None)  # type: ignore[assignment]
    return {"time": stamp, "time_source": source, "generator": dict(GENERATOR), "commit": commit}


def _iso(epoch: int) -> str:
    return dt.datetime.fromtimestamp(epoch, dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _objects_dir(top: Path) -> Path | None:
    marker = top / ".git"
    if marker.is_dir():
        git_dir = marker
    else:
        try:
            text = read_capped(marker, 64 * 1024).decode("utf-8", "replace")
        except (OSError, ReadError):
            return None
        if not text.startswith("gitdir:"):
            return None
        target = Path(text[len("gitdir:"):].strip())
        git_dir = target if target.is_absolute() else top / target
    common = git_dir
    if (git_dir / "commondir").is_file():
        try:
            pointer = Path(read_capped(git_dir / "commondir", 64 * 1024).decode("utf-8", "replace").strip())
        except (OSError, ReadError):
            return None
        common = pointer if pointer.is_absolute() else git_dir / pointer
    return common / "objects"


def _commit_time(top: Path, commit: str) -> int | None:
    """The committer time of a loose commit object, or None (packed, unreadable, not a commit)."""
    objects = _objects_dir(top)
    if objects is None:
        return None
    try:
        raw = read_capped(objects / commit[:2] / commit[2:], _MAX_COMMIT_OBJECT)
        data = zlib.decompressobj().decompress(raw, _MAX_COMMIT_OBJECT)
    except (OSError, ReadError, zlib.error):
        return None
    header, _, body = data.partition(b"\0")
    if not header.startswith(b"commit "):
        return None
    for line in body.split(b"\n\n", 1)[0].split(b"\n"):
        if line.startswith(b"committer "):
            match = re.search(rb" (\d{1,12}) [+-]\d{4}$", line)
            return int(match.group(1)) if match else None
    return None


def published(options: Options, site: Site) -> dict[str, Any]:
    """Where the build publishes each file and the options that shape them: what the MCP list and
    llms.txt are made from besides the entries, so `mcp.from_catalog` and `llms.from_catalog`
    re-derive them from this document alone."""
    paths = output_paths(options)
    return {
        "site": {"name": site.name, "description": site.description, "url": site.url},
        "files": {"catalog": paths.catalog, "tool_json_dir": paths.tool_json_dir, "mcp": paths.mcp, "llms": paths.llms,
                  "schema": paths.schema},
        "mcp": {"ttl_ms": options.mcp_ttl_ms, "cache_scope": options.mcp_cache_scope, "exclude": sorted(options.mcp_exclude),
                "list": options.mcp_list},
    }


def entries(catalog: Catalog, options: Options | None = None, site: Site | None = None) -> Iterator[tuple[Tool, dict[str, Any]]]:
    """Each tool with its entry, in the published order (by id, then source), each entry made when
    asked for: a caller that lets each go before asking for the next never holds them all."""
    options = options or Options()
    site = site or Site()
    scrub = _scrubber(catalog, options)
    origin = Origin.of(catalog.root, site)
    for tool in sorted(catalog.tools, key=lambda t: (t.id, t.source)):
        yield tool, _scrub_entry(tool_entry(tool, site, origin), scrub)


def _scrubber(catalog: Catalog, options: Options) -> Scrub:
    return scrubber(catalog.root, [catalog.root / p for p in options.paths])


def document(catalog: Catalog, options: Options | None = None, site: Site | None = None, extra_diagnostics: list[Diagnostic] | None = None) -> dict[str, Any]:
    """The catalog as published at `catalog_file`, validated against the shipped schema, every
    entry held at once (`outputs.render` makes the same bytes one entry at a time).

    Raises CatalogError when the result breaks the schema (a bug)."""
    document = head(catalog, options, site, extra_diagnostics)
    document["tools"] = [entry for _tool, entry in entries(catalog, options, site)]
    try:
        integrity.seal(document)
    except integrity.DigestError as exc:
        raise CatalogError(f"the catalog cannot be digested: {exc}") from None
    validate(document)
    return document
