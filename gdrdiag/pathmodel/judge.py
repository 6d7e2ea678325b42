"""The path model: any measured row, whoever produced it, judged against what its own path allows.

Pure. For each numeric row of a Report (gdrdiag's benches, perftest, nvbandwidth, bandwidthTest,
p2pBandwidthLatencyTest, nccl-tests, numbers posted in a thread) :func:`judge` works out

- the **path**: source memory and where it lives, destination, and the **mover** (copy engine, SM,
  NIC DMA, a collective);
- the **bounds** on it: each endpoint's PCIe link (as capable, and as trained when it was read under
  load), the NIC port, times the protocol efficiency of that hop (:mod:`gdrdiag.pathmodel.pcie` for PCIe
  reads, posted-write TLPs for writes, packet headers for the wire);
- the **expected value at the row's size**: the narrowest bound, lowered by the mover's cost per
  operation (a 4 KiB copy pays the same few microseconds as a 1 GiB one). The per-operation cost is
  fitted from the Report's own sweep of that path when it has two sizes or more, else a documented
  default (:data:`PER_OP_DEFAULTS`);
- ``measured / expected`` and a verdict (:class:`gdrdiag.model.path.Verdict`). A row the model cannot
  judge says why.

Where the machine facts are missing (an imported file without a bundle), a measured yardstick of the
same Report stands in: host-memory RDMA for GPU-memory RDMA, pinned copies for pageable ones.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Optional, Sequence

from gdrdiag.model.machine import MachineInfo
from gdrdiag.model.params import GatherParams
from gdrdiag.model.path import (
    LOST_BELOW,
    SLOW_BELOW,
    Bound,
    Judgement,
    Mover,
    Place,
    Verdict,
)
from gdrdiag.model.results import BenchResult, Status
from gdrdiag.model.vocabulary import MemoryKind, Provider
from gdrdiag.pathmodel.bounds import bounds_of, software_nic
from gdrdiag.pathmodel.rows import RowPath, best_gathers, facts_only, path_of, to_gbytes_per_s
from gdrdiag.units import format_size

# The first two steps live beside this module: rows -> paths (rows.py), facts -> bounds
# (bounds.py); re-exported from the package so callers import the path model from one place.
__all__ = ["judge", "losses", "path_of", "to_gbytes_per_s"]

# Cost per operation of each mover (microseconds), when the Report has no sweep to fit it from.
# Copy engine: copy-bench's 64 KiB and 1 MiB rows on the H100/H200 VM put 2.8-4.0 us on each
# cudaMemcpyAsync beside its bytes (docs/benchmarks.md, the copy sweep); 4 us is the generous end.
# Collectives: 20 us per call, an assumption of the order nccl-tests prints for small sizes; a sweep
# (nccl-tests -b 8 -e 8G) fits its own.
# NIC DMA: one RDMA WRITE per 0.1 us per QP (10 M messages/s per QP with perftest's defaults) is an
# assumption, not a measurement: a Report with a size sweep (ib_write_bw -a) fits its own.
PER_OP_DEFAULTS = {
    Mover.COPY_ENGINE: (
        4.0,
        "default 4 us per copy call (copy-bench's sweep on H100/H200, docs/benchmarks.md)",
    ),
    Mover.SM: (4.0, "default 4 us per kernel launch and drain"),
    Mover.NIC_DMA: (0.1, "default 0.1 us per message per QP (an assumption: 10 M messages/s per QP)"),
    Mover.COLLECTIVE: (
        20.0,
        "default 20 us per collective call (an assumption: NCCL's small-message latency)",
    ),
}

# The copy engine's own cost per copy when copies queue back to back on its stream: the low end of
# the 2.8-4.0 us per cudaMemcpyAsync that copy-bench's sweep measures (docs/benchmarks.md, the copy
# sweep). A tool that keeps a window of messages in flight (ucx_perftest) pays the host's per-message
# cost (PER_OP_DEFAULTS) once per message while the engine copies the previous ones: its rate is the
# slower of the two (:func:`_host_issued_at`), not their sum.
CE_STREAM_PER_COPY_US = 2.8

# A sweep fits its own per-operation cost only when its smallest size moves within this time at the
# path's peak (5x the copy engine's 4 us default, so the cost is still a sixth of the row's time or
# more): above it the per-operation cost is a few % of the time and a fit would only absorb bandwidth
# losses. 20 us is 1.1 MB at PCIe Gen5 x16's 55 GB/s and 7.9 MB over 18 NVLinks (396.8 GB/s), where
# one gated 1.28 MB peer copy still pays 5.2 us beside its 3.2 us of bytes (docs/benchmarks.md).
FIT_WITHIN_US = 20.0

# ---------------------------------------------------------------------------------------------
# judging
# ---------------------------------------------------------------------------------------------


def _expected_at(peak: float, size: Optional[int], per_op_us: float, ops: int) -> float:
    if not size or per_op_us <= 0:
        return peak
    seconds = size / (peak * 1e9) + per_op_us * 1e-6 / max(1, ops)
    return size / seconds / 1e9


# A sweep row whose stream ran this much longer than its host loop was bound by the stream, not the host.
STREAM_BOUND_AFTER = 1.1


def _host_issued_at(peak: float, size: int, issue_us: float, stream_us: float) -> float:
    """GB/s of blocks issued from a host loop (or one batched call) that overlaps the stream.

    A copy call returns once its copy is queued, so the host issues block k+1 while the stream
    moves block k: the rate is the slower of the two, the host's measured time per block or the
    stream's cost per copy plus the block's bytes at ``peak`` (not their sum, which the sweep
    disproves). Measured (docs/benchmarks.md): 10,000 peer copies one call each on 2 x
    H100 NV18 run at the host loop's 2.1-2.3 us per block up to 128 KiB (the stream keeps up),
    and at 2.4 us + bytes / 396.8 GB/s from 512 KiB, where the stream outlasts the loop; one
    batched call's blocks at bytes / 396.8 GB/s from 512 KiB (no cost per entry on the stream).
    """
    return size / (max(issue_us, stream_us + size / (peak * 1e3)) * 1e3)


@dataclass(frozen=True)
class _Sweep:
    """One path's sweep in a Report, summarised once: its points, and the smallest one.

    A point is (bytes per operation, GB/s, host us per operation or None when the row did not
    measure its issue loop).
    """

    sizes: int
    smallest: Optional[tuple[int, float]]  # (bytes, GB/s) at the smallest size
    points: tuple[tuple[int, float, Optional[float]], ...] = ()

    @classmethod
    def of(cls, points: Iterable[tuple[int, float, Optional[float]]]) -> "_Sweep":
        pts = tuple((s, v, i) for s, v, i in points if s and v > 0)
        return cls(len({s for s, _, _ in pts}), min((s, v) for s, v, _ in pts) if pts else None, pts)

    def per_op_us(self, peak: float) -> Optional[float]:
        """The per-operation time (us) the sweep's smallest size shows, when it is a sweep.

        The smallest size is where the per-operation cost dominates, so it defines the cost (and
        is judged healthy by construction); every larger size is then judged by bandwidth. A
        batched or pipelined mover hides its cost at large sizes, which only makes those rows
        look better.
        """
        if self.sizes < 2 or self.smallest is None or self.smallest[0] / (peak * 1e3) > FIT_WITHIN_US:
            return None
        size, value = self.smallest
        return max(0.0, size / (value * 1e3) - size / (peak * 1e3))

    def stream_per_op_us(self, peak: float) -> tuple[float, int]:
        """The stream's own cost per operation (us) beside its bytes, and how many rows showed it.

        Only rows whose stream ran past their host loop (by :data:`STREAM_BOUND_AFTER`) show it: the
        least time beyond the bytes among them, so a slow link or one slow row does not become the
        cost. No such row: 0 (every row was bound by its host loop, which the model takes as
        measured).
        """
        costs = [
            size / (value * 1e3) - size / (peak * 1e3)
            for size, value, issue in self.points
            if issue is not None and size / (value * 1e3) >= STREAM_BOUND_AFTER * issue
        ]
        return (max(0.0, min(costs)), len(costs)) if costs else (0.0, 0)


def _verdict(ratio: float) -> Verdict:
    if ratio < LOST_BELOW:
        return Verdict.LOST
    if ratio < SLOW_BELOW:
        return Verdict.SLOW
    return Verdict.OK


def _unjudged(
    i: int, r: BenchResult, reason: str, path: Optional[RowPath] = None, value: Optional[float] = None
) -> Judgement:
    return Judgement(
        index=i,
        key=r.key,
        label=_label(r, path),
        verdict=Verdict.UNJUDGED,
        measured_gbytes_per_s=value,
        reason=reason,
        size_bytes=path.size if path else None,
        source=path.source if path else None,
        destination=path.destination if path else None,
        mover=path.mover if path else None,
    )


def _label(r: BenchResult, path: Optional[RowPath]) -> str:
    size = f" {format_size(path.size)}" if path and path.size else ""
    route = f" {path.source.label}->{path.destination.label}" if path else ""
    return f"{r.key}{route}{size}"


def _pair(path: RowPath) -> frozenset:
    return frozenset((path.source.index, path.destination.index))


def _kind(path: RowPath) -> tuple:
    """What makes two rows the same kind of path: mover, places, tool and test, direction(s), GPU pair."""
    pair = _pair(path) if path.source.place is Place.GPU and path.destination.place is Place.GPU else None
    return (
        path.mover,
        path.source.place,
        path.destination.place,
        path.family[:2],
        path.both_directions,
        pair,
    )


def _shape(path: RowPath) -> tuple:
    """Everything :func:`gdrdiag.pathmodel.bounds.bounds_of` reads of a path (all but size and family)."""
    return (
        path.mover,
        path.source,
        path.destination,
        path.nic,
        path.both_directions,
        path.peer_access,
        path.ranks,
        path.peer_sources,
        path.collective,
    )


class _Yardsticks:
    """Measured yardsticks of one Report for rows whose path has no facts, indexed once (linear cost).

    GPU-memory RDMA -> host-memory RDMA; pageable copies -> pinned copies from the same side;
    peer access off -> on for the same pair; else the fastest row of the same kind of path in
    another case (placement, NIC, setting): what this machine showed the path can do.
    """

    def __init__(self, rows: Sequence["_Row"]) -> None:
        self.host_rdma: list[_Row] = []
        self.pinned: dict[Place, list[_Row]] = {}
        self.peer_on: dict[tuple, list[_Row]] = {}
        self.fastest: dict[tuple, list[_Row]] = {}  # per kind: the fastest row of each sweep, best first
        best_per_family: dict[tuple, dict[tuple, _Row]] = {}
        for row in rows:
            q = row.path
            ends = (q.source.place, q.destination.place)
            if q.mover is Mover.NIC_DMA and Place.GPU not in ends:
                self.host_rdma.append(row)
            if (
                q.mover is Mover.COPY_ENGINE
                and ends[0] != ends[1]
                and MemoryKind.PINNED
                in (
                    q.source.memory,
                    q.destination.memory,
                )
            ):
                self.pinned.setdefault(q.source.place, []).append(row)
            if ends == (Place.GPU, Place.GPU) and q.peer_access:
                self.peer_on.setdefault((_pair(q), q.both_directions), []).append(row)
            keyed = best_per_family.setdefault(_kind(q), {})
            if q.family not in keyed or row.value > keyed[q.family].value:
                keyed[q.family] = row
        for kind, keyed in best_per_family.items():
            self.fastest[kind] = sorted(keyed.values(), key=lambda r: -r.value)[:2]

    def for_row(self, row: "_Row") -> Optional["_Row"]:
        """The yardstick of ``row`` (never the row itself), or None."""
        path = row.path
        ends = (path.source.place, path.destination.place)
        cands: list[_Row] = []
        if path.mover is Mover.NIC_DMA and Place.GPU in ends:
            cands = self.host_rdma
        elif path.mover is Mover.COPY_ENGINE and MemoryKind.PAGEABLE in (
            path.source.memory,
            path.destination.memory,
        ):
            cands = self.pinned.get(path.source.place, [])
        elif ends == (Place.GPU, Place.GPU) and path.peer_access is False:
            cands = self.peer_on.get((_pair(path), path.both_directions), [])
        if cands:
            size = path.size or 0
            return min(cands, key=lambda c: (abs((c.path.size or 0) - size), -(c.path.size or 0)))
        # another case of the same kind (another GPU, placement, NIC): a sweep of one case fits its
        # per-operation cost instead, so rows of the row's own sweep are never its yardstick
        return next((r for r in self.fastest.get(_kind(path), []) if r.path.family != path.family), None)


@dataclass(frozen=True)
class _Row:
    """A numeric row with its path and its value in GB/s: what the judging steps share."""

    index: int
    result: BenchResult
    path: RowPath
    value: float


@dataclass(frozen=True)
class _Peak:
    """What the path allows at large sizes, which bound set it, and the same with links as trained."""

    gbytes_per_s: float
    bound: str
    trained_gbytes_per_s: Optional[float] = None
    link: Optional[Bound] = None  # the bounding link (None for a measured yardstick)


def _numeric_row(i: int, r: BenchResult, best: dict) -> "_Row | Judgement":
    """The row ready to judge, or its Judgement when there is nothing to judge it by."""
    path, why = path_of(r, best)
    if path is None:
        return _unjudged(i, r, why or "no path")
    if r.provider == Provider.SOFT.value:
        return _unjudged(i, r, "soft provider: bytes copied in software, no hardware path to judge", path)
    value = to_gbytes_per_s(float(r.value), r.unit)  # type: ignore[arg-type]
    if value is None:
        return _unjudged(i, r, f"unit {r.unit or '?'} is not a bandwidth", path)
    if value <= 0:
        return _unjudged(i, r, "the tool printed 0 at this size (below its print precision)", path)
    return _Row(i, r, path, value)


# Host<->GPU copies both ways at once: PCIe is full duplex, but the two directions do not add up.
# Public copy-engine measurements reach 0.69-0.71 of the sum of the one-way rates on A100 hosts (H2D
# falls while D2H holds: https://github.com/NVIDIA/nvbandwidth/issues/11 and issues/53), and the
# H100 VM here 0.78 (copy-bench, docs/benchmarks.md). The model expects 0.7 of the sum; GPU<->GPU
# and NIC paths keep the full sum (peer copies both ways measure 0.99 of it, docs/benchmarks.md).
HOST_GPU_BOTH_WAYS_SHARE = 0.7


def _both_ways_factor(path: RowPath) -> float:
    """How many one-way bounds a row that moves bytes both ways at once may reach."""
    if not path.both_directions:
        return 1.0
    ends = {path.source.place, path.destination.place}
    host_gpu = ends == {Place.HOST, Place.GPU} and path.mover in (Mover.COPY_ENGINE, Mover.SM)
    return 2.0 * HOST_GPU_BOTH_WAYS_SHARE if host_gpu else 2.0


def _peak_from_facts(machine: Optional[MachineInfo], path: RowPath) -> Optional[_Peak]:
    """The narrowest bound the machine facts put on the path (None without facts)."""
    bounds = bounds_of(machine, path, as_configured=False)
    if not bounds:
        return None
    narrow = min(bounds, key=lambda b: b.gbytes_per_s)
    factor = _both_ways_factor(path)
    trained = min((b.gbytes_per_s for b in bounds_of(machine, path, as_configured=True)), default=None)
    both = "" if factor == 1.0 else f"; both ways at once x {factor:g}"
    return _Peak(
        narrow.gbytes_per_s * factor,
        f"{narrow.name}: {narrow.source}{both}",
        trained and trained * factor,
        narrow,
    )


def _peak_from_rows(yardsticks: _Yardsticks, row: _Row) -> Optional[_Peak]:
    """A measured yardstick of the same Report when the facts give none (never the row itself)."""
    ref = yardsticks.for_row(row)
    if ref is None or ref.result is row.result:
        return None
    return _Peak(
        ref.value,
        f"the same Report's {_label(ref.result, None)} ({ref.value:.2f} GB/s): no link facts for this path",
    )


@dataclass(frozen=True)
class _OpCost:
    """What a row pays per operation beside its bytes, and where that figure comes from.

    Rows issued from a host loop (or one batched call) also carry the host's measured time per
    block and the stream's cost per copy (0 while the host loop bounds the row): their expected
    rate is the slower of the two (:func:`_host_issued_at`), not their sum.
    """

    us: float
    source: str
    issue_us: Optional[float] = None
    stream_us: float = 0.0

    def expected_at(self, bound: float, path: RowPath) -> float:
        if self.issue_us is not None and path.size:
            return _host_issued_at(bound, path.size, self.issue_us, self.stream_us)
        return _expected_at(bound, path.size, self.us, path.ops_in_flight)


def _op_cost(row: _Row, sweep: _Sweep, peak: float) -> _OpCost:
    """The row's per-operation cost: host-issued rows from their own loop, others from the sweep."""
    path, issue = row.path, row.path.issue_us_per_op
    if issue is None and path.size and (path.window or 1) > 1 and path.mover is Mover.COPY_ENGINE:
        us, source = _per_op(path, sweep, peak)
        return _OpCost(
            us,
            f"{source}; {path.window} messages in flight: each message's {us:.1f} us overlaps the copy "
            f"engine's {CE_STREAM_PER_COPY_US} us per queued copy and the bytes of the ones before it",
            us,
            CE_STREAM_PER_COPY_US,
        )
    if issue is None or not path.size:
        return _OpCost(*_per_op(path, sweep, peak))
    stream, rows = sweep.stream_per_op_us(peak)
    transfer = path.size / (peak * 1e3)
    if path.size / (row.value * 1e3) < STREAM_BOUND_AFTER * issue:
        stream, bound_by = 0.0, "the host loop bounds this row (its stream kept up)"
    else:
        bound_by = (
            f"the stream outlasted the host loop: {stream:.2f} us per copy beside its bytes, "
            f"from {rows} such rows"
        )
    return _OpCost(
        max(issue, stream + transfer) - transfer,
        f"fitted from this Report's own sweep: host loop {issue:.2f} us per block (measured in this row); "
        + bound_by,
        issue,
        stream,
    )


