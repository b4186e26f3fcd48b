"""The parse cache: a warm harvest gives exactly what parsing gives, and never trusts a damaged entry.

Every manifest of the repository's examples, of the shared corpus (when present), of a workspace
that really runs and of a set of broken manifests is harvested three ways (no cache, a cold cache,
a warm one) and every output for agents and every field of every tool must be equal. Entries are
then damaged or planted on disk, one way each: each is a miss (the manifest is parsed again),
except a well-formed entry under the right key, which shows that warm harvests really read it.
Also: libyaml and PyYAML's own composer read the same documents.
"""

from __future__ import annotations

import ast
import json
import os
import shutil
from pathlib import Path
from typing import Any, Callable

import pytest

from manifests import mixed_workspace, speccify_text, write, workspace_all_formats
from toolcatalog import modelcodec, parsecache, pipeline, safeyaml, sealing
from toolcatalog.options import Options

REPO = Path(__file__).resolve().parent.parent
CORPUS = REPO.parent / "shared" / "corpus"

BROKEN = {
    "bad-yaml": "---\nname: bad-yaml\ndescription: [unclosed\n---\n",
    "no-front-matter": "# just a page\n",
    "ambiguous": speccify_text("ambiguous", extra="when: 2024-01-02\nflag: yes\ncode: 0755\n"),
    "duplicate": speccify_text("duplicate", extra="extra: 1\nextra: 2\n"),
    "bad-schema": speccify_text("bad-schema").replace("  type: object\n", "  type: objekt\n", 1),
    "deep": speccify_text("deep", extra="deep: " + "[" * 2000 + "]" * 2000 + "\n"),
    "not-utf8": b"---\nname: not-utf8\ndescription: caf\xe9\n---\n",
    "aip": "---\nid: demo.aip\nname: Demo\nversion: 1.0.0\ndescription: d\nmutates: [fs:write]\n---\nbody\n",
}


def broken_workspace(root: Path) -> Path:
    for name, text in BROKEN.items():
        write(root / ".agent/tools" / name / "TOOL.md", text)
    write(root / ".tools/orphan/DRIVER.md", "---\nid: orphan\nkind: cli\nimplements: [{tool: nothing}]\n---\n")
    write(root / ".drivers/half/DRIVER.md", "---\nid: half\n")
    return root


def _examples(root: Path) -> Path:
    shutil.copytree(REPO / "examples", root / "examples")
    return root


WORKSPACES: dict[str, Callable[[Path], Path]] = {
    "examples": _examples,
    "mixed": mixed_workspace,
    "all formats": workspace_all_formats,
    "broken": broken_workspace,
}


def snapshot(root: Path, **options: Any) -> tuple[dict[str, str], list[Any]]:
    """Every output for agents, and every field of every tool and driver, after a harvest."""
    build = pipeline.prepare(root, Options(**options), skip=[root / "docs", root / "site"])
    tools = [modelcodec.encode(t) | {"drivers": [d.id for d in t.drivers]} for t in build.catalog.tools]
    drivers = [modelcodec.encode(d) for d in build.catalog.drivers]
    return build.outputs(), [tools, drivers, [d.as_dict() for d in build.all_diagnostics()]]


def entries(cache: Path) -> list[Path]:
    return sorted((cache / parsecache.SUBFOLDER).rglob("*.json"))


@pytest.mark.parametrize("name", [*WORKSPACES, "corpus"])
def test_a_warm_harvest_gives_exactly_what_parsing_gives(tmp_path: Path, name: str) -> None:
    if name == "corpus":
        if not (CORPUS / "SOURCES.md").is_file():
            pytest.skip(f"corpus not found at {CORPUS}")
        root, paths = CORPUS, ["speccify", "agentproto", "smart-tools-catalog"]  # read in place; the cache goes to tmp_path
    else:
        root, paths = WORKSPACES[name](tmp_path / "ws"), []
    cache = tmp_path / "cache"
    fresh = snapshot(root, cache=False, paths=paths)
    cold = snapshot(root, cache_dir=str(cache), paths=paths)
    manifests = [p for p in root.rglob("*.md") if p.name in ("TOOL.md", "DRIVER.md") and "site" not in p.parts]
    stored = entries(cache)
    assert stored and len(stored) <= len(manifests)
    mtimes = {p: p.stat().st_mtime_ns for p in stored}
    warm = snapshot(root, cache_dir=str(cache), paths=paths)
    assert {p: p.stat().st_mtime_ns for p in entries(cache)} == mtimes, "a warm harvest writes nothing"
    assert cold == fresh
    assert warm == fresh


