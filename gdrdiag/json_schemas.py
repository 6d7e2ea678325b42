"""JSON Schemas (draft 2020-12) of every JSON document gdrdiag writes, built from the model's types.

Each shape's schema is derived from the dataclasses that ``model.serde.to_jsonable`` writes, so the
schema files under ``docs/schemas/`` cannot drift from the code: ``scripts/make_docs.py``
writes them from :func:`documents`, and ``tests/unit/test_json_schemas.py`` fails while a file on
disk differs from what this module builds. The CLI tests validate real outputs against the files.

The rules: a dataclass is an object with every field required (``to_jsonable`` writes every
field) and no other key; ``Optional`` adds ``null`` (unknown); an enum lists its values; a tuple or
list is an array, a fixed-length tuple a ``prefixItems`` array, a flag set (``AccessFlags``) an
integer; ``dict[str, X]`` an object of X. A few fields hold words the type says only as ``str``
(a result's provider, a node's level); ``_WORDS`` lists their allowed values.
"""

from __future__ import annotations

import dataclasses
import enum
import json
import types
import typing
from typing import Any, Callable, Union

from gdrdiag.fleet import LEVELS, FleetResult, NodeVerdict
from gdrdiag.model.comparison import Comparison
from gdrdiag.model.findings import Finding, Severity
from gdrdiag.model.machine import MachineInfo
from gdrdiag.model.path import Judgement
from gdrdiag.model.report import SCHEMA_VERSION, Report
from gdrdiag.model.results import BenchResult
from gdrdiag.model.vocabulary import Provider
from gdrdiag.node_record import RECORD_KIND, RECORD_VERSION, NodeFinding, NodeRecordHead

DRAFT = "https://json-schema.org/draft/2020-12/schema"
SCHEMA_DIR = "docs/schemas"

# (class, field) -> the values a ``str`` field may hold; None stands for null.
_WORDS: dict[tuple[type, str], list[Any]] = {
    (BenchResult, "provider"): ["", *(p.value for p in Provider)],
    (Finding, "basis"): ["measured", "inferred", "by design", None],
    (NodeFinding, "severity"): [s.value for s in Severity],
    (NodeFinding, "origin"): ["machine", "results"],
    (NodeVerdict, "level"): list(LEVELS),
}
# (class, field) -> a constant the field always holds in what this gdrdiag writes.
_CONSTANTS: dict[tuple[type, str], Any] = {
    (Report, "schema_version"): SCHEMA_VERSION,
    (NodeRecordHead, "record"): RECORD_KIND,
    (NodeRecordHead, "record_version"): RECORD_VERSION,
}


def _doc(cls: type) -> str:
    """The first paragraph of a class's docstring, on one line."""
    text = (cls.__doc__ or "").strip().split("\n\n")[0]
    return " ".join(text.split())


class _Builder:
    """Turns Python types into schema fragments, collecting each dataclass once under ``$defs``."""

    def __init__(self) -> None:
        self.defs: dict[str, dict] = {}

    def of(self, tp: Any) -> dict:
        origin, args = typing.get_origin(tp), typing.get_args(tp)
        if tp is Any:
            return {}
        if origin is Union or (hasattr(types, "UnionType") and isinstance(tp, types.UnionType)):
            return {"anyOf": [self.of(a) for a in args]}
        if dataclasses.is_dataclass(tp):
            return self.ref(tp)
        if isinstance(tp, type) and issubclass(tp, enum.Flag):  # a bit mask (verbs access flags)
            return {"type": "integer", "minimum": 0, "description": f"{tp.__name__} bits"}
        if isinstance(tp, type) and issubclass(tp, enum.Enum):
            return {"enum": [m.value for m in tp]}
        if origin in (tuple, list):
            if origin is tuple and args and args[-1] is not Ellipsis:
                items = [self.of(a) for a in args]
                return {"type": "array", "prefixItems": items, "items": False, "minItems": len(items)}
            return {"type": "array", "items": self.of(args[0]) if args else {}}
        if origin is dict:
            return {"type": "object", "additionalProperties": self.of(args[1]) if len(args) > 1 else {}}
        scalar = {str: "string", int: "integer", float: "number", bool: "boolean", type(None): "null"}
        if tp in scalar:
            return {"type": scalar[tp]}
        raise TypeError(f"no JSON Schema for {tp!r}")

    def ref(self, cls: type) -> dict:
        if cls.__name__ not in self.defs:
            self.defs[cls.__name__] = {}  # placeholder: recursive types refer to it while it is built
            self.defs[cls.__name__] = self.record(cls)
        return {"$ref": f"#/$defs/{cls.__name__}"}

    def record(self, cls: type) -> dict:
        """A dataclass as an object: every field required, no other key."""
        hints = typing.get_type_hints(cls)
        props: dict[str, dict] = {}
        for f in dataclasses.fields(cls):
            props[f.name] = self.field(cls, f, hints[f.name])
        return {
            "type": "object",
            "description": _doc(cls),
            "properties": props,
            "required": list(props),
            "additionalProperties": False,
        }

    def field(self, cls: type, f: dataclasses.Field, tp: Any) -> dict:
        if (cls, f.name) in _CONSTANTS:
            return {"const": _CONSTANTS[(cls, f.name)]}
        if (cls, f.name) in _WORDS:
            return {"enum": _WORDS[(cls, f.name)]}
        if f.name == "bench" and isinstance(f.default, enum.Enum):
            return {"const": f.default.value}  # the tag that tells typed params/metrics apart
        return self.of(tp)


