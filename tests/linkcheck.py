"""A link checker over a built site folder: every href and src in every HTML page must name a
file of the site, resolved as a browser resolves it from the page's URL with the site mounted at
`mount` ("/" for the domain root, "/sub/" under a sub-path)."""

from __future__ import annotations

import posixpath
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urljoin, urlsplit

LINK_ATTRIBUTES = {"href", "src"}
ORIGIN = "https://example.org"


@dataclass(frozen=True)
class Link:
    page: str  # the page's path in the site folder
    url: str  # as written
    in_catalog: bool  # inside a page's `toolcatalog-page` block (what the export wrote)


class _Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.found: list[tuple[str, bool]] = []
        self.depth = 0  # open elements inside the catalog block, 0 outside
        self.stack: list[bool] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        inside = bool(self.stack and self.stack[-1]) or "toolcatalog-page" in (values.get("class") or "").split()
        for name, value in attrs:
            if name in LINK_ATTRIBUTES and value is not None and not (tag == "link" and values.get("rel") in ("canonical", "alternate")):
                self.found.append((value, inside))
        if tag not in ("link", "meta", "img", "br", "hr", "input", "source", "col", "wbr", "area", "base"):
            self.stack.append(inside)

    def handle_endtag(self, tag: str) -> None:
        if self.stack and tag not in ("link", "meta", "img", "br", "hr", "input"):
            self.stack.pop()


def page_links(site: Path) -> list[Link]:
    links = []
    for html in sorted(site.rglob("*.html")):
        parser = _Links()
        parser.feed(html.read_text(encoding="utf-8"))
        page = html.relative_to(site).as_posix()
        links += [Link(page, url, inside) for url, inside in parser.found]
    return links


def target(site: Path, page: str, url: str, mount: str) -> Path | None:
    """The file `url` on `page` names, or None when it names nothing inside the site (a missing
    file, or a path outside the mount point). External URLs and bare fragments: the page itself."""
    parts = urlsplit(url)
    if parts.scheme in ("data", "mailto", "javascript") or (parts.scheme and not url.startswith(ORIGIN + mount)):
        return site / page  # not the site's to check
    resolved = urlsplit(urljoin(f"{ORIGIN}{mount}{page}", url))
    path = unquote(resolved.path)
    if not path.startswith(mount) or resolved.netloc != urlsplit(ORIGIN).netloc:
        return None
    rest = posixpath.normpath(path[len(mount):]) if path != mount else ""
    if rest.startswith(".."):
        return None
    candidate = site / rest if rest and rest != "." else site
    if candidate.is_dir():
        candidate = candidate / "index.html"
    return candidate if candidate.is_file() else None


def broken(site: Path, mount: str = "/") -> list[Link]:
    """Every link in the site that names no file of it (404.html aside: served at any URL)."""
    return [link for link in page_links(site)
            if link.page != "404.html" and target(site, link.page, link.url, mount) is None]
