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
from ..model import Capability, Run, Tool
from ..statuses import CheckStatus, RunStatus, Status
from ..process import ProcessResult
from . import effects
from .job import Context, Job
from .judge import excerpt, last_line, unfinished
from .outcome import Discovery, Outcome, check_result, decided
from .verdict import Blocked, CheckResult, Facts

NO_DESCRIPTOR = SMART_TOOL.texts["no-descriptor"]
RUNTIME_RULES = SMART_TOOL.runtime_rules
STATIC_RULE_IDS = SMART_TOOL.static_rule_ids

CAPABILITY_LINE = re.compile(r"^- `(?P<name>[^`]+)` \[(?P<kind>deterministic|model-backed)\] -- (?P<summary>.+)$", re.MULTILINE)
DISCLOSES = ("model-backed", "model backed", "modelbacked")  # the kit's words, in lower-cased --help output
UNKNOWN_CAPABILITY = "__toolcatalog_no_such_capability__"
TRACEBACK = "Traceback (most recent call last)"
MAX_CAPABILITY_HELP = 50  # `<capability> --help` calls per tool; each one starts a process
_SPECS = dict(RUNTIME_RULES)
PASSED, FAILED, SKIPPED = CheckStatus.PASSED, CheckStatus.FAILED, CheckStatus.SKIPPED


def _check(rule: str, status: CheckStatus, detail: str = "", stderr: str = "") -> CheckResult:
    return CheckResult(rule, status, detail, _SPECS[rule], stderr if status == FAILED and stderr.strip() else "")


def _skipped(reason: str) -> tuple[CheckResult, ...]:
    return tuple(_check(rule, SKIPPED, reason) for rule, _spec in RUNTIME_RULES)


def _statics(tool: Tool) -> tuple[CheckResult, ...]:
    return tuple(check_result(c) for c in tool.checks if c.id in STATIC_RULE_IDS)


def _blocked(tool: Tool, status: Status, reason: str, why: str | None = None) -> Outcome:
    """Nothing runs: the static rules as decided, the runtime rules skipped with `why` (default:
    `reason`); the verdict is `status` with `reason` unless a static rule failed."""
    return decided(Facts(checks=_statics(tool) + _skipped(why if why is not None else reason), blocked=Blocked(status, reason)))


def refused(tool: Tool, reason: str) -> Outcome:
    """Nothing may run (`sandbox: required` without a sandbox): the static rules as decided, the
    runtime rules skipped with `reason`."""
    return _blocked(tool, Status.NOT_RUN, reason)


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

    if tool.platforms and ctx.platform not in tool.platforms:
        reason = f"platforms {', '.join(tool.platforms)} exclude {ctx.platform}"
        return Job(parts, outcome=_blocked(tool, Status.NOT_APPLICABLE, reason, f"not run: {reason}"))
    if tool.descriptor is None and tool.upstream is not None:
        reason = f"not run: a catalog copy; the tool runs from its distribution, {tool.upstream['repository']}"
        return Job(parts, outcome=_blocked(tool, Status.NOT_RUN, reason))
    if tool.descriptor is None:
        return Job(parts, outcome=_blocked(tool, Status.NOT_RUN, f"not run: {NO_DESCRIPTOR}", NO_DESCRIPTOR))
    if argv is None:
        why = "smart-tool.json has no usable `cli_argv`"
        return Job(parts, outcome=_blocked(tool, Status.NOT_RUN, f"not run: {why}", why))
    located, why = locate(argv[0], root, ctx.tool_env.get("PATH"))
    parts.append(located or why)  # which program `cli_argv` starts is part of what results depend on
    if located is None:
        return Job(parts, outcome=_blocked(tool, Status.MISSING_REQUIREMENT, why, f"{why}; the tool must be installed or runnable before its checks can run"))
    smoke = (tool.descriptor or {}).get("deterministic_smoke")
    timeout = ctx.timeout_for()

    def task() -> Outcome:
        return run_rules(argv, smoke if isinstance(smoke, list) and smoke else None, root, ctx, timeout, statics, tool)

    def finish(results: list[Any]) -> Outcome:
        outcome: Outcome = results[0]  # the engine holds it to the Outcome type
        return outcome

    return Job(parts, tasks=[task], finish=finish)