@dataclasses.dataclass(frozen=True)
class Shape:
    """One JSON document gdrdiag writes: its schema file, title, what writes it, and how it is built."""

    name: str
    title: str
    written_by: str
    build: Callable[[_Builder], dict]


def _report(b: _Builder) -> dict:
    return b.record(Report)


def _inspect(b: _Builder) -> dict:
    schema = b.record(Report)
    schema["properties"]["machine"] = b.ref(MachineInfo)  # never null: inspect always reads a machine
    schema["properties"]["results"] = {"type": "array", "maxItems": 0}
    return schema


def _import(b: _Builder) -> dict:
    schema = b.record(Report)
    results = schema["properties"]["results"]
    results["contains"] = {
        "type": "object",
        "properties": {"params": {"type": "object", "properties": {"bench": {"const": "imported"}}}},
        "required": ["params"],
    }
    results["minItems"] = 1
    return schema


def _diagnose(b: _Builder) -> dict:
    return _object(
        "What diagnose concluded about one saved Report, most severe first.",
        report={"type": "string", "description": "the Report file as given on the command line"},
        findings={"type": "array", "items": b.ref(Finding)},
        rows={"type": "array", "items": b.ref(Judgement), "description": "every numeric row vs its path"},
    )


def _compare(b: _Builder) -> dict:
    return b.record(Comparison)


def _collect(b: _Builder) -> dict:
    return _object(
        "The bundle collect wrote, and what it holds.",
        path={"type": "string"},
        files={"type": "integer", "minimum": 0},
        bytes={"type": "integer", "minimum": 0},
        privileged={"type": ["boolean", "null"]},
        gpus={"type": "integer", "minimum": 0},
        nics={"type": "integer", "minimum": 0},
    )


def _inspect_check(b: _Builder) -> dict:
    counts = _object(
        "Findings per severity.", **{s.value: {"type": "integer", "minimum": 0} for s in Severity}
    )
    return _object(
        "inspect --check: ready or not, and why.",
        ready={"type": "boolean"},
        problems={"type": "array", "items": {"type": "string"}},
        findings=counts,
        gpus={"type": "integer", "minimum": 0},
        nics={"type": "integer", "minimum": 0},
        seconds={"type": "number", "minimum": 0},
    )


def _fleet(b: _Builder) -> dict:
    schema = b.record(FleetResult)
    schema["properties"]["skipped_counts"] = {"type": "object", "additionalProperties": {"type": "integer"}}
    schema["required"].append("skipped_counts")
    return schema


def _node_record(b: _Builder) -> dict:
    schema = b.record(NodeRecordHead)
    schema["properties"]["report"] = b.ref(Report)
    schema["required"].append("report")
    return schema


def _object(description: str, **props: dict) -> dict:
    return {
        "type": "object",
        "description": description,
        "properties": props,
        "required": list(props),
        "additionalProperties": False,
    }


SHAPES: tuple[Shape, ...] = (
    Shape(
        "report-v2",
        "gdrdiag Report, schema version 2",
        "report -o/--json; copy-bench, gather-bench, mr-bench --json/--json-out; show --json",
        _report,
    ),
    Shape(
        "inspect",
        "gdrdiag inspect --json",
        "inspect --json (a Report with machine facts, no results)",
        _inspect,
    ),
    Shape("inspect-check", "gdrdiag inspect --check --json", "inspect --check --json", _inspect_check),
    Shape("diagnose", "gdrdiag diagnose --json", "diagnose --json", _diagnose),
    Shape("compare", "gdrdiag compare --json", "compare --json", _compare),
    Shape("collect", "gdrdiag collect --json", "collect --json", _collect),
    Shape("fleet", "gdrdiag fleet --json", "fleet --json", _fleet),
    Shape("import", "gdrdiag import output", "import -o/--json (a Report holding imported results)", _import),
    Shape(
        "node-record",
        "gdrdiag node record",
        "report --record (one file) and --jsonl (one line each)",
        _node_record,
    ),
)


def schema_of(shape: Shape) -> dict:
    """The complete schema document of one shape (its own ``$defs``; no reference leaves the file)."""
    builder = _Builder()
    body = shape.build(builder)
    doc = {
        "$schema": DRAFT,
        "$id": f"urn:gdrdiag:schema:{shape.name}",
        "title": shape.title,
        "description": f"{body.pop('description', '')} Written by: {shape.written_by}.".strip(),
        **body,
    }
    if builder.defs:
        doc["$defs"] = dict(sorted(builder.defs.items()))
    return doc


def documents() -> dict[str, str]:
    """Relative path -> file text of every schema file (what ``scripts/make_docs.py`` writes)."""
    return {
        f"{SCHEMA_DIR}/{shape.name}.schema.json": json.dumps(schema_of(shape), indent=1) + "\n"
        for shape in SHAPES
    }
