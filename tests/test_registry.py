"""One table of formats and one of sandbox backends: nothing outside them names a format or a mechanism.

- No format id appears as a string anywhere in the package (Python string literals, templates,
  schemas) outside `formatregistry.py` and that format's own modules (`Format.modules`). The
  catalog schema's `format` enum is the one exception, and it must equal the registry.
- Every `module:function` reference in the two registries resolves, and points into a layer its
  resolver may import anyway (the late binding hides no import a contract forbids).
- A backend the engine has never heard of is named, not a KeyError.
"""

from __future__ import annotations

import ast
import json
import re
import sys
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

import pytest

from toolcatalog import formatregistry, sandbox
from toolcatalog.formatregistry import FORMATS, TOOL_FORMATS
from toolcatalog.model import FORMAT_TITLES, FORMATS as MODEL_FORMATS, Tool
from toolcatalog.sandbox import backends

REPO = Path(__file__).resolve().parent.parent
PACKAGE = REPO / "plugin" / "toolcatalog"
TEMPLATES = REPO / "site_templates"
REGISTRY = PACKAGE / "formatregistry.py"


def _shown(path: Path) -> str:
    return path.relative_to(REPO).as_posix() if path.is_relative_to(REPO) else str(path)


def _owners(path: Path) -> set[str]:
    """The format ids whose own modules include `path`."""
    rel = path.relative_to(PACKAGE).as_posix() if path.is_relative_to(PACKAGE) else ""
    return {f.id for f in FORMATS if rel in f.modules}


def _python_offences(path: Path, allowed: set[str]) -> list[str]:
    ids = {f.id for f in FORMATS} - allowed
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in ids:
            found.append(f"{_shown(path)}:{node.lineno}: {node.value!r}")
    return found


def _quoted(ids: set[str]) -> re.Pattern[str]:
    return re.compile(r"([\"'])(?:" + "|".join(re.escape(i) for i in sorted(ids)) + r")\1") if ids else re.compile(r"(?!)")


def _text_offences(path: Path, text: str, allowed: set[str]) -> list[str]:
    pattern = _quoted({f.id for f in FORMATS} - allowed)
    return [f"{_shown(path)}:{n}: {line.strip()[:120]}"
            for n, line in enumerate(text.splitlines(), 1) if pattern.search(line)]


def _schema_text(path: Path) -> str:
    """A schema's text, the catalog's `format` enum (checked against the registry below) left out."""
    text = path.read_text(encoding="utf-8")
    if path.name == "catalog.schema.json":
        enum = json.dumps({"enum": list(formatregistry.ids())}, ensure_ascii=False)
        text = text.replace(enum, '{"enum": "(the registry)"}')
    return text


def offences() -> list[str]:
    found: list[str] = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path != REGISTRY:
            found += _python_offences(path, _owners(path))
    for path in sorted(PACKAGE.rglob("*.json")):
        found += _text_offences(path, _schema_text(path), _owners(path))
    for root in (TEMPLATES, PACKAGE):
        for path in sorted([*root.rglob("*.html"), *root.rglob("*.md"), *root.rglob("*.txt"), *root.rglob("*.j2")]):
            found += _text_offences(path, path.read_text(encoding="utf-8"), _owners(path))
    return found


def test_no_format_id_outside_the_registry_and_its_own_modules() -> None:
    found = offences()
    assert not found, "format ids named outside formatregistry.py and the format's own modules " \
                      "(ask `tool.format_info` / the registry instead):\n" + "\n".join(found)


def test_the_scan_finds_what_it_looks_for(tmp_path: Path) -> None:
    # Not vacuous: a literal id in a module that is not the format's own is found, file and line.
    own = PACKAGE / "formats" / "speccify.py"  # speccify's own module may say "speccify"
    assert _owners(own) == {"speccify"} and _python_offences(own, _owners(own)) == []
    planted = tmp_path / "x.py"
    planted.write_text('x = 1\nif tool.format == "aip-14":\n    pass\n', encoding="utf-8")
    assert _python_offences(planted, set()) == [f"{planted}:2: 'aip-14'"]
    assert _python_offences(planted, {"aip-14"}) == []
    template = tmp_path / "t.html"
    template.write_text('{% if tool.format == "smart-tool" %}x{% endif %}\nsmart-tool.json\n', encoding="utf-8")
    assert _text_offences(template, template.read_text(), set()) == [f'{template}:1: {{% if tool.format == "smart-tool" %}}x{{% endif %}}']


