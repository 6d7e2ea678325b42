"""Dataclasses <-> JSON-able dicts, both ways, with strict type checks on the way in.

Reports come back from disk, possibly from another machine or a hostile source, so
``from_jsonable`` checks every value against the dataclass field type and raises
``SchemaError`` naming the path of the first bad value. It supports what the model uses:
dataclasses, enums, ``Optional``, ``Union`` of scalars, ``tuple[X, ...]``, ``list[X]`` and
``dict[str, X]``.
"""

from __future__ import annotations

import dataclasses
import enum
import functools
import math
import types
import typing
from typing import Any, Optional, Union

_MAX_DEPTH = 64


class SchemaError(ValueError):
    """A JSON document does not match the model; the message names the path."""


# Per-class tables (field names, which types are not records, decoders below): caches of pure
# functions of a class, filled on first use, never of data, so nothing a Report holds is remembered.
_FIELD_NAMES: dict[type, tuple[str, ...]] = {}
_PLAIN = (str, int, bool, type(None))


def to_jsonable(obj: Any) -> Any:
    """Turn a model object into plain JSON types (dicts keep field order).

    The common kinds (plain scalars, floats, records, tuples) are told apart by exact type first:
    ``compare --json`` turns about a million values of a 20,000-result comparison.
    """
    kind = type(obj)
    if kind in _PLAIN:
        return obj
    if kind is float:
        return obj if math.isfinite(obj) else None  # JSON has no inf/nan; unknown is null.
    names = _FIELD_NAMES.get(kind)
    if names is None and kind not in _NOT_RECORDS:
        if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
            names = _FIELD_NAMES[kind] = tuple(f.name for f in dataclasses.fields(obj))
        else:
            _NOT_RECORDS.add(kind)
    if names is not None:
        return {name: to_jsonable(getattr(obj, name)) for name in names}
    if kind is tuple or kind is list:
        return [to_jsonable(v) for v in obj]
    if isinstance(obj, enum.Enum):
        return obj.value
    if isinstance(obj, (list, tuple)):
        return [to_jsonable(v) for v in obj]
    if isinstance(obj, dict):
        return {str(k): to_jsonable(v) for k, v in obj.items()}
    if isinstance(obj, float) and not math.isfinite(obj):
        return None  # JSON has no inf/nan; unknown is null.
    return obj


_NOT_RECORDS: set[type] = set()


@functools.cache
def _hints(cls: type) -> dict[str, Any]:
    """``cls``'s resolved field types. Cached: a pure function of a class (callers only read it)."""
    return typing.get_type_hints(cls)


def _tagged_union(args: tuple) -> "dict[str, Any] | None":
    """{bench value: class} when every non-None member is a dataclass with a ``bench`` default."""
    members = [a for a in args if a is not type(None)]
    if len(members) < 2 or not all(dataclasses.is_dataclass(a) for a in members):
        return None
    tags = {}
    for a in members:
        f = next((f for f in dataclasses.fields(a) if f.name == "bench"), None)
        if f is None or f.default is dataclasses.MISSING:
            return None
        tags[getattr(f.default, "value", f.default)] = a
    return tags


def from_jsonable(cls: Any, data: Any, path: str = "$", depth: int = 0) -> Any:
    """Build ``cls`` from plain JSON data, checking types; raises ``SchemaError``.

    Each type gets a decoder built once (:func:`_decoder`) instead of being re-inspected for
    every value, and paths are only formatted when an error is raised: a 20,000-result Report
    (2 million values) loads in about a second instead of ten.
    """
    if depth > _MAX_DEPTH:
        raise SchemaError(f"{_fmt(path)}: nested too deeply")
    return _decoder(cls)(data, path, depth)


# A path is a root string, or (parent path, segment): a str segment is appended as is, an int
# is an index. Built without string formatting, formatted by _fmt only for an error message.
Path = Union[str, tuple]
Decoder = typing.Callable[[Any, Any, int], Any]
_decoders: dict[Any, Decoder] = {}


def _fmt(path: Any) -> str:
    parts = []
    while isinstance(path, tuple):
        path, seg = path
        parts.append(f"[{seg}]" if isinstance(seg, int) else seg)
    return str(path) + "".join(reversed(parts))


