"""The model stays compact (issue #21, item 3: 5,000 tools in a quarter of a gigabyte).

Checked by the design, never by a memory threshold that depends on the machine: the model's
objects have no `__dict__`; equal schemas and texts of different tools are one object, whether
parsed or read back from the parse cache; the model's own lists are never shared; a prepared
build keeps no contract line table; the near-duplicate findings keep a bounded record per group.
"""

from __future__ import annotations

import dataclasses
import weakref
from pathlib import Path
from typing import Any

import pytest

from manifests import speccify_text, write
from toolcatalog import modelcodec, pipeline, quality
from toolcatalog.model import Tool
from toolcatalog.options import Options


def _workspace(root: Path, count: int = 3) -> Path:
    for n in range(count):
        write(root / f".agent/tools/tool-{n}/TOOL.md", speccify_text(f"tool-{n}"))
    return root


def _objects(value: Any, seen: set[int] | None = None) -> list[Any]:
    """Every model dataclass object reachable from `value`."""
    seen = set() if seen is None else seen
    found: list[Any] = []
    stack = [value]
    while stack:
        item = stack.pop()
        if id(item) in seen:
            continue
        seen.add(id(item))
        if dataclasses.is_dataclass(item) and not isinstance(item, type):
            found.append(item)
            stack.extend(getattr(item, f.name) for f in dataclasses.fields(item))
        elif isinstance(item, (list, tuple)):
            stack.extend(item)
        elif isinstance(item, dict):
            stack.extend(item.values())
    return found


@pytest.mark.parametrize("cache", [False, True])
def test_tools_share_equal_values_and_have_no_dict(tmp_path: Path, cache: bool) -> None:
    root = _workspace(tmp_path / "ws")
    options = Options(cache_dir=str(tmp_path / "cache")) if cache else Options(cache=False)
    if cache:
        pipeline.prepare(root, options, skip=[root / "docs", root / "site"])  # fills the parse cache
    build = pipeline.prepare(root, options, skip=[root / "docs", root / "site"])
    pipeline.check(build)
    tools = build.catalog.tools
    assert len(tools) == 3 and all(t.inputs for t in tools)
    first, *others = tools
    for other in others:
        assert other.inputs is first.inputs and other.outputs is first.outputs  # one schema object, not a copy per tool
        assert other.fields["inputs"] is first.inputs
        assert other.examples[0].title is first.examples[0].title  # equal text: one string
        assert other.examples[0].input is first.examples[0].input
        assert other.diagnostics is not first.diagnostics and other.examples is not first.examples  # the model's own lists
        assert other.schema_ok is not first.schema_ok and other.effects is not first.effects
    for obj in _objects(tools):
        assert not hasattr(obj, "__dict__"), type(obj).__name__
    weakref.ref(first)  # a tool can still be referred to weakly (the plugin's release test does)
    assert all(t.lines == {} for t in tools), "the contract's line table is the quality findings' only"
    assert build.shared is None, "the build lets the sharing table go once the tools no longer change"


def test_shared_values_are_equal_as_json_only() -> None:
    shared = modelcodec.Shared()
    one, true, real, minus = (shared.value({"a": v}) for v in (1, True, 1.0, -0.0))
    assert len({id(one), id(true), id(real), id(minus)}) == 4
    assert shared.value({"a": 1}) is one and shared.value({"a": 0.0}) is not minus
    ab, ba = shared.value({"a": 1, "b": [1, 2]}), shared.value({"b": [1, 2], "a": 1})
    assert ab is not ba and list(ba) == ["b", "a"]  # key order is part of a value: outputs keep it
    assert ab["b"] is ba["b"]
    assert shared.value([1, [2]]) is not shared.value([1, [True]])
    text = "".join(["x", "y"])
    assert shared.value(text) is shared.value("xy")


def test_sharing_leaves_the_models_own_containers_alone() -> None:
    shared = modelcodec.Shared()
    a, b = (Tool(id=n, name=n, format="speccify", source=n, abs_path=Path("/w") / n, inputs={"type": "object"}) for n in "ab")
    shared.model(a)
    shared.model(b)
    assert a.inputs is b.inputs
    a.warning("only a's")
    a.schema_ok["inputs"] = True
    assert b.diagnostics == [] and b.schema_ok == {}


def test_near_duplicate_records_stay_bounded() -> None:
    tools = [Tool(id=f"t{n:03d}", name="t", format="speccify", source=f"t{n}", abs_path=Path("/w") / str(n),
                  description=f"Turns the titles of changelog entries into slugs, variant {n % 7} of many for agents")
             for n in range(120)]
    groups, counts, lowest = quality._similar_counts(tools)
    assert all(len(group) <= quality.MAX_NAMED + 1 for group in lowest)
    assert sum(counts) > len(groups) * (quality.MAX_NAMED + 1)  # far more similar tools than any record names
    full = {tool.id: [o.id for o in others] for tool, others in quality.near_duplicates(tools)}
    for tool, others, count in quality._near_duplicate_summaries(tools):
        assert [o.id for o in others] == full[tool.id][: quality.MAX_NAMED] and count == len(full[tool.id])
