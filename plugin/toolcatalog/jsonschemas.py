"""JSON Schema work on untrusted schemas: meta-validation, instance validation.

A manifest's `inputs`/`outputs` are schemas written by someone else. They are
checked against their own draft (from `$schema`, else 2020-12), every `$ref`
must resolve inside the document (nothing is ever fetched from the network or
the disk), and a schema that recurses forever is reported instead of taking
the build down with a RecursionError.

Regular expressions (`pattern`, `patternProperties` and the property names
`additionalProperties`/`unevaluatedProperties` test against them) are matched
with the `regex` package under a time limit, never with Python's `re`, which
cannot be interrupted: a pattern such as `^(a|a)*$` can backtrack for hours on
a short string. A match that takes too long is reported as a problem and the
value is left unchecked against that pattern; the build goes on.

Everything else is bounded by `schemawork`: a schema whose `$ref`s and in-place keywords apply
too many schemas to one value is not used (a "not checked: ..." warning on the schema), and a
`Checker` gives all the values checked against one schema a shared budget of work proportional
to their size and the schema's, so checking a manifest's examples stays linear in its size.
`uniqueItems` is decided with a set, `multipleOf` never overflows, `properties` loops over the
smaller of the schema's and the value's members.
"""

from __future__ import annotations

import contextvars
import json
import re
import time
import types
from dataclasses import dataclass, field
from fractions import Fraction
from functools import lru_cache
from importlib import resources
from typing import Any, Callable, Iterator, cast

import jsonschema
import referencing
import referencing.exceptions
import referencing.jsonschema
import regex
from jsonschema.exceptions import ValidationError
from jsonschema.protocols import Validator
from jsonschema.validators import validator_for

from . import ecmapattern, schemawork
from .schemawork import JsonPath

try:  # a compiled validator for our own schemas (wheels for the usual platforms)
    import jsonschema_rs
except ImportError:  # pragma: no cover - no wheel here: the pure-Python validator alone
    jsonschema_rs = None  # type: ignore[assignment]  # tested for None before each use

DEFAULT_DRAFT = jsonschema.Draft202012Validator

MATCH_TIMEOUT_S = 0.5  # one regular expression against one string
SLOW_PATTERN_TIMEOUT_S = 0.05  # the same, for a pattern that already took too long once
TOTAL_MATCH_BUDGET_S = 2.0  # all matching during one `validate` call


@dataclass
class Problem:
    """A schema or instance problem at `path` (a JSON path inside the checked value)."""

    path: JsonPath
    message: str
    fatal: bool = True  # False: worth saying, but the schema is still usable
    undecided: bool = False  # the value could not be checked (a pattern ran out of time), not a violation


def _refuse_retrieval(uri: str) -> referencing.Resource:
    # Never fetch: a manifest must not make the build read files or call hosts.
    raise referencing.exceptions.NoSuchResource(uri)  # its one field, `ref`


def _accept_anything(uri: str) -> referencing.Resource:
    # Validating values: a reference we refuse to fetch checks nothing rather than failing.
    return referencing.jsonschema.DRAFT202012.create_resource({})


def json_path(parts: Any) -> str:
    out = "$"
    for part in parts:
        if isinstance(part, int):
            out += f"[{part}]"
        elif isinstance(part, str) and part.isidentifier():
            out += f".{part}"
        else:
            out += "[" + json.dumps(part, ensure_ascii=False) + "]"
    return out


# -- regular expressions with a time limit -------------------------------------------------------


@lru_cache(maxsize=512)
def compile_pattern(pattern: str) -> Any:
    """`pattern` compiled by the `regex` package with ECMA-262's meanings (ecmapattern.py; raises
    `regex.error` and the like when it cannot)."""
    return regex.compile(ecmapattern.to_regex(pattern))


@dataclass
class _Matching:
    """Time spent matching during one validation (or by one `Checker`), and what could not be decided."""

    budget_s: float = field(default_factory=lambda: TOTAL_MATCH_BUDGET_S)  # read when a validation begins
    spent_s: float = 0.0
    slow: set[str] = field(default_factory=set)  # patterns that took too long once: tried again only briefly
    memo: dict[tuple[str, str], bool | None] = field(default_factory=dict)  # (pattern, text) -> True / False / None (undecided)


