"""Safe YAML for untrusted manifests.

PyYAML composes the document into nodes (it never expands aliases or builds
objects at that stage); we then turn nodes into plain JSON values ourselves, so
that we can:

* refuse every tag that is not a plain JSON type (`!!python/...`, `!!binary`, ...);
* cap how many nodes the document expands to, which stops alias bombs, and how
  deep it nests, which stops both self-referencing aliases and RecursionError;
* report duplicate keys instead of silently keeping the last one;
* remember the line of every key and item, so diagnostics can point at it;
* read scalars the YAML 1.2 way (only true/false are booleans, dates stay
  strings), and warn where a YAML 1.1 reader such as PyYAML's `safe_load`
  (which speccify's reference tool uses) would read the same text differently.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode
from yaml.resolver import BaseResolver

MAX_NODES = 50_000
MAX_DEPTH = 64
_MAX_INT_BITS = 4096  # ~1233 digits: far beyond any JSON reader, well inside Python's str() limit

Path = tuple[Any, ...]  # a JSON path: keys and indexes from the document root

_STR = "tag:yaml.org,2002:str"
_INT = "tag:yaml.org,2002:int"
_FLOAT = "tag:yaml.org,2002:float"
_BOOL = "tag:yaml.org,2002:bool"
_NULL = "tag:yaml.org,2002:null"
_SEQ = "tag:yaml.org,2002:seq"
_MAP = "tag:yaml.org,2002:map"


class YamlError(Exception):
    """The text is not YAML we accept. `line` is 1-based in the parsed text."""

    def __init__(self, message: str, line: int | None = None, code: str = "yaml-invalid"):
        super().__init__(message)
        self.message = message
        self.line = line
        self.code = code


class _Resolver(BaseResolver):
    """YAML 1.2 core schema: what a JSON-minded author means."""


# The forms each JSON type may take, implicitly or behind an explicit `!!int`-style tag.
_FORMS = {
    _BOOL: re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"),
    _INT: re.compile(r"^(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)$"),
    _FLOAT: re.compile(r"^[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?$"),
    _NULL: re.compile(r"^(?:~|null|Null|NULL|)$"),
}
_Resolver.add_implicit_resolver(_BOOL, _FORMS[_BOOL], list("tTfF"))
_Resolver.add_implicit_resolver(_INT, _FORMS[_INT], list("-+0123456789"))
_Resolver.add_implicit_resolver(_FLOAT, _FORMS[_FLOAT], list("-+0123456789."))
_Resolver.add_implicit_resolver(_NULL, _FORMS[_NULL], ["~", "n", "N", ""])

# Plain scalars a YAML 1.1 reader turns into something other than the string we keep.
_YAML11_BOOL = re.compile(r"^(?:yes|Yes|YES|no|No|NO|on|On|ON|off|Off|OFF)$")
_YAML11_TIMESTAMP = re.compile(
    r"^[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}(?:(?:[Tt]|[ \t]+)[0-9]{1,2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]*)?"
    r"(?:[ \t]*(?:Z|[-+][0-9]{1,2}(?::[0-9]{2})?))?)?$"
)
_YAML11_SEXAGESIMAL = re.compile(r"^[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?$")

from yaml.composer import Composer
from yaml.parser import Parser
from yaml.reader import Reader
from yaml.scanner import Scanner


class PurePythonComposer(Reader, Scanner, Parser, Composer, _Resolver):
    """PyYAML's own composer: the fallback where libyaml is missing (tests compare the two)."""

    def __init__(self, stream: str):
        Reader.__init__(self, stream)
        Scanner.__init__(self)
        Parser.__init__(self)
        Composer.__init__(self)
        _Resolver.__init__(self)


try:  # libyaml's parser is several times faster and composes the same nodes (plain style is "" there)
    from yaml._yaml import CParser as _CParser  # what yaml.cyaml imports (its stubs do not re-export it)

    class LibyamlComposer(_CParser, _Resolver):
        def __init__(self, stream: str):
            _CParser.__init__(self, stream)
            _Resolver.__init__(self)

    _Composer: type = LibyamlComposer
except ImportError:  # pragma: no cover - PyYAML built without libyaml
    _Composer = PurePythonComposer


@dataclass
class Note:
    """A non-fatal finding while reading YAML (duplicate key, YAML 1.1 ambiguity)."""

    severity: str
    message: str
    line: int | None
    code: str


