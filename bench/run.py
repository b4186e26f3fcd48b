#!/usr/bin/env python3
"""Build-time benchmark: the `toolcatalog` plugin against a plain `mkdocs build` of equivalent pages.

Run from the repository root with the project's virtualenv (see bench/README.md):

    .venv/bin/python bench/run.py            # N=200 tools, 3 repeats
    .venv/bin/python bench/run.py --quick    # N=50, 1 repeat: smoke run

Everything is measured in one run on one machine and reported as RATIOS against a
baseline measured in that same run; the seconds are only what this run observed.

Two temporary workspaces are generated:

* `toolcatalog/`: N speccify tools (`.agent/tools/tool-NNN/TOOL.md` + `linux.py`, three
  example cases each, all passing), `docs/index.md`, and mkdocs configs with
  `plugins: [toolcatalog]` (default options, `run_examples: false`, `nav_tools: false`,
  `sandbox: off`).
* `baseline/`: the same tools as hand-written Markdown pages (`docs/tools/tool-NNN.md`: heading,
  description, inputs/outputs property tables, behaviour, examples as fenced JSON) plus an index
  page listing them, no plugin at all; built once with every page in the (automatic) nav and
  once with a nav holding only Home and the tools index (`not_in_nav` for the rest).

Each scenario is a wall-clock `python -m mkdocs build` in a subprocess (NO_MKDOCS_2_WARNING=1),
repeated `--repeat` times in interleaved rounds; the table shows the median. The sandbox's cost is
the cold build with the default `sandbox: auto` against the same cold build with `sandbox: off`,
both as the plugin's own checking time and as the whole build.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path
from typing import Any, Callable

HERE = Path(__file__).resolve().parent
OUT_DIR = HERE / "out"

CHECKED_LINE = re.compile(
    r"checked (?P<tools>\d+) tools in (?P<seconds>[\d.]+)s: (?P<processes>\d+) processes started, (?P<cached>\d+) tools' results from the cache"
)

# --------------------------------------------------------------------------------------------
# The synthetic tools. Four shapes, rotated; every tool gets its own name, description and
# example values. Each shape's `code` is both the body of the generated `linux.py` and, run
# here, what computes the examples' expected outputs, so every example passes.
# --------------------------------------------------------------------------------------------

TOPICS = [
    "release notes", "commit messages", "changelog entries", "support tickets", "build logs",
    "invoice lines", "sensor readings", "survey answers", "queue depths", "latency samples",
    "page titles", "branch names", "package names", "customer notes", "error reports",
]


SHAPES: list[dict[str, Any]] = [
    {
        "verb": "Counts words, lines and characters in",
        "inputs": {
            "type": "object", "required": ["text"], "additionalProperties": False,
            "properties": {
                "text": {"type": "string", "description": "The text to measure."},
                "trim": {"type": "boolean", "default": True, "description": "Strip surrounding whitespace first."},
            },
        },
        "outputs": {
            "type": "object", "required": ["ok"],
            "properties": {
                "ok": {"type": "boolean"},
                "words": {"type": "integer", "minimum": 0, "description": "Runs of non-whitespace characters."},
                "lines": {"type": "integer", "minimum": 0},
                "chars": {"type": "integer", "minimum": 0, "description": "Unicode code points, not bytes."},
                "error": {"type": "string"},
            },
        },
        "effects": "none; reads stdin only",
        "cases": lambda i: [
            ("counts a short note", {"text": f"Note {i}: the quick brown fox\njumps over {i} lazy dogs."}),
            ("keeps inner whitespace", {"text": f"  item-{i}   done  ", "trim": False}),
            ("blank text is refused", {"text": "  \n "}),
        ],
        "code": '''
            def compute(req):
                text = req.get("text")
                if not isinstance(text, str) or not text.strip():
                    return {"ok": False, "error": "text is empty or whitespace only"}, 1
                if req.get("trim", True):
                    text = text.strip()
                return {"ok": True, "words": len(text.split()), "lines": len(text.splitlines()), "chars": len(text)}, 0
        ''',
    },
    {
        "verb": "Does integer arithmetic on",
        "inputs": {
            "type": "object", "required": ["a", "b"],
            "properties": {
                "a": {"type": "integer", "description": "Left operand."},
                "b": {"type": "integer", "description": "Right operand."},
                "op": {"type": "string", "enum": ["add", "sub", "mul", "div"], "default": "add"},
            },
        },
        "outputs": {
            "type": "object", "required": ["ok"],
            "properties": {
                "ok": {"type": "boolean"},
                "result": {"type": "integer"},
                "even": {"type": "boolean", "description": "Whether the result is even."},
                "error": {"type": "string"},
            },
        },
        "effects": "none; pure computation",
        "cases": lambda i: [
            ("adds two counts", {"a": i, "b": i + 7}),
            ("multiplies", {"a": i % 13 + 2, "b": 3, "op": "mul"}),
            ("division by zero is refused", {"a": i, "b": 0, "op": "div"}),
        ],
        "code": '''
            def compute(req):
                a, b, op = req.get("a"), req.get("b"), req.get("op", "add")
                if not all(isinstance(x, int) and not isinstance(x, bool) for x in (a, b)):
                    return {"ok": False, "error": "a and b must be integers"}, 1
                if op == "div" and b == 0:
                    return {"ok": False, "error": "division by zero"}, 1
                result = {"add": a + b, "sub": a - b, "mul": a * b, "div": a // b if op == "div" else 0}[op]
                return {"ok": True, "result": result, "even": result % 2 == 0}, 0
        ''',
    },
    {
        "verb": "Turns into URL slugs the titles of",
        "inputs": {
            "type": "object", "required": ["text"],
            "properties": {
                "text": {"type": "string", "minLength": 1, "description": "Any title."},
                "separator": {"type": "string", "enum": ["-", "_", "."], "default": "-"},
            },
        },
        "outputs": {
            "type": "object", "required": ["ok"],
            "properties": {
                "ok": {"type": "boolean"},
                "slug": {"type": "string", "pattern": "^[a-z0-9._-]*$"},
                "length": {"type": "integer", "minimum": 0},
                "error": {"type": "string"},
            },
        },
        "effects": "none; reads stdin only",
        "cases": lambda i: [
            ("a plain title", {"text": f"Release {i}: Faster Builds!"}),
            ("underscore separator", {"text": f"Queue #{i} drained", "separator": "_"}),
            ("punctuation only is refused", {"text": "?!?"}),
        ],
        "code": '''
            import re

            def compute(req):
                text, sep = req.get("text", ""), req.get("separator", "-")
                words = re.findall(r"[a-z0-9]+", text.lower()) if isinstance(text, str) else []
                if not words:
                    return {"ok": False, "error": "nothing to slugify"}, 1
                slug = sep.join(words)
                return {"ok": True, "slug": slug, "length": len(slug)}, 0
        ''',
    },
    {
        "verb": "Summarizes (count, min, max, total) a list of",
        "inputs": {
            "type": "object", "required": ["values"],
            "properties": {
                "values": {"type": "array", "items": {"type": "integer"}, "description": "The samples, in any order."},
                "label": {"type": "string", "description": "Shown back unchanged; not used."},
            },
        },
        "outputs": {
            "type": "object", "required": ["ok"],
            "properties": {
                "ok": {"type": "boolean"},
                "count": {"type": "integer", "minimum": 0},
                "min": {"type": "integer"},
                "max": {"type": "integer"},
                "total": {"type": "integer"},
                "error": {"type": "string"},
            },
        },
        "effects": "none; pure computation",
        "cases": lambda i: [
            ("three samples", {"values": [i, i * 2, 5]}),
            ("one sample", {"values": [i + 40], "label": f"run {i}"}),
            ("an empty list is refused", {"values": []}),
        ],
        "code": '''
            def compute(req):
                values = req.get("values")
                if not isinstance(values, list) or not values:
                    return {"ok": False, "error": "values must be a non-empty list of integers"}, 1
                return {"ok": True, "count": len(values), "min": min(values), "max": max(values), "total": sum(values)}, 0
        ''',
    },
]

IMPL_MAIN = '''

def main():
    try:
        request = json.load(sys.stdin)
    except json.JSONDecodeError as exc:
        print(f"input is not JSON: {exc}", file=sys.stderr)
        return 2
    result, code = compute(request if isinstance(request, dict) else {})
    json.dump(result, sys.stdout)
    if code:
        print(result.get("error", "failed"), file=sys.stderr)
    return code


if __name__ == "__main__":
    sys.exit(main())
'''


def _compute(shape: dict[str, Any]) -> Callable[[dict[str, Any]], tuple[dict[str, Any], int]]:
    if "_compute" not in shape:
        namespace: dict[str, Any] = {}
        exec(textwrap.dedent(shape["code"]), namespace)  # our own constant source, above
        shape["_compute"] = namespace["compute"]
    return shape["_compute"]


def tool_spec(i: int) -> dict[str, Any]:
    shape = SHAPES[i % len(SHAPES)]
    topic = TOPICS[i % len(TOPICS)]
    name = f"tool-{i:03d}"
    cases = []
    for title, request in shape["cases"](i):
        expected, _code = _compute(shape)(request)
        cases.append((title, request, expected))
    description = (
        f"{shape['verb']} {topic} (variant {i}). Use it from an agent before posting or storing "
        f"{topic}, so limits and formats are checked by a program instead of guessed."
    )
    behaviour = (
        f"Reads one JSON request on stdin and writes one JSON object on stdout. A request it "
        f"cannot serve is answered with `ok: false`, an `error` and exit code 1, so callers can "
        f"tell a refusal from a crash. Tool {i} of the benchmark's synthetic catalog."
    )
    return {"name": name, "shape": shape, "description": description, "behaviour": behaviour, "cases": cases}


def _yaml_flow(value: Any) -> str:
    """JSON is valid YAML flow syntax: inline schemas stay readable and unambiguous."""
    return json.dumps(value, ensure_ascii=False)


def _yaml_schema(schema: dict[str, Any]) -> str:
    """A schema in block YAML, properties one per line, as people write them."""
    lines = [f"  type: {schema['type']}"]
    if "required" in schema:
        lines.append(f"  required: [{', '.join(schema['required'])}]")
    if "additionalProperties" in schema:
        lines.append(f"  additionalProperties: {str(schema['additionalProperties']).lower()}")
    lines.append("  properties:")
    for prop, sub in schema["properties"].items():
        lines.append(f"    {prop}: {_yaml_flow(sub)}")
    return "\n".join(lines)


def tool_md(spec: dict[str, Any]) -> str:
    shape = spec["shape"]
    parts = [
        "---",
        f"name: {spec['name']}",
        "description: >-",
        *textwrap.wrap(spec["description"], 90, initial_indent="  ", subsequent_indent="  "),
        "inputs:",
        _yaml_schema(shape["inputs"]),
        "outputs:",
        _yaml_schema(shape["outputs"]),
        f"effects: {shape['effects']}",
        "requires: python3",
        "platforms: linux, macos",
        "---",
        "",
        "## Behaviour",
        "",
        spec["behaviour"],
        "",
        "## Examples",
        "",
    ]
    for title, request, expected in spec["cases"]:
        parts += [f"### {title}", f"input: {json.dumps(request, ensure_ascii=False)}", f"output: {json.dumps(expected, ensure_ascii=False)}", ""]
    return "\n".join(parts)


def impl_py(spec: dict[str, Any]) -> str:
    header = f'"""{spec["name"]}: benchmark tool (speccify wire format: JSON on stdin, JSON on stdout)."""\nimport json\nimport sys\n'
    return header + textwrap.dedent(spec["shape"]["code"]) + IMPL_MAIN


def _table(schema: dict[str, Any]) -> str:
    rows = ["| Property | Type | Required | Description |", "|---|---|---|---|"]
    required = set(schema.get("required", []))
    for prop, sub in schema["properties"].items():
        kind = sub.get("type", "")
        if "enum" in sub:
            kind += " (" + ", ".join(f"`{v}`" for v in sub["enum"]) + ")"
        rows.append(f"| `{prop}` | {kind} | {'yes' if prop in required else 'no'} | {sub.get('description', '')} |")
    return "\n".join(rows)


def baseline_md(spec: dict[str, Any]) -> str:
    shape = spec["shape"]
    parts = [
        f"# {spec['name']}",
        "",
        spec["description"],
        "",
        f"**Effects:** {shape['effects']} · **Requires:** `python3` · **Platforms:** linux, macos",
        "",
        "## Inputs",
        "",
        _table(shape["inputs"]),
        "",
        "## Outputs",
        "",
        _table(shape["outputs"]),
        "",
        "## Examples",
        "",
    ]
    for title, request, expected in spec["cases"]:
        parts += [
            f"### {title}",
            "",
            "Input:",
            "",
            "```json",
            json.dumps(request, ensure_ascii=False, indent=2),
            "```",
            "",
            "Output:",
            "",
            "```json",
            json.dumps(expected, ensure_ascii=False, indent=2),
            "```",
            "",
        ]
    parts += ["## Details", "", "### Behaviour", "", spec["behaviour"], ""]
    return "\n".join(parts)


def write(path: Path, text: str) -> None:
    """Write `text` unless the file already holds it: a reused workspace (`--workspace`) keeps
    its files' times, so its parse cache and results cache stay valid."""
    try:
        if path.read_text(encoding="utf-8") == text:
            return
    except (OSError, UnicodeDecodeError):
        pass
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def mkdocs_yml(theme: str, plugins: list[Any], **extra: Any) -> str:
    # JSON is YAML: no PyYAML needed to write the configs.
    config: dict[str, Any] = {"site_name": "Benchmark catalog", "theme": {"name": theme}, "plugins": plugins, **extra}
    return json.dumps(config, indent=2) + "\n"


