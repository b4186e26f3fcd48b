"""Smart tools: the conformance kit's rules, each a named check.

Static rules come from the manifest's diagnostics. Runtime rules run the CLI
from `smart-tool.json` with cwd = the distribution root, stdin closed and every
provider variable removed from the environment. `--help` is the only source of
the capabilities and their deterministic/model-backed labels. Model-backed
capabilities are never called: the runtime rules only ask for help, run the
`deterministic_smoke` argv and an unknown capability. Every rule runs and is
reported even when the manifest has errors, so a reviewer sees all problems.
A tool whose `platforms` exclude this OS is `not-applicable`: nothing runs and
only the static rules are reported. At most `MAX_CAPABILITY_HELP` capabilities
get a `<capability> --help` call; the rest are named as not checked.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

from ..files import hash_tree
from ..formats.smarttool import STATIC_RULES, rule_for
from ..model import Status, Tool
from ..process import run_process
from .job import Context, Job
from .judge import excerpt, unfinished
from .outcome import Outcome

CAPABILITY_LINE = re.compile(r"^- `(?P<name>[^`]+)` \[(?P<kind>deterministic|model-backed)\] -- (?P<summary>.+)$", re.MULTILINE)
DISCLOSES = re.compile(r"model[- ]?backed", re.IGNORECASE)
UNKNOWN_CAPABILITY = "__toolcatalog_no_such_capability__"
TRACEBACK = "Traceback (most recent call last)"
MAX_CAPABILITY_HELP = 50  # `<capability> --help` calls per tool; each one starts a process


def static_checks(tool: Tool) -> list[dict[str, Any]]:
    failures: dict[str, list[str]] = {}
    for diagnostic in tool.diagnostics:
        if diagnostic.severity != "error":
            continue
        rule = rule_for(diagnostic)
        if rule:
            failures.setdefault(rule, []).append(diagnostic.message)
    checks = []
    for rule, spec in STATIC_RULES:
        if rule == "descriptor-present" and tool.descriptor is None and rule not in failures:
            checks.append({"id": rule, "status": "skip", "detail": "no smart-tool.json: the manifest stands alone", "spec": spec})
        elif rule in failures:
            checks.append({"id": rule, "status": "fail", "detail": "; ".join(failures[rule]), "spec": spec})
        else:
            checks.append({"id": rule, "status": "pass", "detail": "", "spec": spec})
    return checks


def _argv(tool: Tool) -> list[str] | None:
    descriptor = tool.descriptor or {}
    argv = descriptor.get("cli_argv")
    if isinstance(argv, list) and argv and all(isinstance(a, str) and a for a in argv):
        return list(argv)
    return None


def plan(tool: Tool, ctx: Context) -> Job:
    statics = static_checks(tool)
    argv = _argv(tool)
    root = Path(tool.descriptor_source and (ctx.workspace / tool.descriptor_source).parent or tool.dir)
    parts: list[Any] = [hash_tree(root), tool.descriptor]
    if tool.platforms and ctx.platform not in tool.platforms:
        outcome = {
            "status": Status.NOT_APPLICABLE.value,
            "status_detail": f"platforms {', '.join(tool.platforms)} exclude {ctx.platform}",
            "examples": [],
            "checks": statics,
            "processes": 0,
        }
        return Job(parts, outcome=outcome)
    if argv is None:
        reason = "not run: no smart-tool.json says how to run this tool" if tool.descriptor is None else "not run: smart-tool.json has no usable `cli_argv`"
        outcome = {
            "status": (Status.NOT_RUN if tool.descriptor is None else Status.INVALID).value,
            "status_detail": reason,
            "examples": [],
            "checks": statics,
            "processes": 0,
        }
        return Job(parts, outcome=outcome)
    # Which program `cli_argv` starts is part of what the results depend on.
    parts.append(shutil.which(argv[0], path=ctx.tool_env.get("PATH")) or argv[0])
    smoke = (tool.descriptor or {}).get("deterministic_smoke")
    timeout = ctx.timeout_for()

    def task() -> Outcome:
        return run_rules(tool, argv, smoke if isinstance(smoke, list) else None, root, ctx, timeout, statics)

    return Job(parts, tasks=[task], finish=lambda results: results[0])


def run_rules(tool: Tool, argv: list[str], smoke: list[str] | None, root: Path, ctx: Context, timeout: float, statics: list[dict[str, Any]]) -> Outcome:
    processes = 0
    hung: list[str] = []

    def call(args: list[str]):
        nonlocal processes
        result = run_process([*argv, *args], cwd=root, stdin=None, timeout_s=timeout, env=ctx.tool_env, max_stdout=ctx.options.max_output_bytes)
        if result.error is None:
            processes += 1
        if result.timed_out:
            hung.append(" ".join(args))
        return result

    def text(data: bytes) -> str:
        return data.decode("utf-8", "replace")

    def failure(result: Any) -> str:
        return unfinished(result, timeout) or f"exit code {result.exit_code}"

    checks = list(statics)
    help_result = call(["--help"])
    help_text = text(help_result.stdout)
    checks.append({
        "id": "loads-without-provider", "spec": "structure.md",
        "status": "pass" if help_result.exit_code == 0 else "fail",
        "detail": "" if help_result.exit_code == 0 else f"`--help` with no provider configured: {failure(help_result)}",
    })
    checks.append({
        "id": "help-discloses-model-backed", "spec": "invocation.md",
        "status": "pass" if DISCLOSES.search(help_text) else "fail",
        "detail": "" if DISCLOSES.search(help_text) else "`--help` never says which capabilities are model-backed",
    })
    capabilities = [
        {"name": m.group("name"), "kind": m.group("kind"), "summary": m.group("summary").strip()}
        for m in CAPABILITY_LINE.finditer(help_text)
    ]
    short = call(["-h"])
    checks.append({
        "id": "help-short-flag", "spec": "invocation.md",
        "status": "pass" if short.exit_code == 0 else "fail",
        "detail": "" if short.exit_code == 0 else f"`-h`: {failure(short)}",
    })
    capability_help: dict[str, str] = {}
    bad_help = []
    for capability in capabilities[:MAX_CAPABILITY_HELP]:
        result = call([capability["name"], "--help"])
        capability_help[capability["name"]] = excerpt(result.stdout, 20000)
        if result.exit_code != 0:
            bad_help.append(f"`{capability['name']} --help`: {failure(result)}")
    notes = list(bad_help)
    unchecked = capabilities[MAX_CAPABILITY_HELP:]
    if unchecked:
        names = ", ".join(f"`{c['name']}`" for c in unchecked[:10]) + (", ..." if len(unchecked) > 10 else "")
        notes.append(f"{len(unchecked)} more capabilities not checked (only the first {MAX_CAPABILITY_HELP} get a `--help` call): {names}")
    checks.append({
        "id": "capability-help", "spec": "invocation.md",
        "status": ("fail" if bad_help else "pass") if capabilities else "skip",
        "detail": "; ".join(notes) if capabilities else "`--help` lists no capabilities in the `- `name` [kind] -- summary` form",
    })
    if smoke:
        result = call([str(a) for a in smoke])
        checks.append({
            "id": "deterministic-capability-runs", "spec": "structure.md",
            "status": "pass" if result.exit_code == 0 else "fail",
            "detail": "" if result.exit_code == 0 else f"`{' '.join(map(str, smoke))}`: {failure(result)}",
        })
    else:
        checks.append({"id": "deterministic-capability-runs", "spec": "structure.md", "status": "skip", "detail": "smart-tool.json has no `deterministic_smoke`"})
    unknown = call([UNKNOWN_CAPABILITY])
    problems = []
    if unknown.error or unknown.timed_out:
        problems.append(failure(unknown))
    else:
        if unknown.exit_code == 0:
            problems.append("an unknown capability exits 0")
        if TRACEBACK in text(unknown.stdout) or TRACEBACK in text(unknown.stderr):
            problems.append("it prints a Python traceback")
        if not _json_on_stdout(unknown.stdout):
            problems.append("no JSON error on stdout")
    checks.append({"id": "failure-names-remedy", "spec": "invocation.md", "status": "fail" if problems else "pass", "detail": "; ".join(problems)})
    checks.append({
        "id": "no-hang-stdin-closed", "spec": "invocation.md",
        "status": "fail" if hung else "pass",
        "detail": ("hung with stdin closed: " + ", ".join(hung)) if hung else "",
    })

    kinds = {c["kind"] for c in capabilities}
    kind = None if not kinds else kinds.pop() if len(kinds) == 1 else "mixed"
    failed = [c["id"] for c in checks if c["status"] == "fail"]
    return {
        "status": (Status.FAILED if failed else Status.PASSED).value,
        "status_detail": f"failing rules: {', '.join(failed)}" if failed else f"{sum(c['status'] == 'pass' for c in checks)} rules pass",
        "examples": [],
        "checks": checks,
        "capabilities": capabilities,
        "capability_help": capability_help,
        "kind": kind,
        "processes": processes,
    }


def _json_on_stdout(stdout: bytes) -> bool:
    text = stdout.decode("utf-8", "replace").strip()
    for candidate in (text, text.splitlines()[0] if text else ""):
        try:
            if isinstance(json.loads(candidate), (dict, list)):
                return True
        except (ValueError, RecursionError):
            continue
    return False