_MATCHING: contextvars.ContextVar[_Matching | None] = contextvars.ContextVar("toolcatalog_matching", default=None)


def search(pattern: str, text: str) -> bool | None:
    """Whether `pattern` matches somewhere in `text`; None when that could not be decided in time.

    Raises `regex.error` for a pattern that does not compile. A pattern too costly to compile
    (`schemawork.pattern_size`) is never compiled: None.
    """
    if too_costly(pattern):
        return None
    compiled = compile_pattern(pattern)
    state = _MATCHING.get()
    if state is None:
        state = _Matching()
    memo_key = (pattern, text)
    if memo_key in state.memo:
        return state.memo[memo_key]
    if state.spent_s >= state.budget_s:
        state.memo[memo_key] = None
        return None
    timeout = min(SLOW_PATTERN_TIMEOUT_S if pattern in state.slow else MATCH_TIMEOUT_S, state.budget_s - state.spent_s)
    started = time.monotonic()
    try:
        # concurrent=True: other threads (other tools' runs) go on while this one matches.
        found: bool | None = compiled.search(text, timeout=timeout, concurrent=True) is not None
    except TimeoutError:
        found = None
        state.slow.add(pattern)
    state.spent_s += time.monotonic() - started
    state.memo[memo_key] = found
    return found


_NOT_CHECKED = "was not checked against it"


@lru_cache(maxsize=512)
def too_costly(pattern: str) -> bool:
    """Whether compiling `pattern` would expand more counted repeats than it may (compiling
    cannot be interrupted, unlike matching)."""
    return schemawork.pattern_size(pattern) > schemawork.MAX_PATTERN_REPEATS


def too_costly_message(pattern: str) -> str:
    return (f"pattern {_short(pattern)} repeats its parts more than {schemawork.MAX_PATTERN_REPEATS:,} times in all, "
            "too costly to compile")


def too_slow(pattern: str, what: str = "the value") -> str:
    if too_costly(pattern):
        return f"not checked: {too_costly_message(pattern)}; {what} {_NOT_CHECKED}"
    state = _MATCHING.get()
    if state is not None and pattern not in state.slow:  # this pattern was fast; others used up the time
        return (f"not checked: pattern {pattern!r} was not tried, the {state.budget_s:g} s for matching patterns "
                f"were used up; {what} {_NOT_CHECKED}")
    return f"pattern {pattern!r} took too long to match (catastrophic backtracking); {what} {_NOT_CHECKED}"


def _charge(units: int) -> None:
    meter = schemawork.METER.get()
    if meter is not None:
        meter.charge(units)


class _UndecidedMatches:
    """A stand-in for the `re` module inside jsonschema's property helpers: an undecided match
    counts as a match (the property is covered by `patternProperties`, which reports it)."""

    @staticmethod
    def search(pattern: str, text: str) -> bool:
        return search(pattern, text) is not False


def _pattern(validator: Any, patrn: Any, instance: Any, schema: Any) -> Iterator[ValidationError]:
    if not validator.is_type(instance, "string"):
        return
    found = search(patrn, instance)
    if found is None:
        yield ValidationError(too_slow(patrn))
    elif not found:
        yield ValidationError(f"{instance!r} does not match {patrn!r}")


def _pattern_properties(validator: Any, patterns: Any, instance: Any, schema: Any) -> Iterator[ValidationError]:
    if not validator.is_type(instance, "object"):
        return
    _charge(len(patterns) * len(instance))  # every name against every pattern
    for patrn, subschema in patterns.items():
        for name, value in instance.items():
            found = search(patrn, name)
            if found is None:
                yield ValidationError(too_slow(patrn, f"the property name {name!r}"), path=[name])
            elif found:
                yield from validator.descend(value, subschema, path=name, schema_path=patrn)


