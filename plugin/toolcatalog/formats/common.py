"""Pieces every format parser shares: reading, schema messages, example checks."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Callable

import jsonschema

from .. import frontmatter, jsonschemas, schemalint
from ..frontmatter import Manifest, ManifestError, json_type
from ..model import ERROR, WARNING, Diagnostic, Driver, Example, Tool
from . import access


class Sink:
    """Collects diagnostics for one manifest file."""

    def __init__(self, source: str, diagnostics: list[Diagnostic]):
        self.source = source
        self.diagnostics = diagnostics

    def error(self, message: str, line: int | None = None, code: str = "") -> None:
        self.diagnostics.append(Diagnostic(ERROR, message, self.source, line, code))

    def warning(self, message: str, line: int | None = None, code: str = "") -> None:
        self.diagnostics.append(Diagnostic(WARNING, message, self.source, line, code))


CONTRACT_KEYS = ("name", "id", "description", "inputs", "outputs")
MAX_CONTRACT_LINES = 1000


def contract_lines(manifest: Manifest) -> dict[str, int]:
    """Where the contract's name, description and schema nodes are (`"inputs/properties/x"` ->
    line): what quality findings (toolcatalog.quality) point at, kept on the tool because the
    parse cache stores tools, not manifests. Bounded, so a huge schema cannot bloat the cache."""
    out: dict[str, int] = {}
    for path, line in manifest.lines.lines.items():
        if path and path[0] in CONTRACT_KEYS and len(path) <= 12 and all(isinstance(p, str) for p in path):
            out["/".join(path)] = line
            if len(out) >= MAX_CONTRACT_LINES:
                break
    return out


def read_manifest(path: Path, sink: Sink, max_bytes: int, raw: bytes | None = None) -> Manifest | None:
    """Read (unless its bytes are given as `raw`) and parse front matter; on failure record why
    and return None."""
    try:
        manifest = frontmatter.parse(frontmatter.read_bytes(path, max_bytes) if raw is None else raw)
    except ManifestError as exc:
        sink.error(exc.message, exc.line, exc.code)
        return None
    for note in manifest.notes:
        (sink.error if note.severity == ERROR else sink.warning)(note.message, note.line, note.code)
    return manifest


def field_name(path: tuple[Any, ...] | list[Any]) -> str:
    if not path:
        return "front matter"
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += ("." if out else "") + str(part)
    return f"`{out}`"


def _short(value: Any, limit: int = 60) -> str:
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def describe_error(error: jsonschema.ValidationError, prefix: tuple[str | int, ...] = ()) -> str:
    """A sentence a manifest author can act on, for one schema violation."""
    path = prefix + tuple(error.absolute_path)
    where = field_name(path)
    validator: Any = error.validator
    value: Any = error.validator_value
    schema: Any = error.schema
    describe = _DESCRIBE.get(str(validator))
    sentence = describe(where, path, value, error.instance, schema) if describe else None
    return sentence if sentence is not None else f"{where}: {error.message}"


def _owner(where: str, path: tuple[Any, ...]) -> str:
    return "" if not path else f" in {where}"


def _required(where: str, path: tuple[Any, ...], value: Any, instance: Any, schema: Any) -> str:
    missing = [name for name in value if isinstance(instance, dict) and name not in instance]
    names = ", ".join(f"`{m}`" for m in missing) or "a field"
    return f"missing required field {names}{_owner(where, path)}"


def _additional(where: str, path: tuple[Any, ...], value: Any, instance: Any, schema: Any) -> str | None:
    if not isinstance(instance, dict):
        return None
    properties = schema.get("properties") if isinstance(schema, dict) else None
    allowed = set((properties or {}).keys())
    extra = sorted(k for k in instance if k not in allowed)
    return f"unknown field {', '.join(f'`{k}`' for k in extra)}{_owner(where, path)}; the format does not define it"


def _type(where: str, path: tuple[Any, ...], value: Any, instance: Any, schema: Any) -> str:
    expected = value if isinstance(value, str) else " or ".join(value)
    hint = ""
    if expected == "string" and isinstance(instance, (bool, int, float)) and instance is not None:
        hint = "; YAML read it as a " + json_type(instance) + ", quote it to keep it text"
    got = json_type(instance)
    return f"{where} must be {_article(expected)} {expected}, not {_article(got)} {got} ({_short(instance)}){hint}"


def _size(validator: str, unit: str) -> Callable[[str, tuple[Any, ...], Any, Any, Any], str]:
    """`maxLength`/`minLength`/`maxItems`/`minItems`: how long the value is and what is allowed."""
    bound = "at most" if validator.startswith("max") else "at least"
    verb = "is" if unit == "characters long" else "has"

    def describe(where: str, path: tuple[Any, ...], value: Any, instance: Any, schema: Any) -> str:
        return f"{where} {verb} {len(instance)} {unit}; the format allows {bound} {value}"

    return describe


_DESCRIBE: dict[str, Callable[[str, tuple[Any, ...], Any, Any, Any], str | None]] = {
    "required": _required,
    "additionalProperties": _additional,
    "type": _type,
    "pattern": lambda where, path, value, instance, schema: f"{where} {_short(instance)} does not match the pattern `{value}`",
    "enum": lambda where, path, value, instance, schema: f"{where} {_short(instance)} is not one of {', '.join(_short(v) for v in value)}",
    "const": lambda where, path, value, instance, schema: f"{where} must be {_short(value)}, not {_short(instance)}",
    "maxLength": _size("maxLength", "characters long"),
    "minLength": _size("minLength", "characters long"),
    "maxItems": _size("maxItems", "items"),
    "minItems": _size("minItems", "items"),
}


def schema_type_error(sink: Sink, manifest: Manifest, key: str, value: Any, expected: str = "string") -> None:
    hint = "; YAML read it as a " + json_type(value) + ", quote it to keep it text" if expected == "string" else ""
    sink.error(
        f"`{key}` must be {_article(expected)} {expected}, not {_article(json_type(value))} {json_type(value)} ({_short(value)}){hint}",
        manifest.line((key,)),
        "field-type",
    )


def _article(word: str) -> str:
    return "an" if word[:1] in "aeiou" else "a"


def read_driver(path: Path, source: str, max_bytes: int, raw: bytes | None, schema: str, kind: str | None,
                attrs: tuple[str, ...]) -> tuple[Driver, Manifest | None, Sink]:
    """A driver manifest read and checked against its bundled `schema` (AIP-30 DRIVER.md, AIP-29
    CLI.md): the driver with `attrs` and its description taken from the front matter, the manifest
    (None when it could not be read: the driver holds why) and the sink for further diagnostics."""
    driver = Driver(id=path.parent.name, name=path.parent.name, kind=kind, version=None, description="", source=source, abs_path=path)
    sink = Sink(source, driver.diagnostics)
    manifest = read_manifest(path, sink, max_bytes, raw)
    if manifest is None:
        return driver, None, sink
    data: dict[str, Any] = manifest.data
    driver.fields = data
    driver.body = manifest.body
    schema_diagnostics(sink, manifest, jsonschemas.validate_bundled(schema, data))
    for attr in attrs:
        if isinstance(data.get(attr), str):
            setattr(driver, attr, data[attr])
    if isinstance(data.get("description"), str):
        driver.description = data["description"].strip()
    driver.access = access.driver(data, driver.kind)
    return driver, manifest, sink


def schema_diagnostics(
    sink: Sink,
    manifest: Manifest,
    errors: list[jsonschema.ValidationError],
    special: Callable[[jsonschema.ValidationError], str | None] | None = None,
) -> None:
    """Report a bundled-schema validation of the front matter, one diagnostic per problem."""
    seen: set[tuple[str, int | None]] = set()
    for error in jsonschemas.leaf_errors(errors):
        message = (special(error) if special else None) or describe_error(error)
        path = tuple(error.absolute_path)
        schema: Any = error.schema
        if error.validator == "additionalProperties" and isinstance(error.instance, dict) and isinstance(schema, dict):
            allowed = set((schema.get("properties") or {}).keys())
            extras = [k for k in error.instance if k not in allowed]
            line = manifest.line(path + (extras[0],)) if extras else manifest.line(path)
        else:
            line = manifest.line(path, 2)
        key = (message, line)
        if key not in seen:
            seen.add(key)
            sink.error(message, line, "schema")


def check_io_schema(sink: Sink, manifest: Manifest, key: str, value: Any) -> bool:
    """Meta-validate a manifest's `inputs`/`outputs`. True when usable for validation."""
    if value is None:
        return False
    problems = jsonschemas.check_schema(value)
    usable = True
    for problem in problems:
        fatal = problem.fatal
        line = manifest.line((key,) + problem.path, manifest.line((key,)))
        where = field_name((key,) + problem.path)
        if fatal:
            usable = False
            sink.error(f"{where}: {problem.message}", line, "io-schema")
        else:
            sink.warning(f"{where}: {problem.message}", line, "io-schema")
    if usable:
        lint_schema(sink, manifest, key, value)
    return usable


