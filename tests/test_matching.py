"""differences / parse_json_output / unwrap_envelope."""

from __future__ import annotations

import pytest

from toolcatalog.matching import MAX_DIFFERENCES, differences, parse_json_output, unwrap_envelope


# --------------------------------------------------------------------------- differences


def test_equal_values_have_no_differences():
    value = {"a": [1, "x", None, True, {"b": 2.5}], "c": {}}
    assert differences(value, value) == []


def test_extra_actual_keys_are_allowed():
    assert differences({"ok": True}, {"ok": True, "sum": 6, "count": 3}) == []
    assert differences({}, {"anything": 1}) == []


def test_missing_key():
    assert differences({"a": {"b": 1}}, {"a": {}}) == ["$.a.b: missing"]


def test_missing_key_with_null_expected_is_still_missing():
    assert differences({"a": None}, {}) == ["$.a: missing"]
    assert differences({"a": None}, {"a": None}) == []


def test_int_equals_float():
    assert differences(1, 1.0) == []
    assert differences({"sum": 6}, {"sum": 6.0}) == []
    assert differences(0.3, 0.3) == []
    assert differences(1, 2) == ["$: expected 1, got 2"]


def test_booleans_never_equal_numbers():
    assert differences(True, 1) == ["$: expected true, got 1"]
    assert differences(1, True) == ["$: expected 1, got true"]
    assert differences(False, 0) == ["$: expected false, got 0"]
    assert differences(0.0, False) == ["$: expected 0.0, got false"]
    assert differences({"ok": True}, {"ok": 1}) == ["$.ok: expected true, got 1"]
    assert differences(True, True) == []


def test_null_and_strings():
    assert differences(None, None) == []
    assert differences(None, 0) == ["$: expected null, got 0"]
    assert differences("", None) == ['$: expected "", got null']
    assert differences("1", 1) == ['$: expected "1", got 1']
    assert differences("a", "a") == []
    assert differences("é", "e") == ['$: expected "é", got "e"']


def test_nested_paths():
    expected = {"a": {"list": [{"x": 1}, {"x": 2}]}}
    actual = {"a": {"list": [{"x": 1}, {"x": 3}]}}
    assert differences(expected, actual) == ["$.a.list[1].x: expected 2, got 3"]


def test_non_identifier_keys_are_bracketed():
    assert differences({"a b": 1}, {"a b": 2}) == ['$["a b"]: expected 1, got 2']
    assert differences({"x": {"with-dash": 1}}, {"x": {}}) == ['$.x["with-dash"]: missing']
    assert differences({"9lives": 1}, {}) == ['$["9lives"]: missing']
    assert differences({'q"uote': 1}, {}) == ['$["q\\"uote"]: missing']


def test_non_string_expected_keys_match_their_json_spelling():
    # YAML may parse `1: x` as an int key; JSON output always has "1".
    assert differences({1: "x", None: "y"}, {"1": "x", "null": "y"}) == []
    assert differences({False: "n"}, {"false": "n"}) == []
    assert differences({1: "x"}, {}) == ['$["1"]: missing']


def test_array_length_mismatch():
    assert differences({"x": [1, 2, 3]}, {"x": [1, 2]}) == ["$.x: expected 3 items, got 2"]
    assert differences([1], []) == ["$: expected 1 item, got 0"]
    assert differences([], [1]) == ["$: expected 0 items, got 1"]


def test_arrays_compare_element_wise_in_order():
    assert differences([1, 2], [2, 1]) == ["$[0]: expected 1, got 2", "$[1]: expected 2, got 1"]
    assert differences([{"a": 1}], [{"a": 1, "b": 2}]) == []


def test_type_mismatch_shows_compact_json():
    assert differences({"x": {"a": [1, 2]}}, {"x": [1, 2]}) == ['$.x: expected {"a":[1,2]}, got [1,2]']
    assert differences([1], {"0": 1}) == ['$: expected [1], got {"0":1}']
    assert differences({"a": 1}, "text") == ['$: expected {"a":1}, got "text"']