def _additional_properties(validator: Any, aP: Any, instance: Any, schema: Any) -> Iterator[ValidationError]:
    if not validator.is_type(instance, "object"):
        return
    properties = schema.get("properties", {})
    patterns = schema.get("patternProperties", {})
    _charge(len(instance) * (1 + len(patterns)))
    extras = {
        name for name in instance
        if name not in properties and not any(search(p, name) is not False for p in patterns)
    }
    if validator.is_type(aP, "object"):
        for extra in extras:
            yield from validator.descend(instance[extra], aP, path=extra)
    elif not aP and extras:
        if patterns:
            verb = "does" if len(extras) == 1 else "do"
            joined = ", ".join(repr(each) for each in sorted(extras))
            listed = ", ".join(repr(each) for each in sorted(patterns))
            yield ValidationError(f"{joined} {verb} not match any of the regexes: {listed}")
        else:
            names = sorted(extras, key=str)
            verb = "was" if len(names) == 1 else "were"
            yield ValidationError(f"Additional properties are not allowed ({', '.join(map(repr, names))} {verb} unexpected)")


_EVALUATED_KEYS = "find_evaluated_property_keys_by_schema"


def _with_safe_matching(keyword: Any) -> Any:
    """jsonschema's `unevaluatedProperties` function, calling a copy of its recursive helper
    (which tests property names against `patternProperties`) whose `re` is ours."""
    helper = keyword.__globals__.get(_EVALUATED_KEYS)
    if not isinstance(helper, types.FunctionType) or "re" not in helper.__globals__:
        return keyword  # a jsonschema laid out differently; tests/test_schema_patterns.py notices
    helper_globals = dict(helper.__globals__)
    safe_helper = types.FunctionType(helper.__code__, helper_globals, helper.__name__, helper.__defaults__, helper.__closure__)
    helper_globals["re"] = _UndecidedMatches
    helper_globals[_EVALUATED_KEYS] = safe_helper  # its recursive calls use the copy too
    keyword_globals = dict(keyword.__globals__)
    keyword_globals[_EVALUATED_KEYS] = safe_helper
    return types.FunctionType(keyword.__code__, keyword_globals, keyword.__name__, keyword.__defaults__, keyword.__closure__)


def _multiple_of(validator: Any, divisor: Any, instance: Any, schema: Any) -> Iterator[ValidationError]:
    """jsonschema's `multipleOf` (floats divided as floats, so `0.5` is a multiple of `0.1`), with
    exact fractions where a float would overflow (`1e308` by `1e-308`, a 400-digit integer by
    `0.5`), which jsonschema lets escape as an OverflowError."""
    if not validator.is_type(instance, "number"):
        return
    try:
        if isinstance(divisor, float) or isinstance(instance, float):
            try:
                quotient = instance / divisor
                failed = int(quotient) != quotient
            except OverflowError:
                failed = (Fraction(instance) / Fraction(divisor)).denominator != 1
        else:
            failed = bool(instance % divisor)
    except (OverflowError, ValueError, ZeroDivisionError, TypeError):
        yield ValidationError(f"{_short(instance)} cannot be divided by {divisor!r}; the value {_NOT_CHECKED}")
        return
    if failed:
        yield ValidationError(f"{_short(instance)} is not a multiple of {divisor}")


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 120 else text[:119] + "…"


def _properties(validator: Any, properties: Any, instance: Any, schema: Any) -> Iterator[ValidationError]:
    """`properties`, looping over whichever is smaller, the schema's names or the value's: a
    schema with 50,000 properties costs nothing per example that sets two of them."""
    if not validator.is_type(instance, "object"):
        return
    _charge(min(len(properties), len(instance)))
    if len(instance) < len(properties):
        names = [name for name in instance if name in properties]
    else:
        names = [name for name in properties if name in instance]
    for name in names:
        yield from validator.descend(instance[name], properties[name], path=name, schema_path=name)


# Keywords replaced wherever a value is checked, our schemas included: linear, and never raising.
_LINEAR_KEYWORDS: dict[str, Any] = {
    "uniqueItems": lambda original: schemawork.unique_items,
    "multipleOf": lambda original: _multiple_of,
}

_SAFE_KEYWORDS: dict[str, Any] = {
    **_LINEAR_KEYWORDS,
    "pattern": lambda original: _pattern,
    "patternProperties": lambda original: _pattern_properties,
    "additionalProperties": lambda original: _additional_properties,
    "unevaluatedProperties": _with_safe_matching,
    # draft 3 has its own `properties` (with `required: true` inside): left as it is
    "properties": lambda original: _properties if getattr(original, "__module__", "") == "jsonschema._keywords" else original,
}


