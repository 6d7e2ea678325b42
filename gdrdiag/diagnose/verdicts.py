"""The few numbers each bench's verdict block leads with, derived from its typed results (pure).

A bench prints hundreds of rows; its verdict says what they add up to before the detail:

- copy-bench: pinned H2D and D2H at the largest size measured, their fraction of what the PCIe
  model gives this GPU's link (when the machine is known), both ways at once, pageable over pinned,
  and the block sizes at which per-block and batched copies reach half the coalesced rate;
- gather-bench: the best kernel of the ladder, its fraction of the copy engine measured in the
  same run and of the PCIe model's ceiling for the layout;
- mr-bench: the best RDMA WRITE rate per memory kind, and relaxed ordering's on/off ratio
  where an A/B pair was measured;
- every bench: how many cases were WAIVED, and the first reason.

The records are in ``model/verdict.py``; formatting is ``render/verdict.py``'s business.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterable, Optional, Sequence

from gdrdiag.diagnose._common import shown
from gdrdiag.model.path import Judgement
from gdrdiag.model.results import BenchResult, Status, is_copy, is_gather, is_mr
from gdrdiag.model.verdict import CopyVerdict, GatherVerdict, MrBest, MrLatency, MrVerdict, RoRatio, Waived

if TYPE_CHECKING:  # pragma: no cover
    from gdrdiag.diagnose.rdma_rules import RoPair
    from gdrdiag.model.results import CopyResult, MrResult


def waived_summary(results: Iterable[BenchResult]) -> Waived:
    """How many results are WAIVED (with the first reason) and how many ERROR."""
    results = list(results)
    waived = [r for r in results if r.status is Status.WAIVED]
    errors = sum(1 for r in results if r.status is Status.ERROR)
    return Waived(count=len(waived), reason=(waived[0].reason or "") if waived else "", errors=errors)


def _largest(results: Sequence[CopyResult], key: str) -> Optional[CopyResult]:
    """The OK result of ``key`` at the largest size (async timing preferred: CUDA events)."""
    ok = [r for r in results if r.key == key and r.status is Status.OK and r.value is not None]
    if not ok:
        return None
    return max(ok, key=lambda r: (r.params.size_bytes or 0, r.params.mode == "async"))


def _pcie_expected(
    results: Sequence[BenchResult], judgements: Sequence[Judgement], row: Optional[BenchResult]
) -> Optional[float]:
    """What the path model expects of ``row`` (its Judgement), when a PCIe link bounds it; else None."""
    if row is None:
        return None
    index = next((i for i, r in enumerate(results) if r is row), None)
    j = next((j for j in judgements if j.index == index), None)
    if j is None or j.ratio is None or j.bound_pcie_raw_gbytes_per_s is None:
        return None
    return j.expected_gbytes_per_s


def copy_verdict(results: Sequence[BenchResult], judgements: Sequence[Judgement] = ()) -> CopyVerdict:
    """The copy-bench verdict; the model fractions are the path model's judgements of the two rows.

    ``judgements`` are ``diagnose(report).judgements`` of a Report whose results are ``results``
    (same order); without them (no machine facts) the model is unknown.
    """
    copies = [r for r in results if is_copy(r)]
    h2d = _largest(copies, "copy_h2d_pinned")
    d2h = _largest(copies, "copy_d2h_pinned")
    size = h2d.params.size_bytes if h2d is not None else None
    mode = h2d.params.mode if h2d is not None else None
    # The same size and mode as the pinned number it is divided by (sync and async copies of one
    # size both exist; the ratio must compare like with like, as PERF-PAGEABLE-SLOW does).
    pageable = [
        r
        for r in copies
        if r.key == "copy_h2d_pageable"
        and r.status is Status.OK
        and r.params.size_bytes == size
        and r.params.mode == mode
    ]
    summary = next((r for r in copies if r.key == "copy_blocks_summary" and r.status is Status.OK), None)
    blocks = [
        r.params.block_bytes for r in copies if r.key == "copy_blocks_coalesced" and r.params.block_bytes
    ]
    return CopyVerdict(
        size_bytes=size,
        h2d_gbps=h2d.value if h2d else None,
        d2h_gbps=d2h.value if d2h else None,
        model_gbps=_pcie_expected(results, judgements, h2d),
        pageable_h2d_gbps=max((r.value for r in pageable if r.value is not None), default=None),
        waived=waived_summary(r for r in results if r.key.startswith("copy_")),
        pageable_d2h_gbps=_like(copies, "copy_d2h_pageable", d2h),
        bidir_gbps=_like(copies, "copy_bidir_pinned", h2d),
        half_block_per_call=summary.metrics.half_bandwidth_block_bytes_per_call if summary else None,
        half_block_batched=summary.metrics.half_bandwidth_block_bytes_batched if summary else None,
        largest_block=max(blocks) if summary and blocks else None,
        d2h_model_gbps=_pcie_expected(results, judgements, d2h),
    )


def _like(results: Sequence[CopyResult], key: str, like: Optional[CopyResult]) -> Optional[float]:
    """The best OK ``key`` at the size and mode of ``like`` (a ratio compares like with like)."""
    if like is None:
        return None
    values = [
        r.value
        for r in results
        if r.key == key
        and r.status is Status.OK
        and r.value is not None
        and r.params.size_bytes == like.params.size_bytes
        and (r.params.mode == like.params.mode or key.startswith("copy_bidir"))
    ]
    return max(values, default=None)


def gather_verdict(results: Sequence[BenchResult]) -> GatherVerdict:
    """The gather-bench verdict: the fastest kernel of the ladder (sweeps are detail)."""
    gathers = [r for r in results if is_gather(r)]
    ladder = [
        r
        for r in gathers
        if r.key.startswith("gather_")
        and r.key != "gather_ce_reference"
        and r.status is Status.OK
        and r.value is not None
        and (r.settings is None or r.settings.sweep in (None, "ladder"))
    ]
    best = max(ladder, key=lambda r: r.value or 0.0, default=None)
    ce = [r for r in gathers if r.key == "gather_ce_reference" and r.status is Status.OK]
    return GatherVerdict(
        best_kernel=str(best.params.kernel or best.key) if best else None,
        best_gbps=best.value if best else None,
        ce_gbps=(best.metrics.ce_gbytes_per_s if best else None) or (ce[0].value if ce else None),
        best_ratio_to_ce=best.metrics.ratio_to_ce if best else None,
        # The model for the bytes this kernel reads where known, else the layout's model.
        model_ratio_to_ce=(best.metrics.ceiling_ratio_to_ce or best.metrics.model_ratio_to_ce)
        if best
        else None,
        record_bytes=best.params.record_bytes if best else None,
        waived=waived_summary(r for r in results if r.key.startswith("gather_")),
    )


def mr_verdict(results: Sequence[BenchResult], pairs: Sequence[RoPair] = ()) -> MrVerdict:
    """The mr-bench verdict from its results and the RO A/B pairs ``rdma_rules.ro_pairs`` found."""
    mrs = [r for r in results if is_mr(r)]
    best: dict[str, MrResult] = {}
    for r in mrs:
        if not r.key.startswith("rdma_write_") or r.status is not Status.OK or r.value is None:
            continue
        if r.params.mode != "bw" or r.params.role == "server":
            continue
        memory = shown(r.params.memory)
        if memory not in best or r.value > (best[memory].value or 0.0):
            best[memory] = r
    return MrVerdict(
        best=tuple(
            MrBest(
                shown(r.params.memory),
                shown(r.params.reg_path),
                r.params.size_bytes,
                r.value or 0.0,
                r.provider,
            )
            for r in best.values()
        ),
        ro=tuple(
            RoRatio(
                shown(p.off.params.memory), shown(p.off.params.reg_path), p.verdict.ratio, p.verdict.words
            )
            for p in pairs
        ),
        software=any(r.provider == "soft" for r in results if r.status is Status.OK),
        waived=waived_summary(results),
        latency=tuple(
            MrLatency(
                shown(r.params.memory),
                shown(r.params.reg_path),
                r.params.size_bytes,
                r.metrics.lat_p50_us,
                r.metrics.lat_p99_us,
                r.provider,
            )
            for r in mrs
            if r.key.startswith("rdma_write_lat_") and r.status is Status.OK
        ),
    )
