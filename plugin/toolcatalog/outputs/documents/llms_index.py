"""llms.txt (option `llms_file`): the llms.txt index of the tools (`outputs.llms`). It quotes the
catalog digest, so it is drafted with it left out (`published.quoting`).

Verified against the catalog: its `Catalog digest:` line is the catalog's, every tool line's
digest is a catalog entry's and every entry is listed, and every tool line is the one its catalog
entry makes (`llms.from_catalog`, the writer's own code: link, name, description, id, format, status, JSON link, digest, and the headings), so
a changed link or a "failed" turned "passed" names the line and the tool."""

from __future__ import annotations

import re
from typing import Any

from ...model import Tool
from .. import integrity, llms
from ..published import Quoted, plain, quoting
from .base import Check, Draft, Drafting, Output, Plan, SourceError, quoted_draft
from .reading import load_text

_DIGEST = re.compile(r"sha256:[0-9a-f]{64}")


class Writer:
    def __init__(self, plan: Plan, path: str) -> None:
        self.plan, self.path = plan, path

    def entry(self, tool: Tool, entry: dict[str, Any], text: str) -> None:
        return None  # the digests are the drafting's

    def drafts(self, drafting: Drafting) -> list[Draft]:
        plan = self.plan

        def render(catalog_digest: str) -> str:
            document = {**drafting.head, integrity.CATALOG_FIELD: catalog_digest, "tools": drafting.digests}
            return llms.from_catalog(document)

        text: Quoted = quoting(render, drafting.seed) if plan.paths.catalog else plain(render(""))
        return [quoted_draft(self.path, "llms.txt", text)]


def writer(plan: Plan) -> Writer | None:
    return Writer(plan, plan.paths.llms) if plan.paths.llms is not None else None


# -- verifying ------------------------------------------------------------------------------------
def expected_text(check: Check) -> str | None:
    """llms.txt as the build makes it of the catalog (`llms.from_catalog`: the same code the writer
    uses, from the published catalog alone), or None when the catalog does not say how."""
    try:
        return llms.from_catalog(check.document)
    except (KeyError, TypeError, ValueError, AttributeError):
        return None


def expected_lines(made: str | None) -> dict[str, str]:
    """Entry digest -> the line its tool gets in `made` (`expected_text`)."""
    return {digest: line for line in (made or "").splitlines() if line.startswith("- ") for digest in _DIGEST.findall(line)}


def _lines(check: Check, label: str, text: str, made: str | None) -> list[str]:
    listed = []
    expected = expected_lines(made)
    for number, line in enumerate(text.splitlines(), 1):
        if not line.startswith("- "):
            continue
        found = _DIGEST.findall(line)
        listed += found
        for digest in found:
            if digest not in check.entries:
                check.result.problems.append(f"{label}: line {number} lists digest {digest!r}, which is no catalog entry's")
            elif line != expected.get(digest):
                tool = check.entries[digest].get("id")
                check.result.problems.append(f"{label}: line {number} (tool {tool!r}) differs from what its catalog entry makes: "
                                             f"{line[:300]!r}, not {(expected.get(digest) or '(no line)')[:300]!r}")
    return listed


def _whole(check: Check, label: str, text: str, expected: str | None) -> None:
    """Every other line too (headings: a failed tool moved out of "Do not use"; the preamble)."""
    if expected is None:
        check.result.problems.append(f"{label}: the catalog does not say how its llms.txt is made")
        return
    if text == expected:
        return
    mine, theirs = text.splitlines(), expected.splitlines()
    for number, (one, two) in enumerate(zip(mine, theirs), 1):
        if one != two and not (one.startswith("- ") and _DIGEST.search(one)):  # tool lines are named above
            check.result.problems.append(f"{label}: line {number} differs from what the catalog makes: {one[:200]!r}, not {two[:200]!r}")
            return
    if len(mine) != len(theirs):
        check.result.problems.append(f"{label}: {len(mine)} lines, the catalog makes {len(theirs)}")


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
    made = expected_text(check)  # once: what both the tool lines and the rest are held to
    listed = _lines(check, label, text, made)
    _whole(check, label, text, made)
    missing = len(check.entries) - len(set(listed) & set(check.entries))
    if listed and missing:
        check.result.problems.append(f"{label}: {missing} catalog entr{'y is' if missing == 1 else 'ies are'} not listed with their digest")
    if len(check.result.problems) == before and (listed or stated):
        check.result.checked.append(f"{label}: {len(listed)} tool digest{'s' if len(listed) != 1 else ''}"
                                    + (" and the catalog digest" if stated else "") + ", every tool line re-derived from its entry")


OUTPUT = Output("llms_file", writer, verify)