# `extend` has no annotations in jsonschema's stubs; it returns a validator class.
_extend: Callable[..., type[Validator]] = jsonschema.validators.extend


@lru_cache(maxsize=None)
def linear_validator_class(cls: type[Validator]) -> type[Validator]:
    """`cls` deciding `uniqueItems` in linear time and `multipleOf` without overflowing."""
    replaced = {name: _LINEAR_KEYWORDS[name](fn) for name, fn in cls.VALIDATORS.items() if name in _LINEAR_KEYWORDS}
    return _extend(cls, validators=replaced)


@lru_cache(maxsize=None)
def safe_validator_class(cls: type[Validator]) -> type[Validator]:
    """`cls` for schemas written by someone else: every keyword that matches regular expressions
    matches them under a time limit, and every keyword charges the current meter for its work."""
    replaced = {name: _SAFE_KEYWORDS[name](fn) for name, fn in cls.VALIDATORS.items() if name in _SAFE_KEYWORDS}
    keywords = {**cls.VALIDATORS, **replaced}
    safe = _extend(cls, validators={name: schemawork.metered(name, fn) for name, fn in keywords.items()})
    # Our own class (extend made it): nobody else's changes. `descend` is not in the Validator protocol.
    cast(Any, safe).descend = schemawork.metered_descend(cast(Any, safe).descend)
    return safe


# What `validator_for` returns for a `$schema` it does not know (its stubs want a class there).
_UNKNOWN_DRAFT: Any = None


def _validator_class(schema: Any) -> tuple[type[Validator], Problem | None]:
    if isinstance(schema, dict) and "$schema" in schema:
        declared = schema["$schema"]
        cls: type[Validator] | None = validator_for(schema, default=_UNKNOWN_DRAFT) if isinstance(declared, str) else None
        if cls is None:
            return DEFAULT_DRAFT, Problem(("$schema",), f"unknown `$schema` {declared!r}; checked as draft 2020-12", fatal=False)
        return cls, None
    return DEFAULT_DRAFT, None


def _registry(schema: Any, cls: type[Validator], retrieve: Any = _refuse_retrieval) -> tuple[referencing.Registry, str]:
    spec = referencing.jsonschema.specification_with(cls.META_SCHEMA.get("$schema", ""), default=referencing.jsonschema.DRAFT202012)
    resource = spec.create_resource(schema)
    base = resource.id() or "urn:toolcatalog:manifest-schema"
    # referencing's classes declare their fields with attrs in a form mypy does not read.
    registry = referencing.Registry(retrieve=retrieve).with_resource(base, resource).crawl()  # type: ignore[call-arg]
    return registry, base


@lru_cache(maxsize=None)
def _fast_meta_validator(cls: type[Validator]) -> Any:
    if jsonschema_rs is None:
        return None
    try:
        return jsonschema_rs.validator_for(cls.META_SCHEMA, validate_formats=False)
    except Exception:  # noqa: BLE001 - a meta-schema it cannot compile: the pure-Python validator decides
        return None


def _meta_errors(cls: type[Validator], schema: dict[str, Any]) -> list[ValidationError]:
    """Where `schema` breaks its draft's meta-schema, sorted by where. As `validate_bundled` does,
    the compiled validator (jsonschema-rs, some fifty times faster on a manifest's schema: most of
    what parsing a manifest cost) answers first, and only what it rejects or cannot take goes to
    `jsonschema`, whose errors are the ones reported (tests/test_runner_checks.py holds the two to
    the same verdicts)."""
    fast = _fast_meta_validator(cls)
    if fast is not None:
        try:
            if fast.is_valid(schema):
                return []
        except Exception:  # noqa: BLE001 - a value it cannot take (a key that is no string, a NaN): the full check decides
            pass
    return sorted(linear_validator_class(cls)(cls.META_SCHEMA).iter_errors(schema), key=lambda e: list(map(str, e.absolute_path)))


