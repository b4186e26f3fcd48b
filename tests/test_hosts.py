"""Every host runs the same pipeline with the same option rules.

MkDocs 1.6 and ProperDocs 1.6 build the demo site (the repository's own mkdocs.yml, Material)
and a plain-theme site with the same pages and byte-identical outputs for agents; MkDocs,
ProperDocs and every `toolcatalog` command refuse the same bad options with the same message.
The two hosts never share an interpreter (ProperDocs aliases the `mkdocs` modules inside its
own process), so ProperDocs always runs as `python -m properdocs`; MkDocs does too where the
comparison is about the two commands.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from manifests import workspace_all_formats
from sitebuild import REPO, agent_outputs, build, files_under, mkdocs_project, toolcatalog
from toolcatalog.options import Options, OptionsError

HOSTS = ("mkdocs", "properdocs")
# How each host signs its pages (Material: the generator tag; the classic themes: a comment too).
GENERATOR = {"mkdocs": re.compile(r"mkdocs-1\.6|MkDocs version : 1\.6"), "properdocs": re.compile(r"ProperDocs 1\.6")}


def tool_block(html: str) -> str:
    """The tool page's content as the plugin rendered it (from our template's first tag to its source line)."""
    start = html.index('<div class="toolcatalog tc-tool"')
    end = html.index("</div>", html.index('<p class="tc-source">', start))
    return html[start:end]


@pytest.fixture(scope="module")
def demo_sites(tmp_path_factory: pytest.TempPathFactory, demo_site: Path) -> dict[str, Path]:
    """The demo site built by each host, into separate folders: MkDocs' is the run's shared demo
    build (conftest's `demo_site`, by MkDocs' own build API, as its command runs it), ProperDocs'
    is built by its own command. Both commands build one workspace in
    test_the_plain_theme_works_under_both_hosts."""
    sites = {"mkdocs": demo_site, "properdocs": tmp_path_factory.mktemp("hosts") / "properdocs"}
    build(REPO, "-q", "-f", str(REPO / "mkdocs.yml"), "-d", str(sites["properdocs"]), host="properdocs")
    return sites


def test_the_demo_builds_under_both_hosts_with_identical_outputs_for_agents(demo_sites: dict[str, Path]) -> None:
    by_host = {host: agent_outputs(site) for host, site in demo_sites.items()}
    assert "catalog.json" in by_host["mkdocs"] and len(by_host["mkdocs"]) > 10
    assert by_host["mkdocs"] == by_host["properdocs"]  # catalog.json, its schema, tools/*.json, mcp-tools.json, llms.txt
    assert sorted(files_under(demo_sites["mkdocs"])) == sorted(files_under(demo_sites["properdocs"]))
    for host, site in demo_sites.items():  # each site was really built by its own host
        page = (site / "tools" / "index.html").read_text(encoding="utf-8")
        assert [h for h in HOSTS if GENERATOR[h].search(page)] == [host]


def test_the_plain_theme_works_under_both_hosts(tmp_path: Path) -> None:
    workspace_all_formats(tmp_path)
    mkdocs_project(tmp_path, {"jobs": 2})
    # Both builds read the same cached results: the pages then match to the byte.
    assert toolcatalog("check", str(tmp_path)).returncode == 0
    for host in HOSTS:
        build(tmp_path, "--strict", "-f", "mkdocs.yml", "-d", f"site-{host}", host=host)
    mkdocs_site, properdocs_site = tmp_path / "site-mkdocs", tmp_path / "site-properdocs"
    assert agent_outputs(mkdocs_site) == agent_outputs(properdocs_site)
    for tool, name in (("add-numbers", "add-numbers"), ("text.echo", "Echo text"), ("tiny-smart", "tiny-smart")):
        pages = [(site / "tools" / tool / "index.html").read_text(encoding="utf-8") for site in (mkdocs_site, properdocs_site)]
        assert tool_block(pages[0]) == tool_block(pages[1]), tool
        assert all(f"<title>{name} - Test catalog" in page for page in pages), tool
    for site in (mkdocs_site, properdocs_site):
        assert (site / "toolcatalog/assets/toolcatalog.css").is_file() and (site / "toolcatalog/assets/toolcatalog.js").is_file()
        assert "data-toolcatalog-index" in (site / "tools" / "index.html").read_text(encoding="utf-8")
    assert GENERATOR["properdocs"].search((properdocs_site / "index.html").read_text(encoding="utf-8"))


# -- one rule per option, the same refusal everywhere ------------------------------------------------

BAD_OPTIONS: dict[str, dict[str, Any]] = {
    "page_dir outside the site": {"page_dir": "../../escape"},
    "tiny max_manifest_bytes": {"max_manifest_bytes": 10},
    "timeout not a number": {"timeout": "abc"},
    "unknown fail_on status": {"fail_on": ["nope"]},
    "two outputs at one path": {"mcp_file": "catalog.json"},
    "sandbox not a choice": {"sandbox": "maybe"},
    "paths not a list": {"paths": "examples"},
}


def expected_message(bad: dict[str, Any]) -> str:
    """What the library's own rule says about the bad option."""
    with pytest.raises(OptionsError) as refused:
        Options.from_mapping(bad)
    return str(refused.value)


def host_message(output: str) -> str:
    """The option message in a host's log: `ERROR - Config value 'plugins': Plugin 'toolcatalog' option 'x': MESSAGE`."""
    found = re.findall(r"Config value 'plugins': Plugin 'toolcatalog' option '[a-z_]*': (.*)", output)
    assert len(found) == 1, output
    return found[0]


@pytest.mark.parametrize("bad", BAD_OPTIONS.values(), ids=BAD_OPTIONS.keys())
def test_every_host_refuses_a_bad_option_with_the_same_message(tmp_path: Path, bad: dict[str, Any]) -> None:
    written = expected_message(bad)
    assert re.match(r"`[a-z_]+` ", written), written  # it names the option
    message = written.replace("`", "")  # every host prints code spans as their words
    workspace_all_formats(tmp_path)
    mkdocs_project(tmp_path, bad)
    config = tmp_path / "mkdocs.yml"

    for host in HOSTS:  # as their own commands; a configuration error, before anything runs
        result = build(tmp_path, "-f", "mkdocs.yml", check=False, host=host)
        assert result.returncode == 1, (host, result.stderr)
        assert host_message(result.stderr) == message, host
        assert "Aborted with a configuration error!" in result.stdout + result.stderr, host
    assert not (tmp_path / "site").exists() and not (tmp_path / ".cache").exists()

    for command in (["validate"], ["check"], ["export", "-o", str(tmp_path / "out")], ["markdown"]):
        result = toolcatalog(*command, str(tmp_path))
        assert result.returncode == 2, (command, result.stdout, result.stderr)
        assert result.stderr == f"toolcatalog: {config}: {message}\n", command
        assert result.stdout == ""
    assert not (tmp_path / "out").exists() and not (tmp_path / ".cache").exists()
    assert sorted(files_under(tmp_path / "docs")) == ["index.md"]  # `markdown` wrote nothing
