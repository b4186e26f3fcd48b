"""AIP-30 CLI argv templates: `${input.x}` and `${input.x | default('...')}`.

A placeholder that is a whole argv element becomes exactly the value, as one
element: no quoting, no splitting, never a shell. Inside a longer element it is
substituted as text. Strings stay as they are; other JSON values are written as
JSON (`true`, `3`, `{"a": 1}`), which is what a CLI flag would receive.
"""

from __future__ import annotations

import json
import re
from typing import Any

_PLACEHOLDER = re.compile(
    r"\$\{\s*input\.(?P<name>[A-Za-z_][A-Za-z0-9_]*)\s*"
    r"(?:\|\s*(?P<filter>default|optional|flag)\s*\((?P<args>[^)]*)\)\s*)?\}"
)
_ARG = re.compile(r"""\s*(?:'(?P<single>[^']*)'|"(?P<double>[^"]*)"|(?P<ref>input\.[A-Za-z_][A-Za-z0-9_]*))\s*(?:,|$)""")


class TemplateError(Exception):
    pass


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _args(raw: str) -> list[Any]:
    out: list[Any] = []
    position = 0
    raw = raw.strip()
    while position < len(raw):
        match = _ARG.match(raw, position)
        if not match or match.end() == position:
            raise TemplateError(f"cannot read filter arguments {raw!r}")
        if match.group("ref"):
            out.append(("ref", match.group("ref")[len("input."):]))
        else:
            out.append(match.group("single") if match.group("single") is not None else match.group("double"))
        position = match.end()
    return out


def _resolve(match: re.Match[str], inputs: dict[str, Any]) -> list[str] | None:
    """The argv elements one placeholder stands for (None: the placeholder is absent)."""
    name, filt = match.group("name"), match.group("filter")
    present = name in inputs and inputs[name] is not None
    if filt is None:
        if not present:
            raise TemplateError(f"input `{name}` is needed by the argv template but the example does not give it")
        return [_text(inputs[name])]
    args = _args(match.group("args") or "")
    if filt == "default":
        if present:
            return [_text(inputs[name])]
        return [str(args[0]) if args else ""]
    if filt == "flag":
        return [str(args[0])] if present and inputs[name] not in (False, "", 0) and args else []
    # optional('--flag', input.x): the flag and the value, when the input is set
    if not present or not args:
        return []
    values = [str(args[0])]
    if len(args) > 1:
        ref = args[1]
        values.append(_text(inputs.get(ref[1])) if isinstance(ref, tuple) else str(ref))
    return values


def expand(template: list[Any], inputs: Any) -> list[str]:
    """Expand an argv template with an example's input. Raises TemplateError."""
    if not isinstance(template, list):
        raise TemplateError("`metadata.cli.argv` must be a list")
    values = inputs if isinstance(inputs, dict) else {}
    argv: list[str] = []
    for token in template:
        if not isinstance(token, str):
            argv.append(_text(token))
            continue
        whole = _PLACEHOLDER.fullmatch(token.strip())
        if whole:
            argv.extend(_resolve(whole, values) or [])
            continue
        pieces: list[str] = []
        position = 0
        for match in _PLACEHOLDER.finditer(token):
            pieces.append(token[position : match.start()])
            pieces.append("".join(_resolve(match, values) or []))
            position = match.end()
        pieces.append(token[position:])
        argv.append("".join(pieces))
    return argv