def check_schema(schema: Any) -> list[Problem]:
    """Problems that make `schema` unusable as a JSON Schema. Empty when it is fine."""
    if not isinstance(schema, dict):
        if isinstance(schema, bool):
            return [Problem((), "a boolean schema accepts everything or nothing; write an object schema")]
        return [Problem((), "must be a JSON Schema object (a mapping)")]
    cls, note = _validator_class(schema)
    problems = [note] if note else []
    try:
        errors = _meta_errors(cls, schema)
        for error in errors[:20]:
            problems.append(Problem(tuple(error.absolute_path), f"not a valid schema: {error.message}"))
        if errors:
            return problems
        registry, base = _registry(schema, cls)
        resolver = registry.resolver(base)
        chains: dict[int, bool] = {}
        for path, ref in _refs(schema, ()):
            try:
                resolved = resolver.lookup(ref)
                if _ref_cycle(resolved, chains):
                    problems.append(
                        Problem(
                            path,
                            f"`$ref` {ref!r} only leads to more `$ref`s and back to itself (a `$ref` cycle), "
                            "so no value can ever be checked against it",
                        )
                    )
            except ValueError as exc:  # not a URI reference at all (`http://[`): urljoin refuses it
                problems.append(Problem(path, f"`$ref` {ref!r} is not a valid URI reference ({exc})"))
            except referencing.exceptions.Unresolvable:
                if ref.startswith("#"):
                    problems.append(Problem(path, f"`$ref` {ref!r} points at nothing in this schema"))
                else:
                    problems.append(
                        Problem(
                            path,
                            f"`$ref` {ref!r} points outside the manifest and is never fetched, so values there are "
                            "not checked; bundle the referenced schema under `$defs` to have them checked",
                            fatal=False,
                        )
                    )
        for path, pattern in _patterns(schema, ()):
            if too_costly(pattern):
                problems.append(Problem(path, f"not checked: {too_costly_message(pattern)}; no value is checked against it", fatal=False))
                continue
            try:
                compile_pattern(pattern)
            except (regex.error, re.error, OverflowError, RecursionError) as exc:
                problems.append(
                    Problem(path, f"{pattern!r} is not a regular expression Python can compile ({exc}), so values cannot be checked against it")
                )
        if not any(problem.fatal for problem in problems):
            refusal = _refusal(_expansion(schema, resolver))
            if refusal is not None:
                problems.append(Problem(refusal[0], f"not checked: {refusal[1]}; no value is checked against it", fatal=False))
    except RecursionError:
        problems.append(Problem((), "schema nests or refers to itself too deeply to check"))
    return problems


def _ref_cycle(resolved: Any, known: dict[int, bool]) -> bool:
    """True when following `$ref` from `resolved` comes back without ever leaving `$ref`s.

    Such a chain applies to the same value forever (`{"$defs": {"a": {"$ref": "#/$defs/a"}}}`),
    so every validation against it recurses until Python gives up. `known` remembers the
    answer for every schema on a chain already followed, so the `$ref`s of a schema cost the
    length of its chains once, not once per `$ref` on them (a long chain is left to the depth
    check of `_expansion`).
    """
    chain: dict[int, None] = {}
    while True:
        contents = resolved.contents
        if not isinstance(contents, dict) or not isinstance(contents.get("$ref"), str):
            answer = False
            break
        if id(contents) in known:
            answer = known[id(contents)]
            break
        if id(contents) in chain:
            answer = True
            break
        chain[id(contents)] = None
        try:
            resolved = resolved.resolver.lookup(contents["$ref"])
        except referencing.exceptions.Unresolvable:
            answer = False
            break
    known.update(dict.fromkeys(chain, answer))
    return answer


def _expansion(schema: dict[str, Any], resolver: Any) -> schemawork.Expansion:
    """The in-place expansion of `schema` (see `schemawork.expand`), references resolved inside
    the document; a `$dynamicRef` may land on any schema with its dynamic anchor."""
    nodes = list(_schema_nodes(schema, ()))
    dynamic: dict[str, list[Any]] = {}
    recursive: list[Any] = []
    for node, _path in nodes:
        if isinstance(node.get("$dynamicAnchor"), str):
            dynamic.setdefault(node["$dynamicAnchor"], []).append(node)
        if node.get("$recursiveAnchor") is True:
            recursive.append(node)

    def resolve(keyword: str, ref: str) -> list[Any]:
        found: list[Any] = []
        try:
            found.append(resolver.lookup(ref).contents)
        except (referencing.exceptions.Unresolvable, ValueError):
            pass
        if keyword == "$dynamicRef":
            found.extend(dynamic.get(ref.rpartition("#")[2], ()))
        elif keyword == "$recursiveRef":
            found.extend(recursive)
        return found

    cap = max(schemawork.EXPANSION_FLOOR, schemawork.size(schema))
    return schemawork.expand(nodes, resolve, cap)


