"""Red team: what a hostile commit can make the export do (issue 17).

Each test is an attack that worked on main, kept as a regression test:

- the generated-files record in the docs folder made `toolcatalog markdown` delete or overwrite
  the site's own pages, and a folder link in the docs folder took the writing and the deleting
  outside it;
- manifest text in the Markdown export became live Markdown for a CommonMark reader (a blank
  line ended the raw HTML block) and live Jinja for a macros layer (`{{ 7*7 }}` became 49);
- an invalid tool's id put Markdown and HTML into llms.txt;
- an id that imitates another tool's with lookalike characters went unflagged;
- a 1,100-level folder chain crashed harvest.

Real commands, real MkDocs builds (with the real mkdocs-macros plugin) and a real CommonMark
reader (markdown-it-py); the Markdown export is also fuzzed with hypothesis.
"""

from __future__ import annotations

import hashlib
import html
import html.parser
import json
import os
import re
from datetime import timedelta
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt

from manifests import front_matter, write
from sitebuild import build, toolcatalog
from toolcatalog import pipeline
from toolcatalog.markdown_pages import markdown_safe

RECORD = ".toolcatalog-generated.json"
OWN_HOME = "# Home\n\nThe site's own page.\n"
OWN_ABOUT = "# About\n\nAlso the site's own.\n"
OWN_TOOLS_INDEX = "# Our tools\n\nWritten by hand.\n"


def plain_project(root: Path, **extra: object) -> Path:
    """A MkDocs project without the plugin (what `toolcatalog markdown` is for) and one valid tool."""
    write(root / "mkdocs.yml", yaml.safe_dump({"site_name": "Red team", "theme": {"name": "mkdocs"}, **extra}, sort_keys=False))
    write(root / "docs/index.md", OWN_HOME)
    write(root / ".tools/adder/TOOL.md", front_matter(
        {"name": "Adder", "id": "adder", "description": "Adds.", "version": "1.0.0", "inputs": {}, "outputs": {}}))
    return root


def sha256(path: Path) -> str:
    return "sha256:" + hashlib.sha256(path.read_bytes()).hexdigest()


# -- 1. the record of generated files, and links in the docs folder ---------------------------------------


@pytest.mark.parametrize("shape", ["list", "digests"])
def test_a_planted_record_deletes_and_overwrites_none_of_the_sites_own_pages(tmp_path: Path, shape: str) -> None:
    plain_project(tmp_path)
    docs = tmp_path / "docs"
    write(docs / "about.md", OWN_ABOUT)
    write(docs / "tools/index.md", OWN_TOOLS_INDEX)  # where the catalog index would go
    write(docs / "extra.css", "body { color: red }\n")
    claimed = ["index.md", "about.md", "tools/index.md", "extra.css"]
    # The record as main wrote it (a list), and as this version writes it, with the right digests:
    # a commit can compute those for any file it carries.
    files = claimed if shape == "list" else {path: sha256(docs / path) for path in claimed}
    write(docs / RECORD, json.dumps({"generator": "mkdocs-toolcatalog", "files": files}))

    result = toolcatalog("markdown", str(tmp_path), "--no-run")
    assert result.returncode == 0, result.stderr
    assert (docs / "index.md").read_text() == OWN_HOME
    assert (docs / "about.md").read_text() == OWN_ABOUT
    assert (docs / "tools/index.md").read_text() == OWN_TOOLS_INDEX
    assert (docs / "extra.css").read_text() == "body { color: red }\n"
    assert (docs / "tools/adder.md").is_file()  # the catalog itself is still written
    record = json.loads((docs / RECORD).read_text())["files"]
    assert "about.md" not in record and "tools/index.md" not in record
    assert record["tools/adder.md"] == sha256(docs / "tools/adder.md")


def test_a_folder_link_in_the_docs_folder_carries_no_write_and_no_delete_outside(tmp_path: Path) -> None:
    plain_project(tmp_path / "repo")
    outside = tmp_path / "outside"
    write(outside / "victim.md", "# precious\n")
    docs = tmp_path / "repo/docs"
    os.symlink(outside, docs / "tools")  # the pages would go to docs/tools/
    # A page exactly as the export writes one, so that only the link stands between it and deletion.
    write(docs / RECORD, json.dumps({"generator": "mkdocs-toolcatalog", "files": {"tools/victim.md": sha256(outside / "victim.md")}}))

    result = toolcatalog("markdown", str(tmp_path / "repo"), "--no-run")
    assert result.returncode == 1, result.stderr  # pages that could not be written are a problem found
    assert "tools/adder.md not written" in result.stderr and "link" in result.stderr
    assert sorted(p.name for p in outside.iterdir()) == ["victim.md"]
    assert (outside / "victim.md").read_text() == "# precious\n"
    assert (docs / "catalog.json").is_file()  # what has no link on its way is written


