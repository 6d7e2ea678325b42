r"""CUDA samples ``p2pBandwidthLatencyTest`` text output -> BenchResults. Pure.

The format, from the sample's source (cuda-samples p2pBandwidthLatencyTest.cu): ``Device: 0, NVIDIA
H100 80GB HBM3, pciBusID: 18, ...`` lines, ``Device=0 CAN Access Peer Device=1`` (or ``CANNOT``) lines, a
``P2P Connectivity Matrix`` (not imported: the CAN/CANNOT lines say the same), then matrices, each
under a title line and a ``D\D 0 1 ...`` header, rows ``i  v(i,0) v(i,1) ...`` (``%6.02f``):

- ``Unidirectional P2P=Disabled Bandwidth Matrix (GB/s)``, ``Unidirectional P2P=Enabled Bandwidth
  (P2P Writes) Matrix (GB/s)`` (older samples: ``... P2P=Enabled Bandwidth Matrix (GB/s)``) and, with
  ``--p2p_read``, ``... (P2P Reads) Matrix (GB/s)``;
- ``Bidirectional P2P=Disabled/Enabled Bandwidth Matrix (GB/s)``;
- ``P2P=Disabled Latency Matrix (us)``, ``P2P=Enabled Latency (P2P Writes) Matrix (us)`` (and Reads):
  two tables each, ``GPU`` (event-timed) then ``CPU`` (host time to issue the copies).

Each cell becomes one result: ``gpu`` = the row, ``peer_gpu`` = the column, direction ``d2d``, the unit
the title names (``GB/s``, or ``us`` for the latency tables: a latency is never a bandwidth). The
row is the source in the write (and P2P=Disabled) matrices (``cudaMemcpyPeerAsync`` from row to
column on the row's stream); in the *read* matrices the row GPU pulls the column GPU's memory (data
column -> row). Diagonal cells are copies inside one GPU (``peer_gpu == gpu``; the sample counts their
bytes twice). ``peer_access`` is whether peer access was in effect: P2P=Enabled and the pair CAN
access (a CANNOT pair falls back to a copy through host memory, as the sample says); None on the
diagonal. ``can_access_peer`` is the pair's own CAN/CANNOT line, a fact even without a bundle.

The P2P=Disabled matrices are a baseline by design: the sample measures every pair with peer access
off beside on (as ``gdrdiag peer-bench`` does), so their rows carry ``baseline`` (why they are slow)
and the path model never counts them as a loss. ``device_name`` and ``gpu_bdf`` are the row GPU's
``Device:`` line (name, and ``pciDomainID:pciBusID:pciDeviceID.0``), which ``gdrdiag import`` checks
against the bundle's GPUs (:func:`devices`). The key names the matrix
(``p2p_unidirectional_enabled``), so the same pair in two matrices are two cases. Bandwidth copies
are ``--numElems`` x 4 bytes (40,000,000 x 4 by default, not printed: ``size_bytes`` stays unknown);
latency copies are one int4 (16 bytes), unit ``us``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional

from gdrdiag.errors import UserInputError
from gdrdiag.importers.common import add, number
from gdrdiag.model.imported_path import Flow, PathKind
from gdrdiag.model.params import ImportedMetrics, ImportedParams
from gdrdiag.model.path import Mover
from gdrdiag.model.results import BenchResult, SampleStats, Status
from gdrdiag.model.vocabulary import MemoryKind, Provider

MAX_LINE = 4096  # a 64-GPU matrix row is about 450 characters
MAX_GPUS = 512
_TITLE = re.compile(
    r"[ \t]*(Unidirectional |Bidirectional |)P2P=(Enabled|Disabled) (Bandwidth|Latency)"
    r"(?: \(P2P (Writes|Reads)\))?(?: Bandwidth)? Matrix \((GB/s|us)\)[ \t]*"
)
_ACCESS = re.compile(r"[ \t]*Device=(\d{1,3}) (CAN|CANNOT) Access Peer Device=(\d{1,3})[ \t]*")
# printf("Device: %d, %s, pciBusID: %x, pciDeviceID: %x, pciDomainID:%x\n", ...) in the sample's main()
_DEVICE = re.compile(
    r"[ \t]*Device: (\d{1,3}), (.{1,200}?), pciBusID: ([0-9a-fA-F]{1,2}), pciDeviceID: ([0-9a-fA-F]{1,2}), "
    r"pciDomainID:([0-9a-fA-F]{1,4})[ \t]*"
)
STAGED_BY_DESIGN = (
    "P2P=Disabled: the sample measures every pair with peer access off (copies staged through host "
    "memory) beside P2P=Enabled, by design"
)
SAMPLE_TITLE = "P2P (Peer-to-Peer) GPU Bandwidth Latency Test"


class P2pTestFormatError(UserInputError):
    """p2pBandwidthLatencyTest output this importer cannot read."""


@dataclass(frozen=True)
class SampleDevice:
    """One ``Device: N, <name>, pciBusID: ...`` line: the GPU the sample calls ``N``."""

    ordinal: int
    name: str
    bdf: str  # domain:bus:device.0, as the sample's hex numbers give it


def devices(lines: list[str]) -> dict[int, SampleDevice]:
    """The GPUs the output's ``Device:`` lines name, by the sample's ordinal."""
    out: dict[int, SampleDevice] = {}
    for ln in lines:
        if len(ln) <= MAX_LINE and (m := _DEVICE.fullmatch(ln)):
            bus, dev, dom = (int(m.group(i), 16) for i in (3, 4, 5))
            out[int(m.group(1))] = SampleDevice(
                int(m.group(1)), m.group(2).strip(), f"{dom:04x}:{bus:02x}:{dev:02x}.0"
            )
    return out


def looks_like(lines: list[str]) -> bool:
    """True when these lines hold a p2pBandwidthLatencyTest matrix title or its banner."""
    return any(SAMPLE_TITLE in ln[:MAX_LINE] or _TITLE.fullmatch(ln[:MAX_LINE]) for ln in lines)


def parse_text(text: str, source: str = "") -> list[BenchResult]:
    """Results of one p2pBandwidthLatencyTest run: every cell of every matrix."""
    lines = [ln.rstrip("\r") for ln in text.splitlines()]
    access: dict[tuple[int, int], bool] = {}
    for ln in lines:
        if len(ln) <= MAX_LINE and (m := _ACCESS.fullmatch(ln)):
            access[(int(m.group(1)), int(m.group(3)))] = m.group(2) == "CAN"
    gpus = devices(lines)
    out: list[BenchResult] = []
    section: Optional[tuple[str, bool, str]] = None  # (test, enabled, unit)
    table = ""  # "", or the header word of the table being read: D\D, GPU, CPU
    columns: list[int] = []
    for ln in lines:
        if len(ln) > MAX_LINE:
            if table:
                raise P2pTestFormatError(
                    f"p2pBandwidthLatencyTest: a matrix row longer than {MAX_LINE} characters"
                )
            continue
        if m := _TITLE.fullmatch(ln):
            section, table = _section(m), ""
            continue
        if section is None:
            continue
        parts = ln.split()
        if not parts:
            continue
        if parts[0] in ("D\\D", "GPU", "CPU"):
            table = parts[0]
            columns = _columns(parts[1:], ln)
            continue
        if not table or not (parts[0].isascii() and parts[0].isdigit()):
            section, table = None, ""  # the matrix ended (the NOTE line, or another block)
            continue
        if len(parts) != len(columns) + 1:
            raise P2pTestFormatError(
                f"p2pBandwidthLatencyTest: row {ln.strip()[:60]!r} has {len(parts) - 1} cells "
                f"for {len(columns)} columns (truncated output?)"
            )
        row = int(parts[0][:4])
        for col, cell in zip(columns, parts[1:], strict=True):
            value = number(cell, "p2pBandwidthLatencyTest: matrix cell")
            add(out, _result(section, table, row, col, value, access, gpus.get(row), source))
    if not out:
        raise P2pTestFormatError(
            "p2pBandwidthLatencyTest: no bandwidth or latency matrix (truncated output?)"
        )
    return out


def _section(m: "re.Match[str]") -> tuple[str, bool, str]:
    way, enabled, what, rw, unit = m.groups()
    if what == "Latency":
        test = "latency"
    else:
        test = "bidirectional" if way.strip() == "Bidirectional" else "unidirectional"
    if rw == "Reads":
        test += "_read"
    return test, enabled == "Enabled", unit


def _columns(words: list[str], ln: str) -> list[int]:
    if (
        not words
        or len(words) > MAX_GPUS
        or not all(w.isascii() and w.isdigit() and len(w) < 4 for w in words)
    ):
        raise P2pTestFormatError(
            f"p2pBandwidthLatencyTest: matrix header {ln.strip()[:60]!r} is not GPU numbers"
        )
    return [int(w) for w in words]


def _result(
    section: tuple[str, bool, str],
    table: str,
    row: int,
    col: int,
    value: float,
    access: dict[tuple[int, int], bool],
    device: Optional[SampleDevice],
    source: str,
) -> BenchResult:
    test, enabled, unit = section
    if table == "CPU":
        test += "_cpu"
    local = row == col
    can = None if local else access.get((row, col))
    peer = None if local else (enabled and can is not False)
    latency = unit == "us"
    params = ImportedParams(
        tool=Provider.P2P_TEST.value,
        test=test,
        size_bytes=16 if latency else None,
        direction="d2d",
        memory=MemoryKind.DEVICE,
        gpu=row,
        peer_gpu=col,
        peer_access=peer,
        source_file=source or None,
        baseline=None if local or enabled else STAGED_BY_DESIGN,
        can_access_peer=can,
        device_name=device.name if device else None,
        gpu_bdf=device.bdf if device else None,
        # cudaMemcpyPeerAsync between the pair (the copy engine); the bidirectional matrices copy
        # both ways at once
        path_kind=PathKind.GPU_GPU,
        mover=Mover.COPY_ENGINE,
        flow=Flow.PEER_BIDIR if "bidirectional" in test.lower() else Flow.PEER,
    )
    if local:
        flow = f"copy inside GPU {row} (bytes counted twice)"
    elif test.startswith("latency") and test.endswith("_cpu"):
        flow = f"host time to issue a 16-byte copy between GPU {row} and GPU {col}"
    elif "_read" in test:
        flow = f"GPU {row} reads GPU {col}'s memory (data {col} -> {row})"
    else:
        flow = f"GPU {row} -> GPU {col}"
    if not local and enabled and peer is False:
        flow += "; this pair CANNOT access each other: the copy went through host memory"
    setting = "P2P=Enabled" if enabled else "P2P=Disabled"
    return BenchResult(
        key=f"p2p_{test}_{'enabled' if enabled else 'disabled'}",
        status=Status.OK,
        description=f"CUDA samples p2pBandwidthLatencyTest {test.replace('_', ' ')} {setting}: {flow}",
        params=params,
        unit=unit,
        samples=(value,),
        stats=SampleStats.of([value]),
        metrics=ImportedMetrics(latency_us=value) if latency else None,
        provider=Provider.P2P_TEST.value,
        verified=None,
        method="imported from CUDA samples p2pBandwidthLatencyTest: one timed batch of copies per cell",
    )
