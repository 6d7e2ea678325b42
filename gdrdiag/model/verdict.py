"""The verdict each bench leads with, as typed data: the few numbers that matter and the WAIVED count.

Derived from a bench's results by ``diagnose/verdicts.py``; printed by ``render/verdict.py``.
Units are in the field names (GB/s = 1e9 B/s for copies and gathers, Gb/s for RDMA); unknown
or not measured is ``None``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional


def _ratio(a: Optional[float], b: Optional[float]) -> Optional[float]:
    return a / b if a is not None and b else None


@dataclass(frozen=True)
class Waived:
    """Cases that could not run here: how many, and the first reason given."""

    count: int = 0
    reason: str = ""
    errors: int = 0


@dataclass(frozen=True)
class CopyVerdict:
    """copy-bench in a few numbers (GB/s = 1e9 B/s; None where not measured)."""

    size_bytes: Optional[int]
    h2d_gbps: Optional[float]
    d2h_gbps: Optional[float]
    model_gbps: Optional[float]  # what the path model expects of the H2D row (this GPU's PCIe link)
    pageable_h2d_gbps: Optional[float]
    waived: Waived
    pageable_d2h_gbps: Optional[float] = None
    bidir_gbps: Optional[float] = None  # pinned, H2D and D2H at once on two streams: both directions' bytes
    # The block sweep (host->device): the block size at which one copy call per block, and one
    # batched call (cuMemcpyBatchAsync), reach half the coalesced copy's rate; None: not reached
    # up to ``largest_block`` (or not measured, when that is None too).
    half_block_per_call: Optional[float] = None
    half_block_batched: Optional[float] = None
    largest_block: Optional[int] = None
    # What the path model expects of the D2H row: the GPU's link carries posted writes that way,
    # so it may differ from the H2D row's expectation (None: not judged against a PCIe link).
    d2h_model_gbps: Optional[float] = None

    @property
    def h2d_of_model(self) -> Optional[float]:
        return _ratio(self.h2d_gbps, self.model_gbps)

    @property
    def d2h_of_model(self) -> Optional[float]:
        return _ratio(self.d2h_gbps, self.d2h_model_gbps)

    @property
    def pageable_over_pinned(self) -> Optional[float]:
        return _ratio(self.pageable_h2d_gbps, self.h2d_gbps)

    @property
    def pageable_d2h_over_pinned(self) -> Optional[float]:
        return _ratio(self.pageable_d2h_gbps, self.d2h_gbps)

    @property
    def bidir_of_sum(self) -> Optional[float]:
        """Both ways at once over H2D + D2H measured alone: 1.0 when the two directions overlap fully."""
        if self.h2d_gbps is None or self.d2h_gbps is None:
            return None
        return _ratio(self.bidir_gbps, self.h2d_gbps + self.d2h_gbps)


@dataclass(frozen=True)
class GatherVerdict:
    """gather-bench in a few numbers: the ladder's best kernel against the copy engine and the model."""

    best_kernel: Optional[str]
    best_gbps: Optional[float]
    ce_gbps: Optional[float]
    best_ratio_to_ce: Optional[float]
    model_ratio_to_ce: Optional[float]  # the model's ceiling for this layout and kernel
    record_bytes: Optional[int]
    waived: Waived

    @property
    def best_of_model(self) -> Optional[float]:
        return _ratio(self.best_ratio_to_ce, self.model_ratio_to_ce)


@dataclass(frozen=True)
class MrBest:
    """The fastest RDMA WRITE into one memory kind."""

    memory: str
    reg_path: str
    size_bytes: Optional[int]
    gbps: float
    provider: str


@dataclass(frozen=True)
class RoRatio:
    """Relaxed ordering on/off, same buffers and QPs (from rdma_rules.ro_pairs)."""

    memory: str
    reg_path: str
    ratio: Optional[float]
    words: str


@dataclass(frozen=True)
class MrLatency:
    """Post -> completion latency of one WRITE into one memory kind (latency mode)."""

    memory: str
    reg_path: str
    size_bytes: Optional[int]
    p50_us: Optional[float]
    p99_us: Optional[float]
    provider: str


@dataclass(frozen=True)
class MrVerdict:
    """mr-bench in a few numbers: best write per memory kind, RO on/off where measured, latency."""

    best: tuple[MrBest, ...]
    ro: tuple[RoRatio, ...]
    software: bool  # numbers from the soft provider: never hardware numbers
    waived: Waived
    latency: tuple[MrLatency, ...] = ()
