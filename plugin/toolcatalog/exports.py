"""Everything a site publishes for agents, built the same way by the plugin and `toolcatalog export`.

`render(catalog, options, site)` returns every output as `{site path: text}`:

- `catalog_file` (default `catalog.json`): the catalog document, validated against the shipped
  `schemas/catalog.schema.json`, which is published beside it as `schemas/catalog-v1.schema.json`.
- `tool_json_dir` (default `tools`): one `<slug>.json` per tool (the tool's catalog entry plus a
  `$schema` pointing at `#/$defs/tool`), named like the tool's page (`pages.slug`, same
  de-duplication).
- `mcp_file` (default `mcp-tools.json`): an MCP `tools/list` result, `{"tools": [...]}`.
- `llms_file` (default `llms.txt`): the llms.txt index of the tools.

An empty string (or None) turns an output off. Nothing here reads the clock (except
SOURCE_DATE_EPOCH, when set), the machine's paths, or the order files were found in, so the same
sources give the same bytes; `write` puts each file in place atomically.

MCP export rules (all documented decisions):

- Only valid tools are exported. An invalid one, and a tool whose `inputs` cannot be an MCP
  `inputSchema`, is left out, with a catalog-level `warning` diagnostic (code `mcp-omitted`,
  path = the manifest) in catalog.json — only when the MCP output is on.
- `inputSchema`: the tool's `inputs` when its root is an object schema (`type: object`, or no
  `type`, or a `type` list holding `object`: `type` is then set to `object`, which MCP requires
  and which only narrows to the objects every MCP call passes). A root that cannot be an object
  (`type: string`, a boolean schema) or no `inputs` at all (smart tools) is left out: wrapping
  the value in an `input` property would invent a calling convention the implementation does
  not follow.
- `outputSchema`: the tool's `outputs` only when its root is `type: object` (MCP's
  `structuredContent` is an object); otherwise absent.
- `annotations`: `catalog.annotations` (present only when the contract supports the hint).
- `name`: the tool id when it is already 1-128 characters of `[A-Za-z0-9_.-]`; otherwise every
  run of other characters becomes `_`, cut to 128; a clash with an earlier name (tools in id
  order) gets `_2`, `_3`, ... `_meta["toolcatalog/id"]` always carries the original id.
"""

from __future__ import annotations

import copy
import datetime as dt
import os
import posixpath
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from . import catalog as catalog_json
from . import pages as page_plan
from .model import WARNING, Catalog, Diagnostic, Tool
from .options import Options

MCP_NAME = re.compile(r"^[A-Za-z0-9_.-]{1,128}$")
_MCP_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]+")
MCP_META_PREFIX = "toolcatalog/"
OUTPUT_OPTIONS = ("catalog_file", "tool_json_dir", "mcp_file", "llms_file")
SUMMARY_LIMIT = 240


class ExportError(Exception):
    """An output cannot be produced: bad output options, or (a bug) a schema mismatch."""


class OptionsError(ExportError):
    """The output options (or SOURCE_DATE_EPOCH) are unusable: the user's to fix."""


@dataclass
class Site:
    """What the outputs need to know about the site: MkDocs' `site_url`, `site_name`, `site_description`."""

    url: str | None = None
    name: str = ""
    description: str = ""

    def __post_init__(self) -> None:
        url = (self.url or "").strip()
        if url:
            # MkDocs' `site_url` option makes the path end with "/"; do the same so plugin and CLI agree.
            parts = urlsplit(url)
            if parts.scheme and parts.netloc and not parts.path.endswith("/"):
                url = urlunsplit(parts._replace(path=parts.path + "/"))
            elif not (parts.scheme and parts.netloc) and not url.endswith("/"):
                url += "/"
        self.url = url or None
        self.name = (self.name or "").strip()
        self.description = (self.description or "").strip()

    def link(self, path: str) -> str:
        """A site path as the catalog states it: absolute with a site_url, else as it is."""
        return self.url + path if self.url else path


