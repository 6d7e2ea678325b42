"""What ``gdrdiag compare`` found: plain data that crosses from compare.py to render/ and cli/.

``compare.compare`` builds a :class:`Comparison` from two Reports; the renderers only read it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from gdrdiag.model.case import CaseId, Scalar
from gdrdiag.model.findings import Finding

# A delta is "large" when b/a leaves [1 - LARGE, 1 + LARGE].
LARGE_DELTA = 0.10


@dataclass(frozen=True)
class CaseDelta:
    """One case and its outcome in each report (a side that lacks it is None).

    ``ratio`` is b/a and exists only when both sides measured the case with the same provider.
    ``not_comparable`` says why a row has no ratio although both sides have numbers (another
    provider); ``settings`` lists run settings that differ (shown, never used to split cases).
    """

    case: CaseId
    unit: str
    a_value: Optional[float]
    b_value: Optional[float]
    a_status: Optional[str]
    b_status: Optional[str]
    ratio: Optional[float]
    a_reason: Optional[str] = None
    b_reason: Optional[str] = None
    a_provider: Optional[str] = None
    b_provider: Optional[str] = None
    not_comparable: Optional[str] = None
    settings: tuple[str, ...] = ()

    @property
    def key(self) -> str:
        """The case key (``rdma_write_device_mr``)."""
        return self.case.key

    @property
    def params(self) -> dict[str, Scalar]:
        """The physics parameters of the case."""
        return dict(self.case.physics)

    @property
    def hardware(self) -> bool:
        """False when either side's number came from the soft provider or a fixture."""
        return self.case.provider is not None and self.case.provider.is_hardware

    @property
    def large(self) -> bool:
        """True when the second side differs from the first by more than LARGE_DELTA."""
        return self.ratio is not None and abs(self.ratio - 1.0) > LARGE_DELTA


@dataclass(frozen=True)
class MachineDelta:
    """One machine fact that differs, and why it matters for the data paths."""

    fact: str
    a: str
    b: str
    why: str


@dataclass(frozen=True)
class Explanation:
    """A ranked cause for one large delta, with the evidence on each side."""

    case: str
    rank: int
    cause: str
    evidence_a: str
    evidence_b: str


@dataclass(frozen=True)
class PeerPairDelta:
    """One ordered GPU pair on each side: path class, peer access, NVLinks (from MachineInfo.peers).

    Pairs are matched by CUDA ordinals (``GPU0->GPU1``). A side without the pair says why (``no
    pair: 1 GPU``, ``unknown: no machine facts``); ``differs`` is True when any of the four facts
    differs between the sides.
    """

    pair: str
    a_path: str
    b_path: str
    a_access: str
    b_access: str
    a_nvlinks: str
    b_nvlinks: str
    a_rate: str
    b_rate: str
    differs: bool


@dataclass(frozen=True)
class Comparison:
    """Everything ``gdrdiag compare`` shows."""

    a_label: str
    b_label: str
    cases: tuple[CaseDelta, ...]
    machine: tuple[MachineDelta, ...]
    findings_only_a: tuple[Finding, ...]
    findings_only_b: tuple[Finding, ...]
    explanations: tuple[Explanation, ...]
    leading_cause: Optional[str] = None  # the second Report's leading finding the first lacks
    peers: tuple[PeerPairDelta, ...] = ()  # the GPU peer matrix side by side (empty: no pairs either side)
