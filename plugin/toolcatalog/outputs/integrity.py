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
from typing import Any

import rfc8785

PREFIX = "sha256:"
ENTRY_FIELD = "entry_digest"
CATALOG_FIELD = "catalog_digest"
_SAFE_INTEGER = 2**53 - 1


class DigestError(ValueError):
    """A value RFC 8785 cannot canonicalize (too deep, a number no double holds, not JSON)."""


def _as_ijson(value: Any) -> Any:
    if isinstance(value, bool) or value is None or isinstance(value, (str, float)):
        return value
    if isinstance(value, int):
        if -_SAFE_INTEGER <= value <= _SAFE_INTEGER:
            return value
        try:
            return float(value)
        except OverflowError:
            raise DigestError(f"the integer {str(value)[:20]}... is too large for JSON's numbers") from None
    if isinstance(value, dict):
        return {key: _as_ijson(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_as_ijson(item) for item in value]
    raise DigestError(f"{type(value).__name__} is not a JSON value")


def canonical(value: Any) -> bytes:
    """The RFC 8785 bytes of `value`. Raises DigestError."""
    try:
        return rfc8785.dumps(_as_ijson(value))
    except RecursionError:
        raise DigestError("the value is nested too deeply to canonicalize") from None
    except rfc8785.CanonicalizationError as exc:
        raise DigestError(str(exc)) from None


def digest(value: Any) -> str:
    return PREFIX + hashlib.sha256(canonical(value)).hexdigest()


def entry_digest(entry: dict[str, Any]) -> str:
    """The digest of a tool entry (from catalog.json or a per-tool file)."""
    return digest({key: value for key, value in entry.items() if key not in (ENTRY_FIELD, "$schema")})


def catalog_digest(document: dict[str, Any]) -> str:
    """The digest of a whole catalog document."""
    return digest({key: value for key, value in document.items() if key != CATALOG_FIELD})
