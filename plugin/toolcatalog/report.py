"""Human-readable lines about results: for the build log and the command line.

Every line that reaches a terminal or a log goes through `printable`: manifest text
and tool output can hold control characters (a YAML `"\\e[2K"` escape, a NUL), and a
log line must never move the cursor, clear the screen or hide what comes before it.
Generated text (statuses, reasons, diagnostics, details) carries code spans for pages;
`plain` prints it without the backticks (`inline.plain`).

`reason` is a tool's verdict in one line, for every status: the pages and the command
line say the same thing.
"""

from __future__ import annotations

import re
from typing import Iterator

from . import inline
from .model import ERROR, Catalog, Diagnostic, Tool, invalid_reason
from .statuses import CheckStatus, ExampleStatus, Status

# C0 and C1 controls (tab and newline too: one line stays one line), DEL, and the Unicode
# line and paragraph separators and bidirectional overrides, which reorder what a reader sees.
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def printable(text: object) -> str:
    """`text` safe for one line of a terminal or log: control characters written as `\\x1b`, `\\n`, ..."""
    return _CONTROL.sub(_escape, str(text))


def _escape(match: re.Match[str]) -> str:
    char = match.group(0)
    named = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}.get(char)
    if named:
        return named
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def plain(text: object) -> str:
    """Generated text (with code spans) for one terminal or log line."""
    return printable(inline.plain(text))


def diagnostic_line(diagnostic: Diagnostic, severity: bool = False) -> str:
    """`path:line: message` (with `severity: ` before the message when asked), printable."""
    middle = f"{diagnostic.severity}: " if severity else ""
    return f"{printable(diagnostic.location())}: {middle}{plain(diagnostic.message)}"


def reason(tool: Tool) -> str:
    """Why the tool has its status, in one line of generated text (code spans kept): for an
    invalid manifest its first error (and how many more there are), else the status detail."""
    if tool.status != Status.INVALID:
        return tool.status_detail
    return invalid_reason(tool) or tool.status_detail


def nothing_found(catalog: Catalog) -> str:
    """The line a build or command prints when it found no tool: where it looked and for what."""
    scope = catalog.search
    where = ", ".join(scope.roots) or "."
    looked = "; ".join(f"{glob} ({what})" for glob, what in scope.patterns)
    excluded = f"; excluded: {', '.join(scope.exclude)}" if scope.exclude else ""
    return printable(
        f"no tool manifest found: searched {where} for {looked}{excluded}; "
        "set the paths option to search other folders"
    )


def failures(catalog: Catalog) -> Iterator[str]:
    """One printable line per failed example or check, naming tool, example and detail.

    A smart tool's static rules are reported as manifest diagnostics already, unless the tool is
    valid (a missing `smart-tool.json` fails `descriptor-present` without being an error)."""
    for tool in catalog.tools:
        for example in tool.examples:
            if example.status in (ExampleStatus.FAILED, ExampleStatus.ERROR):
                where = f"{tool.source}:{example.line}" if example.line else tool.source
                yield printable(f"{where}: {tool.id}: example {example.title!r} {example.status}: ") + plain(example.detail)
        for check in tool.checks:
            if check.status in (CheckStatus.FAILED, CheckStatus.ERROR) and (tool.valid or check.id not in tool.format_info.static_rule_ids):
                where = tool.descriptor_source or tool.source
                yield printable(f"{where}: {tool.id}: check {check.id} {check.status}: ") + plain(check.detail)
