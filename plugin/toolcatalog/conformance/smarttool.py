"""Smart tools: the conformance kit's runtime rules, each a named check.

The static rules were decided when the manifest was parsed (`tool.checks`,
formats/smarttool.py). The runtime rules run the CLI from `smart-tool.json`
with cwd = the distribution root, stdin closed and every provider variable
removed from the environment. `--help` is the only source of the capabilities
and their deterministic/model-backed labels. Model-backed capabilities are
never called: the runtime rules only ask for help, run the `deterministic_smoke`
argv and an unknown capability.

A rule whose precondition does not hold is `skipped` with the reason, never
`passed`: every runtime rule when there is nothing to run (no descriptor, no
usable `cli_argv`, the program is not found: then the tool is
`missing-requirement`, naming it, as speccify does), the help rules when
`--help` fails, a rule whose call timed out (that is `no-hang-stdin-closed`'s
failure). A failed check names the exit code and the last line of stderr, and
keeps the end of stderr for the page. A tool whose `platforms` exclude this OS
is `not-applicable`: nothing runs. At most `MAX_CAPABILITY_HELP` capabilities get
a `<capability> --help` call; the rest are named as not checked.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path
from typing import Any

from ..files import hash_tree
from ..formatregistry import SMART_TOOL

NO_DESCRIPTOR = SMART_TOOL.texts["no-descriptor"]
RUNTIME_RULES = SMART_TOOL.runtime_rules
STATIC_RULE_IDS = SMART_TOOL.static_rule_ids
from ..model import Run, Tool
from ..statuses import CheckStatus, RunStatus, Status
from ..process import ProcessResult
from . import effects
from .job import Context, Job
from .judge import excerpt, last_line, unfinished
from .outcome import Outcome

CAPABILITY_LINE = re.compile(r"^- `(?P<name>[^`]+)` \[(?P<kind>deterministic|model-backed)\] -- (?P<summary>.+)$", re.MULTILINE)
DISCLOSES = ("model-backed", "model backed", "modelbacked")  # the kit's words, in lower-cased --help output
UNKNOWN_CAPABILITY = "__toolcatalog_no_such_capability__"
TRACEBACK = "Traceback (most recent call last)"
MAX_CAPABILITY_HELP = 50  # `<capability> --help` calls per tool; each one starts a process
_SPECS = dict(RUNTIME_RULES)
PASSED, FAILED, SKIPPED = CheckStatus.PASSED.value, CheckStatus.FAILED.value, CheckStatus.SKIPPED.value


def _check(rule: str, status: str, detail: str = "", stderr: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {"id": rule, "status": status, "detail": detail, "spec": _SPECS[rule]}
    if status == FAILED and stderr.strip():
        out["stderr"] = stderr
    return out


def _skipped(reason: str) -> list[dict[str, Any]]:
    return [_check(rule, SKIPPED, reason) for rule, _spec in RUNTIME_RULES]


def _verdict(checks: list[dict[str, Any]], otherwise: Status = Status.PASSED) -> tuple[str, str]:
    """The tool's status and detail from its checks: `failed` when any failed."""
    statuses = [c["status"] for c in checks]
    failed = [c["id"] for c in checks if c["status"] == FAILED]
    counts = f"rules: {statuses.count(PASSED)} passed, {len(failed)} failed, {statuses.count(SKIPPED)} skipped"
    if failed:
        return Status.FAILED.value, f"{counts} ({', '.join(failed)})"
    return otherwise.value, counts


def _statics(tool: Tool) -> list[dict[str, Any]]:
    return [{**c.as_dict(), **({"stderr": c.stderr} if c.stderr else {})} for c in tool.checks if c.id in STATIC_RULE_IDS]


def refused(tool: Tool, reason: str) -> Outcome:
    """Nothing may run (`sandbox: required` without a sandbox): the static rules as decided, the
    runtime rules skipped with `reason`."""
    checks = _statics(tool) + _skipped(reason)
    status, _detail = _verdict(checks, Status.NOT_RUN)
    return {"status": status, "status_detail": reason, "examples": [], "checks": checks, "processes": 0}


def _argv(tool: Tool) -> list[str] | None:
    descriptor = tool.descriptor or {}
    argv = descriptor.get("cli_argv")
    if isinstance(argv, list) and argv and all(isinstance(a, str) and a for a in argv):
        return list(argv)
    return None


def locate(program: str, root: Path, path: str | None) -> tuple[str | None, str]:
    """Where `cli_argv[0]` is (absolute), or None and why it cannot run: a path is taken relative
    to the distribution root and must be an executable file; a bare name must be on PATH."""
    if "/" in program or os.sep in program:
        candidate = Path(program) if os.path.isabs(program) else root / program
        if not candidate.is_file():
            return None, f"`{program}` does not exist in the distribution root"
        if not os.access(candidate, os.X_OK):
            return None, f"`{program}` is not executable"
        return str(candidate), ""
    found = shutil.which(program, path=path)
    return (found, "") if found else (None, f"not on PATH: {program}")