def make_workspaces(root: Path, n: int, theme: str, sandbox: str = "auto") -> tuple[Path, Path]:
    specs = [tool_spec(i) for i in range(1, n + 1)]
    home = "# Home\n\nA synthetic catalog for the build-time benchmark.\n"

    tc = root / "toolcatalog"
    for spec in specs:
        folder = tc / ".agent" / "tools" / spec["name"]
        write(folder / "TOOL.md", tool_md(spec))
        write(folder / "linux.py", impl_py(spec))
    write(tc / "docs" / "index.md", home)
    # `nav_tools: true` spelled out: newer plugin versions default to a tool-count threshold,
    # which would drop N=200 tool pages from the nav and compare unlike with unlike.
    box = {"sandbox": sandbox} if sandbox != "auto" else {}
    write(tc / "mkdocs.yml", mkdocs_yml(theme, [{"toolcatalog": {"nav_tools": True, **box}}]))
    write(tc / "mkdocs-norun.yml", mkdocs_yml(theme, [{"toolcatalog": {"nav_tools": True, "run_examples": False, **box}}]))
    write(tc / "mkdocs-nonav.yml", mkdocs_yml(theme, [{"toolcatalog": {"nav_tools": False, **box}}]))
    # Unmeasured preparation (imports, page cache, parse cache) without a big nav to render.
    write(tc / "mkdocs-prepare.yml", mkdocs_yml(theme, [{"toolcatalog": {"nav_tools": False, "run_examples": False, **box}}]))
    write(tc / "mkdocs-nosandbox.yml", mkdocs_yml(theme, [{"toolcatalog": {"nav_tools": True, "sandbox": "off"}}]))
    # With MkDocs' `search` plugin, as every real site has: compared with the fair baseline (`fair_baseline`).
    write(tc / "mkdocs-search.yml", mkdocs_yml(theme, ["search", {"toolcatalog": {"nav_tools": True, **box}}]))
    write(tc / "mkdocs-search-nonav.yml", mkdocs_yml(theme, ["search", {"toolcatalog": {"nav_tools": False, **box}}]))
    write(tc / "capture_hook.py", CAPTURE_HOOK)
    write(tc / "mkdocs-capture.yml", mkdocs_yml(theme, ["search", {"toolcatalog": {"nav_tools": False, **box}}],
                                                hooks=["capture_hook.py"]))

    base = root / "baseline"
    for spec in specs:
        write(base / "docs" / "tools" / f"{spec['name']}.md", baseline_md(spec))
    index = ["# All tools", "", "| Tool | Description |", "|---|---|"]
    index += [f"| [{s['name']}]({s['name']}.md) | {s['description']} |" for s in specs]
    write(base / "docs" / "tools" / "index.md", "\n".join(index) + "\n")
    write(base / "docs" / "index.md", home)
    # `plugins: []`: an absent `plugins` key would add MkDocs' default `search` plugin.
    write(base / "mkdocs.yml", mkdocs_yml(theme, []))
    write(
        base / "mkdocs-nonav.yml",
        mkdocs_yml(
            theme, [],
            nav=[{"Home": "index.md"}, {"Tool catalog": [{"All tools": "tools/index.md"}]}],
            not_in_nav="/tools/tool-*.md\n",
        ),
    )
    return tc, base


