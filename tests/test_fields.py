"""Every contract field a reviewer judges a tool by reaches the page and the JSON (issue 19 item 2):
driver egress, secrets, region, policy tags, cost, endpoint, health check, a CLI's bin/bin_args, an
MCP server's command; AIP-14 timeout_ms, retry, driver_constraints, default_implementation,
metadata. Small fixtures always run; one test per field runs over the shared corpus manifests that
declare it (skipped when the corpus is absent). `toolcatalog diff` reports a new egress host or a
new secret as a change that needs review, and counts duplicate ids separately."""

from __future__ import annotations

import html
import json
from pathlib import Path
from typing import Any, Callable

import pytest
import yaml

import teamcorpus
from manifests import aip_driver, aip_tool, write
from sitebuild import toolcatalog
from toolcatalog import catalogdiff, pipeline
from toolcatalog.model import Catalog, Tool
from toolcatalog.options import Options
from toolcatalog.outputs import catalog_json
from toolcatalog.render import Renderer


def built(root: Path) -> Catalog:
    return pipeline.prepare(root, Options(run_examples=False)).catalog


def page(catalog: Catalog, tool: Tool) -> str:
    return html.unescape(Renderer().tool_page(tool, catalog, lambda target: target))


def entries(catalog: Catalog) -> dict[str, dict[str, Any]]:
    """Each tool's published entry (scrubbed, with its digest), checked against the catalog schema."""
    document = json.loads(json.dumps(catalog_json.document(catalog)))
    catalog_json.validate(document)
    return {data["id"] + "@" + data["source"]: data for data in document["tools"]}


def entry(catalog: Catalog, tool: Tool) -> dict[str, Any]:
    return entries(catalog)[tool.id + "@" + tool.source]


def access_section(text: str) -> str:
    assert 'id="tc-access"' in text, "no Data and access section"
    return text.split('id="tc-access"', 1)[1].split("<h2", 1)[0]


# -- fixtures of our own -------------------------------------------------------------------------------
def workspace(root: Path) -> Path:
    aip_tool(
        root, "pii.scrub", [{"name": "one", "input": {}}], timeout_ms=4000,
        retry={"max_attempts": 3, "backoff": "exponential", "initial_ms": 250},
        driver_constraints={"forbid": ["http", "mcp"], "require_kind": ["cli"]},
        default_implementation="scrub-http", metadata={"owner": "privacy-team"},
        requires={"secrets": ["SCRUB_LICENSE"]},
    )
    aip_driver(
        root, "scrub-http", "pii.scrub", kind="http",
        entry={"cost_override": {"cost_units_per_call": 7}, "metadata": {"http": {"endpoint": "/v2/scrub", "method": "POST"}}},
        auth={"ref": "./SECRETS.md", "state": {"env": ["SCRUB_API_KEY"]}},
        network={"egress": ["api.scrub.example"]}, region=["eu-west-1"], policy_tags=["eu-data-residency"],
        health_check={"method": "http", "http": {"method": "GET", "url": "https://api.scrub.example/health"}, "every": "PT1M"},
    )
    aip_driver(root, "scrub-cli", "pii.scrub", kind="cli", bin="scrub", bin_args=["--json"],
               entry={"metadata": {"cli": {"argv": ["run", "${input.text}"]}}})
    aip_driver(root, "scrub-mcp", "pii.scrub", kind="mcp", server={"kind": "binary", "path": "./scrub-mcp", "args": ["--stdio"]},
               transport="stdio", entry={"metadata": {"mcp": {"tool_name": "scrub"}}})
    return root


@pytest.fixture
def fixture_tool(tmp_path: Path) -> tuple[Catalog, Tool]:
    catalog = built(workspace(tmp_path))
    tool = catalog.tool("pii.scrub")
    assert tool is not None and len(tool.drivers) == 3, [d.id for d in (tool.drivers if tool else [])]
    return catalog, tool


def test_driver_access_fields_reach_the_json(fixture_tool: tuple[Catalog, Tool]) -> None:
    catalog, tool = fixture_tool
    data = entry(catalog, tool)
    assert data["access"] == {
        "egress": ["api.scrub.example"], "egress_undeclared": ["scrub-cli", "scrub-mcp"],
        "secrets": ["SCRUB_API_KEY", "SCRUB_LICENSE"], "region": ["eu-west-1"], "policy_tags": ["eu-data-residency"],
        "cost_class": "trivial",
    }
    drivers = {d["id"]: d["access"] for d in data["drivers"]}
    http = drivers["scrub-http"]
    assert http["endpoint"] == "POST /v2/scrub" and http["cost"] == {"cost_units_per_call": 7}
    assert http["secrets"] == ["SCRUB_API_KEY"] and http["auth_ref"] == "./SECRETS.md"
    assert http["health_check"]["http"]["url"] == "https://api.scrub.example/health"
    assert drivers["scrub-cli"]["command"] == ["scrub", "--json", "run", "${input.text}"]
    assert drivers["scrub-cli"]["bin"] == "scrub" and drivers["scrub-cli"]["bin_args"] == ["--json"]
    assert drivers["scrub-cli"]["egress"] is None  # not declared: never shown as "no network"
    assert drivers["scrub-mcp"]["command"] == ["./scrub-mcp", "--stdio"] and drivers["scrub-mcp"]["mcp_tool"] == "scrub"


