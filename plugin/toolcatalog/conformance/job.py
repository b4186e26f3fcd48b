"""What a format's planner hands the engine: a `Job`, built in a `Context`.

A planner turns one tool into a Job: the parts its result depends on (hashed
into the cache key) and the tasks to run, each starting at most a few
processes, plus `finish`, which turns the tasks' results into the tool's
outcome. A Job may instead carry an outcome decided without running anything
(the tool is not applicable here, has no examples, ...).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from ..model import Tool
from ..options import Options
from ..process import scrubbed_env
from ..scrub import Scrub, scrubber
from .outcome import Outcome

Task = Callable[[], Any]


@dataclass
class Job:
    key_parts: list[Any]
    tasks: list[Task] = field(default_factory=list)
    finish: Callable[[list[Any]], Outcome] | None = None
    outcome: Outcome | None = None  # decided without running anything


@dataclass
class Context:
    """Everything a planner may use besides the tool itself; one per build."""

    options: Options
    env: dict[str, str]  # for example processes
    tool_env: dict[str, str]  # for smart tools: provider variables removed too
    platform: str
    workspace: Path
    scrub: Scrub  # this machine's paths out of any text a run produces (see scrub.py)

    def timeout_for(self, tool_timeout_ms: int | None = None) -> float:
        timeout = float(self.options.timeout)
        if tool_timeout_ms:
            timeout = min(timeout, tool_timeout_ms / 1000.0)
        return max(timeout, 0.05)


Planner = Callable[[Tool, Context], Job]


def current_platform() -> str:
    """speccify's platform names: darwin -> macos, win* -> windows, everything else -> linux."""
    if sys.platform == "darwin":
        return "macos"
    if sys.platform.startswith("win"):
        return "windows"
    return "linux"


def make_context(options: Options, workspace: Path) -> Context:
    return Context(
        options=options,
        env=scrubbed_env(options.env),
        tool_env=scrubbed_env(options.env, drop_provider_vars=True),
        platform=current_platform(),
        workspace=workspace,
        scrub=scrubber(workspace, [workspace / p for p in options.paths]),
    )
