"""CUDA samples ``bandwidthTest`` text output -> BenchResults. Pure.

The format, from the sample's ``printResultsReadable``/``printResultsCSV`` (cuda-samples
Samples/1_Utilities/bandwidthTest/bandwidthTest.cu)::

     Device 0: NVIDIA H100 80GB HBM3
     Quick Mode

     Host to Device Bandwidth, 1 Device(s)
     PINNED Memory Transfers
       Transfer Size (Bytes)	Bandwidth(GB/s)
       32000000			53.4

One block per direction (``Host to Device``, ``Device to Host``, ``Device to Device``) with one row per
size: one row in quick mode, many with ``--mode=range`` or ``--mode=shmoo``. ``--csv`` prints
``bandwidthTest-H2D-Pinned, Bandwidth = 53.4 GB/s, Time = 0.00060 s, Size = 32000000 bytes,
NumDevsUsed = 1`` lines instead; both are read.

Units: the current sample prints ``Bandwidth(GB/s)`` with GB = 1e9 bytes (``memSize * iterations /
1e9 / seconds``) and a quick-mode size of 32e6 bytes. Older samples (CUDA 10 and before) print
``Bandwidth(MB/s)`` computed as ``1e3 * memSize * iterations / (ms * (1 << 20))``: MB there is
2^20 bytes (MiB/s), and the quick-mode size is 32 MiB (33554432). Both become GB/s (1e9 B/s); the sizes
are taken from the rows as printed.

Each row: ``direction`` h2d/d2h/d2d, ``memory`` pinned (``pinned-wc`` with ``--wc``) or pageable from the
``PINNED/PAGEABLE Memory Transfers`` line (device memory for device-to-device, where the sample prints
the host mode although no host memory is involved), ``gpu`` the one device listed under "Running on"
(None with ``--device=all``, where the sample adds the devices' bandwidths). The sample counts a
device-to-device copy's bytes twice (read and write), as its source says; the description repeats it.
"""

from __future__ import annotations

import re
from typing import Optional

from gdrdiag.errors import UserInputError
from gdrdiag.importers.common import add, integer, number
from gdrdiag.model.imported_path import Flow, PathKind
from gdrdiag.model.params import ImportedParams
from gdrdiag.model.path import Mover
from gdrdiag.model.results import BenchResult, SampleStats, Status
from gdrdiag.model.vocabulary import MemoryKind, Provider

MIB_TO_GB = (1 << 20) / 1e9  # old samples' MB/s is 2^20 B/s
MAX_LINE = 256
_KINDS = {"host to device": "h2d", "device to host": "d2h", "device to device": "d2d"}
_CSV_KINDS = {"H2D": "h2d", "D2H": "d2h", "D2D": "d2d"}
_BLOCK = re.compile(
    r"[ \t]*(Host to Device|Device to Host|Device to Device) Bandwidth, (\d{1,4}) Device\(s\)[ \t]*"
)
_MODE = re.compile(r"[ \t]*(PINNED|PAGEABLE) Memory Transfers[ \t]*")
_TABLE = re.compile(r".*Transfer Size \(Bytes\)\s+Bandwidth\((GB/s|MB/s)\)[ \t]*")
_DEVICE = re.compile(r"[ \t]*Device (\d{1,4}): .*")
_CSV = re.compile(
    r"bandwidthTest-(H2D|D2H|D2D)(-Paged|-Pinned)?(-WriteCombined)?, "
    r"Bandwidth = ([0-9.eE+-]{1,30}) (GB/s|MB/s), "
    r"Time = [0-9.eE+-]{1,30} s, Size = (\d{1,20}) bytes, NumDevsUsed = (\d{1,4})[ \t]*"
)
SAMPLE_TITLE = "[CUDA Bandwidth Test]"


class BandwidthTestFormatError(UserInputError):
    """bandwidthTest output this importer cannot read."""


def looks_like(lines: list[str]) -> bool:
    """True when these lines hold a bandwidthTest result block or CSV line."""
    return any(
        ln.startswith(SAMPLE_TITLE) or _BLOCK.fullmatch(ln[:MAX_LINE]) or _CSV.fullmatch(ln[:MAX_LINE])
        for ln in lines
    )


