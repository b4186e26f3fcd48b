"""speccify tools: the reference `speccify tool check` rules, exactly.

Status, first hit wins: `not-applicable` (platforms exclude this OS),
`not-implemented` (no `<platform>.<ext>`), `no-examples` (no complete case),
`missing-requirement` (a `requires` binary, or the interpreter, is not on PATH);
otherwise every complete case runs with cwd = the tool folder and the input JSON
on stdin. The runner gives each case's result (`verdict.decide` settles the tool:
`passed` when every case passed, else `failed`; an incomplete example is no case). An
invalid manifest still runs what it can (reviewers want every problem at once)
but keeps the status `invalid`.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any, Callable

from ..files import hash_tree
from ..matching import parse_json_output
from ..model import Example, Run, Tool
from ..observed import SandboxReport
from ..statuses import ExampleStatus, RunStatus, Status
from ..process import ProcessResult, interpreter_for
from . import effects
from .job import Context, Job, Start
from .judge import compare, excerpt, last_line, unfinished
from .outcome import Outcome, decided, skipped_outcome
from .verdict import ExampleResult, Facts, example_result


def implementation_for(tool: Tool, platform: str) -> Path | None:
    for name in tool.implementations:  # already sorted: the first match wins
        if Path(name).stem == platform:
            return tool.dir / name
    return None


def plan(tool: Tool, ctx: Context) -> Job:
    parts: list[Any] = [hash_tree(tool.dir)]
    if tool.platforms and ctx.platform not in tool.platforms:
        return Job(parts, outcome=skipped_outcome(tool, Status.NOT_APPLICABLE, f"platforms {', '.join(tool.platforms)} exclude {ctx.platform}"))
    impl = implementation_for(tool, ctx.platform)
    if impl is None:
        return Job(parts, outcome=skipped_outcome(tool, Status.NOT_IMPLEMENTED, f"no {ctx.platform}.<ext> implementation beside TOOL.md"))
    complete = [e for e in tool.examples if e.has_input and e.has_output]
    if not complete:
        return Job(parts, outcome=skipped_outcome(tool, Status.NO_EXAMPLES, "no complete example (a `### case` with `input:` and `output:`)"))
    path = ctx.env.get("PATH")
    binaries = [r.name for r in tool.effects.requires if r.kind == "binary"]
    located = {name: shutil.which(name, path=path) for name in binaries}
    parts.append(sorted(located.items()))
    missing = [name for name, where in located.items() if where is None]
    if missing:
        return Job(parts, outcome=skipped_outcome(tool, Status.MISSING_REQUIREMENT, f"not on PATH: {', '.join(missing)}"))
    launcher = interpreter_for(impl)
    parts.append(launcher)
    if launcher is None:
        return Job(parts, outcome=skipped_outcome(tool, Status.MISSING_REQUIREMENT, f"nothing on PATH can run {impl.name}"))

    timeout = ctx.timeout_for()
    outputs_ok = tool.schema_ok.get("outputs", False)  # checked once, when the manifest was parsed
    indexes = [i for i, e in enumerate(tool.examples) if e.has_input and e.has_output]
    rules = effects.declared(tool, ctx)

    def task_for(example: Example) -> Callable[[], Run]:
        def task() -> Run:
            return run_case(example, launcher, tool, outputs_ok, timeout, ctx, rules)

        return task

    def finish(results: list[Run]) -> Outcome:
        return _finish(tool, indexes, results, impl.name, effects.report(tool, results, ctx, rules.network))

    start = Start.of(launcher, tool.dir, ctx.env, rules.network)  # what each case starts (run_case)
    return Job(parts, tasks=[task_for(tool.examples[i]) for i in indexes], finish=finish, starts=[start for _ in indexes])


INCOMPLETE = "incomplete example: it needs an `input:` and an `output:` line"


def _finish(tool: Tool, indexes: list[int], results: list[Run], impl: str, report: SandboxReport | None) -> Outcome:
    """The facts: one result per case that ran; an incomplete example is no case (the reference
    rules do not count it), so it is skipped and not required."""
    examples = [ExampleResult(ExampleStatus.SKIPPED, INCOMPLETE, required=False) for _ in tool.examples]
    for index, run in zip(indexes, results):
        examples[index] = example_result([run])
    facts = Facts(tuple(examples), ran_with=impl)
    return decided(facts, processes=sum(run.started for run in results), sandbox=report)


def run_case(example: Example, launcher: list[str], tool: Tool, outputs_ok: bool, timeout: float, ctx: Context,
             rules: effects.Declared) -> Run:
    stdin = json.dumps(example.input, ensure_ascii=False).encode("utf-8")
    spawned = ctx.run(launcher, cwd=tool.dir, stdin=stdin, timeout_s=timeout, env=ctx.env, network=rules.network)
    result = spawned.result
    run = Run(
        status=RunStatus.FAILED,
        # Shown on the page: the interpreter and file by name, never this machine's absolute paths.
        argv=[Path(launcher[0]).name, *(Path(a).name if Path(a).parent == tool.dir else a for a in launcher[1:])],
        exit_code=result.exit_code,
        stderr=excerpt(result.stderr, scrub=ctx.scrub),
        duration_ms=int(result.duration_s * 1000),
        started=result.error is None,
        sandbox=spawned.mechanism,
        observed=spawned.observed,
    )
    run.detail = judge_case(example.output, result, tool.outputs if outputs_ok else None, timeout, run, ctx.scrub)
    if not run.detail:
        run.status = RunStatus.PASSED
    return effects.settle(run, rules, str(ctx.workspace))


def judge_case(expected: Any, result: ProcessResult, outputs: Any, timeout: float, run: Run, scrub: Any = None) -> str:
    """Why a case failed ("" when it passed), by the reference rules. Fills `run.actual`."""
    problem = unfinished(result, timeout)
    if problem:
        return problem
    if not result.stdout.strip() and result.exit_code not in (0, None):
        line = last_line(result.stderr, scrub)
        return f"exit code {result.exit_code} with empty stdout" + (f": {line}" if line else "")
    ok, actual, detail = parse_json_output(result.stdout)
    if not ok:
        return detail
    run.actual, run.has_actual = actual, True
    differing = compare(expected, True, actual, outputs, scrub)
    reasons = [differing] if differing else []
    if isinstance(expected, dict) and expected.get("ok") is True and result.exit_code != 0:
        reasons.append(f"the expected output says `ok: true` (success), so the tool must exit with code 0, but it exited with code {result.exit_code}")
    return "; ".join(reasons)
