"""PERF-GPU-OUTLIER: the GPU of a node that is slower than its siblings at the same measurement.

Pure. ``--gpus`` (copy-bench, gather-bench, mr-bench, report) measures each GPU of a node the same way,
one after another; the GPUs of one board are built alike, so one GPU well below the others at the same
case is the thing an operator looks for: a link trained down, a run whose host memory sat on the far
socket, a second process on the GPU. The path model judges each row against its own GPU's path; what
only the siblings show is a loss that path does not know of (host memory on the far socket, another
process on the GPU, a link whose registers were not read).

A GPU is an outlier at a case when its value is below the median of the *other* GPUs' values by more
than the run's own noise: ``max(MIN_GAP, NOISE_SIGMAS x`` the largest relative spread of the other
GPUs' samples ``)``. Only groups measured on at least ``MIN_GPUS`` GPUs count (with two GPUs there is
no "odd one out"); not pageable memory (the host CPU stages it); only bandwidth rows of at least
``MIN_SIZE_BYTES`` where a size is recorded (smaller copies are set by per-call latency and vary more
between runs than between GPUs); and a group where half the GPUs or more would be outliers is two
populations, not one outlier (left to the path model). A GPU is named when it is below its siblings in
two cases or more, or in one case by more than ``1 - LONE_CASE_SHARE``.
"""

from __future__ import annotations

import dataclasses
import statistics
from typing import TYPE_CHECKING, Callable, Hashable, Iterable, Optional, Protocol, Sequence, TypeVar

from gdrdiag.diagnose._common import ev, finding
from gdrdiag.diagnose.inventory_rules import busy_reason
from gdrdiag.model.case import CaseId
from gdrdiag.model.findings import Finding, Severity
from gdrdiag.model.machine import GpuInfo, MachineInfo, PcieLink
from gdrdiag.model.node import GpuOutlier, GpuShare, SiblingRow
from gdrdiag.model.params import COPY_MODE_TOGETHER
from gdrdiag.model.path import Judgement
from gdrdiag.model.results import BenchResult, Status
from gdrdiag.model.vocabulary import Bench, MemoryKind
from gdrdiag.units import format_size

if TYPE_CHECKING:  # pragma: no cover
    from gdrdiag.diagnose.context import Context
    from gdrdiag.model.report import Report

Member = TypeVar("Member", bound=Hashable)
MIN_GPUS = 3
# Below the siblings' median by at least this share, whatever the noise. Identical GPUs measured one
# after another differ by up to ~11 % at the latency-bound gather kernels (docs/benchmarks.md, 4 x H200
# --gpus all); the faults this names cost 20-50 % (a halved link, a time-sliced GPU, the far socket).
MIN_GAP = 0.15
NOISE_SIGMAS = 3.0
# One case alone names a GPU only this far below its siblings: a fault shows in several cases (both
# copy directions, every gather kernel), while one kernel's dip of 17 % on an idle node was seen on
# 4 x H200 (docs/benchmarks.md, whole node).
LONE_CASE_SHARE = 1.0 - 2 * MIN_GAP
MIN_SIZE_BYTES = 1 << 20
PER_GPU_BENCHES = (Bench.COPY, Bench.GATHER, Bench.MR)
SHOWN_ROWS = 4  # evidence rows per outlier GPU
COMPARE_ADVICE = (
    "Compare the GPU's link (`lspci -vv`), NUMA node and processes (`nvidia-smi`) with its siblings'."
)


class BelowSiblings(Protocol):
    """One case at which one device (a GPU, a NIC) was below its siblings' median."""

    # read-only (properties): the outlier records are frozen dataclasses
    @property
    def index(self) -> int: ...
    @property
    def label(self) -> str: ...
    @property
    def unit(self) -> str: ...
    @property
    def value(self) -> float: ...
    @property
    def siblings_median(self) -> float: ...
    @property
    def tolerance(self) -> float: ...
    @property
    def share(self) -> float: ...


