"""`llms.txt`: the llms.txt convention's index of the tools, with links to their pages and JSON.

With the catalog document at hand it also publishes the digests (`integrity`): the catalog's on
a `Catalog digest:` line, and each tool's entry digest at the end of its list item, so an agent
that reads only llms.txt can still check what it fetches (`toolcatalog verify` does it).
"""

from __future__ import annotations

import posixpath
import re
import unicodedata
from typing import Any

from ..model import Catalog, Tool
from ..statuses import Status
from ..options import CATALOG_SCHEMA_SITE_PATH, Options, output_paths
from . import integrity
from .site import Site, reference

SUMMARY_LIMIT = 240


def _visible(text: str) -> str:
    """`text` on one line, with the characters a reader cannot see (controls, bidirectional
    overrides, zero-width and other format characters) written as `\\uXXXX`."""
    line = " ".join(str(text).split())
    return "".join(f"\\u{ord(ch):04x}" if unicodedata.category(ch) in ("Cc", "Cf", "Cs", "Co", "Cn") else ch for ch in line)


def _md_text(text: str) -> str:
    """One line of Markdown-safe text (no line breaks, no link syntax)."""
    line = _visible(text)
    return line.replace("\\", "\\\\").replace("[", "\\[").replace("]", "\\]").replace("<", "\\<")


def _md_code(text: str) -> str:
    """`text` as one Markdown code span, whatever it holds: on one line (a line break could end
    the list item, a blank line the list), fenced by more backticks than any run inside it, so
    nothing in it is read as Markdown or HTML. An invalid tool's id can be any text at all."""
    value = _visible(text)
    fence = "`" * (max((len(run) for run in re.findall(r"`+", value)), default=0) + 1)
    pad = " " if not value or value[0] == "`" or value[-1] == "`" else ""
    return f"{fence}{pad}{value}{pad}{fence}"


def _md_url(url: str) -> str:
    return url.replace(" ", "%20").replace("(", "%28").replace(")", "%29").replace("<", "%3C").replace(">", "%3E")


def one_line(text: str, limit: int = SUMMARY_LIMIT) -> str:
    line = " ".join(str(text).split())
    if len(line) <= limit:
        return line
    cut = line[: limit - 1].rsplit(" ", 1)[0] if " " in line[: limit - 1] else line[: limit - 1]
    return cut.rstrip(" ,;:.") + "…"


def llms_txt(catalog: Catalog, options: Options, site: Site, document: dict[str, Any] | None = None) -> str:
    """The llms.txt convention: `# Title`, `> summary`, details, then `## Tools` link lists.
    `document`: the catalog document (`catalog_json.document`), for the digests."""
    plan = output_paths(options)
    here = plan.llms or "llms.txt"
    has_json = plan.tool_json_dir is not None
    tools = sorted(catalog.tools, key=lambda t: (t.id, t.source))
    valid = [t for t in tools if t.valid]
    invalid = [t for t in tools if not t.valid]
    passed = sum(t.status == Status.PASSED for t in tools)
    title = site.name or "Tool catalog"
    summary = site.description or (
        f"A verified catalog of {len(tools)} agent tool{'s' if len(tools) != 1 else ''}: each page states a tool's "
        "contract (inputs, outputs, side effects) and what running its examples showed."
    )
    lines = [f"# {_md_text(title)}", "", f"> {_md_text(one_line(summary, 500))}", ""]
    lines.append(
        f"{len(tools)} tool{'s' if len(tools) != 1 else ''}, {passed} passing their examples or checks at build time, "
        f"{len(invalid)} with an invalid manifest. Every tool links to its page"
        + (" and to its contract as JSON." if has_json else ".")
    )
    machine = []
    if plan.catalog:
        machine.append(f"[{_md_text(posixpath.basename(plan.catalog))}]({_md_url(reference(site, plan.catalog, here))}) (the whole catalog; "
                       f"JSON Schema: [{posixpath.basename(CATALOG_SCHEMA_SITE_PATH)}]({_md_url(reference(site, CATALOG_SCHEMA_SITE_PATH, here))}))")
    if plan.mcp:
        machine.append(f"[{_md_text(posixpath.basename(plan.mcp))}]({_md_url(reference(site, plan.mcp, here))}) (an MCP `tools/list` result)")
    if machine:
        lines += ["", "Machine-readable: " + ", ".join(machine) + "."]
    digests: dict[tuple[str, str], str] = {}
    if document is not None and (plan.catalog or has_json):
        digests = {(t["id"], t["source"]): t[integrity.ENTRY_FIELD] for t in document["tools"]}
        what = "each tool's entry digest ends its line"
        if plan.catalog:
            lines += ["", f"Catalog digest: `{document[integrity.CATALOG_FIELD]}` (SHA-256 of the catalog's RFC 8785 canonical JSON; "
                      f"{what}; `toolcatalog verify` checks them)."]
        else:
            lines += ["", f"Digests: {what} (SHA-256 of the entry's RFC 8785 canonical JSON; `toolcatalog verify` checks them)."]

    def item(tool: Tool, note: str) -> str:
        text = f"- [{_md_text(tool.name or tool.id)}]({_md_url(reference(site, tool.url, here))})"
        description = one_line(tool.description)
        if description:
            text += f": {_md_text(description)}"
        extra = [_md_code(tool.id), tool.format, note]
        after = [f"[JSON]({_md_url(reference(site, tool.json_path, here))})" if tool.json_path else ""]
        digest = digests.get((tool.id, tool.source))
        if digest:
            after.append(f"`{digest}`")
        tail = ", ".join(x for x in after if x)
        return text + " (" + ", ".join(x for x in extra if x) + (f"; {tail}" if tail else "") + ")"

    lines += ["", "## Tools", ""]
    caught = "declared no effects but caught with an undeclared one"  # see the page's Observed effects
    lines += [item(t, t.status.value + (f", {caught}" if t.sandbox is not None and t.sandbox.caught_mutating else "")) for t in valid] or ["No valid tools."]
    if invalid:
        lines += ["", "## Optional", ""]
        lines += [item(t, "invalid manifest: see the page for its errors") for t in invalid]
    return "\n".join(lines) + "\n"
