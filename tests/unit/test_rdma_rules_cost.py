"""The RO A/B pairing and the matrix cost a bounded amount per result, whatever the Report's size.

``show`` hands ``ro_pairs`` a list (so nothing is remembered between calls) and ``diagnose`` a
Report's tuple; both must stay linear in results. The cost is counted, not timed: every read of a
result's params goes through a counting subclass, so a scan of every result per RO pair (the
quadratic) shows as reads per result that grow with the Report.
"""

from __future__ import annotations

from dataclasses import dataclass

from gdrdiag.diagnose import rdma_rules as rr
from gdrdiag.model.params import MrParams
from gdrdiag.model.results import BenchResult, SampleStats, Status
from gdrdiag.model.vocabulary import AccessFlags, MemoryKind, RegPath

_READS = [0]


@dataclass(frozen=True)
class _CountedMrParams(MrParams):
    """MrParams whose every attribute read is counted in ``_READS``."""

    def __getattribute__(self, name: str) -> object:
        _READS[0] += 1
        return object.__getattribute__(self, name)


def _result(memory: str, ro: bool, size: int) -> BenchResult:
    base = AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE
    params = _CountedMrParams(
        memory=MemoryKind(memory),
        reg_path=RegPath.MR,
        size_bytes=size,
        qps=4,
        access=base | AccessFlags.RELAXED_ORDERING if ro else base,
        mode="bw",
        landing="gpu" if memory == "device" else "host",
        lands_in=memory,
    )
    samples = (99.0, 100.0, 101.0)
    return BenchResult(
        key=f"rdma_write_{memory}_mr",
        status=Status.OK,
        params=params,
        unit="Gb/s",
        samples=samples,
        stats=SampleStats.of(samples),
        provider="pyverbs",
        verified=True,
    )


def _results(n: int) -> tuple[BenchResult, ...]:
    """``n`` results: device and pinned memory, RO off and on, at n / 4 sizes (every one paired)."""
    out = []
    for i in range(n // 4):
        size = 4096 * (i + 1)
        out += [_result(m, ro, size) for m in ("device", "pinned") for ro in (False, True)]
    return tuple(out)


def _reads_per_result(n: int) -> float:
    results = _results(n)
    _READS[0] = 0
    pairs = rr.ro_pairs(list(results))  # as show asks: a list, nothing remembered
    assert len(pairs) == n // 2
    rr.rdma_findings(results)  # as diagnose asks: the Report's tuple
    rr.interpret_matrix(list(results))
    return _READS[0] / n


def test_pairing_and_matrix_cost_is_linear_in_results():
    """Reads per result at 4k and 16k rows stay within 1.5x of those at 1k (a quadratic gives 4x, 16x)."""
    small = _reads_per_result(1000)
    for n in (4000, 16000):
        per = _reads_per_result(n)
        assert per <= 1.5 * small, f"{n} results: {per:.0f} params reads per result, {small:.0f} at 1000"