def plan(tool: Tool, ctx: Context) -> Job:
    statics = _statics(tool)
    argv = _argv(tool)
    root = Path(tool.descriptor_source and (ctx.workspace / tool.descriptor_source).parent or tool.dir)
    parts: list[Any] = [hash_tree(root), tool.descriptor]

    def decided(checks: list[dict[str, Any]], status: str, detail: str) -> Job:
        return Job(parts, outcome={"status": status, "status_detail": detail, "examples": [], "checks": checks, "processes": 0})

    if tool.platforms and ctx.platform not in tool.platforms:
        reason = f"platforms {', '.join(tool.platforms)} exclude {ctx.platform}"
        return decided(statics + _skipped(f"not run: {reason}"), Status.NOT_APPLICABLE.value, reason)
    if tool.descriptor is None and tool.upstream is not None:
        reason = f"not run: a catalog copy; the tool runs from its distribution, {tool.upstream['repository']}"
        checks = statics + _skipped(reason)
        status, detail = _verdict(checks, Status.NOT_RUN)
        return decided(checks, status, reason if status == Status.NOT_RUN.value else detail)
    if tool.descriptor is None:
        checks = statics + _skipped(NO_DESCRIPTOR)
        return decided(checks, *_verdict(checks))
    if argv is None:
        checks = statics + _skipped("smart-tool.json has no usable `cli_argv`")
        return decided(checks, *_verdict(checks))
    located, why = locate(argv[0], root, ctx.tool_env.get("PATH"))
    parts.append(located or why)  # which program `cli_argv` starts is part of what results depend on
    if located is None:
        checks = statics + _skipped(f"{why}; the tool must be installed or runnable before its checks can run")
        status, detail = _verdict(checks, Status.MISSING_REQUIREMENT)
        return decided(checks, status, why if status == Status.MISSING_REQUIREMENT.value else detail)
    smoke = (tool.descriptor or {}).get("deterministic_smoke")
    timeout = ctx.timeout_for()

    def task() -> Outcome:
        return run_rules(argv, smoke if isinstance(smoke, list) and smoke else None, root, ctx, timeout, statics, tool)

    return Job(parts, tasks=[task], finish=lambda results: results[0])


def _no_hang_check(hung: list[str], results: list[ProcessResult]) -> dict[str, Any]:
    """`no-hang-stdin-closed`: failed when a call hung; passed only when some call was seen to run
    the program to an end of its own (exit 0) with stdin closed. When no call did (it never started,
    or every call failed at once: a missing file, a broken interpreter), not hanging was not
    observed, so the rule is skipped, never passed."""
    if hung:
        return _check("no-hang-stdin-closed", FAILED, "hung with stdin closed: " + ", ".join(hung))
    if not any(r.error is None and not r.timed_out and r.exit_code == 0 for r in results):
        return _check("no-hang-stdin-closed", SKIPPED, "no call ran the program to a successful end, so whether it waits "
                      "on a closed stdin was not observed (see the rules above)")
    return _check("no-hang-stdin-closed", PASSED)


