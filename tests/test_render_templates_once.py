"""A Renderer (one per build) loads each template once: no file is checked again for changes at
every page and every include; the next build's Renderer reads the templates as they are then."""

from __future__ import annotations

import shutil
from pathlib import Path

from toolcatalog.model import Catalog
from toolcatalog.render import Renderer, templates_dir


def test_a_renderer_reads_its_templates_once_and_a_new_one_reads_them_again(tmp_path: Path) -> None:
    ours = tmp_path / "theme"
    shutil.copytree(templates_dir(), ours)
    index = ours / "toolcatalog" / "index.html"
    index.write_text("first version\n", encoding="utf-8")
    catalog = Catalog(root=tmp_path)
    renderer = Renderer([ours])
    assert renderer.index_page(catalog, lambda target: target) == "first version\n"
    index.write_text("second version\n", encoding="utf-8")
    assert renderer.index_page(catalog, lambda target: target) == "first version\n"  # same build: loaded once
    assert Renderer([ours]).index_page(catalog, lambda target: target) == "second version\n"  # the next build


def test_templates_are_compiled_once_per_process_and_again_when_their_source_changes(tmp_path: Path, monkeypatch) -> None:
    """Each build's Renderer reuses what an earlier one compiled (`mkdocs serve` rebuilds, a process
    making many builds), unless the template's file says something else now."""
    import jinja2

    compiled: list[str | None] = []
    original = jinja2.Environment.compile

    def counting(self: jinja2.Environment, source: str, name: str | None = None, *args: object, **kwargs: object) -> object:
        compiled.append(name)
        return original(self, source, name, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(jinja2.Environment, "compile", counting)
    ours = tmp_path / "theme"
    shutil.copytree(templates_dir(), ours)
    index = ours / "toolcatalog" / "index.html"
    index.write_text("one {{ 1 + 1 }}\n", encoding="utf-8")
    catalog = Catalog(root=tmp_path)
    assert Renderer([ours]).index_page(catalog, lambda target: target) == "one 2\n"
    assert compiled == ["toolcatalog/index.html"]
    assert Renderer([ours]).index_page(catalog, lambda target: target) == "one 2\n"
    assert compiled == ["toolcatalog/index.html"]  # the second build compiled nothing
    index.write_text("two {{ 2 + 2 }}\n", encoding="utf-8")
    assert Renderer([ours]).index_page(catalog, lambda target: target) == "two 4\n"
    assert compiled == ["toolcatalog/index.html"] * 2  # an edited template is compiled again
    other = tmp_path / "other"
    shutil.copytree(ours, other)
    (other / "toolcatalog" / "index.html").write_text("one {{ 1 + 1 }}\n", encoding="utf-8")  # same text, another file
    assert Renderer([other]).index_page(catalog, lambda target: target) == "one 2\n"
    assert len(compiled) == 3
