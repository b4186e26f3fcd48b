"""How much work checking values against an untrusted JSON Schema may do.

JSON Schema validation is not linear in its input. A `$defs` chain where each definition
applies the next one twice (`allOf: [{$ref: next}, {$ref: next}]`) makes 30 definitions apply
2**30 schemas to one value; `uniqueItems` compares every pair of items in `jsonschema`; a
value is checked against every branch of a `oneOf`, every `enum` entry, every subschema the
keywords of each level reach, and `unevaluatedProperties` re-validates what its siblings did.
A 3 KB manifest could keep a build busy for hours. So:

- `Expansion` reads a schema's graph before any value is checked: how many schemas the in-place
  keywords (`$ref`, `$dynamicRef`, `allOf`, `anyOf`, `oneOf`, `not`, `if`/`then`/`else`,
  `dependentSchemas`) apply to one value, counted over the graph (paths, shared definitions
  counted once per path, capped), how deep those chains go, and whether one comes back to
  itself. A schema over the cap is not used to check values ("not checked: ...").
- `Meter` counts work while values are checked: every keyword a validator runs costs units (more
  for keywords that loop over the keyword's value or over the instance), and every error message
  it builds costs its length. The allowance is proportional to the schema plus every value
  checked against it (`allowance_for`), so checking a manifest's examples stays linear in the
  manifest's size; when it runs out the check stops with a "not checked: ..." problem.
- `unique_items` decides `uniqueItems` in linear time with a set of canonical keys, instead of
  comparing every pair.
"""

from __future__ import annotations

import contextvars
import json
import math
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator

from jsonschema.exceptions import ValidationError

# Work units a validation may spend: a floor for small contracts, plus this much per JSON value
# (object, array, string, number ...) of the schema and of every value checked against it. The
# corpus' contracts spend 1 to 2 units per value, a oneOf-heavy one about 5
# (tests/test_redteam_budget.py); a unit is roughly one keyword run by `jsonschema`, about 10 µs,
# so the densest 1 MiB manifest (half a million values) allows about a minute of checking.
FLOOR_UNITS = 50_000
UNITS_PER_VALUE = 16

JsonPath = tuple[Any, ...]  # keys and indexes from a JSON document's root to a value inside it
# Schemas the in-place keywords may apply to one value, and how deep they may nest doing so
# (each level is a few Python frames inside `jsonschema`; Python stops at 1,000).
EXPANSION_FLOOR = 10_000
MAX_INPLACE_DEPTH = 150
MESSAGE_CHARS_PER_UNIT = 256  # building error messages costs too (`repr` of big values, in C: cheap per character)

_INPLACE_LISTS = ("allOf", "anyOf", "oneOf")
_INPLACE_ONE = ("not", "if", "then", "else")
_INPLACE_MAPS = ("dependentSchemas", "dependencies")
_REFS = ("$ref", "$dynamicRef", "$recursiveRef")
# Keywords whose implementation loops over the whole instance whatever it finds (`items` and the
# like descend into each item, and stop early inside `is_valid`: `descend` charges for each).
_PER_ITEM = frozenset({"contains", "unevaluatedItems", "unevaluatedProperties"})
_UNEVALUATED = frozenset({"unevaluatedProperties", "unevaluatedItems"})
_OWN_CHARGE = frozenset({"properties"})  # replaced by one that charges what it loops over (jsonschemas._properties)


class OverBudget(Exception):
    """Checking a value needed more work than its allowance."""


def size(value: Any) -> int:
    """How many JSON values `value` holds (itself, and every key, item and member), without recursion."""
    count, stack = 0, [value]
    while stack:
        item = stack.pop()
        count += 1
        if isinstance(item, dict):
            count += len(item)  # the keys
            stack.extend(item.values())
        elif isinstance(item, (list, tuple)):
            stack.extend(item)
    return count


def allowance_for(values: int) -> int:
    return UNITS_PER_VALUE * values