def _refusal(expansion: schemawork.Expansion) -> tuple[JsonPath, str] | None:
    """Where and why values must not be checked against a schema with this expansion."""
    if expansion.cycle is not None:
        return expansion.cycle, (
            "its in-place keywords (`$ref`, `allOf`, `anyOf`, `oneOf`, `not`, `if`/`then`/`else`, `dependentSchemas`) "
            "lead back to it on the same value, so checking a value could recurse without end"
        )
    if expansion.worst is not None:
        return expansion.worst[0], (
            f"it applies more than {expansion.cap:,} schemas to one value, the budget for a schema of its size "
            "(its `$ref`s and in-place keywords reach the same definitions along ever more paths)"
        )
    if expansion.deepest is not None:
        return expansion.deepest[0], (
            f"its `$ref`s and in-place keywords nest more than {schemawork.MAX_INPLACE_DEPTH} schemas deep on one value, "
            "deeper than the validator can follow"
        )
    return None


_DATA_KEYWORDS = frozenset({"enum", "const", "examples", "default"})  # values, not schemas
_SCHEMA_MAPS = frozenset({"properties", "patternProperties", "$defs", "definitions", "dependentSchemas"})


def _schema_nodes(value: Any, path: JsonPath) -> Iterator[tuple[dict[str, Any], JsonPath]]:
    """Every schema object inside `value`, with its path. Keys of `properties` and the like are
    names (a property may be called `enum`), so their values are always walked as schemas."""
    stack: list[tuple[Any, JsonPath, bool]] = [(value, path, False)]
    while stack:
        node, where, names = stack.pop()
        if isinstance(node, dict):
            if names:
                stack.extend((child, where + (key,), False) for key, child in node.items())
                continue
            yield node, where
            for key, child in node.items():
                if key not in _DATA_KEYWORDS:
                    stack.append((child, where + (key,), key in _SCHEMA_MAPS))
        elif isinstance(node, list):
            stack.extend((child, where + (index,), False) for index, child in enumerate(node))


def _patterns(value: Any, path: JsonPath) -> Iterator[tuple[JsonPath, str]]:
    """Every regular expression in a schema: `pattern` values and `patternProperties` keys."""
    for node, where in _schema_nodes(value, path):
        if isinstance(node.get("pattern"), str):
            yield where + ("pattern",), node["pattern"]
        if isinstance(node.get("patternProperties"), dict):
            for key in node["patternProperties"]:
                yield where + ("patternProperties", key), key


def _refs(value: Any, path: JsonPath) -> Iterator[tuple[JsonPath, str]]:
    for node, where in _schema_nodes(value, path):
        if isinstance(node.get("$ref"), str):
            yield where + ("$ref",), node["$ref"]


MAX_ERRORS = 1000  # violations collected from one value before sorting the first `limit` of them



@dataclass(frozen=True)
class Compiled:
    """What checking values against one schema needs that depends on the schema alone."""

    schema_size: int
    refused: str | None  # why values are not checked against it; None: `validator` checks them
    counts: dict[int, int]  # `schemawork.Expansion.counts`, read by the meters (never written)
    validator: Any


def compile_schema(schema: dict[str, Any]) -> Compiled:
    """The registry, in-place expansion and validator of `schema` (one `check_schema` accepted),
    or why values must not be checked against it."""
    schema_size = schemawork.size(schema)
    cls, _ = _validator_class(schema)
    try:
        registry, base = _registry(schema, cls, _accept_anything)
        expansion = _expansion(schema, registry.resolver(base))
    except RecursionError:
        return Compiled(schema_size, "the schema nests too deeply to be read", {}, None)
    except referencing.exceptions.Unresolvable as exc:
        return Compiled(schema_size, f"a `$ref` could not be resolved: {exc}", {}, None)
    refusal = _refusal(expansion)
    if refusal is not None:
        at = f" at {json_path(refusal[0])}" if refusal[0] else ""
        return Compiled(schema_size, f"the schema{at} is not used to check values: {refusal[1]}", {}, None)
    return Compiled(schema_size, None, expansion.counts, safe_validator_class(cls)(schema, registry=registry))