def test_own_modules_exist() -> None:
    for fmt in FORMATS:
        for module in fmt.modules:
            assert (PACKAGE / module).is_file(), (fmt.id, module)


def test_the_catalog_schema_enum_is_the_registry() -> None:
    path = PACKAGE / "schemas" / "catalog.schema.json"
    schema = json.loads(path.read_text(encoding="utf-8"))
    assert schema["$defs"]["tool"]["properties"]["format"]["enum"] == list(formatregistry.ids())
    assert '{"enum": "(the registry)"}' in _schema_text(path)  # the one exception the scan makes


def test_the_model_lists_are_the_registry() -> None:
    assert MODEL_FORMATS == tuple(f.id for f in TOOL_FORMATS)
    assert FORMAT_TITLES == {f.id: f.title for f in TOOL_FORMATS}
    assert len({f.id for f in FORMATS}) == len(FORMATS)


def _layers(container: str) -> list[set[str]]:
    config = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    for contract in config["tool"]["importlinter"]["contracts"]:
        if contract["type"] == "layers" and contract.get("containers") == [container]:
            return [{m.strip() for m in layer.split("|")} for layer in contract["layers"]]
    raise AssertionError(f"no layers contract for {container}")


def _at_or_below(layers: list[set[str]], module: str, resolver: str) -> bool:
    rank = {name: i for i, layer in enumerate(layers) for name in layer}
    return rank[module] >= rank[resolver]


def test_format_references_resolve_into_the_layer_that_binds_them() -> None:
    # The harvest binds parsers and implementation listers (it sits above `formats`); the engine
    # binds planners and refusals (its own package, below it).
    engine = _layers("toolcatalog.conformance")
    for fmt in FORMATS:
        for reference, package in ((fmt.parser, "formats"), (fmt.implementations, "formats"),
                                   (fmt.planner, "conformance"), (fmt.refused, "conformance")):
            if not reference:
                continue
            assert callable(formatregistry.resolve(reference)), reference
            module = reference.partition(":")[0].split(".")
            assert module[:2] == ["toolcatalog", package], reference
            if package == "conformance":
                assert _at_or_below(engine, module[2], "engine"), reference
        if fmt.kind == formatregistry.TOOL:
            assert fmt.parser and fmt.planner, fmt.id
    with pytest.raises(ValueError):
        formatregistry.resolve("os:system")


def test_an_unknown_format_claims_nothing() -> None:
    tool = Tool(id="x", name="x", format="not-a-format", source="x/TOOL.md", abs_path=Path("/x/TOOL.md"))
    assert tool.format_label == "not-a-format" and tool.format_info.effects == formatregistry.UNDECLARED
    assert tool.format_info.runtime_rule_ids == () and tool.timeout_ms is None


def test_backend_references_resolve_into_the_layer_that_binds_them() -> None:
    # probe.py binds `probe` and `describe`; launch.py binds `prepare`.
    layers = _layers("toolcatalog.sandbox")
    for backend in (*backends.BACKENDS, backends.OFF):
        for reference, resolver in ((backend.probe, "probe"), (backend.describe, "probe"), (backend.prepare, "launch")):
            if not reference:
                continue
            assert callable(backends.resolve(reference)), reference
            module = reference.partition(":")[0].split(".")
            assert module[:2] == ["toolcatalog", "sandbox"] and _at_or_below(layers, module[2], resolver), reference
    assert len({b.id for b in (*backends.BACKENDS, backends.OFF)}) == len(backends.BACKENDS) + 1


def test_a_third_mechanism_is_named_not_a_key_error() -> None:
    from toolcatalog.conformance import engine

    facts = sandbox.Facts("auto", "firecracker", "v1")  # a mechanism no entry has
    assert sandbox.title("firecracker") == "firecracker"
    assert sandbox.title("bwrap") == "bubblewrap" and sandbox.title(None) == "no sandbox"

    class _Ctx:  # only what `_sandbox_line` reads
        sandbox = facts

    line = engine._sandbox_line(_Ctx())  # type: ignore[arg-type]
    assert line.startswith("sandboxed with firecracker (v1)"), line
    with pytest.raises(LookupError, match="no sandbox backend 'firecracker'"):
        backends.get("firecracker")


def test_the_profile_line_is_the_backends_describe() -> None:
    for mechanism, variant in (("bwrap", "userns"), ("landlock", "ABI 3")):
        facts = sandbox.Facts("auto", mechanism, variant)
        assert facts.profile(False).startswith(backends.get(mechanism).title), facts.profile(False)
    assert sandbox.Facts("off").profile(True) == ""