# -- options -----------------------------------------------------------------------------------------
def output_path(value: Any, name: str, folder: bool = False) -> str | None:
    """The normalized site path of an output option, None when it is off ("" or None).

    Raises ExportError for a path outside the site (absolute, `..`, a drive, backslashes).
    """
    if value is None or value is False or (isinstance(value, str) and not value.strip()):
        return None
    if not isinstance(value, str):
        raise OptionsError(f"`{name}` must be a path inside the site (or \"\" to turn it off), not {value!r}")
    text = value.strip()
    if text.startswith("/") or "\\" in text or re.match(r"^[A-Za-z]:", text) or os.path.isabs(text):
        raise OptionsError(f"`{name}` must be a path inside the site, not {value!r}")
    parts = [p for p in text.split("/") if p not in ("", ".")]
    if ".." in parts:
        raise OptionsError(f"`{name}` must be a path inside the site, not {value!r}")
    if not parts:
        if folder:
            return ""  # the site root
        raise OptionsError(f"`{name}` must name a file, not {value!r}")
    if not folder and text.endswith("/"):
        raise OptionsError(f"`{name}` must name a file, not a folder: {value!r}")
    return "/".join(parts)


@dataclass
class Plan:
    catalog: str | None
    tool_json_dir: str | None  # "" = the site root
    mcp: str | None
    llms: str | None

    @property
    def schema(self) -> str | None:
        """The published schema: whenever a catalog or per-tool files are."""
        return catalog_json.SCHEMA_SITE_PATH if self.catalog is not None or self.tool_json_dir is not None else None


def plan_outputs(options: Options) -> Plan:
    """Which outputs are on and where they go. Raises ExportError on bad or clashing paths."""
    plan = Plan(
        catalog=output_path(getattr(options, "catalog_file", None), "catalog_file"),
        tool_json_dir=output_path(getattr(options, "tool_json_dir", None), "tool_json_dir", folder=True),
        mcp=output_path(getattr(options, "mcp_file", None), "mcp_file"),
        llms=output_path(getattr(options, "llms_file", None), "llms_file"),
    )
    files = {"catalog_file": plan.catalog, "mcp_file": plan.mcp, "llms_file": plan.llms, "(the catalog schema)": plan.schema}
    seen: dict[str, str] = {}
    for name, path in files.items():
        if path is None:
            continue
        if path in seen:
            raise OptionsError(f"`{name}` and `{seen[path]}` are both {path!r}; give each output its own file")
        seen[path] = name
    return plan


def check_options(options: Options) -> None:
    """Raise ExportError when the output options are unusable (called before a build starts)."""
    plan_outputs(options)


# -- names and links -------------------------------------------------------------------------------
def tool_json_paths(catalog: Catalog, options: Options) -> dict[int, str]:
    """id(tool) -> site path of its JSON file (named like its page, unless that would be the path of
    another output, such as `catalog.json` beside them); empty when per-tool files are off."""
    plan = plan_outputs(options)
    folder = plan.tool_json_dir
    if folder is None:
        return {}
    others = (plan.catalog, plan.mcp, plan.llms, plan.schema)
    reserved = frozenset(
        posixpath.basename(p)[: -len(".json")] for p in others
        if p and p.endswith(".json") and posixpath.dirname(p) == (folder or "")
    )
    return {
        key: f"{folder}/{name}.json" if folder else f"{name}.json"
        for key, name in page_plan.names(catalog, reserved).items()
    }


def reference(site: Site, target: str, from_file: str) -> str:
    """A URI reference to `target` (a site path) as written inside `from_file` (a site path):
    absolute with a site_url, else relative to the referring file's folder."""
    if site.url:
        return site.url + target
    base = posixpath.dirname(from_file) or "."
    if base == ".":
        return target
    out = posixpath.relpath(target, base)
    return out + "/" if target.endswith("/") and not out.endswith("/") else out


def mcp_name(tool_id: str) -> str:
    if MCP_NAME.match(tool_id):
        return tool_id
    name = _MCP_UNSAFE.sub("_", tool_id)[:128]
    return name if name.strip("_") else "tool"


