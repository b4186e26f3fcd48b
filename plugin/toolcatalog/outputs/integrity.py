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
from typing import Any

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
    try:
        value = _as_ijson(value, plain)
        if plain[0]:
            return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"), allow_nan=False).encode("utf-8")
        return rfc8785.dumps(value)
    except RecursionError:
        raise DigestError("the value is nested too deeply to canonicalize") from None
    except (rfc8785.CanonicalizationError, ValueError, UnicodeEncodeError) as exc:
        raise DigestError(str(exc)) from None


def digest(value: Any) -> str:
    return PREFIX + hashlib.sha256(canonical(value)).hexdigest()


def entry_digest(entry: dict[str, Any]) -> str:
    """The digest of a tool entry (from catalog.json or a per-tool file)."""
    return digest({key: value for key, value in entry.items() if key not in (ENTRY_FIELD, "$schema")})


def catalog_digest(document: dict[str, Any]) -> str:
    """The digest of a whole catalog document."""
    return digest({key: value for key, value in document.items() if key != CATALOG_FIELD})


# Stands for the tools while the rest of the document is canonicalized; NUL is escaped in RFC 8785
# text, so the placeholder's bytes cannot come from anything else but such a string.
_TOOLS_PLACEHOLDER = "\0toolcatalog-tools\0"


def _encode(value: Any, plain: bool) -> bytes:
    if plain:
        return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"), allow_nan=False).encode("utf-8")
    return rfc8785.dumps(value)


def seal(document: dict[str, Any]) -> None:
    """Give each entry of `document["tools"]` its `entry_digest` and the document its
    `catalog_digest`: what `entry_digest` and `catalog_digest` compute, walking each entry once
    (the catalog's canonical bytes are assembled from the entries'). Raises DigestError."""
    parts: list[bytes] = []
    try:
        for entry in document["tools"]:
            plain = [True]
            value = _as_ijson({key: item for key, item in entry.items() if key not in (ENTRY_FIELD, "$schema")}, plain)
            entry[ENTRY_FIELD] = PREFIX + hashlib.sha256(_encode(value, plain[0])).hexdigest()
            value[ENTRY_FIELD] = entry[ENTRY_FIELD]
            parts.append(_encode(value, plain[0]))
        skeleton = {key: item for key, item in document.items() if key != CATALOG_FIELD}
        skeleton["tools"] = _TOOLS_PLACEHOLDER
        text, token = canonical(skeleton), canonical(_TOOLS_PLACEHOLDER)
    except RecursionError:
        raise DigestError("the value is nested too deeply to canonicalize") from None
    except (rfc8785.CanonicalizationError, ValueError, UnicodeEncodeError) as exc:
        raise DigestError(str(exc)) from None
    if text.count(token) == 1:
        whole = text.replace(token, b"[" + b",".join(parts) + b"]")
        document[CATALOG_FIELD] = PREFIX + hashlib.sha256(whole).hexdigest()
    else:  # a string of the document holds the placeholder: the slow way
        document[CATALOG_FIELD] = catalog_digest(document)
