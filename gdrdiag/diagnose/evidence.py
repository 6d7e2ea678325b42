"""What the measurements in a Report say, whatever subset of them there is: the cause model's input.

Pure. Turns bench results (gdrdiag's own mr-bench rows and rows imported from perftest) into
``WriteRow`` records, and finds the one measured loss most causes are about: RDMA WRITE into GPU
memory trailing RDMA WRITE into host memory (``GdrGap``). Partial evidence is the normal case:

- RO off and on both measured -> the A/B says how much relaxed ordering recovers;
- only one RO state measured -> the gap is still computed, and the missing side is named;
- GPU and host rows at different sizes -> matched by nearest size, and the mismatch is stated.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Optional, Sequence

from gdrdiag.diagnose.thresholds import GPU_VS_HOST_SLOW
from gdrdiag.model.imported_path import PathKind
from gdrdiag.model.params import ImportedParams, MrParams
from gdrdiag.model.results import BenchResult, Status
from gdrdiag.model.vocabulary import MemoryKind, Provider
from gdrdiag.units import format_size

_HOST_KINDS = (MemoryKind.PINNED, MemoryKind.REGISTERED, MemoryKind.PAGEABLE, MemoryKind.PINNED_WC)
_GBPS_PER_UNIT = {"Gb/s": 1.0, "GB/s": 8.0}


@dataclass(frozen=True)
class WriteRow:
    """One measured RDMA bandwidth into GPU or host memory (mr-bench or an imported tool)."""

    key: str
    on_gpu: bool
    ro: Optional[bool]  # RO requested in the MR access flags; None when the tool did not say
    size_bytes: Optional[int]
    gbps: float
    reg_path: Optional[str]
    provider: str
    samples: int = 1  # runs behind the number (a posted or imported number is one)

    @property
    def label(self) -> str:
        """``key size=1 MiB ro=off = 84.3 Gb/s`` for evidence lines."""
        ro = "?" if self.ro is None else ("on" if self.ro else "off")
        size = format_size(self.size_bytes) if self.size_bytes else "?"
        return f"results[{self.key} size={size} ro={ro}] = {self.gbps:.1f} Gb/s ({self.provider})"


def _mr_row(r: BenchResult) -> Optional[WriteRow]:
    p = r.params
    if not isinstance(p, MrParams) or not r.key.startswith("rdma_write_"):
        return None
    if (p.mode or "bw") != "bw" or p.role == "server" or p.memory is None:
        return None
    if p.memory is MemoryKind.MANAGED:  # ibv_reg_mr on managed memory pins host pages (x86)
        return None
    on_gpu = p.landing == "gpu" if p.landing else p.memory is MemoryKind.DEVICE
    return WriteRow(
        r.key,
        on_gpu,
        p.relaxed_ordering,
        p.size_bytes,
        float(r.value or 0.0),
        str(p.reg_path) if p.reg_path else None,
        r.provider,
        len(r.samples) or 1,
    )


def _imported_row(r: BenchResult) -> Optional[WriteRow]:
    p = r.params
    if not isinstance(p, ImportedParams) or p.memory is None:
        return None
    if p.path_kind is not PathKind.NIC_DMA or r.unit not in _GBPS_PER_UNIT:
        return None
    ro = None if p.access is None else bool(p.access & p.access.RELAXED_ORDERING)
    return WriteRow(
        r.key,
        p.memory is MemoryKind.DEVICE,
        ro,
        p.size_bytes,
        float(r.value or 0.0) * _GBPS_PER_UNIT[r.unit],
        str(p.reg_path) if p.reg_path else None,
        r.provider,
    )


def write_rows(results: Iterable[BenchResult]) -> list[WriteRow]:
    """Every OK RDMA bandwidth row, GPU or host landing, as a ``WriteRow``.

    Soft-provider rows never judge (a memcpy says nothing about PCIe); fixture rows are kept so that
    constructed Reports exercise the rules, and are labelled with their provider in the evidence.
    diagnose reads them once per call (``Context.write_rows``); rules take them from there.
    """
    rows = []
    for r in results:
        if r.status is not Status.OK or not r.value or r.provider == Provider.SOFT.value:
            continue
        row = _mr_row(r) or _imported_row(r)
        if row is not None:
            rows.append(row)
    return rows


@dataclass(frozen=True)
class GdrGap:
    """GPU-memory RDMA WRITE against host memory, with whatever RO states were measured.

    ``off``/``on`` are the GPU rows registered without/with IBV_ACCESS_RELAXED_ORDERING (either may
    be missing); ``unknown_ro`` a GPU row whose tool did not say. ``host`` is the reference row.
    """

    off: Optional[WriteRow]
    on: Optional[WriteRow]
    unknown_ro: Optional[WriteRow]
    host: WriteRow
    size_note: Optional[str]

    @property
    def baseline(self) -> WriteRow:
        """The GPU row the loss is measured on: RO off when measured (what an app without RO gets)."""
        return self.off or self.unknown_ro or self.on  # type: ignore[return-value]

    @property
    def best(self) -> WriteRow:
        """The fastest GPU row measured."""
        rows = [r for r in (self.off, self.on, self.unknown_ro) if r is not None]
        return max(rows, key=lambda r: r.gbps)

    @property
    def ratio(self) -> float:
        """Baseline / host: the fraction of host-memory bandwidth the GPU path delivers."""
        return self.baseline.gbps / self.host.gbps

    @property
    def loss(self) -> float:
        """1 - ratio, at least 0: the measured loss every GDR cause competes to explain."""
        return max(0.0, 1.0 - self.ratio)

    @property
    def ro_recovered(self) -> Optional[float]:
        """Fraction of the loss RO recovered in a measured A/B (None without both sides)."""
        if self.off is None or self.on is None or self.host.gbps <= self.off.gbps:
            return None
        return max(0.0, min(1.0, (self.on.gbps - self.off.gbps) / (self.host.gbps - self.off.gbps)))

    @property
    def remaining(self) -> float:
        """Share of the loss still there at the best GPU row (0..1)."""
        lost = self.host.gbps - self.baseline.gbps
        if lost <= 0:
            return 0.0
        return max(0.0, min(1.0, (self.host.gbps - self.best.gbps) / lost))

    @property
    def slow(self) -> bool:
        """True when the best GPU row (or the baseline when only one exists) trails host memory."""
        return self.baseline.gbps < GPU_VS_HOST_SLOW * self.host.gbps

    def evidence(self) -> list[str]:
        """The rows and ratios, one line each, with the size mismatch when there is one."""
        out = [r.label for r in (self.off, self.on, self.unknown_ro) if r is not None]
        out.append(f"host reference {self.host.label}")
        out.append(
            f"GPU/host = {self.ratio:.0%}"
            + (
                f" (best GPU row {self.best.gbps / self.host.gbps:.0%})"
                if self.best is not self.baseline
                else ""
            )
        )
        if self.size_note:
            out.append(self.size_note)
        return out


def _nearest(rows: Sequence[WriteRow], size: Optional[int]) -> Optional[WriteRow]:
    if not rows:
        return None
    if size is None:
        return max(rows, key=lambda r: r.size_bytes or 0)
    return min(rows, key=lambda r: (abs((r.size_bytes or 0) - size), -(r.size_bytes or 0)))


def gdr_gaps(rows: Sequence[WriteRow], model_reference: Optional[WriteRow] = None) -> list[GdrGap]:
    """One gap per GPU registration path that has a host reference, from a Report's ``write_rows``.

    ``model_reference`` stands in for the host-memory row when the Report has none: what the path
    model (:mod:`gdrdiag.pathmodel.judge`) says the GPU rows' own path allows (NIC port, NIC and GPU links).
    """
    host_rows = [r for r in rows if not r.on_gpu and r.ro is not True] or [r for r in rows if not r.on_gpu]
    if not host_rows and model_reference is not None:
        host_rows = [model_reference]
    gpu_rows = [r for r in rows if r.on_gpu]
    out = []
    for path in sorted({r.reg_path or "" for r in gpu_rows}):
        mine = [r for r in gpu_rows if (r.reg_path or "") == path]
        size = max((r.size_bytes or 0 for r in mine), default=0) or None
        at_size = [r for r in mine if r.size_bytes == size] or mine
        off = _nearest([r for r in at_size if r.ro is False], size)
        on = _nearest([r for r in at_size if r.ro is True], size)
        unknown = _nearest([r for r in at_size if r.ro is None], size)
        host = _nearest(host_rows, size)
        if host is None or host.gbps <= 0:
            continue
        note = None
        if size and host.size_bytes and host.size_bytes != size:
            note = (
                f"size mismatch: GPU rows at {format_size(size)} matched with the nearest host row at "
                f"{format_size(host.size_bytes)}; measure both at one size to remove message-size effects"
            )
        out.append(GdrGap(off, on, unknown, host, note))
    return out


def gpu_rows_without_host(rows: Sequence[WriteRow]) -> list[WriteRow]:
    """The GPU rows among a Report's ``write_rows`` when none of them is a host-memory row."""
    return [r for r in rows if r.on_gpu] if not any(not r.on_gpu for r in rows) else []