# The fair baseline: plain pages whose body is the very HTML the plugin rendered for that page.
# A MkDocs hook in the toolcatalog workspace (`mkdocs-capture.yml`) copies each generated page's
# content as it is about to be themed (after the plugin made it, before the search plugin reads it)
# into `<fair>/docs/<the page's path>`: the page's metadata at that moment (its title; `hide` on the
# index) as front matter, then the HTML as it is. The HTML is one `<div>` element, which Markdown
# passes through unchanged as a raw HTML block, so a fair page's article is byte for byte the
# plugin's (`compare_sites` checks it after the measured builds). The stylesheet and script the
# plugin adds to every page are recorded too (`capture.json`) and given to the fair site.
CAPTURE_HOOK = """\
import json
import os
from pathlib import Path
from mkdocs.plugins import event_priority

OUT = Path(os.environ["TOOLCATALOG_BENCH_FAIR_DOCS"])


@event_priority(90)  # after the plugin's own (100), before the search plugin's (0)
def on_page_context(context, page, config, nav):
    plugin = config.plugins.get("toolcatalog")
    # `generated`: every generated page's src_uri (`pages` is emptied when the catalog is let go after on_files)
    if plugin is not None and page.file.src_uri in (getattr(plugin, "generated", None) or getattr(plugin, "pages", {})):
        target = OUT / page.file.src_uri
        target.parent.mkdir(parents=True, exist_ok=True)
        front = "".join(f"{key}: {json.dumps(value)}\\n" for key, value in page.meta.items())
        head = f"---\\n{front}---\\n\\n" if front else ""
        target.write_text(head + (page.content or "") + "\\n", encoding="utf-8")
    return context


def on_post_build(config):
    assets = {"extra_css": [str(x) for x in config.extra_css], "extra_javascript": [str(x) for x in config.extra_javascript]}
    (OUT.parent / "capture.json").write_text(json.dumps(assets), encoding="utf-8")
"""


def fair_baseline(root: Path, tc: Path, theme: str, n: int) -> dict[str, int]:
    """The `fair/` workspace: one build of the toolcatalog workspace, results from its cache,
    writes every generated page's rendered HTML as a plain page; `search` on, same theme, the
    plugin's stylesheet and script as `extra_css` / `extra_javascript`. When the cache was cold
    (a fresh workspace) that build fills it and the capture is made again from the cache, so
    the pages are a warm build's. Returns the catalog's statuses (every tool must have passed)."""
    fair = root / "fair"
    docs = fair / "docs"
    env = {**BUILD_ENV, "TOOLCATALOG_BENCH_FAIR_DOCS": str(docs)}
    for attempt in (1, 2):
        shutil.rmtree(fair, ignore_errors=True)
        # Not -q: the plugin's "N processes started" line says whether the cache was warm.
        done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "-f", "mkdocs-capture.yml"], cwd=tc, env=env,
                              capture_output=True, text=True)
        if done.returncode != 0 or not docs.is_dir():
            raise BenchError(f"the fair baseline's capture build failed ({done.returncode}):\n{done.stdout}{done.stderr}")
        procs, _ = processes_started(done.stdout + done.stderr)
        if not procs:
            break
        print(f"  the capture build filled the results cache ({procs} processes); capturing again from the cache", flush=True)
    else:
        raise BenchError("the fair baseline's second capture build still started example processes: the cache does not hold")
    statuses = verify_catalog(tc, n)
    write(docs / "index.md", (tc / "docs" / "index.md").read_text(encoding="utf-8"))
    assets = json.loads((fair / "capture.json").read_text(encoding="utf-8"))
    for path in assets["extra_css"] + assets["extra_javascript"]:
        target = docs / path
        if not target.exists():
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(tc / "site" / path, target)
    write(fair / "mkdocs.yml", mkdocs_yml(theme, ["search"], **assets))
    pages = sorted(p.relative_to(docs).as_posix() for p in docs.rglob("*.md") if p.parent != docs)
    index = sorted(p for p in pages if p.rsplit("/", 1)[-1] == "index.md")
    if not index:  # the catalog index is not called index.md: take the shortest generated path
        index = sorted(pages, key=lambda x: (x.count("/"), len(x)))[:1]
    # The plugin's site with `nav_tools: false`: Home, then the catalog section holding its index;
    # the tool pages are in no nav (the plugin adds them as NOT_IN_NAV files). The same here with
    # an explicit nav, the other pages omitted and MkDocs told not to list them. Not `not_in_nav`:
    # MkDocs matches every file against every one of its patterns (N² at N pages: 747 s at 5,000).
    write(fair / "mkdocs-nonav.yml", mkdocs_yml(
        theme, ["search"], nav=[{"Home": "index.md"}, {"Tool catalog": [index[0]]}],
        validation={"nav": {"omitted_files": "ignore"}}, **assets))
    return statuses


