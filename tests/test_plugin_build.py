"""Real `mkdocs build` runs in temporary folders; assertions on the HTML and JSON they produce."""

from __future__ import annotations

import logging
import re
from pathlib import Path

import pytest

from manifests import speccify_tool, workspace_all_formats, write
from sitebuild import build, catalog, mkdocs_project

REQUIRED_TOOL_FIELDS = {
    "id", "name", "format", "version", "description", "source", "url", "valid", "diagnostics",
    "inputs", "outputs", "effects", "capabilities", "examples", "drivers", "status",
}


@pytest.fixture
def site(tmp_path: Path) -> Path:
    workspace_all_formats(tmp_path)
    mkdocs_project(tmp_path)
    build(tmp_path, "--strict")
    return tmp_path


def test_every_format_gets_a_page_and_a_catalog_entry(site: Path) -> None:
    data = catalog(site)
    assert data["version"] == 2
    ids = [t["id"] for t in data["tools"]]
    assert ids == sorted(ids) == ["add-numbers", "text.echo", "tiny-smart"]
    formats = {t["id"]: t["format"] for t in data["tools"]}
    assert formats == {"add-numbers": "speccify", "text.echo": "aip-14", "tiny-smart": "smart-tool"}
    for tool in data["tools"]:
        assert REQUIRED_TOOL_FIELDS <= set(tool), tool["id"]
        assert tool["valid"] is True
        assert (site / "site" / tool["url"] / "index.html").is_file()
    assert (site / "site" / "tools" / "index.html").is_file()


def test_catalog_fields_are_normalized(site: Path) -> None:
    tools = {t["id"]: t for t in catalog(site)["tools"]}
    speccify = tools["add-numbers"]
    assert speccify["source"] == ".agent/tools/add-numbers/TOOL.md"
    assert speccify["kind"] == "no-model-declared"  # a program naming no model is not "deterministic" on no evidence
    assert speccify["platforms"] == ["linux", "macos"]
    assert speccify["effects"]["text"] == "none; pure computation"
    assert speccify["effects"]["mutates"] is None  # speccify does not declare scopes: never guessed
    [example] = speccify["examples"]
    assert {k: example[k] for k in ("title", "line", "input", "output", "status", "detail", "actual")} == {
        "title": "two and two", "line": 26, "input": {"a": 2, "b": 2}, "output": {"sum": 4},
        "status": "passed", "detail": "", "actual": {"sum": 4},
    }
    assert speccify["status"] == "passed"
    aip = tools["text.echo"]
    assert aip["version"] == "1.2.0"
    assert aip["effects"]["read_only"] is True and aip["effects"]["risk_level"] == 0
    assert [d["id"] for d in aip["drivers"]] == ["echo-cli"]
    assert aip["drivers"][0]["implements"]["tool_id"] == "text.echo"
    assert aip["drivers"][0]["kind"] == "cli"
    smart = tools["tiny-smart"]
    assert smart["source"] == "packages/tiny-smart/src/tiny_smart/SMART_TOOL.md"
    assert smart["descriptor"] == "packages/tiny-smart/smart-tool.json"
    # Only running --help can tell: one deterministic and one model-backed capability.
    assert smart["kind"] == "mixed"
    assert smart["capabilities"] == [
        {"name": "count", "kind": "deterministic", "label": "deterministic", "summary": "Count words."},
        {"name": "guess", "kind": "model-backed", "label": "model-backed", "summary": "Guess what the text means."},
    ]


def test_tool_page_shows_the_contract(site: Path) -> None:
    html = (site / "site" / "tools" / "add-numbers" / "index.html").read_text()
    assert "<h1 id=\"tc-title\">add-numbers</h1>" in html
    assert "Adds two numbers and says whether the sum is even." in html
    assert "none; pure computation" in html
    assert "two and two" in html
    assert "The first addend." in html
    # The page title and the table of contents come from the plugin, not from an empty stub.
    assert "<title>add-numbers" in html
    assert 'href="#tc-examples"' in html
    aip = (site / "site" / "tools" / "text.echo" / "index.html").read_text()
    assert "echo-cli" in aip and "read-only" in aip


def test_strict_build_fails_on_an_invalid_manifest(tmp_path: Path) -> None:
    workspace_all_formats(tmp_path)
    write(tmp_path / ".agent/tools/broken/TOOL.md", "---\nname: Broken Name\ndescription: x\ninputs: {}\noutputs: {}\n---\n")
    mkdocs_project(tmp_path)
    result = build(tmp_path, "--strict", check=False)
    assert result.returncode != 0
    assert ".agent/tools/broken/TOOL.md:2: name 'Broken Name' must be lowercase" in result.stderr  # log: no code spans
    # Without --strict the same build succeeds and shows the tool as invalid.
    build(tmp_path)
    broken = next(t for t in catalog(tmp_path)["tools"] if t["id"] == "Broken Name")
    assert broken["valid"] is False and broken["status"] == "invalid"
    errors = [d for d in broken["diagnostics"] if d["severity"] == "error"]
    assert [(d["line"], d["path"], d["code"]) for d in errors] == [(2, ".agent/tools/broken/TOOL.md", "name")]
    page = (tmp_path / "site" / broken["url"] / "index.html").read_text()
    assert "Invalid manifest: 1 error." in page and "must be lowercase" in page


