"""Benchmark results: one ``BenchResult`` per measured case, with every sample kept."""

from __future__ import annotations

import enum
import statistics
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Optional, TypeGuard, Union

from gdrdiag.model.params import (
    METRICS_BY_BENCH,
    PARAMS_BY_BENCH,
    BenchMetrics,
    BenchParams,
    CopyMetrics,
    CopyParams,
    GatherMetrics,
    GatherParams,
    ImportedMetrics,
    ImportedParams,
    MrMetrics,
    MrParams,
    PeerMetrics,
    PeerParams,
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
    result of a bench can be read the same way. Code that reads one bench's fields narrows first
    with :func:`is_copy`, :func:`is_gather`, :func:`is_mr`, :func:`is_peer` or :func:`is_imported`
    (``[r for r in results if is_mr(r)]``): the type checker then knows ``r.params`` is ``MrParams``.
    Results are frozen: derive a new one with ``dataclasses.replace``.
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
    def own_run(self) -> bool:
        """True for a number that is a run of its own (a posted number): no other row shares its sweep."""
        return self.provider == Provider.POSTED.value

    @property
    def bench(self) -> Bench:
        """The bench that produced this result."""
        return self.settled_params.bench

    @property
    def settled_params(self) -> BenchParams:
        """``params`` as set after construction: never None (``__post_init__`` fills the default).

        The field is Optional only so that a result can be made without params; read this where
        any bench's params will do (identity, tables), and narrow with ``is_mr`` (etc.) to read fields.
        """
        params = self.params
        if params is None:
            raise AssertionError(f"{self.key}: params unset after construction")
        return params

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


if TYPE_CHECKING:
    # What one bench's results are to the type checker once a guard below said so. Never made:
    # every result is a BenchResult, and these names do not exist at run time (import them under
    # TYPE_CHECKING), so ``isinstance(r, MrResult)`` cannot be written by mistake.

    class CopyResult(BenchResult):
        """A copy-bench result: ``CopyParams`` and ``CopyMetrics``."""

        params: CopyParams
        metrics: CopyMetrics

    class GatherResult(BenchResult):
        """A gather-bench result: ``GatherParams`` and ``GatherMetrics``."""

        params: GatherParams
        metrics: GatherMetrics

    class MrResult(BenchResult):
        """An mr-bench result: ``MrParams`` and ``MrMetrics``."""

        params: MrParams
        metrics: MrMetrics

    class PeerResult(BenchResult):
        """A peer-bench result: ``PeerParams`` and ``PeerMetrics``."""

        params: PeerParams
        metrics: PeerMetrics

    class ImportedResult(BenchResult):
        """A result another tool measured: ``ImportedParams`` and ``ImportedMetrics``."""

        params: ImportedParams
        metrics: ImportedMetrics


def is_copy(r: BenchResult) -> TypeGuard[CopyResult]:
    """True when ``r`` carries copy-bench params and metrics (its fields can then be read typed)."""
    return isinstance(r.params, CopyParams) and isinstance(r.metrics, CopyMetrics)


def is_gather(r: BenchResult) -> TypeGuard[GatherResult]:
    """True when ``r`` carries gather-bench params and metrics (the copy-engine reference included)."""
    return isinstance(r.params, GatherParams) and isinstance(r.metrics, GatherMetrics)


def is_mr(r: BenchResult) -> TypeGuard[MrResult]:
    """True when ``r`` carries mr-bench params and metrics."""
    return isinstance(r.params, MrParams) and isinstance(r.metrics, MrMetrics)


def is_peer(r: BenchResult) -> TypeGuard[PeerResult]:
    """True when ``r`` carries peer-bench params and metrics."""
    return isinstance(r.params, PeerParams) and isinstance(r.metrics, PeerMetrics)


def is_imported(r: BenchResult) -> TypeGuard[ImportedResult]:
    """True when ``r`` carries an imported tool's params and metrics."""
    return isinstance(r.params, ImportedParams) and isinstance(r.metrics, ImportedMetrics)
