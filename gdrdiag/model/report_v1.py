"""Read schema-1 Reports: turn their loose ``params``/``metrics`` dicts into the typed records of v2.

Version 1 stored every result's parameters and metrics as free dicts. This module maps each v1 name
onto its v2 field (renaming those that gained a unit, such as ``size`` -> ``size_bytes``), moves
run settings (seed, sweep, ro_ab, ...) into ``settings``, folds the v1 ``ro`` flag into the
``access`` bits, and drops text that v2 derives (``location``). A v1 name this module does not know
is a SchemaError naming it: nothing is silently lost.

Works on plain JSON data (before the typed parse), so the strict parse of v2 checks the result.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from gdrdiag.model.params import METRICS_BY_BENCH
from gdrdiag.model.serde import SchemaError
from gdrdiag.model.vocabulary import AccessFlags, Bench

# v1 parameter name -> v2 params field, per bench (names that did not change map to themselves).
_PARAM_RENAMES: dict[Bench, dict[str, str]] = {
    Bench.COPY: {
        "kind": "memory",
        "direction": "direction",
        "mode": "mode",
        "size": "size_bytes",
        "layers": "layers",
        "chunk": "chunk_bytes",
        "streams": "streams",
        "block_size": "block_bytes",
        "blocks": "blocks",
        "library": "library",
        "same_buffers": "same_buffers",
    },
    Bench.GATHER: {
        "kernel": "kernel",
        "record_bytes": "record_bytes",
        "stride": "stride_bytes",
        "base_offset": "base_offset_bytes",
        "pattern": "pattern",
        "slots": "slots",
        "records": "records",
        "nbytes": "copy_bytes",
        "sm_limit": "sm_limit",
        "dst_stride": "dst_stride_bytes",
        "threads": "threads",
        "depth": "depth",
        "sms_total": "sms_total",
        "mps": "mps_bytes",
        "mrrs": "mrrs_bytes",
        "rcb": "rcb_bytes",
        "link_params": "link_params",
        "link": "link",
        "grid": "grid",
    },
    Bench.MR: {
        "memory": "memory",
        "src_memory": "src_memory",
        "reg_path": "reg_path",
        "access": "access",
        "size": "size_bytes",
        "qps": "qps",
        "tx_depth": "tx_depth",
        "post_list": "post_list",
        "offset": "offset_bytes",
        "mode": "mode",
        "role": "role",
        "blocks": "blocks",
        "variant": "variant",
        "write_with_imm": "write_with_imm",
        "signal_every_wrs": "signal_every_wrs",
        "slot": "slot_bytes",
        "landing": "landing",
        "lands_in": "lands_in",
        "topology": "topology",
    },
    Bench.PEER: {},  # peer-bench came after version 1
    Bench.IMPORTED: {},
}
# v1 names that were run settings; they move to ``settings`` under these names.
_SETTINGS = {
    "iterations": "iterations",
    "repeats": "repeats",
    "warmup": "warmup",
    "seed": "seed",
    "sweep": "sweep",
    "duration_s": "duration_s",
    "port": "port",
    "device": "device_name",
    "device_name": "device_name",
    "ro_ab": "ro_ab",
    "link_gbps": "link_gbps",
    "run_timeout_s": "run_timeout_s",
    "peer": "peer",
}
# v1 names whose content v2 derives (MemoryKind.location), dropped.
_DERIVED = {"location", "provider_note"}
# The access a v1 mr result had when it stored only ``ro`` (mr-bench's default: local + remote write).
_V1_DEFAULT_ACCESS = AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE


def upgrade(data: dict) -> dict:
    """A v1 Report's JSON data as v2 JSON data (raises SchemaError on what it cannot map)."""
    results = data.get("results", [])
    if not isinstance(results, list):
        raise SchemaError("$.results: expected a list")
    out = dict(data)
    out["schema_version"] = 2
    out["results"] = [_result(r, f"$.results[{i}]") for i, r in enumerate(results)]
    return out


def _result(r: Any, path: str) -> Any:
    if not isinstance(r, dict) or not isinstance(r.get("key"), str):
        return r  # the strict v2 parse names what is wrong
    bench = Bench.of_key(r["key"])
    params, settings = _split_params(bench, r.get("params") or {}, f"{path}.params")
    metrics = r.get("metrics") or {}
    if not isinstance(metrics, dict):
        raise SchemaError(f"{path}.metrics: expected an object")
    known = {f.name for f in dataclasses.fields(METRICS_BY_BENCH[bench])}
    for name in metrics:
        if name not in known:
            raise SchemaError(f"{path}.metrics.{name}: a version-1 metric this gdrdiag does not know")
    new = {k: v for k, v in r.items() if k not in ("params", "metrics")}
    new["params"] = {"bench": bench.value, **params}
    new["metrics"] = {"bench": bench.value, **metrics}
    new["settings"] = settings
    return new


def _split_params(bench: Bench, params: Any, path: str) -> tuple[dict, dict]:
    if not isinstance(params, dict):
        raise SchemaError(f"{path}: expected an object")
    renames = _PARAM_RENAMES[bench]
    typed: dict[str, Any] = {}
    settings: dict[str, Any] = {}
    for name, value in params.items():
        if name == "access" and isinstance(value, str):
            typed["access"] = _access_from_names(value, f"{path}.access")
        elif name in renames:
            typed[renames[name]] = value
        elif name in _SETTINGS:
            settings[_SETTINGS[name]] = value
        elif name in _DERIVED or (bench is Bench.MR and name == "ro"):
            continue
        else:
            raise SchemaError(f"{path}.{name}: a version-1 parameter this gdrdiag does not know")
    if bench is Bench.MR and "ro" in params and "access" not in typed:
        ro = params["ro"]
        if not isinstance(ro, bool):
            raise SchemaError(f"{path}.ro: expected true/false")
        typed["access"] = int(_V1_DEFAULT_ACCESS | (AccessFlags.RELAXED_ORDERING if ro else 0))
    return typed, settings


def _access_from_names(text: str, path: str) -> int:
    """v1 stored access as ``local_write|remote_write|relaxed_ordering`` (unknown bits as hex)."""
    mask = 0
    for name in filter(None, text.split("|")):
        if name.startswith("0x"):
            mask |= int(name, 16)
        elif name.upper() in AccessFlags.__members__:
            mask |= int(AccessFlags[name.upper()])
        else:
            raise SchemaError(f"{path}: unknown access flag {name!r}")
    return mask
