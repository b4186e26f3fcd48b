"""speccify tools: the reference `speccify tool check` rules, exactly.

Status, first hit wins: `not-applicable` (platforms exclude this OS),
`not-implemented` (no `<platform>.<ext>`), `no-examples` (no complete case),
`missing-requirement` (a `requires` binary, or the interpreter, is not on PATH);
otherwise every complete case runs with cwd = the tool folder and the input JSON
on stdin, and the tool `passed` when every case passed, else `failed`. An
invalid manifest still runs what it can (reviewers want every problem at once)
but keeps the status `invalid`.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from .. import jsonschemas
from ..matching import differences, parse_json_output
from ..model import Example, Tool
from ..process import interpreter_for, run_process
from .cache import hash_tree
from .engine import Context, Job, excerpt, last_line
from .outcome import Outcome, not_run_outcome


def implementation_for(tool: Tool, platform: str) -> Path | None:
    for name in tool.implementations:  # already sorted: the first match wins
        if Path(name).stem == platform:
            return tool.dir / name
    return None


def plan(tool: Tool, ctx: Context) -> Job:
    parts: list[Any] = [hash_tree(tool.dir)]
    if tool.platforms and ctx.platform not in tool.platforms:
        return Job(parts, outcome=not_run_outcome(tool, "not-applicable", f"platforms {', '.join(tool.platforms)} exclude {ctx.platform}"))
    impl = implementation_for(tool, ctx.platform)
    if impl is None:
        return Job(parts, outcome=not_run_outcome(tool, "not-implemented", f"no {ctx.platform}.<ext> implementation beside TOOL.md"))
    complete = [e for e in tool.examples if e.has_input and e.has_output]
    if not complete:
        return Job(parts, outcome=not_run_outcome(tool, "no-examples", "no complete example (a `### case` with `input:` and `output:`)"))
    path = ctx.env.get("PATH")
    binaries = [r.name for r in tool.effects.requires if r.kind == "binary"]
    located = {name: shutil.which(name, path=path) for name in binaries}
    parts.append(sorted(located.items()))
    missing = [name for name, where in located.items() if where is None]
    if missing:
        return Job(parts, outcome=not_run_outcome(tool, "missing-requirement", f"not on PATH: {', '.join(missing)}"))
    launcher = interpreter_for(impl)
    parts.append(launcher)
    if launcher is None:
        return Job(parts, outcome=not_run_outcome(tool, "missing-requirement", f"nothing on PATH can run {impl.name}"))

    timeout = ctx.timeout_for()
    outputs_ok = tool.schema_ok.get("outputs", False)  # checked once, when the manifest was parsed
    indexes = [i for i, e in enumerate(tool.examples) if e.has_input and e.has_output]

    def task_for(example: Example):
        def task() -> dict[str, Any]:
            return run_case(example, launcher, tool, outputs_ok, timeout, ctx)

        return task

    def finish(results: list[dict[str, Any]]) -> Outcome:
        examples: list[dict[str, Any]] = [
            {"status": "not-run", "detail": "incomplete example: it needs an `input:` and an `output:` line", "runs": []}
            for _ in tool.examples
        ]
        for index, result in zip(indexes, results):
            examples[index] = {"status": result["status"], "detail": result["detail"], "runs": [result]}
        failed = sum(r["status"] == "failed" for r in results)
        status = "failed" if failed else "passed"
        return {
            "status": status,
            "status_detail": f"{len(results) - failed} of {len(results)} examples pass ({impl.name})",
            "examples": examples,
            "processes": len(results),
        }

    return Job(parts, tasks=[task_for(tool.examples[i]) for i in indexes], finish=finish)


def run_case(example: Example, launcher: list[str], tool: Tool, outputs_ok: bool, timeout: float, ctx: Context) -> dict[str, Any]:
    stdin = json.dumps(example.input, ensure_ascii=False).encode("utf-8")
    result = run_process(
        launcher, cwd=tool.dir, stdin=stdin, timeout_s=timeout, env=ctx.env, max_stdout=ctx.options.max_output_bytes
    )
    run: dict[str, Any] = {
        "status": "failed",
        "detail": "",
        # Shown on the page: the interpreter and file by name, never this machine's absolute paths.
        "argv": [Path(launcher[0]).name, *(Path(a).name if Path(a).parent == tool.dir else a for a in launcher[1:])],
        "exit_code": result.exit_code,
        "stderr": excerpt(result.stderr),
        "duration_ms": int(result.duration_s * 1000),
        "actual": None,
        "has_actual": False,
    }
    run["detail"] = evaluate(example.output, result, tool.outputs if outputs_ok else None, timeout, run)
    if not run["detail"]:
        run["status"] = "passed"
    return run


def evaluate(expected: Any, result: Any, outputs: Any, timeout: float, run: dict[str, Any], check_ok_exit: bool = True) -> str:
    """Why a case failed ("" when it passed), by the reference rules. Fills run['actual']."""
    if result.error:
        return result.error
    if result.timed_out:
        return f"timed out after {timeout:g}s"
    if result.stdout_truncated:
        return "stdout exceeded the output cap; the process was stopped"
    if result.stderr_truncated:
        return "stderr exceeded the 64 KiB cap; the process was stopped"
    if not result.stdout.strip() and result.exit_code not in (0, None):
        line = last_line(result.stderr)
        return f"exit code {result.exit_code} with empty stdout" + (f": {line}" if line else "")
    ok, actual, detail = parse_json_output(result.stdout)
    if not ok:
        return detail
    run["actual"], run["has_actual"] = actual, True
    reasons = differences(expected, actual)
    if outputs is not None:
        for problem in jsonschemas.validate(outputs, actual, limit=3):
            reasons.append(f"output violates the outputs schema at {jsonschemas.json_path(problem.path)}: {problem.message}")
    if check_ok_exit and isinstance(expected, dict) and expected.get("ok") is True and result.exit_code != 0:
        reasons.append(f"exit code {result.exit_code} with ok: true")
    return "; ".join(reasons)