def _judge_row(row: _Row, peak: _Peak, sweep: _Sweep) -> Judgement:
    """Measured / expected at the row's size, with the verdict."""
    path = row.path
    cost = _op_cost(row, sweep, peak.gbytes_per_s)
    expected = cost.expected_at(peak.gbytes_per_s, path)
    ratio = row.value / expected if expected > 0 else None
    trained = peak.trained_gbytes_per_s
    if ratio is None:
        verdict = Verdict.UNJUDGED
    else:
        verdict = Verdict.BASELINE if path.baseline else _verdict(ratio)
    return Judgement(
        index=row.index,
        key=row.result.key,
        label=_label(row.result, path),
        verdict=verdict,
        measured_gbytes_per_s=row.value,
        expected_gbytes_per_s=expected,
        peak_gbytes_per_s=peak.gbytes_per_s,
        ratio=ratio,
        bound=peak.bound,
        bound_pcie_raw_gbytes_per_s=peak.link.pcie_raw_gbytes_per_s if peak.link else None,
        bound_on_nic=bool(peak.link and peak.link.on_nic),
        per_op_us=cost.us,
        per_op_source=cost.source,
        trained_gbytes_per_s=(
            cost.expected_at(trained, path) if trained and trained < peak.gbytes_per_s * 0.98 else None
        ),
        source=path.source,
        destination=path.destination,
        mover=path.mover,
        size_bytes=path.size,
        reason=path.baseline,
    )


