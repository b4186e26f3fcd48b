"""Stable anchors for the parts of a tool page: from titles, never from positions.

An example's anchor is `tc-ex-` and the slug of its title; a check's is `tc-check-` and the
slug of its rule id; a run's is its example's anchor, `-run-` and the slug of its driver (or
`implementation`). Inserting an example before another never changes the other's anchor:
only two parts whose titles slug alike are told apart, the later ones by `-2`, `-3`, ... in
page order. A title with no letter or digit slugs to `untitled`. Slugs are ASCII letters,
digits and hyphens (letters with accents lose them; other scripts are kept as their code
points, `u4e2d`), at most `MAX_SLUG` characters, so an anchor is always a safe `id` and URL
fragment whatever the manifest says.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Iterable

__all__ = ["MAX_SLUG", "slug", "unique"]

MAX_SLUG = 60
_RUN = re.compile(r"[^a-z0-9]+")


def slug(title: str) -> str:
    """`title` as lower-case ASCII words joined by hyphens ("Reverse a word" -> "reverse-a-word")."""
    decomposed = unicodedata.normalize("NFKD", title.casefold())
    letters = "".join(ch if ch.isascii() else f" u{ord(ch):x} " if ch.isalnum() else " "
                      for ch in decomposed if not unicodedata.combining(ch))
    words = _RUN.sub("-", letters).strip("-")
    return words[:MAX_SLUG].rstrip("-") or "untitled"


def unique(prefix: str, titles: Iterable[str]) -> list[str]:
    """One anchor per title, in order: `prefix` + slug, with `-2`, `-3` ... for repeats."""
    seen: dict[str, int] = {}
    taken: set[str] = set()
    out = []
    for title in titles:
        base = f"{prefix}{slug(title)}"
        count = seen.get(base, 0) + 1
        anchor = base if count == 1 else f"{base}-{count}"
        while anchor in taken:  # "a", "a", "a-2" as titles: the third must not collide with the second
            count += 1
            anchor = f"{base}-{count}"
        seen[base] = count
        taken.add(anchor)
        out.append(anchor)
    return out
