"""`"package.module:function"` references, as the registries name code (formatregistry's parsers
and planners, sandbox/backends' probes): bound late, by the layer that may import the target.
Each registry says which references it takes (`pattern`): a typo never imports a module outside
the package."""

from __future__ import annotations

import functools
import importlib
import re
from typing import Any, Callable


@functools.lru_cache(maxsize=None)
def resolve(reference: str, pattern: re.Pattern[str], scope: str) -> Callable[..., Any]:
    """The function `reference` names, if it matches `pattern` (`scope` names it in the error)."""
    if not pattern.match(reference):
        raise ValueError(f"not a `module:function` reference into {scope}: {reference!r}")
    module, _, name = reference.partition(":")
    function = getattr(importlib.import_module(module), name)
    if not callable(function):
        raise TypeError(f"{reference} is not a function")
    return function  # type: ignore[no-any-return]
