"""The fast paths of the outputs give exactly what the slow ones give.

A finished catalog is checked against its schema by jsonschema-rs first (only what it rejects goes
to `jsonschema`), its digests use Python's compiled JSON encoder where RFC 8785 writes the same
bytes, and each tool entry is written once for both the catalog and the tool's file. Each fast
path is held here to its reference, on real catalogs and on generated values (hypothesis).
"""

from __future__ import annotations

import copy
import functools
import shutil
from pathlib import Path
from typing import Any

import pytest
import rfc8785
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from manifests import mixed_workspace, workspace_all_formats
from toolcatalog import jsonschemas, outputs, pipeline
from toolcatalog.options import Options
from toolcatalog.outputs import catalog_json, integrity, llms, mcp

REPO = Path(__file__).resolve().parent.parent
SCHEMAS = sorted(p.name for p in (REPO / "plugin/toolcatalog/schemas").glob("*.json"))

pytestmark = pytest.mark.skipif(jsonschemas.jsonschema_rs is None, reason="jsonschema-rs is not installed")


@pytest.fixture(scope="module")
def builds(tmp_path_factory: pytest.TempPathFactory) -> list[pipeline.Build]:
    """Workspaces whose tools really ran (passed, failed, every format), and the demo unrun."""
    out = []
    for make in (mixed_workspace, workspace_all_formats):
        build = pipeline.prepare(make(tmp_path_factory.mktemp("ws")), Options(cache=False, jobs=2))
        pipeline.check(build)
        out.append(build)
    examples = tmp_path_factory.mktemp("examples")
    shutil.copytree(REPO / "examples", examples / "examples")
    out.append(pipeline.prepare(examples, Options(cache=False)))
    return out


@pytest.fixture(scope="module")
def documents(builds: list[pipeline.Build]) -> list[dict[str, Any]]:
    """Their catalog documents, every entry held at once."""
    return [outputs.catalog_document(build.catalog, build.options, build.site) for build in builds]


def test_outputs_made_one_entry_at_a_time_are_the_whole_documents_bytes(builds: list[pipeline.Build]) -> None:
    for build in builds:
        document = outputs.catalog_document(build.catalog, build.options, build.site)
        files = outputs.render(build.catalog, build.options, build.site)
        assert files["catalog.json"] == catalog_json.dumps(document)
        entries = {(e["id"], e["source"]): e for e in document["tools"]}
        for tool in build.catalog.tools:
            schema = catalog_json.SCHEMA_ID + "#/$defs/tool"
            assert files[tool.json_path] == catalog_json.dumps({"$schema": schema, **entries[(tool.id, tool.source)]})
        plan = mcp.plan(build.catalog, "mcp-tools.json")
        reference = mcp.document(plan, build.site, ttl_ms=build.options.mcp_ttl_ms, cache_scope=build.options.mcp_cache_scope,
                                 entries=entries, catalog_link="catalog.json", catalog_digest=document["catalog_digest"])
        assert files["mcp-tools.json"] == catalog_json.dumps(reference)
        assert files["llms.txt"] == llms.llms_txt(build.catalog, build.options, build.site, document)
        assert document["catalog_digest"] == integrity.catalog_digest(document)


def python_valid(name: str, instance: Any) -> bool:
    """`jsonschema`'s verdict, which its first error settles (the errors come one at a time)."""
    return next(iter(jsonschemas._bundled_validator(name).iter_errors(instance)), None) is None


def test_real_catalogs_are_valid_both_ways(documents: list[dict[str, Any]]) -> None:
    for document in documents:
        assert jsonschemas._fast_validator("catalog.schema.json").is_valid(document)
        assert python_valid("catalog.schema.json", document)
        assert document["tools"]


