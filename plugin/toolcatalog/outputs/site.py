"""What the outputs need to know about the site they are published in, and how they link to each other."""

from __future__ import annotations

import datetime as dt
import os
import posixpath
from dataclasses import dataclass
from urllib.parse import urlsplit, urlunsplit

from ..options import OptionsError


@dataclass
class Site:
    """What the outputs need to know about the site: MkDocs' `site_url`, `site_name`, `site_description`
    and `repo_url` (the repository the sources come from; provenance names it)."""

    url: str | None = None
    name: str = ""
    description: str = ""
    repo_url: str | None = None

    def __post_init__(self) -> None:
        url = (self.url or "").strip()
        if url:
            # MkDocs' `site_url` option makes the path end with "/"; do the same so plugin and CLI agree.
            parts = urlsplit(url)
            if parts.scheme and parts.netloc and not parts.path.endswith("/"):
                url = urlunsplit(parts._replace(path=parts.path + "/"))
            elif not (parts.scheme and parts.netloc) and not url.endswith("/"):
                url += "/"
        self.url = url or None
        self.name = (self.name or "").strip()
        self.description = (self.description or "").strip()
        self.repo_url = (self.repo_url or "").strip() or None

    def link(self, path: str) -> str:
        """A site path as the catalog states it: absolute with a site_url, else as it is."""
        return self.url + path if self.url else path


def reference(site: Site, target: str, from_file: str) -> str:
    """A URI reference to `target` (a site path) as written inside `from_file` (a site path):
    absolute with a site_url, else relative to the referring file's folder."""
    if site.url:
        return site.url + target
    base = posixpath.dirname(from_file) or "."
    if base == ".":
        return target
    out = posixpath.relpath(target, base)
    return out + "/" if target.endswith("/") and not out.endswith("/") else out


def generated_at() -> str | None:
    """SOURCE_DATE_EPOCH as ISO 8601 UTC, None when unset. A malformed value is an error."""
    value = os.environ.get("SOURCE_DATE_EPOCH")
    if value is None or value.strip() == "":
        return None
    try:
        stamp = dt.datetime.fromtimestamp(int(value.strip()), tz=dt.timezone.utc)
    except (ValueError, OverflowError, OSError):
        raise OptionsError(f"SOURCE_DATE_EPOCH must be a whole number of seconds since 1970, not {value!r}") from None
    return stamp.strftime("%Y-%m-%dT%H:%M:%SZ")