@dataclass
class Meter:
    """Work allowed and spent while checking values against one schema."""

    allowance: int = FLOOR_UNITS
    spent: int = 0
    expansions: dict[int, int] = field(default_factory=dict)  # id(schema node) -> in-place applications
    _deep: dict[int, int] = field(default_factory=dict)  # id(keyword value) -> size, for enum and const

    def charge(self, units: int) -> None:
        self.spent += units
        if self.spent > self.allowance:
            raise OverBudget

    def deep_size(self, value: Any) -> int:
        # Keyword values live as long as the schema this meter belongs to, so their ids are stable.
        known = self._deep.get(id(value))
        if known is None:
            known = self._deep[id(value)] = size(value)
        return known


METER: contextvars.ContextVar[Meter | None] = contextvars.ContextVar("toolcatalog_schema_meter", default=None)


def _shallow(value: Any) -> int:
    if isinstance(value, (dict, list)):
        return len(value)
    if isinstance(value, str):
        return len(value) // 64  # `$ref` strings are parsed on every use
    return 0


def metered(name: str, keyword: Callable[..., Any]) -> Callable[..., Iterator[ValidationError]]:
    """`keyword` (a jsonschema keyword function) charging the current `METER` for its work."""

    def run(validator: Any, value: Any, instance: Any, schema: Any) -> Iterator[ValidationError]:
        meter = METER.get()
        if meter is not None:
            units = 1 + (0 if name in _OWN_CHARGE else _shallow(value))
            if name in ("enum", "const"):
                units += meter.deep_size(value)  # compared deeply with the instance
            if name in _PER_ITEM and isinstance(instance, (dict, list)):
                units += len(instance) * (meter.expansions.get(id(schema), 1) if name in _UNEVALUATED else 1)
            meter.charge(units)
        for error in keyword(validator, value, instance, schema) or ():
            if meter is not None:
                meter.charge(1 + len(error.message) // MESSAGE_CHARS_PER_UNIT)
            yield error

    run.__name__ = getattr(keyword, "__name__", name)
    return run


def metered_descend(descend: Callable[..., Iterator[ValidationError]]) -> Callable[..., Iterator[ValidationError]]:
    """A validator's `descend` charging one unit per call: `items: {}` over a long array runs no
    keyword for its items, yet descends into every one of them."""

    def run(self: Any, *args: Any, **kwargs: Any) -> Iterator[ValidationError]:
        meter = METER.get()
        if meter is not None:
            meter.charge(1)
        return descend(self, *args, **kwargs)

    return run


# -- uniqueItems in linear time -------------------------------------------------------------------


@dataclass
class _Token:
    text: str  # already canonical text, placed between the members of an object or array


class _Distinct:
    """A key equal to nothing else (NaN is not equal to itself)."""


def canonical(value: Any) -> Any:
    """A hashable key: two values get equal keys exactly when JSON Schema calls them equal
    (`1` and `1.0` are equal, `true` and `1` are not, object members are unordered). Strings
    hash with Python's randomised hash, so no one can make many items collide; numbers become
    text for the same reason (integers' hashes are predictable)."""
    parts: list[Any] = []
    stack: list[Any] = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, _Token):
            parts.append(item.text)
        elif item is True or item is False or item is None:
            parts.append({True: "t", False: "f", None: "n"}[item])
        elif isinstance(item, str):
            parts.append(json.dumps(item, ensure_ascii=False))
        elif isinstance(item, int):
            parts.append(f"i{item:x};")  # hexadecimal: no limit on digits, unlike str()
        elif isinstance(item, float):
            if math.isnan(item):
                return _Distinct()
            if math.isinf(item):
                parts.append("f+inf;" if item > 0 else "f-inf;")
            elif item.is_integer():
                parts.append(f"i{int(item):x};")
            else:
                parts.append(f"f{item!r};")
        elif isinstance(item, dict):
            members = sorted((_key_text(k), v) for k, v in item.items())
            stack.append(_Token("}"))
            for text, member in reversed(members):
                stack.extend((_Token(","), member, _Token(text + ":")))
            stack.append(_Token("{"))
        elif isinstance(item, (list, tuple)):
            stack.append(_Token("]"))
            for member in reversed(item):
                stack.extend((_Token(","), member))
            stack.append(_Token("["))
        else:
            parts.append(f"?{type(item).__name__}:{item!r};")
    return "".join(parts)