def parse_text(text: str, source: str = "") -> list[BenchResult]:
    """Results of one bandwidthTest run (every direction and size it printed)."""
    lines = [ln[: MAX_LINE + 1].rstrip("\r") for ln in text.splitlines()]
    devices = [int(m.group(1)) for ln in lines if (m := _DEVICE.fullmatch(ln))]
    out: list[BenchResult] = []
    kind: Optional[str] = None
    n_devs = 1
    mode, wc, unit = "PINNED", False, None
    for ln in lines:
        if len(ln) > MAX_LINE:
            continue
        if m := _CSV.fullmatch(ln.strip()):
            direction = _CSV_KINDS[m.group(1)]
            memory = "PAGEABLE" if m.group(2) == "-Paged" else "PINNED"
            add(
                out,
                _result(
                    direction,
                    memory,
                    bool(m.group(3)),
                    integer(m.group(6), "bandwidthTest: Size"),
                    number(m.group(4), "bandwidthTest: Bandwidth"),
                    m.group(5),
                    integer(m.group(7), "bandwidthTest: NumDevsUsed"),
                    devices,
                    source,
                ),
            )
            continue
        if m := _BLOCK.fullmatch(ln):
            kind, n_devs, mode, wc, unit = _KINDS[m.group(1).lower()], int(m.group(2)), "PINNED", False, None
            continue
        if kind is None:
            continue
        if m := _MODE.fullmatch(ln):
            mode = m.group(1)
            continue
        if "Write-Combined Memory Writes are Enabled" in ln:
            wc = True  # printed without a newline: the table header follows on the same line
        if m := _TABLE.fullmatch(ln):
            unit = m.group(1)
            continue
        parts = ln.split()
        if unit is None or not parts:
            if unit is not None and out:
                kind, unit = None, None  # a blank line ends the block
            continue
        if len(parts) != 2 or not (parts[0].isascii() and parts[0].isdigit()):
            raise BandwidthTestFormatError(
                f"bandwidthTest: row {ln.strip()[:60]!r} is not 'size bandwidth' (truncated output?)"
            )
        size = integer(parts[0], "bandwidthTest: Transfer Size")
        value = number(parts[1], "bandwidthTest: Bandwidth")
        add(out, _result(kind, mode, wc, size, value, unit, n_devs, devices, source))
    if not out:
        raise BandwidthTestFormatError(
            "bandwidthTest: no 'Transfer Size (Bytes) Bandwidth' row (truncated output, or --help?)"
        )
    return out


def _result(
    direction: str,
    mode: str,
    wc: bool,
    size: int,
    value: float,
    unit: str,
    n_devs: int,
    devices: list[int],
    source: str,
) -> BenchResult:
    if direction == "d2d":
        memory = MemoryKind.DEVICE
    elif mode == "PAGEABLE":
        memory = MemoryKind.PAGEABLE
    else:
        memory = MemoryKind.PINNED_WC if wc else MemoryKind.PINNED
    gpu = devices[0] if n_devs == 1 and len(devices) == 1 else None
    gbs = round(value * MIB_TO_GB, 4) if unit == "MB/s" else value
    params = ImportedParams(
        tool=Provider.BANDWIDTH_TEST.value,
        test="bandwidthTest",
        size_bytes=size,
        direction=direction,
        memory=memory,
        gpu=gpu,
        source_file=source or None,
        devices_summed=n_devs if n_devs > 1 else None,
        # cudaMemcpy between host and device, or within one device (--dtod): the copy engine
        path_kind=PathKind.GPU_GPU if direction == "d2d" else PathKind.HOST_GPU,
        mover=Mover.COPY_ENGINE,
        flow={"h2d": Flow.H2D, "d2h": Flow.D2H, "d2d": Flow.PEER}[direction],
    )
    words = {"h2d": "host to device", "d2h": "device to host", "d2d": "device to device"}[direction]
    notes = []
    if direction == "d2d":
        notes.append("the sample counts each byte twice (read and write)")
    if n_devs > 1:
        notes.append(f"the sum over {n_devs} devices (--device=all)")
    return BenchResult(
        key=f"bandwidthTest_{direction}",
        status=Status.OK,
        description=f"CUDA samples bandwidthTest {words}, {memory.value} memory"
        + (f" ({'; '.join(notes)})" if notes else ""),
        params=params,
        unit="GB/s",
        samples=(gbs,),
        stats=SampleStats.of([gbs]),
        provider=Provider.BANDWIDTH_TEST.value,
        verified=None,
        method=(
            "imported from CUDA samples bandwidthTest: bytes x 100 copies / elapsed time"
            + (", converted from the old sample's MB/s (2^20 B/s) to GB/s" if unit == "MB/s" else "")
        ),
    )
