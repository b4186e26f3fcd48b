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
"""

from __future__ import annotations

import contextvars
import json
import re
import time
import types
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from typing import Any, Iterator

import jsonschema
import referencing
import referencing.exceptions
import referencing.jsonschema
import regex
from jsonschema.exceptions import ValidationError
from jsonschema.validators import validator_for

try:  # a compiled validator for our own schemas (wheels for the usual platforms)
    import jsonschema_rs
except ImportError:  # pragma: no cover - no wheel here: the pure-Python validator alone
    jsonschema_rs = None

DEFAULT_DRAFT = jsonschema.Draft202012Validator

MATCH_TIMEOUT_S = 0.5  # one regular expression against one string
SLOW_PATTERN_TIMEOUT_S = 0.05  # the same, for a pattern that already took too long once
TOTAL_MATCH_BUDGET_S = 2.0  # all matching during one `validate` call


@dataclass
class Problem:
    """A schema or instance problem at `path` (a JSON path inside the checked value)."""

    path: tuple
    message: str
    fatal: bool = True  # False: worth saying, but the schema is still usable
    undecided: bool = False  # the value could not be checked (a pattern ran out of time), not a violation


def _refuse_retrieval(uri: str) -> referencing.Resource:
    # Never fetch: a manifest must not make the build read files or call hosts.
    raise referencing.exceptions.NoSuchResource(ref=uri)


def _accept_anything(uri: str) -> referencing.Resource:
    # Validating values: a reference we refuse to fetch checks nothing rather than failing.
    return referencing.Resource(contents={}, specification=referencing.jsonschema.DRAFT202012)


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
    """`pattern` compiled by the `regex` package (raises `regex.error` and the like when it cannot)."""
    return regex.compile(pattern)


@dataclass
class _Matching:
    """Time spent matching during one validation, and what could not be decided."""

    budget_s: float = TOTAL_MATCH_BUDGET_S
    spent_s: float = 0.0
    slow: set = field(default_factory=set)  # patterns that took too long once: tried again only briefly
    memo: dict = field(default_factory=dict)  # (pattern, text) -> True / False / None (undecided)


_MATCHING: contextvars.ContextVar[_Matching | None] = contextvars.ContextVar("toolcatalog_matching", default=None)


def search(pattern: str, text: str) -> bool | None:
    """Whether `pattern` matches somewhere in `text`; None when that could not be decided in time.

    Raises `regex.error` for a pattern that does not compile.
    """
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


def too_slow(pattern: str, what: str = "the value") -> str:
    return f"pattern {pattern!r} took too long to match (catastrophic backtracking); {what} {_NOT_CHECKED}"


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
            listed = sorted(extras, key=str)
            verb = "was" if len(listed) == 1 else "were"
            yield ValidationError(f"Additional properties are not allowed ({', '.join(map(repr, listed))} {verb} unexpected)")


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


_SAFE_KEYWORDS: dict[str, Any] = {
    "pattern": lambda original: _pattern,
    "patternProperties": lambda original: _pattern_properties,
    "additionalProperties": lambda original: _additional_properties,
    "unevaluatedProperties": _with_safe_matching,
}


@lru_cache(maxsize=None)
def safe_validator_class(cls: type) -> type:
    """`cls` with every keyword that matches regular expressions matching them under a time limit."""
    replaced = {name: _SAFE_KEYWORDS[name](fn) for name, fn in cls.VALIDATORS.items() if name in _SAFE_KEYWORDS}
    return jsonschema.validators.extend(cls, validators=replaced)


def _validator_class(schema: Any) -> tuple[type, Problem | None]:
    if isinstance(schema, dict) and "$schema" in schema:
        declared = schema["$schema"]
        cls = validator_for(schema, default=None) if isinstance(declared, str) else None
        if cls is None:
            return DEFAULT_DRAFT, Problem(("$schema",), f"unknown `$schema` {declared!r}; checked as draft 2020-12", fatal=False)
        return cls, None
    return DEFAULT_DRAFT, None


def _registry(schema: Any, cls: type, retrieve: Any = _refuse_retrieval) -> tuple[referencing.Registry, str]:
    spec = referencing.jsonschema.specification_with(cls.META_SCHEMA.get("$schema", ""), default=referencing.jsonschema.DRAFT202012)
    resource = spec.create_resource(schema)
    base = resource.id() or "urn:toolcatalog:manifest-schema"
    registry = referencing.Registry(retrieve=retrieve).with_resource(base, resource).crawl()
    return registry, base


def check_schema(schema: Any) -> list[Problem]:
    """Problems that make `schema` unusable as a JSON Schema. Empty when it is fine."""
    if not isinstance(schema, dict):
        if isinstance(schema, bool):
            return [Problem((), "a boolean schema accepts everything or nothing; write an object schema")]
        return [Problem((), "must be a JSON Schema object (a mapping)")]
    cls, note = _validator_class(schema)
    problems = [note] if note else []
    try:
        errors = sorted(cls(cls.META_SCHEMA).iter_errors(schema), key=lambda e: list(map(str, e.absolute_path)))
        for error in errors[:20]:
            problems.append(Problem(tuple(error.absolute_path), f"not a valid schema: {error.message}"))
        if errors:
            return problems
        registry, base = _registry(schema, cls)
        resolver = registry.resolver(base)
        for path, ref in _refs(schema, ()):
            try:
                resolved = resolver.lookup(ref)
                if _ref_cycle(resolved):
                    problems.append(
                        Problem(
                            path,
                            f"`$ref` {ref!r} only leads to more `$ref`s and back to itself (a `$ref` cycle), "
                            "so no value can ever be checked against it",
                        )
                    )
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
            try:
                compile_pattern(pattern)
            except (regex.error, re.error, OverflowError, RecursionError) as exc:
                problems.append(
                    Problem(path, f"{pattern!r} is not a regular expression Python can compile ({exc}), so values cannot be checked against it")
                )
    except RecursionError:
        problems.append(Problem((), "schema nests or refers to itself too deeply to check"))
    return problems


def _ref_cycle(resolved: Any, limit: int = 1000) -> bool:
    """True when following `$ref` from `resolved` comes back without ever leaving `$ref`s.

    Such a chain applies to the same value forever (`{"$defs": {"a": {"$ref": "#/$defs/a"}}}`),
    so every validation against it recurses until Python gives up.
    """
    seen: set[int] = set()
    for _ in range(limit):
        contents = resolved.contents
        if not isinstance(contents, dict) or not isinstance(contents.get("$ref"), str):
            return False
        if id(contents) in seen:
            return True
        seen.add(id(contents))
        try:
            resolved = resolved.resolver.lookup(contents["$ref"])
        except referencing.exceptions.Unresolvable:
            return False
    return True


_DATA_KEYWORDS = frozenset({"enum", "const", "examples", "default"})  # values, not schemas
_SCHEMA_MAPS = frozenset({"properties", "patternProperties", "$defs", "definitions", "dependentSchemas"})


def _schema_nodes(value: Any, path: tuple) -> Iterator[tuple[dict[str, Any], tuple]]:
    """Every schema object inside `value`, with its path. Keys of `properties` and the like are
    names (a property may be called `enum`), so their values are always walked as schemas."""
    stack: list[tuple[Any, tuple, bool]] = [(value, path, False)]
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


def _patterns(value: Any, path: tuple) -> Iterator[tuple[tuple, str]]:
    """Every regular expression in a schema: `pattern` values and `patternProperties` keys."""
    for node, where in _schema_nodes(value, path):
        if isinstance(node.get("pattern"), str):
            yield where + ("pattern",), node["pattern"]
        if isinstance(node.get("patternProperties"), dict):
            for key in node["patternProperties"]:
                yield where + ("patternProperties", key), key


def _refs(value: Any, path: tuple) -> Iterator[tuple[tuple, str]]:
    for node, where in _schema_nodes(value, path):
        if isinstance(node.get("$ref"), str):
            yield where + ("$ref",), node["$ref"]


def validate(schema: Any, instance: Any, limit: int = 10) -> list[Problem]:
    """Where `instance` violates `schema`. Call only with a schema `check_schema` accepted."""
    if not isinstance(schema, dict):
        return []
    cls, _ = _validator_class(schema)
    token = _MATCHING.set(_Matching())
    try:
        registry, _base = _registry(schema, cls, _accept_anything)
        validator = safe_validator_class(cls)(schema, registry=registry)
        errors = sorted(validator.iter_errors(instance), key=lambda e: list(map(str, e.absolute_path)))
        return [
            Problem(tuple(e.absolute_path), e.message, undecided=e.message.endswith(_NOT_CHECKED))
            for e in errors[:limit]
        ]
    except RecursionError:
        return [Problem((), "the schema refers to itself without end; the value could not be checked")]
    except referencing.exceptions.Unresolvable as exc:
        return [Problem((), f"a `$ref` could not be resolved: {exc}")]
    except (regex.error, re.error, OverflowError) as exc:  # a `pattern` check_schema could not see (it skips data-like keys)
        return [Problem((), f"a `pattern` in the schema is not a regular expression Python can compile ({exc})")]
    finally:
        _MATCHING.reset(token)


@lru_cache(maxsize=None)
def bundled(name: str) -> dict[str, Any]:
    """One of the schemas shipped in `toolcatalog/schemas/`."""
    text = resources.files("toolcatalog").joinpath("schemas", name).read_text(encoding="utf-8")
    return json.loads(text)


@lru_cache(maxsize=None)
def _bundled_validator(name: str) -> Any:
    schema = bundled(name)
    return jsonschema.Draft202012Validator(schema)


@lru_cache(maxsize=None)
def _bundled_def_validator(name: str, def_name: str) -> Any:
    defs = bundled(name).get("$defs", {})
    return jsonschema.Draft202012Validator({"$defs": defs, **defs[def_name]})


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