def _decoder(cls: Any) -> Decoder:
    """The decoder of ``cls``, built on first use (recursive types go through the cache)."""
    fn = _decoders.get(cls)
    if fn is None:
        _decoders[cls] = lambda data, path, depth: _decoders[cls](data, path, depth)  # while building
        try:
            fn = _build(cls)
        except BaseException:
            del _decoders[cls]
            raise
        _decoders[cls] = fn
    return fn


def _build(cls: Any) -> Decoder:
    origin = typing.get_origin(cls)
    args = typing.get_args(cls)
    if cls is Any:
        return lambda data, path, depth: data
    if origin is Union or (hasattr(types, "UnionType") and isinstance(cls, types.UnionType)):
        return _build_union(cls, args)
    if dataclasses.is_dataclass(cls):
        return _build_dataclass(cls)
    if isinstance(cls, type) and issubclass(cls, enum.Enum):
        allowed = ", ".join(str(m.value) for m in cls)

        members = cls._value2member_map_

        def enum_value(data: Any, path: Any, depth: int) -> Any:
            try:
                found = members.get(data)
                return found if found is not None else cls(data)
            except (ValueError, TypeError):
                raise SchemaError(f"{_fmt(path)}: {data!r:.60} is not one of {allowed}") from None

        return enum_value
    if origin in (tuple, list):
        item = args[0] if args else Any
        return _build_sequence(origin, _decoder(item), item is float)
    if origin is dict:
        return _build_mapping(_decoder(args[1]) if len(args) > 1 else _decoder(Any))
    if cls in (float, int, bool, str, type(None)):
        return _fast_scalar(cls)
    return lambda data, path, depth: _raise(f"{_fmt(path)}: unsupported type {cls!r}")


def _fast_scalar(cls: type) -> Decoder:
    """A scalar decoder: the common well-typed value returns at once, anything else is checked."""
    if cls is str:
        return lambda data, path, depth: data if type(data) is str else _scalar(cls, data, path)
    if cls is int:
        return lambda data, path, depth: (
            data if type(data) is int and -(2**63) <= data < 2**64 else _scalar(cls, data, path)
        )
    if cls is float:
        return lambda data, path, depth: (
            data if type(data) is float and -1e300 <= data <= 1e300 else _scalar(cls, data, path)
        )
    return lambda data, path, depth: _scalar(cls, data, path)


def _raise(message: str) -> Any:
    raise SchemaError(message)


def _build_union(cls: Any, args: tuple) -> Decoder:
    has_none = type(None) in args
    tagged = _tagged_union(args)
    members = [_decoder(a) for a in args if a is not type(None)]
    if tagged is not None:
        by_tag = {tag: _decoder(t) for tag, t in tagged.items()}
        names = ", ".join(sorted(tagged))

        def tagged_value(data: Any, path: Any, depth: int) -> Any:
            if data is None and has_none:
                return None
            # A union of records told apart by their ``bench`` field (typed params/metrics).
            tag = data.get("bench") if isinstance(data, dict) else None
            fn = by_tag.get(tag) if isinstance(tag, str) else None
            if fn is None:
                raise SchemaError(f"{_fmt(path)}.bench: {tag!r:.40} is not one of {names}")
            return fn(data, path, depth + 1)

        return tagged_value
    if len(members) == 1:
        (only,) = members

        def optional_value(data: Any, path: Any, depth: int) -> Any:
            if data is None and has_none:
                return None
            return only(data, path, depth + 1)

        return optional_value

    def union_value(data: Any, path: Any, depth: int) -> Any:
        if data is None and has_none:
            return None
        errors = []
        for fn in members:
            try:
                return fn(data, path, depth + 1)
            except SchemaError as exc:
                errors.append(str(exc))
        raise SchemaError(
            errors[0] if len(errors) == 1 else f"{_fmt(path)}: {data!r:.60} matches none of {args}"
        )

    return union_value


