"""llms.txt (option `llms_file`): the llms.txt index of the tools (`outputs.llms`). It quotes the
catalog digest, so it is drafted with it left out (`published.quoting`).

Verified against the catalog: its `Catalog digest:` line is the catalog's, every tool line's
digest is a catalog entry's and every entry is listed, and every tool line is the one its catalog
entry makes (`rederive_line`: link, name, description, id, format, status, JSON link, digest), so
a changed link or a "failed" turned "passed" names the line and the tool."""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import urlsplit

from ...model import Tool
from .. import integrity, llms
from ..published import Quoted, plain, quoting
from ..site import Site, reference
from .base import Check, Draft, Drafting, Output, Plan, SourceError, quoted_draft
from .reading import load_text

_DIGEST = re.compile(r"sha256:[0-9a-f]{64}")
CAUGHT = "declared no effects but caught with an undeclared one"  # as outputs.llms writes it
INVALID = "invalid manifest: see the page for its errors"


class Writer:
    def __init__(self, plan: Plan, path: str) -> None:
        self.plan, self.path = plan, path

    def entry(self, tool: Tool, entry: dict[str, Any], text: str) -> None:
        return None  # the digests are the drafting's

    def drafts(self, drafting: Drafting) -> list[Draft]:
        plan = self.plan

        def render(catalog_digest: str) -> str:
            document = {**drafting.head, integrity.CATALOG_FIELD: catalog_digest, "tools": drafting.digests}
            return llms.llms_txt(plan.catalog, plan.options, plan.site, document)

        text: Quoted = quoting(render, drafting.seed) if plan.paths.catalog else plain(render(""))
        return [quoted_draft(self.path, "llms.txt", text)]


def writer(plan: Plan) -> Writer | None:
    return Writer(plan, plan.paths.llms) if plan.paths.llms is not None else None


# -- verifying ------------------------------------------------------------------------------------
def _link(value: Any, here: str) -> str:
    """A link of the entry (`page`, `json`: absolute with a site_url) as llms.txt at `here` writes it."""
    text = str(value)
    return text if urlsplit(text).scheme else reference(Site(), text, here)


def rederive_line(entry: dict[str, Any], here: str, with_digest: bool) -> str:
    """The line llms.txt at site path `here` gives catalog entry `entry`, from the entry alone.

    Plug-in point: once `llms.from_catalog(document, ...)` exists, the whole file is re-derived by
    that one call (see `expected_lines`)."""
    name = entry.get("name") or entry.get("id")
    text = f"- [{llms._md_text(str(name))}]({llms._md_url(_link(entry.get('page'), here))})"
    description = llms.one_line(str(entry.get("description") or ""))
    if description:
        text += f": {llms._md_text(description)}"
    sandbox = entry.get("sandbox")
    caught = isinstance(sandbox, dict) and sandbox.get("caught_mutating") is True
    note = str(entry.get("status")) + (f", {CAUGHT}" if caught else "") if entry.get("valid") else INVALID
    extra = [llms._md_code(str(entry.get("id"))), str(entry.get("format")), note]
    after = [f"[JSON]({llms._md_url(_link(entry['json'], here))})" if entry.get("json") else ""]
    if with_digest:
        after.append(f"`{entry.get(integrity.ENTRY_FIELD)}`")
    tail = ", ".join(x for x in after if x)
    return text + " (" + ", ".join(x for x in extra if x) + (f"; {tail}" if tail else "") + ")"


def expected_lines(check: Check, here: str) -> dict[str, str]:
    """Entry digest -> the line its tool gets."""
    return {digest: rederive_line(entry, here, True) for digest, entry in check.entries.items()}


def _lines(check: Check, label: str, text: str) -> list[str]:
    listed = []
    expected = expected_lines(check, label)
    for number, line in enumerate(text.splitlines(), 1):
        if not line.startswith("- "):
            continue
        found = _DIGEST.findall(line)
        listed += found
        for digest in found:
            if digest not in check.entries:
                check.result.problems.append(f"{label}: line {number} lists digest {digest!r}, which is no catalog entry's")
            elif line != expected[digest]:
                tool = check.entries[digest].get("id")
                check.result.problems.append(f"{label}: line {number} (tool {tool!r}) differs from what its catalog entry makes: "
                                             f"{line[:300]!r}, not {expected[digest][:300]!r}")
    return listed


def verify(check: Check) -> None:
    label = check.llms_path or "llms.txt"
    if check.llms_path is None and not check.source.exists(label):
        return
    try:
        text = load_text(check.source, label, "llms.txt")
    except SourceError as exc:
        check.result.problems.append(str(exc))
        return
    before = len(check.result.problems)
    stated = [m.group(0) for line in text.splitlines() if line.startswith("Catalog digest:") for m in [_DIGEST.search(line)] if m]
    if stated and stated[0] != check.catalog_digest:
        check.result.problems.append(f"{label}: names catalog digest {stated[0]!r}, the catalog's is {check.catalog_digest!r}")
    listed = _lines(check, label, text)
    missing = len(check.entries) - len(set(listed) & set(check.entries))
    if listed and missing:
        check.result.problems.append(f"{label}: {missing} catalog entr{'y is' if missing == 1 else 'ies are'} not listed with their digest")
    if len(check.result.problems) == before and (listed or stated):
        check.result.checked.append(f"{label}: {len(listed)} tool digest{'s' if len(listed) != 1 else ''}"
                                    + (" and the catalog digest" if stated else "") + ", every tool line re-derived from its entry")


OUTPUT = Output("llms_file", writer, verify)