def judge(report_results: Sequence[BenchResult], machine: Optional[MachineInfo]) -> tuple[Judgement, ...]:
    """One Judgement per numeric (OK, valued) row of the results, in their order.

    A row that holds facts and no number (an imported NCCL INFO log) gets one too, unjudged, saying
    it has no bandwidth.

    Computed afresh on every call, nothing remembered between calls: ``gdrdiag.diagnose.diagnose``
    judges a Report once and hands the same judgements to every rule and to its caller.
    """
    return _judge(report_results, machine)


def _judge(report_results: Sequence[BenchResult], machine: Optional[MachineInfo]) -> tuple[Judgement, ...]:
    best = best_gathers(report_results)
    out: dict[int, Judgement] = {}
    rows: list[_Row] = []
    for i, r in enumerate(report_results):
        if r.status is Status.OK and r.value is not None:
            got = _numeric_row(i, r, best)
            if isinstance(got, _Row):
                rows.append(got)
            else:
                out[i] = got
        elif r.status is Status.OK and facts_only(r):
            out[i] = _unjudged(i, r, path_of(r)[1] or "no bandwidth")
    yardsticks = _Yardsticks(rows)
    families: dict[tuple, list[tuple[int, float, Optional[float]]]] = {}
    for row in rows:
        families.setdefault((row.path.mover, row.path.family), []).append(
            (row.path.size or 0, row.value, row.path.issue_us_per_op)
        )
    sweeps = {key: _Sweep.of(points) for key, points in families.items()}
    peaks: dict[tuple, Optional[_Peak]] = {}
    for row in rows:
        r, path = row.result, row.path
        if isinstance(r.params, GatherParams) and r.key != "gather_ce_reference":
            gather = _gather_model(r)
            why = "no PCIe-model ceiling recorded with this gather (a Report from an older gdrdiag)"
            out[row.index] = (
                _judge_gather(row.index, r, path, row.value, gather)
                if gather is not None
                else _unjudged(row.index, r, why, path)
            )
            continue
        plateau_why = software_nic(machine, path) or _below_collective_plateau(
            path, sweeps[(path.mover, path.family)]
        )
        if plateau_why is not None:
            out[row.index] = _unjudged(row.index, r, plateau_why, path, row.value)
            continue
        shape = _shape(path)  # bounds depend on the path's shape, not its size: once per shape
        if shape not in peaks:
            peaks[shape] = _peak_from_facts(machine, path)
        peak = peaks[shape] or _peak_from_rows(yardsticks, row)
        out[row.index] = (
            _judge_row(row, peak, sweeps[(path.mover, path.family)])
            if peak is not None
            else _unjudged(row.index, r, _why_no_bound(machine, path), path, row.value)
        )
    return tuple(out[i] for i in sorted(out))