def run_rules(argv: list[str], smoke: list[Any] | None, root: Path, ctx: Context, timeout: float, statics: list[dict[str, Any]],
              tool: Tool) -> Outcome:
    processes = 0
    hung: list[str] = []
    rules = effects.declared(tool, ctx)
    runs: list[Run] = []  # one per process, only for the sandbox report
    ended: list[ProcessResult] = []  # every call's result, for no-hang-stdin-closed (`_no_hang_check`)

    def call(args: list[str]) -> ProcessResult:
        nonlocal processes
        spawned = ctx.run([*argv, *args], cwd=root, stdin=None, timeout_s=timeout, env=ctx.tool_env, network=rules.network)
        result = spawned.result
        if result.error is None:
            processes += 1
        if result.timed_out:
            hung.append(" ".join(args))
        runs.append(Run(RunStatus.PASSED, started=result.error is None, sandbox=spawned.mechanism, observed=spawned.observed))
        ended.append(result)
        return result

    def tail(data: bytes) -> str:
        return excerpt(data, scrub=ctx.scrub)

    def why_not(result: ProcessResult) -> str | None:
        """Why a call did not succeed (None when it exited 0): the exit code and the last stderr line."""
        problem = unfinished(result, timeout)
        if problem:
            return problem
        if result.exit_code != 0:
            line = last_line(result.stderr, ctx.scrub) or last_line(result.stdout, ctx.scrub)
            return f"exit code {result.exit_code}" + (f": {line}" if line else "")
        return None

    def judged(rule: str, what: str, result: ProcessResult) -> dict[str, Any]:
        if result.timed_out:
            return _check(rule, SKIPPED, f"{what} timed out after {timeout:g}s (see no-hang-stdin-closed)")
        problem = why_not(result)
        return _check(rule, FAILED, f"{what}: {problem}", tail(result.stderr)) if problem else _check(rule, PASSED)

    checks = list(statics)
    help_result = call(["--help"])
    help_ok = why_not(help_result) is None
    checks.append(judged("loads-without-provider", "`--help` with no provider configured", help_result))
    help_text = help_result.stdout.decode("utf-8", "replace")
    if not help_ok:
        checks.append(_check("help-discloses-model-backed", SKIPPED, "`--help` did not succeed (see loads-without-provider)"))
    elif any(word in (help_text + help_result.stderr.decode("utf-8", "replace")).lower() for word in DISCLOSES):
        checks.append(_check("help-discloses-model-backed", PASSED))
    else:
        checks.append(_check("help-discloses-model-backed", FAILED, "`--help` never says which capabilities are model-backed"))
    checks.append(judged("help-short-flag", "`-h`", call(["-h"])))

    capabilities = (
        [{"name": m.group("name"), "kind": m.group("kind"), "summary": m.group("summary").strip()} for m in CAPABILITY_LINE.finditer(help_text)]
        if help_ok else []
    )
    capability_help: dict[str, str] = {}
    if not help_ok:
        checks.append(_check("capability-help", SKIPPED, "`--help` did not succeed, so the capabilities are unknown"))
    elif not capabilities:
        checks.append(_check("capability-help", SKIPPED, "`--help` lists no capabilities in the `- `name` [kind] -- summary` form"))
    else:
        bad: list[str] = []
        stderr = ""
        for capability in capabilities[:MAX_CAPABILITY_HELP]:
            result = call([capability["name"], "--help"])
            capability_help[capability["name"]] = excerpt(result.stdout, 20000, ctx.scrub)
            problem = why_not(result)
            if problem:
                bad.append(f"`{capability['name']} --help`: {problem}")
                stderr = stderr or tail(result.stderr)
        notes = list(bad)
        unchecked = capabilities[MAX_CAPABILITY_HELP:]
        if unchecked:
            names = ", ".join(f"`{c['name']}`" for c in unchecked[:10]) + (", ..." if len(unchecked) > 10 else "")
            notes.append(f"{len(unchecked)} more capabilities not checked (only the first {MAX_CAPABILITY_HELP} get a `--help` call): {names}")
        checks.append(_check("capability-help", FAILED if bad else PASSED, "; ".join(notes), stderr))

    if smoke is None:
        checks.append(_check("deterministic-capability-runs", SKIPPED, "smart-tool.json has no `deterministic_smoke`"))
    else:
        words = [str(a) for a in smoke]
        result = call(words)
        problem = why_not(result)
        what = f"`{' '.join(words)}` with no provider configured"
        checks.append(_check("deterministic-capability-runs", FAILED, f"{what}: {problem}", tail(result.stderr)) if problem else _check("deterministic-capability-runs", PASSED))

    unknown = call([UNKNOWN_CAPABILITY])
    if unknown.timed_out:
        checks.append(_check("failure-names-remedy", SKIPPED, f"the call with an unknown capability timed out after {timeout:g}s (see no-hang-stdin-closed)"))
    else:
        problems = []
        problem = unfinished(unknown, timeout)
        if problem:
            problems.append(problem)
        else:
            if unknown.exit_code == 0:
                problems.append("an unknown capability exits 0")
            if TRACEBACK in unknown.stdout.decode("utf-8", "replace") or TRACEBACK in unknown.stderr.decode("utf-8", "replace"):
                problems.append("it prints a Python traceback")
            if not _json_on_stdout(unknown.stdout):
                problems.append("no JSON error on stdout")
        checks.append(_check("failure-names-remedy", FAILED, "; ".join(problems), tail(unknown.stderr)) if problems else _check("failure-names-remedy", PASSED))
    checks.append(_no_hang_check(hung, ended))

    kinds = {c["kind"] for c in capabilities}
    kind = None if not kinds else kinds.pop() if len(kinds) == 1 else "mixed"
    status, detail = _verdict(checks)
    outcome = {
        "status": status,
        "status_detail": detail,
        "examples": [],
        "checks": checks,
        "capabilities": capabilities,
        "capability_help": capability_help,
        "kind": kind,
        "processes": processes,
    }
    report = effects.report(tool, runs, ctx, rules.network)
    if report is not None:
        outcome["sandbox"] = report
    return outcome


def _json_on_stdout(stdout: bytes) -> bool:
    text = stdout.decode("utf-8", "replace").strip()
    for candidate in (text, text.splitlines()[0] if text else ""):
        try:
            if isinstance(json.loads(candidate), (dict, list)):
                return True
        except (ValueError, RecursionError):
            continue
    return False
