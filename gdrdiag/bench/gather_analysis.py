"""Gather-bench over its own results: best kernel, SM budget, record-size summary, the model's columns.

Pure functions of results and layouts (no GPU), computed once here so renderers and rules only read them.
"""

from __future__ import annotations

from typing import Optional, Sequence

from gdrdiag.bench.gather_kernels import (
    BEST_CANDIDATES,
    KERNELS,
    KernelSpec,
    flat_records_per_load,
    planned_records_per_step,
)
from gdrdiag.bench.gather_layout import Layout, planned_read_plan, read_plan, segment_histogram
from gdrdiag.bench.gather_requests import plan_efficiency, planned_sector_plan
from gdrdiag.model.results import BenchResult, Status
from gdrdiag.pathmodel import pcie as pcie_model


def fmt_ratio(v: Optional[float]) -> str:
    return "-" if v is None else f"{v:.3f}"


def pick_best(results: Sequence[BenchResult], tie: float = 0.005) -> Optional[BenchResult]:
    """The fastest verified result; within ``tie`` of it, the earliest of BEST_CANDIDATES wins.

    Kernels that measure the same (lines and lines-l2pf) would otherwise swap places from run to
    run on noise.
    """
    ok = [r for r in results if r.status is Status.OK and r.value]
    if not ok:
        return None
    top = max(r.value for r in ok)
    near = [r for r in ok if r.value >= top * (1 - tie)]
    order = {name: i for i, name in enumerate(BEST_CANDIDATES)}
    return min(near, key=lambda r: (order.get(str(r.params.kernel), len(order)), -r.value))


def min_sms_for_fraction(points: Sequence[tuple[int, float]], fraction: float = 0.95) -> Optional[int]:
    """Smallest SM count whose GB/s reaches ``fraction`` of the all-SM (largest count) GB/s."""
    if not points:
        return None
    pts = sorted(points)
    full = pts[-1][1]
    for sms, gbps in pts:
        if gbps >= fraction * full:
            return sms
    return pts[-1][0]


PLANNED_KERNELS = ("planned-flat", "planned-lines")  # the small-record paths whose cost the model adds


def record_size_summary(
    results: Sequence[BenchResult], kernels: Sequence[str] = PLANNED_KERNELS
) -> list[dict]:
    """Per record size of the record-size sweep: the best kernel against its model ceiling.

    For each (pattern, R): the fastest verified kernel, its ratio to CE, its ceiling
    (``ceiling_ratio_to_ce``), best / ceiling, and for one of ``kernels`` (the small-record
    paths: the best kernel where it is one of them, else the first of them measured) the model's
    prediction with its sort cost (``model_kernel_ratio_to_ce``) against its measurement.
    """
    groups: dict[tuple[str, int], list[BenchResult]] = {}
    for r in results:
        if r.settings.sweep == "record-size" and r.status is Status.OK and r.value:
            groups.setdefault((str(r.params.pattern), int(r.params.record_bytes)), []).append(r)
    rows = []
    for (pattern, R), rs in sorted(groups.items()):
        best = max(rs, key=lambda r: r.value)
        ratio = best.metrics.ratio_to_ce
        ceiling = best.metrics.ceiling_ratio_to_ce
        row = {
            "pattern": pattern,
            "record_bytes": R,
            "best_kernel": best.params.kernel,
            "best_ratio_to_ce": ratio,
            "ceiling_ratio_to_ce": ceiling,
            "best_over_ceiling": ratio / ceiling if ratio and ceiling else None,
        }
        named = [r for k in kernels for r in rs if str(r.params.kernel) == k]
        mine = best if str(best.params.kernel) in kernels else next(iter(named), None)
        if mine is not None:
            m = mine.metrics
            pred, meas = m.model_kernel_ratio_to_ce, m.ratio_to_ce
            row.update(
                kernel=str(mine.params.kernel),
                kernel_ratio_to_ce=meas,
                kernel_predicted_ratio_to_ce=pred,
                kernel_predicted_over_measured=pred / meas if pred and meas else None,
            )
        rows.append(row)
    return rows