ARTICLE = re.compile(r'<article class="md-content__inner md-typeset">(.*?)</article>', re.S)


def compare_sites(fair_site: Path, tc_site: Path) -> dict[str, Any]:
    """Whether the two built sites carry the same content: the same HTML pages, the same article
    (the page body the theme wraps) in each, byte for byte, and the search index's size and
    entries. Read from the last measured build of each side. Raises when pages or articles differ:
    then the comparison would not measure what the plugin adds."""
    def pages(site: Path) -> dict[str, Path]:
        return {p.relative_to(site).as_posix(): p for p in site.rglob("*.html")}

    ours, theirs = pages(tc_site), pages(fair_site)
    article_bytes = {"toolcatalog": 0, "fair": 0}
    differing: list[str] = []
    exact = 0  # byte for byte; else they may differ only in whitespace at the article's ends
    # (Markdown strips the trailing newline a raw HTML block ends with: one byte a page).
    for rel in sorted(set(ours) & set(theirs)):
        a = ARTICLE.search(ours[rel].read_text(encoding="utf-8"))
        b = ARTICLE.search(theirs[rel].read_text(encoding="utf-8"))
        a_text, b_text = (a.group(1) if a else ""), (b.group(1) if b else "")
        article_bytes["toolcatalog"] += len(a_text.encode())
        article_bytes["fair"] += len(b_text.encode())
        if a_text == b_text:
            exact += 1
        elif a_text.strip() != b_text.strip():
            differing.append(rel)

    def index(site: Path) -> tuple[int, int, list[str]]:
        path = site / "search" / "search_index.json"
        if not path.is_file():
            return 0, 0, []
        docs = json.loads(path.read_text(encoding="utf-8")).get("docs", [])
        return path.stat().st_size, len(docs), sorted(json.dumps(d, sort_keys=True) for d in docs)

    tc_index, fair_index = index(tc_site), index(fair_site)
    result = {
        "pages": {"toolcatalog": len(ours), "fair": len(theirs)},
        "only_in_toolcatalog": sorted(set(ours) - set(theirs))[:5],
        "only_in_fair": sorted(set(theirs) - set(ours))[:5],
        "article_bytes": article_bytes,
        "articles_byte_identical": exact,
        "articles_differing": len(differing),
        "first_differing": differing[:5],
        "search_index_bytes": {"toolcatalog": tc_index[0], "fair": fair_index[0]},
        "search_entries": {"toolcatalog": tc_index[1], "fair": fair_index[1]},
        "search_entries_equal": tc_index[2] == fair_index[2],
    }
    return result


def print_comparison(c: dict[str, Any]) -> None:
    print(f"\ncontent check (last builds): HTML pages {c['pages']['toolcatalog']} toolcatalog / {c['pages']['fair']} fair; "
          f"article bytes {c['article_bytes']['toolcatalog']:,} / {c['article_bytes']['fair']:,} "
          f"({c['articles_byte_identical']} byte-identical, the rest differing only in whitespace at their ends), "
          f"{c['articles_differing']} article(s) differing{' ' + str(c['first_differing']) if c['first_differing'] else ''}; "
          f"search index {c['search_index_bytes']['toolcatalog']:,} / {c['search_index_bytes']['fair']:,} bytes, "
          f"{c['search_entries']['toolcatalog']} / {c['search_entries']['fair']} entries, "
          f"entries {'equal' if c['search_entries_equal'] else 'NOT equal'}")


# --------------------------------------------------------------------------------------------
# Running builds
# --------------------------------------------------------------------------------------------


class BenchError(RuntimeError):
    pass


BUILD_ENV: dict[str, str] = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}


def build(workspace: Path, config: str, quiet: bool) -> tuple[float, str, float | None, float | None]:
    """One `python -m mkdocs build`; returns (wall seconds, combined output, peak RSS in MB, CPU seconds).

    The peak resident memory is the build process's own (`wait4`'s `ru_maxrss`), never its
    example processes': those are separate processes with their own memory. The CPU time is
    user + system of the build and of the processes it waited for (`wait4`'s rusage): what
    other load on the machine moves least."""
    env = BUILD_ENV
    argv = [sys.executable, "-m", "mkdocs", "build", "-f", config]
    if quiet:
        argv.append("-q")
    with tempfile.TemporaryFile(mode="w+", encoding="utf-8") as log:
        started = time.perf_counter()
        process = subprocess.Popen(argv, cwd=workspace, env=env, stdout=log, stderr=subprocess.STDOUT, text=True)
        rss_mb: float | None = None
        cpu_s: float | None = None
        if hasattr(os, "wait4"):
            _, status, usage = os.wait4(process.pid, 0)
            process.returncode = os.waitstatus_to_exitcode(status)
            rss_mb = usage.ru_maxrss / (1024 * 1024 if sys.platform == "darwin" else 1024)
            cpu_s = usage.ru_utime + usage.ru_stime
        else:  # pragma: no cover - Windows: no rusage of a child
            process.wait()
        seconds = time.perf_counter() - started
        log.seek(0)
        output = log.read()
    if process.returncode != 0:
        raise BenchError(f"`{' '.join(argv[1:])}` in {workspace} failed ({process.returncode}):\n{output}")
    return seconds, output, rss_mb, cpu_s


SANDBOX_LINE = re.compile(r"example processes: (?P<how>.+)")


def sandbox_used(output: str) -> str | None:
    match = SANDBOX_LINE.search(output)
    return match.group("how").strip() if match else None


def processes_started(output: str) -> tuple[int | None, float | None]:
    match = CHECKED_LINE.search(output)
    if match is None:
        return None, None
    return int(match.group("processes")), float(match.group("seconds"))


class Scenario:
    def __init__(
        self, name: str, workspace: Path, config: str, baseline: str | None, meaning: str,
        before: Callable[[], None] | None = None, plugin: bool = True, expect_processes: int | None = None,
    ):
        self.name, self.workspace, self.config, self.baseline, self.meaning = name, workspace, config, baseline, meaning
        self.before, self.plugin, self.expect_processes = before, plugin, expect_processes
        self.times: list[float] = []
        self.processes: list[int | None] = []
        self.check_seconds: list[float | None] = []
        self.sandbox: str | None = None  # the plugin's "example processes: ..." line
        self.rss_mb: list[float] = []  # the build process's peak resident memory, per run
        self.cpu_s: list[float] = []  # user + system CPU seconds, per run
        self.load: list[float] = []  # the 1-minute load average just before each run

    def run(self) -> float:
        if self.before:
            self.before()
        # Baselines run with -q as asked; plugin builds run without it so the plugin's INFO line
        # ("... N processes started ...") is printed. INFO output is three or four lines: noise.
        self.load.append(load1())
        seconds, output, rss, cpu = build(self.workspace, self.config, quiet=not self.plugin)
        if rss is not None:
            self.rss_mb.append(rss)
        if cpu is not None:
            self.cpu_s.append(cpu)
        if self.plugin:
            warnings = [line for line in output.splitlines() if line.startswith(("WARNING", "ERROR"))]
            if warnings:
                raise BenchError(f"{self.name}: the build logged warnings (generated tools should be clean):\n" + "\n".join(warnings[:20]))
            procs, check_s = processes_started(output)
            if procs is None and self.expect_processes == 0:
                procs = 0  # run_examples: false never calls the engine, so no line is logged
            if procs is None:
                raise BenchError(f"{self.name}: no 'processes started' line in the build log:\n{output}")
            if self.expect_processes is not None and procs != self.expect_processes:
                raise BenchError(
                    f"{self.name}: expected {self.expect_processes} example processes, the plugin started {procs}"
                    + ("  <-- a WARM build must start none: the results cache did not hold" if self.expect_processes == 0 else "")
                    + f"\n{output}"
                )
            self.processes.append(procs)
            self.check_seconds.append(check_s)
            self.sandbox = sandbox_used(output) or self.sandbox
        else:
            self.processes.append(None)
            self.check_seconds.append(None)
        self.times.append(seconds)
        return seconds

    @property
    def median(self) -> float:
        return statistics.median(self.times)

    @property
    def best(self) -> float:
        return min(self.times)

    @property
    def cpu_median(self) -> float | None:
        return statistics.median(self.cpu_s) if self.cpu_s else None


