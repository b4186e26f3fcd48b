"""Smart-tool verdicts, rule by rule, against the conformance kit's own on its fixtures.

`KIT` is what the Amplifier smart-tools conformance kit (`conformance/run.py`, the
14-rule version) reported on each fixture of the corpus copy in
`shared/corpus/smart-tools-conformance`, run with `uv` and `samplegood` absent from
PATH. Only its verdicts are written here, as data; none of its code. Our checks
must equal them, except where `DIFFERENT` says otherwise and why (each reason is
also written in docs/formats.md, "Smart tools: choices made").
"""

from __future__ import annotations

import os
import sys

import pytest

from sitebuild import CORPUS
from toolcatalog import pipeline
from toolcatalog.model import Tool
from toolcatalog.options import Options

FIXTURES = CORPUS / "smart-tools-conformance"
pytestmark = pytest.mark.skipif(not FIXTURES.is_dir(), reason="the shared corpus is not here")

RULES = (
    "descriptor-present", "manifest-present", "manifest-frontmatter-parses", "manifest-fields-closed",
    "manifest-required-fields", "manifest-name-format", "manifest-version-matches-package",
    "manifest-requires-shape", "manifest-single-per-root", "loads-without-provider",
    "help-discloses-model-backed", "deterministic-capability-runs", "failure-names-remedy", "no-hang-stdin-closed",
)
P, F, S = "passed", "failed", "skipped"


def row(text: str) -> dict[str, str]:
    """One fixture's 14 kit verdicts, in RULES order: P, F or S."""
    return dict(zip(RULES, ({"P": P, "F": F, "S": S}[c] for c in text.split()), strict=True))


KIT = {
    #                                       D M1 M2 M3 M4 M5 M6 M7 M8 R1 R2 R3 R4 R5
    "sample-bad-descriptor-no-manifest": row("F F  S  S  S  S  S  S  S  S  S  S  S  S"),
    "sample-bad-extra-field": row(           "F F  S  S  S  S  S  S  P  S  S  S  S  S"),
    "sample-bad-failure-exits-zero": row(    "F F  S  S  S  S  S  S  S  S  S  S  S  S"),
    "sample-bad-field-shape": row(           "F F  S  S  S  S  S  S  P  S  S  S  S  S"),
    "sample-bad-frontmatter-broken": row(    "F F  S  S  S  S  S  S  P  S  S  S  S  S"),
    "sample-bad-help-no-disclosure": row(    "F F  S  S  S  S  S  S  P  S  S  S  S  S"),
    "sample-bad-manifest-missing": row(      "P F  S  S  S  S  S  S  S  S  S  S  S  S"),
    "sample-bad-manifest-wrong-name": row(   "P F  S  S  S  S  S  S  S  S  S  S  S  S"),
    "sample-bad-missing-version": row(       "F F  P  P  F  P  S  P  F  S  S  S  S  S"),
    "sample-bad-name-uppercase": row(        "F F  S  S  S  S  S  S  P  S  S  S  S  S"),
    "sample-bad-requires-install-command": row("F F P  P  P  P  S  F  P  S  S  S  S  S"),
    "sample-bad-version-mismatch": row(      "F F  P  P  P  P  S  P  F  S  S  S  S  S"),
    "sample-good": row(                      "P P  P  P  P  P  P  P  P  F  S  F  F  P"),
}

# Where we deliberately differ. A manifest in `src/<package>/` with no descriptor naming it is
# read (the kit reads only the root's SMART_TOOL.md), so its static rules are decided, not skipped.
SRC_LAYOUT = "we read src/<package>/SMART_TOOL.md when no descriptor names a manifest; the kit does not"
DIFFERENT: dict[str, dict[str, tuple[str, str]]] = {
    "sample-bad-extra-field": {
        "manifest-frontmatter-parses": (P, SRC_LAYOUT), "manifest-fields-closed": (F, SRC_LAYOUT),
        "manifest-required-fields": (P, SRC_LAYOUT), "manifest-name-format": (P, SRC_LAYOUT),
        "manifest-requires-shape": (P, SRC_LAYOUT),
    },
    "sample-bad-field-shape": {
        "manifest-frontmatter-parses": (P, SRC_LAYOUT), "manifest-fields-closed": (P, SRC_LAYOUT),
        "manifest-required-fields": (P, SRC_LAYOUT), "manifest-name-format": (P, SRC_LAYOUT),
        "manifest-requires-shape": (P, SRC_LAYOUT),
    },
    "sample-bad-frontmatter-broken": {"manifest-frontmatter-parses": (F, SRC_LAYOUT)},
    "sample-bad-help-no-disclosure": {
        "manifest-frontmatter-parses": (P, SRC_LAYOUT), "manifest-fields-closed": (P, SRC_LAYOUT),
        "manifest-required-fields": (P, SRC_LAYOUT), "manifest-name-format": (P, SRC_LAYOUT),
        "manifest-requires-shape": (P, SRC_LAYOUT),
    },
    "sample-bad-name-uppercase": {
        "manifest-frontmatter-parses": (P, SRC_LAYOUT), "manifest-fields-closed": (P, SRC_LAYOUT),
        "manifest-required-fields": (P, SRC_LAYOUT), "manifest-name-format": (F, SRC_LAYOUT),
        "manifest-requires-shape": (P, SRC_LAYOUT),
    },
    # `samplegood` is not on PATH (as when the kit was run): no call ran the program, so whether it
    # hangs on a closed stdin was not observed; the kit passes the rule anyway.
    "sample-good": {"no-hang-stdin-closed": (S, "not hanging is not observed when the program never ran")},
}
# The kit's target is a folder; ours are manifests. A folder with neither a SMART_TOOL.md nor a
# smart-tool.json gives no tool to judge.
NO_TOOL = {"sample-bad-failure-exits-zero": "the folder holds only a pyproject.toml: no manifest, no descriptor"}

