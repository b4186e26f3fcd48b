"""Contract coverage: how much of a tool's contract its examples actually exercised.

Computed from the contract and the runs the build already has, the same way every time (no
model, no sampling). A contract is split into *goals*, each covered or not, in four dimensions
(docs/coverage.md explains each with an example):

- `inputs`: every input property (nested objects and array items too, to `MAX_DEPTH` levels) set
  by an example that ran; every optional property both set and left out; every `enum` and
  `const` value used; every `oneOf`/`anyOf` branch matched; every boolean both `true` and
  `false`. Smart tools, which have no input schema: every capability's `--help` read, and the
  `deterministic_smoke` run passed.
- `outputs`: every declared output property seen in at least one *actual* output. Keys actually
  seen that the schema does not declare are listed (`undeclared_outputs`); they are no goal.
- `failure`: one goal, an example that documents a failure (an expected `ok: false`) ran and
  passed. Smart tools: the `failure-names-remedy` rule passed.
- `effects`: for a contract that declares writes (AIP-14 `workspace:`/`fs:` mutations) or network
  (`requires.network`, a `network:` mutation), a sandboxed run was seen doing each.

Only examples that ran (passed or failed) count: an example that was skipped exercised nothing.

The formula, with no other weight anywhere: a dimension's score is covered goals / goals (no
score when it has no goal); the total is the plain mean of the scores of the dimensions that have
goals (no total when none has). Scores are rounded to four decimals so outputs stay byte-stable.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterator

from . import claims, jsonschemas
from .model import Example, Tool
from .observed import ELSEWHERE, WORKSPACE
from .statuses import COVERAGE_DIMENSIONS, CheckStatus, ExampleStatus

DIMENSIONS = COVERAGE_DIMENSIONS
MAX_DEPTH = 4  # nesting levels of properties walked; deeper ones are not goals
MAX_GOALS = 500  # per dimension: a hostile schema cannot make the catalog grow without end
MAX_LISTED = 50  # uncovered goals named per dimension (the counts stay exact)
_RAN = (ExampleStatus.PASSED, ExampleStatus.FAILED)
_MISSING: Any = object()


@dataclass
class Dimension:
    """One dimension's goals: how many, how many covered, and what is not."""

    name: str
    total: int = 0
    covered: int = 0
    uncovered: list[str] = field(default_factory=list)

    def goal(self, covered: bool, missing: str) -> None:
        if self.total >= MAX_GOALS:
            return
        self.total += 1
        if covered:
            self.covered += 1
        else:
            self.uncovered.append(missing)

    @property
    def full(self) -> bool:
        """No more goals are counted: walking further would only cost time."""
        return self.total >= MAX_GOALS

    @property
    def score(self) -> float | None:
        return round(self.covered / self.total, 4) if self.total else None

    def as_dict(self) -> dict[str, Any]:
        return {"score": self.score, "covered": self.covered, "goals": self.total,
                "uncovered": self.uncovered[:MAX_LISTED], "uncovered_count": len(self.uncovered)}


@dataclass
class Coverage:
    dimensions: dict[str, Dimension]
    undeclared_outputs: list[str] = field(default_factory=list)

    @property
    def total(self) -> float | None:
        scores = [d.score for d in self.dimensions.values() if d.score is not None]
        return round(sum(scores) / len(scores), 4) if scores else None

    def score(self, dimension: str) -> float | None:
        """`total` or one dimension's score."""
        return self.total if dimension == "total" else self.dimensions[dimension].score

    def uncovered(self) -> list[str]:
        return [item for d in self.dimensions.values() for item in d.uncovered]

    def as_dict(self) -> dict[str, Any]:
        return {
            "total": self.total,
            "dimensions": {name: d.as_dict() for name, d in self.dimensions.items()},
            "undeclared_outputs": self.undeclared_outputs[:MAX_LISTED],
        }


def of(tool: Tool) -> Coverage:
    """The coverage of one tool's contract by its examples and checks as they stand now: derived
    once per tool while a `claims.Memo` is active (the tool page, the index and the catalog entry
    read the same record; nothing changes a `Coverage` once made)."""
    return claims.remembered(derive, tool)


def derive(tool: Tool) -> Coverage:
    dims = {name: Dimension(name) for name in DIMENSIONS}
    ran = [e for e in tool.examples if e.status in _RAN]
    undeclared: list[str] = []
    if tool.format_info.coverage_by_capabilities:
        _smart_tool(tool, dims)
    else:
        if tool.schema_ok.get("inputs", isinstance(tool.inputs, dict)) and isinstance(tool.inputs, dict):
            _inputs(tool.inputs, [e.input for e in ran if e.has_input], dims["inputs"])
        if tool.schema_ok.get("outputs", isinstance(tool.outputs, dict)) and isinstance(tool.outputs, dict):
            undeclared = _outputs(tool, ran, dims["outputs"])
        _failure(tool, dims["failure"])
        _effects(tool, ran, dims["effects"])
    return Coverage(dims, undeclared)


