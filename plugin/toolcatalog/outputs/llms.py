"""`llms.txt`: the llms.txt convention's index of the tools, with links to their pages and JSON.

With the catalog document at hand it also publishes the digests (`integrity`): the catalog's on
a `Catalog digest:` line, and each tool's entry digest at the end of its list item, so an agent
that reads only llms.txt can still check what it fetches (`toolcatalog verify` does it).

`## Tools` lists the tools an agent can use (`claims.Claims.usable`); the rest (failed, invalid, or
caught with an undeclared effect) come under DO_NOT_USE, each with the reason, never under
llms.txt's `## Optional` (which means "skippable context"). The file is a pure function of the
published catalog document (`from_catalog`), which reads only each entry's `projection`.
"""

from __future__ import annotations

import posixpath
import re
import unicodedata
from typing import Any

from ..model import Catalog
from ..options import CATALOG_SCHEMA_SITE_PATH, Options
from . import integrity
from .site import Site, reference

SUMMARY_LIMIT = 240


def _visible(text: str) -> str:
    """`text` on one line, with the characters a reader cannot see (controls, bidirectional
    overrides, zero-width and other format characters) written as `\\uXXXX`."""
    line = " ".join(str(text).split())
    if line.isprintable():  # no character in an "Other" category (Cc, Cf, Cs, Co, Cn): nothing to write out
        return line
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


LLMS_FIELDS = ("id", "source", "valid", "name", "description", "format", "status", "page", "json", "claims", integrity.ENTRY_FIELD)
DO_NOT_USE = "## Do not use: failed, invalid or caught with an undeclared effect"


def projection(entry: dict[str, Any]) -> dict[str, Any]:
    """What llms.txt reads of a catalog entry (`from_catalog` reads nothing else)."""
    claim = entry["claims"]
    return {**{key: entry[key] for key in LLMS_FIELDS if key != "claims"},
            "claims": {"usable": claim["usable"], "usable_why": claim["usable_why"], "effects": {"observed": claim["effects"]["observed"]},
                       "kind": {"value": claim["kind"]["value"]}}}


def _ref(site: Site, link: str, here: str) -> str:
    """A link as the catalog states it (absolute with a site URL, else a site path), from `here`."""
    return link if site.url else reference(site, link, here)


def _item(entry: dict[str, Any], note: str, site: Site, here: str, digested: bool) -> str:
    text = f"- [{_md_text(entry['name'] or entry['id'])}]({_md_url(_ref(site, entry['page'], here))})"
    description = one_line(entry["description"])
    if description:
        text += f": {_md_text(description)}"
    extra = [_md_code(entry["id"]), entry["format"], note]
    after = [f"[JSON]({_md_url(_ref(site, entry['json'], here))})" if entry["json"] else ""]
    if digested:
        after.append(f"`{entry[integrity.ENTRY_FIELD]}`")
    tail = ", ".join(x for x in after if x)
    return text + " (" + ", ".join(x for x in extra if x) + (f"; {tail}" if tail else "") + ")"


def _note(entry: dict[str, Any]) -> str:
    claim = entry["claims"]
    parts = [entry["status"], f"kind {claim['kind']['value']}"]
    if claim["effects"]["observed"] == "caught":
        parts.append("declared no effects but caught with an undeclared one")
    elif claim["effects"]["observed"] == "undeclared":
        parts.append("caught with an undeclared effect")
    if not claim["usable"]:
        parts.append(f"do not use: {claim['usable_why']}")
    return ", ".join(parts)


def _preamble(document: dict[str, Any], site: Site, here: str) -> list[str]:
    files = document["published"]["files"]
    tools = document["tools"]
    invalid = sum(not t["valid"] for t in tools)
    passed = sum(t["status"] == "passed" for t in tools)
    title = site.name or "Tool catalog"
    summary = site.description or (
        f"A verified catalog of {len(tools)} agent tool{'s' if len(tools) != 1 else ''}: each page states a tool's "
        "contract (inputs, outputs, side effects) and what running its examples showed."
    )
    lines = [f"# {_md_text(title)}", "", f"> {_md_text(one_line(summary, 500))}", ""]
    lines.append(
        f"{len(tools)} tool{'s' if len(tools) != 1 else ''}, {passed} passing their examples or checks at build time, "
        f"{invalid} with an invalid manifest. Every tool links to its page"
        + (" and to its contract as JSON." if files["tool_json_dir"] is not None else ".")
    )
    machine = []
    if files["catalog"]:
        machine.append(f"[{_md_text(posixpath.basename(files['catalog']))}]({_md_url(reference(site, files['catalog'], here))}) (the whole catalog; "
                       f"JSON Schema: [{posixpath.basename(CATALOG_SCHEMA_SITE_PATH)}]({_md_url(reference(site, CATALOG_SCHEMA_SITE_PATH, here))}))")
    if files["mcp"]:
        machine.append(f"[{_md_text(posixpath.basename(files['mcp']))}]({_md_url(reference(site, files['mcp'], here))}) (an MCP `tools/list` result)")
    if machine:
        lines += ["", "Machine-readable: " + ", ".join(machine) + "."]
    what = "each tool's entry digest ends its line"
    if files["catalog"]:
        lines += ["", f"Catalog digest: `{document[integrity.CATALOG_FIELD]}` (SHA-256 of the catalog's RFC 8785 canonical JSON; "
                  f"{what}; `toolcatalog verify` checks them)."]
    elif files["tool_json_dir"] is not None:
        lines += ["", f"Digests: {what} (SHA-256 of the entry's RFC 8785 canonical JSON; `toolcatalog verify` checks them)."]
    return lines


def from_catalog(document: dict[str, Any]) -> str:
    """llms.txt, byte for byte as `outputs.render` publishes it, from the published catalog document
    alone (each entry's `projection` is enough): `# Title`, `> summary`, details, `## Tools` (the
    tools an agent can use, `claims.usable`), then DO_NOT_USE for the rest, each with the reason."""
    published = document["published"]
    files = published["files"]
    site = Site(url=published["site"]["url"], name=published["site"]["name"], description=published["site"]["description"])
    here = files["llms"] or "llms.txt"
    digested = bool(files["catalog"] or files["tool_json_dir"] is not None)
    tools = sorted(document["tools"], key=lambda t: (t["id"], t["source"]))
    usable = [t for t in tools if t["claims"]["usable"]]
    unusable = [t for t in tools if not t["claims"]["usable"]]
    lines = _preamble(document, site, here)
    lines += ["", "## Tools", ""]
    lines += [_item(t, _note(t), site, here, digested) for t in usable] or ["No tool an agent can use."]
    if unusable:
        lines += ["", DO_NOT_USE, "", "An agent must not call these: each failed, has an invalid manifest, or was caught doing what its contract does not declare.", ""]
        lines += [_item(t, _note(t), site, here, digested) for t in unusable]
    return "\n".join(lines) + "\n"


def llms_txt(catalog: Catalog, options: Options, site: Site, document: dict[str, Any] | None = None) -> str:
    """llms.txt for a harvested catalog (`from_catalog` of its catalog document, made when not given)."""
    from . import catalog_json  # a sibling below: the document, when the caller has none

    if document is None or "published" not in document:
        document = catalog_json.document(catalog, options, site)
    return from_catalog(document)
