"""Benchmark results: one ``BenchResult`` per measured case, with every sample kept."""

from __future__ import annotations

import enum
import statistics
from dataclasses import dataclass, field
from typing import Optional, Union

Scalar = Union[str, int, float, bool, None]


class Status(str, enum.Enum):
    """Outcome of a case: OK (measured and verified), WAIVED (not applicable here), ERROR."""

    OK = "OK"
    WAIVED = "WAIVED"
    ERROR = "ERROR"


@dataclass(frozen=True)
class SampleStats:
    """Summary of the kept samples, computed once in ``bench/`` (renderers compute nothing)."""

    n: int
    median: float
    minimum: float
    maximum: float
    mean: float
    stdev: float

    @classmethod
    def of(cls, samples: "list[float] | tuple[float, ...]") -> "SampleStats":
        """Summarise a non-empty list of samples."""
        xs = list(samples)
        if not xs:
            raise ValueError("no samples")
        return cls(
            n=len(xs),
            median=statistics.median(xs),
            minimum=min(xs),
            maximum=max(xs),
            mean=statistics.fmean(xs),
            stdev=statistics.stdev(xs) if len(xs) > 1 else 0.0,
        )


@dataclass(frozen=True)
class BenchResult:
    """One measured case.

    ``key`` names the case (``copy_h2d_pinned``); ``params`` are the knobs that distinguish two
    results of the same key (size, memory kind, ...), and together they identify a result when
    two Reports are compared. ``samples`` are per-iteration values in ``unit`` (for bandwidth
    cases GB/s or Gb/s); ``stats`` summarises them. ``metrics`` holds derived numbers (ratios to
    a reference measured in the same run, microseconds per block, ...) with their names carrying
    the unit. ``method`` says how it was timed and verified, ``provider`` where the bytes were
    moved by (``cuda``, ``pyverbs``, ``soft``); a ``soft`` result is never a hardware number.
    """

    key: str
    status: Status
    description: str = ""
    params: dict[str, Scalar] = field(default_factory=dict)
    unit: str = ""
    samples: tuple[float, ...] = ()
    stats: Optional[SampleStats] = None
    metrics: dict[str, Optional[float]] = field(default_factory=dict)
    method: str = ""
    provider: str = ""
    verified: Optional[bool] = None
    reason: Optional[str] = None

    @property
    def value(self) -> Optional[float]:
        """The headline number: the median sample, or None when nothing was measured."""
        return self.stats.median if self.stats else None

    @classmethod
    def waived(cls, key: str, reason: str, **kw) -> "BenchResult":
        """A case that does not apply to this machine, with the reason."""
        return cls(key=key, status=Status.WAIVED, reason=reason, **kw)

    @classmethod
    def error(cls, key: str, reason: str, **kw) -> "BenchResult":
        """A case that was attempted and failed (including a failed payload check)."""
        return cls(key=key, status=Status.ERROR, reason=reason, **kw)
