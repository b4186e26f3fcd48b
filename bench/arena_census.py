"""A MkDocs hook that says which objects keep CPython's small-object arenas (issue #21, memory;
used for bench/README.md's `mem6` section). Add it to a config's `hooks:` and build; it writes to
stderr. Diagnostic only: a census walks every object and allocates while it does, so a build
with one has a higher peak than the same build without (measure peaks with `rss_hook.py`).

Python's allocator (pymalloc) takes memory from the system in 1 MiB arenas, cut into 16 KiB pools
of blocks of one size, and gives an arena back only when every block in it is free. A few small
objects that outlive a large structure keep the arenas they were made in, resident, however
little of them is in use: that is what kept the catalog's memory after the plugin let it go.

- Each phase: a line like `rss_hook.py`'s (VmRSS, VmHWM, glibc's heap, pymalloc's arenas and the
  bytes of objects in them, free blocks in used pools).
- `ARENA_CENSUS=files0,letgo,nav,search` (any of them): at that point (`files0` before any
  `on_files`; `letgo` inside the plugin's `_move`, right after the catalog was let go after
  `on_files` and before what lives on is made again; `nav` after `on_nav`; `search` before the
  search plugin's `on_post_build`), every object reachable from the collector's objects is placed
  in its pool and arena by the pool's header, and for the arenas made after `files0` the hook
  prints how many there are, the bytes allocated in them by their pool headers (every block,
  reachable or not: dict key tables, list arrays, ...), the bytes of the reachable objects, the
  kinds of objects in them (type, and a few keys or the start of a text), and the 40 sparsest.
- `ARENA_WHO=int` (a type name), with `letgo`: the arenas made after `files0` that hold only
  objects of that type, and what refers to a few of them.

The pool header layout read here is CPython 3.11's and 3.12's (`Objects/obmalloc.c`: the count of
blocks in use at offset 0, the arena's index at 32, the size class at 36); elsewhere the census is
skipped."""

from __future__ import annotations

import collections
import ctypes
import gc
import os
import sys
import time
from typing import Any

from mkdocs.plugins import CombinedEvent, event_priority

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # MkDocs loads a hook by its path alone
import rss_hook  # noqa: E402 (bench/rss_hook.py: the allocators' totals)

_START = time.perf_counter()
_POINTS = set(filter(None, os.environ.get("ARENA_CENSUS", "").split(",")))
_WHO = os.environ.get("ARENA_WHO", "")
_POOL = 16 * 1024
_LAYOUT_KNOWN = sys.version_info[:2] in ((3, 11), (3, 12)) and sys.maxsize > 2 ** 32
_BEFORE: set[int] = set()  # arena indexes in use before on_files
_PAGES = [0]


def _glibc() -> str:
    info = rss_hook._mallinfo2()  # noqa: SLF001 - the same reading as rss_hook.py's
    mb = 2 ** 20
    return f" heap {info.uordblks / mb:5.1f} free {info.fordblks / mb:5.1f} mapped {info.hblkhd / mb:5.1f}" if info is not None else ""


def _pymalloc() -> str:
    found = rss_hook._pymalloc()  # noqa: SLF001
    mb = 2 ** 20
    return (f" | arenas {found.get('arenas allocated current', 0):4d} objects {found.get('bytes in allocated blocks', 0) / mb:5.1f}"
            f" free blocks {found.get('bytes in available blocks', 0) / mb:5.1f} MB")


def _status(label: str) -> None:
    values = rss_hook._vm()  # noqa: SLF001
    sys.stderr.write(f"ARENA {label:<38} rss={values.get('VmRSS', 0):4d} peak={values.get('VmHWM', 0):4d} MB"
                     f" t={time.perf_counter() - _START:6.1f}s{_glibc()}{_pymalloc()}\n")


def _writable() -> list[tuple[int, int]]:
    ranges = []
    with open("/proc/self/maps", encoding="ascii") as maps:
        for line in maps:
            fields = line.split()
            if "rw" in fields[1]:
                low, high = (int(x, 16) for x in fields[0].split("-"))
                ranges.append((low, high))
    return ranges


def _reachable() -> dict[int, Any]:
    """Every object the collector tracks, and everything they refer to (untracked tuples and dicts
    of atoms, strings, numbers), by address."""
    tracked = gc.get_objects()
    seen: dict[int, Any] = {id(o): o for o in tracked}
    todo = list(tracked)
    while todo:
        for ref in gc.get_referents(todo.pop()):
            if id(ref) not in seen:
                seen[id(ref)] = ref
                if not gc.is_tracked(ref):
                    todo.append(ref)
    return seen


def _kind(o: Any) -> str:
    name = type(o).__name__
    try:
        if isinstance(o, str):
            return "str " + repr(o[:50])
        if isinstance(o, dict):
            return "dict of " + ",".join(sorted(str(k)[:20] for k in list(o)[:6]))
        if isinstance(o, tuple):
            return f"tuple{len(o)} of " + ",".join(type(x).__name__ for x in o[:4])
        if callable(o) and hasattr(o, "__qualname__"):
            return f"{name} {getattr(o, '__module__', '?')}.{o.__qualname__}"
    except Exception:
        pass
    return f"{name} ({type(o).__module__})"