@dataclass
class Document:
    data: Any
    lines: dict[Path, int] = field(default_factory=dict)
    notes: list[Note] = field(default_factory=list)

    def line(self, path: Path | list[Any], default: int | None = None) -> int | None:
        """The line of `path`, or of its closest ancestor that has one."""
        path = tuple(path)
        while True:
            if path in self.lines:
                return self.lines[path]
            if not path:
                return default
            path = path[:-1]


def load(text: str, *, first_line: int = 1, max_nodes: int = MAX_NODES, max_depth: int = MAX_DEPTH) -> Document:
    """Parse one YAML document into JSON values. Raises `YamlError`.

    `first_line` is the line number (1-based) the text starts at in its file, so
    the lines recorded are the file's lines.
    """
    offset = first_line - 1
    try:
        composer = _Composer(text)
        try:
            node = composer.get_single_node()
        finally:
            composer.dispose()
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 + offset if mark else None
        if "maximum nesting depth" in str(exc.problem):  # libyaml's own cap (1,000 levels)
            raise YamlError(f"YAML nests too deeply to read (limit {max_depth} levels)", line, "yaml-too-deep") from None
        problem = exc.problem or exc.context or "invalid YAML"
        if exc.problem and exc.context:
            # "found unexpected end of stream" alone does not say what was left open, or where.
            started = exc.context_mark.line + 1 + offset if exc.context_mark else None
            where = f" that starts on line {started}" if started is not None and started != line else ""
            problem = f"{exc.problem} ({exc.context}{where})"
        raise YamlError(f"YAML syntax error: {problem}", line, "yaml-syntax") from None
    except yaml.reader.ReaderError as exc:
        # A control character (NUL, ESC, ...): say which and on what line, not PyYAML's offset.
        line = text.count("\n", 0, exc.position) + 1 + offset
        raise YamlError(
            f"YAML cannot contain the control character U+{exc.character:04X}; remove it", line, "yaml-syntax"
        ) from None
    except yaml.YAMLError as exc:
        raise YamlError(f"YAML error: {exc}", None, "yaml-syntax") from None
    except RecursionError:
        raise YamlError(f"YAML nests too deeply to read (limit {max_depth} levels)", None, "yaml-too-deep") from None
    doc = Document(None)
    if node is None:
        return doc
    # Values and text both: an anchored 100 KB string aliased 1,000 times is a bomb too.
    budget = [max_nodes, max(4 * len(text), 1 << 16)]
    try:
        doc.data = _convert(node, (), 0, doc, offset, budget, max_depth, max_nodes)
    except RecursionError:
        raise YamlError(f"YAML nests too deeply to read (limit {max_depth} levels)", None, "yaml-too-deep") from None
    return doc


def _line(node: Node, offset: int) -> int:
    return node.start_mark.line + 1 + offset


def _convert(node: Node, path: Path, depth: int, doc: Document, offset: int, budget: list[int], max_depth: int, max_nodes: int) -> Any:
    budget[0] -= 1
    if budget[0] < 0:
        raise YamlError(
            f"YAML expands to more than {max_nodes} values; aliases (`*name`) that repeat large "
            "anchors are refused to protect the build (an 'alias bomb')",
            _line(node, offset),
            "yaml-too-large",
        )
    if depth > max_depth:
        raise YamlError(
            f"YAML nests more than {max_depth} levels deep (a self-referencing alias?)",
            _line(node, offset),
            "yaml-too-deep",
        )
    if isinstance(node, ScalarNode):
        budget[1] -= len(node.value)
        if budget[1] < 0:
            raise YamlError(
                "YAML expands to far more text than the file holds; aliases (`*name`) that repeat "
                "large anchors are refused to protect the build (an 'alias bomb')",
                _line(node, offset),
                "yaml-too-large",
            )
        return _scalar(node, doc, offset)
    if isinstance(node, SequenceNode):
        _check_tag(node, _SEQ, offset)
        out = []
        for index, child in enumerate(node.value):
            doc.lines.setdefault(path + (index,), _line(child, offset))
            out.append(_convert(child, path + (index,), depth + 1, doc, offset, budget, max_depth, max_nodes))
        return out
    if isinstance(node, MappingNode):
        _check_tag(node, _MAP, offset)
        result: dict[str, Any] = {}
        first_seen: dict[str, int] = {}
        for key_node, value_node in node.value:
            if not isinstance(key_node, ScalarNode):
                raise YamlError("a mapping key must be a plain value, not a list or mapping", _line(key_node, offset), "yaml-complex-key")
            key_value = _scalar(key_node, doc, offset)
            # JSON keys are strings; YAML reads `0: ok` as an integer key, so keep what was written.
            key = key_node.value if not isinstance(key_value, str) else key_value
            key_line = _line(key_node, offset)
            if key == "<<" and not key_node.style:
                doc.notes.append(
                    Note(
                        "warning",
                        "`<<` is kept as a plain key here, but YAML 1.1 readers (PyYAML's safe_load, used by speccify) "
                        "merge the aliased mapping into this one; write the fields out so every reader agrees",
                        key_line,
                        "yaml-ambiguous",
                    )
                )
            if key in first_seen:
                doc.notes.append(
                    Note(
                        "error",
                        f"duplicate key `{key}` (first at line {first_seen[key]}); YAML readers disagree on "
                        "which one wins, so remove one",
                        key_line,
                        "yaml-duplicate-key",
                    )
                )
            else:
                first_seen[key] = key_line
            doc.lines[path + (key,)] = key_line
            result[key] = _convert(value_node, path + (key,), depth + 1, doc, offset, budget, max_depth, max_nodes)
        return result
    raise YamlError("unsupported YAML node", _line(node, offset))  # pragma: no cover