# A collective within one node is judged where NCCL runs at its plateau. Below it the rate is set by
# the protocol (LL, LL128, Simple) and the pipeline chunking NCCL picks per size, which a bytes-plus-
# latency model does not describe: on the real corpus (tests/real/, 2 x H200 and 4 x H100, NV18,
# NCCL 2.28) healthy runs sit at 0.28-0.8 of that model from 128 KiB to 128 MiB and at 0.86-1.00 from
# 256 MiB (docs/benchmarks.md, "real runs"). nccl-tests' own guide compares busbw with the hardware's
# peak at large sizes (https://github.com/NVIDIA/nccl-tests/blob/master/doc/PERFORMANCE.md).
COLLECTIVE_PLATEAU_BYTES = 256 << 20


def _below_collective_plateau(path: RowPath, sweep: _Sweep) -> Optional[str]:
    """Why a single-node collective row is not judged (below the plateau), or None to judge it.

    A sweep that stops short of the plateau is still judged at its largest size, so a run made
    with ``-e 64M`` keeps one judged row.
    """
    single_node = path.collective is not None and path.collective.nodes == 1
    if path.mover is not Mover.COLLECTIVE or not (single_node or path.destination.place is Place.GPU):
        return None
    if not path.size:
        return None
    largest = max((size for size, _, _ in sweep.points), default=0)
    if path.size >= min(COLLECTIVE_PLATEAU_BYTES, largest):
        return None
    return (
        f"a single-node collective below {format_size(COLLECTIVE_PLATEAU_BYTES)}: NCCL's protocol and "
        "pipeline choice set its rate there; judged at the sweep's large sizes"
    )


