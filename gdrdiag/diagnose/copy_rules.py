"""Rules over copy-bench results in a Report (pure; tested from saved Reports).

- PERF-CE-H2D-LOW: the copy engine's large pinned H2D copy reaches less than
  ``thresholds.CE_OF_MODEL_HEALTHY`` (90%) of what the path model (:mod:`gdrdiag.pathmodel`) expects
  of that row: this link with its MaxPayload and MaxReadReq, at the copy's size (a Gen5 x16 link
  at MPS 256 gives ~58 GB/s of payload; healthy hosts measure 55-57). A host with MPS 128 is
  judged against its own, lower, expectation. Below it something else costs bandwidth: a link
  downgraded under load, an IOMMU translating every DMA page, or a remote NUMA node; the CAUSE-*
  findings weigh which.
- PERF-PAGEABLE-SLOW: pageable copies run at under half the pinned rate; the fix is pinning.
- PERF-SMALL-COPIES: per-call copies need large blocks to approach the coalesced bandwidth;
  report the half-bandwidth block size so users batch or coalesce below it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterable, NamedTuple, Optional

from gdrdiag.diagnose.context import Context
from gdrdiag.diagnose.thresholds import CE_OF_MODEL_HEALTHY, LARGE_COPY_BYTES
from gdrdiag.model.findings import Finding, Severity
from gdrdiag.model.path import Judgement
from gdrdiag.model.report import Report
from gdrdiag.model.results import BenchResult, Status, is_copy
from gdrdiag.units import format_size

if TYPE_CHECKING:  # pragma: no cover
    from gdrdiag.model.results import CopyResult

LARGE_COPY = LARGE_COPY_BYTES


class _Largest(NamedTuple):
    """The largest OK async copy of a key, and its size (known: only sized rows compete)."""

    result: CopyResult
    size_bytes: int


def _largest(results: Iterable[BenchResult], key: str, *, direction: str = "h2d") -> Optional[_Largest]:
    best: Optional[_Largest] = None
    for r in results:
        if not is_copy(r) or r.key != key or r.status is not Status.OK or r.params.mode != "async":
            continue
        if r.params.direction != direction:
            continue
        size = r.params.size_bytes
        if isinstance(size, int) and size >= LARGE_COPY and (best is None or size > best.size_bytes):
            best = _Largest(r, size)
    return best


def pcie_judgement(report: Report, ctx: Context, key: str, direction: str = "h2d") -> Optional[Judgement]:
    """The path model's judgement of the largest async ``key`` copy, when a PCIe link bounds it.

    None when there is no such row or the model judged it by something else (a measured yardstick
    of the same Report when the link is unknown): the copy rules speak of the PCIe model only.
    """
    judged = _judged_largest(report, ctx, key, direction)
    return judged[1] if judged is not None else None


def _judged_largest(
    report: Report, ctx: Context, key: str, direction: str
) -> Optional[tuple[_Largest, Judgement]]:
    """The largest async ``key`` copy with its judgement, when a PCIe link bounds it (pcie_judgement)."""
    largest = _largest(report.results, key, direction=direction)
    if largest is None:
        return None
    j = next((ctx.judgement(i) for i, row in enumerate(report.results) if row is largest.result), None)
    if j is None or j.ratio is None or not j.expected_gbytes_per_s or j.bound_pcie_raw_gbytes_per_s is None:
        return None
    return largest, j


def ce_h2d_low(report: Report, ctx: Context) -> Iterable[Finding]:
    """PERF-CE-H2D-LOW when the copy engine falls short of the path model for this link."""
    judged = _judged_largest(report, ctx, "copy_h2d_pinned", "h2d")
    if judged is None:
        return
    largest, j = judged
    if j.ratio is None or j.ratio >= CE_OF_MODEL_HEALTHY:
        return
    frac = j.ratio
    yield Finding(
        code="PERF-CE-H2D-LOW",
        severity=Severity.WARN if frac >= 0.5 else Severity.FAIL,
        title=f"pinned H2D copies reach {frac:.0%} of what the PCIe model gives this link "
        f"(healthy: >= {CE_OF_MODEL_HEALTHY:.0%})",
        evidence=(
            f"results[copy_h2d_pinned size={format_size(largest.size_bytes)}] = "
            f"{largest.result.value:.2f} GB/s",
            expected_line(j),
        ),
        advice="The CAUSE-* findings weigh the candidates for this machine (link under load, IOMMU mode, "
        "NUMA placement) and name the experiment that decides.",
        subject="copy_h2d_pinned",
    )


def expected_line(j: Judgement) -> str:
    """One evidence line: what the path model expects of the judged row, and from which bound."""
    return f"expected {j.expected_gbytes_per_s:.2f} GB/s at this size ({j.bound}; {j.per_op_source})"


def pageable_slow(report: Report) -> Iterable[Finding]:
    """PERF-PAGEABLE-SLOW when pageable copies run at under half the pinned rate."""
    pinned = _largest(report.results, "copy_h2d_pinned")
    pageable = _largest(report.results, "copy_h2d_pageable")
    if pinned is None or pageable is None or not pinned.result.value or not pageable.result.value:
        return
    ratio = pageable.result.value / pinned.result.value
    if ratio >= 0.5:
        return
    yield Finding(
        code="PERF-PAGEABLE-SLOW",
        severity=Severity.INFO,
        title=f"copies from pageable memory run at {ratio:.0%} of pinned",
        evidence=(
            f"copy_h2d_pageable = {pageable.result.value:.2f} GB/s at {format_size(pageable.size_bytes)}",
            f"copy_h2d_pinned = {pinned.result.value:.2f} GB/s at {format_size(pinned.size_bytes)}",
        ),
        advice="Allocate transfer buffers pinned (cudaHostAlloc / cuMemHostAlloc) or register them once "
        "(cudaHostRegister) and reuse them; pinning per transfer costs more than it saves "
        "(copy-bench --parts pinning).",
        reference="CUDA C++ Best Practices Guide, Pinned Memory",
        subject="copy_h2d_pageable",
    )


def small_copies(report: Report, ctx: Context) -> Iterable[Finding]:
    """PERF-SMALL-COPIES: the block size per-call copies need for half the coalesced bandwidth."""
    summary = next(
        (
            r
            for r in report.results
            if is_copy(r) and r.key == "copy_blocks_summary" and r.status is Status.OK
        ),
        None,
    )
    if summary is None:
        return
    half = summary.metrics.half_bandwidth_block_bytes_per_call
    batched = summary.metrics.half_bandwidth_block_bytes_batched
    if half is None:
        return
    yield Finding(
        code="PERF-SMALL-COPIES",
        severity=Severity.INFO,
        title=f"one copy call per block reaches half the coalesced bandwidth only at "
        f"~{format_size(round(half))} "
        "blocks",
        evidence=(
            f"copy_blocks_summary.half_bandwidth_block_bytes_per_call = {half:.0f}",
            f"copy_blocks_summary.half_bandwidth_block_bytes_batched = "
            f"{'never/unknown' if batched is None else f'{batched:.0f}'}",
        ),
        advice="Below that size, coalesce blocks into one region, use cuMemcpyBatchAsync (CUDA 12.8+), or "
        "gather with a kernel reading mapped pinned memory.",
        reference="",
        subject="copy_blocks",
    )


# pageable_slow (PERF-PAGEABLE-SLOW) is the symptom of CAUSE-PAGEABLE-MEMORY (diagnose/causes_path.py), which
# judges every direction and size against the path; it stays importable for the catalogue.
RULES = [ce_h2d_low, small_copies]