def mcp_input_schema(schema: Any) -> dict[str, Any] | None:
    """The MCP `inputSchema` for a tool's `inputs`, or None when its root cannot be an object."""
    if not isinstance(schema, dict):
        return None
    declared = schema.get("type", "object")
    if declared == "object" or (isinstance(declared, list) and "object" in declared):
        out = copy.deepcopy(schema)
        out["type"] = "object"
        return out
    return None


def mcp_output_schema(schema: Any) -> dict[str, Any] | None:
    if isinstance(schema, dict) and schema.get("type") == "object":
        return copy.deepcopy(schema)
    return None


@dataclass
class McpPlan:
    tools: list[tuple[Tool, str]]  # exported tools and their MCP names, in catalog order
    diagnostics: list[Diagnostic]  # one `mcp-omitted` warning per tool left out


def plan_mcp(catalog: Catalog, file_name: str = "mcp-tools.json") -> McpPlan:
    exported: list[tuple[Tool, str]] = []
    diagnostics: list[Diagnostic] = []
    used: set[str] = set()
    for tool in sorted(catalog.tools, key=lambda t: (t.id, t.source)):
        why = None
        if not tool.valid:
            why = "its manifest is invalid (see its errors)"
        elif tool.inputs is None:
            why = "the contract declares no input schema, and MCP requires one"
        elif mcp_input_schema(tool.inputs) is None:
            why = "its `inputs` schema's root is not an object, and MCP arguments are always an object"
        if why:
            diagnostics.append(Diagnostic(WARNING, f"tool {tool.id!r} is left out of {file_name}: {why}", tool.source, None, "mcp-omitted"))
            continue
        base = mcp_name(tool.id)
        name, n = base, 2
        while name in used:
            suffix = f"_{n}"
            name, n = base[: 128 - len(suffix)] + suffix, n + 1
        used.add(name)
        exported.append((tool, name))
    return McpPlan(exported, diagnostics)


# -- the documents ---------------------------------------------------------------------------------
def generated_at() -> str | None:
    """SOURCE_DATE_EPOCH as ISO 8601 UTC, None when unset. A malformed value is an error."""
    value = os.environ.get("SOURCE_DATE_EPOCH")
    if value is None or value.strip() == "":
        return None
    try:
        stamp = dt.datetime.fromtimestamp(int(value.strip()), tz=dt.timezone.utc)
    except (ValueError, OverflowError, OSError):
        raise OptionsError(f"SOURCE_DATE_EPOCH must be a whole number of seconds since 1970, not {value!r}") from None
    return stamp.strftime("%Y-%m-%dT%H:%M:%SZ")


def _tool_links(catalog: Catalog, options: Options, site: Site) -> dict[int, catalog_json.Links]:
    json_paths = tool_json_paths(catalog, options)
    return {
        id(t): catalog_json.Links(page=site.link(t.url), json=site.link(json_paths[id(t)]) if id(t) in json_paths else None)
        for t in catalog.tools
    }


def _scrub_entry(entry: dict[str, Any], scrub: Any) -> dict[str, Any]:
    """Strip machine-specific paths from what running the tool produced; contract data stays as written."""
    out = catalog_json.clean(entry)
    for key in ("status_detail", "diagnostics", "examples", "checks", "capabilities", "drivers"):
        out[key] = catalog_json.clean(out[key], scrub)
    # Contract data inside examples and drivers (`input`, `output`, `implements`) is copied back unscrubbed.
    for cleaned, example in zip(out["examples"], catalog_json.clean(entry["examples"])):
        cleaned["input"], cleaned["output"] = example["input"], example["output"]
    for cleaned, driver in zip(out["drivers"], catalog_json.clean(entry["drivers"])):
        if "implements" in driver:
            cleaned["implements"] = driver["implements"]
        for key in ("name", "description", "source", "version", "kind", "id"):
            cleaned[key] = driver[key]
    return out