def _bytes_per_request(R: int, n: int, n_read: int, pred: pcie_model.Prediction) -> float:
    """Delivered bytes per read request: n records of R bytes for n_read records' requests."""
    requests = pred.requests_per_record * n_read
    return R * n / requests if requests else 0.0


REQUEST_RATE_KERNEL = "warp"  # one request per 16-B record (a warp per record, lane 0 loads it)


def measured_request_rate(gbytes_per_s: float, layout: Layout, src, link: pcie_model.LinkParams) -> float:
    """G read requests/s of a warp-kernel gather of ``layout`` at ``gbytes_per_s``: records/s x requests each.

    The requests per record are the model's count for the warp kernel over these indices (one
    per 16-B record; back-to-back repeats of a slot, an L1 hit, send none).
    """
    R = layout.record_bytes
    hist, n_read = read_plan(src, layout, KERNELS[REQUEST_RATE_KERNEL])
    pred = pcie_model.predict(hist, R, "sector", line_aware=False, p=link)
    return gbytes_per_s / R * pred.requests_per_record * n_read / layout.records


def _planned_model(
    spec: KernelSpec, layout: Layout, src, link: pcie_model.LinkParams, ce_gbps, group: int, ce_fixed_us=None
):
    """A planned kernel: (prediction of its reads, ratio to CE capped at the request rate, slots read, cap).

    Its exact read plan: each distinct slot crosses PCIe once (native/gather.cu DEDUPE), priced
    sector by sector (gather_requests): planned-flat's warp load covers 512 / R whole records,
    planned-lines' step 8 or 32 records, each segment its own instructions. The request count is
    exact, so the read-request rate caps the plan too.
    """
    R, n = layout.record_bytes, layout.records
    group = group or (flat_records_per_load(R) if spec.flat else planned_records_per_step(R))
    plan = planned_sector_plan(src, layout, group, spec.flat)
    if plan is not None:
        eff = plan_efficiency(plan, R, link)
        pred = pcie_model.prediction_of(eff, spec.model_mode, line_aware=True, p=link)
        n_read = plan.reads
    else:  # odd layouts: both kernels read record by record (warp_record), every record
        hist, n_read = planned_read_plan(src, layout, group)
        pred = pcie_model.predict(hist, R, spec.model_mode, line_aware=spec.line_aware, p=link)
    model, cap = _timed(
        pred.ratio_to_ce * n / max(1, n_read),
        _bytes_per_request(R, n, n_read, pred),
        layout,
        link,
        ce_gbps,
        ce_fixed_us,
    )
    return pred, model, n_read, cap


def _timed(
    ratio: float,
    bytes_per_request: Optional[float],
    layout: Layout,
    link: pcie_model.LinkParams,
    ce_gbps: Optional[float],
    ce_fixed_us: Optional[float],
) -> tuple[float, Optional[float]]:
    """(the batch's ratio to CE, the request cap) for a read plan at ``ratio``; no cap without a count."""
    cap = None if bytes_per_request is None else pcie_model.request_cap(bytes_per_request, ce_gbps, link)
    return pcie_model.batch_ratio(ratio, cap, layout.nbytes, ce_gbps, ce_fixed_us), cap