def census(point: str) -> None:
    if not _LAYOUT_KNOWN:
        sys.stderr.write(f"ARENA census {point}: skipped (pool headers known for CPython 3.11 and 3.12, 64-bit)\n")
        return
    if point != "letgo":
        gc.collect()
    ranges = _writable()

    def mapped(address: int) -> bool:
        return any(low <= address and address + 48 <= high for low, high in ranges)

    pools: dict[int, tuple[int, int, int] | None] = {}

    def pool_of(address: int) -> tuple[int, int, int] | None:
        pool = address & ~(_POOL - 1)
        if pool not in pools:
            found = None
            if mapped(pool):
                count = ctypes.c_uint.from_address(pool).value
                arena = ctypes.c_uint.from_address(pool + 32).value
                size_class = ctypes.c_uint.from_address(pool + 36).value
                if size_class <= 31 and count <= _POOL // 16 and arena < 1 << 20:
                    found = (arena, size_class, count)
            pools[pool] = found
        return pools[pool]

    seen = _reachable()
    objects: dict[int, list[Any]] = collections.defaultdict(list)
    reachable: collections.Counter[int] = collections.Counter()
    for address, o in seen.items():
        try:
            if sys.getsizeof(o) > 512 + 32:  # not a small object (the collector's header included)
                continue
        except Exception:
            continue
        where = pool_of(address)
        if where is not None:
            objects[where[0]].append(o)
            reachable[where[0]] += (where[1] + 1) * 16
    # Every pool of an arena near the pools seen (a freed pool keeps its arena's index).
    allocated: collections.Counter[int] = collections.Counter()
    counted: set[int] = set()
    for pool, where in list(pools.items()):
        if where is None:
            continue
        for step in range(-64, 65):
            other = pool + step * _POOL
            found = pool_of(other) if other not in counted else None
            if found is not None and found[0] == where[0]:
                counted.add(other)
                allocated[where[0]] += found[2] * (found[1] + 1) * 16
    arenas = set(objects) | set(allocated)
    if point == "files0":
        _BEFORE.update(arenas)
        sys.stderr.write(f"ARENA census files0: {len(seen)} objects reachable, {len(arenas)} arenas hold some\n")
        return
    new = sorted((a for a in arenas if a not in _BEFORE), key=lambda a: reachable[a])
    mb = 2 ** 20
    sys.stderr.write(f"ARENA census {point}: {len(seen)} objects reachable; {len(new)} arenas made after files0 hold "
                     f"{sum(allocated[a] for a in new) / mb:.2f} MB (pool headers), {sum(reachable[a] for a in new) / mb:.2f} MB "
                     f"of it reachable objects\n")
    kinds: collections.Counter[str] = collections.Counter()
    sizes: collections.Counter[str] = collections.Counter()
    for arena in new:
        for o in objects[arena]:
            kind = _kind(o)
            kinds[kind] += 1
            sizes[kind] += sys.getsizeof(o)
    for kind, size in sizes.most_common(30):
        sys.stderr.write(f"ARENA census {point}:   {size / 1024:8.1f} KB {kinds[kind]:7d}  {kind[:100]}\n")
    for arena in new[:40]:
        held = collections.Counter(type(o).__name__ for o in objects[arena])
        sys.stderr.write(f"ARENA census {point}:   arena {arena}: {allocated[arena] // 1024} KB allocated, "
                         f"{reachable[arena] // 1024} KB reachable: {held.most_common(5)}\n")
    if _WHO and point == "letgo":
        only = [a for a in new if objects[a] and all(type(o).__name__ == _WHO for o in objects[a])]
        sys.stderr.write(f"ARENA census {point}: {len(only)} arenas hold only {_WHO}\n")
        sample = [objects[a][0] for a in only[:4]]
        ours = {id(seen), id(objects), id(sample)} | {id(v) for v in objects.values()}
        for o in sample:
            for ref in gc.get_referrers(o):
                if id(ref) not in ours:
                    sys.stderr.write(f"ARENA census {point}:   {o!r:.40} <- {_kind(ref)[:100]}\n")


def _census_at(point: str, label: str) -> None:
    _status(label)
    if point in _POINTS:
        census(point)
        _status(label + " (after the census)")


def _watch_let_go() -> None:
    """The moment inside the plugin's `_move` after the catalog was let go (its `pickle.loads`)."""
    if "letgo" not in _POINTS:
        return
    import pickle

    from toolcatalog import plugin

    class _Pickle:
        dumps = staticmethod(pickle.dumps)
        HIGHEST_PROTOCOL = pickle.HIGHEST_PROTOCOL

        @staticmethod
        def loads(blob: bytes) -> Any:
            _census_at("letgo", "catalog let go (before the copies)")
            return pickle.loads(blob)

    plugin.pickle = _Pickle  # type: ignore[assignment]


@event_priority(300)
def _before_files(files: Any, config: Any) -> None:
    _census_at("files0", "before on_files")
    _watch_let_go()


@event_priority(-2000)
def _after_files(files: Any, config: Any) -> None:
    _status("after every on_files")


on_files = CombinedEvent(_before_files, _after_files)


@event_priority(-200)
def on_nav(nav: Any, config: Any, files: Any) -> None:
    _census_at("nav", "after on_nav")


@event_priority(-200)
def on_post_page(output: str, page: Any, config: Any) -> None:
    _PAGES[0] += 1
    if _PAGES[0] % 1000 == 0:
        _status(f"{_PAGES[0]} pages written")


@event_priority(50)  # after toolcatalog's outputs (100), before the search plugin's index (0)
def _before_search(config: Any) -> None:
    _census_at("search", "before the search index")


@event_priority(-50)
def _after_search(config: Any) -> None:
    _status("search index written")


on_post_build = CombinedEvent(_before_search, _after_search)