_COMPILED: dict[int, tuple[Any, Compiled]] = {}  # id(schema) -> (that schema, what `Checker.reusing` compiled)
_COMPILED_MAX = 512  # schema objects kept compiled at once (all dropped when full)


def forget_compiled() -> None:
    """Let the schemas compiled for `Checker.reusing` and the compiled patterns go (the MkDocs
    plugin, once the catalog is let go: they are the catalog's schemas and patterns)."""
    _COMPILED.clear()
    compile_pattern.cache_clear()
    too_costly.cache_clear()


class Checker:
    """Checks values against one schema (one `check_schema` accepted), all of them sharing one
    budget: `schemawork.FLOOR_UNITS` plus `schemawork.UNITS_PER_VALUE` for every JSON value of
    the schema and of each value checked, and `TOTAL_MATCH_BUDGET_S` of pattern matching. Checking
    every example of a manifest with one checker therefore takes time linear in the manifest's
    size, whatever the schema says; what the budget cannot cover is reported "not checked"."""

    def __init__(self, schema: Any, compiled: "Compiled | None" = None):
        """`compiled`: `compile_schema(schema)` made earlier (see `reusing`); made here without it."""
        self.schema = schema
        self.refused: str | None = None
        self.validator: Any = None
        if not isinstance(schema, dict):
            return
        made = compiled if compiled is not None else compile_schema(schema)
        self.schema_size = made.schema_size
        self.meter = schemawork.Meter(allowance=schemawork.FLOOR_UNITS + schemawork.allowance_for(self.schema_size))
        self.matching = _Matching()
        self.refused = made.refused
        if made.refused is None:
            self.meter.expansions = made.counts
            self.validator = made.validator

    @classmethod
    def reusing(cls, schema: Any) -> "Checker":
        """A checker exactly like `Checker(schema)` (its own budget, its own matching time and
        memo), with what depends only on the schema (its registry, its expansion, the validator)
        compiled once per schema object and reused (`compile_schema`): for values checked one at
        a time against a schema the build does not change, such as each run's output against its
        tool's `outputs`."""
        if not isinstance(schema, dict):
            return cls(schema)
        held = _COMPILED.get(id(schema))
        if held is None or held[0] is not schema:
            held = (schema, compile_schema(schema))
            if len(_COMPILED) >= _COMPILED_MAX:
                _COMPILED.clear()
            _COMPILED[id(schema)] = held  # the entry holds the schema, so its id is not reused meanwhile
        return cls(schema, held[1])

    def validate(self, instance: Any, limit: int = 10) -> list[Problem]:
        """Where `instance` violates the schema; "not checked" problems (undecided) for what the
        budget did not cover, after the violations found until then."""
        if not isinstance(self.schema, dict):
            return []
        if self.refused is not None:
            return [Problem((), f"not checked: {self.refused}; the value was not checked against it", undecided=True)]
        self.meter.allowance += schemawork.allowance_for(schemawork.size(instance))
        errors: list[ValidationError] = []
        stopped: Problem | None = None
        matching, meter = _MATCHING.set(self.matching), schemawork.METER.set(self.meter)
        try:
            for error in self.validator.iter_errors(instance):
                errors.append(error)
                if len(errors) >= MAX_ERRORS:
                    break
        except schemawork.OverBudget:
            stopped = Problem((), (
                f"not checked: checking the value needed more than the budget of {self.meter.allowance:,} steps "
                f"(for a schema of {self.schema_size:,} JSON values and the values checked against it), so the check "
                "stopped before the end; the rest of the value was not checked against it"
            ), undecided=True)
        except RecursionError:
            stopped = Problem((), "not checked: the schema nests (through its `$ref`s) deeper than the validator can follow "
                                  "on this value; the value was not checked against it", undecided=True)
        except OverflowError as exc:  # arithmetic on a number no float can hold, in a keyword not replaced here
            stopped = Problem((), f"not checked: a number in the value is too large to compare ({exc}); the value {_NOT_CHECKED}", undecided=True)
        except (referencing.exceptions.Unresolvable, ValueError) as exc:  # a reference outside the manifest (never fetched)
            return [Problem((), f"not checked: a `$ref` could not be resolved ({exc}); the value {_NOT_CHECKED}", undecided=True)]
        except (regex.error, re.error) as exc:  # a `pattern` check_schema could not see (it skips data-like keys)
            return [Problem((), f"a `pattern` in the schema is not a regular expression Python can compile ({exc})")]
        finally:
            schemawork.METER.reset(meter)
            _MATCHING.reset(matching)
        errors.sort(key=lambda e: list(map(str, e.absolute_path)))
        problems = [
            Problem(tuple(e.absolute_path), e.message, undecided=e.message.endswith(_NOT_CHECKED))
            for e in errors[:limit]
        ]
        if stopped is not None:
            problems = problems[: max(limit - 1, 0)] + [stopped]
        return problems