def _check_tag(node: Node, expected: str, offset: int) -> None:
    if node.tag != expected:
        raise YamlError(
            f"YAML tag `{node.tag}` is not allowed; manifests may only hold plain JSON values",
            _line(node, offset),
            "yaml-tag",
        )


def _scalar(node: ScalarNode, doc: Document, offset: int) -> Any:
    tag, value = node.tag, node.value
    if not _is_text(value):
        raise YamlError(
            "text contains an unpaired surrogate escape (like \\ud800), which is not Unicode text",
            _line(node, offset),
            "yaml-invalid",
        )
    form = _FORMS.get(tag)
    if form is not None and not form.match(value):  # `!!int abc`, `!!bool maybe`, `!!float x`
        raise YamlError(f"`{value}` is not a valid `{tag.rsplit(':', 1)[-1]}`", _line(node, offset), "yaml-tag")
    if tag == _STR:
        if not node.style:  # plain, unquoted (None from PyYAML, "" from libyaml): would a YAML 1.1 reader disagree?
            _note_yaml11(value, doc, _line(node, offset))
        return value
    if tag == _NULL:
        return None
    if tag == _BOOL:
        return value.lower() == "true"
    if tag == _INT:
        try:
            if value.startswith("0o"):
                number = int(value[2:], 8)
            elif value.startswith("0x"):
                number = int(value[2:], 16)
            else:
                number = int(value)
        except ValueError:  # more digits than Python converts (sys.get_int_max_str_digits)
            number = None
        if number is None or number.bit_length() > _MAX_INT_BITS:
            doc.notes.append(Note("warning", f"a {len(value)}-character number is too large for JSON; kept as text", _line(node, offset), "yaml-number"))
            return value
        if value.startswith(("0o", "0x")):
            return number
        if len(value.lstrip("+-")) > 1 and value.lstrip("+-").startswith("0"):
            doc.notes.append(
                Note(
                    "warning",
                    f"`{value}` is read as the number {number}; a YAML 1.1 reader reads it as octal. Quote it if it is text",
                    _line(node, offset),
                    "yaml-ambiguous",
                )
            )
        return number
    if tag == _FLOAT:
        real = float(value)
        if not math.isfinite(real):
            doc.notes.append(Note("warning", f"`{value}` is too large for JSON; kept as text", _line(node, offset), "yaml-number"))
            return value
        return real
    raise YamlError(
        f"YAML tag `{tag}` is not allowed; manifests may only hold plain JSON values",
        _line(node, offset),
        "yaml-tag",
    )


def _is_text(value: str) -> bool:
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _note_yaml11(value: str, doc: Document, line: int) -> None:
    if _YAML11_BOOL.match(value):
        meaning = "true" if value.lower() in ("yes", "on") else "false"
        what = f"the boolean {meaning}"
    elif _YAML11_TIMESTAMP.match(value):
        what = "a date"
    elif _YAML11_SEXAGESIMAL.match(value):
        what = "a base-60 number"
    else:
        return
    doc.notes.append(
        Note(
            "warning",
            f"`{value}` is kept as text here, but YAML 1.1 readers (PyYAML's safe_load, used by speccify) "
            f"read it as {what}; quote it so every reader agrees",
            line,
            "yaml-ambiguous",
        )
    )