# -- inputs ------------------------------------------------------------------------------------------
def _inputs(schema: dict[str, Any], values: list[Any], dim: Dimension) -> None:
    _walk_value(schema, schema, "", values, dim, 0)


def _walk_value(node: Any, root: dict[str, Any], path: str, values: list[Any], dim: Dimension, depth: int) -> None:
    """Goals for the value at `path` (`values`: what the examples gave there, present ones only)."""
    node = _resolve(node, root)
    if not isinstance(node, dict) or depth > MAX_DEPTH or dim.full:
        return
    name = f"`{path}`" if path else "the input"
    if path:
        _value_goals(node, name, values, dim)
    for keyword in ("oneOf", "anyOf"):
        branches = node.get(keyword)
        if isinstance(branches, list):
            for index, branch in enumerate(branches[:MAX_GOALS]):
                dim.goal(any(_matches(branch, root, v) for v in values), f"{keyword} branch {index + 1} of {name} never matched")
                _walk_object(_resolve(branch, root), root, path, values, dim, depth)
    _walk_object(node, root, path, values, dim, depth)
    items = _resolve(node.get("items"), root)
    if isinstance(items, dict) and depth < MAX_DEPTH:
        elements = [item for v in values if isinstance(v, list) for item in v]
        _walk_object(items, root, f"{path}[]", elements, dim, depth + 1)


def _value_goals(node: dict[str, Any], name: str, values: list[Any], dim: Dimension) -> None:
    """Goals for the values a property below the root may take: its const, each enum value, or
    true and false for a plain boolean."""
    if "const" in node:
        dim.goal(any(v == node["const"] for v in values), f"{name} never set to its const value")
    enum = node.get("enum")
    if isinstance(enum, list):
        for option in enum[:MAX_GOALS]:
            if dim.full:
                break
            dim.goal(any(_same(v, option) for v in values), f"enum value {_show(option)} of {name} never used")
    elif _types(node) == {"boolean"} and "const" not in node:
        for flag in (True, False):
            dim.goal(any(v is flag for v in values), f"{name} never {'true' if flag else 'false'}")


def _walk_object(node: Any, root: dict[str, Any], path: str, values: list[Any], dim: Dimension, depth: int) -> None:
    if not isinstance(node, dict) or not isinstance(node.get("properties"), dict) or depth >= MAX_DEPTH:
        return
    required: list[Any] = node["required"] if isinstance(node.get("required"), list) else []
    objects = [v for v in values if isinstance(v, dict)]
    for key, sub in node["properties"].items():
        if dim.full:
            return
        where = f"{path}.{key}" if path else str(key)
        present = [v[key] for v in objects if key in v]
        dim.goal(bool(present), f"`{where}` never set")
        if key not in required:
            dim.goal(any(key not in v for v in objects), f"optional `{where}` never left out")
        _walk_value(sub, root, where, present, dim, depth + 1)


# -- outputs -----------------------------------------------------------------------------------------
def _outputs(tool: Tool, ran: list[Example], dim: Dimension) -> list[str]:
    # An AIP-14 failure is an error envelope, not an output: it says nothing about `outputs`.
    actuals = [run.actual for e in ran if not (tool.format_info.failure_envelope and _documents_failure(e))
               for run in e.runs if run.has_actual]
    declared: set[str] = set()
    for where in _declared_paths(tool.outputs, tool.outputs, "", 0):
        if dim.full:
            break
        declared.add(where)
        dim.goal(any(_at(a, where) is not _MISSING for a in actuals), f"output `{where}` never seen")
    seen: list[str] = []
    open_paths = _open(declared)
    for actual in actuals:
        for where in _key_paths(actual, "", 0):
            if where in declared or where in seen or any(_under(where, p) for p in [*open_paths, *seen]):
                continue
            seen.append(where)
    return sorted(seen)


def _under(where: str, parent: str) -> bool:
    return where.startswith(parent + ".") or where.startswith(parent + "[]")


def _open(declared: set[str]) -> list[str]:
    """Declared paths whose value declares no properties: keys under them are not undeclared."""
    return [d for d in declared if not any(_under(other, d) for other in declared)]


def _declared_paths(node: Any, root: dict[str, Any], path: str, depth: int) -> Iterator[str]:
    node = _resolve(node, root)
    if not isinstance(node, dict) or depth >= MAX_DEPTH:
        return
    for keyword in ("oneOf", "anyOf", "allOf"):
        if isinstance(node.get(keyword), list):
            for branch in node[keyword]:
                yield from _declared_paths(branch, root, path, depth + 1)
    if isinstance(node.get("properties"), dict):
        for key, sub in node["properties"].items():
            where = f"{path}.{key}" if path else str(key)
            yield where
            yield from _declared_paths(sub, root, where, depth + 1)
    items = _resolve(node.get("items"), root)
    if isinstance(items, dict):
        yield from _declared_paths(items, root, f"{path}[]", depth + 1)