def sandbox_overhead(sandboxed: Scenario, unsandboxed: Scenario, processes: int) -> dict[str, Any]:
    """The sandbox's cost per example process: the plugin's own checking time (the examples alone,
    without MkDocs) and the whole cold build, sandboxed against `sandbox: off`, same examples."""
    on = statistics.median([c for c in sandboxed.check_seconds if c is not None])
    off = statistics.median([c for c in unsandboxed.check_seconds if c is not None])
    workers = os.cpu_count() or 1  # `jobs: 0`: one worker per CPU
    return {
        "sandbox": sandboxed.sandbox,
        "check_s_sandboxed": round(on, 2),
        "check_s_unsandboxed": round(off, 2),
        "check_ratio": round(on / off, 2) if off else None,
        "build_ratio": round(sandboxed.median / unsandboxed.median, 2),
        "workers": workers,
        "extra_ms_per_process": round((on - off) * workers / processes * 1000, 1),
    }


def verify_catalog(tc: Path, n: int) -> dict[str, int]:
    """After a cold build: every generated tool must be valid and passed (else the numbers lie)."""
    data = json.loads((tc / "site" / "catalog.json").read_text(encoding="utf-8"))
    by_status = data["counts"]["by_status"]
    if data["counts"]["tools"] != n or by_status.get("passed") != n:
        bad = [(t["id"], t["status"], t["status_detail"]) for t in data["tools"] if t["status"] != "passed"][:10]
        raise BenchError(f"expected {n} passed tools, catalog says {data['counts']}; first problems: {bad}")
    return by_status


def plugin_facts() -> dict[str, Any]:
    """Which toolcatalog the builds import, and the repository state when it is this checkout."""
    probe = subprocess.run(
        [sys.executable, "-c", "import toolcatalog, sys; sys.stdout.write(toolcatalog.__file__)"],
        env=BUILD_ENV, capture_output=True, text=True,
    )
    if probe.returncode != 0:
        raise BenchError(f"the builds cannot import toolcatalog:\n{probe.stderr}")
    where = Path(probe.stdout).resolve().parent
    facts: dict[str, Any] = {"imported_from": str(where)}
    try:
        top = subprocess.run(["git", "-C", str(where), "rev-parse", "--show-toplevel", "HEAD"], capture_output=True, text=True, timeout=10)
        if top.returncode == 0:
            toplevel, commit = top.stdout.split()
            dirty = subprocess.run(["git", "-C", toplevel, "status", "--porcelain", "--", "plugin", "site_templates"], capture_output=True, text=True, timeout=10)
            facts.update(commit=commit, uncommitted_plugin_changes=bool(dirty.stdout.strip()))
    except (OSError, subprocess.SubprocessError, ValueError):
        pass
    return facts


