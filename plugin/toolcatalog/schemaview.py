"""JSON Schema as rows of a property table, for people.

Handles what real contracts use and schema renderers often break on:
`$ref`/`$defs` are resolved inside the document (a recursive reference
becomes a link to the row where that definition was first shown, instead of
looping), `allOf` is merged, `oneOf`/`anyOf` become labelled variants, arrays
show their items, and every row has an anchor for deep links. A `oneOf`/`anyOf`/`not` of
required-sets (`oneOf: [{required: [text]}, {required: [file_ref]}]`) reads as a rule in words
("exactly one of `text` or `file_ref`"), not as variants; `additionalProperties: false` reads "no
other keys"; per-property `examples` are shown; rows nested deeper than COLLAPSE_DEPTH are
grouped under their ancestor (`SchemaView.blocks`) so pages can fold them. Remote
references are shown, never fetched. Hostile schemas are bounded: depth, row
count, references followed one after another and `allOf` nesting are capped,
and the work of merging `allOf` members has a budget proportional to the
schema's size (a definition merged again for every row that refers to it could
otherwise cost rows × its size); past a cap the view says it is truncated.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from .schemawork import size

MAX_DEPTH = 12
MAX_ROWS = 1500
MAX_REF_HOPS = 64  # `$ref`s followed one after another (each is a level of recursion here)
COLLAPSE_DEPTH = 4  # rows at this depth or deeper are folded under their ancestor (`blocks`)
MAX_EXAMPLES = 5  # per-property `examples` shown
MAX_RULE_NAMES = 20  # names listed in one rule
MAX_MERGE_DEPTH = 64  # `allOf` inside `allOf` (through references too)
WORK_FLOOR = 100_000  # allOf members and properties merged, for any schema
WORK_PER_VALUE = 4  # ... plus this many per JSON value of the schema
_ANCHOR_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]+")
_MISSING: Any = object()

# Keywords merged or shown as constraints, with how they read.
_CONSTRAINTS = (
    ("minimum", "≥ {}"),
    ("exclusiveMinimum", "> {}"),
    ("maximum", "≤ {}"),
    ("exclusiveMaximum", "< {}"),
    ("multipleOf", "multiple of {}"),
    ("minLength", "length ≥ {}"),
    ("maxLength", "length ≤ {}"),
    ("pattern", "pattern {}"),
    ("format", "format {}"),
    ("minItems", "items ≥ {}"),
    ("maxItems", "items ≤ {}"),
    ("uniqueItems", "unique items"),
    ("minProperties", "properties ≥ {}"),
    ("maxProperties", "properties ≤ {}"),
    ("contentMediaType", "media type {}"),
)


@dataclass
class Rule:
    """A constraint across properties, in words: `kind` "exactly one of" (oneOf), "at least one
    of" (anyOf), "not both" / "never" (not), over `groups` (each a set of property names that
    are required together)."""

    kind: str
    groups: list[list[str]]

    def parts(self, capital: bool = False) -> list[tuple[str, bool]]:
        """(text, is a name) pieces: names are shown as code, the rest as words (starting with a
        capital letter when `capital`, for a sentence)."""
        final = {"neither": " nor ", "not both": " and ", "never": " and "}.get(self.kind, " or ")
        kind = self.kind[:1].upper() + self.kind[1:] if capital else self.kind
        out: list[tuple[str, bool]] = [(kind + " ", False)]
        for index, group in enumerate(self.groups):
            if index:
                out.append((final if index == len(self.groups) - 1 else ", ", False))
            if len(group) > 1:
                out.append(("(", False))
            for position, name in enumerate(group):
                if position:
                    out.append((" and " if position == len(group) - 1 else ", ", False))
                out.append((name, True))
            if len(group) > 1:
                out.append((" together)", False))
        return out

    def plain(self, capital: bool = False) -> str:
        return "".join(f"`{text}`" if code else text for text, code in self.parts(capital))


@dataclass
class Row:
    name: str
    anchor: str
    depth: int
    type: str = "any"
    required: bool = False
    description: str = ""
    default: Any = _MISSING
    enum: list[Any] | None = None
    const: Any = _MISSING
    constraints: list[str] = field(default_factory=list)
    link: str | None = None  # anchor of the row a recursive reference points back to
    link_label: str = ""
    external: str | None = None  # a `$ref` outside the document (never fetched)
    variant: str | None = None  # "one of" / "any of" label for variant rows
    flags: list[str] = field(default_factory=list)  # read-only, write-only, deprecated, nullable
    examples: list[Any] = field(default_factory=list)  # the property's own `examples` (at most MAX_EXAMPLES)
    closed: bool = False  # `additionalProperties: false`: no other keys
    rules: list[Rule] = field(default_factory=list)  # required-set combinators, in words

    @property
    def has_default(self) -> bool:
        return self.default is not _MISSING

    @property
    def has_const(self) -> bool:
        return self.const is not _MISSING

    def default_json(self) -> str:
        return _json(self.default)

    def const_json(self) -> str:
        return _json(self.const)

    def enum_json(self) -> list[str]:
        return [_json(v) for v in self.enum or []]

    def examples_json(self) -> list[str]:
        return [_json(v) for v in self.examples]


@dataclass
class Fold:
    """Rows nested COLLAPSE_DEPTH or deeper, shown folded under `parent` (the row above them)."""

    parent: Row
    rows: list[Row]


@dataclass
class SchemaView:
    rows: list[Row]
    truncated: bool = False
    root_type: str = "any"
    closed: bool = False  # the root object allows no other keys
    rules: list[Rule] = field(default_factory=list)  # the root's required-set combinators, in words

    def blocks(self) -> list[Row | Fold]:
        """The rows in order, each run of rows at COLLAPSE_DEPTH or deeper grouped as one Fold
        under the row just above the run."""
        out: list[Row | Fold] = []
        for row in self.rows:
            if row.depth < COLLAPSE_DEPTH:
                out.append(row)
            elif out and isinstance(out[-1], Fold):
                out[-1].rows.append(row)
            else:
                parent = out[-1] if out and isinstance(out[-1], Row) else row
                out.append(Fold(parent, [row]))
        return out


def _json(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 120 else text[:119] + "…"


class _Fold:
    """What `allOf` members add up to: properties (a name several members define becomes one flat
    `allOf` of their schemas), the union of `required`, and the first value of every other keyword."""

    def __init__(self, gathered: dict[Any, list[Any]]):
        self.gathered = gathered
        self.merged_properties = False
        self.required: dict[str, None] | None = None

    def add(self, member: dict[str, Any], merged: dict[str, Any]) -> None:
        for key, value in member.items():
            if key == "properties" and isinstance(value, dict):
                self.merged_properties = True
                for name, sub in value.items():
                    self.gathered.setdefault(name, []).append(sub)
            elif key == "required" and isinstance(value, list):
                if self.required is None:
                    own = merged.get("required")
                    self.required = dict.fromkeys(r for r in own or [] if isinstance(r, str)) if isinstance(own, list) else {}
                self.required.update(dict.fromkeys(r for r in value if isinstance(r, str)))
            elif key not in merged:
                merged[key] = value

    def finish(self, merged: dict[str, Any]) -> None:
        if self.merged_properties:
            merged["properties"] = {name: subs[0] if len(subs) == 1 else {"allOf": subs} for name, subs in self.gathered.items()}
        if self.required is not None:
            merged["required"] = list(self.required)


class _Builder:
    def __init__(self, root: Any, prefix: str):
        self.root = root
        self.prefix = prefix
        self.rows: list[Row] = []
        self.truncated = False
        self.anchors: set[str] = set()
        self.shown: dict[str, str] = {}  # $ref -> anchor of the row where it was expanded
        self.work_left = WORK_FLOOR + WORK_PER_VALUE * size(root)
        self._anchor_index: dict[str, Any] | None = None

    def spend(self, units: int) -> bool:
        """Whether merging may go on after `units` more work; False (and truncated) when spent."""
        self.work_left -= units
        if self.work_left < 0:
            self.truncated = True
        return self.work_left >= 0

    # -- helpers ---------------------------------------------------------------------------
    def anchor(self, path: list[str]) -> str:
        base = self.prefix + "-" + "-".join(_ANCHOR_UNSAFE.sub("_", p) for p in path) if path else self.prefix
        anchor, n = base, 2
        while anchor in self.anchors:
            anchor, n = f"{base}-{n}", n + 1
        self.anchors.add(anchor)
        return anchor

    def lookup(self, ref: str) -> Any:
        """Resolve a local JSON pointer (`#/$defs/x`); _MISSING when it does not resolve."""
        if not ref.startswith("#"):
            return _MISSING
        pointer = ref[1:]
        if pointer == "":
            return self.root
        if not pointer.startswith("/"):
            return self._anchor_lookup(pointer)
        node = self.root
        for raw in pointer[1:].split("/"):
            part = raw.replace("~1", "/").replace("~0", "~")
            if isinstance(node, dict) and part in node:
                node = node[part]
            elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
                node = node[int(part)]
            else:
                return _MISSING
        return node

    def _anchor_lookup(self, name: str) -> Any:
        if self._anchor_index is None:  # indexed once: a lookup per reference walking the schema was quadratic
            self._anchor_index = {}
            stack = [self.root]
            while stack:
                node = stack.pop()
                if isinstance(node, dict):
                    if isinstance(node.get("$anchor"), str):
                        self._anchor_index.setdefault(node["$anchor"], node)
                    stack.extend(v for k, v in node.items() if k not in ("enum", "const", "default", "examples"))
                elif isinstance(node, list):
                    stack.extend(node)
        return self._anchor_index.get(name, _MISSING)

    def merge_all_of(self, schema: dict[str, Any], trail: tuple[str, ...], depth: int = 0) -> tuple[dict[str, Any], tuple[str, ...]]:
        """Fold `allOf` members (resolving their `$ref`s) into one schema.

        Returns the merged schema and the trail extended by every reference folded
        in, so a recursion through an `allOf` member is still recognised. A property
        several members define becomes one flat `allOf` of their schemas (nesting one
        `allOf` per member made thousands of members recurse past Python's limit).
        """
        members = schema.get("allOf")
        if not isinstance(members, list):
            return schema, trail
        merged: dict[str, Any] = {k: v for k, v in schema.items() if k != "allOf"}
        if depth >= MAX_MERGE_DEPTH or not self.spend(1 + len(members)):
            self.truncated = True
            return merged, trail
        own = merged.get("properties")
        fold = _Fold({name: [sub] for name, sub in own.items()} if isinstance(own, dict) else {})
        for member in members:
            member, trail = self._member(member, trail, depth)
            if not isinstance(member, dict):
                continue
            member, trail = self.merge_all_of(member, trail, depth + 1)
            if not self.spend(len(member) + len(member.get("properties") or ())):
                break
            fold.add(member, merged)
        fold.finish(merged)
        return merged, trail

    def _member(self, member: Any, trail: tuple[str, ...], depth: int) -> tuple[Any, tuple[str, ...]]:
        """An `allOf` member with its `$ref` folded in (None for a reference back into the trail)."""
        if not (isinstance(member, dict) and isinstance(member.get("$ref"), str)):
            return member, trail
        ref = member["$ref"]
        if ref in trail:
            return None, trail
        target = self.lookup(ref)
        if not isinstance(target, dict):
            return member, trail
        extra = {k: v for k, v in member.items() if k != "$ref"}
        folded, trail = self.merge_all_of(target, trail + (ref,), depth + 1)
        return {**folded, **extra}, trail

    # -- rows --------------------------------------------------------------------------------
    def walk(self, schema: Any, name: str, path: list[str], depth: int, required: bool, trail: tuple[str, ...],
             variant: str | None = None, hops: int = 0) -> None:
        if len(self.rows) >= MAX_ROWS or depth > MAX_DEPTH or hops > MAX_REF_HOPS:
            self.truncated = True
            return
        row = Row(name=name, anchor=self.anchor(path), depth=depth, required=required, variant=variant)
        if schema is True or schema == {}:
            row.type = "any"
            self.rows.append(row)
            return
        if schema is False:
            row.type = "never"
            self.rows.append(row)
            return
        if not isinstance(schema, dict):
            row.type = "invalid schema"
            self.rows.append(row)
            return
        # A reference: shown once in full; a reference back into itself becomes a link.
        ref = schema.get("$ref")
        if isinstance(ref, str):
            local = {k: v for k, v in schema.items() if k != "$ref"}
            if ref in trail:
                row.type = _ref_name(ref)
                row.link = self.shown.get(ref)
                row.link_label = f"recursive: see {_ref_name(ref)}"
                self._describe(row, local)
                self.rows.append(row)
                return
            target = self.lookup(ref)
            if target is _MISSING:
                row.type = "reference"
                row.external = ref
                self._describe(row, local)
                self.rows.append(row)
                return
            self.shown.setdefault(ref, row.anchor)
            self.anchors.discard(row.anchor)
            merged = {**target, **local} if isinstance(target, dict) else target
            self.walk(merged, name, path, depth, required, trail + (ref,), variant, hops + 1)
            return
        before = len(trail)
        schema, trail = self.merge_all_of(schema, trail)
        for folded in trail[before:]:
            self.shown.setdefault(folded, row.anchor)
        self._describe(row, schema)
        row.type = self._type(schema, trail)
        self.rows.append(row)
        self._children(schema, path, depth, trail)

    def _children(self, schema: dict[str, Any], path: list[str], depth: int, trail: tuple[str, ...]) -> None:
        properties = schema.get("properties")
        listed = schema.get("required")
        # A broken schema (`required: [[]]`) is reported by its diagnostics; here only names count.
        required = {r for r in listed if isinstance(r, str)} if isinstance(listed, list) else set()
        if isinstance(properties, dict):
            for prop, sub in properties.items():
                self.walk(sub, str(prop), [*path, str(prop)], depth + 1, prop in required, trail)
        patterns = schema.get("patternProperties")
        if isinstance(patterns, dict):
            for pattern, sub in patterns.items():
                self.walk(sub, f"/{pattern}/", [*path, "pattern"], depth + 1, False, trail)
        additional = schema.get("additionalProperties")
        if isinstance(additional, dict) and additional:
            self.walk(additional, "*", [*path, "additional"], depth + 1, False, trail)
        items = schema.get("items")
        if isinstance(items, dict) and _is_structured(items, self):
            self.walk(items, "[ ]", [*path, "items"], depth + 1, False, trail)
        prefix_items = schema.get("prefixItems")
        if isinstance(prefix_items, list):
            for index, sub in enumerate(prefix_items):
                self.walk(sub, f"[{index}]", [*path, str(index)], depth + 1, False, trail)
        self._variants(schema, path, depth, trail)

    def _variants(self, schema: dict[str, Any], path: list[str], depth: int, trail: tuple[str, ...]) -> None:
        """`oneOf`/`anyOf` members as labelled variant rows, unless they are required-sets (said in words)."""
        for keyword, label in (("oneOf", "one of"), ("anyOf", "any of")):
            variants = schema.get(keyword)
            if not isinstance(variants, list) or required_sets(variants) is not None:
                continue
            for index, sub in enumerate(variants, start=1):
                title = sub.get("title") if isinstance(sub, dict) else None
                name = title if isinstance(title, str) else f"option {index}"
                self.walk(sub, name, [*path, keyword, str(index)], depth + 1, False, trail, variant=label)

    def _type(self, schema: dict[str, Any], trail: tuple[str, ...]) -> str:
        declared = schema.get("type")
        if isinstance(declared, list):
            text = " | ".join(str(t) for t in declared)
        elif isinstance(declared, str):
            text = declared
        elif "properties" in schema:
            text = "object"
        elif "items" in schema or "prefixItems" in schema:
            text = "array"
        elif "oneOf" in schema:
            text = "one of"
        elif "anyOf" in schema:
            text = "any of"
        elif "const" in schema:
            text = "const"
        elif "enum" in schema:
            text = "enum"
        else:
            text = "any"
        if text == "array":
            items = schema.get("items")
            if isinstance(items, dict):
                inner = items
                if isinstance(items.get("$ref"), str):
                    return f"array of {_ref_name(items['$ref'])}"
                inner_type = inner.get("type")
                if isinstance(inner_type, str):
                    text = f"array of {inner_type}"
                elif "properties" in inner:
                    text = "array of object"
        return text

    def _describe(self, row: Row, schema: dict[str, Any]) -> None:
        self._annotate(row, schema)
        if isinstance(schema.get("description"), str):
            row.description = schema["description"]
        elif isinstance(schema.get("title"), str) and row.variant is None:
            row.description = schema["title"]
        if "default" in schema:
            row.default = schema["default"]
        if isinstance(schema.get("enum"), list):
            row.enum = schema["enum"]
        if "const" in schema:
            row.const = schema["const"]
        for key, text in _CONSTRAINTS:
            if key in schema and schema[key] is not False:
                value = schema[key]
                row.constraints.append(text.format(f"`{value}`" if key == "pattern" else value) if "{}" in text else text)
        for key, flag in (("readOnly", "read-only"), ("writeOnly", "write-only"), ("deprecated", "deprecated")):
            if schema.get(key) is True:
                row.flags.append(flag)


    def _annotate(self, row: Row, schema: dict[str, Any]) -> None:
        """Examples, "no other keys" and the rules in words."""
        examples = schema.get("examples")
        if isinstance(examples, list):
            row.examples = examples[:MAX_EXAMPLES]
        row.closed = schema.get("additionalProperties") is False
        row.rules = rules_of(schema)


def required_sets(variants: list[Any]) -> list[list[str]] | None:
    """The property-name sets of combinator members that only say which properties are required
    (`{required: [a]}`, optionally with a title or description); None when any member says more."""
    groups: list[list[str]] = []
    for member in variants[:MAX_RULE_NAMES]:
        if not isinstance(member, dict) or not set(member) <= {"required", "title", "description", "$comment"}:
            return None
        names = member.get("required")
        if not isinstance(names, list) or not names or not all(isinstance(n, str) for n in names):
            return None
        groups.append([str(n) for n in names[:MAX_RULE_NAMES]])
    return groups if groups and len(variants) <= MAX_RULE_NAMES else None


def _not_rule(value: Any) -> Rule | None:
    if not isinstance(value, dict):
        return None
    single = required_sets([value])
    if single is not None:
        names = single[0]
        return Rule("never" if len(names) == 1 else "not both", [[n] for n in names])
    if set(value) == {"anyOf"} and isinstance(value["anyOf"], list):
        groups = required_sets(value["anyOf"])
        if groups is not None:
            return Rule("neither" if len(groups) > 1 else "never", groups)
    return None


def rules_of(schema: dict[str, Any]) -> list[Rule]:
    """`oneOf`/`anyOf`/`not` of required-sets in `schema`, as rules in words."""
    out: list[Rule] = []
    for keyword, kind in (("oneOf", "exactly one of"), ("anyOf", "at least one of")):
        variants = schema.get(keyword)
        groups = required_sets(variants) if isinstance(variants, list) else None
        if groups is not None:
            out.append(Rule(kind, groups))
    rule = _not_rule(schema.get("not"))
    if rule is not None:
        out.append(rule)
    return out


def _is_structured(items: dict[str, Any], builder: _Builder) -> bool:
    """Array items get their own row when they have structure worth showing."""
    if isinstance(items.get("$ref"), str):
        return True
    return any(k in items for k in ("properties", "oneOf", "anyOf", "allOf", "items", "enum", "description", "const"))


def _ref_name(ref: str) -> str:
    if ref == "#":
        return "(root)"
    return ref.rsplit("/", 1)[-1] or ref


def build(schema: Any, prefix: str) -> SchemaView:
    """Rows for `schema`; anchors start with `prefix` (e.g. `tc-in`), which is the table's own anchor."""
    builder = _Builder(schema, prefix)
    builder.anchors.add(prefix)
    builder.shown["#"] = prefix  # `$ref: "#"` links back to the top of the table
    trail: tuple[str, ...] = ("#",)
    if not isinstance(schema, dict):
        builder.walk(schema, "(value)", ["value"], 0, True, trail)
        return SchemaView(builder.rows, builder.truncated, "any")
    merged, trail = builder.merge_all_of(schema, trail)
    for folded in trail:
        builder.shown.setdefault(folded, prefix)
    ref = merged.get("$ref")
    hops = 0
    while isinstance(ref, str) and ref not in trail:  # follow a chain of references at the root
        hops += 1
        if hops > MAX_REF_HOPS:
            builder.truncated = True
            break
        target = builder.lookup(ref)
        if not isinstance(target, dict):
            break
        builder.shown[ref] = prefix
        resolved, trail = builder.merge_all_of(target, trail + (ref,))
        merged = {**resolved, **{k: v for k, v in merged.items() if k != "$ref"}}
        merged["$ref"] = resolved.get("$ref")
        if merged["$ref"] is None:
            del merged["$ref"]
        for name in trail:
            builder.shown.setdefault(name, prefix)
        ref = merged.get("$ref")
    root_type = builder._type(merged, trail)
    structured = any(k in merged for k in ("properties", "oneOf", "anyOf", "additionalProperties", "patternProperties"))
    if root_type == "object" or structured:
        builder._children(merged, [], -1, trail)
        return SchemaView(builder.rows, builder.truncated, root_type, merged.get("additionalProperties") is False, rules_of(merged))
    builder.walk(merged, "(value)", ["value"], 0, True, trail)
    return SchemaView(builder.rows, builder.truncated, root_type)
