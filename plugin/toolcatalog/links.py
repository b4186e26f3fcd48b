"""Links from pages to manifest files and lines in the repository (the `source_uri` option)."""

from __future__ import annotations

from pathlib import Path
from typing import Callable
from urllib.parse import quote, urljoin

SourceLink = Callable[[str, "int | None"], "str | None"]


def source_links(template: str | None, repo_url: str | None = None, edit_uri: str | None = None, docs_dir: str = "docs") -> SourceLink:
    """A function (path, line) -> URL of that manifest line in the repository, or None.

    `template` is the `source_uri` option (`{path}`, `{line}`); without one it is derived from
    MkDocs' `repo_url` and `edit_uri` (which points at the docs folder, `docs_dir`)."""
    if not template:
        if not repo_url or not edit_uri:
            return lambda path, line: None
        base = urljoin(repo_url.rstrip("/") + "/", edit_uri)
        # edit_uri points at the docs folder; manifests are relative to mkdocs.yml's folder.
        docs_name = Path(docs_dir).name
        if base.rstrip("/").endswith("/" + docs_name):
            base = base.rstrip("/")[: -len(docs_name)]
        if not base.endswith("/"):
            base += "/"
        anchor = "#L{line}" if any(host in repo_url for host in ("github", "gitlab", "bitbucket", "codeberg")) else ""
        template = base + "{path}" + anchor

    def link(path: str, line: int | None) -> str | None:
        if path.startswith("/") or ".." in path.split("/"):
            return None  # outside the repository: no link to guess
        url = template.replace("{path}", quote(path))
        if "{line}" in url:
            url = url.replace("{line}", str(line)) if line else url.split("#", 1)[0].replace("{line}", "")
        return url

    return link