def _build_dataclass(cls: Any) -> Decoder:
    """A decoder for one dataclass, written out as Python source once per class.

    A 20,000-result Report holds 200,000 records and 3 million field slots, so the per-field work
    is spelled out instead of looped over: one ``data[name]`` per field (``KeyError``: the field
    is absent, its default is taken), ``null`` taken at once where the type allows it, the common
    well-typed scalar (a str, an in-range int or float, a known enum value) checked inline, and
    every other value handed to the field type's own decoder, which does the full check and
    raises the same ``SchemaError`` as before. Fields are read in declaration order, so the first
    bad field is the one reported.
    """
    hints = _hints(cls)
    env: dict[str, Any] = {
        "SchemaError": SchemaError,
        "_fmt": _fmt,
        "_MAX_DEPTH": _MAX_DEPTH,
        "_cls": cls,
        "_new": object.__new__,
        "_post_init": getattr(cls, "__post_init__", None),
        "_not_an_object": _not_an_object(cls),
    }
    lines = [
        "def record(data, path, depth):",
        "    if depth > _MAX_DEPTH:",
        "        raise SchemaError(f'{_fmt(path)}: nested too deeply')",
        "    if not isinstance(data, dict):",
        "        _not_an_object(data, path)",
        "    child = depth + 1",
    ]
    values = []
    for i, f in enumerate(dataclasses.fields(cls)):
        hint = hints[f.name]
        env[f"_decode_{i}"] = _decoder(hint)
        lines += ["    try:", f"        v = data[{f.name!r}]", "    except KeyError:"]
        if f.default is not dataclasses.MISSING:
            env[f"_default_{i}"] = f.default
            lines.append(f"        f{i} = _default_{i}")
        elif f.default_factory is not dataclasses.MISSING:
            env[f"_factory_{i}"] = f.default_factory
            lines.append(f"        f{i} = _factory_{i}()")
        else:
            missing = f": missing field {f.name!r}"
            lines.append(f"        raise SchemaError(_fmt(path) + {missing!r}) from None")
        lines.append("    else:")
        branches = []
        if _allows_none(hint):
            # null is the common "unknown": no decoder call for it where the type allows it
            branches.append(("v is None", "None"))
        fast = _inline_check(hint, env, i)
        if fast is not None:
            branches.append(fast)
        decode = f"_decode_{i}(v, (path, {'.' + f.name!r}), child)"
        for n, (test, kept) in enumerate(branches):
            lines += [f"        {'elif' if n else 'if'} {test}:", f"            f{i} = {kept}"]
        if branches:
            lines += ["        else:", f"            f{i} = {decode}"]
        else:
            lines.append(f"        f{i} = {decode}")
        values.append((f.name, f"f{i}"))
    lines += _construction(cls, values)
    exec("\n".join(lines), env)  # noqa: S102 - source built above from field names only
    return env["record"]


def _not_an_object(cls: Any) -> typing.Callable[[Any, Any], None]:
    def refuse(data: Any, path: Any) -> None:
        raise SchemaError(f"{_fmt(path)}: expected an object for {cls.__name__}, got {type(data).__name__}")

    return refuse


def _inline_check(hint: Any, env: dict[str, Any], i: int) -> Optional[tuple[str, str]]:
    """(source of a test that ``v`` is a well-typed value of ``hint``, the value kept), or None.

    Only the common case is tested inline; a value that fails the test goes to the full decoder,
    which accepts it (an int where a float is expected) or raises with the path.
    """
    if _allows_none(hint):
        members = [a for a in typing.get_args(hint) if a is not type(None)]
        if len(members) != 1:
            return None
        (hint,) = members
    if hint is str:
        return "type(v) is str", "v"
    if hint is int:
        return f"type(v) is int and {-(2**63)} <= v < {2**64}", "v"
    if hint is float:
        return "type(v) is float and -1e300 <= v <= 1e300", "v"
    if hint is bool:
        return "(v is True or v is False)", "v"
    if isinstance(hint, type) and issubclass(hint, enum.Enum):
        env[f"_members_{i}"] = hint._value2member_map_
        return f"type(v) is str and v in _members_{i}", f"_members_{i}[v]"
    return None