def test_builds_in_this_process_count_only_their_own_warnings(tmp_path: Path) -> None:
    # sitebuild.build runs MkDocs in the test process: --strict must see each build's warnings alone,
    # and the `mkdocs` logger must be left as it was found.
    handlers = list(logging.getLogger("mkdocs").handlers)
    write(tmp_path / "broken/.agent/tools/broken/TOOL.md", "---\nname: Broken Name\ndescription: x\ninputs: {}\noutputs: {}\n---\n")
    mkdocs_project(tmp_path / "broken")
    failed = build(tmp_path / "broken", "--strict", check=False)
    assert failed.returncode == 1 and "Aborted with 1 warnings in strict mode!" in failed.stdout
    mkdocs_project(workspace_all_formats(tmp_path / "clean"))
    assert build(tmp_path / "clean", "--strict").returncode == 0
    quiet = build(tmp_path / "broken", "--strict", "-q", check=False)  # as `mkdocs -q`: warnings are not even logged
    assert quiet.returncode == 0 and quiet.stderr == ""
    assert logging.getLogger("mkdocs").handlers == handlers


def test_warnings_alone_do_not_fail_strict(tmp_path: Path) -> None:
    # An input that violates `inputs` documents rejection: a warning, logged at INFO level.
    write(
        tmp_path / ".agent/tools/picky/TOOL.md",
        """
        ---
        name: picky
        description: Rejects negative numbers.
        inputs: {type: object, properties: {n: {type: integer, minimum: 0}}}
        outputs: {type: object}
        effects: none
        ---
        ## Examples
        ### negative is rejected
        input: {"n": -1}
        output: {"ok": false}
        """,
    )
    mkdocs_project(tmp_path)
    result = build(tmp_path, "--strict")
    assert "the input violates inputs" in result.stderr
    assert catalog(tmp_path)["tools"][0]["valid"] is True


def test_material_theme_and_nav_grouping(tmp_path: Path) -> None:
    workspace_all_formats(tmp_path)
    mkdocs_project(tmp_path, theme="material", nav=[{"Home": "index.md"}, {"Catalog": "tools/index.md"}])
    build(tmp_path, "--strict")
    html = (tmp_path / "site" / "tools" / "text.echo" / "index.html").read_text()
    labels = [re.sub(r"\s+", " ", m) .strip() for m in re.findall(r'md-ellipsis">([^<]*)<', html)]
    assert "Catalog" in labels and "agentproto AIP-14" in labels and "Smart tools" in labels
    assert labels.index("speccify") < labels.index("add-numbers") < labels.index("agentproto AIP-14")
    assert "toolcatalog/assets/toolcatalog.css" in html
    assert (tmp_path / "site" / "toolcatalog" / "assets" / "toolcatalog.css").is_file()


def test_a_catalog_of_one_format_lists_its_tools_without_a_format_section(tmp_path: Path) -> None:
    for name in ("beta", "alpha"):
        speccify_tool(tmp_path, name, [("one", {"x": 1}, {"x": 1})])
    mkdocs_project(tmp_path, {"run_examples": False}, theme="material")
    build(tmp_path, "--strict")
    html = (tmp_path / "site" / "tools" / "alpha" / "index.html").read_text()
    labels = [re.sub(r"\s+", " ", m).strip() for m in re.findall(r'md-ellipsis">([^<]*)<', html)]
    catalog_labels = list(dict.fromkeys(labels[labels.index("Tool catalog"):]))  # the open page shows twice
    assert catalog_labels[:3] == ["Tool catalog", "All tools", "alpha"], labels
    assert catalog_labels.index("alpha") < catalog_labels.index("beta"), labels
    assert "speccify" not in labels


def test_nav_tools_off_keeps_only_the_index(tmp_path: Path) -> None:
    workspace_all_formats(tmp_path)
    mkdocs_project(tmp_path, {"nav_tools": False}, theme="material")
    build(tmp_path)
    html = (tmp_path / "site" / "index.html").read_text()
    assert "All tools" in html
    assert "add-numbers" not in html
    index = (tmp_path / "site" / "tools" / "index.html").read_text()
    assert 'href="add-numbers/"' in index