def lint_schema(sink: Sink, manifest: Manifest, key: str, value: Any) -> None:
    """Schema lint findings (toolcatalog.schemalint) for a usable `inputs`/`outputs`, as warnings."""
    for finding in schemalint.lint(value):
        line = manifest.line((key, *finding.path), manifest.line((key,)))
        node = finding.path[:-1] if finding.code in schemalint.KEY_CODES else finding.path  # a key: named by its schema
        sink.warning(f"{field_name((key, *node))}: {finding.message}", line, finding.code)


def schema_checkers(tool: Tool, usable: dict[str, bool]) -> tuple[jsonschemas.Checker | None, jsonschemas.Checker | None]:
    """One checker per usable schema of `tool`, shared by all its examples, so checking them all
    is bounded by one budget proportional to the manifest (jsonschemas.Checker)."""
    return (
        jsonschemas.Checker(tool.inputs) if usable.get("inputs") else None,
        jsonschemas.Checker(tool.outputs) if usable.get("outputs") else None,
    )


def check_example(sink: Sink, example: Example, inputs: jsonschemas.Checker | None, outputs: jsonschemas.Checker | None, label: str) -> None:
    """Validate an example's input (a warning) and expected output (an error) against the contract.

    An input outside `inputs` is how real contracts document rejection of bad
    input, so it is only a warning; an expected output outside `outputs` means
    the contract contradicts itself, which is an error. A value that could not be
    checked (a runaway `pattern`, the validation budget spent) is neither: a warning says so.
    """
    if inputs is not None and example.has_input:
        for problem in inputs.validate(example.input, limit=3):
            if problem.undecided:
                sink.warning(f"{label}: the input could not be fully checked: {problem.message}", example.line, "example-undecided")
            else:
                sink.warning(
                    f"{label}: the input violates `inputs` at {jsonschemas.json_path(problem.path)}: {problem.message} "
                    "(fine when the example documents how bad input is rejected)",
                    example.line,
                    "example-input-schema",
                )
    if outputs is not None and example.has_output:
        for problem in outputs.validate(example.output, limit=3):
            if problem.undecided:
                sink.warning(f"{label}: the expected output could not be fully checked: {problem.message}", example.line, "example-undecided")
            else:
                sink.error(
                    f"{label}: the expected output violates `outputs` at {jsonschemas.json_path(problem.path)}: {problem.message}",
                    example.line,
                    "example-output-schema",
                )


_SPLIT = re.compile(r"\s*,\s*")


def string_list(sink: Sink, manifest: Manifest, key: str, value: Any) -> list[str]:
    """A YAML list of strings, or one string split on commas (speccify's rule)."""
    if value is None:
        return []
    if isinstance(value, str):
        return [part for part in _SPLIT.split(value.strip()) if part]
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        return [item.strip() for item in value if item.strip()]
    sink.error(f"`{key}` must be a list of strings or a comma-separated string", manifest.line((key,)), "field-type")
    return []


def as_text(value: Any) -> str:
    return value if isinstance(value, str) else ""