def _no_hang_check(hung: list[str], results: list[ProcessResult]) -> CheckResult:
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


def run_rules(argv: list[str], smoke: list[Any] | None, root: Path, ctx: Context, timeout: float,
              statics: tuple[CheckResult, ...], tool: Tool) -> Outcome:
    """Run the runtime rules, in the kit's order, after the static ones; the verdict settles the tool."""
    probe = _Probe(argv, root, ctx, timeout, effects.declared(tool, ctx))
    checks = list(statics)
    help_result = probe.call(["--help"])
    help_ok = probe.why_not(help_result) is None
    checks.append(probe.judged("loads-without-provider", "`--help` with no provider configured", help_result))
    checks.append(_disclosure(help_result, help_ok))
    checks.append(probe.judged("help-short-flag", "`-h`", probe.call(["-h"])))
    capabilities = _capabilities(help_result) if help_ok else []
    capability_help: dict[str, str] = {}
    checks.append(_capability_help(probe, help_ok, capabilities, capability_help))
    checks.append(_smoke(probe, smoke))
    checks.append(_failure_names_remedy(probe))
    hung = probe.hung
    checks.append(_no_hang_check(hung, probe.ended))
    kinds = {c.kind for c in capabilities}
    kind = None if not kinds else kinds.pop() if len(kinds) == 1 else "mixed"
    return decided(Facts(checks=tuple(checks)), processes=probe.processes, discovery=Discovery(tuple(capabilities), capability_help, kind),
                  sandbox=effects.report(tool, probe.runs, ctx, probe.rules.network))


class _Probe:
    """Starts the tool's CLI for the runtime rules and keeps what the verdict and the sandbox report need."""

    def __init__(self, argv: list[str], root: Path, ctx: Context, timeout: float, rules: effects.Declared) -> None:
        self.argv, self.root, self.ctx, self.timeout, self.rules = argv, root, ctx, timeout, rules
        self.processes = 0
        self.hung: list[str] = []
        self.runs: list[Run] = []  # one per process, only for the sandbox report
        self.ended: list[ProcessResult] = []  # every call's result, for no-hang-stdin-closed (`_no_hang_check`)

    def call(self, args: list[str]) -> ProcessResult:
        spawned = self.ctx.run([*self.argv, *args], cwd=self.root, stdin=None, timeout_s=self.timeout, env=self.ctx.tool_env,
                               network=self.rules.network)
        result = spawned.result
        if result.error is None:
            self.processes += 1
        if result.timed_out:
            self.hung.append(" ".join(args))
        self.runs.append(Run(RunStatus.PASSED, started=result.error is None, sandbox=spawned.mechanism, observed=spawned.observed))
        self.ended.append(result)
        return result

    def tail(self, data: bytes) -> str:
        return excerpt(data, scrub=self.ctx.scrub)

    def why_not(self, result: ProcessResult) -> str | None:
        """Why a call did not succeed (None when it exited 0): the exit code and the last stderr line."""
        problem = unfinished(result, self.timeout)
        if problem:
            return problem
        if result.exit_code != 0:
            line = last_line(result.stderr, self.ctx.scrub) or last_line(result.stdout, self.ctx.scrub)
            return f"exit code {result.exit_code}" + (f": {line}" if line else "")
        return None

    def judged(self, rule: str, what: str, result: ProcessResult) -> CheckResult:
        if result.timed_out:
            return _check(rule, SKIPPED, f"{what} timed out after {self.timeout:g}s (see no-hang-stdin-closed)")
        problem = self.why_not(result)
        return _check(rule, FAILED, f"{what}: {problem}", self.tail(result.stderr)) if problem else _check(rule, PASSED)


