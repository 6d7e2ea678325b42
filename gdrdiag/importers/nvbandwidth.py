"""nvbandwidth (NVIDIA/nvbandwidth) ``-j`` JSON -> BenchResults. Pure.

The format, from nvbandwidth's json_output.cpp: ``{"nvbandwidth": {"CUDA Runtime Version": ..,
"Driver Version": .., "version": .., "testcases": [{"name": "host_to_device_memcpy_ce",
"status": "Passed" | "Waived" | "Not Found" | "Error", "bandwidth_description": "memcpy CE CPU(row) ->
GPU(column) bandwidth (GB/s)", "bandwidth_matrix": [["55.3", "N/A", ...]], "sum": 55.3}, ...]}}``.
Matrix cells are strings ("N/A" where a pair was not measured). Each measured cell becomes one result
(GB/s, median of the tool's samples by default). A testcase that did not pass becomes WAIVED or ERROR
with nvbandwidth's words.

Imported testcases (nvbandwidth's testcases_ce.cpp / testcases_sm.cpp):

- host<->device (``host_to_device_*``, ``device_to_host_*``, and ``host_to_all_*``/``all_to_host_*``
  where every GPU copies at once): one row (the CPU), one column per GPU; ``gpu`` = the column.
- ``device_to_device_memcpy_{read,write}_{ce,sm}``: a GPU x GPU matrix, ``gpu`` = the row,
  ``peer_gpu`` = the column, direction ``d2d``, peer access on (nvbandwidth measures only pairs that
  can enable it). Which GPU the bytes leave differs: in a *write* testcase the row GPU copies its
  memory into the column GPU's (data row -> column); in a *read* testcase the row GPU's context
  copies the column GPU's memory into its own (data column -> row; the description's "GPU(row) ->
  GPU(column)" names the initiator, not the data). The description of each result says which.
- ``device_local_copy``: one row, a column per GPU: a copy inside that GPU (``peer_gpu`` = ``gpu``).

Not imported: the bidirectional device-to-device testcases (nvbandwidth appends their read1/read2/
total matrices into one testcase, which the JSON does not tell apart), all_to_one/one_to_all, and
multinode testcases: they are skipped, not refused.
"""

from __future__ import annotations

from typing import Any, Optional

from gdrdiag.errors import UserInputError
from gdrdiag.importers.common import add, integer, number
from gdrdiag.model.imported_path import Flow, PathKind
from gdrdiag.model.params import ImportedMetrics, ImportedParams
from gdrdiag.model.path import Mover
from gdrdiag.model.results import BenchResult, SampleStats, Status
from gdrdiag.model.vocabulary import MemoryKind, Provider

_DIRECTIONS = {"host_to_device": "h2d", "device_to_host": "d2h", "host_to_all": "h2d", "all_to_host": "d2h"}
_D2D = {
    "device_to_device_memcpy_read_ce": "read",
    "device_to_device_memcpy_write_ce": "write",
    "device_to_device_memcpy_read_sm": "read",
    "device_to_device_memcpy_write_sm": "write",
}
# the path model's flow of each direction: the d2d testcases imported each copy one way
_FLOWS = {"h2d": Flow.H2D, "d2h": Flow.D2H, "d2d": Flow.PEER}
_DATA_FLOW = {
    "read": "the row GPU reads the column GPU's memory (data column -> row)",
    "write": "the row GPU writes into the column GPU's memory (data row -> column)",
}
MiB = 1 << 20


class NvbandwidthFormatError(UserInputError):
    """nvbandwidth JSON this importer cannot read."""


def _direction(name: str) -> Optional[str]:
    if name in _D2D or name == "device_local_copy":
        return "d2d"
    for prefix, d in _DIRECTIONS.items():
        if name.startswith(prefix):
            return d
    return None