def _gather_model(r: BenchResult) -> Optional[tuple[float, float]]:
    """(model GB/s, ratio to CE) of a gather kernel: the same-run CE times the PCIe model's ceiling."""
    m = r.metrics
    if not isinstance(r.params, GatherParams) or r.key == "gather_ce_reference":
        return None
    ratio = getattr(m, "ceiling_ratio_to_ce", None) or getattr(m, "model_ratio_to_ce", None)
    ce = getattr(m, "ce_gbytes_per_s", None)
    if not ratio or not ce:
        return None
    return ce * ratio, ratio


def _judge_gather(
    i: int, r: BenchResult, path: RowPath, value: float, model: tuple[float, float]
) -> Judgement:
    expected, ratio_to_ce = model
    ratio = value / expected
    return Judgement(
        index=i,
        key=r.key,
        label=_label(r, path),
        verdict=Verdict.BASELINE if path.baseline else _verdict(ratio),
        measured_gbytes_per_s=value,
        expected_gbytes_per_s=expected,
        ratio=ratio,
        bound=f"the PCIe model for this layout: {ratio_to_ce:.3f} of the same run's copy engine "
        "(gdrdiag/pathmodel/pcie.py)",
        per_op_us=0.0,
        per_op_source="measured over many records: no per-call cost",
        source=path.source,
        destination=path.destination,
        mover=path.mover,
        size_bytes=None,
        reason=path.baseline,
    )