# Changes that keep a value JSON: the validators must never disagree in the fast one's favour.
REPLACEMENTS = st.one_of(
    st.none(), st.booleans(), st.integers(-3, 3), st.integers(), st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=12), st.sampled_from(["passed", "sha256:" + "0" * 64, "abc\n", "v1.2.3", "", "x" * 70, "٣"]),
    st.lists(st.integers(0, 2), max_size=2), st.fixed_dictionaries({}), st.fixed_dictionaries({"x": st.integers()}),
)


def _paths(value: Any, prefix: tuple = ()) -> list[tuple]:
    out = [prefix]
    if isinstance(value, dict):
        for key, item in value.items():
            out += _paths(item, prefix + (key,))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            out += _paths(item, prefix + (index,))
    return out


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])  # examples: conftest's profile
@given(data=st.data())
def test_the_fast_validator_never_accepts_what_jsonschema_rejects(documents: list[dict[str, Any]], data: st.DataObject) -> None:
    document = copy.deepcopy(data.draw(st.sampled_from(documents)))
    for _ in range(data.draw(st.integers(1, 3))):
        path = data.draw(st.sampled_from(_paths(document)[1:]))
        parent = document
        for part in path[:-1]:
            parent = parent[part]
        action = data.draw(st.sampled_from(["replace", "delete", "add"]))
        if action == "replace" or not isinstance(parent, dict):
            parent[path[-1]] = data.draw(REPLACEMENTS)
        elif action == "delete":
            del parent[path[-1]]
        else:
            parent[data.draw(st.text(min_size=1, max_size=8))] = data.draw(REPLACEMENTS)
    fast = jsonschemas._fast_validator("catalog.schema.json").is_valid(document)
    slow = python_valid("catalog.schema.json", document)  # once: the whole check is most of an example's cost
    if fast:
        assert slow
    assert (jsonschemas.validate_bundled("catalog.schema.json", document) == []) == slow


@pytest.mark.parametrize("name", SCHEMAS)
def test_every_bundled_schema_compiles_for_the_fast_validator(name: str) -> None:
    assert jsonschemas._fast_validator(name) is not None


def _bundled_patterns() -> list[str]:
    found = set()
    for name in SCHEMAS:
        for node, _path in jsonschemas._schema_nodes(jsonschemas.bundled(name), ()):
            if isinstance(node.get("pattern"), str):
                found.add(node["pattern"])
    return sorted(found)


# Made once per pattern, not once per example: a strategy built inside the test is built (and its
# regex parsed, its emptiness worked out) again for each example, most of its cost.
@functools.lru_cache(maxsize=None)
def _texts_for(pattern: str) -> st.SearchStrategy[str]:
    matching = st.from_regex(pattern)
    return st.one_of(matching, st.text(max_size=20), matching.map(lambda t: t + "\n"))


@functools.lru_cache(maxsize=None)
def _rust_pattern(pattern: str) -> Any:
    return jsonschemas.jsonschema_rs.validator_for({"$schema": "https://json-schema.org/draft/2020-12/schema", "pattern": pattern})


@pytest.mark.parametrize("pattern", _bundled_patterns())
@given(data=st.data())  # examples: conftest's profile
def test_the_bundled_patterns_match_no_more_in_rust_than_in_python(pattern: str, data: st.DataObject) -> None:
    # Held to the slow path's own matcher (`jsonschemas.search`, the `regex` package), not to `re`:
    # `re` takes U+001C-U+001F for whitespace (str.isspace), so `\S` fails on "P\x1f" where
    # ECMA-262, jsonschema-rs and `regex` all match it.
    text = data.draw(_texts_for(pattern))
    if _rust_pattern(pattern).is_valid(text):
        assert jsonschemas.search(pattern, text) is True


# -- RFC 8785 ------------------------------------------------------------------------------------------

KEYS = st.text(alphabet=st.characters(codec="utf-8"), max_size=6) | st.sampled_from(["a", "é", "\ue000", "\U0001f600", "b\U00010000"])
SCALARS = st.none() | st.booleans() | st.integers(-(2**60), 2**60) | st.text(alphabet=st.characters(codec="utf-8"), max_size=10)
JSON = st.recursive(SCALARS | st.floats(allow_nan=False, allow_infinity=False),
                    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(KEYS, inner, max_size=4), max_leaves=20)