def test_aip14_execution_fields_reach_the_json(fixture_tool: tuple[Catalog, Tool]) -> None:
    catalog, tool = fixture_tool
    assert entry(catalog, tool)["execution"] == {
        "timeout_ms": 4000, "retry": {"max_attempts": 3, "backoff": "exponential", "initial_ms": 250},
        "default_implementation": "scrub-http", "driver_constraints": {"forbid": ["http", "mcp"], "require_kind": ["cli"]},
        "metadata": {"owner": "privacy-team"},
    }


def test_the_page_has_a_data_and_access_section(fixture_tool: tuple[Catalog, Tool]) -> None:
    catalog, tool = fixture_tool
    section = access_section(page(catalog, tool))
    for text in ("api.scrub.example", "SCRUB_API_KEY", "SCRUB_LICENSE", "eu-west-1", "eu-data-residency", "cost_units_per_call 7",
                 "4000 ms", "at most 3 attempts", "exponential", "forbids <code>http</code>, <code>mcp</code> drivers",
                 "scrub-http", "privacy-team", "POST /v2/scrub", "scrub --json run ${input.text}", "./scrub-mcp --stdio",
                 "MCP tool <code>scrub</code>", "https://api.scrub.example/health", "not declared by <code>scrub-cli</code>"):
        assert text in section, text


def test_a_tool_without_such_fields_says_none_declared(tmp_path: Path, write_tool: Callable[..., Path]) -> None:
    aip_tool(tmp_path, "plain.tool", [{"name": "one", "input": {}}])
    write_tool("plain-speccify")
    catalog = built(tmp_path)
    tool = catalog.tool("plain.tool")
    assert tool is not None
    section = access_section(page(catalog, tool))
    assert "Network egress</th><td>none declared" in section and "Secrets needed</th><td>none declared" in section
    assert "Timeout" not in section  # the spec's default is not filled in
    assert entry(catalog, tool)["execution"]["timeout_ms"] is None
    speccify = catalog.tool("plain-speccify")
    assert speccify is not None and 'id="tc-access"' not in page(catalog, speccify)  # nothing declared at all: no section


def test_hostile_values_are_dropped_not_trusted(tmp_path: Path) -> None:
    aip_tool(tmp_path, "odd.tool", [{"name": "one", "input": {}}], timeout_ms="soon", retry=[1], driver_constraints={"forbid": "http"})
    aip_driver(tmp_path, "odd-http", "odd.tool", kind="http", network={"egress": "everywhere"}, auth={"state": {"env": [1, "OK_NAME"]}},
               region="EU", policy_tags=[{"x": 1}])
    catalog = built(tmp_path)
    tool = catalog.tool("odd.tool")
    assert tool is not None
    data = entry(catalog, tool)
    assert data["execution"]["timeout_ms"] is None and data["execution"]["retry"] is None
    assert data["execution"]["driver_constraints"] == {"forbid": [], "require_kind": []}
    driver = data["drivers"][0]["access"]
    assert driver["egress"] is None and driver["secrets"] == ["OK_NAME"] and driver["region"] is None and driver["policy_tags"] == []
    assert data["access"]["egress_undeclared"] == ["odd-http"]


# -- the shared corpus: one test per field ---------------------------------------------------------------
needs_corpus = pytest.mark.skipif(not teamcorpus.available(), reason="the shared corpus is not beside the checkout")


def _front(path: Path) -> dict[str, Any]:
    text = path.read_text(encoding="utf-8")
    data = yaml.safe_load(text.split("---", 2)[1])
    return data if isinstance(data, dict) else {}


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> tuple[Catalog, dict[str, str], dict[str, dict[str, Any]]]:
    root = teamcorpus.place(tmp_path_factory.mktemp("corpus"))
    catalog = built(root)
    pages = {t.id + "@" + t.source: page(catalog, t) for t in catalog.tools}
    return catalog, pages, entries(catalog)


def _driver_cases(field: str) -> list[tuple[str, str]]:
    if not teamcorpus.available():
        return []
    folder = teamcorpus.CORPUS / "agentproto" / "drivers"
    return [(p.parent.name, field) for p in sorted(folder.glob("*/DRIVER.md")) if _has(_front(p), field)]


