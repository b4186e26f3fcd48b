"""Canonical JSON (RFC 8785) of values with fractional numbers through the compiled encoder.

Most catalog entries hold a float somewhere (an example's output, a schema's `multipleOf`); those
used to be canonicalized entirely by the pure-Python `rfc8785` package, twice per entry. Now
the compiled encoder writes all but the floats and `rfc8785` writes each float: the bytes must
stay exactly `rfc8785`'s.
"""

from __future__ import annotations

from typing import Any

import rfc8785
from hypothesis import given
from hypothesis import strategies as st

from toolcatalog.outputs import integrity

EDGE_FLOATS = [0.0, -0.0, 1e21, 1e20, 9.999999999999999e20, 1e-7, 1e-6, 1.5e-7, 5e-324, 1.7976931348623157e308,
               0.1, 100.0, -2.5, 123456789012345680000.0, 2.0**53, 4.35, 1 / 3, -1e-300]
MARKER_LIKE = ["\x000\x00", "\x001\x00", "\x00", '"\\u0000', "\x0012\x00x", "\\u00000\\u0000"]
KEYS = st.text(max_size=5) | st.sampled_from(["a", "é", "\ue000", "\U0001f600", "\x000\x00"])
SCALARS = (st.none() | st.booleans() | st.integers(-(2**60), 2**60) | st.text(max_size=8)
           | st.sampled_from(MARKER_LIKE) | st.sampled_from(EDGE_FLOATS) | st.floats(allow_nan=False, allow_infinity=False))
JSON = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(KEYS, inner, max_size=4), max_leaves=25)


def reference(value: Any) -> bytes | None:
    try:
        return rfc8785.dumps(integrity._as_ijson(value, [True]))
    except (rfc8785.CanonicalizationError, UnicodeEncodeError):
        return None


@given(value=JSON)
def test_the_bytes_are_rfc8785s(value: Any) -> None:
    expected = reference(value)
    if expected is None:
        return
    assert integrity.canonical(value) == expected


def test_edge_floats_and_marker_like_strings() -> None:
    for number in EDGE_FLOATS:
        for text in ["plain", *MARKER_LIKE]:
            value = {"n": [number, {"m": number, "s": text}], text: number, "z": [text, 1, 2**60]}
            assert integrity.canonical(value) == rfc8785.dumps(integrity._as_ijson(value, [True])), (number, text)


def test_floats_take_the_compiled_path() -> None:
    value = {"outputs": {"mean": 4.25, "count": 3}, "tags": ["a"], "ratio": 0.5}
    fast = integrity._with_floats(integrity._as_ijson(value, [True]))
    assert fast == rfc8785.dumps(value) == b'{"outputs":{"count":3,"mean":4.25},"ratio":0.5,"tags":["a"]}'


def test_what_the_compiled_path_leaves_to_rfc8785() -> None:
    # A key outside the basic plane sorts by UTF-16 units in RFC 8785, by code point in Python.
    astral = {"\U0001f600": 0.5, "\uffff": 1.5}
    assert integrity._with_floats(astral) is None
    assert integrity.canonical(astral) == rfc8785.dumps(astral)
    # A string that reads like a float's marker: more markers than floats.
    looks_like_one = {"a": 0.5, "b": "\x000\x00"}
    assert integrity._with_floats(looks_like_one) is None
    assert integrity.canonical(looks_like_one) == rfc8785.dumps(looks_like_one)


def test_a_non_finite_float_is_still_refused() -> None:
    import pytest

    with pytest.raises(integrity.DigestError):
        integrity.canonical({"x": [float("nan")]})
    with pytest.raises(integrity.DigestError):
        integrity.canonical({"x": float("inf"), "y": 0.5})