def _construction(cls: Any, values: list[tuple[str, str]]) -> list[str]:
    """Source lines that make the instance of ``cls`` from the decoded values (defaults filled in).

    The values were checked by the decoder, so a plain dataclass is made as its generated
    ``__init__`` would make it (the same ``__dict__``, filled key by key in field order, which
    keeps the compact shared-key dict), without that ``__init__``'s ``object.__setattr__`` call
    per field of a frozen class; its ``__post_init__`` still runs. Anything else (slots, a custom
    ``__new__``, init-only or init=False fields) goes through ``cls(**values)``.
    """
    fields = dataclasses.fields(cls)
    plain = (
        cls.__dataclass_params__.init
        and "__slots__" not in cls.__dict__
        and cls.__new__ is object.__new__
        and len(fields) == len(cls.__dataclass_fields__)  # no InitVar or ClassVar pseudo-fields
        and all(f.init for f in fields)
    )
    if not plain:
        return [f"    return _cls({', '.join(f'{name}={value}' for name, value in values)})"]
    lines = ["    obj = _new(_cls)", "    attrs = obj.__dict__"]
    lines += [f"    attrs[{name!r}] = {value}" for name, value in values]
    if getattr(cls, "__post_init__", None) is not None:
        lines.append("    _post_init(obj)")
    return lines + ["    return obj"]


def _allows_none(cls: Any) -> bool:
    """True when ``cls`` accepts null (Optional[...], a Union with None, None itself, or Any)."""
    if cls is Any or cls is type(None):
        return True
    origin = typing.get_origin(cls)
    is_union = origin is Union or (hasattr(types, "UnionType") and isinstance(cls, types.UnionType))
    return is_union and type(None) in typing.get_args(cls)


def _build_sequence(origin: Any, item: Decoder, of_floats: bool = False) -> Decoder:
    """A list or tuple decoder; a list of in-range floats (a result's samples) is taken whole."""

    def sequence(data: Any, path: Any, depth: int) -> Any:
        if depth > _MAX_DEPTH:
            raise SchemaError(f"{_fmt(path)}: nested too deeply")
        if not isinstance(data, list):
            raise SchemaError(f"{_fmt(path)}: expected a list, got {type(data).__name__}")
        if of_floats and all(type(v) is float and -1e300 <= v <= 1e300 for v in data):
            return tuple(data) if origin is tuple else list(data)
        items = [item(v, (path, i), depth + 1) for i, v in enumerate(data)]
        return tuple(items) if origin is tuple else items

    return sequence


def _build_mapping(value: Decoder) -> Decoder:
    def mapping(data: Any, path: Any, depth: int) -> Any:
        if depth > _MAX_DEPTH:
            raise SchemaError(f"{_fmt(path)}: nested too deeply")
        if not isinstance(data, dict):
            raise SchemaError(f"{_fmt(path)}: expected an object, got {type(data).__name__}")
        return {str(k): value(v, (path, f".{k}"), depth + 1) for k, v in data.items()}

    return mapping


def _scalar(cls: type, data: Any, path: Any) -> Any:
    """Check one JSON scalar against float/int/bool/str/None (bool is not a number here)."""
    try:
        return _SCALARS[cls](data)
    except _Bad as exc:
        raise SchemaError(f"{_fmt(path)}: {exc}") from None


class _Bad(Exception):
    """A scalar check failed (the caller adds the path)."""


def _float(data: Any) -> float:
    if isinstance(data, bool) or not isinstance(data, (int, float)):
        raise _Bad(f"expected a number, got {type(data).__name__}")
    if isinstance(data, int) and not -(10**300) <= data <= 10**300:
        raise _Bad("number out of range")  # float() of an integer >= 2^1024 raises OverflowError
    if not math.isfinite(float(data)) or abs(float(data)) > 1e300:
        raise _Bad("number out of range")
    return float(data)


def _int(data: Any) -> int:
    if isinstance(data, bool) or not isinstance(data, int):
        raise _Bad(f"expected an integer, got {type(data).__name__}")
    if not -(2**63) <= data < 2**64:  # 64-bit, signed or unsigned (u64 counters and masks)
        raise _Bad("integer out of range")
    return data


def _bool(data: Any) -> bool:
    if not isinstance(data, bool):
        raise _Bad(f"expected true/false, got {type(data).__name__}")
    return data


def _str(data: Any) -> str:
    if not isinstance(data, str):
        raise _Bad(f"expected a string, got {type(data).__name__}")
    return data


def _none(data: Any) -> None:
    if data is not None:
        raise _Bad("expected null")
    return None


_SCALARS: dict[type, typing.Callable[[Any], Any]] = {
    float: _float,
    int: _int,
    bool: _bool,
    str: _str,
    type(None): _none,
}