def _per_op(path: RowPath, sweep: _Sweep, peak: float) -> tuple[float, str]:
    fitted = sweep.per_op_us(peak)
    if fitted is not None:
        return fitted, f"fitted from this Report's own sweep of the path ({sweep.sizes} sizes)"
    if path.per_sample_us is not None:
        return path.per_sample_us, (
            f"{path.per_sample_us:g} us per sample: the fork and join across the GPUs and the copies a GPU "
            "runs in turn (pathmodel/peer.py pattern_cost_us)"
        )
    us, source = PER_OP_DEFAULTS.get(path.mover, (0.0, "no per-operation cost"))
    return us, source


def _why_no_bound(m: Optional[MachineInfo], path: RowPath) -> str:
    if m is None:
        return "no machine facts in this Report (import with --bundle) and no measured yardstick beside it"
    if path.mover is Mover.COLLECTIVE:
        return "NCCL within one node rides NVLink or PCIe peer paths: this Report has no facts for them"
    if path.mover is Mover.NIC_DMA and not m.nics:
        return "no RDMA NIC in the machine facts (port rate unknown) and no host-memory row beside it"
    if Place.GPU in (path.source.place, path.destination.place) and not m.gpus:
        return "no GPU in the machine facts (link unknown)"
    return "the links on this path are unknown (no PCIe link or port rate was read)"


def losses(judgements: Iterable[Judgement]) -> list[Judgement]:
    """The rows below their path's expectation, worst first."""
    return sorted((j for j in judgements if j.is_loss), key=lambda j: j.ratio or 0.0)