def _key_paths(value: Any, path: str, depth: int) -> Iterator[str]:
    if depth >= MAX_DEPTH:
        return
    if isinstance(value, dict):
        for key, sub in value.items():
            where = f"{path}.{key}" if path else str(key)
            yield where
            yield from _key_paths(sub, where, depth + 1)
    elif isinstance(value, list):
        for item in value:
            yield from _key_paths(item, f"{path}[]", depth + 1)


def _at(value: Any, where: str) -> Any:
    """The value at a dotted path (`a.b`, `items[].name`: any element), or _MISSING."""
    values = [value]
    for part in where.split("."):
        name, arrays = part, 0
        while name.endswith("[]"):
            name, arrays = name[:-2], arrays + 1
        values = [v[name] for v in values if isinstance(v, dict) and name in v]
        for _ in range(arrays):
            values = [item for v in values if isinstance(v, list) for item in v]
    return values[0] if values else _MISSING


# -- failure and effects -------------------------------------------------------------------------------
def _documents_failure(example: Example) -> bool:
    return example.has_output and isinstance(example.output, dict) and example.output.get("ok") is False


def _failure(tool: Tool, dim: Dimension) -> None:
    failing = [e for e in tool.examples if _documents_failure(e)]
    if not failing:
        dim.goal(False, "no failing example")
    elif any(e.status == ExampleStatus.PASSED for e in failing):
        dim.goal(True, "")
    elif any(e.status in _RAN for e in failing):
        dim.goal(False, f"failing example {_show(failing[0].title)} did not pass")
    else:
        dim.goal(False, f"failing example {_show(failing[0].title)} never ran")


def _effects(tool: Tool, ran: list[Example], dim: Dimension) -> None:
    mutates = tool.effects.mutates or []
    writes = any(isinstance(m, str) and m.split(":", 1)[0] in ("workspace", "fs") for m in mutates)
    network = any(isinstance(m, str) and m.startswith("network:") for m in mutates) or any(
        r.kind == "network" for r in tool.effects.requires)
    observed = [run.observed for e in ran for run in e.runs if run.observed is not None]
    if writes:
        dim.goal(any(o.writes((WORKSPACE, ELSEWHERE)) for o in observed),
                 "declared writes never observed" if observed else "declared writes never observed (no sandboxed run)")
    if network:
        dim.goal(any(o.connections for o in observed),
                 "declared network never used" if any(o.traced for o in observed) else "declared network never observed (no traced run)")


def _smart_tool(tool: Tool, dims: dict[str, Dimension]) -> None:
    for capability in tool.capabilities:
        dims["inputs"].goal(capability.name in tool.capability_help, f"`{capability.name} --help` never read")
    checks = {c.id: c for c in tool.checks}
    smoke = checks.get("deterministic-capability-runs")
    if tool.descriptor is not None:
        dims["inputs"].goal(smoke is not None and smoke.status == CheckStatus.PASSED, "`deterministic_smoke` run did not pass")
    remedy = checks.get("failure-names-remedy")
    if remedy is None or remedy.status != CheckStatus.PASSED:
        why = "never run" if remedy is None else remedy.status.value
        dims["failure"].goal(False, f"no failure observed naming its remedy (`failure-names-remedy` {why})")
    else:
        dims["failure"].goal(True, "")


# -- schema helpers ------------------------------------------------------------------------------------
def _resolve(node: Any, root: dict[str, Any], hops: int = 8) -> Any:
    """A local `$ref` (`#/...`) followed, a few hops at most; anything else as given."""
    while hops and isinstance(node, dict) and isinstance(node.get("$ref"), str) and node["$ref"].startswith("#"):
        target: Any = root
        for part in node["$ref"][1:].split("/")[1:]:
            part = part.replace("~1", "/").replace("~0", "~")
            target = target.get(part) if isinstance(target, dict) else None
        if not isinstance(target, dict):
            return node
        node, hops = target, hops - 1
    return node


def _types(node: dict[str, Any]) -> set[str]:
    declared = node.get("type")
    if isinstance(declared, str):
        return {declared}
    return {t for t in declared if isinstance(t, str)} if isinstance(declared, list) else set()


def _matches(branch: Any, root: dict[str, Any], value: Any) -> bool:
    if isinstance(branch, dict) and isinstance(root, dict):
        defs = {k: root[k] for k in ("$defs", "definitions") if k in root and k not in branch}
        branch = {**branch, **defs}
    try:
        return not jsonschemas.validate(branch, value, limit=1)
    except Exception:  # noqa: BLE001 - a branch that cannot be checked is not matched
        return False


def _same(value: Any, option: Any) -> bool:
    """JSON equality: `1` is not `true`."""
    return value == option and type(value) is type(option) or (
        isinstance(value, (int, float)) and isinstance(option, (int, float))
        and not isinstance(value, bool) and not isinstance(option, bool) and value == option)


def _show(value: Any) -> str:
    text = value if isinstance(value, str) else repr(value)
    return "`" + text.replace("`", "'")[:80] + "`"