def test_custom_dir_overrides_a_template(tmp_path: Path) -> None:
    workspace_all_formats(tmp_path)
    write(
        tmp_path / "overrides/toolcatalog/tool.html",
        "<div class=\"my-tool\">custom page for {{ tool.id }} {{ tool.description }}</div>\n",
    )
    mkdocs_project(tmp_path, theme={"name": "mkdocs", "custom_dir": "overrides"})
    build(tmp_path)
    html = (tmp_path / "site" / "tools" / "add-numbers" / "index.html").read_text()
    assert '<div class="my-tool">custom page for add-numbers' in html
    # The index still comes from the packaged template.
    assert "tc-catalog" in (tmp_path / "site" / "tools" / "index.html").read_text()


def test_user_page_wins_and_options_are_honoured(tmp_path: Path) -> None:
    workspace_all_formats(tmp_path)
    write(tmp_path / "docs/reference/add-numbers.md", "# Hand-written\n\nOur own page.\n")
    mkdocs_project(tmp_path, {"page_dir": "reference", "catalog_file": "api/tools.json", "exclude": ["packages/"]})
    build(tmp_path)
    data = catalog(tmp_path, "api/tools.json")
    assert [t["id"] for t in data["tools"]] == ["add-numbers", "text.echo"]
    assert "Our own page." in (tmp_path / "site" / "reference" / "add-numbers" / "index.html").read_text()
    assert (tmp_path / "site" / "reference" / "text.echo" / "index.html").is_file()


def test_disabled_plugin_does_nothing(tmp_path: Path) -> None:
    workspace_all_formats(tmp_path)
    mkdocs_project(tmp_path, {"enabled": False})
    build(tmp_path, "--strict")
    assert not (tmp_path / "site" / "catalog.json").exists()
    assert not (tmp_path / "site" / "tools").exists()


def test_broken_setup_is_a_plugin_error(tmp_path: Path) -> None:
    mkdocs_project(tmp_path, {"paths": ["no/such/folder"]})
    result = build(tmp_path, check=False)
    assert result.returncode != 0
    assert "paths entry 'no/such/folder' does not exist" in result.stderr  # code spans printed as their words
    mkdocs_project(tmp_path, {"page_dir": "../outside"})
    result = build(tmp_path, check=False)
    assert result.returncode != 0 and "page_dir must be a relative folder" in result.stderr


def test_docs_and_site_dirs_are_not_harvested(tmp_path: Path) -> None:
    workspace_all_formats(tmp_path)
    # A manifest under docs/ (e.g. an example in the documentation) and a stale copy in site/.
    write(tmp_path / "docs/.agent/tools/doc-example/TOOL.md", "---\nname: doc-example\n---\n")
    mkdocs_project(tmp_path)
    build(tmp_path)
    write(tmp_path / "site/.agent/tools/stale/TOOL.md", "---\nname: stale\n---\n")
    build(tmp_path)
    ids = [t["id"] for t in catalog(tmp_path)["tools"]]
    assert "doc-example" not in ids and "stale" not in ids


def test_manifest_lines_link_to_the_repository(tmp_path: Path) -> None:
    workspace_all_formats(tmp_path)
    write(tmp_path / ".agent/tools/broken/TOOL.md", "---\nname: Broken Name\ndescription: x\ninputs: {}\noutputs: {}\n---\n")
    mkdocs_project(tmp_path, repo_url="https://github.com/acme/tools", edit_uri="blob/main/docs/")
    build(tmp_path)
    page = (tmp_path / "site" / "tools" / "broken-name" / "index.html").read_text()
    assert 'href="https://github.com/acme/tools/blob/main/.agent/tools/broken/TOOL.md#L2"' in page
    assert 'href="https://github.com/acme/tools/blob/main/.agent/tools/broken/TOOL.md"' in page
    # An explicit template wins.
    mkdocs_project(tmp_path, {"source_uri": "https://code.example/{path}?line={line}"})
    build(tmp_path)
    page = (tmp_path / "site" / "tools" / "broken-name" / "index.html").read_text()
    assert 'href="https://code.example/.agent/tools/broken/TOOL.md?line=2"' in page


def test_a_hostile_tool_name_is_escaped_in_titles_and_the_nav(tmp_path: Path) -> None:
    write(
        tmp_path / ".tools/evil/TOOL.md",
        '---\nname: "</title><img src=x onerror=alert(1)>"\nid: evil\ndescription: d\nversion: 1.0.0\ninputs: {}\noutputs: {}\n---\n',
    )
    for theme in ("mkdocs", "material"):
        mkdocs_project(tmp_path, theme=theme)
        build(tmp_path)
        for page in (tmp_path / "site" / "index.html", tmp_path / "site" / "tools" / "evil" / "index.html"):
            html = page.read_text()
            assert "<img src=x" not in html and "</title><img" not in html, (theme, page)
            assert "&lt;img src=x onerror=alert(1)&gt;" in html, (theme, page)
        own = (tmp_path / "site" / "tools" / "evil" / "index.html").read_text()
        assert "<title>&lt;/title&gt;&lt;img src=x onerror=alert(1)&gt; - " in own, theme
