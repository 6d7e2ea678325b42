"""A library's GPU-to-GPU row against its GPUs' peer path: what NCCL's and UCX's cause rules share.

Both rules hold a row that a library moved between GPUs of one host (an NCCL collective's busbw, a
ucx_perftest message stream) to the peer path the GPUs have, then read the library's own facts
(NCCL's INFO log, UCX's protocol tables) for why it fell short. A log that names the route gives a
:meth:`PeerShortfall.cause`; an output without one gives :func:`measure_finding`: the hypotheses
that fit and the one rerun that tells them apart.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Generic, Sequence, TypeVar

from gdrdiag.diagnose.causes import Cause
from gdrdiag.model.findings import Finding, Severity
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

    def cause(self, code: str, title: str, why: str, fix: str, check: str) -> Cause:
        """The cause the library's own log names for this row's loss.

        Inferred: the log says what the library did, not how much each choice cost.
        """
        return Cause(
            code,
            title,
            strength=0.9,
            explains=0.9,
            basis="inferred",
            loss=max(0.0, 1.0 - self.share),
            evidence_for=(self.evidence(), why),
            evidence_against=(),
            fix=fix,
            next_step=check,
            subject=self.judgement.key,
        )


def measure_finding(
    partial: Sequence[PeerShortfall[Facts]],
    code: str,
    missing: str,
    hypotheses: str,
    advice: str,
    next_step: str,
) -> list[Finding]:
    """One WARN for the worst row whose output lacks the log that would name its cause.

    ``missing`` says what the output lacks ("no NCCL INFO log"), ``hypotheses`` the causes that fit
    the loss, ``advice`` and ``next_step`` the one rerun that tells them apart.
    """
    if not partial:
        return []
    worst = min(partial, key=lambda s: s.share)
    return [
        Finding(
            code=code,
            severity=Severity.WARN,
            title=f"{worst.judgement.label} is {worst.share:.0%} of its GPUs' peer path and the output has "
            f"{missing}",
            evidence=(worst.evidence(), f"hypotheses that fit: {hypotheses}"),
            advice=advice,
            subject=worst.judgement.key,
            next_step=next_step,
        )
    ]
