"""AIP-14 tools, run through their AIP-30 drivers.

Every example runs through every runnable driver: `kind: cli` directly (argv
from `bin` + `bin_args` + the `implements` entry's `metadata.cli.argv`, never a
shell, cwd = the driver's folder, stdin closed) and `kind: mcp` over stdio with
the official MCP SDK when it is installed. `http`, `sdk` and `builtin` drivers
are never run at build time. The contract's safety rules hold: a tool that
mutates or needs approval runs only when `allow_mutating` names it.
"""

from __future__ import annotations

import fnmatch
import os
import shutil
from pathlib import Path
from typing import Any, Callable

from ..files import hash_tree
from ..matching import parse_json_output
from ..model import Driver, Implementation, Run, Tool
from ..observed import SandboxReport
from ..statuses import RunStatus, Status
from . import argv as argv_mod
from . import effects, mcp_stdio
from .job import Context, Job
from .raw import mapping, sequence, text
from .judge import documents_failure, error_envelope, excerpt, exit_failure, last_line, settle, settle_failure, unfinished
from .outcome import Outcome, decided, skipped_outcome
from .verdict import Facts, example_result

RUNNABLE_KINDS = ("cli", "mcp")


def may_run(tool: Tool, ctx: Context) -> str | None:
    """None when the contract lets the build run this tool; else why not.

    Only a valid contract that declares no mutation, `approval: auto` and risk level 0 runs on
    its own. An invalid or malformed contract cannot vouch for itself, so it never runs; the rest
    runs only when `allow_mutating` names it.
    """
    if not tool.valid:
        return "not run: the contract is invalid, so its safety fields cannot be trusted"
    effects = tool.effects
    if effects.mutates is None or effects.approval is None or effects.risk_level is None:
        return "not run: `mutates`, `approval` or `risk_level` is malformed"
    if not effects.mutates and effects.approval == "auto" and effects.risk_level == 0:
        return None
    if any(fnmatch.fnmatchcase(tool.id, pattern) for pattern in ctx.options.allow_mutating):
        return None
    why = []
    if effects.mutates:
        why.append("it mutates " + ", ".join(effects.mutates))
    if effects.approval != "auto":
        why.append(f"its approval is `{effects.approval}`")
    if effects.risk_level:
        why.append(f"its risk level is {effects.risk_level}")
    return "not run: " + " and ".join(why) + "; list its id in `allow_mutating` to run it at build time"


def _driver_plan(driver: Driver, tool: Tool, ctx: Context) -> tuple[list[str] | None, str]:
    """The command prefix for a driver, or None and why it cannot run."""
    if driver.kind not in RUNNABLE_KINDS:
        return None, f"not run: `{driver.kind or 'unknown'}` drivers are not run at build time"
    if not driver.valid:
        return None, "not run: the driver has errors (see its diagnostics)"
    fields = driver.fields
    if driver.kind == "mcp":
        return mcp_stdio.command(driver, ctx)
    binary = fields.get("bin")
    if not isinstance(binary, str) or not binary:
        return None, "not run: the driver has no `bin`"
    bin_args = fields.get("bin_args") or []
    local = driver.abs_path.parent / binary
    located = str(local) if "/" in binary and local.is_file() else shutil.which(binary, path=ctx.env.get("PATH"))
    if located is None:
        return None, f"not run: command not found: {binary}"
    return [located, *[str(a) for a in bin_args]], "ran"


def plan(tool: Tool, ctx: Context) -> Job:
    parts: list[Any] = [hash_tree(tool.dir), sorted((d.id, hash_tree(d.abs_path.parent)) for d in tool.drivers)]
    if not tool.examples:
        return Job(parts, outcome=skipped_outcome(tool, Status.NO_EXAMPLES, "the contract has no `examples`"))
    refusal = may_run(tool, ctx)
    if refusal:
        return Job(parts, outcome=skipped_outcome(tool, Status.NOT_RUN, refusal, {d.id: refusal for d in tool.drivers}))
    if not tool.drivers:
        return Job(parts, outcome=skipped_outcome(tool, Status.NOT_RUN, "not run: no driver implements this tool"))

    drivers: dict[str, str] = {}
    runnable: list[tuple[Driver, Implementation, list[str]]] = []
    for driver in tool.drivers:
        prefix, reason = _driver_plan(driver, tool, ctx)
        entry = driver.entry_for(tool.id)
        drivers[driver.id] = reason
        parts.append([driver.id, prefix, _read_hashes(tool, driver, ctx)])
        if prefix is not None and entry is not None:
            runnable.append((driver, entry, prefix))
    if not runnable:
        reason = "not run: " + "; ".join(f"{k}: {v.removeprefix('not run: ')}" for k, v in sorted(drivers.items()))
        return Job(parts, outcome=skipped_outcome(tool, Status.NOT_RUN, reason, drivers))

    outputs_ok = tool.schema_ok.get("outputs", False)  # checked once, when the manifest was parsed
    cells: list[tuple[int, Driver]] = []
    tasks = []
    for index, example in enumerate(tool.examples):
        for driver, entry, prefix in runnable:
            cells.append((index, driver))
            tasks.append(_task(tool, example, driver, entry, prefix, ctx, outputs_ok))

    def finish(results: list[Run]) -> Outcome:
        network = any(effects.declared(tool, ctx, driver).network for driver, _, _ in runnable)
        mcp = any(driver.kind == "mcp" for driver, _, _ in runnable)
        return _finish(tool, cells, results, drivers, effects.report(tool, results, ctx, network, mcp))

    return Job(parts, tasks=tasks, finish=finish)


