"""nvbandwidth (NVIDIA/nvbandwidth) ``-j`` JSON -> BenchResults. Pure.

The format, from nvbandwidth's json_output.cpp: ``{"nvbandwidth": {"CUDA Runtime Version": ..,
"Driver Version": .., "version": .., "testcases": [{"name": "host_to_device_memcpy_ce",
"status": "Passed" | "Waived" | "Not Found" | "Error", "bandwidth_description": "memcpy CE CPU(row) ->
GPU(column) bandwidth (GB/s)", "bandwidth_matrix": [["55.3", "N/A", ...]], "sum": 55.3}, ...]}}``.
Matrix cells are strings ("N/A" where a pair was not measured). Host tests have one row (the CPU) and
one column per GPU; each measured cell becomes one result (GB/s, median of the tool's samples by
default). Only host<->device testcases are imported: the rest say nothing about the paths gdrdiag
diagnoses. A testcase that did not pass becomes WAIVED or ERROR with nvbandwidth's words.
"""

from __future__ import annotations

from typing import Any, Optional

from gdrdiag.errors import UserInputError
from gdrdiag.model.params import ImportedMetrics, ImportedParams
from gdrdiag.model.results import BenchResult, SampleStats, Status
from gdrdiag.model.vocabulary import MemoryKind, Provider

_DIRECTIONS = {"host_to_device": "h2d", "device_to_host": "d2h"}
MiB = 1 << 20


class NvbandwidthFormatError(UserInputError):
    """nvbandwidth JSON this importer cannot read."""


def _direction(name: str) -> Optional[str]:
    for prefix, d in _DIRECTIONS.items():
        if name.startswith(prefix):
            return d
    return None


def parse_json(data: Any, source: str = "", buffer_mib: Optional[int] = None) -> list[BenchResult]:
    """Results of an nvbandwidth ``-j`` document; ``buffer_mib`` when the JSON does not say (-b)."""
    root = data.get("nvbandwidth") if isinstance(data, dict) else None
    if not isinstance(root, dict) or not isinstance(root.get("testcases"), list):
        raise NvbandwidthFormatError("nvbandwidth JSON: expected {'nvbandwidth': {'testcases': [...]}}")
    size_mib = buffer_mib or _int_or_none(root.get("bufferSize"))
    out: list[BenchResult] = []
    for tc in root["testcases"]:
        if not isinstance(tc, dict) or not isinstance(tc.get("name"), str):
            raise NvbandwidthFormatError("nvbandwidth JSON: a testcase without a name (truncated?)")
        name = tc["name"]
        direction = _direction(name)
        if direction is None:
            continue
        size = (size_mib or _int_or_none(tc.get("bufferSize")) or 0) * MiB or None
        status = str(tc.get("status", ""))
        base = ImportedParams(
            tool=Provider.NVBANDWIDTH.value,
            test=name,
            direction=direction,
            memory=MemoryKind.PINNED,
            size_bytes=size,
            source_file=source or None,
        )
        key = f"nvbandwidth_{name}"
        if status != "Passed":
            why = f"nvbandwidth status {status or 'missing'}: {tc.get('error', '')}".strip(": ")
            maker = BenchResult.error if status in ("Error", "") else BenchResult.waived
            out.append(maker(key, why, params=base, provider=Provider.NVBANDWIDTH.value))
            continue
        matrix = tc.get("bandwidth_matrix")
        if not isinstance(matrix, list) or not matrix or not all(isinstance(row, list) for row in matrix):
            raise NvbandwidthFormatError(
                f"nvbandwidth JSON: testcase {name!r} passed without a bandwidth_matrix"
            )
        for gpu, cell in enumerate(matrix[0]):
            value = _cell(cell, name)
            if value is None:
                continue
            params = ImportedParams(**{**base.__dict__, "gpu": gpu})
            out.append(
                BenchResult(
                    key=key,
                    status=Status.OK,
                    description=str(tc.get("bandwidth_description", name)),
                    params=params,
                    unit="GB/s",
                    samples=(value,),
                    stats=SampleStats.of([value]),
                    metrics=ImportedMetrics(matrix_sum=_float_or_none(tc.get("sum"))),
                    provider=Provider.NVBANDWIDTH.value,
                    verified=None,
                    method="imported from nvbandwidth -j: the tool's median (or mean with -m) of its samples",
                )
            )
    if not out:
        raise NvbandwidthFormatError("nvbandwidth JSON: no host<->device testcase in this file")
    return out


def _cell(cell: Any, name: str) -> Optional[float]:
    if isinstance(cell, str) and cell.strip().upper() == "N/A":
        return None
    try:
        v = float(cell)
    except (TypeError, ValueError):
        raise NvbandwidthFormatError(
            f"nvbandwidth JSON: {name}: matrix cell {str(cell)[:20]!r} is not a number"
        ) from None
    if v != v or v < 0:
        raise NvbandwidthFormatError(f"nvbandwidth JSON: {name}: matrix cell {v} is not a bandwidth")
    return v if v > 0 else None


def _int_or_none(v: Any) -> Optional[int]:
    return v if isinstance(v, int) and not isinstance(v, bool) and v > 0 else None


def _float_or_none(v: Any) -> Optional[float]:
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None
