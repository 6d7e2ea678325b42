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
import math
import types
import typing
from typing import Any, Union

_MAX_DEPTH = 64


class SchemaError(ValueError):
    """A JSON document does not match the model; the message names the path."""


def to_jsonable(obj: Any) -> Any:
    """Turn a model object into plain JSON types (dicts keep field order)."""
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return {f.name: to_jsonable(getattr(obj, f.name)) for f in dataclasses.fields(obj)}
    if isinstance(obj, enum.Enum):
        return obj.value
    if isinstance(obj, (list, tuple)):
        return [to_jsonable(v) for v in obj]
    if isinstance(obj, dict):
        return {str(k): to_jsonable(v) for k, v in obj.items()}
    if isinstance(obj, float) and not math.isfinite(obj):
        return None  # JSON has no inf/nan; unknown is null.
    return obj


_hints_cache: dict[type, dict[str, Any]] = {}


def _hints(cls: type) -> dict[str, Any]:
    if cls not in _hints_cache:
        _hints_cache[cls] = typing.get_type_hints(cls)
    return _hints_cache[cls]


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
    """Build ``cls`` from plain JSON data, checking types; raises ``SchemaError``."""
    if depth > _MAX_DEPTH:
        raise SchemaError(f"{path}: nested too deeply")
    origin = typing.get_origin(cls)
    args = typing.get_args(cls)

    if cls is Any:
        return data
    if origin is Union or (hasattr(types, "UnionType") and isinstance(cls, types.UnionType)):
        if data is None and type(None) in args:
            return None
        tagged = _tagged_union(args)
        if tagged is not None:
            # A union of records told apart by their ``bench`` field (typed params/metrics).
            tag = data.get("bench") if isinstance(data, dict) else None
            if tag not in tagged:
                raise SchemaError(f"{path}.bench: {tag!r:.40} is not one of {', '.join(sorted(tagged))}")
            return from_jsonable(tagged[tag], data, path, depth + 1)
        errors = []
        for arg in args:
            if arg is type(None):
                continue
            try:
                return from_jsonable(arg, data, path, depth + 1)
            except SchemaError as exc:
                errors.append(str(exc))
        raise SchemaError(errors[0] if len(errors) == 1 else f"{path}: {data!r:.60} matches none of {args}")
    if dataclasses.is_dataclass(cls):
        if not isinstance(data, dict):
            raise SchemaError(f"{path}: expected an object for {cls.__name__}, got {type(data).__name__}")
        hints = _hints(cls)
        kwargs = {}
        for f in dataclasses.fields(cls):
            if f.name in data:
                kwargs[f.name] = from_jsonable(hints[f.name], data[f.name], f"{path}.{f.name}", depth + 1)
            elif f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
                raise SchemaError(f"{path}: missing field {f.name!r}")
        return cls(**kwargs)
    if isinstance(cls, type) and issubclass(cls, enum.Enum):
        try:
            return cls(data)
        except (ValueError, TypeError):
            allowed = ", ".join(str(m.value) for m in cls)
            raise SchemaError(f"{path}: {data!r:.60} is not one of {allowed}") from None
    if origin in (tuple, list):
        if not isinstance(data, list):
            raise SchemaError(f"{path}: expected a list, got {type(data).__name__}")
        item_t = args[0] if args else Any
        items = [from_jsonable(item_t, v, f"{path}[{i}]", depth + 1) for i, v in enumerate(data)]
        return tuple(items) if origin is tuple else items
    if origin is dict:
        if not isinstance(data, dict):
            raise SchemaError(f"{path}: expected an object, got {type(data).__name__}")
        val_t = args[1] if len(args) > 1 else Any
        return {str(k): from_jsonable(val_t, v, f"{path}.{k}", depth + 1) for k, v in data.items()}
    if cls in (float, int, bool, str, type(None)):
        return _scalar(cls, data, path)
    raise SchemaError(f"{path}: unsupported type {cls!r}")


def _scalar(cls: type, data: Any, path: str) -> Any:
    """Check one JSON scalar against float/int/bool/str/None (bool is not a number here)."""
    if cls is float:
        if isinstance(data, bool) or not isinstance(data, (int, float)):
            raise SchemaError(f"{path}: expected a number, got {type(data).__name__}")
        if not math.isfinite(float(data)) or abs(float(data)) > 1e300:
            raise SchemaError(f"{path}: number out of range")
        return float(data)
    if cls is int:
        if isinstance(data, bool) or not isinstance(data, int):
            raise SchemaError(f"{path}: expected an integer, got {type(data).__name__}")
        if not -(2**63) <= data < 2**64:  # 64-bit, signed or unsigned (u64 counters and masks)
            raise SchemaError(f"{path}: integer out of range")
        return data
    if cls is bool:
        if not isinstance(data, bool):
            raise SchemaError(f"{path}: expected true/false, got {type(data).__name__}")
        return data
    if cls is str:
        if not isinstance(data, str):
            raise SchemaError(f"{path}: expected a string, got {type(data).__name__}")
        return data
    if cls is type(None):
        if data is not None:
            raise SchemaError(f"{path}: expected null")
        return None
    raise SchemaError(f"{path}: unsupported type {cls!r}")