def catalog_document(catalog: Catalog, options: Options | None = None, site: Site | None = None) -> dict[str, Any]:
    """The catalog as published at `catalog_file`, validated against the shipped schema."""
    options = options or Options()
    site = site or Site()
    plan = plan_outputs(options)
    links = _tool_links(catalog, options, site)
    scrub = catalog_json.scrubber(catalog.root)
    tools = sorted(catalog.tools, key=lambda t: (t.id, t.source))
    diagnostics = list(catalog.diagnostics)
    if plan.mcp is not None:
        diagnostics.extend(plan_mcp(catalog, posixpath.basename(plan.mcp)).diagnostics)
    document: dict[str, Any] = {
        "$schema": reference(site, catalog_json.SCHEMA_SITE_PATH, plan.catalog or "catalog.json"),
        "version": catalog_json.CATALOG_VERSION,
        "generator": dict(catalog_json.GENERATOR),
        "counts": catalog_json.status_counts(tools),
        "tools": [_scrub_entry(catalog_json.tool_entry(t, links[id(t)]), scrub) for t in tools],
        "diagnostics": catalog_json.clean([d.as_dict() for d in catalog_json.sorted_diagnostics(diagnostics)], scrub),
    }
    stamp = generated_at()
    if stamp is not None:
        document["generated_at"] = stamp
    try:
        catalog_json.validate(document)
    except catalog_json.CatalogError as exc:
        raise ExportError(f"internal error, please report it: {exc}") from None
    return document


def mcp_document(catalog: Catalog, options: Options, site: Site) -> dict[str, Any]:
    """The MCP `tools/list` result: `{"tools": [Tool, ...]}`."""
    plan = plan_outputs(options)
    links = _tool_links(catalog, options, site)
    tools = []
    for tool, name in plan_mcp(catalog, posixpath.basename(plan.mcp or "mcp-tools.json")).tools:
        entry: dict[str, Any] = {"name": name, "title": tool.name, "inputSchema": mcp_input_schema(tool.inputs)}
        if tool.description:
            entry["description"] = tool.description
        output = mcp_output_schema(tool.outputs)
        if output is not None:
            entry["outputSchema"] = output
        hints = catalog_json.annotations(tool.effects)
        if hints:
            entry["annotations"] = hints
        meta: dict[str, Any] = {MCP_META_PREFIX + "id": tool.id, MCP_META_PREFIX + "page": links[id(tool)].page}
        if links[id(tool)].json:
            meta[MCP_META_PREFIX + "json"] = links[id(tool)].json
        if tool.version:
            meta[MCP_META_PREFIX + "version"] = tool.version
        entry["_meta"] = meta
        tools.append(catalog_json.clean(entry))
    for entry in tools:
        if not MCP_NAME.match(entry["name"]) or entry["inputSchema"].get("type") != "object":
            raise ExportError(f"internal error, please report it: MCP tool {entry['name']!r} breaks the MCP Tool shape")
    return {"tools": tools}


def _md_text(text: str) -> str:
    """One line of Markdown-safe text (no line breaks, no link syntax)."""
    line = " ".join(str(text).split())
    return line.replace("\\", "\\\\").replace("[", "\\[").replace("]", "\\]").replace("<", "\\<")


def _md_url(url: str) -> str:
    return url.replace(" ", "%20").replace("(", "%28").replace(")", "%29").replace("<", "%3C").replace(">", "%3E")


def one_line(text: str, limit: int = SUMMARY_LIMIT) -> str:
    line = " ".join(str(text).split())
    if len(line) <= limit:
        return line
    cut = line[: limit - 1].rsplit(" ", 1)[0] if " " in line[: limit - 1] else line[: limit - 1]
    return cut.rstrip(" ,;:.") + "…"