def load1() -> float:
    try:
        return float(Path("/proc/loadavg").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return float("nan")


def loadavg() -> str:
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return ""


def machine_facts() -> dict[str, Any]:
    def cmd(*argv: str) -> str:
        try:
            return subprocess.run(argv, capture_output=True, text=True, timeout=10).stdout.strip()
        except (OSError, subprocess.SubprocessError):
            return ""

    cpu = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    versions: dict[str, str] = {}
    try:
        from importlib.metadata import version

        for dist in ("mkdocs", "mkdocs-material", "mkdocs-toolcatalog"):
            try:
                versions[dist] = version(dist)
            except Exception:  # noqa: BLE001 - a missing distribution is just not reported
                versions[dist] = "not installed"
    except ImportError:
        pass
    return {
        "date": dt.datetime.now().astimezone().isoformat(timespec="seconds"),
        "nproc": cmd("nproc") or str(os.cpu_count()),
        "cpu": cpu,
        "loadavg_at_start": loadavg(),
        "platform": platform.platform(),
        "python": sys.version.split()[0],
        "versions": versions,
    }


SCENARIOS = {  # short name (for --scenarios) -> scenario name
    "baseline": "baseline (pages in nav)",
    "baseline-index": "baseline (index-only nav)",
    "cold-nosandbox": "toolcatalog cold, sandbox: off",
    "cold": "toolcatalog cold",
    "warm": "toolcatalog warm",
    "norun": "toolcatalog run_examples: false",
    "nonav": "toolcatalog nav_tools: false (warm)",
    "fair": "fair baseline (pages in nav)",
    "fair-index": "fair baseline (index-only nav)",
    "warm-search": "toolcatalog warm, search",
    "nonav-search": "toolcatalog nav_tools: false (warm), search",
}
FAIR = {SCENARIOS["fair"], SCENARIOS["fair-index"]}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tools", default=None,
                        help="number of synthetic speccify tools, or several sizes for a curve: 200,1000,2000,5000 "
                        "(default 200; --quick: 50)")
    parser.add_argument("--repeat", type=int, default=None, help="runs per scenario; the median is reported (default 3; --quick: 1)")
    parser.add_argument("--theme", choices=("material", "mkdocs"), default="material", help="theme of both workspaces (default material)")
    parser.add_argument("--quick", action="store_true", help="smoke run: --tools 50 --repeat 1 unless given")
    parser.add_argument("--scenarios", default=",".join(SCENARIOS),
                        help=f"which scenarios to run, comma-separated (default all: {','.join(SCENARIOS)}); the baselines "
                        "the chosen ones compare with are added, and warm ones get their cache from an unmeasured cold build")
    parser.add_argument("--sandbox", choices=("auto", "off"), default="auto",
                        help="the plugin's `sandbox` option in the measured configs (default auto; `off` makes cold "
                        "builds of big catalogs affordable, warm builds differ by the sandbox probe alone)")
    parser.add_argument("--serve", action="store_true",
                        help="also measure `mkdocs serve`: edit one manifest, time until its page is served, count rebuilds")
    parser.add_argument(
        "--plugin-src", type=Path, default=None,
        help="benchmark the toolcatalog of another checkout (a folder with plugin/toolcatalog/, e.g. a "
        "`git archive` export) by putting its plugin/ first on the builds' PYTHONPATH",
    )
    parser.add_argument("--keep", action="store_true", help="keep the generated workspaces (their path is printed)")
    parser.add_argument("--no-warmup", action="store_true",
                        help="skip the unmeasured warm-up builds (the fair set's capture build still runs and warms the "
                        "imports): saves minutes at 5,000 tools on a --workspace whose caches are filled")
    parser.add_argument("--workspace", type=Path, default=None,
                        help="build in this folder (one size only) and keep it: a workspace kept by an earlier --keep is "
                        "reused, its files rewritten only where they differ and its results cache kept, so no cold fill")
    parser.add_argument("--out", type=Path, default=OUT_DIR / "results.json", help="where the JSON results go (default bench/out/results.json)")
    args = parser.parse_args(argv)
    try:
        sizes = [int(x) for x in str(args.tools).split(",")] if args.tools is not None else [50 if args.quick else 200]
    except ValueError:
        parser.error("--tools takes a number or numbers separated by commas")
    repeat = args.repeat if args.repeat is not None else (1 if args.quick else 3)
    if min(sizes) < 1 or repeat < 1:
        parser.error("--tools and --repeat must be at least 1")
    if args.workspace is not None and len(sizes) > 1:
        parser.error("--workspace takes one size (--tools N)")
    chosen = [x.strip() for x in args.scenarios.split(",") if x.strip()]
    unknown = [x for x in chosen if x not in SCENARIOS]
    if unknown:
        parser.error(f"--scenarios: unknown {', '.join(unknown)} (known: {', '.join(SCENARIOS)})")
    try:
        import mkdocs  # noqa: F401
    except ImportError as exc:
        parser.error(f"{exc}; run this with the project's virtualenv: .venv/bin/python bench/run.py")
    if args.plugin_src is not None:
        src = args.plugin_src.resolve() / "plugin"
        if not (src / "toolcatalog" / "plugin.py").is_file():
            parser.error(f"--plugin-src: no plugin/toolcatalog/plugin.py under {args.plugin_src}")
        BUILD_ENV["PYTHONPATH"] = os.pathsep.join(filter(None, [str(src), os.environ.get("PYTHONPATH")]))
    if args.theme == "material":
        try:
            import material  # noqa: F401
        except ImportError:
            parser.error("mkdocs-material is not installed in this interpreter; use --theme mkdocs")

    facts = machine_facts()
    plugin_info = plugin_facts()
    started = time.perf_counter()
    runs = [run_size(n, repeat, args, chosen) for n in sizes]
    facts["loadavg_at_end"] = loadavg()
    elapsed = time.perf_counter() - started
    print(f"\nplugin: {plugin_info}; load average at start {facts['loadavg_at_start']}, at end {facts['loadavg_at_end']}; "
          f"whole run {elapsed:.0f}s")
    if len(runs) > 1:
        print_curve(runs)
    result = {
        "benchmark": "mkdocs-toolcatalog build time vs plain mkdocs build",
        "repeat": repeat,
        "theme": args.theme,
        "sandbox_option": args.sandbox,
        "machine": facts,
        "plugin": plugin_info,
        "wall_s": round(elapsed, 1),
        "runs": runs,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(f"results: {args.out}")
    return 0


def run_size(n: int, repeat: int, args: argparse.Namespace, chosen: list[str]) -> dict[str, Any]:
    """Every chosen scenario at `n` tools, in interleaved rounds; the table and the JSON row."""
    reuse = args.workspace is not None
    reused = False
    if reuse:  # a kept workspace: files rewritten only where they differ, its results cache kept
        root = args.workspace.resolve()
        reused = (root / "toolcatalog" / ".agent").is_dir()
        root.mkdir(parents=True, exist_ok=True)
    else:
        root = Path(tempfile.mkdtemp(prefix="toolcatalog-bench-"))
    started = time.perf_counter()
    serve: dict[str, Any] | None = None
    comparison: dict[str, Any] | None = None
    try:
        tc, base = make_workspaces(root, n, args.theme, args.sandbox)
        fair = root / "fair"  # made below, once the results cache is filled (`fair_baseline`)
        # Where the builds keep their cache by default (outside the workspace, see toolcatalog.sealing).
        cache_dir = Path(subprocess.run(
            [sys.executable, "-c", "import sys; from pathlib import Path; from toolcatalog import sealing; "
             "sys.stdout.write(str(sealing.default_cache_dir(Path(sys.argv[1]))))", str(tc)],
            capture_output=True, text=True, check=True).stdout)
        examples = 3 * n

        def drop_cache() -> None:
            shutil.rmtree(cache_dir, ignore_errors=True)

        every = [
            Scenario("baseline (pages in nav)", base, "mkdocs.yml", None,
                     "plain Markdown pages, automatic nav lists every page", plugin=False),
            Scenario("baseline (index-only nav)", base, "mkdocs-nonav.yml", None,
                     "same pages, nav holds Home + tools index, tool pages `not_in_nav`", plugin=False),
            Scenario("toolcatalog cold, sandbox: off", tc, "mkdocs-nosandbox.yml", "baseline (pages in nav)",
                     "cold, every example run unsandboxed: what the sandbox costs", before=drop_cache, expect_processes=examples),
            Scenario("toolcatalog cold", tc, "mkdocs.yml", "baseline (pages in nav)",
                     "cache dir removed first: every example runs", before=drop_cache, expect_processes=examples),
            Scenario("toolcatalog warm", tc, "mkdocs.yml", "baseline (pages in nav)",
                     "cache kept from the cold build: nothing may run", expect_processes=0),
            Scenario("toolcatalog run_examples: false", tc, "mkdocs-norun.yml", "baseline (pages in nav)",
                     "examples shown and validated, never run", expect_processes=0),
            Scenario("toolcatalog nav_tools: false (warm)", tc, "mkdocs-nonav.yml", "baseline (index-only nav)",
                     "only the catalog index in the nav; results cache kept", expect_processes=0),
            Scenario("fair baseline (pages in nav)", fair, "mkdocs.yml", None,
                     "plain pages carrying the plugin's rendered HTML, search on, every page in the nav", plugin=False),
            Scenario("fair baseline (index-only nav)", fair, "mkdocs-nonav.yml", None,
                     "the same, nav holds Home + the catalog index", plugin=False),
            Scenario("toolcatalog warm, search", tc, "mkdocs-search.yml", "fair baseline (pages in nav)",
                     "warm, search on: against pages with the same content", expect_processes=0),
            Scenario("toolcatalog nav_tools: false (warm), search", tc, "mkdocs-search-nonav.yml", "fair baseline (index-only nav)",
                     "warm, search on, only the catalog index in the nav", expect_processes=0),
        ]
        names = {SCENARIOS[x] for x in chosen}
        if SCENARIOS["cold-nosandbox"] in names:
            names.add(SCENARIOS["cold"])  # it drops the cache: the sandboxed cold build fills it again
        names |= {s.baseline for s in every if s.name in names and s.baseline}
        scenarios = [s for s in every if s.name in names]
        by_name = {s.name: s for s in scenarios}

        print(f"workspaces: {root}  ({n} tools, {examples} examples, theme {args.theme}, {repeat} round(s), "
              f"sandbox option {args.sandbox}{', reused' if reused else ''}); load average {loadavg()}", flush=True)
        # One unmeasured build of each workspace: imports compiled, files in the page cache.
        # (--no-warmup: none but the capture build, itself a warm-up, for big sizes on a reused workspace.)
        if any(s.workspace == base for s in scenarios) and not args.no_warmup:
            build(base, "mkdocs-nonav.yml", quiet=True)
        if not reuse:
            drop_cache()
        if not args.no_warmup:
            build(tc, "mkdocs-prepare.yml", quiet=True)
        statuses: dict[str, int] = {}
        warm_names = {SCENARIOS[x] for x in ("warm", "nonav", "warm-search", "nonav-search")}
        if names & FAIR:
            # Its capture build fills the results cache first when it is cold.
            print("  writing the fair baseline (one unmeasured warm build copies each generated page's HTML)", flush=True)
            statuses = fair_baseline(root, tc, args.theme, n)
            if not args.no_warmup:
                build(fair, "mkdocs-nonav.yml", quiet=True)
        elif SCENARIOS["cold"] not in names and names & warm_names:
            print("  filling the results cache (one unmeasured cold build; the nav does not change the results)", flush=True)
            build(tc, "mkdocs-nonav.yml", quiet=True)
            statuses = verify_catalog(tc, n)
        for round_no in range(1, repeat + 1):
            for scenario in scenarios:  # interleaved rounds: drift hits every scenario alike
                seconds = scenario.run()
                extra = f", {scenario.processes[-1]} processes" if scenario.plugin else ""
                rss = f", peak RSS {scenario.rss_mb[-1]:.0f} MB" if scenario.rss_mb else ""
                cpu = f", CPU {scenario.cpu_s[-1]:.2f}s" if scenario.cpu_s else ""
                print(f"  round {round_no}/{repeat}  {scenario.name:<44} {seconds:7.2f}s{cpu}{extra}{rss}, "
                      f"load {scenario.load[-1]:.2f}", flush=True)
                if scenario.name == "toolcatalog cold" and not statuses:
                    statuses = verify_catalog(tc, n)
        fair_side = [s for s in scenarios if s.workspace == fair and s.times]
        tc_side = [s for s in scenarios if s.workspace == tc and s.config.startswith("mkdocs-search") and s.times]
        if fair_side and tc_side:  # the last measured build of each side is on disk
            comparison = compare_sites(fair / "site", tc / "site")
            comparison["builds"] = {"fair": fair_side[-1].config, "toolcatalog": tc_side[-1].config}
            print_comparison(comparison)
            if (comparison["pages"]["toolcatalog"] != comparison["pages"]["fair"] or comparison["articles_differing"]
                    or comparison["only_in_fair"] or comparison["only_in_toolcatalog"]):
                raise BenchError(f"the fair site does not carry the plugin's content: {comparison}")
        if args.serve:
            # Serve what was measured: the plain warm build, else the fair set's warm build with search
            # (full nav if it was measured, else nav_tools: false), and compare with its median.
            served = None
            for short, config in (("warm", "mkdocs.yml"), ("warm-search", "mkdocs-search.yml"),
                                  ("nonav-search", "mkdocs-search-nonav.yml"), ("nonav", "mkdocs-nonav.yml")):
                candidate = by_name.get(SCENARIOS[short])
                if candidate and candidate.times:
                    served = (candidate, config)
                    break
            warm, served_config = served if served else (None, "mkdocs.yml")
            serve = measure_serve(tc, n, warm.median if warm else None, served_config,
                                  warm.cpu_median if warm else None)
        elapsed = time.perf_counter() - started
    finally:
        if args.keep or reuse:
            print(f"kept: {root}")
        else:
            shutil.rmtree(root, ignore_errors=True)

    rows = []
    for s in scenarios:
        base_median = by_name[s.baseline].median if s.baseline else None
        base_best = by_name[s.baseline].best if s.baseline else None
        procs = [p for p in s.processes if p is not None]
        checks = [c for c in s.check_seconds if c is not None]
        base_cpu = by_name[s.baseline].cpu_median if s.baseline else None
        rows.append({
            "scenario": s.name,
            "meaning": s.meaning,
            "config": s.config,
            "median_s": round(s.median, 3),
            "runs_s": [round(t, 3) for t in s.times],
            "cpu_median_s": round(s.cpu_median, 3) if s.cpu_median is not None else None,
            "cpu_runs_s": [round(t, 3) for t in s.cpu_s],
            "cpu_ratio": round(s.cpu_median / base_cpu, 2) if base_cpu and s.cpu_median is not None else None,
            "load_before_runs": s.load,
            "baseline": s.baseline,
            "ratio": round(s.median / base_median, 2) if base_median else None,
            "min_s": round(s.best, 3),
            "ratio_of_mins": round(s.best / base_best, 2) if base_best else None,
            "processes": procs[0] if procs and len(set(procs)) == 1 else (procs or None),
            "plugin_check_s": statistics.median(checks) if checks else None,
            "peak_rss_mb": round(max(s.rss_mb), 1) if s.rss_mb else None,
            "sandbox": s.sandbox,
        })
    sandbox = None
    if SCENARIOS["cold-nosandbox"] in by_name and args.sandbox == "auto":
        sandbox = sandbox_overhead(by_name["toolcatalog cold"], by_name["toolcatalog cold, sandbox: off"], examples)

    header = (f"{'scenario':<44} {'median s':>9} {'ratio':>7} {'CPU s':>7} {'ratio':>7}  {'vs':<30} {'processes':>9} "
              f"{'min s':>7} {'ratio':>7} {'RSS MB':>7}")
    print()
    print(header)
    print("-" * len(header))
    for row in rows:
        ratio = f"{row['ratio']:.2f}x" if row["ratio"] is not None else "1.00x"
        ratio_min = f"{row['ratio_of_mins']:.2f}x" if row["ratio_of_mins"] is not None else "1.00x"
        cpu = "-" if row["cpu_median_s"] is None else f"{row['cpu_median_s']:.2f}"
        cpu_ratio = f"{row['cpu_ratio']:.2f}x" if row["cpu_ratio"] is not None else ("1.00x" if row["cpu_median_s"] is not None else "-")
        vs = row["baseline"] or "(itself)"
        procs = "-" if row["processes"] is None else str(row["processes"])
        rss = "-" if row["peak_rss_mb"] is None else f"{row['peak_rss_mb']:.0f}"
        print(f"{row['scenario']:<44} {row['median_s']:>9.2f} {ratio:>7} {cpu:>7} {cpu_ratio:>7}  {vs:<30} {procs:>9} "
              f"{row['min_s']:>7.2f} {ratio_min:>7} {rss:>7}")
    print(f"\n{n} tools / {examples} examples, theme {args.theme}, median of {repeat}, "
          f"{elapsed:.0f}s. Seconds are this run only; compare the ratios.\n"
          f"The 'min s' columns use each scenario's fastest run (less sensitive to other load on the machine); "
          f"'CPU s' is the median user+system time of the build and the processes it waited for; "
          f"RSS is the build process's peak resident memory (the largest of its runs).")
    if sandbox:
        print(f"\nsandbox ({sandbox['sandbox']}): checking {examples} examples took {sandbox['check_s_sandboxed']}s sandboxed, "
              f"{sandbox['check_s_unsandboxed']}s unsandboxed (plugin's own timing): {sandbox['check_ratio']}x; "
              f"whole cold build {sandbox['build_ratio']}x; about {sandbox['extra_ms_per_process']} ms more per process "
              f"(worker time, {sandbox['workers']} workers)")
    if serve:
        print(f"\nmkdocs serve -f {serve['config']}: edited {serve['edited']}; its page was served {serve['edit_to_page_s']}s later "
              f"({serve['ratio_to_warm_build']}x the warm build's median), {serve['rebuilds']} rebuild(s); the server's CPU "
              f"until then {serve['cpu_to_page_s']} s ({serve['cpu_ratio_to_warm_build']}x the warm build's), "
              f"{serve['rebuild_cpu_s']} s to the end of the settle time; while idle: "
              f"{serve['idle_threads']} threads, {serve['idle_cpu_percent']}% of a CPU; {serve['watching']}")
    return {
        "tools": n,
        "examples": examples,
        "wall_s": round(elapsed, 1),
        "catalog_statuses": statuses,
        "scenarios": rows,
        "content_check": comparison,
        "sandbox_overhead": sandbox,
        "serve": serve,
    }


def print_curve(runs: list[dict[str, Any]]) -> None:
    """The ratios by catalog size, one line per size."""
    print("\ncurve (median ratios against the baseline with the same nav arrangement; peak RSS of one build):")
    print(f"{'tools':>6} {'baseline s':>11} {'warm s':>8} {'warm':>7} {'index-nav base s':>17} {'nav_tools:false s':>18} "
          f"{'ratio':>7} {'RSS warm/plain MB':>18}")
    for run in runs:
        rows = {r["scenario"]: r for r in run["scenarios"]}

        def cell(name: str, key: str, fmt: str = "{:.2f}") -> str:
            value = rows.get(SCENARIOS[name], {}).get(key)
            return "-" if value is None else fmt.format(value)

        rss = f"{cell('warm', 'peak_rss_mb', '{:.0f}')}/{cell('baseline', 'peak_rss_mb', '{:.0f}')}"
        print(f"{run['tools']:>6} {cell('baseline', 'median_s'):>11} {cell('warm', 'median_s'):>8} {cell('warm', 'ratio', '{:.2f}x'):>7} "
              f"{cell('baseline-index', 'median_s'):>17} {cell('nonav', 'median_s'):>18} {cell('nonav', 'ratio', '{:.2f}x'):>7} {rss:>18}")


def measure_serve(tc: Path, n: int, warm_s: float | None, config: str = "mkdocs.yml",
                  warm_cpu_s: float | None = None) -> dict[str, Any]:
    """`mkdocs serve -f config` on the warm workspace: idle threads and CPU, then one edit of one
    manifest (its description), timed until the edited page is served with the new text, and the
    rebuilds it caused (a second rebuild would show up within the settle time), with the server's
    CPU time from the edit to the end of its last rebuild. `warm_s` / `warm_cpu_s`: the median
    warm build of the same config (wall, CPU), for the ratios."""
    import socket
    import threading
    import urllib.request

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    process = subprocess.Popen(
        [sys.executable, "-m", "mkdocs", "serve", "-f", config, "--dev-addr", f"127.0.0.1:{port}"],
        cwd=tc, env=BUILD_ENV, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True,
    )
    lines: list[str] = []
    threading.Thread(target=lambda: lines.extend(iter(process.stdout.readline, "")), daemon=True).start()

    def wait_for(predicate: Callable[[], bool], timeout: float, what: str) -> None:
        deadline = time.monotonic() + timeout
        while not predicate():
            if process.poll() is not None or time.monotonic() > deadline:
                raise BenchError(f"mkdocs serve: {what} did not happen:\n" + "".join(lines[-40:]))
            time.sleep(0.05)

    def cpu_ticks() -> int:
        fields = Path(f"/proc/{process.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return int(fields[11]) + int(fields[12])

    manifest = tc / ".agent" / "tools" / "tool-001" / "TOOL.md"
    original = manifest.read_text(encoding="utf-8")
    try:
        wait_for(lambda: any("Serving on" in line for line in lines), 3600, "the first build")
        time.sleep(3)
        threads = None
        idle_cpu = None
        if Path(f"/proc/{process.pid}/status").exists():
            status = Path(f"/proc/{process.pid}/status").read_text()
            threads = int(re.search(r"^Threads:\s+(\d+)", status, re.M).group(1))
            before, t0 = cpu_ticks(), time.monotonic()
            time.sleep(5)
            idle_cpu = round(100 * (cpu_ticks() - before) / os.sysconf("SC_CLK_TCK") / (time.monotonic() - t0), 1)
        watching = next((line.strip() for line in lines if "Watching paths for changes" in line), "")
        mark = len(lines)
        token = f"edited-{int(time.time())}"
        url = f"http://127.0.0.1:{port}/tools/tool-001/"
        ticks_before = cpu_ticks()
        started = time.perf_counter()
        manifest.write_text(original.replace("(variant 1)", f"(variant 1, {token})", 1), encoding="utf-8")

        def served() -> bool:
            try:
                with urllib.request.urlopen(url, timeout=5) as response:
                    return token in response.read().decode("utf-8", "replace")
            except OSError:
                return False

        wait_for(served, 3600, "the edited page")
        latency = time.perf_counter() - started
        cpu_to_page = (cpu_ticks() - ticks_before) / os.sysconf("SC_CLK_TCK")
        settle = max(10.0, latency)  # a second rebuild would start within this (polling + build delay)
        time.sleep(settle)
        wait_for(lambda: sum("Detected file changes" in l for l in lines[mark:]) <= sum("Reloading browsers" in l for l in lines[mark:]),
                 3600, "the last rebuild")
        rebuilds = sum("Detected file changes" in line for line in lines[mark:])
        rebuild_cpu = (cpu_ticks() - ticks_before) / os.sysconf("SC_CLK_TCK")
    finally:
        manifest.write_text(original, encoding="utf-8")
        try:
            os.killpg(process.pid, 15)
        except ProcessLookupError:
            pass
        process.wait(timeout=30)
    return {
        "config": config,
        "edited": str(manifest.relative_to(tc)),
        "edit_to_page_s": round(latency, 2),
        "warm_build_s": round(warm_s, 2) if warm_s else None,
        "ratio_to_warm_build": round(latency / warm_s, 2) if warm_s else None,
        "rebuilds": rebuilds,
        "cpu_to_page_s": round(cpu_to_page, 2),  # the server's CPU from the edit until the page was served
        "rebuild_cpu_s": round(rebuild_cpu, 2),  # ... until the end of the settle time (idle polling included)
        "warm_build_cpu_s": round(warm_cpu_s, 2) if warm_cpu_s else None,
        "cpu_ratio_to_warm_build": round(cpu_to_page / warm_cpu_s, 2) if warm_cpu_s else None,
        "settle_s": round(settle, 1),
        "idle_threads": threads,
        "idle_cpu_percent": idle_cpu,
        "watching": watching[:300],
    }


if __name__ == "__main__":
    try:
        sys.exit(main())
    except BenchError as exc:
        print(f"\nBENCHMARK FAILED: {exc}", file=sys.stderr)
        sys.exit(1)
