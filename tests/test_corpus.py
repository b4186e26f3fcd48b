"""The shared corpus of real public manifests: verdicts follow SOURCES.md.

The corpus lives beside the checkout (`../shared/corpus`); the module is skipped
when it is not there.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from toolcatalog.harvest import harvest
from toolcatalog.model import ERROR, WARNING, Catalog, Diagnostic, Tool
from toolcatalog.options import Options

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus"

if not (CORPUS / "SOURCES.md").is_file():
    pytest.skip(f"corpus not found at {CORPUS}", allow_module_level=True)


def parse_sources() -> dict[str, str]:
    """`SOURCES.md` table: corpus path -> schema verdict text."""
    verdicts: dict[str, str] = {}
    column: int | None = None
    for line in (CORPUS / "SOURCES.md").read_text(encoding="utf-8").splitlines():
        if not line.startswith("|"):
            continue
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if "Schema verdict" in cells:
            column = cells.index("Schema verdict")
            continue
        if column is None or set(line) <= set("|-: "):
            continue
        path = cells[0].strip("`")
        verdicts[path] = cells[column]
    return verdicts


VERDICTS = parse_sources()
AGENTPROTO_TOOLS = sorted(p for p in VERDICTS if re.fullmatch(r"agentproto/tools/[^/]+/TOOL\.md", p))
AGENTPROTO_DRIVERS = sorted(p for p in VERDICTS if re.fullmatch(r"agentproto/drivers/[^/]+/DRIVER\.md", p))


def is_valid(verdict: str) -> bool:
    assert verdict.startswith(("valid", "invalid")), f"unexpected verdict {verdict!r}"
    return verdict.startswith("valid")


def codes(diagnostics: list[Diagnostic], severity: str | None = None) -> set[str]:
    return {d.code for d in diagnostics if severity is None or d.severity == severity}


def one_tool(catalog: Catalog) -> Tool:
    assert len(catalog.tools) == 1, [t.source for t in catalog.tools]
    return catalog.tools[0]


def test_sources_table_was_read():
    # The table names every manifest file that is in the corpus folders, and nothing else.
    on_disk = sorted(
        p.relative_to(CORPUS).as_posix() for p in CORPUS.glob("agentproto/*/*/*.md")
    )
    assert on_disk == sorted(AGENTPROTO_TOOLS + AGENTPROTO_DRIVERS)
    assert len(AGENTPROTO_TOOLS) >= 9 and len(AGENTPROTO_DRIVERS) >= 10
    assert [p for p in AGENTPROTO_TOOLS if not is_valid(VERDICTS[p])] == ["agentproto/tools/pricing-snapshot-2/TOOL.md"]


@pytest.mark.parametrize("path", AGENTPROTO_TOOLS)
def test_agentproto_tool_matches_the_schema_verdict(path):
    catalog = harvest(CORPUS, Options(paths=[path]))
    tool = one_tool(catalog)
    verdict = VERDICTS[path]
    assert tool.format == "aip-14"
    assert tool.source == path
    errors = [d for d in tool.diagnostics if d.severity == ERROR]
    assert tool.valid == is_valid(verdict), [(d.code, d.message) for d in errors]
    if is_valid(verdict):
        assert errors == []
        assert tool.status == "not-run"
    else:
        # "invalid — mutates: [...] is expected to be empty": the field named in the verdict is the one reported.
        field = re.match(r"invalid\s*\W\s*(\w+)", verdict).group(1)
        assert tool.status == "invalid"
        assert any(f"`{field}`" in d.message for d in errors), [d.message for d in errors]
        assert {d.code for d in errors} == {"schema"}
        text = (CORPUS / path).read_text(encoding="utf-8").splitlines()
        assert all(text[d.line - 1].startswith(f"{field}:") for d in errors)


def test_pricing_snapshot_from_the_spec_breaks_the_auto_mutates_rule():
    tool = one_tool(harvest(CORPUS, Options(paths=["agentproto/tools/pricing-snapshot-2/TOOL.md"])))
    error = [d for d in tool.diagnostics if d.severity == ERROR]
    assert len(error) == 1
    assert "`approval` is `auto` (also the default when absent), which forbids a non-empty `mutates`" in error[0].message


@pytest.mark.parametrize("path", AGENTPROTO_DRIVERS)
def test_agentproto_driver_is_valid_on_its_own(path):
    catalog = harvest(CORPUS, Options(paths=[path]))
    assert catalog.tools == []
    assert len(catalog.drivers) == 1
    driver = catalog.drivers[0]
    assert driver.source == path
    assert is_valid(VERDICTS[path])
    # No schema or subtype problem: the only errors are the tool paths that do not resolve in
    # the corpus, which are about the catalog, not the driver's front matter.
    assert codes(driver.diagnostics) == {"driver-unresolved"}
    unresolved = [d for d in driver.diagnostics if d.code == "driver-unresolved"]
    assert len(unresolved) == len(driver.implements) >= 1
    assert all(d.severity == ERROR and d.line is not None for d in unresolved)
    assert driver.kind in ("cli", "http", "mcp", "sdk", "builtin")
    orphan = [d for d in catalog.diagnostics if d.code == "driver-orphan"]
    assert len(orphan) == 1 and orphan[0].path == path
    assert f"driver {driver.id!r} implements no tool in this catalog" in orphan[0].message


def test_agentproto_drivers_attach_when_the_tool_is_there():
    # apollo-pricing-http names ./tools/pricing-snapshot/TOOL.md, relative to the agentproto folder.
    catalog = harvest(
        CORPUS / "agentproto",
        Options(paths=["tools/pricing-snapshot/TOOL.md", "drivers/apollo-pricing-http/DRIVER.md"]),
    )
    tool = one_tool(catalog)
    assert tool.id == "pricing-snapshot" and tool.valid
    assert [d.id for d in tool.drivers] == ["apollo-pricing-http"]
    assert "default-implementation" not in codes(tool.diagnostics)
    assert catalog.diagnostics == []


SPECCIFY_TOOLS = ("gitlab-deploy-key", "verify-signatures", "verify-stream")


def test_speccify_tools_are_valid():
    catalog = harvest(CORPUS, Options(paths=["speccify"]))
    assert [t.id for t in catalog.tools] == list(SPECCIFY_TOOLS)
    for tool in catalog.tools:
        assert tool.format == "speccify"
        assert tool.valid, [(d.code, d.message) for d in tool.diagnostics]
        assert tool.examples and all(e.has_input and e.has_output for e in tool.examples)
        # gitlab-deploy-key really has the flow-style trap the schema lint names (its line 63).
        allowed = {"example-input-schema"} | ({"schema-prose-keyword"} if tool.id == "gitlab-deploy-key" else set())
        assert not codes(tool.diagnostics, WARNING) - allowed
    assert catalog.diagnostics == []


def test_gitlab_deploy_key_examples():
    path = "speccify/gitlab-deploy-key/TOOL.md"
    tool = one_tool(harvest(CORPUS, Options(paths=[path])))
    assert [e.title for e in tool.examples] == [
        "plan: valid inputs, three projects, read-only",
        "plan: the key is not an OpenSSH public key",
        "plan: no projects",
    ]
    assert tool.platforms == ["macos", "linux"]
    assert [(r.kind, r.name) for r in tool.effects.requires] == [("binary", "python3"), ("runtime", "any")]
    lines = (CORPUS / path).read_text(encoding="utf-8").splitlines()
    # `access_level: {type: integer, description: 40 = Maintainer, 50 = Owner.}`: in flow style the
    # description ends at the comma and `50 = Owner.` becomes a keyword; the schema lint says so.
    lint = [d for d in tool.diagnostics if d.code == "schema-prose-keyword"]
    assert len(lint) == 1 and "`50 = Owner.` looks like prose" in lint[0].message
    assert "access_level: {type: integer, description: 40 = Maintainer, 50 = Owner.}" in lines[lint[0].line - 1]
    warnings = [d for d in tool.diagnostics if d.severity == WARNING and d.code != "schema-prose-keyword"]
    assert len(warnings) == 1
    warning = warnings[0]
    assert warning.code == "example-input-schema"
    assert lines[warning.line - 1] == "### plan: no projects"
    assert "'plan: no projects'" in warning.message and "$.projects" in warning.message
    assert tool.examples[2].input["projects"] == []


SMART_CATALOG = sorted(p.parent.name for p in (CORPUS / "smart-tools-catalog").glob("*/SMART_TOOL.md"))


# Catalog manifests whose valid YAML the smart-tools kit's own reader cannot parse: the line, and
# words of the construct the kit-yaml-subset warning names (the kit FAILs manifest-frontmatter-parses).
KIT_READER_FAILS = {
    "aud": (32, "a list item continued on the next line"),
    "fast-decisions": (2, "JSON front matter"),
    "lore": (9, "a `- >-` (or `- |`) block as a list item"),
}


@pytest.mark.parametrize("folder", SMART_CATALOG)
def test_smart_tools_catalog_manifest_is_valid(folder):
    tool = one_tool(harvest(CORPUS, Options(paths=[f"smart-tools-catalog/{folder}"])))
    assert tool.format == "smart-tool"
    assert tool.valid, [(d.code, d.message) for d in tool.diagnostics]
    # Catalog copies come without a smart-tool.json but with a source.json naming their repository:
    # that they are copies is the only thing said about them, and where the original lives is kept.
    # Some also carry the warning that the kit's own reader fails on them (a documented deviation:
    # they are valid YAML and pass here).
    kit = [d for d in tool.diagnostics if d.code == "kit-yaml-subset"]
    assert [d.code for d in tool.diagnostics if d not in kit] == ["catalog-copy"]
    if folder in KIT_READER_FAILS:
        line, construct = KIT_READER_FAILS[folder]
        assert [(d.line, d.severity) for d in kit] == [(line, WARNING)]
        assert construct in kit[0].message and "fails `manifest-frontmatter-parses`" in kit[0].message
        parses = next(c for c in tool.checks if c.id == "manifest-frontmatter-parses")
        assert parses.status.value == "passed" and f"fails on line {line}" in parses.detail
    else:
        assert kit == []
    assert tool.upstream["repository"].startswith("https://")
    assert tool.version and tool.description and tool.platforms
    assert tool.id == tool.fields["name"]


def test_smart_tools_catalog_has_unique_names():
    catalog = harvest(CORPUS, Options(paths=["smart-tools-catalog"]))
    assert len(catalog.tools) == len(SMART_CATALOG) >= 19
    assert catalog.diagnostics == []
    assert all(t.valid for t in catalog.tools)


CONFORMANCE = CORPUS / "smart-tools-conformance"

# fixture -> (diagnostic code, words in its message). Each fixture is harvested on its own.
BAD_FIXTURES = {
    "sample-bad-extra-field": ("schema", "unknown field `author`"),
    "sample-bad-field-shape": ("schema", "`platforms` must be an array, not a string"),
    "sample-bad-missing-version": ("schema", "missing required field `version`"),
    "sample-bad-name-uppercase": ("schema", '`name` "SampleGood" does not match the pattern'),
    "sample-bad-requires-install-command": ("requires-install", "'pip install sample-provider' starts with the installer command `pip`"),
    "sample-bad-frontmatter-broken": ("frontmatter-unclosed", "never closed"),
    "sample-bad-descriptor-no-manifest": ("descriptor", "missing required field `manifest`"),
    "sample-bad-manifest-missing": ("descriptor-manifest", "'src/samplegood/SMART_TOOL.md' does not exist"),
    "sample-bad-manifest-wrong-name": ("descriptor-manifest", "must name a file called SMART_TOOL.md"),
}
# Fixtures whose rule needs the tool to run (or a package file the corpus did not copy).
RUNTIME_FIXTURES = {"sample-bad-help-no-disclosure", "sample-bad-failure-exits-zero", "sample-bad-version-mismatch"}


def test_every_conformance_fixture_is_accounted_for():
    present = {p.name for p in CONFORMANCE.iterdir() if p.is_dir()}
    assert present == set(BAD_FIXTURES) | RUNTIME_FIXTURES | {"sample-good"}


@pytest.mark.parametrize("fixture", sorted(BAD_FIXTURES))
def test_bad_conformance_fixture_fails_for_its_reason(fixture):
    code, words = BAD_FIXTURES[fixture]
    catalog = harvest(CONFORMANCE / fixture)
    assert catalog.tools, "the fixture produced no tool"
    for tool in catalog.tools:
        assert not tool.valid and tool.status == "invalid"
        matching = [d for d in tool.diagnostics if d.code == code and d.severity == ERROR and words in d.message]
        assert len(matching) == 1, [(d.code, d.message) for d in tool.diagnostics]
        # Nothing else is wrong with the fixture except, where it holds two manifests, their shared name.
        others = {d.code for d in tool.diagnostics if d.severity == ERROR} - {code}
        extra_allowed = {"duplicate-id", "manifest-single-per-root"} | ({"descriptor-manifest"} if code == "descriptor-manifest" else set())
        assert others <= extra_allowed, others


def test_bad_fixture_lines_point_at_the_field():
    tool = one_tool(harvest(CONFORMANCE / "sample-bad-extra-field"))
    error = [d for d in tool.diagnostics if d.code == "schema"][0]
    assert error.line == 3 and error.path == "src/samplegood/SMART_TOOL.md"
    tool = one_tool(harvest(CONFORMANCE / "sample-bad-requires-install-command"))
    error = [d for d in tool.diagnostics if d.code == "requires-install"][0]
    lines = (CONFORMANCE / "sample-bad-requires-install-command" / "SMART_TOOL.md").read_text(encoding="utf-8").splitlines()
    assert lines[error.line - 1].strip() == "install: pip install sample-provider"


def test_sample_good_is_valid():
    catalog = harvest(CONFORMANCE / "sample-good")
    tool = one_tool(catalog)
    assert tool.valid and tool.diagnostics == []
    assert (tool.id, tool.version, tool.source, tool.descriptor_source) == (
        "samplegood",
        "0.1.0",
        "src/samplegood/SMART_TOOL.md",
        "smart-tool.json",
    )
    assert tool.descriptor["deterministic_smoke"] == ["stats", "--text", "hello world"]
    assert catalog.diagnostics == []


def test_whole_corpus_harvests_without_exceptions():
    catalog = harvest(CORPUS)
    # Conventional locations only: the corpus keeps agentproto files outside `.tools/`, so the
    # default search finds the smart tools (catalog and fixtures) and nothing else.
    assert {t.format for t in catalog.tools} == {"smart-tool"}
    assert len([t for t in catalog.tools if t.source.startswith("smart-tools-catalog/")]) == len(SMART_CATALOG)
