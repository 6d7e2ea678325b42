"""A library's GPU-to-GPU row against its GPUs' peer path: what NCCL's and UCX's cause rules share.

Both rules hold a row that a library moved between GPUs of one host (an NCCL collective's busbw, a
ucx_perftest message stream) to the peer path the GPUs have, then read the library's own facts
(NCCL's INFO log, UCX's protocol tables) for why it fell short.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Generic, TypeVar

from gdrdiag.model.path import Judgement

Facts = TypeVar("Facts")


@dataclass(frozen=True)
class PeerShortfall(Generic[Facts]):
    """One row, its library's facts, and the GPUs' peer path it is held to."""

    judgement: Judgement
    facts: Facts
    peer_gbytes_per_s: float
    peer_bound: str  # the peer path in words
    measured_as: str = ""  # what the number is, when not plain GB/s ("busbw")

    @property
    def share(self) -> float:
        """Measured over the peer path."""
        return (self.judgement.measured_gbytes_per_s or 0.0) / self.peer_gbytes_per_s

    def evidence(self) -> str:
        """One evidence line: the row, its rate, and its share of the peer path."""
        j = self.judgement
        unit = f"GB/s {self.measured_as}".rstrip()
        return (
            f"results[{j.index}] {j.label} = {j.measured_gbytes_per_s or 0:.2f} {unit} = {self.share:.0%} of "
            f"{self.peer_gbytes_per_s:.2f} GB/s over the GPUs' peer path ({self.peer_bound})"
        )