def _has(data: dict[str, Any], field: str) -> bool:
    if field == "network.egress":
        return isinstance(data.get("network"), dict) and bool(data["network"].get("egress"))
    if field == "auth.state.env":
        return bool(((data.get("auth") or {}).get("state") or {}).get("env"))
    if field == "endpoint":
        return any(isinstance((e.get("metadata") or {}).get("http"), dict) for e in data.get("implements") or [])
    if field == "cost_override":
        return any(isinstance(e.get("cost_override"), dict) for e in data.get("implements") or []) or "cost_override" in data
    return field in data


def _implemented(catalog: Catalog, folder: str) -> list[tuple[Tool, Any]]:
    """(tool, driver) for each tool the corpus driver in `folder` was linked to."""
    out = []
    for tool in catalog.tools:
        for driver in tool.drivers:
            if driver.source.split("/")[-2] == folder:
                out.append((tool, driver))
    return out


DRIVER_FIELDS = ("network.egress", "auth.state.env", "region", "policy_tags", "cost_override", "endpoint", "health_check", "bin")


@needs_corpus
@pytest.mark.parametrize("field", DRIVER_FIELDS)
def test_corpus_driver_field(field: str, corpus: tuple[Catalog, dict[str, str], dict[str, dict[str, Any]]]) -> None:
    catalog, pages, entries = corpus
    cases = _driver_cases(field)
    assert cases, f"no corpus driver declares {field}"
    checked = 0
    for folder, _ in cases:
        data = _front(teamcorpus.CORPUS / "agentproto" / "drivers" / folder / "DRIVER.md")
        for tool, driver in _implemented(catalog, folder):
            key = tool.id + "@" + tool.source
            published = next(d["access"] for d in entries[key]["drivers"] if d["source"] == driver.source)
            section = access_section(pages[key])
            for expected in _expected(field, data, driver, tool):
                assert expected in json.dumps(published), (folder, field, expected)
                assert expected in section, (folder, field, expected)
            checked += 1
    if field != "bin":  # the corpus's only CLI driver (gh) implements tools the corpus does not have
        assert checked, f"no corpus driver declaring {field} implements a tool in the corpus"


def _expected(field: str, data: dict[str, Any], driver: Any, tool: Tool) -> list[str]:
    if field == "network.egress":
        return [str(h) for h in data["network"]["egress"]]
    if field == "auth.state.env":
        return [str(s) for s in data["auth"]["state"]["env"]]
    if field in ("region", "policy_tags"):
        return [str(v) for v in data[field]]
    if field == "cost_override":
        entry = driver.entry_for(tool.id)
        cost = entry.cost_override if entry is not None and entry.cost_override else data.get("cost_override") or {}
        return [str(v) for v in cost.values()]
    if field == "endpoint":
        meta = driver.entry_for(tool.id).metadata.get("http") or {}
        return [str(meta.get("endpoint"))] if meta.get("endpoint") else []
    if field == "health_check":
        return [str(data["health_check"]["http"]["url"])] if isinstance(data["health_check"].get("http"), dict) else [str(data["health_check"]["method"])]
    return [str(data[field])]


def test_the_corpus_cli_driver_bin_reaches_its_access_record() -> None:
    """gh (the corpus's CLI driver) implements no corpus tool, so its `bin` is checked on the driver."""
    if not teamcorpus.available():
        pytest.skip("the shared corpus is not beside the checkout")
    from toolcatalog.formats import aip30

    path = teamcorpus.CORPUS / "agentproto" / "drivers" / "gh" / "DRIVER.md"
    driver = aip30.parse(path, "gh/DRIVER.md", 1 << 20)
    assert driver.access.bin == "gh" and driver.access.bin_args == []
    assert driver.access.egress == ["api.github.com", "github.com", "*.githubusercontent.com"]
    assert driver.access.secrets == ["GH_TOKEN", "GITHUB_TOKEN"] and driver.access.auth_paths == ["~/.config/gh"]
    mcp = aip30.parse(teamcorpus.CORPUS / "agentproto" / "drivers" / "filesystem-mcp" / "DRIVER.md", "fs/DRIVER.md", 1 << 20)
    assert mcp.access.mcp_server == "./servers/filesystem-mcp/server.json" and mcp.access.transport == "stdio"
    assert mcp.access.egress == []  # declared: no network


TOOL_FIELDS = ("timeout_ms", "retry", "driver_constraints", "default_implementation", "metadata")