def test_a_docs_folder_that_leads_outside_the_workspace_is_refused(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    root = plain_project(tmp_path / "repo")
    (root / "docs/index.md").unlink()
    (root / "docs").rmdir()
    os.symlink(outside, root / "docs")
    result = toolcatalog("markdown", str(root), "--no-run")
    assert result.returncode == 2 and "outside the workspace" in result.stderr
    assert list(outside.iterdir()) == []
    write(root / "mkdocs.yml", yaml.safe_dump({"site_name": "x", "docs_dir": str(outside)}))
    result = toolcatalog("markdown", str(root), "--no-run")
    assert result.returncode == 2 and "outside the workspace" in result.stderr
    assert list(outside.iterdir()) == []
    assert toolcatalog("markdown", str(root), "--no-run", "-o", str(outside)).returncode == 0  # said on the command line: fine


def test_only_unchanged_generated_files_are_replaced_or_deleted(tmp_path: Path) -> None:
    root = plain_project(tmp_path)
    write(root / ".tools/gone/TOOL.md", front_matter(
        {"name": "Gone", "id": "gone", "description": "Soon removed.", "version": "1.0.0", "inputs": {}, "outputs": {}}))
    docs = root / "docs"
    assert toolcatalog("markdown", str(root), "--no-run").returncode == 0
    edited = (docs / "tools/adder.md").read_text().replace("Adds.", "Adds, as our editor says.")
    (docs / "tools/adder.md").write_text(edited)
    (root / ".tools/gone/TOOL.md").unlink()
    result = toolcatalog("markdown", str(root), "--no-run")
    assert result.returncode == 0, result.stderr
    assert not (docs / "tools/gone.md").exists() and not (docs / "tools/gone.json").exists()  # ours, unchanged: removed
    assert (docs / "tools/adder.md").read_text() == edited  # changed since: now the site's own page
    assert "tools/adder.md" not in json.loads((docs / RECORD).read_text())["files"]


def test_what_a_run_wrote_is_brought_up_to_date_by_the_next(tmp_path: Path) -> None:
    root = plain_project(tmp_path)
    docs = root / "docs"
    assert toolcatalog("markdown", str(root), "--no-run").returncode == 0
    write(root / ".tools/adder/TOOL.md", front_matter(
        {"name": "Adder", "id": "adder", "description": "Adds, now faster.", "version": "1.1.0", "inputs": {}, "outputs": {}}))
    result = toolcatalog("markdown", str(root), "--no-run")
    assert result.returncode == 0 and "it is kept" not in result.stderr, result.stderr
    for path in ("tools/adder.md", "tools/adder.json", "catalog.json", "llms.txt", "mcp-tools.json", "tools/index.md"):
        assert "now faster" in (docs / path).read_text(encoding="utf-8"), path


# -- 2. the Markdown layer: CommonMark readers and template layers -------------------------------------

HOSTILE_BODY = """\
Body text.

```
line one

![pixel](http://attacker.example/p.png)

# Injected heading

[click](http://attacker.example/)
<img src="http://attacker.example/q.png">
```

Indented code:

    one

    {{ 6*7 }}
"""


def hostile_project(root: Path, **extra: object) -> Path:
    plain_project(root, **extra)
    write(root / ".tools/evil/TOOL.md", front_matter({
        "name": "Evil {{ 7*7 }}", "id": "evil", "version": "1.0.0", "inputs": {}, "outputs": {},
        "description": "Macro {{ 7*7 }} and {% if true %}yes{% endif %} and {# gone #}, line\r\rbreaks",
    }, HOSTILE_BODY))
    return root


def body(page: str) -> str:
    """A page as a generator reads it: the front matter off."""
    assert page.startswith("---\n")
    return page.split("\n---\n", 1)[1]


def assert_one_raw_block(page: str) -> None:
    """A CommonMark reader passes the page through as one raw HTML block, byte for byte: nothing
    in it became Markdown (no image, link or heading of its own making)."""
    text = body(page)
    assert MarkdownIt("commonmark").render(text) == text.lstrip("\n")
    assert not re.search(r"\{[{%#]", page), "live template syntax"


def test_a_commonmark_reader_sees_one_raw_html_block(tmp_path: Path) -> None:
    root = hostile_project(tmp_path)
    assert toolcatalog("markdown", str(root), "--no-run").returncode == 0
    pages = sorted((root / "docs/tools").glob("*.md"))
    assert [p.name for p in pages] == ["adder.md", "evil.md", "index.md"]
    for page in pages:
        assert_one_raw_block(page.read_text(encoding="utf-8"))
    rendered = MarkdownIt("commonmark").render(body((root / "docs/tools/evil.md").read_text(encoding="utf-8")))
    assert "<img" not in rendered and "attacker.example" in rendered  # the manifest's text is there, as text
    assert not re.search(r"<h[1-6][^>]*>Injected", rendered) and 'href="http://attacker.example/"' not in rendered


def test_a_macros_build_evaluates_nothing_from_a_manifest(tmp_path: Path) -> None:
    import mkdocs_macros  # noqa: F401 (a test dependency: missing, this test fails rather than skips)
    root = hostile_project(tmp_path, plugins=["macros"])
    write(root / "docs/about.md", "# About\n\nThe site's own macro: {{ 6*7 }}.\n")
    assert toolcatalog("markdown", str(root), "--no-run").returncode == 0
    result = build(root)
    assert result.returncode == 0, result.stderr
    assert "The site's own macro: 42." in (root / "site/about/index.html").read_text()  # the macros layer runs
    for page in ("site/tools/evil/index.html", "site/tools/index.html"):
        text = html.unescape((root / page).read_text(encoding="utf-8"))
        assert "Macro {{ 7*7 }} and {% if true %}yes{% endif %} and {# gone #}" in text, page
        assert "Macro 49" not in text and "Evil 49" not in text, page
    evil = html.unescape((root / "site/tools/evil/index.html").read_text(encoding="utf-8"))
    assert "{{ 6*7 }}" in evil and "<title>Evil {{ 7*7 }}" in evil


class _Events(html.parser.HTMLParser):
    """What a browser builds from HTML, as a list: tags with their attributes, and text."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.events: list[tuple] = []

    def handle_starttag(self, tag: str, attrs: list) -> None:
        self.events.append(("start", tag, tuple(attrs)))

    def handle_endtag(self, tag: str) -> None:
        self.events.append(("end", tag))

    def handle_data(self, data: str) -> None:
        if self.events and self.events[-1][0] == "data":
            self.events[-1] = ("data", self.events[-1][1] + data)
        else:
            self.events.append(("data", data))


def events(text: str) -> list[tuple]:
    parser = _Events()
    parser.feed(text.replace("\r\n", "\n").replace("\r", "\n").replace("\0", "\ufffd"))  # as HTML reads line ends and NUL
    parser.close()
    return parser.events


FRAGMENTS = ["\n", "\n\n", "\r", "\r\n", " \t\n", "{{", "{%", "{#", "}}", "%}", "{", "![a](http://x.example/i.png)",
             "[l](http://x.example/)", "<img src=x>", "# h\n", "    code\n", "```\n", "<pre>", "</pre>", "<div>", "-->",
             "<!--", "&", "&#10;", "*", "|a|b|\n|-|-|\n", "> q\n", "<script>alert(1)</script>", "`", "~~~\n", "é"]
MANIFEST_TEXT = st.lists(st.sampled_from(FRAGMENTS) | st.text(max_size=5), max_size=25).map("".join)


@settings(max_examples=25, derandomize=True, database=None, deadline=timedelta(seconds=30),
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(name=MANIFEST_TEXT, description=MANIFEST_TEXT, text=MANIFEST_TEXT)
def test_fuzz_the_markdown_export_stays_one_inert_block(tmp_path_factory: pytest.TempPathFactory, name: str,
                                                        description: str, text: str) -> None:
    root = tmp_path_factory.mktemp("fuzz")
    write(root / ".tools/fuzzed/TOOL.md", front_matter(
        {"name": name or "x", "id": "fuzzed", "description": description or "x", "version": "1.0.0", "inputs": {}, "outputs": {}},
        text))
    built = pipeline.prepare(root)
    pages = built.markdown_pages()
    for path, page in pages.items():
        if path.endswith(".md"):
            assert_one_raw_block(page)
    # The same page for a browser: `markdown_safe` changes how the HTML is written, never what it says.
    for raw in (f"<pre>{html.escape(text)}</pre>", f'<p title="{html.escape(description)}">{html.escape(name)}</p>'):
        assert events(markdown_safe(raw)) == events(raw)
    # And whatever it is given, well-formed or not, it leaves no blank line, in linear time.
    assert not re.search(r"\n[ \t]*\n", markdown_safe(name + description + text))


# -- 3. ids in llms.txt -----------------------------------------------------------------------------------

HOSTILE_ID = "evil\n\n# Injected\n\n![x](http://attacker.example/p.png) <img src=x> [l](http://attacker.example/) \u202eabc"


@pytest.mark.parametrize("tool_id", [HOSTILE_ID, HOSTILE_ID + " `a`` code`"], ids=["plain", "backticks"])
def test_an_invalid_tools_id_stays_text_in_llms_txt(tmp_path: Path, tool_id: str) -> None:
    root = plain_project(tmp_path)
    write(root / ".tools/evil/TOOL.md", front_matter(
        {"name": "Evil", "id": tool_id, "description": "d", "version": "1.0.0", "inputs": {}, "outputs": {}}))
    out = tmp_path / "out"
    assert toolcatalog("export", str(root), "--no-run", "-o", str(out)).returncode == 0
    llms = (out / "llms.txt").read_text(encoding="utf-8")
    rendered = MarkdownIt("commonmark").render(llms)
    assert "<img" not in rendered and "attacker.example/p.png" in rendered  # there, as text
    assert re.findall(r"<h[1-6]>", rendered) == ["<h1>", "<h2>", "<h2>"]  # the title, Tools, Do not use
    assert 'href="http://attacker.example/"' not in rendered
    item = next(line for line in llms.splitlines() if "Injected" in line)
    assert item.startswith("- [Evil](") and ", aip-14, invalid, " in item and "its manifest is invalid" in item, item  # one list item, on one line
    assert "\u202e" not in llms and "\\u202e" in llms  # an override a reader cannot see is written out


# -- 5. folder depth ---------------------------------------------------------------------------------------


def folder_chain(root: Path, depth: int) -> Path:
    """`root/d/d/.../d`, `depth` folders deep (made one at a time: os.makedirs recurses)."""
    here = root
    here.mkdir(parents=True, exist_ok=True)
    for _ in range(depth):
        here = here / "d"
        here.mkdir()
    return here


def remove_tree(top: Path) -> None:
    """`shutil.rmtree` without recursion: it (and so pytest's clean-up of old temporary folders,
    for every later session on the machine) fails on a 1,100-level chain."""
    order, stack = [], [str(top)]
    while stack:
        folder = stack.pop()
        order.append(folder)
        with os.scandir(folder) as entries:
            for entry in entries:
                if entry.is_dir(follow_symlinks=False):
                    stack.append(entry.path)
                else:
                    os.unlink(entry.path)
    for folder in reversed(order):
        os.rmdir(folder)


def test_a_1100_level_folder_chain_is_reported_and_harvest_goes_on(tmp_path: Path) -> None:
    root = plain_project(tmp_path)
    try:
        folder_chain(root / "vendor", 1100)
        folder_chain(root / "docs/deep", 1100)  # the docs folder's own pages are walked too
        result = toolcatalog("validate", str(root))
        assert result.returncode == 0, result.stderr
        assert "vendor/d/d/" in result.stdout
        assert "folders nest more than 64 levels below the folder searched" in result.stdout
        assert "1 tool, 0 invalid" in result.stdout
        result = toolcatalog("markdown", str(root), "--no-run")
        assert result.returncode == 0, result.stderr
        assert (root / "docs/tools/adder.md").is_file()
    finally:
        for top in (root / "vendor", root / "docs/deep"):
            if top.is_dir():
                remove_tree(top)


def test_a_manifest_at_the_depth_limit_is_still_found(tmp_path: Path) -> None:
    from toolcatalog.discover import MAX_DEPTH, discover

    deepest = folder_chain(tmp_path, MAX_DEPTH)
    write(deepest / "smart-tool.json", "{}")
    write(deepest / "d/smart-tool.json", "{}")
    found = discover(tmp_path)
    assert [f.path for f in found.files] == [deepest / "smart-tool.json"]
    assert [(d.code, d.path) for d in found.diagnostics] == [("folder-too-deep", "/".join(["d"] * MAX_DEPTH))]


# -- 4. lookalike ids ---------------------------------------------------------------------------------------


def aip14_tool(root: Path, folder: str, tool_id: str) -> None:
    write(root / f".tools/{folder}/TOOL.md", front_matter(
        {"name": folder, "id": tool_id, "description": "Reads a file.", "version": "1.0.0", "inputs": {}, "outputs": {}}))


def test_lookalike_and_mixed_script_ids_are_flagged_for_reviewers(tmp_path: Path) -> None:
    root = plain_project(tmp_path)
    aip14_tool(root, "read-file", "read-file")
    aip14_tool(root, "impostor", "read-f\u0456le")  # a Cyrillic і
    aip14_tool(root, "ascii-impostor", "read-fi1e")  # a digit one: valid, and still a lookalike
    aip14_tool(root, "modify", "modify")
    aip14_tool(root, "rn", "rnodify")

    result = toolcatalog("validate", str(root))
    lines = result.stdout.splitlines()
    impostor = [l for l in lines if l.startswith(".tools/impostor/TOOL.md:3: warning:")]
    assert any("mixes scripts (Cyrillic, Latin)" in l and "U+0456 CYRILLIC SMALL LETTER BYELORUSSIAN-UKRAINIAN I" in l
               for l in impostor), lines
    assert any("'read-f\\u0456le' looks like 'read-fi1e'" in l or "'read-f\\u0456le' looks like 'read-file'" in l
               for l in impostor), lines
    assert any(l.startswith(".tools/ascii-impostor/TOOL.md:3: warning: the id 'read-fi1e' looks like") for l in lines), lines
    assert any(l.startswith(".tools/rn/TOOL.md:3: warning: the id 'rnodify' looks like 'modify' of .tools/modify/TOOL.md")
               for l in lines), lines
    assert not any("adder" in l and "looks like" in l for l in lines)

    check = toolcatalog("check", str(root), "--no-cache", "--jobs", "1")  # the table shows them too
    assert "warning: the id 'rnodify' looks like 'modify'" in check.stdout, check.stdout

    out = tmp_path / "out"
    assert toolcatalog("export", str(root), "--no-run", "-o", str(out)).returncode == 0
    catalog = json.loads((out / "catalog.json").read_text(encoding="utf-8"))
    codes = {t["id"]: {d["code"] for d in t["diagnostics"]} for t in catalog["tools"]}
    assert {"id-lookalike", "id-mixed-script"} <= codes["read-f\u0456le"]
    assert "id-lookalike" in codes["read-file"] and "id-lookalike" in codes["modify"]
    assert "id-lookalike" not in codes["adder"]
    assert "id-lookalike" in {d["code"] for d in catalog["diagnostics"]}


def test_a_lookalike_id_is_flagged_on_its_page(tmp_path: Path) -> None:
    root = plain_project(tmp_path)
    aip14_tool(root, "read-file", "read-file")
    aip14_tool(root, "impostor", "re\u0430d-file")  # a Cyrillic а
    assert toolcatalog("markdown", str(root), "--no-run").returncode == 0
    page = html.unescape((root / "docs/tools/index.md").read_text(encoding="utf-8"))
    assert "Ids that look like another tool" in page
    pages = [p.read_text(encoding="utf-8") for p in (root / "docs/tools").glob("*.md") if p.name != "index.md"]
    flagged = [html.unescape(p) for p in pages if "looks like" in html.unescape(p)]
    assert len(flagged) == 2 and any("U+0430 CYRILLIC SMALL LETTER A" in p for p in flagged)


def test_export_writes_nothing_through_a_link_in_its_folder(tmp_path: Path) -> None:
    root = plain_project(tmp_path / "repo")
    outside = tmp_path / "outside"
    outside.mkdir()
    out = root / "agents"  # an output folder inside the checkout, where a commit can put a link
    out.mkdir()
    os.symlink(outside, out / "tools")
    result = toolcatalog("export", str(root), "--no-run", "-o", str(out))
    assert result.returncode == 1 and "tools/adder.json not written" in result.stderr
    assert list(outside.iterdir()) == []
    assert (out / "catalog.json").is_file()


def test_a_docs_folder_inside_the_checkouts_git_is_refused(tmp_path: Path) -> None:
    root = plain_project(tmp_path / "repo")
    (root / ".git" / "hooks").mkdir(parents=True)
    write(root / "mkdocs.yml", yaml.safe_dump({"site_name": "x", "docs_dir": ".git/hooks"}))
    result = toolcatalog("markdown", str(root), "--no-run")
    assert result.returncode == 2 and "inside the checkout's .git" in result.stderr, result.stderr
    assert list((root / ".git" / "hooks").iterdir()) == []
