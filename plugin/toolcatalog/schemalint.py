"""Schema lint: mistakes people really make in a manifest's `inputs`/`outputs`, as warnings.

A schema can be valid JSON Schema and still not say what its author meant. `lint(schema)` walks
the schema's subschemas (properties, items, combinators, `$defs`, ...) and reports:

- `schema-prose-keyword`: a key that looks like prose (a space, or a trailing period) where
  keywords go. The classic cause is YAML flow style: `{type: integer, description: Unicode code
  points, not bytes.}` is a description "Unicode code points" plus a keyword `"not bytes.": null`.
- `schema-null-keyword`: an unknown keyword whose value is `null` (a key with nothing after it).
- `schema-required-undeclared`: `required` names a property `properties` does not declare
  (only where `properties` is declared and no `patternProperties`/`additionalProperties` schema
  could supply it).
- `schema-enum-type` / `schema-const-type`: an `enum`/`const` value the declared `type` rejects.
- `schema-default-invalid` / `schema-example-invalid`: a `default` or `examples` value its own
  schema rejects (checked with `jsonschemas.Checker`, so within its budget; a subschema that
  refers elsewhere with `$ref` is not checked on its own).

The walk is iterative and bounded (MAX_NODES subschemas, MAX_DEPTH levels, MAX_VALUE_CHECKS
default/example checks, MAX_FINDINGS findings), so a hostile schema costs time and memory linear
in its size at most, and never raises.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterator

from . import jsonschemas

MAX_NODES = 5000
MAX_DEPTH = 64
MAX_VALUE_CHECKS = 64
MAX_FINDINGS = 50

KEY_CODES = ("schema-prose-keyword", "schema-null-keyword")  # findings about a key of a schema (their path ends with it)
CODES = (
    "schema-prose-keyword", "schema-null-keyword", "schema-required-undeclared", "schema-enum-type",
    "schema-const-type", "schema-default-invalid", "schema-example-invalid",
)

# Keywords of JSON Schema drafts 4 to 2020-12 (core, applicator, validation, metadata, format,
# content, unevaluated) and the OpenAPI-style annotations manifests use. A key outside this set
# is only reported when it also looks wrong (null value, prose).
KEYWORDS = frozenset({
    "$schema", "$id", "id", "$ref", "$defs", "definitions", "$anchor", "$dynamicRef", "$dynamicAnchor", "$recursiveRef",
    "$recursiveAnchor", "$vocabulary", "$comment", "allOf", "anyOf", "oneOf", "not", "if", "then", "else",
    "dependentSchemas", "dependencies", "prefixItems", "items", "additionalItems", "contains", "properties",
    "patternProperties", "additionalProperties", "propertyNames", "unevaluatedItems", "unevaluatedProperties",
    "type", "enum", "const", "multipleOf", "maximum", "exclusiveMaximum", "minimum", "exclusiveMinimum",
    "maxLength", "minLength", "pattern", "maxItems", "minItems", "uniqueItems", "maxContains", "minContains",
    "maxProperties", "minProperties", "required", "dependentRequired", "title", "description", "default",
    "deprecated", "readOnly", "writeOnly", "examples", "example", "format", "contentEncoding", "contentMediaType",
    "contentSchema", "nullable", "discriminator", "xml", "externalDocs",
})
_ONE = ("additionalProperties", "items", "additionalItems", "contains", "propertyNames", "not", "if", "then", "else",
        "unevaluatedItems", "unevaluatedProperties", "contentSchema")
_MANY = ("allOf", "anyOf", "oneOf", "prefixItems")
_NAMED = ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas")
_TYPES: dict[str, type] = {"string": str, "object": dict, "array": list, "null": type(None)}


@dataclass
class Finding:
    path: tuple[str | int, ...]  # inside the schema, to the offending key or value
    message: str
    code: str


def _children(node: dict[str, Any], path: tuple[str | int, ...]) -> Iterator[tuple[Any, tuple[str | int, ...]]]:
    for key in _ONE:
        if isinstance(node.get(key), dict):
            yield node[key], (*path, key)
    for key in _MANY + ("items",):
        value = node.get(key)
        if isinstance(value, list):
            for index, item in enumerate(value):
                yield item, (*path, key, index)
    for key in _NAMED:
        value = node.get(key)
        if isinstance(value, dict):
            for name, item in value.items():
                yield item, (*path, key, str(name))


def _nodes(schema: dict[str, Any]) -> Iterator[tuple[dict[str, Any], tuple[str | int, ...]]]:
    """Every subschema (mappings only), in document order, within the bounds."""
    stack: list[tuple[Any, tuple[str | int, ...], int]] = [(schema, (), 0)]
    seen = 0
    while stack and seen < MAX_NODES:
        node, path, depth = stack.pop()
        if not isinstance(node, dict):
            continue
        seen += 1
        yield node, path
        if depth < MAX_DEPTH:
            stack.extend((child, where, depth + 1) for child, where in reversed(list(_children(node, path))))


def _prose(key: str) -> bool:
    text = key.strip()
    return bool(text) and (" " in text or text.endswith("."))


def _keyword_findings(node: dict[str, Any], path: tuple[str | int, ...]) -> Iterator[Finding]:
    for key, value in node.items():
        name = str(key)
        if name in KEYWORDS or name.startswith("x-"):
            continue
        if _prose(name):
            hint = (" (in a YAML flow mapping, `{…, description: a, b.}` ends the description at the comma: "
                    "quote the description)") if value is None else ""
            yield Finding((*path, name), f"`{name}` looks like prose, not a schema keyword{hint}", "schema-prose-keyword")
        elif value is None:
            yield Finding((*path, name), f"`{name}` is not a schema keyword and has no value (`null`): a typo or a key left empty?",
                          "schema-null-keyword")


def _required_findings(node: dict[str, Any], path: tuple[str | int, ...]) -> Iterator[Finding]:
    required, properties = node.get("required"), node.get("properties")
    if not isinstance(required, list) or not isinstance(properties, dict):
        return
    if node.get("patternProperties") or isinstance(node.get("additionalProperties"), dict):
        return
    for index, name in enumerate(required):
        if isinstance(name, str) and name not in properties:
            yield Finding((*path, "required", index), f"`required` names `{name}`, which `properties` does not declare",
                          "schema-required-undeclared")


def _declared_types(node: dict[str, Any]) -> set[str] | None:
    declared = node.get("type")
    if isinstance(declared, str):
        return {declared}
    if isinstance(declared, list) and all(isinstance(t, str) for t in declared):
        return set(declared)
    return None


def _fits(value: Any, types: set[str]) -> bool:
    if isinstance(value, bool):
        return "boolean" in types
    if isinstance(value, int):
        return bool(types & {"integer", "number"})
    if isinstance(value, float):
        return "number" in types or ("integer" in types and value.is_integer())
    for kind, python in _TYPES.items():
        if isinstance(value, python):
            return kind in types
    return True


def _short(value: Any) -> str:
    text = repr(value) if not isinstance(value, str) else f'"{value}"'
    return text if len(text) <= 40 else text[:39] + "…"


def _type_findings(node: dict[str, Any], path: tuple[str | int, ...]) -> Iterator[Finding]:
    types = _declared_types(node)
    if types is None or not types <= {"string", "integer", "number", "boolean", "object", "array", "null"}:
        return
    shown = " or ".join(sorted(types))
    if isinstance(node.get("enum"), list):
        for index, value in enumerate(node["enum"][:MAX_NODES]):
            if not _fits(value, types):
                yield Finding((*path, "enum", index), f"`enum` value {_short(value)} is not of the declared type {shown}", "schema-enum-type")
    if "const" in node and not _fits(node["const"], types):
        yield Finding((*path, "const"), f"`const` {_short(node['const'])} is not of the declared type {shown}", "schema-const-type")


def _refers(node: Any, budget: list[int]) -> bool:
    """Whether `node` holds a `$ref`/`$dynamicRef` anywhere (bounded by `budget`, a one-item counter)."""
    stack = [node]
    while stack:
        budget[0] -= 1
        if budget[0] < 0:
            return True  # too big to tell: treated as referring (not checked)
        item = stack.pop()
        if isinstance(item, dict):
            if "$ref" in item or "$dynamicRef" in item or "$recursiveRef" in item:
                return True
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return False


def _value_findings(node: dict[str, Any], path: tuple[str | int, ...], checks: list[int]) -> Iterator[Finding]:
    values: list[tuple[Any, tuple[str | int, ...], str, str]] = []
    if "default" in node:
        values.append((node["default"], (*path, "default"), "`default`", "schema-default-invalid"))
    if isinstance(node.get("examples"), list):
        for index, value in enumerate(node["examples"][:MAX_VALUE_CHECKS]):
            values.append((value, (*path, "examples", index), f"`examples[{index}]`", "schema-example-invalid"))
    if not values or checks[0] <= 0 or _refers(node, [MAX_NODES]):
        return
    schema = {k: v for k, v in node.items() if k not in ("default", "examples")}
    checker = jsonschemas.Checker(schema)
    for value, where, label, code in values:
        if checks[0] <= 0:
            return
        checks[0] -= 1
        problems = [p for p in checker.validate(value, limit=1) if not p.undecided]
        if problems:
            at = f" at {jsonschemas.json_path(problems[0].path)}" if problems[0].path else ""
            yield Finding(where, f"{label} {_short(value)} violates its own schema{at}: {problems[0].message}", code)


def lint(schema: Any) -> list[Finding]:
    """Findings for one manifest schema (empty for anything that is not a mapping). Never raises."""
    if not isinstance(schema, dict):
        return []
    findings: list[Finding] = []
    checks = [MAX_VALUE_CHECKS]
    try:
        for node, path in _nodes(schema):
            for found in (_keyword_findings(node, path), _required_findings(node, path), _type_findings(node, path),
                          _value_findings(node, path, checks)):
                for finding in found:
                    findings.append(finding)
                    if len(findings) >= MAX_FINDINGS:
                        return findings
    except RecursionError:  # a value too deep for the checker: what was found so far stands
        pass
    return findings
