"""`jsonvalues.indented` writes exactly what `json.dumps(..., indent=2)` writes (catalog.json, the
per-tool files, the MCP list, the pages' JSON blocks), without the standard library's
pure-Python indenting encoder."""

from __future__ import annotations

import enum
import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from toolcatalog import jsonvalues
from toolcatalog.jsonvalues import indented

SCALARS = (st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.text(max_size=8)
           | st.floats(allow_nan=False, allow_infinity=False) | st.sampled_from(["\u2028", "é\n\t\"\\", "\x00\x7f", "\U0001f600"]))
JSON = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=4) | st.tuples(inner, inner)
                    | st.dictionaries(st.text(max_size=5), inner, max_size=4), max_leaves=30)


def reference(value: Any, sort_keys: bool = True, allow_nan: bool = False) -> str:
    try:
        return json.dumps(value, ensure_ascii=False, sort_keys=sort_keys, indent=2, allow_nan=allow_nan)
    except (ValueError, TypeError) as exc:
        return f"raised {type(exc).__name__}: {exc}"


def ours(value: Any, sort_keys: bool = True, allow_nan: bool = False) -> str:
    try:
        return indented(value, sort_keys=sort_keys, allow_nan=allow_nan)
    except (ValueError, TypeError) as exc:
        return f"raised {type(exc).__name__}: {exc}"


@given(value=JSON, sort_keys=st.booleans())
def test_the_text_is_json_dumps(value: Any, sort_keys: bool) -> None:
    assert ours(value, sort_keys) == reference(value, sort_keys)


class Level(enum.IntEnum):
    HIGH = 3


class Word(str, enum.Enum):
    A = "a"


@pytest.mark.parametrize("value", [
    {}, [], (), {"a": {}}, [[]], {"b": 1, "a": [1.5, None, True, False, "x"]}, {"": ""},
    {"x": float("nan")}, [float("inf")], {1: 2}, {"a": 1, 2: "b"}, {None: 1}, {"x": object()}, {"x": {1, 2}},
    {"level": Level.HIGH, "word": Word.A}, [2**64, -(2**64), 1e300, -0.0, 5e-324],
])
def test_unusual_values_are_written_or_refused_as_json_dumps_does(value: Any) -> None:
    for sort_keys in (True, False):
        for allow_nan in (True, False):
            assert ours(value, sort_keys, allow_nan) == reference(value, sort_keys, allow_nan)


def test_it_does_not_use_the_standard_librarys_indenting_encoder(monkeypatch: pytest.MonkeyPatch) -> None:
    """The point of it: the pure-Python encoder (`json.encoder._make_iterencode`) is not called."""
    import json.encoder

    calls = []
    real = json.encoder._make_iterencode

    def counted(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(json.encoder, "_make_iterencode", counted)
    value = {"tools": [{"id": f"t{i}", "inputs": {"type": "object", "properties": {"x": {"type": "number", "minimum": 0.5}}}}
                       for i in range(20)]}
    assert indented(value) == json.dumps(value, ensure_ascii=False, sort_keys=True, indent=2, allow_nan=False)
    assert len(calls) == 1  # the reference's own call, none of ours
    assert jsonvalues.indented(value, sort_keys=False) == json.dumps(value, ensure_ascii=False, indent=2)