def validate(schema: Any, instance: Any, limit: int = 10) -> list[Problem]:
    """Where `instance` violates `schema`. Call only with a schema `check_schema` accepted.
    Several values against one schema: use one `Checker`, which reads the schema once."""
    return Checker(schema).validate(instance, limit)


@lru_cache(maxsize=None)
def bundled(name: str) -> dict[str, Any]:
    """One of the schemas shipped in `toolcatalog/schemas/`."""
    text = resources.files("toolcatalog").joinpath("schemas").joinpath(name).read_text(encoding="utf-8")
    schema: dict[str, Any] = json.loads(text)
    return schema


@lru_cache(maxsize=None)
def _bundled_validator(name: str) -> Any:
    schema = bundled(name)
    return linear_validator_class(jsonschema.Draft202012Validator)(schema)


@lru_cache(maxsize=None)
def _bundled_def_validator(name: str, def_name: str) -> Any:
    defs = bundled(name).get("$defs", {})
    return linear_validator_class(jsonschema.Draft202012Validator)({"$defs": defs, **defs[def_name]})


def validate_bundled_def(name: str, def_name: str, instance: Any, limit: int = 10) -> list[Problem]:
    """Where `instance` violates the definition `def_name` of a shipped schema. The validator is
    built once (building one per manifest made harvesting thousands of drivers slow)."""
    errors = sorted(_bundled_def_validator(name, def_name).iter_errors(instance), key=lambda e: list(map(str, e.absolute_path)))
    return [Problem(tuple(e.absolute_path), e.message) for e in errors[:limit]]


@lru_cache(maxsize=None)
def _fast_validator(name: str) -> Any:
    if jsonschema_rs is None:
        return None
    try:
        return jsonschema_rs.validator_for(bundled(name), validate_formats=False)
    except Exception:  # noqa: BLE001 - a schema it cannot compile: the pure-Python validator decides
        return None


def validate_bundled(name: str, instance: Any) -> list[jsonschema.ValidationError]:
    """Validate against a shipped schema; errors sorted by where they are.

    A compiled validator (jsonschema-rs) answers first, about a hundred times faster: a finished
    catalog of 1,000 tools is checked in milliseconds instead of seconds. Only what it finds
    invalid (or cannot take) goes to `jsonschema`, which gives the errors, so the answer is
    always `jsonschema`'s wherever the two could differ in its favour (tests/test_scale_outputs.py
    holds them to the same verdicts).
    """
    fast = _fast_validator(name)
    if fast is not None:
        try:
            if fast.is_valid(instance):
                return []
        except Exception:  # noqa: BLE001 - a value it cannot take: the full check decides
            pass
    errors = _bundled_validator(name).iter_errors(instance)
    return sorted(errors, key=lambda e: (list(map(str, e.absolute_path)), e.message))


def leaf_errors(errors: list[jsonschema.ValidationError]) -> list[jsonschema.ValidationError]:
    """Replace anyOf/oneOf umbrella errors by the most relevant underlying one."""
    out = []
    for error in errors:
        best = jsonschema.exceptions.best_match([error]) if error.context else error
        out.append(best)
    return out
