"""Ids that look like other ids: homoglyphs and mixed scripts, for reviewers.

A tool whose id is `read-fіle` (with a Cyrillic `і`) or `rnodify` reads, in a catalog, a log or
an agent's tool list, as `read-file` or `modify`. Every format's id rule is ASCII only, so such
an id is usually invalid already, but an invalid tool is still listed, and ASCII has lookalikes
of its own (`1` and `l`, `0` and `O`, `rn` and `m`). Two checks, on Unicode's confusables data
(UTS #39, as shipped by the `confusable-homoglyphs` package):

- `mixed_scripts(id)`: the scripts an id mixes (Latin and Cyrillic, say; digits and punctuation
  belong to every script). One id in two scripts is the usual disguise.
- `skeleton(id)`: what the id looks like. NFKC, then each character replaced by the prototype
  Unicode gives its confusables class (`і` -> `i`, `1` -> `l`, `m` -> `rn`), then NFKC and case
  folding again. Two different ids with one skeleton look alike.

Both take time linear in the id's length; grouping a catalog's ids by skeleton is linear in the
catalog.
"""

from __future__ import annotations

import json
import os
import pickle
import unicodedata
from functools import lru_cache
from typing import Any

__all__ = ["differences", "mixed_scripts", "shown", "skeleton"]

_MARKS = "\u200e\u200f"  # the data wraps right-to-left characters in direction marks


@lru_cache(maxsize=1)
def _prototypes() -> dict[str, str]:
    """Each confusable character's prototype. The package's data lists, for a character, what
    it can be confused with: a character that is not a prototype lists only its prototype,
    which lists it back among its own; a pair that lists only each other has no other sign of
    direction, and the smaller one stands for both. Only this table is kept: the data goes once
    it is made, and the table is copied so that none of the data's objects outlives it."""
    data = _confusables_data()
    prototypes: dict[str, str] = {}
    for char, glyphs in data.items():
        if len(char) != 1 or len(glyphs) != 1:
            continue
        target = glyphs[0]["c"].strip(_MARKS)
        if not target or target == char:
            continue
        back = [g["c"].strip(_MARKS) for g in data.get(target, ())]
        if back == [char] and len(target) == 1 and target > char:
            continue  # `char` is the prototype of the pair
        prototypes[char] = target
    del data
    copied: dict[str, str] = pickle.loads(pickle.dumps(prototypes, protocol=pickle.HIGHEST_PROTOCOL))  # our own bytes, made just now
    return copied


def _confusables_data() -> dict[str, Any]:
    """The package's confusables data, read as its `utils.load` reads it (the file in its folder,
    or in `CONFUSABLE_DATA`), without importing its modules: they import `urllib.request` (62
    modules, ≈ 4 MB for the life of the process) and keep the data as a module global (1 MB of
    JSON, ≈ 6 MB of small objects), where ids need only the prototypes (issue #21, memory)."""
    import confusable_homoglyphs

    folder = os.path.dirname(os.path.abspath(confusable_homoglyphs.__file__))
    with open(os.path.join(os.environ.get("CONFUSABLE_DATA", folder), "confusables.json"), encoding="utf-8") as file:
        data: dict[str, Any] = json.load(file)
    return data


def skeleton(text: str) -> str:
    """What `text` looks like: equal skeletons, different texts are lookalikes."""
    table = _prototypes()
    value = unicodedata.normalize("NFKC", text)
    for _ in range(3):  # a prototype is its own prototype in Unicode's data; twice more settles any chain
        mapped = unicodedata.normalize("NFKC", "".join(table.get(ch, ch) for ch in value))
        if mapped == value:
            break
        value = mapped
    return value.casefold()


def mixed_scripts(text: str) -> list[str]:
    """The scripts `text` mixes, sorted ("CYRILLIC", "LATIN"); empty when it keeps to one."""
    if text.isascii():
        return []
    from confusable_homoglyphs import categories

    found = categories.unique_aliases(text) - {"COMMON", "INHERITED"}
    return sorted(found) if len(found) > 1 else []


def shown(text: str) -> str:
    """`text` quoted, with every character outside printable ASCII written `\\uXXXX` so a
    reviewer sees what a lookalike hides."""
    return "'" + "".join(ch if " " <= ch <= "~" else f"\\u{ord(ch):04x}" for ch in text) + "'"


def differences(text: str, limit: int = 3) -> str:
    """The characters of `text` outside ASCII, named: "`і` U+0456 CYRILLIC SMALL LETTER
    BYELORUSSIAN-UKRAINIAN I" (at most `limit` of them)."""
    seen: list[str] = []
    for ch in text:
        if not ch.isascii() and ch not in seen:
            seen.append(ch)
    named = [f"U+{ord(ch):04X} {unicodedata.name(ch, 'unnamed character')}" for ch in seen[:limit]]
    more = f" and {len(seen) - limit} more" if len(seen) > limit else ""
    return ", ".join(named) + more
