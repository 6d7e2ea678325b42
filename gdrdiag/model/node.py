"""A node's GPUs compared: the cases measured on several GPUs, the GPU below its siblings, each GPU's part.

Built by :mod:`gdrdiag.diagnose.node_rules` (which GPU ran each row, which is below its siblings) and
read by the renderers (the GPUs side by side) and the per-GPU verdicts, so they never disagree.
"""

from __future__ import annotations

from dataclasses import dataclass

from gdrdiag.model.path import Judgement
from gdrdiag.model.results import BenchResult


@dataclass(frozen=True)
class SiblingRow:
    """One case measured on several GPUs of the node: the row index of each GPU's result."""

    label: str  # the case identity without the GPU (``copy_h2d_pinned size_bytes=268435456 ...``)
    unit: str
    by_gpu: tuple[tuple[int, int], ...]  # (CUDA ordinal, index into report.results), by ordinal


@dataclass(frozen=True)
class GpuOutlier:
    """One GPU below its siblings at one case, by more than the run's noise."""

    gpu: int
    index: int  # its row in report.results
    label: str
    unit: str
    value: float
    siblings_median: float
    tolerance: float  # the share below the median that counts as an outlier in this group

    @property
    def share(self) -> float:
        """The GPU's value as a share of its siblings' median."""
        return self.value / self.siblings_median


@dataclass(frozen=True)
class GpuShare:
    """One GPU's part of a multi-GPU Report: its results and their judgements, indexed within the part."""

    gpu: int
    address: str  # the GPU's PCI address from the machine facts ("" when unknown)
    results: tuple[BenchResult, ...]
    judgements: tuple[Judgement, ...]
