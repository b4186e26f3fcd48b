"""Property-based tests: mutated manifests of all four kinds go through harvest, placement, the
check planners (no process is started), rendering, the outputs and `catalogdiff.diff`. No
exception escapes, catalog.json validates against the shipped schema, and every example runs
within a generous deadline (a structural bound: a quadratic step on these few-KB inputs would
blow it by far; nothing here compares timings).

Hypothesis runs derandomized with no example database, so CI sees the same inputs every time.
"""

from __future__ import annotations

import json
import tempfile
from datetime import timedelta
from pathlib import Path
from typing import Any, Callable

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from manifests import front_matter, write
from toolcatalog import catalogdiff, jsonschemas, pipeline
from toolcatalog.conformance import engine
from toolcatalog.conformance.job import Job
from toolcatalog.conformance.outcome import check_result, decided, skipped_outcome
from toolcatalog.conformance.verdict import Blocked, Facts
from toolcatalog.formats import speccify
from toolcatalog.statuses import Status
from toolcatalog.options import Options
from toolcatalog.outputs import catalog_json
from toolcatalog.render import Renderer

FUZZ = settings(
    max_examples=20,
    derandomize=True,
    database=None,
    deadline=timedelta(seconds=30),
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

# Text that has broken parsers and renderers before: YAML and Markdown syntax, escapes, controls.
SNIPPETS = [
    "\n", "\n\n", "---\n", "- ", "  ", "\t", ":", ": ", "#", "## ", "### ", "[", "]", "{", "}", "![", "[a](", "`", "```",
    "*", "_", "<", ">", "&", "!!python/object:os.system ", "&a ", "*a", "<<: ", '"\\e[2K"', '"\\0"', "\x00", "\x1b",
    "\u2028", "\ufeff", "input: ", "output: ", "{}", "[[[[", "]]]]", "null", "1e999", "0x", "~", "|", ">-", "%", "@",
    "ü", "\r\n",
]
NASTY_TEXT = st.text(alphabet=st.sampled_from(["a", " ", "-", ".", "/", "$", "\x1b", "\x00", "é", "\u202e", "{", "[", ":"]), max_size=12)


def deep(depth: int) -> Any:
    value: Any = "x"
    for _ in range(depth):
        value = [value]
    return value


LEAVES = (
    st.none() | st.booleans() | st.integers(min_value=-(2**80), max_value=2**80)
    | st.floats(allow_nan=True, allow_infinity=True) | NASTY_TEXT
)
JSON_VALUES = st.recursive(
    LEAVES,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(NASTY_TEXT, children, max_size=4),
    max_leaves=12,
)


# Values of the wrong type for any field: what type confusion looks like in a manifest.
CONFUSING = st.sampled_from([5, -1, 0, 3.5, True, None, "x", "", [], [{}], [[]], [5], {}, {"x": 5}, {"required": 5}, ["a", 5], deep(70)])


KEYWORDS = ["type", "required", "properties", "items", "enum", "$ref", "pattern", "additionalProperties", "allOf",
            "oneOf", "$defs", "const", "default", "minimum", "drop_inputs", "drop_outputs", "forbid", "require_kind",
            "cost_class", "max_attempts", "argv", "cli", "tool", "version", "name", "install", "optional"]


def _edit(draw: Callable, value: Any, depth: int) -> Any:
    """`value` with one thing changed somewhere inside it (at most `depth` levels down): a value
    replaced, or, in a mapping, a key (a schema or manifest keyword) added with any value."""
    if depth > 0 and isinstance(value, dict) and value and draw(st.booleans()):
        if draw(st.booleans()):
            return {**value, draw(st.sampled_from(KEYWORDS)): draw(CONFUSING | JSON_VALUES)}
        key = draw(st.sampled_from(sorted(value, key=str)))
        return {**value, key: _edit(draw, value[key], depth - 1)}
    if depth > 0 and isinstance(value, list) and value and draw(st.booleans()):
        index = draw(st.integers(0, len(value) - 1))
        return [*value[:index], _edit(draw, value[index], depth - 1), *value[index + 1:]]
    return draw(CONFUSING | JSON_VALUES)


@st.composite
def mutated(draw: Callable, data: dict[str, Any], body: str) -> str:
    """A manifest: `data` with fields replaced (often by a value of the wrong type, at any depth),
    removed or added, dumped as front matter over `body`, then a few text edits anywhere in the file."""
    data = dict(data)
    # Fields that hold structure (schemas, examples, implements, requires) are picked more often.
    keys = sorted(data) + [k for k in sorted(data) if isinstance(data[k], (dict, list))] * 3
    for _ in range(draw(st.integers(1, 6))):
        action = draw(st.sampled_from(["edit", "edit", "edit", "drop", "add"]))
        key = draw(st.sampled_from(keys))
        if action == "edit":
            data[key] = _edit(draw, data.get(key), 3)
        elif action == "drop":
            data.pop(key, None)
        else:
            data[draw(NASTY_TEXT)] = draw(JSON_VALUES)
    extra = "".join(draw(st.lists(st.sampled_from(SNIPPETS), max_size=30)))
    try:
        text = front_matter(data, body + extra)
    except (yaml.YAMLError, ValueError, UnicodeEncodeError):
        text = "---\n" + str(data) + "\n---\n" + body + extra
    # Text edits usually break the front matter, so they are rare: most examples reach the code
    # that reads the fields.
    edits = draw(st.sampled_from([0, 0, 0, 1, 3]))
    for position, snippet, delete in draw(st.lists(st.tuples(st.integers(0, 10**6), st.sampled_from(SNIPPETS), st.booleans()), min_size=edits, max_size=edits)):
        at = position % (len(text) + 1)
        text = text[:at] + text[at + 1:] if delete else text[:at] + snippet + text[at:]
    return text


SPECCIFY = {
    "name": "fuzzed", "description": "A tool.", "inputs": {"type": "object", "required": ["a"], "properties": {"a": {"type": "string"}}},
    "outputs": {"type": "object"}, "effects": "none", "requires": "python3", "platforms": ["linux"],
}
SPECCIFY_BODY = "\n## Behaviour\n\nText.\n\n## Examples\n\n### one\ninput: {\"a\": \"x\"}\noutput: {\"ok\": true}\n"
AIP14 = {
    "name": "Fuzzed", "id": "demo.fuzzed", "description": "A tool.", "version": "1.0.0",
    "inputs": {"type": "object", "properties": {"a": {"type": "string"}}}, "outputs": {"type": "object"},
    "mutates": [], "approval": "auto", "risk_level": 0, "idempotent": True, "cost_class": "trivial", "timeout_ms": 1000,
    "retry": {"max_attempts": 2}, "driver_constraints": {"forbid": ["http"]}, "tags": ["x"],
    "examples": [{"name": "one", "input": {"a": "x"}, "output": {}}], "metadata": {"model_backed": False},
}
AIP30 = {
    "name": "Fuzzed CLI", "id": "fuzzed-cli", "description": "A driver.", "version": "1.0.0", "kind": "cli", "bin": "python3",
    "bin_args": ["run.py"], "output": {"default_format": "json"}, "timeout_override_ms": 500,
    "implements": [{"tool": ".tools/demo.fuzzed/TOOL.md", "version": "^1.0.0", "schema_narrowing": {"drop_inputs": ["a"]},
                    "metadata": {"cli": {"argv": ["${input.a}"]}}}],
}
SMART = {
    "smart_tool_format": 1, "name": "fuzzed", "version": "1.0.0", "description": "A tool.", "use_cases": ["x"],
    "platforms": ["linux"], "requires": [{"name": "p", "purpose": "q", "install": "README.md"}],
}
DESCRIPTOR = {"manifest": "src/fuzzed/SMART_TOOL.md", "cli_argv": ["python3", "cli.py"], "deterministic_smoke": ["stats"]}


def _no_processes(planner: Callable) -> Callable:
    """The real planner, with whatever it would run replaced by a decided outcome."""

    def plan(tool: Any, ctx: Any) -> Job:
        job = planner(tool, ctx)
        if job.tasks:
            outcome = skipped_outcome(tool, Status.NOT_RUN, "fuzzing: not run")
            if tool.checks:
                checks = tuple(check_result(c) for c in tool.checks)
                outcome = decided(Facts(outcome.examples, checks, Blocked(Status.NOT_RUN, "fuzzing: not run")))
            return Job(job.key_parts, outcome=outcome)
        return job

    return plan


PLANNERS = {name: _no_processes(planner) for name, planner in engine.PLANNERS.items()}
BASELINE: dict[str, Any] = {"version": catalog_json.CATALOG_VERSION, "tools": []}


def run_pipeline(root: Path) -> None:
    """harvest -> place -> plan and apply -> render -> outputs -> diff; assert what must hold.

    The safety nets (an invalid tool for a parser that raised, a page that says it could not be
    rendered, an `error` status for a planner that raised) keep a build going; here they must
    never be needed."""
    options = Options(cache=False, run_examples=False)
    built = pipeline.prepare(root, options)
    engine.check(built.catalog, options, planners=PLANNERS)
    internal = [d.message for d in built.all_diagnostics() if d.code == "internal-error"]
    assert not internal, internal
    assert not [t.status_detail for t in built.catalog.tools if t.status == Status.ERROR]
    renderer = Renderer()
    for tool in built.catalog.tools:
        page = renderer.tool_page(tool, built.catalog, lambda target: target)
        assert "This page could not be rendered" not in page, page
    renderer.index_page(built.catalog, lambda target: target)
    files = built.outputs()
    document = json.loads(files["catalog.json"])
    assert jsonschemas.validate_bundled(catalog_json.SCHEMA_RESOURCE, document) == []
    global BASELINE
    report = catalogdiff.diff(BASELINE, document)
    report.markdown()
    json.dumps(report.as_dict())
    BASELINE = document


def in_workspace(files: dict[str, str]) -> None:
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        for rel, text in files.items():
            write(root / rel, text)
        run_pipeline(root)


def batch(strategy: st.SearchStrategy[str]) -> st.SearchStrategy[list[str]]:
    """Several mutated manifests per example: each is its own tool in one workspace."""
    return st.lists(strategy, min_size=1, max_size=8)


def aip30_for(tool_path: str) -> dict[str, Any]:
    return {**AIP30, "implements": [{**AIP30["implements"][0], "tool": tool_path}]}


@FUZZ
@given(batch(mutated(SPECCIFY, SPECCIFY_BODY)))
def test_mutated_speccify_tools(texts: list[str]) -> None:
    files = {}
    for i, text in enumerate(texts):
        files[f".agent/tools/t{i}/TOOL.md"] = text
        files[f".agent/tools/t{i}/linux.py"] = "print('{}')\n"
    in_workspace(files)


@FUZZ
@given(batch(mutated(AIP14, "\n## Description\n\nA *tool*.\n")))
def test_mutated_aip14_tools(texts: list[str]) -> None:
    files = {}
    for i, text in enumerate(texts):
        files[f".tools/t{i}/TOOL.md"] = text
        files[f".drivers/d{i}/DRIVER.md"] = front_matter({**aip30_for(f".tools/t{i}/TOOL.md"), "id": f"d{i}"})
    in_workspace(files)


@FUZZ
@given(batch(mutated(AIP30, "\n# Driver\n")))
def test_mutated_aip30_drivers(texts: list[str]) -> None:
    files = {".tools/demo.fuzzed/TOOL.md": front_matter(AIP14)}
    files.update({f".drivers/d{i}/DRIVER.md": text for i, text in enumerate(texts)})
    in_workspace(files)


@FUZZ
@given(batch(st.tuples(
    mutated(SMART, "\n# fuzzed\n\nGuidance.\n"),
    st.one_of(st.just(DESCRIPTOR), JSON_VALUES, st.builds(lambda v: {**DESCRIPTOR, "cli_argv": v}, CONFUSING)).map(lambda v: json.dumps(v, allow_nan=True)),
)))
def test_mutated_smart_tools(pairs: list[tuple[str, str]]) -> None:
    files = {}
    for i, (text, descriptor) in enumerate(pairs):
        files[f"d{i}/src/fuzzed/SMART_TOOL.md"] = text
        files[f"d{i}/smart-tool.json"] = descriptor
        files[f"d{i}/pyproject.toml"] = '[project]\nversion = "1.0.0"\n'
        files[f"loose{i}/SMART_TOOL.md"] = text
    in_workspace(files)


# -- every field, every wrong type ---------------------------------------------------------------


def paths(value: Any, prefix: tuple = ()) -> list[tuple]:
    """Every place inside `value` (keys and indexes), the value itself first."""
    out = [prefix]
    if isinstance(value, dict):
        for key, child in value.items():
            out += paths(child, prefix + (key,))
    elif isinstance(value, list):
        for index, child in enumerate(value):
            out += paths(child, prefix + (index,))
    return out


def replaced(value: Any, path: tuple, new: Any) -> Any:
    if not path:
        return new
    copy = dict(value) if isinstance(value, dict) else list(value)
    copy[path[0]] = replaced(value[path[0]], path[1:], new)
    return copy


WRONG = [5, -1, 3.5, True, None, "x", "", [], [{}], [[]], [5], {}, {"x": 5}]


def sweep(seed: dict[str, Any]) -> list[dict[str, Any]]:
    """The seed with one place replaced by a value of another type, for every place and value."""
    return [replaced(seed, path, wrong) for path in paths(seed)[1:] for wrong in WRONG]


def test_every_field_of_every_format_with_every_wrong_type() -> None:
    # Type confusion, exhaustively for one change at a time: AIP-14 `inputs: {required: 5}` with a
    # driver, a driver's `drop_inputs: 5`, `required: [[]]` in a schema, ... 50 tools a workspace.
    manifests: list[tuple[str, str]] = []
    for n, data in enumerate(sweep(SPECCIFY)):
        manifests.append((f".agent/tools/s{n}/TOOL.md", front_matter(data, SPECCIFY_BODY)))
    for n, data in enumerate(sweep(AIP14)):
        manifests.append((f".tools/t{n}/TOOL.md", front_matter(data)))
        manifests.append((f".drivers/td{n}/DRIVER.md", front_matter({**aip30_for(f".tools/t{n}/TOOL.md"), "id": f"td{n}"})))
    for n, data in enumerate(sweep(AIP30)):
        manifests.append((f".drivers/d{n}/DRIVER.md", front_matter({**data, "id": f"d{n}"} if isinstance(data.get("id"), str) else data)))
    manifests.append((".tools/demo.fuzzed/TOOL.md", front_matter(AIP14)))
    for n, data in enumerate(sweep(SMART)):
        manifests.append((f"m{n}/src/fuzzed/SMART_TOOL.md", front_matter(data)))
        manifests.append((f"m{n}/smart-tool.json", json.dumps(DESCRIPTOR)))
    for n, data in enumerate(sweep(DESCRIPTOR)):
        manifests.append((f"x{n}/src/fuzzed/SMART_TOOL.md", front_matter(SMART)))
        manifests.append((f"x{n}/smart-tool.json", json.dumps(data)))
    for start in range(0, len(manifests), 100):
        in_workspace(dict(manifests[start:start + 100]))


@settings(max_examples=400, derandomize=True, database=None, deadline=None)
@given(st.lists(st.sampled_from(["\n", " ", "\t", "\r", "#", "##", "###", "input:", "output:", "x", "{}", "\x85", "\u2028", ":", "\x0b"]), max_size=30).map("".join))
def test_the_linear_examples_grammar_finds_what_the_reference_regexes_find(text: str) -> None:
    for pattern, group, ours in (
        (speccify.REFERENCE_SECTION, "title", speccify._sections),
        (speccify.REFERENCE_CASE, "title", speccify._cases),
        (speccify.REFERENCE_CASE_LINE, "json", speccify._case_lines),
    ):
        expected = [(m.start(), m.end(), m.group(group)) for m in pattern.finditer(text)]
        assert [(m.start, m.end, m.value) for m in ours(text)] == expected, pattern.pattern
    for mine, reference in zip(speccify._case_lines(text), speccify.REFERENCE_CASE_LINE.finditer(text)):
        assert (mine.head_start, mine.head) == (reference.start("kind"), reference.group("kind") + ":")
