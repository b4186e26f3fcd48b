"""The one list of outputs for agents (`OUTPUTS`), and how they are written and verified.

Each output is one module of `outputs.documents` with its writer and its verifier (see
`documents.base`); adding an output means adding its module and one entry here. `emit` hands each
file to a sink (a folder: `outputs.write_site`) as soon as it is final; `render` keeps them. The list's order
is the order files are written in and verified in: the catalog first (every other check needs
its digests), the digest manifest last among writers (it digests every other file).
"""

from __future__ import annotations

import hashlib
import posixpath
from dataclasses import dataclass
from typing import Any, Collection, Mapping

from ..model import Catalog
from ..options import Options, output_paths
from . import catalog_json, integrity, llms, mcp
from .documents import catalog, llms_index, manifest, mcp_list, schema, tool_files
from .documents.base import Check, Collect, Draft, Drafting, Listed, Output, Plan, Sink, Writer
from .published import FileDigest, QuotingError
from .site import Site

OUTPUTS: tuple[Output, ...] = (
    catalog.OUTPUT,
    schema.OUTPUT,
    tool_files.OUTPUT,
    mcp_list.OUTPUT,
    llms_index.OUTPUT,
    manifest.OUTPUT,
)


class RenderError(Exception):
    """An output cannot be produced (a message for the user; `outputs.ExportError` carries it)."""


@dataclass
class Rendered:
    files: dict[str, str]  # site path -> text, in the registry's order
    head: dict[str, Any]  # the catalog document without `tools`, sealed


@dataclass
class Emitted:
    written: dict[str, FileDigest]  # site path -> the digest of what the sink took, in the registry's order
    head: dict[str, Any]  # the catalog document without `tools`, sealed


def mcp_plan(catalog_: Catalog, options: Options) -> mcp.McpPlan | None:
    paths = output_paths(options)
    if paths.mcp is None:
        return None
    return mcp.plan(catalog_, posixpath.basename(paths.mcp), options.mcp_exclude, options.mcp_list == "all")


def plan(catalog_: Catalog, options: Options, site: Site, others: Mapping[str, FileDigest] | None = None,
         overridden: Collection[str] = (), sink: Sink | None = None) -> Plan:
    return Plan(catalog_, options, site, output_paths(options), mcp_plan(catalog_, options), others, overridden,
                sink if sink is not None else Collect())


def _stream(the_plan: Plan, writers: list[Writer]) -> tuple[dict[str, Any], integrity.Sealer, list[dict[str, Any]]]:
    """Every entry, made one at a time, sealed, validated and handed to each writer."""
    mcp_plan_ = the_plan.mcp_plan
    head = catalog_json.head(the_plan.catalog, the_plan.options, the_plan.site, mcp_plan_.diagnostics if mcp_plan_ else None)
    catalog_json.validate({**head, "tools": [], integrity.CATALOG_FIELD: integrity.PREFIX + "0" * 64})
    sealer = integrity.Sealer(head)
    digests: list[dict[str, Any]] = []  # what llms.txt reads of each entry (`llms.projection`)
    for tool, entry in catalog_json.entries(the_plan.catalog, the_plan.options, the_plan.site):
        sealer.add(entry)
        catalog_json.validate_tool(entry, "catalog")
        digests.append(llms.projection(entry))
        text = catalog_json.dumps(entry)
        for writer in writers:
            writer.entry(tool, entry, text)
    return head, sealer, digests


def _drafts(writers: list[Writer], drafting: Drafting) -> list[Draft]:
    for writer in writers:
        drafting.drafts += writer.drafts(drafting)
    return drafting.drafts


def _put(drafts: list[Draft], head: dict[str, Any], the_plan: Plan, manifest_now: bool = True) -> dict[str, FileDigest]:
    """Every draft to the sink, in order (those not put already), then the manifest, made of what
    went before it; site path -> digest of every file written."""
    seen: set[str] = set()
    written: dict[str, FileDigest] = {}
    for draft in drafts:
        if draft.path in seen:
            raise RenderError(f"{draft.what} would overwrite {draft.path!r}, another output; change `tool_json_dir` or the file options")
        seen.add(draft.path)
    for draft in drafts:
        if draft.path in the_plan.overridden:
            continue
        if draft.last and not manifest_now:
            continue
        if draft.last:
            text = manifest.complete(written, the_plan)  # last: it lists every other file's final bytes
            if text is not None:
                written[draft.path] = the_plan.sink.put(draft.path, (text,))
        elif draft.final is not None:
            written[draft.path] = the_plan.sink.put(draft.path, draft.final(head))
        elif draft.written is not None:
            written[draft.path] = draft.written
    return written


def emit(catalog_: Catalog, options: Options, site: Site, sink: Sink, others: Mapping[str, FileDigest] | None = None,
         overridden: Collection[str] = (), manifest_now: bool = True) -> Emitted:
    """Every enabled output, each file handed to `sink` once final (a per-tool file as soon as
    its entry is made; the catalog and the MCP list piece by piece at the end), none held whole.
    `others`: the site's own files, for the digest manifest; `overridden`: outputs the site's own
    files replace (in `others`, never written; only asked path by path). On an error, files
    already handed to the sink stay there. `manifest_now=False`: all but the digest manifest, which
    `documents.manifest.listing` makes later from the site as it then is (the MkDocs plugin).
    Raises RenderError, integrity.DigestError, catalog_json.CatalogError, mcp.McpShapeError, OptionsError."""
    the_plan = plan(catalog_, options, site, others, overridden, sink)
    writers = [w for w in (output.writer(the_plan) for output in OUTPUTS) if w is not None]
    try:
        head, sealer, digests = _stream(the_plan, writers)
    except tool_files.OverwriteError as exc:
        raise RenderError(str(exc)) from None
    seed = hashlib.sha256("\n".join(d[integrity.ENTRY_FIELD] for d in digests).encode()).hexdigest()
    drafting = Drafting(dict(head), digests, seed, [])
    try:
        drafts = _drafts(writers, drafting)
    except QuotingError as exc:
        raise RenderError(f"internal error, please report it: {exc}") from None
    del digests, drafting
    head[integrity.CATALOG_FIELD] = sealer.finish()
    return Emitted(_put(drafts, head, the_plan, manifest_now), head)


def render(catalog_: Catalog, options: Options, site: Site, others: Mapping[str, FileDigest] | None = None,
           overridden: Collection[str] = ()) -> Rendered:
    """`emit` into memory: every enabled output's text, in the registry's order.
    Raises what `emit` raises."""
    collect = Collect()
    done = emit(catalog_, options, site, collect, others, overridden)
    return Rendered({path: collect.files[path] for path in done.written}, done.head)


def verify(check: Check) -> None:
    """Every output's verifier: the anchors first (the catalog, then the manifest), then the
    others, which read only what the manifest lists when the source cannot be listed (a URL).
    Only the catalog's when `check.site_only`."""
    anchors = [output for output in OUTPUTS if output.anchor]
    for output in anchors[:1] if check.site_only else anchors:
        output.verify(check)
    if check.site_only:
        return
    if check.source.listing() is None:  # a URL: nothing the manifest does not list (nothing more if it is bad)
        check.source = Listed(check.source, {*(check.manifest or {}), check.catalog_path, *check.manifest_paths})
    for output in OUTPUTS:
        if not output.anchor:
            output.verify(check)


__all__ = ["OUTPUTS", "Emitted", "RenderError", "Rendered", "emit", "plan", "render", "verify"]