# Our rules beyond the 14: `manifest-field-shapes` (from the kit's later version), `help-short-flag`
# and `capability-help` (both from the invocation document).
OURS = {
    "sample-bad-field-shape": {"manifest-field-shapes": F},  # `platforms: linux` is not a list
    "sample-good": {"manifest-field-shapes": P, "help-short-flag": F, "capability-help": S},
}
EXTRA_RULES = ("manifest-field-shapes", "help-short-flag", "capability-help")


def expected(fixture: str) -> dict[str, str]:
    verdicts = dict(KIT[fixture])
    verdicts.update({rule: status for rule, (status, _why) in DIFFERENT.get(fixture, {}).items()})
    return verdicts


@pytest.fixture(scope="module")
def judged(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[Tool]]:
    """Every fixture harvested on its own and checked for real, with a PATH that holds only
    `python3` (this interpreter): no `uv`, no `samplegood`, as when the kit was run."""
    bin_dir = tmp_path_factory.mktemp("bin")
    (bin_dir / "python3").symlink_to(sys.executable)
    saved = os.environ["PATH"]
    os.environ["PATH"] = str(bin_dir)
    try:
        out = {}
        for fixture in sorted(KIT):
            build = pipeline.prepare(FIXTURES / fixture, Options(cache=False, timeout=20))
            pipeline.check(build)
            out[fixture] = build.catalog.tools
        return out
    finally:
        os.environ["PATH"] = saved


def test_every_fixture_is_in_the_table() -> None:
    assert {p.name for p in FIXTURES.iterdir() if p.is_dir()} == set(KIT)


def test_differences_are_differences() -> None:
    # An entry in DIFFERENT that equals the kit would hide nothing and explain nothing.
    for fixture, rules in DIFFERENT.items():
        for rule, (status, _why) in rules.items():
            assert KIT[fixture][rule] != status, (fixture, rule)


@pytest.mark.parametrize("fixture", sorted(KIT))
def test_verdicts_equal_the_kits_rule_by_rule(fixture: str, judged: dict[str, list[Tool]]) -> None:
    tools = judged[fixture]
    if fixture in NO_TOOL:
        assert tools == []
        return
    assert len(tools) == 1, [t.source for t in tools]
    tool = tools[0]
    ours = {c.id: c.status.value for c in tool.checks}
    assert set(ours) == set(RULES) | set(EXTRA_RULES)
    assert {rule: ours[rule] for rule in RULES} == expected(fixture)
    for rule, status in OURS.get(fixture, {}).items():
        assert ours[rule] == status, rule
    for check in tool.checks:
        if check.status.value == S:
            assert check.detail, f"{check.id} is skipped without a reason"


def test_cli_not_on_path_is_a_missing_requirement_naming_it(judged: dict[str, list[Tool]]) -> None:
    # `uv` is not on PATH: nothing ran, and nothing says it failed.
    (tool,) = judged["sample-bad-manifest-missing"]
    runtime = [c for c in tool.checks if c.id in RULES[9:]]
    assert {c.status.value for c in runtime} == {S}
    assert all("not on PATH: uv" in c.detail for c in runtime)
    assert tool.status == "invalid"  # its smart-tool.json names a manifest that does not exist
    (good,) = judged["sample-good"]
    assert good.status == "failed"


def test_failed_checks_name_the_exit_code_and_keep_stderr(judged: dict[str, list[Tool]]) -> None:
    (tool,) = judged["sample-good"]  # the corpus copy lacks src/samplegood/cli.py
    check = next(c for c in tool.checks if c.id == "loads-without-provider")
    assert check.detail.startswith("`--help` with no provider configured: exit code 2: ")
    assert "can't open file" in check.detail and "can't open file" in check.stderr
    skipped = next(c for c in tool.checks if c.id == "help-discloses-model-backed")
    assert skipped.detail == "`--help` did not succeed (see loads-without-provider)"


def test_the_kits_own_reader_is_predicted_on_every_fixture(judged: dict[str, list[Tool]]) -> None:
    # Where the kit parsed a fixture's front matter (`manifest-frontmatter-parses` passed), nothing
    # says its reader will fail: the kit-yaml-subset warning is never a false alarm on the kit's own set.
    for fixture, tools in judged.items():
        for tool in tools:
            kit = [d for d in tool.diagnostics if d.code == "kit-yaml-subset"]
            if KIT[fixture]["manifest-frontmatter-parses"] == P:
                assert not [d for d in kit if "fails `manifest-frontmatter-parses`" in d.message], fixture