def test_every_readable_manifest_is_stored_once(tmp_path: Path) -> None:
    root = broken_workspace(tmp_path / "ws")
    snapshot(root, cache_dir=str(tmp_path / "cache"))
    # Unreadable bytes (not UTF-8) still parse into a tool, so every one of the ten manifests is stored.
    assert len(entries(tmp_path / "cache")) == len(BROKEN) + 2


def _valid_tool(root: Path) -> Path:
    return write(root / ".agent/tools/good-tool/TOOL.md", speccify_text("good-tool"))


def read_entry(path: Path) -> Any:
    """An entry's JSON, its seal line aside."""
    return json.loads(path.read_text(encoding="utf-8").partition("\n")[2])


def write_entry(path: Path, entry: Any, root: Path) -> None:
    """`entry` sealed with the build's key, as only a holder of the key can write it: what the
    cache checks besides the seal (the codec, the key echo) is tested with these."""
    key = sealing.build_key(root)
    path.write_text(key.seal(parsecache.LABEL, json.dumps(entry)), encoding="utf-8")


def _only_entry(cache: Path) -> tuple[Path, dict[str, Any]]:
    (path,) = entries(cache)
    return path, read_entry(path)


def test_a_warm_harvest_reads_the_entry_and_an_edited_manifest_is_parsed_again(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    manifest = _valid_tool(root)
    cache = tmp_path / "cache"
    snapshot(root, cache_dir=str(cache))
    path, entry = _only_entry(cache)
    # Planted under the right key, well formed, but not sealed with the build's key (what anyone can
    # write, a commit included): a miss, and the log says so.
    entry["value"]["description"] = "planted"
    path.write_text(json.dumps(entry), encoding="utf-8")
    build = pipeline.prepare(root, Options(cache_dir=str(cache)))
    assert build.catalog.tools[0].description == "Echo a text back."
    assert [n.text for n in build.catalog.notes] == ["1 parsed manifests in the cache carry no seal of this version; not used, checked again here"]
    # Sealed with the build's key (only a holder of the key can): read as it is, so warm harvests
    # really read entries; what the cache refuses besides the seal is anything that is not exactly
    # what it writes (below).
    write_entry(path, entry, root)
    build = pipeline.prepare(root, Options(cache_dir=str(cache)))
    assert build.catalog.tools[0].description == "planted" and not build.catalog.notes
    manifest.write_text(manifest.read_text(encoding="utf-8").replace("Echo a text back.", "Echo it."), encoding="utf-8")
    build = pipeline.prepare(root, Options(cache_dir=str(cache)))
    assert build.catalog.tools[0].description == "Echo it."


def _set(path: list[Any], value: Any) -> Callable[[dict[str, Any]], Any]:
    def change(entry: dict[str, Any]) -> Any:
        target = entry
        for part in path[:-1]:
            target = target[part]
        target[path[-1]] = value
        return entry

    return change


DAMAGE: dict[str, Callable[[dict[str, Any]], Any]] = {
    "another key": _set(["key"], "0" * 64),
    "a driver entry": _set(["kind"], "Driver"),
    "description is a number": _set(["value", "description"], 5),
    "an unknown field": _set(["value", "surprise"], 1),
    "a missing field": lambda e: (e["value"].pop("examples"), e)[1],
    "an unknown status": _set(["value", "status"], "great"),
    "an unknown format": _set(["value", "format"], "nonsense"),
    "drivers already linked": _set(["value", "drivers"], [{"id": "x"}]),
    "an example title that is a list": lambda e: (e["value"]["examples"][0].update(title=["x"]), e)[1],
    "a diagnostic line that is text": lambda e: (e["value"]["diagnostics"].append(
        {"severity": "error", "message": "m", "path": "p", "line": "7", "code": "c"}), e)[1],
    "a boolean where a number goes": _set(["value", "body_line"], True),
    "a list": lambda e: [e],
    "deeply nested": lambda e: _set(["value", "fields", "x"], json.loads("[" * 200 + "]" * 200))(e),
}


@pytest.mark.parametrize("damage", DAMAGE)
def test_a_damaged_entry_is_a_miss(tmp_path: Path, damage: str) -> None:
    root = tmp_path / "ws"
    _valid_tool(root)
    cache = tmp_path / "cache"
    reference = snapshot(root, cache_dir=str(cache))
    path, entry = _only_entry(cache)
    write_entry(path, DAMAGE[damage](entry), root)
    assert snapshot(root, cache_dir=str(cache)) == reference
    assert read_entry(path) == _only_entry_after_parse(root, tmp_path)


def _only_entry_after_parse(root: Path, tmp_path: Path) -> dict[str, Any]:
    """What a fresh cache stores for the same workspace (the damaged entry was replaced by it)."""
    other = tmp_path / "fresh-cache"
    snapshot(root, cache_dir=str(other))
    return _only_entry(other)[1]


@pytest.mark.parametrize("kind", ["truncated", "garbage", "too large", "link to /dev/zero", "fifo", "link outside"])
def test_an_unreadable_entry_is_a_miss_and_never_hangs(tmp_path: Path, kind: str) -> None:
    if kind in ("fifo", "link to /dev/zero") and os.name != "posix":
        pytest.skip("POSIX only")
    root = tmp_path / "ws"
    _valid_tool(root)
    cache = tmp_path / "cache"
    options = {"cache_dir": str(cache), "max_manifest_bytes": 1024 * 4}
    reference = snapshot(root, **options)
    path, entry = _only_entry(cache)
    text = path.read_text(encoding="utf-8")
    path.unlink()
    if kind == "truncated":
        path.write_text(text[: len(text) // 2], encoding="utf-8")
    elif kind == "garbage":
        path.write_bytes(b"\x00\xff" * 100)
    elif kind == "too large":  # a valid entry, padded past what a 4 KiB manifest can need
        entry["value"]["body"] += " " * (parsecache.ENTRY_BYTES_PER_MANIFEST_BYTE * 4096 + (1 << 20))
        write_entry(path, entry, root)
    elif kind == "link to /dev/zero":
        path.symlink_to("/dev/zero")
    elif kind == "fifo":
        os.mkfifo(path)
    else:
        outside = tmp_path / "outside.json"
        outside.write_text(text, encoding="utf-8")
        path.symlink_to(outside)
    assert snapshot(root, **options) == reference


# -- libyaml and the pure-Python composer ------------------------------------------------------------------


def _front_matters() -> list[tuple[str, str]]:
    texts = [(f"broken/{name}", text) for name, text in BROKEN.items() if isinstance(text, str)]
    for base in (REPO / "examples", CORPUS):
        if base.is_dir():
            for path in sorted(base.rglob("*.md")):
                texts.append((str(path.relative_to(base.parent)), path.read_text(encoding="utf-8", errors="replace")))
    out = []
    for name, text in texts:
        if text.startswith("---\n") and "\n---" in text[3:]:
            out.append((name, text[4 : text.index("\n---", 3)]))
    return out


@pytest.mark.skipif(safeyaml._Composer is safeyaml.PurePythonComposer, reason="PyYAML was built without libyaml")
def test_libyaml_reads_every_manifest_as_pyyaml_does(monkeypatch: pytest.MonkeyPatch) -> None:
    texts = _front_matters()
    assert len(texts) > 20

    def read(composer: type) -> list[Any]:
        monkeypatch.setattr(safeyaml, "_Composer", composer)
        out = []
        for name, text in texts:
            try:
                doc = safeyaml.load(text, first_line=2)
                out.append((name, doc.data, doc.lines, [(n.severity, n.code, n.line, n.message) for n in doc.notes]))
            except safeyaml.YamlError as exc:  # the wording of syntax errors is each parser's own
                out.append((name, "error", exc.code))
        return out

    assert read(safeyaml.LibyamlComposer) == read(safeyaml.PurePythonComposer)


def test_the_key_covers_every_module_the_parsers_import() -> None:
    """A module the parsing code imports but the key does not hash would let a changed parser reuse
    old parses: every package module reached from the hashed ones must be hashed too."""
    assert len(parsecache.code_digest()) == 64
    package = Path(parsecache.__file__).parent
    hashed = {package / name for name in parsecache._MODULES} | set((package / "formats").glob("*.py"))
    for path in sorted(hashed):
        assert path.is_file(), path
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.level:
                base = path.parent
                for _ in range(node.level - 1):
                    base = base.parent
                names = [node.module] if node.module else [alias.name for alias in node.names]
                for name in names:
                    target = base.joinpath(*name.split("."))
                    module = target.with_suffix(".py") if target.with_suffix(".py").is_file() else target / "__init__.py"
                    if module.name == "__init__.py" and module.parent in (package, package / "formats"):
                        continue  # the packages themselves hold no parsing code
                    if module.name == "_version.py":
                        continue
                    assert module in hashed, f"{path.name} imports {module.relative_to(package)}, which the parse key does not hash"