def below_evidence(cases: Sequence[BelowSiblings], siblings: str) -> list[str]:
    """Evidence lines for a device's cases below ``siblings`` (``"the other GPUs'"``), worst first."""
    lines = [
        f"results[{c.index}] {c.label}: {c.value:.1f} {c.unit} = {c.share:.2f} of {siblings} "
        f"median {c.siblings_median:.1f} (noise allows {c.tolerance:.0%})"
        for c in cases[:SHOWN_ROWS]
    ]
    if len(cases) > SHOWN_ROWS:
        lines.append(f"{len(cases) - SHOWN_ROWS} more case(s) below the siblings")
    return lines


Below = TypeVar("Below", bound=BelowSiblings)


def corroborated(
    cases: Iterable[Below], member: Callable[[Below], Member]
) -> list[tuple[Member, list[Below]]]:
    """Each device's cases below its siblings, worst first, where they name it.

    A device is named by two cases or more, or by one case more than ``1 - LONE_CASE_SHARE`` below
    its siblings (one case a little below is not corroborated). Devices come in the order of their
    worst case.
    """
    by_member: dict[Member, list[Below]] = {}
    for c in sorted(cases, key=lambda c: c.share):
        by_member.setdefault(member(c), []).append(c)
    return [(m, cs) for m, cs in by_member.items() if len(cs) > 1 or cs[0].share <= LONE_CASE_SHARE]


def _gpu_of(result: BenchResult) -> Optional[int]:
    """The CUDA ordinal a per-GPU result ran on (unset = 0, the benches' default), None for others."""
    if result.bench not in PER_GPU_BENCHES or getattr(result.params, "mode", None) == COPY_MODE_TOGETHER:
        return None
    gpu = getattr(result.params, "gpu", None)
    return 0 if gpu is None else int(gpu)


def comparable(result: BenchResult) -> bool:
    """True for a measured bandwidth row large enough to compare GPUs (or NICs) by."""
    if result.status is not Status.OK or result.value is None or result.value <= 0:
        return False
    if not result.unit.startswith(("GB/s", "Gb/s")):
        return False
    # Pageable memory is staged by the host CPU (a memcpy into the driver's pinned buffers): its rate
    # is the CPU's and drifts between runs by a third on a healthy node, whichever GPU is on the other end.
    params = result.params
    if MemoryKind.PAGEABLE in (getattr(params, "memory", None), getattr(params, "src_memory", None)):
        return False
    size = getattr(result.params, "size_bytes", None)
    return size is None or size >= MIN_SIZE_BYTES


def sibling_rows(results: Iterable[BenchResult]) -> list[SiblingRow]:
    """Every case measured on two or more GPUs, in the order of its first row (one pass, linear).

    An mr-bench row's RDMA device is part of its case here: GPUs are compared through one NIC, so a
    slow NIC among rows merged from several (``-d mlx5_N`` runs) is not blamed on the GPU it was
    measured with (PERF-NIC-OUTLIER compares the NICs).
    """
    groups: dict[tuple, list[tuple[int, int]]] = {}
    labels: dict[tuple, tuple[str, str]] = {}
    for index, r in enumerate(results):
        gpu = _gpu_of(r)
        if gpu is None or not comparable(r):
            continue
        case = CaseId.of(r)
        physics = tuple(item for item in case.physics if item[0] != "gpu")
        device = r.settings.device_name if r.bench is Bench.MR else None
        key = (case.bench, case.key, physics, case.provider, device)
        if key not in groups:
            groups[key] = []
            labels[key] = (case_label(r.key, physics) + (f" dev={device}" if device else ""), r.unit)
        if all(g != gpu for g, _ in groups[key]):  # a repeated case on one GPU: its first row
            groups[key].append((gpu, index))
    return [
        SiblingRow(labels[k][0], labels[k][1], tuple(sorted(rows)))
        for k, rows in groups.items()
        if len(rows) >= 2
    ]


def case_label(key: str, physics: tuple) -> str:
    """A short name of the case: its key, its size, and the parameters the key does not already say."""
    words = [key]
    for name, value in physics:
        if name == "size_bytes" and isinstance(value, int):
            words.append(format_size(value).replace(" ", ""))  # one word: "64MiB"
        elif str(value).replace("-", "_") not in key:
            words.append(f"{name}={value}")
    return " ".join(words)


def _spread(result: BenchResult) -> float:
    """The relative spread of one result's samples (stdev / median; 0 with one sample)."""
    stats = result.stats
    return stats.stdev / stats.median if stats is not None and stats.median > 0 else 0.0


