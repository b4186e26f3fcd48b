"""A MkDocs hook that prints the build process's resident memory (VmRSS) and its peak so far
(VmHWM) at each phase of a build, to stderr: add it to a config's `hooks:` (an absolute path, or
relative to the config) and build. Used for bench/README.md's memory tables (issue #21).

With `RSS_ALLOCATOR=1` in the environment each line also says where the memory is, by the
allocators' own counters: glibc's heap (`mallinfo2`: in use, free inside it; a free part
`malloc_trim` gave back is not resident) and its separately mapped blocks, and CPython's small-object
allocator (`sys._debugmallocstats`: the arenas it holds, the bytes of live objects in them); an
arena is given back only when every object in it is freed, so arenas well above the bytes in use
are memory freed but kept. The search plugin's `on_post_build` is split there too: its
`json.dumps` of the index, then the encoded text written (the build's peak at 5,000 tools)."""

from __future__ import annotations

import ctypes
import json
import os
import sys
import tempfile
import time
from typing import Any

from mkdocs import utils as mkdocs_utils
from mkdocs.plugins import CombinedEvent, event_priority

_START = time.perf_counter()
_PAGES = [0]
_ALLOCATOR = os.environ.get("RSS_ALLOCATOR") == "1"


class _MallInfo2(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name in
                ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks", "fordblks", "keepcost")]


def _mallinfo2() -> _MallInfo2 | None:
    try:
        function = ctypes.CDLL(None).mallinfo2
    except (OSError, AttributeError):
        return None
    function.restype = _MallInfo2
    info: _MallInfo2 = function()
    return info


def _pymalloc() -> dict[str, int]:
    """`sys._debugmallocstats()`'s totals (it prints to the C stderr)."""
    saved = os.dup(2)
    with tempfile.TemporaryFile("w+") as out:
        sys.stderr.flush()
        os.dup2(out.fileno(), 2)
        try:
            sys._debugmallocstats()
        finally:
            os.dup2(saved, 2)
            os.close(saved)
        out.seek(0)
        text = out.read()
    found: dict[str, int] = {}
    for line in text.splitlines():
        name, sep, value = line.rpartition("=")
        if sep:
            try:
                found[name.strip().lstrip("# ").strip()] = int(value.strip().replace(",", ""))
            except ValueError:
                pass
    return found


def _allocators() -> str:
    mb = 2 ** 20
    info = _mallinfo2()
    glibc = (f"  heap in use {info.uordblks / mb:5.1f} free {info.fordblks / mb:5.1f} mapped {info.hblkhd / mb:5.1f} MB"
             if info is not None else "")
    small = _pymalloc()
    arenas = small.get("arenas allocated current", 0)  # 1 MiB each (CPython >= 3.10, 64-bit)
    used = small.get("bytes in allocated blocks", 0) / mb
    return f"{glibc}  pymalloc arenas {arenas:4d} MB objects {used:5.1f} MB" if small else glibc


def _vm() -> dict[str, int]:
    """This process's VmRSS and VmHWM, in MB."""
    values = {}
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            if line.startswith(("VmRSS", "VmHWM")):
                name, value = line.split(":")
                values[name] = int(value.split()[0]) // 1024
    return values


def _status(label: str) -> None:
    values = _vm()
    sys.stderr.write(f"RSS {label:<40} rss={values.get('VmRSS', 0):4d} MB  peak={values.get('VmHWM', 0):4d} MB"
                     f"  t={time.perf_counter() - _START:6.1f}s{_allocators() if _ALLOCATOR else ''}\n")


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


_dumps, _write_file = json.dumps, mkdocs_utils.write_file


def _search_dumps(*args: Any, **kwargs: Any) -> str:
    _status("  search: json.dumps of its index")
    text = _dumps(*args, **kwargs)
    _status(f"  search: index joined ({len(text) / 2 ** 20:.0f} MB)")
    return text


def _search_write(content: bytes, output_path: str) -> None:
    if output_path.endswith("search_index.json"):
        _status("  search: index encoded, written")
    _write_file(content, output_path)


@event_priority(150)  # before every plugin's (toolcatalog writes its outputs at 100)
def _before_post_build(config: Any) -> None:
    _status("before on_post_build")


@event_priority(50)  # after toolcatalog's outputs (100; it lets its build go there), before the search plugin's (0)
def _outputs_written(config: Any) -> None:
    _status("toolcatalog's outputs written (at 100)")
    json.dumps, mkdocs_utils.write_file = _search_dumps, _search_write  # the search plugin's calls, split


@event_priority(-50)  # after the search plugin's (0), before toolcatalog's digest manifest (-100)
def _search_index(config: Any) -> None:
    json.dumps, mkdocs_utils.write_file = _dumps, _write_file
    _status("search index written (search, at 0)")


on_post_build = CombinedEvent(_before_post_build, _outputs_written, _search_index)


def on_shutdown() -> None:
    _status("end of the build")
