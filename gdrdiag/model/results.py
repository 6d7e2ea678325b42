"""Benchmark results: one ``BenchResult`` per measured case, with every sample kept."""

from __future__ import annotations

import enum
import statistics
from dataclasses import dataclass, field
from typing import Optional, Union

from gdrdiag.model.params import (
    METRICS_BY_BENCH,
    PARAMS_BY_BENCH,
    BenchMetrics,
    BenchParams,
    RunSettings,
)
from gdrdiag.model.vocabulary import Bench, Provider

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

    ``key`` names the case (``copy_h2d_pinned``); ``params`` (typed per bench) say what was
    measured, and with the provider make up its identity (:class:`gdrdiag.model.case.CaseId`).
    ``settings`` say how it was run (iterations, seed): never identity. ``samples`` are
    per-iteration values in ``unit`` (GB/s or Gb/s for bandwidth cases); ``stats`` summarises them;
    ``metrics`` (typed per bench) hold derived numbers. ``method`` says how it was timed and
    verified, ``provider`` what moved the bytes (``cuda``, ``pyverbs``, ``soft``, ``fixture``, an
    imported tool); a ``soft`` or ``fixture`` result is never a hardware number.

    ``params`` and ``metrics`` default to the empty typed record of the key's bench, so every
    result of a bench can be read the same way. Results are frozen: derive a new one with
    ``dataclasses.replace``.
    """

    key: str
    status: Status
    description: str = ""
    params: Optional[BenchParams] = None
    unit: str = ""
    samples: tuple[float, ...] = ()
    stats: Optional[SampleStats] = None
    metrics: Optional[BenchMetrics] = None
    settings: RunSettings = field(default_factory=RunSettings)
    method: str = ""
    provider: str = ""
    verified: Optional[bool] = None
    reason: Optional[str] = None

    def __post_init__(self) -> None:
        bench = Bench.of_key(self.key)
        if self.params is None:
            object.__setattr__(self, "params", PARAMS_BY_BENCH[bench]())
        if self.metrics is None:
            object.__setattr__(self, "metrics", METRICS_BY_BENCH[bench]())

    @property
    def value(self) -> Optional[float]:
        """The headline number: the median sample, or None when nothing was measured."""
        return self.stats.median if self.stats else None

    @property
    def bench(self) -> Bench:
        """The bench that produced this result."""
        return self.params.bench  # type: ignore[union-attr]

    @property
    def provider_kind(self) -> Optional[Provider]:
        """``provider`` as the enum (None for a name this version does not know)."""
        return Provider.parse(self.provider)

    @classmethod
    def waived(cls, key: str, reason: str, **kw) -> "BenchResult":
        """A case that does not apply to this machine, with the reason."""
        return cls(key=key, status=Status.WAIVED, reason=reason, **kw)

    @classmethod
    def error(cls, key: str, reason: str, **kw) -> "BenchResult":
        """A case that was attempted and failed (including a failed payload check)."""
        return cls(key=key, status=Status.ERROR, reason=reason, **kw)