def _key_text(key: Any) -> str:
    text = canonical(key)
    return text if isinstance(text, str) else f"?{id(key)}"


def unique_items(validator: Any, unique: Any, instance: Any, schema: Any) -> Iterator[ValidationError]:
    """`uniqueItems` with a set: linear in the array's size (jsonschema's is quadratic for objects)."""
    if not unique or not validator.is_type(instance, "array"):
        return
    meter = METER.get()
    seen: set[Any] = set()
    for item in instance:
        key = canonical(item)
        if meter is not None and isinstance(item, (dict, list)):
            meter.charge(size(item))
        if key in seen:
            yield ValidationError(f"{_short(instance)} has non-unique elements")
            return
        seen.add(key)


def _short(value: Any) -> str:
    text = repr(value) if not isinstance(value, list) or len(value) <= 50 else repr(value[:50])[:-1] + ", ...]"
    return text if len(text) <= 300 else text[:299] + "…"


# -- the graph of in-place keywords ---------------------------------------------------------------


@dataclass
class Expansion:
    """What the in-place keywords of a schema can do to one value."""

    counts: dict[int, int]  # id(schema node) -> schemas applied to a value it is applied to (capped)
    cap: int
    worst: tuple[JsonPath, int] | None = None  # (path, count) of the first node over the cap
    deepest: tuple[JsonPath, int] | None = None  # (path, depth) of the first node nesting too deep
    cycle: JsonPath | None = None  # path of a node whose in-place keywords lead back to it


def inplace_children(node: dict[str, Any], resolve: Callable[[str, str], list[Any]]) -> list[Any]:
    """The schemas applied to the same value as `node`: its in-place subschemas and what its
    references can resolve to (`resolve(keyword, ref)`)."""
    out: list[Any] = []
    for key in _INPLACE_LISTS:
        if isinstance(node.get(key), list):
            out.extend(node[key])
    for key in _INPLACE_ONE:
        if key in node:
            out.append(node[key])
    for key in _INPLACE_MAPS:
        if isinstance(node.get(key), dict):
            out.extend(v for v in node[key].values() if isinstance(v, (dict, bool)))
    for key in _REFS:
        if isinstance(node.get(key), str):
            out.extend(resolve(key, node[key]))
    return [child for child in out if isinstance(child, dict)]


def expand(nodes: list[tuple[dict[str, Any], JsonPath]], resolve: Callable[[str, str], list[Any]], cap: int) -> Expansion:
    """Count, for every schema node, how many schemas the in-place keywords apply to one value
    (itself included), by depth-first search over the graph with memoised counts: linear in
    the number of nodes and references, however many paths there are. Counts stop at `cap` + 1."""
    counts: dict[int, int] = {}
    depths: dict[int, int] = {}
    on_stack: set[int] = set()
    result = Expansion(counts, cap)
    paths = {id(node): path for node, path in nodes}
    for start, _path in nodes:
        if id(start) in counts:
            continue
        stack: list[tuple[dict[str, Any], list[Any], int]] = [(start, inplace_children(start, resolve), 0)]
        on_stack.add(id(start))
        while stack:
            node, kids, index = stack[-1]
            if index < len(kids):
                stack[-1] = (node, kids, index + 1)
                child = kids[index]
                if id(child) in on_stack:
                    if result.cycle is None:
                        result.cycle = paths.get(id(child), paths.get(id(node), ()))
                    continue
                if id(child) not in counts:
                    on_stack.add(id(child))
                    stack.append((child, inplace_children(child, resolve), 0))
                continue
            stack.pop()
            on_stack.discard(id(node))
            # A child still on the stack (a cycle) counts as over the cap.
            total = 1 + sum(counts.get(id(child), cap + 1) for child in kids)
            counts[id(node)] = min(total, cap + 1)
            depths[id(node)] = 1 + max((depths.get(id(child), MAX_INPLACE_DEPTH) for child in kids), default=0)
    for node, path in nodes:
        if result.worst is None and counts.get(id(node), 0) > cap:
            result.worst = (path, counts[id(node)])
        if result.deepest is None and depths.get(id(node), 0) > MAX_INPLACE_DEPTH:
            result.deepest = (path, depths[id(node)])
    return result


