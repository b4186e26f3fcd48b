"""Digests of the catalog and of each tool's entry, over RFC 8785 canonical JSON.

- A tool's `entry_digest` is `sha256:` + the SHA-256 of the RFC 8785 (JSON Canonicalization
  Scheme) form of its catalog entry without the `entry_digest` member itself (and without
  `$schema`, which only per-tool files carry), so the entry in catalog.json and the per-tool file
  give the same digest.
- The catalog's `catalog_digest` is the same over the whole catalog document without the
  `catalog_digest` member. It covers every entry (and so every entry digest).

RFC 8785 works on I-JSON, whose numbers are IEEE 754 doubles: an integer beyond ±(2^53 - 1)
is canonicalized as the double nearest to it, exactly as an RFC 8785 implementation does after a
JSON parser read it as a double. (The catalog writes no number a double cannot hold at all:
`catalog_json.clean` makes those null.) The digests prove that files agree with each other and
were not changed after the build; who built them takes a signature (docs/catalog-json.md shows
sigstore in CI).
"""

from __future__ import annotations

import hashlib
import json
import re
from contextlib import contextmanager
from typing import Any, Iterator

import rfc8785

PREFIX = "sha256:"
ENTRY_FIELD = "entry_digest"
CATALOG_FIELD = "catalog_digest"
_SAFE_INTEGER = 2**53 - 1


class DigestError(ValueError):
    """A value RFC 8785 cannot canonicalize (too deep, a number no double holds, not JSON)."""


def _as_ijson(value: Any, plain: list[bool]) -> Any:
    """`value` with integers beyond ±(2^53 - 1) as doubles; `plain[0]` turns False when it holds
    a number that is not an integer, or a key outside Unicode's basic plane (see `canonical`)."""
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, float):
        plain[0] = False
        return value
    if isinstance(value, int):
        if -_SAFE_INTEGER <= value <= _SAFE_INTEGER:
            return value
        plain[0] = False
        try:
            return float(value)
        except OverflowError:
            raise DigestError(f"the integer {str(value)[:20]}... is too large for JSON's numbers") from None
    if isinstance(value, dict):
        for key in value:
            if isinstance(key, str) and not key.isascii() and max(key) > "\uffff":
                plain[0] = False
        return {key: _as_ijson(item, plain) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_as_ijson(item, plain) for item in value]
    raise DigestError(f"{type(value).__name__} is not a JSON value")


def canonical(value: Any) -> bytes:
    """The RFC 8785 bytes of `value`. Raises DigestError.

    For JSON without fractional numbers and with keys inside Unicode's basic plane (every catalog
    entry but those whose schemas hold numbers like 0.5), RFC 8785 is exactly what Python's own
    (compiled) encoder writes with sorted keys and no spaces: keys sort the same by code point as
    by UTF-16 unit there, strings are escaped the same way (`\\"`, `\\\\`, `\\n` and the like, other
    control characters as lower-case `\\u00xx`, nothing else), and integers are written the same.
    Everything else goes through the `rfc8785` package (tests hold the two to the same bytes).
    """
    plain = [True]
    with _digest_errors():
        value = _as_ijson(value, plain)
        return _encode(value, plain[0])


def digest(value: Any) -> str:
    return PREFIX + hashlib.sha256(canonical(value)).hexdigest()


def entry_digest(entry: dict[str, Any]) -> str:
    """The digest of a tool entry (from catalog.json or a per-tool file)."""
    return digest({key: value for key, value in entry.items() if key not in (ENTRY_FIELD, "$schema")})


def catalog_digest(document: dict[str, Any]) -> str:
    """The digest of a whole catalog document."""
    return digest({key: value for key, value in document.items() if key != CATALOG_FIELD})


# Stand for the tools while the rest of the document is canonicalized. The two texts differ only
# where the tools go, so that place is found without searching for a token some string of the
# document could also hold.
_PLACEHOLDERS = ("\0toolcatalog-tools-a\0", "\0toolcatalog-tools-b\0")


@contextmanager
def _digest_errors() -> Iterator[None]:
    """Whatever canonicalizing raises, as DigestError."""
    try:
        yield
    except DigestError:
        raise
    except RecursionError:
        raise DigestError("the value is nested too deeply to canonicalize") from None
    except (rfc8785.CanonicalizationError, ValueError, UnicodeEncodeError) as exc:
        raise DigestError(str(exc)) from None


