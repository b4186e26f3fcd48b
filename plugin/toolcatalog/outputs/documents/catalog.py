"""catalog.json (option `catalog_file`): the catalog document (`outputs.catalog_json`), written
piece by piece from the sealed head and every entry's text (kept compressed until then); verified by recomputing its `catalog_digest` and
every `entry_digest` from the document itself."""

from __future__ import annotations

from typing import Any, Iterator

from ...model import Tool
from .. import catalog_json, integrity
from ..published import Spool
from .base import Check, Draft, Drafting, Output, Plan


class Writer:
    def __init__(self, path: str) -> None:
        self.path = path
        self.texts = Spool()  # the entries' texts, compressed, until the head is sealed

    def entry(self, tool: Tool, entry: dict[str, Any], text: str) -> None:
        self.texts.append(text)

    def drafts(self, drafting: Drafting) -> list[Draft]:
        def final(head: dict[str, Any]) -> Iterator[str]:
            yield from catalog_json.catalog_pieces(head, self.texts)
            self.texts.clear()
        return [Draft(self.path, "the catalog", final)]


def writer(plan: Plan) -> Writer | None:
    return Writer(plan.paths.catalog) if plan.paths.catalog is not None else None


def _recompute(value: dict[str, Any], how: Any) -> str | None:
    try:
        result: str = how(value)
        return result
    except integrity.DigestError:
        return None


def entry_digests(check: Check) -> None:
    """Every entry's digest, recomputed; `check.entries` gets the entries by it."""
    name = check.catalog_path
    bad = 0
    for index, entry in enumerate(check.document["tools"]):
        label = f"{name}: tool {entry.get('id')!r}" if isinstance(entry, dict) else f"{name}: tools[{index}]"
        if not isinstance(entry, dict):
            check.result.problems.append(f"{label} is not an object")
            bad += 1
            continue
        actual = _recompute(entry, integrity.entry_digest)
        if actual is None or actual != entry.get(integrity.ENTRY_FIELD):
            check.result.problems.append(f"{label}: `entry_digest` is {entry.get(integrity.ENTRY_FIELD)!r}, the entry's digest is {actual!r}")
            bad += 1
        if actual is not None:
            check.entries[actual] = entry
    count = len(check.document["tools"])
    if not bad:
        check.result.checked.append(f"{name}: {count} entry digest{'s' if count != 1 else ''}")


def catalog_digest(document: dict[str, Any]) -> str | None:
    return _recompute(document, integrity.catalog_digest)


def verify(check: Check) -> None:
    name = check.catalog_path
    stated = check.document.get(integrity.CATALOG_FIELD)
    if check.catalog_digest is None or check.catalog_digest != stated:
        check.result.problems.append(f"{name}: `catalog_digest` is {stated!r}, the document's digest is {check.catalog_digest!r}")
    else:
        check.result.checked.append(f"{name}: catalog digest {check.catalog_digest}")
    entry_digests(check)


OUTPUT = Output("catalog_file", writer, verify, anchor=True)
