"""What the package index shows and what the install docs promise, checked against the sources.

The README is the package's long description on the index, where a relative link is dead; the
dependency list in docs/install.md must name what pyproject.toml really installs.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from markdown_it import MarkdownIt

from sitebuild import REPO

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

HOME = "https://github.com/mkdocs-toolcatalog/mkdocs-toolcatalog"


def links(markdown: str) -> list[str]:
    found: list[str] = []
    for token in MarkdownIt("commonmark").enable("table").parse(markdown):
        for child in token.children or []:
            if child.type == "link_open":
                found.append(str(child.attrs["href"]))
    return found


def test_readme_links_are_absolute_and_name_files_that_exist() -> None:
    targets = links((REPO / "README.md").read_text(encoding="utf-8"))
    assert targets, "the README has links"
    for href in targets:
        assert href.startswith("https://"), f"relative link in README (dead on the package index): {href}"
        for kind in ("/blob/main/", "/tree/main/"):
            if href.startswith(HOME + kind):
                path = href[len(HOME + kind):].split("#", 1)[0]
                assert (REPO / path).exists(), f"README links to {path}, which is not in the repository"


def test_project_urls_point_at_the_repository_the_readme_names() -> None:
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert project["urls"]["Source"] == HOME
    assert all(url.startswith(HOME) for url in project["urls"].values())


def normalized(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def test_install_docs_name_every_runtime_dependency_and_no_other() -> None:
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    declared = {normalized(re.split(r"[<>=!~;\[ ]", spec, 1)[0]) for spec in project["dependencies"]}
    text = (REPO / "docs" / "install.md").read_text(encoding="utf-8")
    sentence = re.search(r"Its own dependencies are (.+?) \(the test suite", text, re.S)
    assert sentence, "docs/install.md lists the package's dependencies in one sentence"
    listed = re.sub(r"\([^)]*\)", "", sentence.group(1).replace("\n", " "))  # "(what it is for)" asides
    named = {normalized(part.strip().removeprefix("and ").split(" on Python")[0].strip()) for part in listed.split(",")}
    assert named == declared