def llms_txt(catalog: Catalog, options: Options, site: Site) -> str:
    """The llms.txt convention: `# Title`, `> summary`, details, then `## Tools` link lists."""
    plan = plan_outputs(options)
    here = plan.llms or "llms.txt"
    json_paths = tool_json_paths(catalog, options)
    tools = sorted(catalog.tools, key=lambda t: (t.id, t.source))
    valid = [t for t in tools if t.valid]
    invalid = [t for t in tools if not t.valid]
    passed = sum(t.status == "passed" for t in tools)
    title = site.name or "Tool catalog"
    summary = site.description or (
        f"A verified catalog of {len(tools)} agent tool{'s' if len(tools) != 1 else ''}: each page states a tool's "
        "contract (inputs, outputs, side effects) and what running its examples showed."
    )
    lines = [f"# {_md_text(title)}", "", f"> {_md_text(one_line(summary, 500))}", ""]
    lines.append(
        f"{len(tools)} tool{'s' if len(tools) != 1 else ''}, {passed} passing their examples or checks at build time, "
        f"{len(invalid)} with an invalid manifest. Every tool links to its page"
        + (" and to its contract as JSON." if json_paths else ".")
    )
    machine = []
    if plan.catalog:
        machine.append(f"[{_md_text(posixpath.basename(plan.catalog))}]({_md_url(reference(site, plan.catalog, here))}) (the whole catalog; "
                       f"JSON Schema: [{posixpath.basename(catalog_json.SCHEMA_SITE_PATH)}]({_md_url(reference(site, catalog_json.SCHEMA_SITE_PATH, here))}))")
    if plan.mcp:
        machine.append(f"[{_md_text(posixpath.basename(plan.mcp))}]({_md_url(reference(site, plan.mcp, here))}) (an MCP `tools/list` result)")
    if machine:
        lines += ["", "Machine-readable: " + ", ".join(machine) + "."]

    def item(tool: Tool, note: str) -> str:
        text = f"- [{_md_text(tool.name or tool.id)}]({_md_url(reference(site, tool.url, here))})"
        description = one_line(tool.description)
        if description:
            text += f": {_md_text(description)}"
        extra = [f"`{tool.id}`" if "`" not in tool.id else _md_text(tool.id), tool.format, note]
        link = f"[JSON]({_md_url(reference(site, json_paths[id(tool)], here))})" if id(tool) in json_paths else ""
        return text + " (" + ", ".join(x for x in extra if x) + (f"; {link}" if link else "") + ")"

    lines += ["", "## Tools", ""]
    lines += [item(t, t.status) for t in valid] or ["No valid tools."]
    if invalid:
        lines += ["", "## Optional", ""]
        lines += [item(t, "invalid manifest: see the page for its errors") for t in invalid]
    return "\n".join(lines) + "\n"


def render(catalog: Catalog, options: Options | None = None, site: Site | None = None) -> dict[str, str]:
    """Every enabled output as `{site path: text}`, in a stable order. Raises ExportError."""
    options = options or Options()
    site = site or Site()
    plan = plan_outputs(options)
    files: dict[str, str] = {}

    def add(path: str, text: str, what: str) -> None:
        if path in files:
            raise OptionsError(f"{what} would overwrite {path!r}, another output; change `tool_json_dir` or the file options")
        files[path] = text

    document = catalog_document(catalog, options, site)
    if plan.catalog is not None:
        add(plan.catalog, catalog_json.dumps(document), "the catalog")
    if plan.schema is not None:
        add(plan.schema, catalog_json.schema_text(), "the catalog schema")
    if plan.tool_json_dir is not None:
        entries = {(t["id"], t["source"]): t for t in document["tools"]}
        paths = tool_json_paths(catalog, options)
        for tool, path in sorted(((t, paths[id(t)]) for t in catalog.tools), key=lambda x: x[1]):
            entry = {"$schema": reference(site, catalog_json.SCHEMA_SITE_PATH, path) + "#/$defs/tool", **entries[(tool.id, tool.source)]}
            add(path, catalog_json.dumps(entry), f"the JSON of tool {tool.id!r}")
    if plan.mcp is not None:
        add(plan.mcp, catalog_json.dumps(mcp_document(catalog, options, site)), "the MCP tool list")
    if plan.llms is not None:
        add(plan.llms, llms_txt(catalog, options, site), "llms.txt")
    return files


def write(files: dict[str, str], folder: Path) -> list[Path]:
    """Write every output under `folder`, each atomically. Returns the paths written."""
    written = []
    for rel, text in files.items():
        target = folder.joinpath(*rel.split("/"))
        catalog_json.write_atomic(target, text)
        written.append(target)
    return written