def parse_json(data: Any, source: str = "", buffer_mib: Optional[int] = None) -> list[BenchResult]:
    """Results of an nvbandwidth ``-j`` document; ``buffer_mib`` when the JSON does not say (-b)."""
    root = data.get("nvbandwidth") if isinstance(data, dict) else None
    if not isinstance(root, dict) or not isinstance(root.get("testcases"), list):
        raise NvbandwidthFormatError("nvbandwidth JSON: expected {'nvbandwidth': {'testcases': [...]}}")
    size_mib = buffer_mib or _size_mib(root.get("bufferSize"))
    out: list[BenchResult] = []
    for tc in root["testcases"]:
        if not isinstance(tc, dict) or not isinstance(tc.get("name"), str):
            raise NvbandwidthFormatError("nvbandwidth JSON: a testcase without a name (truncated?)")
        name = tc["name"][:100]
        direction = _direction(name)
        if direction is None:
            continue
        size = (size_mib or _size_mib(tc.get("bufferSize")) or 0) * MiB or None
        status = tc.get("status") if isinstance(tc.get("status"), str) else ""
        status = status[:40]
        base = ImportedParams(
            tool=Provider.NVBANDWIDTH.value,
            test=name,
            direction=direction,
            memory=MemoryKind.DEVICE if direction == "d2d" else MemoryKind.PINNED,
            size_bytes=size,
            source_file=source or None,
            # nvbandwidth README, "Test Details": a bidirectional host testcase times one direction
            # while the other direction's copy runs (https://github.com/NVIDIA/nvbandwidth)
            reverse_load=True if direction != "d2d" and "_bidirectional_" in name else None,
            path_kind=PathKind.GPU_GPU if direction == "d2d" else PathKind.HOST_GPU,
            # the testcase's suffix says what copies: _ce the copy engine, _sm a kernel
            mover=Mover.SM if name.endswith("_sm") else Mover.COPY_ENGINE,
            flow=_FLOWS[direction],
        )
        key = f"nvbandwidth_{name}"
        if status != "Passed":
            error = tc.get("error") if isinstance(tc.get("error"), str) else ""
            why = f"nvbandwidth status {status or 'missing'}: {error[:300]}".strip(": ")
            maker = BenchResult.error if status in ("Error", "") else BenchResult.waived
            add(out, maker(key, why, params=base, provider=Provider.NVBANDWIDTH.value))
            continue
        matrix = tc.get("bandwidth_matrix")
        if not isinstance(matrix, list) or not matrix or not all(isinstance(row, list) for row in matrix):
            raise NvbandwidthFormatError(
                f"nvbandwidth JSON: testcase {name!r} passed without a bandwidth_matrix"
            )
        matrix_sum = _sum(tc.get("sum"), name)
        described = tc.get("bandwidth_description")
        described = described[:200] if isinstance(described, str) else name
        if name in _D2D:
            described += f"; {_DATA_FLOW[_D2D[name]]}"
        rows = matrix if name in _D2D else matrix[:1]
        for row_i, row in enumerate(rows):
            for col, cell in enumerate(row):
                value = _cell(cell, name)
                if value is None:
                    continue
                add(out, _result(key, base, described, name, row_i, col, value, matrix_sum))
    if not out:
        raise NvbandwidthFormatError(
            "nvbandwidth JSON: no host<->device or device<->device testcase in this file"
        )
    return out


def _result(
    key: str,
    base: ImportedParams,
    described: str,
    name: str,
    row: int,
    col: int,
    value: float,
    matrix_sum: Optional[float],
) -> BenchResult:
    if name in _D2D:
        extra = {"gpu": row, "peer_gpu": col, "peer_access": True}
    elif name == "device_local_copy":
        extra = {"gpu": col, "peer_gpu": col}
    else:
        extra = {"gpu": col}
    params = ImportedParams(**{**base.__dict__, **extra})
    return BenchResult(
        key=key,
        status=Status.OK,
        description=described,
        params=params,
        unit="GB/s",
        samples=(value,),
        stats=SampleStats.of([value]),
        metrics=ImportedMetrics(matrix_sum=matrix_sum),
        provider=Provider.NVBANDWIDTH.value,
        verified=None,
        method="imported from nvbandwidth -j: the tool's median (or mean with -m) of its samples",
    )


def _cell(cell: Any, name: str) -> Optional[float]:
    if isinstance(cell, str) and cell.strip().upper() == "N/A":
        return None
    try:
        v = number(cell, f"nvbandwidth JSON: {name}: matrix cell")
    except UserInputError as exc:
        raise NvbandwidthFormatError(str(exc)) from None
    return v if v > 0 else None


def _sum(v: Any, name: str) -> Optional[float]:
    if v is None:
        return None
    try:
        return number(v, f"nvbandwidth JSON: {name}: sum")
    except UserInputError as exc:
        raise NvbandwidthFormatError(str(exc)) from None


def _size_mib(v: Any) -> Optional[int]:
    """Nvbandwidth's bufferSize (MiB), bounded so that the size in bytes fits a Report."""
    if v is None:
        return None
    try:
        mib = integer(v, "nvbandwidth JSON: bufferSize")
    except UserInputError as exc:
        raise NvbandwidthFormatError(str(exc)) from None
    if mib >= 1 << 40:
        raise NvbandwidthFormatError(f"nvbandwidth JSON: bufferSize {mib} MiB is out of range")
    return mib or None
