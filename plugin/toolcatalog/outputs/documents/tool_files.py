"""tools/<slug>.json (option `tool_json_dir`): each tool's catalog entry with a `$schema`, at the
tool's `json_path`, written as soon as its entry is made; verified by recomputing each file's `entry_digest` and holding it to the
catalog's entry for that tool."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from ...model import Tool
from .. import catalog_json, integrity
from ..published import FileDigest, manifest_path
from .base import Check, Draft, Drafting, Output, Plan, SourceError
from .reading import load_json


class OverwriteError(Exception):
    """Two outputs would be one file."""


def other_paths(plan: Plan) -> set[str]:
    """The site paths of the other outputs, known before the first entry: a per-tool file is
    written at once, so it must not take one of theirs."""
    paths = plan.paths
    found = {paths.catalog, paths.schema, paths.mcp, paths.llms, manifest_path(paths.catalog) if paths.catalog else None}
    return {path for path in found if path is not None}


class Writer:
    """Each file is final once its entry is made: it goes to the plan's sink at once (unless the
    site's own file replaces it), and only its digest is kept, for the manifest."""

    def __init__(self, plan: Plan) -> None:
        self.sink, self.overridden, self.taken = plan.sink, plan.overridden, other_paths(plan)
        self.files: dict[str, tuple[FileDigest | None, str]] = {}  # site path -> (digest, None: not written; tool id)

    def entry(self, tool: Tool, entry: dict[str, Any], text: str) -> None:
        path = tool.json_path
        if path is None:
            raise OverwriteError("internal error, please report it: a tool was not placed before its JSON was written")
        if path in self.files or path in self.taken:
            raise OverwriteError(f"the JSON of tool {entry['id']!r} would overwrite {path!r}, another output; "
                                 "change `tool_json_dir` or the file options")
        schema = catalog_json.SCHEMA_ID + "#/$defs/tool"  # the schema's stable $id, as the catalog's own $schema
        digest = None
        if path not in self.overridden:
            digest = self.sink.put(path, (catalog_json.dumps_tool_file(schema, entry, text),))
        self.files[path] = (digest, entry["id"])

    def drafts(self, drafting: Drafting) -> list[Draft]:
        return [Draft(path, f"the JSON of tool {tool_id!r}", None, digest) for path, (digest, tool_id) in sorted(self.files.items())]


def writer(plan: Plan) -> Writer | None:
    return Writer(plan) if plan.paths.tool_json_dir is not None else None


def site_path(entry: dict[str, Any]) -> str | None:
    """The per-tool file's path in the site: `json` as is when relative; when absolute, without
    the site's base URL (`page` is that base + `url`)."""
    link, page, url = entry.get("json"), entry.get("page"), entry.get("url")
    if not isinstance(link, str):
        return None
    if not urlsplit(link).scheme:
        return link
    if isinstance(page, str) and isinstance(url, str) and page.endswith(url):
        base = page[: len(page) - len(url)]
        if base and link.startswith(base):
            return link[len(base):]
    return None


def _one(check: Check, entry: dict[str, Any]) -> bool:
    rel = site_path(entry)
    if rel is None or ".." in rel.split("/") or rel.startswith("/"):
        check.result.problems.append(f"tool {entry.get('id')!r}: cannot tell where its file {entry.get('json')!r} is in the site")
        return False
    try:
        data = load_json(check.source, rel, "tool file")
    except SourceError as exc:
        check.result.problems.append(str(exc))
        return False
    if not isinstance(data, dict):
        check.result.problems.append(f"{rel}: not a tool entry")
        return False
    try:
        actual: str | None = integrity.entry_digest(data)
    except integrity.DigestError:
        actual = None
    if actual is None or actual != data.get(integrity.ENTRY_FIELD):
        check.result.problems.append(f"{rel}: `entry_digest` is {data.get(integrity.ENTRY_FIELD)!r}, the file's digest is {actual!r}")
        return False
    if actual != entry.get(integrity.ENTRY_FIELD):
        check.result.problems.append(f"{rel}: differs from the catalog's entry for tool {entry.get('id')!r}")
        return False
    return True


def verify(check: Check) -> None:
    count = sum(_one(check, entry) for entry in check.document["tools"] if isinstance(entry, dict) and entry.get("json") is not None)
    if count:
        check.result.checked.append(f"{count} per-tool file{'s' if count != 1 else ''}")


OUTPUT = Output("tool_json_dir", writer, verify)