def model_metrics(
    spec: KernelSpec,
    layout: Layout,
    src,
    link: pcie_model.LinkParams,
    ce_gbps: Optional[float] = None,
    plan_us: Optional[float] = None,
    reuse: int = 1,
    group: int = 0,
    ce_fixed_us: Optional[float] = None,
) -> dict[str, Optional[float]]:
    """The model's columns for one gather row (pure: tested without a GPU).

    ``model_ratio_to_ce``: the link-bound ratio for the bytes the kernel reads, in its order
    (every record once; planned-lines: every distinct slot once, its exact read plan).
    ``ceiling_ratio_to_ce``: the most the model allows the kernel (for kernels with L1-allocating
    loads, the larger of that and the estimate with every back-to-back repeat an L1 hit).
    ``model_kernel_ratio_to_ce`` (sort-first kernels, given the measured plan time): the ceiling
    with the sort's cost per batch added, ``plan_us / reuse`` (pcie_model.ratio_with_fixed_cost).
    Given the CE's GB/s, the read-request rate caps the kernels whose request count is exact
    (``request_cap_ratio_to_ce``, pcie_model.request_cap, pcie_model.batch_ratio): what binds 16-64-B reads.
    Those are the kernels that read in the given order and the planned ones, whose requests
    are counted sector by sector (gather_requests). Not sorted-lines: its repeats are left to
    L1, so its count is an upper bound and a cap made from it would be a floor.
    With ``ce_fixed_us`` (the CE reference's cost per copy, measured in the run) every ratio is
    a batch's time against the CE's (pcie_model.batch_ratio): the link's rate without the CE's
    cost per copy, the kernel's own fixed cost instead.
    """
    import numpy as np

    if spec.model_mode is None:
        return {"model_ratio_to_ce": None}
    out: dict[str, Optional[float]] = {}
    R, n = layout.record_bytes, layout.records
    if spec.dedupe:
        pred, model, n_read, cap = _planned_model(spec, layout, src, link, ce_gbps, group, ce_fixed_us)
        out["request_cap_ratio_to_ce"] = cap
        out["model_ratio_to_ce"] = model
        out["records_read_fraction"] = n_read / n
        out["model_ratio_if_repeats_hit_l1"] = model
        ceiling = model
    else:
        # Link-bound model: every record read once, in the order the kernel reads them.
        order = np.sort(np.asarray(src)) if spec.presort else src
        pred = pcie_model.predict(
            segment_histogram(order, layout, spec), R, spec.model_mode, line_aware=spec.line_aware, p=link
        )
        exact = not spec.presort  # in the given order runs rarely share a line: the count holds
        model, cap = _timed(
            pred.ratio_to_ce,
            _bytes_per_request(R, n, n, pred) if exact else None,
            layout,
            link,
            ce_gbps,
            ce_fixed_us,
        )
        if exact:
            out["request_cap_ratio_to_ce"] = cap
        out["model_ratio_to_ce"] = model
        # If back-to-back repeats of a slot hit L1, fewer bytes cross PCIe than are delivered.
        read_hist, n_read = read_plan(src, layout, spec)
        read_pred = pcie_model.predict(read_hist, R, spec.model_mode, line_aware=spec.line_aware, p=link)
        out["records_read_fraction"] = n_read / n
        per_read = _bytes_per_request(R, n, n_read, read_pred) if exact else None
        l1_model, _ = _timed(
            read_pred.ratio_to_ce * n / max(1, n_read), per_read, layout, link, ce_gbps, ce_fixed_us
        )
        out["model_ratio_if_repeats_hit_l1"] = l1_model
        ceiling = model
        if spec.l1_dedupe:
            ceiling = max(ceiling, out["model_ratio_if_repeats_hit_l1"])
    out["model_gbytes_per_s"] = model * ce_gbps if ce_gbps else None
    out["ceiling_ratio_to_ce"] = ceiling
    if spec.presort and plan_us is not None and ce_gbps:
        out["model_kernel_ratio_to_ce"] = pcie_model.ratio_with_fixed_cost(
            ceiling, layout.nbytes, ce_gbps, plan_us / max(1, reuse)
        )
    out["model_efficiency"] = pred.efficiency
    out["partial_line_loss"] = pred.partial_line_loss
    out["completions_per_record"] = pred.completions_per_record
    # The layout's own loss, read the best SM way (line-aware), for ALIGN rules.
    best = pcie_model.predict(
        segment_histogram(src, layout, KERNELS["lines"]), R, "sector", line_aware=True, p=link
    )
    out["layout_partial_line_loss"] = best.partial_line_loss
    out["layout_model_ratio_to_ce"] = best.ratio_to_ce
    return out
