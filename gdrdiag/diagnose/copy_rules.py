"""Rules over copy-bench results in a Report (pure; tested from saved Reports).

- PERF-CE-H2D-LOW: the copy engine's large pinned H2D copy reaches less than 85% of the GPU
  link's raw rate. Healthy Gen5 x16 hosts reach ~88% (55.3-57 GB/s of 63.02; perf-anchors
  0 and 2.1), so below 85% something costs bandwidth: a downgraded link, small MPS, an
  IOMMU translating every DMA page, or a remote NUMA node.
- PERF-PAGEABLE-SLOW: pageable copies run at under half the pinned rate; the fix is pinning.
- PERF-SMALL-COPIES: per-call copies need large blocks to approach the coalesced bandwidth;
  report the half-bandwidth block size so users batch or coalesce below it.
"""

from __future__ import annotations

from typing import Iterable, Optional

from gdrdiag.model.findings import Finding, Severity
from gdrdiag.model.machine import MachineInfo
from gdrdiag.model.report import Report
from gdrdiag.model.results import BenchResult, Status
from gdrdiag.units import MiB, format_size

CE_HEALTHY_FRACTION = 0.85
LARGE_COPY = 64 * MiB


def _largest(results: Iterable[BenchResult], key: str, *, direction: str = "h2d") -> Optional[BenchResult]:
    best = None
    for r in results:
        if r.key != key or r.status is not Status.OK or r.params.mode != "async":
            continue
        if r.params.direction != direction:
            continue
        size = r.params.size_bytes
        if isinstance(size, int) and size >= LARGE_COPY and (best is None or size > best.params.size_bytes):  # type: ignore[operator]
            best = r
    return best


def _gpu_raw_rate(machine: Optional[MachineInfo]) -> tuple[Optional[float], str]:
    """The first GPU's capable raw rate (idle links downshift, so capable is the fair yardstick)."""
    if machine is None or not machine.gpus or machine.gpus[0].link is None:
        return None, "GPU link unknown"
    link = machine.gpus[0].link
    rate = link.max_raw_gbytes_per_s or link.raw_gbytes_per_s
    if rate is None:
        return None, "GPU link rate unknown"
    return rate, (f"gpus[0].link = {link.max_speed_gts or link.speed_gts:g} GT/s x{link.max_width or link.width} "
                  f"-> {rate:.2f} GB/s raw")


def ce_h2d_low(report: Report) -> Iterable[Finding]:
    """PERF-CE-H2D-LOW when the copy engine falls short of the link."""
    r = _largest(report.results, "copy_h2d_pinned")
    rate, rate_ev = _gpu_raw_rate(report.machine)
    if r is None or rate is None or r.value is None:
        return
    frac = r.value / rate
    if frac >= CE_HEALTHY_FRACTION:
        return
    yield Finding(
        code="PERF-CE-H2D-LOW",
        severity=Severity.WARN if frac >= 0.5 else Severity.FAIL,
        title=f"pinned H2D copies reach {frac:.0%} of the GPU link's raw rate (healthy: >= 85%)",
        evidence=(f"results[copy_h2d_pinned size={format_size(r.params.size_bytes)}] = {r.value:.2f} GB/s",  # type: ignore[arg-type]
                  rate_ev),
        advice="Check the link (LnkSta vs LnkCap, under load), MaxPayload along the path (256 B or more), "
               "IOMMU mode (passthrough or ATS for DMA-heavy devices) and that the process runs on the "
               "GPU's NUMA node.",
        reference="perf-anchors 0.1 and 2.2 (CE H2D 55.3-57 GB/s on Gen5 x16); diagnostics-kb PROBE-05",
        subject="copy_h2d_pinned",
    )


def pageable_slow(report: Report) -> Iterable[Finding]:
    """PERF-PAGEABLE-SLOW when pageable copies run at under half the pinned rate."""
    pinned = _largest(report.results, "copy_h2d_pinned")
    pageable = _largest(report.results, "copy_h2d_pageable")
    if not (pinned and pageable and pinned.value and pageable.value):
        return
    ratio = pageable.value / pinned.value
    if ratio >= 0.5:
        return
    yield Finding(
        code="PERF-PAGEABLE-SLOW",
        severity=Severity.INFO,
        title=f"copies from pageable memory run at {ratio:.0%} of pinned",
        evidence=(f"copy_h2d_pageable = {pageable.value:.2f} GB/s at {format_size(pageable.params.size_bytes)}",  # type: ignore[arg-type]
                  f"copy_h2d_pinned = {pinned.value:.2f} GB/s at {format_size(pinned.params.size_bytes)}"),  # type: ignore[arg-type]
        advice="Allocate transfer buffers pinned (cudaHostAlloc / cuMemHostAlloc) or register them once "
               "(cudaHostRegister) and reuse them; pinning per transfer costs more than it saves "
               "(copy-bench --parts pinning).",
        reference="CUDA C++ Best Practices Guide, Pinned Memory",
        subject="copy_h2d_pageable",
    )


def small_copies(report: Report) -> Iterable[Finding]:
    """PERF-SMALL-COPIES: the block size per-call copies need for half the coalesced bandwidth."""
    summary = next((r for r in report.results if r.key == "copy_blocks_summary" and r.status is Status.OK), None)
    if summary is None:
        return
    half = summary.metrics.half_bandwidth_block_bytes_per_call
    batched = summary.metrics.half_bandwidth_block_bytes_batched
    if half is None:
        return
    yield Finding(
        code="PERF-SMALL-COPIES",
        severity=Severity.INFO,
        title=f"one copy call per block reaches half the coalesced bandwidth only at ~{format_size(round(half))} "
              "blocks",
        evidence=(f"copy_blocks_summary.half_bandwidth_block_bytes_per_call = {half:.0f}",
                  f"copy_blocks_summary.half_bandwidth_block_bytes_batched = "
                  f"{'never/unknown' if batched is None else f'{batched:.0f}'}"),
        advice="Below that size, coalesce blocks into one region, use cuMemcpyBatchAsync (CUDA 12.8+), or "
               "gather with a kernel reading mapped pinned memory.",
        reference="perf-anchors 0.5 (1.3-3.5 us per cudaMemcpyAsync call)",
        subject="copy_blocks",
    )


RULES = [ce_h2d_low, pageable_slow, small_copies]
