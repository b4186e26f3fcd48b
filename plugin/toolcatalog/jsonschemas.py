"""JSON Schema work on untrusted schemas: meta-validation, instance validation.

A manifest's `inputs`/`outputs` are schemas written by someone else. They are
checked against their own draft (from `$schema`, else 2020-12), every `$ref`
must resolve inside the document (nothing is ever fetched from the network or
the disk), and a schema that recurses forever is reported instead of taking
the build down with a RecursionError.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Any, Iterator

import jsonschema
import referencing
import referencing.exceptions
import referencing.jsonschema
from jsonschema.validators import validator_for

DEFAULT_DRAFT = jsonschema.Draft202012Validator


@dataclass
class Problem:
    """A schema or instance problem at `path` (a JSON path inside the checked value)."""

    path: tuple
    message: str
    fatal: bool = True  # False: worth saying, but the schema is still usable


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
                re.compile(pattern)
            except (re.error, OverflowError, RecursionError) as exc:
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
    try:
        registry, _base = _registry(schema, cls, _accept_anything)
        validator = cls(schema, registry=registry)
        errors = sorted(validator.iter_errors(instance), key=lambda e: list(map(str, e.absolute_path)))
        return [Problem(tuple(e.absolute_path), e.message) for e in errors[:limit]]
    except RecursionError:
        return [Problem((), "the schema refers to itself without end; the value could not be checked")]
    except referencing.exceptions.Unresolvable as exc:
        return [Problem((), f"a `$ref` could not be resolved: {exc}")]
    except re.error as exc:  # a `pattern` check_schema could not see (it skips data-like keys)
        return [Problem((), f"a `pattern` in the schema is not a regular expression Python can compile ({exc})")]


@lru_cache(maxsize=None)
def bundled(name: str) -> dict[str, Any]:
    """One of the schemas shipped in `toolcatalog/schemas/`."""
    text = resources.files("toolcatalog").joinpath("schemas", name).read_text(encoding="utf-8")
    return json.loads(text)


@lru_cache(maxsize=None)
def _bundled_validator(name: str) -> Any:
    schema = bundled(name)
    return jsonschema.Draft202012Validator(schema)


def validate_bundled(name: str, instance: Any) -> list[jsonschema.ValidationError]:
    """Validate against a shipped schema; errors sorted by where they are."""
    errors = _bundled_validator(name).iter_errors(instance)
    return sorted(errors, key=lambda e: (list(map(str, e.absolute_path)), e.message))


def leaf_errors(errors: list[jsonschema.ValidationError]) -> list[jsonschema.ValidationError]:
    """Replace anyOf/oneOf umbrella errors by the most relevant underlying one."""
    out = []
    for error in errors:
        best = jsonschema.exceptions.best_match([error]) if error.context else error
        out.append(best)
    return out
