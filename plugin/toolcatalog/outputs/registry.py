"""The one list of outputs for agents (`OUTPUTS`), and how they are written and verified.

Each output is one module of `outputs.documents` with its writer and its verifier (see
`documents.base`); adding an output means adding its module and one entry here. The list's order
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
from .documents.base import Check, Draft, Drafting, Listed, Output, Plan, Writer
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


def mcp_plan(catalog_: Catalog, options: Options) -> mcp.McpPlan | None:
    paths = output_paths(options)
    if paths.mcp is None:
        return None
    return mcp.plan(catalog_, posixpath.basename(paths.mcp), options.mcp_exclude, options.mcp_list == "all")


def plan(catalog_: Catalog, options: Options, site: Site, others: Mapping[str, FileDigest] | None = None,
         overridden: Collection[str] = ()) -> Plan:
    return Plan(catalog_, options, site, output_paths(options), mcp_plan(catalog_, options), others, frozenset(overridden))


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


def _files(drafts: list[Draft], head: dict[str, Any], overridden: Collection[str]) -> dict[str, str]:
    files: dict[str, str] = {}
    for draft in drafts:
        if draft.path in files:
            raise RenderError(f"{draft.what} would overwrite {draft.path!r}, another output; change `tool_json_dir` or the file options")
        files[draft.path] = draft.final(head)
    for path in overridden:
        files.pop(path, None)
    return files


def render(catalog_: Catalog, options: Options, site: Site, others: Mapping[str, FileDigest] | None = None,
           overridden: Collection[str] = ()) -> Rendered:
    """Every enabled output. `others`: the site's own files, for the digest manifest;
    `overridden`: outputs the site's own files replace (in `others`, not written).
    Raises RenderError, integrity.DigestError, catalog_json.CatalogError, mcp.McpShapeError, OptionsError."""
    the_plan = plan(catalog_, options, site, others, overridden)
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
    head[integrity.CATALOG_FIELD] = sealer.finish()
    files = _files(drafts, head, overridden)
    manifest.complete(files, the_plan)  # last: it lists every other file's final bytes
    return Rendered(files, head)


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


__all__ = ["OUTPUTS", "RenderError", "Rendered", "plan", "render", "verify"]
