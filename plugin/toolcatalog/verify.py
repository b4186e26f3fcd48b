"""`toolcatalog verify DIR`: recompute every digest a published catalog states, and compare.

DIR is a built site (or a `toolcatalog export` folder). What is checked (see `outputs.integrity`
for what each digest covers):

- the catalog (`catalog.json`, or `--catalog`): its `catalog_digest` and every tool's
  `entry_digest`, recomputed from the document itself;
- every per-tool file the catalog links (`json`): its own `entry_digest`, recomputed, and that it
  is the catalog's entry for that tool;
- `mcp-tools.json` (or `--mcp`): every tool's `_meta["toolcatalog/digest"]` is a catalog entry's
  digest and its `_meta["toolcatalog/verification"]` that entry's verification; the list's
  `_meta["toolcatalog/catalog-digest"]` is the catalog's;
- `llms.txt` (or `--llms`): its `Catalog digest:` line, and one entry digest per tool.

A file the catalog links that is missing is a mismatch; `mcp-tools.json` and `llms.txt` are
checked when present (when named with `--mcp` / `--llms`, they must be). Given a catalog file
instead of a folder, only the catalog itself is checked.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from .files import ReadError, read_capped
from .outputs import integrity
from .outputs.catalog_json import MAX_CATALOG_BYTES, read_published

VERSION = 2
_DIGEST = re.compile(r"sha256:[0-9a-f]{64}")


class VerifyError(Exception):
    """Nothing to verify: the catalog is missing, unreadable or has no digests."""


@dataclass
class Result:
    checked: list[str] = field(default_factory=list)  # what agreed
    problems: list[str] = field(default_factory=list)  # every mismatch

    @property
    def ok(self) -> bool:
        return not self.problems


def _load(path: Path, what: str) -> Any:
    """A published JSON file, read like any untrusted file: capped, regular files only, depth-limited."""
    if not path.exists():
        raise VerifyError(f"{what} {str(path)!r} does not exist")
    try:
        return read_published(path)
    except ReadError as exc:
        raise VerifyError(f"{what} {str(path)!r} cannot be read: {exc}") from None
    except ValueError as exc:  # not UTF-8, not JSON, nested too deep
        raise VerifyError(f"{what} {str(path)!r} is not a readable JSON file: {exc}") from None


def _recompute(value: dict[str, Any], how: Any) -> str | None:
    try:
        return how(value)
    except integrity.DigestError:
        return None


def verify(target: Path, catalog: str = "catalog.json", mcp: str | None = None, llms: str | None = None) -> Result:
    """Check the catalog at `target` (a site folder, or a catalog file) and the files beside it.
    Raises VerifyError when there is no version 2 catalog to check."""
    target = Path(target)
    site = None if target.is_file() else target
    catalog_path = target if site is None else site.joinpath(*catalog.split("/"))
    document = _load(catalog_path, "catalog")
    if not isinstance(document, dict) or not isinstance(document.get("tools"), list):
        raise VerifyError(f"{str(catalog_path)!r} is not a tool catalog (no `tools` list)")
    if document.get("version") != VERSION:
        raise VerifyError(f"{str(catalog_path)!r} is a version {document.get('version')!r} catalog; only version {VERSION} catalogs carry digests")
    result = Result()
    name = catalog_path.name if site is None else catalog

    entries: dict[str, dict[str, Any]] = {}  # recomputed entry digest -> entry
    bad_entries = 0
    for index, entry in enumerate(document["tools"]):
        label = f"{name}: tool {entry.get('id')!r}" if isinstance(entry, dict) else f"{name}: tools[{index}]"
        if not isinstance(entry, dict):
            result.problems.append(f"{label} is not an object")
            bad_entries += 1
            continue
        actual = _recompute(entry, integrity.entry_digest)
        if actual is None or actual != entry.get(integrity.ENTRY_FIELD):
            result.problems.append(f"{label}: `entry_digest` is {entry.get(integrity.ENTRY_FIELD)!r}, the entry's digest is {actual!r}")
            bad_entries += 1
        if actual is not None:
            entries[actual] = entry
    stated = document.get(integrity.CATALOG_FIELD)
    catalog_digest = _recompute(document, integrity.catalog_digest)
    if catalog_digest is None or catalog_digest != stated:
        result.problems.append(f"{name}: `catalog_digest` is {stated!r}, the document's digest is {catalog_digest!r}")
    else:
        result.checked.append(f"{name}: catalog digest {catalog_digest}")
    if not bad_entries:
        result.checked.append(f"{name}: {len(document['tools'])} entry digest{'s' if len(document['tools']) != 1 else ''}")
    if site is None:
        return result

    _tool_files(site, document, result)
    _mcp(site, mcp, catalog_digest, entries, result)
    _llms(site, llms, catalog_digest, entries, result)
    return result


def _site_path(entry: dict[str, Any]) -> str | None:
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


def _tool_files(site: Path, document: dict[str, Any], result: Result) -> None:
    count = 0
    for entry in document["tools"]:
        if not isinstance(entry, dict) or entry.get("json") is None:
            continue
        rel = _site_path(entry)
        if rel is None or ".." in rel.split("/") or rel.startswith("/"):
            result.problems.append(f"tool {entry.get('id')!r}: cannot tell where its file {entry.get('json')!r} is in the site")
            continue
        path = site.joinpath(*rel.split("/"))
        try:
            data = _load(path, "tool file")
        except VerifyError as exc:
            result.problems.append(str(exc))
            continue
        if not isinstance(data, dict):
            result.problems.append(f"{rel}: not a tool entry")
            continue
        actual = _recompute(data, integrity.entry_digest)
        if actual is None or actual != data.get(integrity.ENTRY_FIELD):
            result.problems.append(f"{rel}: `entry_digest` is {data.get(integrity.ENTRY_FIELD)!r}, the file's digest is {actual!r}")
        elif actual != entry.get(integrity.ENTRY_FIELD):
            result.problems.append(f"{rel}: differs from the catalog's entry for tool {entry.get('id')!r}")
        else:
            count += 1
    if count:
        result.checked.append(f"{count} per-tool file{'s' if count != 1 else ''}")


def _mcp(site: Path, name: str | None, catalog_digest: str | None, entries: dict[str, dict[str, Any]], result: Result) -> None:
    path = site.joinpath(*(name or "mcp-tools.json").split("/"))
    if name is None and not path.is_file():
        return
    try:
        data = _load(path, "MCP tool list")
    except VerifyError as exc:
        result.problems.append(str(exc))
        return
    label = name or "mcp-tools.json"
    tools = data.get("tools") if isinstance(data, dict) else None
    if not isinstance(tools, list):
        result.problems.append(f"{label}: not an MCP tools/list result")
        return
    before = len(result.problems)
    meta = data.get("_meta") if isinstance(data.get("_meta"), dict) else {}
    stated = meta.get("toolcatalog/catalog-digest")
    if stated is not None and stated != catalog_digest:
        result.problems.append(f"{label}: names catalog digest {stated!r}, the catalog's is {catalog_digest!r}")
    for tool in tools:
        tool_meta = tool.get("_meta") if isinstance(tool, dict) and isinstance(tool.get("_meta"), dict) else {}
        digest = tool_meta.get("toolcatalog/digest")
        label_tool = f"{label}: tool {tool.get('name') if isinstance(tool, dict) else tool!r}"
        entry = entries.get(digest) if isinstance(digest, str) else None
        if entry is None:
            result.problems.append(f"{label_tool}: digest {digest!r} is no catalog entry's")
        elif tool_meta.get("toolcatalog/verification") != entry.get("verification"):
            result.problems.append(f"{label_tool}: its verification differs from the catalog entry's")
    if len(result.problems) == before:
        result.checked.append(f"{label}: {len(tools)} tool digest{'s' if len(tools) != 1 else ''}" + (" and the catalog digest" if stated else ""))


def _llms(site: Path, name: str | None, catalog_digest: str | None, entries: dict[str, dict[str, Any]], result: Result) -> None:
    path = site.joinpath(*(name or "llms.txt").split("/"))
    if name is None and not path.is_file():
        return
    label = name or "llms.txt"
    try:
        text = read_capped(path, MAX_CATALOG_BYTES).decode("utf-8")
    except (ReadError, UnicodeDecodeError) as exc:
        result.problems.append(f"{label}: cannot be read: {exc}")
        return
    before = len(result.problems)
    stated_catalog = [m.group(0) for line in text.splitlines() if line.startswith("Catalog digest:") for m in [_DIGEST.search(line)] if m]
    if stated_catalog and stated_catalog[0] != catalog_digest:
        result.problems.append(f"{label}: names catalog digest {stated_catalog[0]!r}, the catalog's is {catalog_digest!r}")
    listed = [m.group(0) for line in text.splitlines() if line.startswith("- ") for m in _DIGEST.finditer(line)]
    for digest in listed:
        if digest not in entries:
            result.problems.append(f"{label}: lists digest {digest!r}, which is no catalog entry's")
    missing = len(entries) - len(set(listed) & set(entries))
    if listed and missing:
        result.problems.append(f"{label}: {missing} catalog entr{'y is' if missing == 1 else 'ies are'} not listed with their digest")
    if len(result.problems) == before and (listed or stated_catalog):
        result.checked.append(f"{label}: {len(listed)} tool digest{'s' if len(listed) != 1 else ''}" + (" and the catalog digest" if stated_catalog else ""))