def _encode(value: Any, plain: bool) -> bytes:
    if plain:
        return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"), allow_nan=False).encode("utf-8")
    fast = _with_floats(value)
    return rfc8785.dumps(value) if fast is None else fast


# A float's stand-in while the compiled encoder writes the rest: a string of NUL, its index, NUL.
_FLOAT_MARK = re.compile(r'"\\u0000(\d+)\\u0000"')


def _with_floats(value: Any) -> bytes | None:
    """The RFC 8785 bytes of an I-JSON `value` whose only departure from the plain case is its
    floats (see `canonical`): the compiled encoder writes everything but the floats, which stand
    in as marker strings, and each float is then written by `rfc8785` itself. None (use `rfc8785`
    for all of it) when a key is not a string or lies outside the basic plane, or when a string of
    the value reads like a marker (there are then more markers than floats)."""
    floats: list[float] = []
    marked = _float_marks(value, floats)
    if marked is _UNFIT:
        return None
    text = json.dumps(marked, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    parts = _FLOAT_MARK.split(text)
    if len(parts) != 2 * len(floats) + 1:
        return None
    for i in range(1, len(parts), 2):
        parts[i] = rfc8785.dumps(floats[int(parts[i])]).decode("ascii")
    return "".join(parts).encode("utf-8")


_UNFIT = object()


def _float_marks(value: Any, floats: list[float]) -> Any:
    """`value` (as `_as_ijson` left it) with each float replaced by its marker, `_UNFIT` when a
    key is not a string or lies outside the basic plane."""
    if isinstance(value, float):
        floats.append(value)
        return f"\0{len(floats) - 1}\0"
    if isinstance(value, dict):
        out = {}
        for key, item in value.items():
            if not isinstance(key, str) or (not key.isascii() and max(key) > "\uffff"):
                return _UNFIT
            marked = _float_marks(item, floats)
            if marked is _UNFIT:
                return _UNFIT
            out[key] = marked
        return out
    if isinstance(value, list):
        items = [_float_marks(item, floats) for item in value]
        return _UNFIT if any(item is _UNFIT for item in items) else items
    return value


def _sealed_entry_bytes(entry: dict[str, Any]) -> bytes:
    """Give `entry` its `entry_digest`; its canonical bytes as they appear in the catalog's."""
    plain = [True]
    value = _as_ijson({key: item for key, item in entry.items() if key not in (ENTRY_FIELD, "$schema")}, plain)
    entry[ENTRY_FIELD] = PREFIX + hashlib.sha256(_encode(value, plain[0])).hexdigest()
    value[ENTRY_FIELD] = entry[ENTRY_FIELD]
    return _encode(value, plain[0])


def _first_difference(one: bytes, two: bytes) -> int:
    return next(i for i, (a, b) in enumerate(zip(one, two)) if a != b)


class Sealer:
    """The catalog digest computed while the entries go by, one at a time.

    `Sealer(head)` takes the document without `tools` (and without `catalog_digest`); `add(entry)`
    gives each entry, in the published order, its `entry_digest`; `finish()` is what
    `catalog_digest` computes for the whole document. No entry needs to be kept: the catalog's
    canonical bytes are the head's with the entries' bytes spliced in, hashed as they come.
    Raises DigestError."""

    def __init__(self, head: dict[str, Any]) -> None:
        head = {key: item for key, item in head.items() if key not in (CATALOG_FIELD, "tools")}
        with _digest_errors():
            one, two = (canonical({**head, "tools": placeholder}) for placeholder in _PLACEHOLDERS)
        token, other = (canonical(placeholder) for placeholder in _PLACEHOLDERS)
        start = _first_difference(one, two) - _first_difference(token, other)  # where the placeholder starts
        self._hash = hashlib.sha256(one[:start] + b"[")
        self._rest = b"]" + one[start + len(token):]
        self._first = True

    def add(self, entry: dict[str, Any]) -> None:
        with _digest_errors():
            part = _sealed_entry_bytes(entry)
        self._hash.update(part if self._first else b"," + part)
        self._first = False

    def finish(self) -> str:
        """The catalog digest."""
        self._hash.update(self._rest)
        return PREFIX + self._hash.hexdigest()


def seal(document: dict[str, Any]) -> None:
    """Give each entry of `document["tools"]` its `entry_digest` and the document its
    `catalog_digest`: what `entry_digest` and `catalog_digest` compute, walking each entry once.
    Raises DigestError."""
    sealer = Sealer(document)
    for entry in document["tools"]:
        sealer.add(entry)
    document[CATALOG_FIELD] = sealer.finish()
