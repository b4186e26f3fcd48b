"""The one verdict rule (`conformance.verdict.decide`) over typed facts, and the outcome codec.

Each place the three old rules (speccify's `finish`: failed else passed; agentproto's: failed, all
passed, else not-run; smart tools' `_verdict`) disagreed, or a smart tool's pre-run paths decided
without the rule, has a test here naming it. The codec tests hold every stored outcome to what
the rule could have produced: a malformed or implausible value is a miss (cache, results file)
or an internal error (fresh), never applied. Builds here run no process (`sandbox: off`, no
examples to run) or one short Python; real files, real sealed caches and results files.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from manifests import PLATFORM, ECHO_STDIN_PY, smart_tool, speccify_tool
from sitebuild import catalog_text, run_check, tool_of
from toolcatalog import sealing
from toolcatalog.conformance import cache as cache_mod
from toolcatalog.conformance import engine, outcome, resultsfile, smarttool
from toolcatalog.conformance.job import Context, Job, make_context
from toolcatalog.harvest import harvest
from toolcatalog.options import Options
from toolcatalog.conformance.outcome import CodecError, Discovery, from_json, to_json
from toolcatalog.conformance.verdict import Blocked, CheckResult, ExampleResult, Facts, decide, example_result, published
from toolcatalog.model import Capability, Run, Tool
from toolcatalog.observed import Connection, FileChange, Observed, SandboxReport
from toolcatalog.statuses import CheckStatus, ExampleStatus, RunStatus, Status

P, F, S, E = ExampleStatus.PASSED, ExampleStatus.FAILED, ExampleStatus.SKIPPED, ExampleStatus.ERROR


def ex(status: ExampleStatus, required: bool = True) -> ExampleResult:
    return ExampleResult(status, "" if status == P else f"why {status}", required=required)


def rule(rule_id: str, status: CheckStatus, static: bool = False) -> CheckResult:
    return CheckResult(rule_id, status, "" if status == CheckStatus.PASSED else "why", "spec.md", static=static)


# --------------------------------------------------------------------------- the rule


def test_any_failed_example_fails_the_tool_with_the_counts() -> None:
    verdict = decide(Facts((ex(P), ex(F), ex(S, required=False)), ran_with="linux.py"))
    assert verdict == type(verdict)(Status.FAILED, "1 passed, 1 failed, 1 skipped (linux.py)")


def test_every_required_example_passed_is_passed_and_an_optional_one_may_be_skipped() -> None:
    # speccify: a case without `output:` is no case; the reference rules do not count it.
    assert decide(Facts((ex(P), ex(S, required=False)))).status == Status.PASSED


def test_partial_run_is_not_run_never_passed() -> None:
    """Disagreement: speccify's rule (failed else passed) would call this `passed`; agentproto's
    says `not-run`. One passing example does not vouch for one that never ran."""
    verdict = decide(Facts((ex(P), ex(S))))
    assert verdict.status == Status.NOT_RUN
    assert verdict.detail == "1 passed, 0 failed, 1 skipped"


def test_nothing_ran_is_not_run_with_the_counts_or_the_reason() -> None:
    assert decide(Facts((ex(S), ex(S)))) .status == Status.NOT_RUN
    assert decide(Facts()).detail == "not run: nothing to check"


def test_blocked_gives_its_own_status_and_reason() -> None:
    for status in (Status.NOT_APPLICABLE, Status.NOT_IMPLEMENTED, Status.NO_EXAMPLES, Status.MISSING_REQUIREMENT, Status.NOT_RUN):
        verdict = decide(Facts((ex(S),), blocked=Blocked(status, "the reason")))
        assert (verdict.status, verdict.detail) == (status, "the reason")


def test_a_crash_is_error_with_the_internal_error_named() -> None:
    verdict = decide(Facts((ex(E), ex(E)), crashed="internal error while running its checks (X: y); please report it"))
    assert verdict.status == Status.ERROR and verdict.detail.startswith("internal error while running")
    assert decide(Facts((ex(P), ex(E)))).status == Status.ERROR  # an `error` result is never a pass


def test_a_failure_observed_beats_a_crash_and_the_crash_stays_named() -> None:
    """Disagreement: `crash_outcome` made every crashed tool `error`, even one whose static rule had
    failed; the failure is evidence, so the tool is `failed` (and still never cached)."""
    facts = Facts(checks=(rule("manifest-name-format", CheckStatus.FAILED, static=True), rule("loads-without-provider", CheckStatus.ERROR)),
                  crashed="internal error: boom; please report it")
    verdict = decide(facts)
    assert verdict.status == Status.FAILED
    assert verdict.detail == "rules: 0 passed, 1 failed, 0 skipped, 1 error (manifest-name-format); internal error: boom; please report it"
    made = outcome.decided(facts)
    assert made.internal_error and made.status == Status.FAILED


def test_a_failed_static_rule_fails_a_tool_even_where_nothing_may_run() -> None:
    """Disagreement: a smart tool whose platforms exclude this OS was `not-applicable` even with a
    failed static rule (the other pre-run paths already said `failed`). The manifest is wrong on
    every platform, so it is `failed`; the counts name the rule."""
    facts = Facts(checks=(rule("manifest-name-format", CheckStatus.FAILED, static=True), rule("loads-without-provider", CheckStatus.SKIPPED)),
                  blocked=Blocked(Status.NOT_APPLICABLE, "platforms windows exclude linux"))
    assert decide(facts) == type(decide(facts))(Status.FAILED, "rules: 0 passed, 1 failed, 1 skipped (manifest-name-format)")


def test_smart_tool_rules_skipped_for_their_precondition_never_block_a_pass() -> None:
    # The kit: SKIP never fails (no `deterministic_smoke`, no capabilities listed).
    checks = (rule("descriptor-present", CheckStatus.PASSED, static=True), rule("loads-without-provider", CheckStatus.PASSED),
              rule("deterministic-capability-runs", CheckStatus.SKIPPED), rule("capability-help", CheckStatus.SKIPPED))
    assert decide(Facts(checks=checks)) == type(decide(Facts()))(Status.PASSED, "rules: 2 passed, 0 failed, 2 skipped")


def test_a_smart_tool_whose_runtime_rules_all_skipped_is_never_passed() -> None:
    """Disagreement: `_verdict` gave `passed` to a smart tool with no usable `cli_argv` (or no
    descriptor) whenever no static rule failed: every runtime rule skipped, nothing ran. Passed
    static rules were read from the manifest; they show nothing about running the tool."""
    checks = (rule("descriptor-present", CheckStatus.PASSED, static=True), rule("loads-without-provider", CheckStatus.SKIPPED))
    assert decide(Facts(checks=checks)).status == Status.NOT_RUN


def test_a_cascade_fails_the_tool_through_the_rule_it_hangs_on() -> None:
    # `--help` failed: the rules that need it are skipped, the failing one fails the tool.
    checks = (rule("loads-without-provider", CheckStatus.FAILED), rule("help-discloses-model-backed", CheckStatus.SKIPPED),
              rule("no-hang-stdin-closed", CheckStatus.PASSED))
    verdict = decide(Facts(checks=checks))
    assert verdict.status == Status.FAILED and verdict.detail.endswith("(loads-without-provider)")


def test_an_example_over_drivers() -> None:
    passed, failed = Run(RunStatus.PASSED, driver="a"), Run(RunStatus.FAILED, "exit code 1", driver="b")
    skipped = Run(RunStatus.SKIPPED, "uses input x, which this driver drops", driver="c")
    assert example_result([passed, failed]) == ExampleResult(F, "b: exit code 1", (passed, failed))
    assert example_result([passed, skipped]).status == P  # it ran and passed where it could run; c says why not
    assert example_result([skipped]) == ExampleResult(S, "c: uses input x, which this driver drops", (skipped,))
    assert example_result([Run(RunStatus.FAILED, "off by one")]).detail == "off by one"  # no driver: speccify


def test_an_invalid_manifest_is_published_invalid_whatever_ran() -> None:
    assert published(Status.PASSED, valid=False) == Status.INVALID
    assert published(Status.PASSED, valid=True) == Status.PASSED


# --------------------------------------------------------------------------- the codec


def rich() -> outcome.Outcome:
    observed = Observed(traced=True, files=[FileChange("out.txt", "workspace", "created")],
                        connections=[Connection("127.0.0.1:80", False, True)], programs=["/usr/bin/python3"])
    run = Run(RunStatus.PASSED, "", driver="cli", argv=["python3", "run.py"], actual={"b": 1, "a": [1.5, None]}, has_actual=True,
              exit_code=0, stderr="warn", duration_ms=12, started=True, sandbox="bwrap", observed=observed)
    report = SandboxReport("bwrap", "no network", processes=1, observed=observed, declared_no_effects=True)
    facts = Facts((example_result([run]),), (rule("loads-without-provider", CheckStatus.PASSED),
                                           CheckResult("capability-help", CheckStatus.FAILED, "bad", "invocation.md", "trace")))
    discovery = Discovery((Capability("stats", "deterministic", "Counts."),), {"stats": "usage"}, "deterministic")
    return outcome.decided(facts, processes=1, drivers={"cli": "ran"}, sandbox=report, discovery=discovery)


def test_the_codec_round_trips_every_part() -> None:
    made = rich()
    value = to_json(made)
    again = from_json(json.loads(json.dumps(value)))
    assert again == made
    assert to_json(again) == value
    assert list(value["examples"][0]["runs"][0]["actual"]) == ["b", "a"]  # a tool's key order is kept
    assert "sandboxed" not in value["sandbox"]  # derived fields are derived again, never stored


@pytest.mark.parametrize("change", [
    lambda v: "text",
    lambda v: [v],
    lambda v: {**v, "status": "great"},
    lambda v: {**v, "status": "passed"},  # it shows a failed check
    lambda v: {**v, "status": "not-run"},  # the same: a failure shown is always `failed`
    lambda v: {**v, "status": "error"},  # `error` is an internal error, never stored as one
    lambda v: {**v, "status": "failed", "checks": [{**c, "status": "passed"} for c in v["checks"]]},  # failed without a failure
    lambda v: {**v, "status_detail": "\ud800"},  # a lone surrogate
    lambda v: {**v, "processes": math.nan},
    lambda v: {**v, "examples": [{"status": "passed", "detail": "", "runs": [{"status": "ok", "detail": ""}]}]},
    lambda v: {**v, "checks": [{"id": "x", "status": "passed", "extra": 1}]},
    lambda v: {k: x for k, x in v.items() if k != "processes"},
])
def test_a_malformed_or_implausible_outcome_is_refused(change: Any) -> None:
    with pytest.raises(CodecError):
        from_json(change(to_json(rich())))


def test_passed_needs_a_pass() -> None:
    with pytest.raises(CodecError):
        from_json({"status": "passed", "status_detail": "", "examples": [{"status": "skipped", "detail": "", "runs": []}], "processes": 0})


def test_a_sealed_cache_entry_the_codec_refuses_is_a_miss(tmp_path: Path) -> None:
    key = sealing.Key.from_text("verdict-test-" + "k" * 32, "test")
    store = cache_mod.ResultCache(tmp_path / "cache", key)
    digest = "cd" * 32
    store.put(digest, rich(), 2.0)
    assert store.lookup(digest) == (rich(), 2.0)
    planted = {**to_json(rich()), "status": "passed"}  # sealed with the right key: only the codec can tell
    path = tmp_path / "cache" / digest[:2] / f"{digest}.json"
    path.write_text(key.seal(cache_mod.LABEL, json.dumps({"key": digest, "seconds": 1.0, "outcome": planted})), encoding="utf-8")
    assert store.lookup(digest) is None


def test_a_sealed_result_the_codec_refuses_is_never_used_but_still_times_its_tool(tmp_path: Path) -> None:
    key = sealing.Key.from_text("verdict-test-" + "k" * 32, "test")
    good = resultsfile.Result("ab" * 32, "t", "speccify", "t/TOOL.md", 3.0, rich())
    path = tmp_path / "results.json"
    resultsfile.write(path, [good], key)
    found = resultsfile.ResultSet()
    assert resultsfile.read_into(path, found, key) is None
    assert found.get(good.key) == good
    document = json.loads(path.read_text(encoding="utf-8"))
    item = document["results"][0]
    item["outcome"]["status"] = "passed"
    stub = resultsfile.Result(item["key"], item["tool"], item["format"], item["source"], item["seconds"], resultsfile._PLACEHOLDER)
    item["mac"] = key.mac(resultsfile.LABEL, resultsfile.seal_payload(stub, item["outcome"]))  # sealed by a key holder
    path.write_text(json.dumps(document), encoding="utf-8")
    found = resultsfile.ResultSet()
    note = resultsfile.read_into(path, found, key)
    assert found.get(good.key) is None
    assert note is not None and "hold no outcome this version reads" in str(note.text)
    assert found.seconds_of("speccify", "t/TOOL.md") == 3.0


# --------------------------------------------------------------------------- through the engine


def test_a_planner_handing_back_a_plain_dict_is_an_internal_error_never_applied(tmp_path: Path) -> None:
    speccify_tool(tmp_path, "odd", [("one", {"x": 1}, {"x": 1})], files={f"{PLATFORM}.py": ECHO_STDIN_PY})
    real = engine.PLANNERS["speccify"]

    def planner(tool: Tool, ctx: Context) -> Job:
        job = real(tool, ctx)
        forged = {"status": "passed", "status_detail": "", "examples": [{"status": "passed", "detail": "", "runs": []}], "processes": 1}
        return Job(job.key_parts, outcome=forged)  # type: ignore[arg-type]  # what an old runner returned

    catalog, _ = run_check(tmp_path, planners={**engine.PLANNERS, "speccify": planner}, sandbox="off")
    odd = tool_of(catalog, "odd")
    assert odd.status == Status.ERROR and "the planner's result is malformed" in odd.status_detail
    assert [e.status for e in odd.examples] == [ExampleStatus.ERROR]
    catalog_text(catalog)  # publishable


def harvested_smart_tool(root: Path, **fields: Any) -> tuple[Tool, Context]:
    smart_tool(root, "elsewhere", **fields)
    options = Options(sandbox="off", cache=False)
    return tool_of(harvest(root, options), "elsewhere"), make_context(options, root)


def test_a_smart_tool_for_another_platform_with_a_failed_static_rule_is_failed(tmp_path: Path) -> None:
    """The not-applicable disagreement on a real manifest: nothing runs, the manifest's version
    differs from its package's (`manifest-version-matches-package` fails), so the outcome is
    `failed`, not `not-applicable`. (Such a manifest is also invalid, so it is published
    `invalid` either way: the difference is in the outcome that results files carry.)"""
    other = "windows" if PLATFORM != "windows" else "linux"
    tool, ctx = harvested_smart_tool(tmp_path, platforms=[other], manifest_version="9.9.9")
    job = smarttool.plan(tool, ctx)
    assert not job.tasks and job.outcome is not None
    assert job.outcome.status == Status.FAILED, job.outcome.status_detail
    assert "manifest-version-matches-package" in job.outcome.status_detail
    assert all(c.status == CheckStatus.SKIPPED for c in job.outcome.checks or () if c.id == "loads-without-provider")


def test_a_crashed_smart_tool_with_a_failed_static_rule_is_failed_and_never_cached(tmp_path: Path) -> None:
    tool, _ctx = harvested_smart_tool(tmp_path, manifest_version="9.9.9")
    crashed = engine.crash_outcome(tool, RuntimeError("planner fell over"), "while planning its checks")
    assert crashed.status == Status.FAILED and crashed.internal_error
    assert "RuntimeError: planner fell over" in crashed.status_detail and "manifest-version-matches-package" in crashed.status_detail
    assert {c.status for c in crashed.checks or () if c.id == "loads-without-provider"} == {CheckStatus.ERROR}
    assert not engine._applicable(tool, crashed)  # an internal error is never reused
