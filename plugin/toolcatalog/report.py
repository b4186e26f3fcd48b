"""Human-readable lines about results: for the build log and the command line."""

from __future__ import annotations

from typing import Iterator

from .formats.smarttool import STATIC_RULES
from .model import CheckStatus, Catalog, ExampleStatus

_STATIC = {rule for rule, _spec in STATIC_RULES}  # already reported as manifest diagnostics


def failures(catalog: Catalog) -> Iterator[str]:
    """One line per failed example or check, naming tool, example and detail."""
    for tool in catalog.tools:
        for example in tool.examples:
            if example.status == ExampleStatus.FAILED:
                where = f"{tool.source}:{example.line}" if example.line else tool.source
                yield f"{where}: {tool.id}: example {example.title!r} failed: {example.detail}"
        for check in tool.checks:
            if check.status == CheckStatus.FAIL and check.id not in _STATIC:
                yield f"{tool.descriptor_source or tool.source}: {tool.id}: check {check.id} failed: {check.detail}"