@given(value=JSON)
def test_canonical_bytes_are_rfc8785s(value: Any) -> None:
    plain = [True]
    reference = rfc8785.dumps(integrity._as_ijson(value, plain))
    assert integrity.canonical(value) == reference


@given(entries=st.lists(st.dictionaries(st.sampled_from(["id", "name", "x", "é"]), JSON, max_size=4), max_size=4),
       extra=st.dictionaries(st.sampled_from(["a", "b", "version"]), JSON, max_size=3))
def test_sealing_gives_the_digests_each_entry_and_the_catalog_have(entries: list[dict[str, Any]], extra: dict[str, Any]) -> None:
    document = {**extra, "tools": entries}
    integrity.seal(document)
    for entry in document["tools"]:
        assert entry[integrity.ENTRY_FIELD] == integrity.entry_digest(entry)
    assert document[integrity.CATALOG_FIELD] == integrity.catalog_digest(document)


def test_sealing_a_catalog_that_holds_the_placeholder_text(documents: list[dict[str, Any]]) -> None:
    document = copy.deepcopy(documents[0])
    for placeholder in integrity._PLACEHOLDERS:  # in an entry and before and after where the tools go
        document["tools"][0]["description"] = placeholder
        document["diagnostics"] = [{"code": placeholder, "message": "".join(integrity._PLACEHOLDERS)}]
        document["zzz"] = placeholder
        integrity.seal(document)
        assert document[integrity.CATALOG_FIELD] == integrity.catalog_digest(document)


# -- writing each entry once ---------------------------------------------------------------------------------


def test_spliced_files_are_the_bytes_dumps_writes(documents: list[dict[str, Any]]) -> None:
    for document in documents:
        texts = [catalog_json.dumps(entry) for entry in document["tools"]]
        assert catalog_json.dumps_catalog(document, texts) == catalog_json.dumps(document)
        for entry, text in zip(document["tools"], texts):
            schema = catalog_json.SCHEMA_ID + "#/$defs/tool"
            assert catalog_json.dumps_tool_file(schema, entry, text) == catalog_json.dumps({"$schema": schema, **entry})


@given(entries=st.lists(st.dictionaries(KEYS | st.sampled_from(["$a", "$schema", "!"]), JSON, max_size=4), max_size=3),
       extra=st.dictionaries(st.sampled_from(["a", "tools2", "z"]), JSON, max_size=3))
def test_spliced_files_are_the_bytes_dumps_writes_for_any_json(entries: list[dict[str, Any]], extra: dict[str, Any]) -> None:
    document = {**extra, "tools": entries}
    texts = [catalog_json.dumps(entry) for entry in entries]
    assert catalog_json.dumps_catalog(document, texts) == catalog_json.dumps(document)
    for entry, text in zip(entries, texts):
        assert catalog_json.dumps_tool_file("s", entry, text) == catalog_json.dumps({"$schema": "s", **entry})


def test_the_slow_path_matches_whitespace_as_the_fast_one_does() -> None:
    # What hypothesis found: "P\x1f" against the AIP-30 duration pattern.
    pattern = r"^P(?:T)?\S+$"
    fast = jsonschemas.jsonschema_rs.validator_for({"$schema": "https://json-schema.org/draft/2020-12/schema", "pattern": pattern})
    for text in ("P\x1f", "PT\x1c", "P1D", "P\x85"):  # U+0085 found by hypothesis later: no space for ECMA-262
        assert fast.is_valid(text) and jsonschemas.search(pattern, text) is True
    for text in ("P ", "P\t", "P\u00a0", "P\ufeff"):
        assert not fast.is_valid(text) and jsonschemas.search(pattern, text) is False