def test_long_values_are_shortened():
    (line,) = differences("x" * 500, "y" * 500)
    assert line.startswith('$: expected "xxx')
    assert len(line) < 200
    assert "..." in line


def test_custom_root_path():
    assert differences({"a": 1}, {"a": 2}, path="$.output") == ["$.output.a: expected 1, got 2"]


def test_stops_after_twenty_differences():
    expected = {f"k{i}": i for i in range(50)}
    out = differences(expected, {})
    assert len(out) == MAX_DIFFERENCES == 20
    assert out[0] == "$.k0: missing"
    assert len(differences(list(range(50)), [-1] * 50)) == 20


def test_deep_nesting_does_not_crash():
    deep_e: object = 1
    deep_a: object = 2
    for _ in range(5000):
        deep_e, deep_a = [deep_e], [deep_a]
    out = differences(deep_e, deep_a)
    assert len(out) == 1
    assert "nested too deeply" in out[0]


# --------------------------------------------------------------------------- parse_json_output


def test_parse_json_output_ok():
    assert parse_json_output(b'  {"ok": true, "sum": 6}\n') == (True, {"ok": True, "sum": 6}, "")
    assert parse_json_output(b"42") == (True, 42, "")
    assert parse_json_output(b"null") == (True, None, "")
    assert parse_json_output('"héllo"'.encode()) == (True, "héllo", "")


def test_parse_json_output_empty():
    assert parse_json_output(b"") == (False, None, "stdout is empty")
    assert parse_json_output(b" \n\t ") == (False, None, "stdout is empty")


@pytest.mark.parametrize(
    "raw",
    [b"not json", b'{"a": 1} {"b": 2}', b'{"a": 1}\n{"b": 2}\n', b"{'a': 1}", b"[1, 2", b"NaN", b'{"x": Infinity}'],
)
def test_parse_json_output_invalid(raw):
    ok, value, detail = parse_json_output(raw)
    assert ok is False and value is None
    assert detail.startswith("stdout is not JSON: ")


def test_parse_json_output_not_utf8():
    ok, value, detail = parse_json_output(b'"\xff\xfe"')
    assert (ok, value) == (False, None)
    assert detail.startswith("stdout is not JSON: ") and "UTF-8" in detail


def test_parse_json_output_guards_recursion():
    ok, value, detail = parse_json_output(b"[" * 200_000 + b"]" * 200_000)
    assert (ok, value) == (False, None)
    assert detail == "stdout is JSON nested more than 64 levels deep, which is not accepted"


def test_parse_json_output_tolerates_bom():
    assert parse_json_output(b'\xef\xbb\xbf{"a": 1}') == (True, {"a": 1}, "")


# --------------------------------------------------------------------------- unwrap_envelope


def test_unwrap_envelope():
    assert unwrap_envelope({"ok": True, "value": {"sum": 6}}) == {"sum": 6}
    assert unwrap_envelope({"ok": True, "value": None}) is None
    assert unwrap_envelope({"ok": True, "value": [1, 2]}) == [1, 2]


@pytest.mark.parametrize(
    "value",
    [
        {"ok": False, "error": {"code": "bad", "message": "no"}},
        {"ok": False, "value": 1},
        {"ok": 1, "value": 1},  # `ok` must be the boolean true
        {"ok": True, "sum": 6},  # speccify-style result: no envelope
        {"value": 1},
        [{"ok": True, "value": 1}],
        "text",
        None,
        7,
    ],
)
def test_unwrap_envelope_leaves_everything_else(value):
    assert unwrap_envelope(value) == value
    assert unwrap_envelope(value) is value


def test_envelope_then_match():
    ok, value, _ = parse_json_output(b'{"ok": true, "value": {"count": 3.0, "extra": 1}}')
    assert ok
    assert differences({"count": 3}, unwrap_envelope(value)) == []