def outliers(
    results: "list[BenchResult] | tuple[BenchResult, ...]", rows: Iterable[SiblingRow]
) -> list[GpuOutlier]:
    """The GPUs below their siblings by more than the noise, per row (rows of ``MIN_GPUS`` or more)."""
    out: list[GpuOutlier] = []
    for row in rows:
        if len(row.by_gpu) < MIN_GPUS:
            continue
        below = below_siblings({gpu: results[i] for gpu, i in row.by_gpu})
        index = dict(row.by_gpu)
        out.extend(
            GpuOutlier(
                gpu, index[gpu], row.label, row.unit, float(results[index[gpu]].value or 0.0), med, tol
            )
            for gpu, med, tol in below
        )
    return out


def below_siblings(members: "dict[Member, BenchResult]") -> "list[tuple[Member, float, float]]":
    """(member, its siblings' median, the tolerance) for each member below its siblings beyond the noise.

    A member is a GPU, or an ordered GPU pair: the same measurement taken on each. The tolerance is
    ``max(MIN_GAP, NOISE_SIGMAS x`` the other members' largest sample spread``)``: a GPU time-sliced with
    another process scatters its own samples, which must not widen the band it is judged by. Empty when
    half the members or more are below (two populations, not odd ones out).
    """
    values = {m: float(r.value or 0.0) for m, r in members.items()}
    spreads = {m: _spread(r) for m, r in members.items()}
    found = []
    for m, value in values.items():
        others = statistics.median(v for k, v in values.items() if k != m)
        tolerance = max(MIN_GAP, NOISE_SIGMAS * max(s for k, s in spreads.items() if k != m))
        if others > 0 and value < others * (1.0 - tolerance):
            found.append((m, others, tolerance))
    return found if 2 * len(found) < len(values) else []


def typical(values: Iterable[Optional[object]]) -> Optional[object]:
    """The most common known value (None when none is known)."""
    known = [v for v in values if v is not None]
    return statistics.mode(known) if known else None


def narrower_link(
    link: PcieLink, sibling_links: Iterable[Optional[PcieLink]], what: str = "link"
) -> Optional[str]:
    """``link`` trained narrower than most of its siblings' links, in words; None when it is not."""
    width = typical(s.width for s in sibling_links if s is not None)
    if link.width is not None and isinstance(width, int) and link.width < width:
        return f"its {what} trained at x{link.width} while its siblings' run at x{width}" + (
            f" (capable of x{link.max_width})" if link.max_width else ""
        )
    return None


def _link_cause(gpu: GpuInfo, siblings: list[GpuInfo]) -> Optional[str]:
    """The GPU's link narrower or slower than its siblings' (as trained, or as capable)."""
    link = gpu.link
    if link is None:
        return None
    narrow = narrower_link(link, (s.link for s in siblings))
    if narrow is not None:
        return narrow
    # GPUs lower their link speed at idle (nvidia-smi: the current link generation "may be reduced when
    # the GPU is not in use"): a speed read at idle says nothing, one read under load does.
    speed = typical(s.link.speed_gts for s in siblings if s.link is not None and not s.link_sampled_idle)
    if (
        not gpu.link_sampled_idle
        and link.speed_gts is not None
        and isinstance(speed, float)
        and link.speed_gts < speed
    ):
        return f"its link trained at {link.speed_gts:g} GT/s while its siblings' run at {speed:g} GT/s"
    return None


def _numa_cause(gpu: GpuInfo, siblings: list[GpuInfo], result: BenchResult) -> Optional[str]:
    """The run's host memory on another NUMA node than the GPU (copies and gathers cross the sockets)."""
    if gpu.numa_node is None or gpu.numa_node < 0 or result.bench is Bench.MR:
        return None
    bound = result.settings.numa_node
    if bound is not None and bound != gpu.numa_node:
        return f"the run was bound to NUMA node {bound} while the GPU is on node {gpu.numa_node}"
    siblings_node = typical(s.numa_node for s in siblings)
    if bound is None and isinstance(siblings_node, int) and siblings_node != gpu.numa_node:
        return (
            f"the GPU is on NUMA node {gpu.numa_node}, its siblings on node {siblings_node}, and the run was "
            f"not bound to the GPU's node ({result.settings.numa_reason or 'no --numa placement applied'})"
        )
    return None


