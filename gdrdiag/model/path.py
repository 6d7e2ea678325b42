"""The path model's vocabulary: where a row's bytes came from and went, and what was expected.

What moved them, and what the model expected of that path at that size.

Plain data (the logic is :mod:`gdrdiag.pathmodel.judge`): diagnose reads ``Judgement``s to find losses, render
prints ``measured / expected`` beside each row. Every numeric row of a Report gets exactly one
``Judgement``: a ratio to its expectation, or the reason it has none.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Optional

from gdrdiag.model.vocabulary import MemoryKind


class Place(str, enum.Enum):
    """Where memory lives on the path."""

    HOST = "host"  # host DRAM (a NUMA node when known)
    GPU = "gpu"  # GPU memory (a CUDA ordinal when known)
    REMOTE = "remote"  # the far side of an RDMA or NCCL transfer (another host or GPU)


class Mover(str, enum.Enum):
    """What moves the bytes: each has its own per-operation cost and its own efficiency."""

    COPY_ENGINE = "copy-engine"  # cudaMemcpy*, nvbandwidth *_ce
    SM = "sm"  # kernels reading/writing over PCIe or NVLink (zero-copy, *_sm)
    NIC_DMA = "nic-dma"  # RDMA WRITE/READ/SEND: the NIC's DMA engine
    COLLECTIVE = "collective"  # NCCL: a mix of the above, judged by bus bandwidth


class Verdict(str, enum.Enum):
    """What the ratio to the expectation says."""

    OK = "ok"  # at least SLOW_BELOW of the expectation
    SLOW = "slow"  # below SLOW_BELOW: a loss some cause must explain
    LOST = "lost"  # below LOST_BELOW: more than half the path's bandwidth is missing
    BASELINE = "baseline"  # a rung built to be slow (gather-bench's byte, vec16, bulk, ...): never a loss
    UNJUDGED = "unjudged"  # no expectation: ``reason`` says why


# A row at or above this fraction of its path's expectation is healthy; below LOST_BELOW more than
# half is gone. Healthy hosts reach 94-97% of the PCIe model for large copies (docs/diagnosis.md);
# 0.8 leaves room for run-to-run noise and for models that are a few % optimistic.
SLOW_BELOW = 0.80
LOST_BELOW = 0.50


@dataclass(frozen=True)
class Endpoint:
    """One end of a path: where the memory is and what kind it is."""

    place: Place
    index: Optional[int] = None  # GPU ordinal, or NUMA node for host memory
    memory: Optional[MemoryKind] = None

    @property
    def label(self) -> str:
        """``gpu0``, ``host(pageable)``, ``remote``."""
        where = f"{self.place.value}{'' if self.index is None else self.index}"
        return f"{where}({self.memory.value})" if self.memory is not None else where


@dataclass(frozen=True)
class Bound:
    """One link on the path and the payload rate it allows (GB/s), after protocol efficiency."""

    name: str  # "GPU 0000:1b:00.0 PCIe 32 GT/s x16 (capable)", "NIC mlx5_0 port 400 Gb/s"
    gbytes_per_s: float
    source: str  # where the number comes from: the fact and the model applied to it
    pcie_raw_gbytes_per_s: Optional[float] = None  # set when the bound is a PCIe link: its raw rate
    on_nic: bool = False  # the bound is the NIC's (its port or its own PCIe link)


@dataclass(frozen=True)
class Judgement:
    """One numeric row of a Report against what its path allows at its size.

    ``index`` is the row's position in ``report.results``. ``expected_gbytes_per_s`` is the
    narrowest bound times the mover's efficiency, lowered by the mover's per-operation cost at
    ``size_bytes`` (``per_op_us``, fitted from the Report's own sweep when it has one). ``bound`` names
    the link that set it; ``trained`` is the same path with every link as trained (None when no link
    was read under load or trained equals capable). A row without an expectation says why in ``reason``.
    """

    index: int
    key: str
    label: str
    verdict: Verdict
    measured_gbytes_per_s: Optional[float] = None
    expected_gbytes_per_s: Optional[float] = None
    peak_gbytes_per_s: Optional[float] = None  # what the path allows at large sizes (no per-op cost)
    ratio: Optional[float] = None
    bound: Optional[str] = None
    bound_pcie_raw_gbytes_per_s: Optional[float] = None  # the bound is a PCIe link of this raw rate
    bound_on_nic: bool = False  # the bound is the NIC's port or its own PCIe link
    per_op_us: Optional[float] = None
    per_op_source: Optional[str] = None
    trained_gbytes_per_s: Optional[float] = None
    source: Optional[Endpoint] = None
    destination: Optional[Endpoint] = None
    mover: Optional[Mover] = None
    size_bytes: Optional[int] = None
    reason: Optional[str] = None

    @property
    def is_loss(self) -> bool:
        """True when the row is a measured loss (slow or lost against its own path)."""
        return self.verdict in (Verdict.SLOW, Verdict.LOST)

    @property
    def loss(self) -> float:
        """1 - ratio (0 when judged healthy or not judged)."""
        return max(0.0, 1.0 - self.ratio) if self.ratio is not None and self.is_loss else 0.0
