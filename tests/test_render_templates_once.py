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