def explain(machine: Optional[MachineInfo], outlier: GpuOutlier, result: BenchResult) -> tuple[str, str]:
    """(what the machine facts say made this GPU slower, or "", the advice for it)."""
    gpu = _by_ordinal(machine).get(outlier.gpu)
    if machine is None or gpu is None:
        return "", COMPARE_ADVICE
    siblings = [g for g in machine.gpus if g.cuda_ordinal is not None and g.cuda_ordinal != outlier.gpu]
    busy = busy_reason(gpu)
    if busy:
        return f"it was in use: {busy}", "Run when the GPU is idle, or move the other job."
    link = _link_cause(gpu, siblings)
    if link:
        return link, (
            "Reseat the GPU or its riser and check the slot's lane wiring; `lspci -vv -s "
            f"{gpu.bdf}` shows LnkSta against LnkCap (PCIe Base Spec r5.0 7.5.3.6-7.5.3.8)."
        )
    numa = _numa_cause(gpu, siblings, result)
    if numa:
        return numa, "Run with --numa auto (each GPU's run on its own node) or numactl --membind."
    return "", COMPARE_ADVICE


def _by_ordinal(machine: Optional[MachineInfo]) -> dict[int, GpuInfo]:
    return {g.cuda_ordinal: g for g in machine.gpus if g.cuda_ordinal is not None} if machine else {}


def gpu_outliers(report: "Report", ctx: "Context") -> Iterable[Finding]:
    """PERF-GPU-OUTLIER over a Report (the report rule; :func:`outlier_findings` does the work)."""
    return outlier_findings(report.results, ctx.machine)


def outlier_findings(
    results: "list[BenchResult] | tuple[BenchResult, ...]", machine: Optional[MachineInfo]
) -> Iterable[Finding]:
    """PERF-GPU-OUTLIER: one finding per GPU slower than its siblings, its worst case first."""
    gpus = _by_ordinal(machine)
    for ordinal, cases in corroborated(outliers(results, sibling_rows(results)), lambda o: o.gpu):
        worst = cases[0]
        gpu = gpus.get(ordinal)
        where = f"GPU {ordinal}" + (f" ({gpu.bdf})" if gpu is not None else "")
        cause, advice = explain(machine, worst, results[worst.index])
        evidence = below_evidence(cases, "the other GPUs'")
        if cause:
            evidence.append(ev(f"gpus[{gpu.bdf if gpu else ordinal}]", cause))
        yield finding(
            "PERF-GPU-OUTLIER",
            Severity.WARN,
            f"{where} is slower than its siblings: {worst.label.split()[0]} at {worst.share:.2f} of the "
            f"other GPUs' median" + (f"; {cause}" if cause else ""),
            evidence,
            advice,
            "",
            gpu.bdf if gpu is not None else f"gpu{ordinal}",
        )


RULES = (gpu_outliers,)


def split_by_gpu(
    results: "list[BenchResult] | tuple[BenchResult, ...]",
    judgements: Iterable[Judgement],
    machine: Optional[MachineInfo] = None,
) -> list[GpuShare]:
    """Each GPU's results (per-GPU benches only) with their judgements, in ordinal order.

    A judgement's ``index`` is renumbered to the row's place in its GPU's part, so a per-GPU verdict
    reads the part as it would read a one-GPU Report.
    """
    where: dict[int, tuple[int, int]] = {}  # report index -> (gpu, index in its part)
    parts: dict[int, list[BenchResult]] = {}
    for index, r in enumerate(results):
        gpu = _gpu_of(r)
        if gpu is not None:
            part = parts.setdefault(gpu, [])
            where[index] = (gpu, len(part))
            part.append(r)
    judged: dict[int, list[Judgement]] = {g: [] for g in parts}
    for j in judgements:
        if j.index in where:
            gpu, local = where[j.index]
            judged[gpu].append(dataclasses.replace(j, index=local))
    gpus = _by_ordinal(machine)
    return [
        GpuShare(g, gpus[g].bdf if g in gpus else "", tuple(parts[g]), tuple(judged[g]))
        for g in sorted(parts)
    ]
