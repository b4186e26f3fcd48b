"""The outputs are written as they are made (issue #21, memory): what the MkDocs plugin calls
(`outputs.write_site`, `Build.write_outputs`) gives byte for byte what `outputs.render` holds in
memory, overrides from docs_dir included; each per-tool file is in the site before the catalog's
first byte is asked for; the catalog and the MCP list reach the disk piece by piece, no piece
larger than one entry; and writing never holds the outputs' text at once (tracemalloc's peak,
in bytes allocated, not time)."""

from __future__ import annotations

import hashlib
import json
import shutil
import tracemalloc
from pathlib import Path
from typing import Iterable

import pytest

from manifests import speccify_text
from toolcatalog import pipeline, sitefiles
from toolcatalog.outputs import write_pieces_atomic
from toolcatalog.options import Options
from toolcatalog.outputs import registry
from toolcatalog.outputs.published import FileDigest, of_bytes

REPO = Path(__file__).resolve().parents[1]
MANY = 60  # tools in the workspace the memory tests write


@pytest.fixture(scope="module")
def build(tmp_path_factory: pytest.TempPathFactory) -> pipeline.Build:
    folder = tmp_path_factory.mktemp("examples")
    shutil.copytree(REPO / "examples", folder / "examples")
    return pipeline.prepare(folder, Options(cache=False))


@pytest.fixture(scope="module")
def many(tmp_path_factory: pytest.TempPathFactory) -> pipeline.Build:
    folder = tmp_path_factory.mktemp("many")
    for index in range(MANY):
        path = folder / ".agent" / "tools" / f"tool-{index:03d}" / "TOOL.md"
        path.parent.mkdir(parents=True)
        path.write_text(speccify_text(f"tool-{index:03d}"), encoding="utf-8")
    return pipeline.prepare(folder, Options(cache=False, run_examples=False))


def _tree(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_streamed_outputs_are_the_rendered_bytes(build: pipeline.Build, tmp_path: Path) -> None:
    others = {"index.html": FileDigest(3, hashlib.sha256(b"abc").hexdigest())}
    expected = build.outputs(others)
    written = build.write_outputs(tmp_path, others)
    assert written.paths == list(expected)  # the registry's order, every file
    assert _tree(tmp_path) == {path: text.encode("utf-8") for path, text in expected.items()}
    assert written.catalog_digest == json.loads(expected["catalog.json"])["catalog_digest"]
    assert written.site_digest == "sha256:" + hashlib.sha256(expected["catalog.digests.json"].encode()).hexdigest()
    manifest = json.loads(expected["catalog.digests.json"])["files"]
    assert manifest["index.html"] == others["index.html"].as_dict()
    for path, text in expected.items():
        if path != "catalog.digests.json":
            assert manifest[path] == of_bytes(text.encode("utf-8")).as_dict()


def test_a_docs_file_replaces_a_streamed_output_as_before(build: pipeline.Build, tmp_path: Path) -> None:
    site, docs = tmp_path / "site", tmp_path / "docs"
    expected = build.outputs({})
    tool_file = next(path for path in expected if path.startswith("tools/"))
    for where in (site, docs):  # MkDocs copied the docs' own files into the site already
        for rel in (tool_file, "llms.txt", "catalog.json"):
            (where / rel).parent.mkdir(parents=True, exist_ok=True)
            (where / rel).write_text("the site's own\n", encoding="utf-8")
    others, _ = sitefiles.site_files(site)
    published = sitefiles.outputs_for_site(lambda o, over: build.write_outputs(site, o, over), site, docs)
    assert sorted(published.overridden) == sorted([tool_file, "llms.txt", "catalog.json"])
    held = build.outputs(others, published.overridden)
    assert "catalog.json" not in held and tool_file not in held
    assert published.files == list(held)
    assert published.catalog_digest is None  # not ours: the docs' file is published
    assert _tree(site) == {**{path: text.encode("utf-8") for path, text in held.items()},
                           tool_file: b"the site's own\n", "llms.txt": b"the site's own\n", "catalog.json": b"the site's own\n"}
    manifest = json.loads(held["catalog.digests.json"])["files"]
    assert manifest["catalog.json"] == of_bytes(b"the site's own\n").as_dict()


class Probe:
    """A sink that writes like the plugin's and notes, for each file, what was on disk when its
    first piece was asked for, and the largest piece it was given."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.on_disk: dict[str, set[str]] = {}
        self.largest: dict[str, int] = {}

    def put(self, path: str, pieces: Iterable[str]) -> FileDigest:
        self.on_disk[path] = set(_tree(self.folder))
        target = self.folder / path
        target.parent.mkdir(parents=True, exist_ok=True)
        data, largest = b"", 0
        for piece in pieces:
            largest = max(largest, len(piece))
            data += piece.encode("utf-8")
        target.write_bytes(data)
        self.largest[path] = largest
        return of_bytes(data)


def test_each_tool_file_is_on_disk_before_the_catalog_and_big_files_come_in_pieces(many: pipeline.Build, tmp_path: Path) -> None:
    probe = Probe(tmp_path)
    registry.emit(many.catalog, many.options, many.site, probe, {})
    expected = many.outputs({})
    tool_files = {t.json_path for t in many.catalog.tools}
    assert len(tool_files) == MANY
    assert tool_files <= probe.on_disk["catalog.json"]  # every per-tool file written before the catalog is
    assert _tree(tmp_path) == {path: text.encode("utf-8") for path, text in expected.items()}
    biggest_tool_file = max(len(expected[path]) for path in tool_files)
    for path in ("catalog.json", "mcp-tools.json"):
        assert len(expected[path]) > 10 * biggest_tool_file
        assert probe.largest[path] < 2 * biggest_tool_file  # never the whole text at once: the head, or one entry


class Measuring:
    """The plugin's own sink (`outputs.write_site`'s) that notes the bytes Python holds
    (tracemalloc) when the catalog's first piece is asked for: every entry has been made by then."""

    def __init__(self, folder: Path) -> None:
        self.folder, self.held = folder, -1

    def put(self, path: str, pieces: Iterable[str]) -> FileDigest:
        if path == "catalog.json":
            self.held = tracemalloc.get_traced_memory()[0]
        return write_pieces_atomic(self.folder.joinpath(*path.split("/")), pieces)


def test_writing_the_site_never_holds_the_outputs_text(many: pipeline.Build, tmp_path: Path) -> None:
    total = sum(len(text.encode("utf-8")) for text in many.outputs({}).values())
    sink = Measuring(tmp_path)
    tracemalloc.start()
    try:
        start = tracemalloc.get_traced_memory()[0]
        registry.emit(many.catalog, many.options, many.site, sink, {})
    finally:
        tracemalloc.stop()
    assert sum(len(data) for data in _tree(tmp_path).values()) == total
    # Once every entry is made, what is held is the entries' texts for the catalog and the MCP
    # list, compressed (about a fifth of the outputs here), and the per-tool files' digests;
    # holding those texts as they are would be about half, and every output's text all of it.
    assert 0 < sink.held - start < 0.35 * total, (sink.held - start, total)