def _finish(tool: Tool, cells: list[tuple[int, Driver]], results: list[Run], drivers: dict[str, str],
            report: SandboxReport | None) -> Outcome:
    """The facts: each example's runs, one per runnable driver (`verdict` settles both the
    example and the tool)."""
    per_example: list[list[Run]] = [[] for _ in tool.examples]
    for (index, _driver), run in zip(cells, results):
        per_example[index].append(run)
    facts = Facts(tuple(example_result(runs) for runs in per_example))
    return decided(facts, processes=sum(run.started for run in results), drivers=drivers, sandbox=report)


def _task(tool: Tool, example: Any, driver: Driver, entry: Implementation, prefix: list[str], ctx: Context,
          outputs_ok: bool) -> Callable[[], Run]:
    def task() -> Run:
        run = Run(status=RunStatus.FAILED, driver=driver.id)
        dropped = [name for name in entry.drop_inputs if isinstance(example.input, dict) and name in example.input]
        if dropped:
            run.status, run.detail = RunStatus.SKIPPED, f"uses input {', '.join(dropped)}, which this driver drops"
            return run
        timeout_ms = min(x for x in (tool.timeout_ms, _int(driver.fields.get("timeout_override_ms")), entry.timeout_override_ms) if x)
        timeout = ctx.timeout_for(timeout_ms)
        outputs = tool.outputs if outputs_ok else None
        rules = effects.declared(tool, ctx, driver)
        if driver.kind == "mcp":
            run = mcp_stdio.call(tool, example, driver, entry, prefix, ctx, timeout, outputs, run, rules)
        else:
            run = _run_cli(tool, example, driver, entry, prefix, ctx, timeout, outputs, run, rules)
        return effects.settle(run, rules, str(ctx.workspace))

    return task


def declared_reads(tool: Tool, driver: Driver, workspace: Path) -> list[Path]:
    """The folders a CLI run sees besides its driver's folder: the tool's own folder and the fixed
    part of each `sandbox.fs.read` pattern of the driver that lies inside the workspace. A manifest
    never widens the view beyond it: `paths` may name folders outside (even `/`), and a driver's
    `fs.read: [/home/runner/.ssh]` inside such a folder must still show nothing."""
    out = [tool.dir]
    ws = os.path.realpath(workspace)
    patterns = sequence(mapping(mapping(driver.fields.get("sandbox")).get("fs")).get("read"))
    for pattern in (p.strip() for p in patterns if isinstance(p, str)):
        if not pattern or pattern.startswith(("$", "~")):
            continue  # $TMPDIR, ~: the scratch folder, always there
        fixed: list[str] = []
        for part in (p for p in pattern.split("/") if p not in ("", ".")):
            if any(c in part for c in "*?["):
                break
            fixed.append(part)
        folder = (Path("/") if pattern.startswith("/") else driver.abs_path.parent).joinpath(*fixed)
        real = os.path.realpath(folder)
        if real == ws or real.startswith(ws + os.sep):
            out.append(folder)
    return out


def _read_hashes(tool: Tool, driver: Driver, ctx: Context) -> list[str]:
    """The contents of the `sandbox.fs.read` folders a run of `driver` sees (a result depends on
    them); those outside the workspace are never shown, so they are not hashed either."""
    workspace = os.path.realpath(ctx.workspace)
    found = [os.path.realpath(p) for p in declared_reads(tool, driver, ctx.workspace)[1:]]
    return [hash_tree(Path(p)) for p in found if p == workspace or p.startswith(workspace + os.sep)]


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def _run_cli(tool: Tool, example: Any, driver: Driver, entry: Implementation, prefix: list[str], ctx: Context, timeout: float, outputs: Any, run: Run,
             rules: effects.Declared) -> Run:
    cli = mapping(entry.metadata.get("cli"))
    template = cli.get("argv", [])
    try:
        args = argv_mod.expand(template, example.input)
    except argv_mod.TemplateError as exc:
        run.detail = f"argv template: {exc}"
        return run
    output = mapping(driver.fields.get("output"))
    json_flag = text(output.get("json_flag"))
    wants_json = output.get("default_format") == "json"
    if json_flag and not wants_json:
        if json_flag not in args:
            args = [*args, json_flag, *[str(a) for a in output.get("json_flag_args") or []]]
        wants_json = True
    argv = [*prefix, *args]
    run.argv = [Path(argv[0]).name, *argv[1:]]
    spawned = ctx.run(argv, cwd=driver.abs_path.parent, stdin=None, timeout_s=timeout, env=ctx.env, network=rules.network, hidden=rules.hidden,
                      reads=declared_reads(tool, driver, ctx.workspace), programs=rules.programs)
    result = spawned.result
    run.sandbox, run.observed = spawned.mechanism, spawned.observed
    run.started, run.exit_code = result.error is None, result.exit_code
    run.stderr, run.duration_ms = excerpt(result.stderr, scrub=ctx.scrub), int(result.duration_s * 1000)
    problem = unfinished(result, timeout)
    if problem:
        run.detail = problem
        return run
    if result.exit_code != 0:
        expected = example.output if example.has_output else None
        if documents_failure(expected):
            # An example that documents a failure: compare with the host's error envelope (AIP-29
            # dispatch), the error code taken from `output.exit_codes` for this exit code.
            codes = mapping(output.get("exit_codes"))
            code = {str(k): v for k, v in codes.items()}.get(str(result.exit_code), "error")
            return settle_failure(run, expected, error_envelope(str(code), last_line(result.stderr, ctx.scrub), result.exit_code), ctx.scrub)
        run.detail = exit_failure(result, ctx.scrub)
        return run
    stream = result.stderr if output.get("stream") == "stderr" else result.stdout
    if wants_json:
        ok, actual, detail = parse_json_output(stream)
        if not ok:
            run.detail = detail
            return run
    else:
        actual = stream.decode("utf-8", "replace")
    return settle(run, example, actual, outputs, ctx.scrub)
