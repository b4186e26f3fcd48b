"""Parsed tools and drivers as plain JSON and back, checked field by field (the parse cache's format).

`encode` turns a `Tool` or `Driver` (and everything it holds) into JSON values; `decode`
rebuilds it and raises `CodecError` on anything that is not exactly what `encode` writes (a
missing or unknown field, a value of the wrong type, an unknown status), so a damaged or
planted cache entry is refused whole, never half-applied. Where the manifest is on this machine
(`abs_path`, `search_root`) is never stored: the caller gives it back.

The field list and types come from the model's own dataclass declarations, so a field added to
the model is encoded and checked without a change here.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from enum import Enum
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable

from . import model

LOCAL_FIELDS = frozenset({"abs_path", "search_root"})  # this machine's paths: given back by the caller
_OPTIONAL_FIELDS: dict[type, frozenset[str]] = {model.Example: frozenset({"input", "output"})}  # absent stays absent (`has_input`)


class CodecError(ValueError):
    """A value that `encode` would not have written."""


def encode(value: Any) -> Any:
    """`value` (a model dataclass, or JSON values holding them) as JSON values."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        out = {}
        for field in dataclasses.fields(value):
            if field.name in LOCAL_FIELDS:
                continue
            item = getattr(value, field.name)
            if item is model._ABSENT:
                continue
            out[field.name] = encode(item)
        return out
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, list):
        return [encode(item) for item in value]
    if isinstance(value, dict):
        return {key: encode(item) for key, item in value.items()}
    if value is None or isinstance(value, (str, int, float)):
        return value
    raise CodecError(f"{type(value).__name__} is not stored in the parse cache")


def decode(cls: type, data: Any, **local: Any) -> Any:
    """An instance of the model dataclass `cls` from what `encode` wrote; `local` gives the fields
    that are never stored (`abs_path=...`). Raises CodecError."""
    if not isinstance(data, dict):
        raise CodecError(f"{cls.__name__}: expected an object")
    fields = _decoders(cls)
    unknown = set(data) - set(fields)
    if unknown:
        raise CodecError(f"{cls.__name__}: unknown field {sorted(unknown)[0]!r}")
    optional = _OPTIONAL_FIELDS.get(cls, frozenset())
    values: dict[str, Any] = {}
    for name, convert in fields.items():
        if name in LOCAL_FIELDS:
            if name in local:
                values[name] = local[name]
            continue
        if name not in data:
            if name in optional:
                continue
            raise CodecError(f"{cls.__name__}: missing field {name!r}")
        values[name] = convert(data[name])
    try:
        return cls(**values)
    except TypeError as exc:  # a required local field not given: the caller's bug
        raise CodecError(str(exc)) from None


@lru_cache(maxsize=None)
def _decoders(cls: type) -> dict[str, Callable[[Any], Any]]:
    hints = typing.get_type_hints(cls)  # resolved in the module that declares `cls`
    return {field.name: _decoder(hints[field.name]) for field in dataclasses.fields(cls)}