@needs_corpus
@pytest.mark.parametrize("field", TOOL_FIELDS)
def test_corpus_tool_field(field: str, corpus: tuple[Catalog, dict[str, str], dict[str, dict[str, Any]]]) -> None:
    catalog, pages, entries = corpus
    checked = 0
    for path in sorted((teamcorpus.CORPUS / "agentproto" / "tools").glob("*/TOOL.md")):
        data = _front(path)
        if field not in data:
            continue
        tool = next(t for t in catalog.tools if t.source.split("/")[-2] == path.parent.name)
        key = tool.id + "@" + tool.source
        published = entries[key]["execution"]
        section = access_section(pages[key])
        value = data[field]
        if field == "timeout_ms":
            assert published["timeout_ms"] == value and f"{value} ms" in section
        elif field == "retry":
            assert published["retry"]["max_attempts"] == value["max_attempts"] and published["retry"]["backoff"] == value["backoff"]
            assert f"at most {value['max_attempts']} attempts" in section and value["backoff"] in section
        elif field == "driver_constraints":
            for key_name in ("forbid", "require_kind"):
                assert published["driver_constraints"][key_name] == value.get(key_name, [])
                for kind in value.get(key_name, []):
                    assert f"<code>{kind}</code>" in section
        elif field == "default_implementation":
            assert published["default_implementation"] == value and value in section
        else:
            assert published["metadata"] == value
            for name in value:
                assert name in section
        checked += 1
    assert checked, f"no corpus tool declares {field}"


# -- toolcatalog diff ------------------------------------------------------------------------------------
def _catalog(root: Path) -> dict[str, Any]:
    result = toolcatalog("validate", "--json", str(root))
    return json.loads(result.stdout)


def test_a_new_egress_host_or_secret_needs_review(tmp_path: Path) -> None:
    old_root, new_root = tmp_path / "old", tmp_path / "new"
    workspace(old_root)
    workspace(new_root)
    aip_driver(new_root, "scrub-http", "pii.scrub", kind="http",
               entry={"cost_override": {"cost_units_per_call": 7}, "metadata": {"http": {"endpoint": "/v2/scrub", "method": "POST"}}},
               auth={"ref": "./SECRETS.md", "state": {"env": ["SCRUB_API_KEY", "ANALYTICS_TOKEN"]}},
               network={"egress": ["api.scrub.example", "collector.example.net"]}, region=["eu-west-1", "us-east-1"],
               policy_tags=["eu-data-residency"],
               health_check={"method": "http", "http": {"method": "GET", "url": "https://api.scrub.example/health"}, "every": "PT1M"})
    text = (new_root / ".tools/pii.scrub/TOOL.md").read_text(encoding="utf-8").replace("- http\n  - mcp\n", "- mcp\n")
    write(new_root / ".tools/pii.scrub/TOOL.md", text)
    old, new = _catalog(old_root), _catalog(new_root)
    report = catalogdiff.diff(old, new)
    changes = {c.code: c for t in report.changed for c in t.changes}
    assert changes["egress-added"].breaking and "collector.example.net" in changes["egress-added"].message
    assert changes["egress-added"].message.startswith("needs review: ")
    assert changes["secret-added"].breaking and "ANALYTICS_TOKEN" in changes["secret-added"].message
    assert changes["region-added"].breaking and "us-east-1" in changes["region-added"].message
    assert changes["driver-constraint-lifted"].breaking and "`http`" in changes["driver-constraint-lifted"].message
    assert report.breaking
    # A removed host or secret is fine.
    back = {c.code for t in catalogdiff.diff(new, old).changed for c in t.changes}
    assert {"egress-removed", "secret-removed", "region-removed"} <= back
    assert not {"egress-added", "secret-added"} & back


def test_diff_counts_duplicate_ids_separately() -> None:
    def tool(source: str, description: str) -> dict[str, Any]:
        return {"id": "samplegood", "name": "samplegood", "format": "speccify", "source": source, "description": description}

    old = {"version": 2, "tools": [tool("a/TOOL.md", "one"), tool("b/TOOL.md", "two"), tool("c/TOOL.md", "three")]}
    new = {"version": 2, "tools": [tool("a/TOOL.md", "one"), tool("b/TOOL.md", "changed"), tool("d/TOOL.md", "four")]}
    report = catalogdiff.diff(old, new)
    assert [(t["id"], t["source"]) for t in report.removed] == [("samplegood", "c/TOOL.md")]
    assert [(t["id"], t["source"]) for t in report.added] == [("samplegood", "d/TOOL.md")]
    assert [(t.id, t.source) for t in report.changed] == [("samplegood", "b/TOOL.md")]
    assert report.counts() == {"added": 1, "removed": 1, "changed": 1, "breaking_changes": 1, "other_changes": 2}
    text = report.markdown()
    assert "`samplegood` samplegood at `c/TOOL.md`" in text and "### `samplegood` samplegood at `b/TOOL.md`" in text
    # A unique id that moved is still the same tool (no source in the report).
    moved = catalogdiff.diff({"version": 2, "tools": [tool("a/TOOL.md", "x")]}, {"version": 2, "tools": [tool("z/TOOL.md", "y")]})
    assert not moved.added and not moved.removed and moved.changed[0].source is None
    assert "source" not in moved.as_dict()["changed"][0]