# -- regular expressions: compiling is not interruptible --------------------------------------------

# Characters a compiled pattern may spell out once its counted repeats are expanded. The `regex`
# package expands `x{n}` into n copies when it compiles (`a{1000000}` takes a second and a half,
# `(?:a{2000}){2000}`, 17 bytes, seven), and compiling has no time limit.
MAX_PATTERN_REPEATS = 100_000
_QUANTIFIER_AFTER_ESCAPE = frozenset("pPNxuUgk")  # `\p{L}`, `\x{41}`, `\g{1}`: braces that are not repeats


def pattern_size(pattern: str, cap: int = MAX_PATTERN_REPEATS) -> int:
    """An upper bound on the size of `pattern` with its counted repeats (`{n}`, `{m,n}`, `{m,}`)
    expanded, stopping early above `cap`. Linear in the pattern's length, never compiles it."""
    levels: list[int] = [0]  # size of the sequence at each open group
    last = 0  # size of the atom a quantifier would repeat
    i, n = 0, len(pattern)
    while i < n:
        char = pattern[i]
        if char == "\\":
            if i + 2 < n and pattern[i + 1] in _QUANTIFIER_AFTER_ESCAPE and pattern[i + 2] == "{":
                end = pattern.find("}", i + 2)
                i = n if end < 0 else end + 1
            else:
                i += 2
            last = 1
            levels[-1] += 1
            continue
        if char == "[":
            i = _class_end(pattern, i)
            last = 1
            levels[-1] += 1
            continue
        if char == "(":
            levels.append(0)
            last = 0
        elif char == ")":
            group = max(1, levels.pop()) if len(levels) > 1 else 1  # an empty group is still compiled once per repeat
            last = group
            levels[-1] += group
        elif char == "{":
            count, end = _count(pattern, i)
            if end > i:
                levels[-1] += last * (count - 1) if count else -last
                last *= count
                i = end
                if max(levels) > cap or last > cap:
                    return cap + 1
                continue
            last = 1
            levels[-1] += 1
        elif char not in "*+?|":
            last = 1
            levels[-1] += 1
        i += 1
    return sum(levels)


def _class_end(pattern: str, start: int) -> int:
    """The index after the `]` that closes the character class opening at `start`."""
    i = start + 1
    if i < len(pattern) and pattern[i] == "^":
        i += 1
    if i < len(pattern) and pattern[i] == "]":
        i += 1
    while i < len(pattern) and pattern[i] != "]":
        i += 2 if pattern[i] == "\\" else 1
    return i + 1


def _count(pattern: str, start: int) -> tuple[int, int]:
    """The largest count of a `{m}`, `{m,n}` or `{m,}` quantifier at `start`, and the index after
    it; (0, start) when the brace is a literal."""
    end = pattern.find("}", start)
    if end < 0:
        return 0, start
    body = pattern[start + 1:end]
    low, comma, high = body.partition(",")
    low, high = low.strip(), high.strip()
    if not (low.isdigit() or (comma and not low)) or (high and not high.isdigit()) or (not low and not high):
        return 0, start
    count = max(int(low or 0), int(high or 0)) if len(low) < 12 and len(high) < 12 else 10**12
    return count, end + 1
