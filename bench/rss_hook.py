"""A MkDocs hook that prints the build process's resident memory (VmRSS) and its peak so far
(VmHWM) at each phase of a build, to stderr: add it to a config's `hooks:` (an absolute path, or
relative to the config) and build. Used for bench/README.md's memory tables (issue #21)."""

from __future__ import annotations

import sys
import time
from typing import Any

from mkdocs.plugins import CombinedEvent, event_priority

_START = time.perf_counter()
_PAGES = [0]


def _status(label: str) -> None:
    values = {}
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            if line.startswith(("VmRSS", "VmHWM")):
                name, value = line.split(":")
                values[name] = int(value.split()[0]) // 1024
    sys.stderr.write(f"RSS {label:<40} rss={values.get('VmRSS', 0):4d} MB  peak={values.get('VmHWM', 0):4d} MB"
                     f"  t={time.perf_counter() - _START:6.1f}s\n")


@event_priority(200)
def on_files(files: Any, config: Any) -> None:
    _status("before on_files (imports, config)")


@event_priority(-200)
def on_nav(nav: Any, config: Any, files: Any) -> None:
    _status("after on_files, on_nav (harvest, check)")


@event_priority(-200)
def on_env(env: Any, config: Any, files: Any) -> None:
    _status("every page's Markdown rendered (on_env)")


@event_priority(-200)
def on_post_page(output: str, page: Any, config: Any) -> None:
    _PAGES[0] += 1
    if _PAGES[0] % 1000 == 0:
        _status(f"{_PAGES[0]} pages written")


@event_priority(150)  # before every plugin's (toolcatalog writes its outputs at 100)
def _before_post_build(config: Any) -> None:
    _status("before on_post_build")


@event_priority(50)  # after toolcatalog's outputs (100; it lets its build go there), before the search plugin's (0)
def _outputs_written(config: Any) -> None:
    _status("toolcatalog's outputs written (at 100)")


@event_priority(-50)  # after the search plugin's (0), before toolcatalog's digest manifest (-100)
def _search_index(config: Any) -> None:
    _status("search index written (search, at 0)")


on_post_build = CombinedEvent(_before_post_build, _outputs_written, _search_index)


def on_shutdown() -> None:
    _status("end of the build")