def _disclosure(help_result: ProcessResult, help_ok: bool) -> CheckResult:
    rule = "help-discloses-model-backed"
    if not help_ok:
        return _check(rule, SKIPPED, "`--help` did not succeed (see loads-without-provider)")
    text = (help_result.stdout.decode("utf-8", "replace") + help_result.stderr.decode("utf-8", "replace")).lower()
    if any(word in text for word in DISCLOSES):
        return _check(rule, PASSED)
    return _check(rule, FAILED, "`--help` never says which capabilities are model-backed")


def _capabilities(help_result: ProcessResult) -> list[Capability]:
    text = help_result.stdout.decode("utf-8", "replace")
    return [Capability(m.group("name"), m.group("kind"), m.group("summary").strip()) for m in CAPABILITY_LINE.finditer(text)]


def _capability_help(probe: _Probe, help_ok: bool, capabilities: list[Capability], capability_help: dict[str, str]) -> CheckResult:
    rule = "capability-help"
    if not help_ok:
        return _check(rule, SKIPPED, "`--help` did not succeed, so the capabilities are unknown")
    if not capabilities:
        return _check(rule, SKIPPED, "`--help` lists no capabilities in the `- `name` [kind] -- summary` form")
    bad: list[str] = []
    stderr = ""
    for capability in capabilities[:MAX_CAPABILITY_HELP]:
        result = probe.call([capability.name, "--help"])
        capability_help[capability.name] = excerpt(result.stdout, 20000, probe.ctx.scrub)
        problem = probe.why_not(result)
        if problem:
            bad.append(f"`{capability.name} --help`: {problem}")
            stderr = stderr or probe.tail(result.stderr)
    notes = list(bad)
    unchecked = capabilities[MAX_CAPABILITY_HELP:]
    if unchecked:
        names = ", ".join(f"`{c.name}`" for c in unchecked[:10]) + (", ..." if len(unchecked) > 10 else "")
        notes.append(f"{len(unchecked)} more capabilities not checked (only the first {MAX_CAPABILITY_HELP} get a `--help` call): {names}")
    return _check(rule, FAILED if bad else PASSED, "; ".join(notes), stderr)


def _smoke(probe: _Probe, smoke: list[Any] | None) -> CheckResult:
    rule = "deterministic-capability-runs"
    if smoke is None:
        return _check(rule, SKIPPED, "smart-tool.json has no `deterministic_smoke`")
    words = [str(a) for a in smoke]
    result = probe.call(words)
    problem = probe.why_not(result)
    what = f"`{' '.join(words)}` with no provider configured"
    return _check(rule, FAILED, f"{what}: {problem}", probe.tail(result.stderr)) if problem else _check(rule, PASSED)


def _failure_names_remedy(probe: _Probe) -> CheckResult:
    rule = "failure-names-remedy"
    unknown = probe.call([UNKNOWN_CAPABILITY])
    if unknown.timed_out:
        return _check(rule, SKIPPED, f"the call with an unknown capability timed out after {probe.timeout:g}s (see no-hang-stdin-closed)")
    problems = []
    problem = unfinished(unknown, probe.timeout)
    if problem:
        problems.append(problem)
    else:
        if unknown.exit_code == 0:
            problems.append("an unknown capability exits 0")
        if TRACEBACK in unknown.stdout.decode("utf-8", "replace") or TRACEBACK in unknown.stderr.decode("utf-8", "replace"):
            problems.append("it prints a Python traceback")
        if not _json_on_stdout(unknown.stdout):
            problems.append("no JSON error on stdout")
    return _check(rule, FAILED, "; ".join(problems), probe.tail(unknown.stderr)) if problems else _check(rule, PASSED)


def _json_on_stdout(stdout: bytes) -> bool:
    text = stdout.decode("utf-8", "replace").strip()
    for candidate in (text, text.splitlines()[0] if text else ""):
        try:
            if isinstance(json.loads(candidate), (dict, list)):
                return True
        except (ValueError, RecursionError):
            continue
    return False