def _decoder(hint: Any) -> Callable[[Any], Any]:
    """A function checking and converting one stored value of type `hint`."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    scalar = _scalar(hint)
    if scalar is not None:
        return scalar
    if isinstance(hint, type) and issubclass(hint, Enum):
        return _member(hint)
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        return lambda value: decode(hint, value)
    if origin in (typing.Union, types.UnionType):
        return _either([_decoder(arg) for arg in args], [arg for arg in args])
    if origin is list:
        item = _decoder(args[0]) if args else _json
        return lambda value: [item(v) for v in _exactly(list)(value)]
    if origin is dict:
        key_hint, value_hint = args if args else (str, Any)
        if key_hint is not str:
            raise TypeError(f"the parse cache stores only text keys, not {key_hint!r}")
        item = _decoder(value_hint)

        def mapping(value: Any) -> dict[str, Any]:
            out = {}
            for key, entry in _exactly(dict)(value).items():
                out[key] = item(entry)  # json.loads gives text keys only
            return out

        return mapping
    raise TypeError(f"no parse-cache decoder for {hint!r}")


def _scalar(hint: Any) -> Callable[[Any], Any] | None:
    """The decoder of a plain JSON value or scalar type, or None for anything else."""
    if hint is Any:
        return _json  # JSON values as parsed (the reader caps their depth)
    for kind, decoder in ((type(None), _exactly(type(None))), (bool, _exactly(bool)), (int, _integer), (float, _number),
                          (str, _exactly(str)), (Path, _no_path)):
        if hint is kind:
            return decoder
    return None


def _json(value: Any) -> Any:
    return value


def _exactly(kind: type) -> Callable[[Any], Any]:
    def check(value: Any) -> Any:
        if type(value) is not kind:
            raise CodecError(f"expected {kind.__name__}, found {type(value).__name__}")
        return value

    return check


def _integer(value: Any) -> int:
    if type(value) is not int:
        raise CodecError(f"expected int, found {type(value).__name__}")
    return value


def _number(value: Any) -> float:
    if type(value) not in (int, float):
        raise CodecError(f"expected a number, found {type(value).__name__}")
    number: float = value  # an int stays an int, as `encode` wrote it
    return number


def _no_path(value: Any) -> Any:
    raise CodecError("paths are never stored")


def _member(enum: type[Enum]) -> Callable[[Any], Any]:
    def check(value: Any) -> Any:
        try:
            return enum(value)
        except (ValueError, TypeError):
            raise CodecError(f"{value!r} is not a {enum.__name__}") from None

    return check


def _either(decoders: list[Callable[[Any], Any]], hints: list[Any]) -> Callable[[Any], Any]:
    # `X | None`, `bool | int`: None and booleans are told apart by their type first, so an
    # `int | None` never takes `false` and a `bool | int` keeps `true` a boolean.
    def check(value: Any) -> Any:
        for decoder in decoders:
            try:
                return decoder(value)
            except CodecError:
                continue
        raise CodecError(f"{value!r} is none of {hints!r}")

    return check


class Shared:
    """One object for equal values across a catalog: the text of every key, id and path, and every
    JSON value a manifest or a result holds (`Any` fields: schemas, example inputs and outputs,
    actual outputs), looked up by content. Five thousand tools made from a few templates carry a
    few distinct schemas, not ten thousand copies of them.

    Only values nothing changes once parsed are shared: text, and the JSON values of `Any` fields
    and of `dict[str, Any]` entries (`fields`, `extra`, `metadata`). The model's own lists and
    dicts (`diagnostics`, `run_status`, `schema_ok`, ...) stay each object's own, since the
    build appends to them. Equal means equal as JSON: `1`, `1.0` and `true` are three values, and
    an object's key order is part of it (outputs keep it)."""

    MAX_DEPTH = 100  # deeper than any stored value (jsonvalues.MAX_DEPTH): left as it is

    def __init__(self) -> None:
        self._texts: dict[str, str] = {}
        self._values: dict[tuple[Any, ...], Any] = {}  # content key -> the one object with that content

    def text(self, value: str) -> str:
        return self._texts.setdefault(value, value)

    def value(self, value: Any, depth: int = 0) -> Any:
        """The shared object equal (as JSON) to `value`, which is not changed."""
        if type(value) is str:
            return self._texts.setdefault(value, value)
        kind = type(value)
        if (kind is not dict and kind is not list) or depth > self.MAX_DEPTH:
            return value
        if kind is list:
            items = [self.value(item, depth + 1) for item in value]
            key: tuple[Any, ...] = ("l", *(_identity(item) for item in items))
        else:
            if any(type(k) is not str for k in value):
                return value
            items = [(self.text(k), self.value(v, depth + 1)) for k, v in value.items()]
            key = ("d", *((k, _identity(v)) for k, v in items))
        found = self._values.get(key)
        if found is None:
            found = list(items) if kind is list else dict(items)
            self._values[key] = found
        return found

    def model(self, obj: Any, depth: int = 0) -> None:
        """Share, in place, the text and JSON values of the model object `obj` and of the model
        objects it holds (see the class)."""
        if depth > self.MAX_DEPTH:
            return
        cls: type = type(obj)
        for name, how in _sharing(cls).items():
            item = getattr(obj, name)
            if item is None:
                continue
            if how == _OBJECT or how == _OBJECTS:
                for entry in (item if how == _OBJECTS and type(item) is list else [item]):
                    if dataclasses.is_dataclass(entry):
                        self.model(entry, depth + 1)
            else:
                self._field(obj, name, how, item)

    def _field(self, obj: Any, name: str, how: str, item: Any) -> None:
        """One field of text or JSON values, shared in place."""
        if how == _TEXT and type(item) is str:
            setattr(obj, name, self._texts.setdefault(item, item))
        elif how == _VALUE:
            setattr(obj, name, self.value(item))
        elif how == _TEXTS and type(item) is list:
            item[:] = [self.text(x) if type(x) is str else x for x in item]
        elif how == _ENTRIES and type(item) is dict:
            shared = {self.text(k) if type(k) is str else k: self.value(v) for k, v in item.items()}
            item.clear()
            item.update(shared)


def _identity(value: Any) -> Any:
    """A shared value's part of its parent's key: a text or container by identity (it is the one
    shared object, kept alive by the table), anything else by type and exact text (`-0.0`)."""
    kind = type(value)
    if kind is str or kind is list or kind is dict:
        return id(value)
    return (kind, repr(value))


_TEXT, _VALUE, _TEXTS, _ENTRIES, _OBJECT, _OBJECTS = "text", "value", "texts", "entries", "object", "objects"


@lru_cache(maxsize=None)
def _sharing(cls: type) -> dict[str, str]:
    """How `Shared.model` treats each field of the model dataclass `cls` (fields it leaves alone
    are not listed)."""
    if getattr(cls, "__dataclass_params__").frozen:
        return {}
    hints = typing.get_type_hints(cls)
    out: dict[str, str] = {}
    for field in dataclasses.fields(cls):
        how = _how(hints[field.name])
        if how:
            out[field.name] = how
    return out


def _how(hint: Any) -> str:
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        kinds = {_how(arg) for arg in args if arg is not type(None)}
        return kinds.pop() if len(kinds) == 1 else ""
    if hint is Any:
        return _VALUE
    if hint is str:
        return _TEXT
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        return _OBJECT
    if origin is list and args:
        if args[0] is str:
            return _TEXTS
        if isinstance(args[0], type) and dataclasses.is_dataclass(args[0]):
            return _OBJECTS
    if origin is dict and args == (str, Any):
        return _ENTRIES
    return ""
