"""Findings from gather-bench results: ALIGN-* (layout) and PERF-GATHER-* (measurement vs model).

Pure functions of ``BenchResult`` lists (saved Reports work the same); the PCIe model they call
(gdrdiag/pathmodel/pcie.py) is pure too. Codes are stable:

- ``ALIGN-01`` (WARN): the layout loses more than 5% to partial-line reads even when read the
  best SM way (line-aware); advice lists the layout changes the model says recover it.
- ``ALIGN-02`` (WARN): records are not 16-B aligned (stride or base offset), so 16-B vector loads
  need two chunks and a shift per destination chunk.
- ``ALIGN-03`` (INFO): contiguous runs long enough that one copy-engine call per run would beat
  the measured gather (t = t_call + bytes / BW, docs/kb/gather.md#align-03).
- ``PERF-GATHER-01`` (WARN): a gather reached less than 85% of the model's ratio to CE for its
  layout (docs/kb/gather.md#perf-gather-01).
- ``PERF-GATHER-02`` (WARN): the copy-engine reference itself is below
  ``thresholds.CE_OF_MODEL_HEALTHY`` of what the PCIe model gives for its link, MPS and MRRS (the
  one copy-engine threshold, shared with ``PERF-CE-H2D-LOW``), so every ratio is against a weak
  reference.
- ``PERF-GATHER-03`` (INFO, WARN above 25% of the SMs): how many SMs the best kernel needs for 95%
  of its all-SM bandwidth (docs/kb/gather.md#perf-gather-03).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterable, Optional, Sequence

from gdrdiag.diagnose._common import ev
from gdrdiag.diagnose.catalogue import with_reference
from gdrdiag.diagnose.context import Context
from gdrdiag.diagnose.thresholds import CE_OF_MODEL_HEALTHY
from gdrdiag.model.findings import Finding, Severity
from gdrdiag.model.params import GatherParams
from gdrdiag.model.results import BenchResult, Status, is_gather
from gdrdiag.pathmodel import pcie as pcie_model

if TYPE_CHECKING:  # pragma: no cover
    from gdrdiag.model.report import Report
    from gdrdiag.model.results import GatherResult

ALIGN_LOSS_THRESHOLD = 0.05
ALIGN_GAIN_THRESHOLD = 0.05
PERF_MODEL_FRACTION = 0.85
SM_BUDGET_WARN_FRACTION = 0.25
CE_CALL_OVERHEAD_US = 2.0  # ~1.3-3.5 us per cudaMemcpyAsync measured by copy-bench (docs/benchmarks.md)

CE_KEY = "gather_ce_reference"
_REF_KB = ""


def _gathers(results: Iterable[BenchResult]) -> list[GatherResult]:
    """The gather kernels' results (the copy-engine reference they are divided by left out)."""
    return [r for r in results if is_gather(r) and r.key.startswith("gather_") and r.key != CE_KEY]


def _layout_text(p: GatherParams) -> str:
    return (
        f"R={p.record_bytes} B, stride {p.stride_bytes} B, base offset {p.base_offset_bytes} B, "
        f"{p.pattern} indices"
    )


def _link_params(p: GatherParams) -> pcie_model.LinkParams:
    try:
        return pcie_model.LinkParams(
            mps=int(p.mps_bytes or 256), mrrs=int(p.mrrs_bytes or 4096), rcb=int(p.rcb_bytes or 128)
        )
    except (TypeError, ValueError):
        return pcie_model.LinkParams()


def _num(v: object) -> Optional[float]:
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None


def align_findings(results: Sequence[BenchResult]) -> list[Finding]:
    """ALIGN-01/02/03, one per distinct layout."""
    out: list[Finding] = []
    seen: set = set()
    for r in _gathers(results):
        if r.status is not Status.OK:
            continue
        p = r.params
        R, stride, base = (int(v or 0) for v in (p.record_bytes, p.stride_bytes, p.base_offset_bytes))
        layout = (R, stride, base, p.pattern)
        if R <= 0 or stride < R or layout in seen:
            continue
        seen.add(layout)
        out.extend(_partial_lines(r, R, stride, base))
        out.extend(_misaligned(r, R, stride, base))
        out.extend(_runs_for_the_copy_engine(r, R))
    return out


def _partial_lines(r: GatherResult, R: int, stride: int, base: int) -> list[Finding]:
    """ALIGN-01: the layout loses more than ALIGN_LOSS_THRESHOLD of the link to partial 128-B lines."""
    p = r.params
    link, slots = _link_params(p), int(p.slots or 1 << 20)
    loss = _num(r.metrics.layout_partial_line_loss)
    pattern = str(p.pattern or "random")
    if loss is None and pattern == "random":
        loss = pcie_model.predict_random(
            R, stride, base, slots, "sector", line_aware=True, p=link
        ).partial_line_loss
    if loss is None or loss <= ALIGN_LOSS_THRESHOLD or pattern not in ("random", "sorted"):
        return []
    alts = pcie_model.best_alternatives(R, stride, base, slots, "sector", line_aware=True, p=link)
    now = alts["as_is"] or 0.0
    better = now * (1 + ALIGN_GAIN_THRESHOLD)
    advice = []
    if pcie_model.padded_stride(R) != stride and alts["padded_stride"] and alts["padded_stride"] > better:
        advice.append(
            f"pad the stride to {pcie_model.padded_stride(R)} B and keep the table 128-B aligned "
            f"(model: {now:.3f} -> {alts['padded_stride']:.3f} of CE)"
        )
    if base % pcie_model.LINE and alts["aligned_base"] and alts["aligned_base"] > better:
        advice.append(
            f"start the table on a 128-B boundary instead of +{base} B "
            f"(model: {now:.3f} -> {alts['aligned_base']:.3f} of CE)"
        )
    if alts["runs_of_8"] and alts["runs_of_8"] > better:
        advice.append(
            "sort or batch the indices so neighbouring records are gathered together and read "
            f"as one range by the line-aware kernel (model for runs of 8: {alts['runs_of_8']:.3f} "
            "of CE)"
        )
    if not advice:
        advice.append(
            f"no layout change recovers it: {R}-B records always cover a partial 128-B line; "
            "gather contiguous runs with the copy engine where the indices allow"
        )
    subject = _layout_text(p)
    return [
        Finding(
            code="ALIGN-01",
            severity=Severity.WARN,
            title=f"layout loses {loss:.1%} of the link to partial-line reads",
            evidence=(
                f"results[{r.key}].params = {subject}",
                f"results[{r.key}].metrics.layout_partial_line_loss = {loss:.3f}",
                f"model ratio to CE as laid out = {now:.3f}",
            ),
            advice="; ".join(advice),
            reference=_REF_KB,
            subject=subject,
        )
    ]


def _misaligned(r: GatherResult, R: int, stride: int, base: int) -> list[Finding]:
    """ALIGN-02: records that are not 16-B aligned cost the 16-B load fast path."""
    if not (stride % 16 or base % 16):
        return []
    return [
        Finding(
            code="ALIGN-02",
            severity=Severity.WARN,
            title="records are not 16-byte aligned, so 16-B loads need two chunks and a shift",
            evidence=(
                f"results[{r.key}].params.stride_bytes = {stride}",
                f"results[{r.key}].params.base_offset_bytes = {base}",
            ),
            advice=(
                f"use a stride that is a multiple of 16 (e.g. {-(-stride // 16) * 16} B, or "
                f"{pcie_model.padded_stride(R)} B for whole lines) and a 16-B aligned table base"
            ),
            reference="native/gather.cu (fast paths need 16-B aligned records); CUDA Best Practices, "
            "coalesced access",
            subject=_layout_text(r.params),
        )
    ]


def _runs_for_the_copy_engine(r: GatherResult, R: int) -> list[Finding]:
    """ALIGN-03: runs of K records are long enough that one copy-engine call per run beats the kernel."""
    run_k = _run_length(str(r.params.pattern or "random"))
    ratio = _num(r.metrics.ratio_to_ce)
    ce = _num(r.metrics.ce_gbytes_per_s)
    if not (run_k and ratio is not None and ce):
        return []
    ce_ratio = pcie_model.ce_run_ratio(run_k * R, ce, CE_CALL_OVERHEAD_US)
    if ce_ratio <= ratio + 0.05:
        return []
    return [
        Finding(
            code="ALIGN-03",
            severity=Severity.INFO,
            title=f"runs of {run_k} records ({run_k * R} B) are long enough for the copy engine",
            evidence=(
                f"results[{r.key}].metrics.ratio_to_ce = {ratio:.3f}",
                f"one cuMemcpyAsync per run at {CE_CALL_OVERHEAD_US} us per call: {ce_ratio:.3f} of CE",
            ),
            advice="copy each run with the copy engine (cuMemcpyBatchAsync where available) and gather "
            "only the short remainder with the kernel",
            reference="",
            subject=_layout_text(r.params),
        )
    ]


def _run_length(pattern: str) -> Optional[int]:
    if pattern.startswith("runs:"):
        try:
            return int(pattern.split(":", 1)[1])
        except ValueError:
            return None
    return None


def _layout_key(p: GatherParams) -> tuple:
    """What a kernel ladder shares: the records and how they lie, not the kernel or the SM limit."""
    return (p.record_bytes, p.stride_bytes, p.base_offset_bytes, p.pattern, p.slots, p.records, p.sm_limit)


def perf_findings(results: Sequence[BenchResult]) -> list[Finding]:
    """PERF-GATHER-01/02/03."""
    return [*_below_model(results), *_weak_copy_engine(results), *_sm_budget(results)]


def _below_model(results: Sequence[BenchResult]) -> list[Finding]:
    """PERF-GATHER-01: measured well below the model, all SMs (SM-limited sweeps are meant to be slower)."""
    out: list[Finding] = []
    by_kernel: dict[str, list[tuple[float, GatherResult]]] = {}
    best: dict[tuple, GatherResult] = {}
    gathers = _gathers(results)
    for r in gathers:
        if r.status is Status.OK and r.value:
            k = _layout_key(r.params)
            if k not in best or r.value > (best[k].value or 0):
                best[k] = r
    for r in gathers:
        if r.status is not Status.OK:
            continue
        limit, total = r.params.sm_limit, r.params.sms_total
        if limit is not None and total is not None and limit != total:
            continue
        ratio, model = _num(r.metrics.ratio_to_ce), _num(r.metrics.model_ratio_to_ce)
        if ratio is None or not model:
            continue
        if r is not best.get(_layout_key(r.params)):
            continue  # a rung of the ladder, slow by design: only the best kernel of a layout is judged
        if ratio < PERF_MODEL_FRACTION * model:
            by_kernel.setdefault(str(r.params.kernel or r.key), []).append((ratio / model, r))
    for kernel, rows in by_kernel.items():
        rows.sort(key=lambda t: t[0])
        worst = rows[:5]
        out.append(
            Finding(
                code="PERF-GATHER-01",
                severity=Severity.WARN,
                title=f"{kernel} reaches only {worst[0][0]:.0%} of what the PCIe model allows for its layout",
                evidence=tuple(
                    f"results[{r.key}] {_layout_text(r.params)}: ratio_to_ce = "
                    f"{r.metrics.ratio_to_ce:.3f}, model_ratio_to_ce = "
                    f"{r.metrics.model_ratio_to_ce:.3f}"
                    for _, r in worst
                ),
                advice="the link is not what limits it: too few bytes in flight "
                "(raise --sm-limit/--threads, use "
                "the lines kernel that keeps 8 records in flight per warp), split lines (use line-aware "
                "loads), or small requests exhausting read tags (docs/kb/pcie.md#pcie-exttag-off)",
                reference="",
                subject=kernel,
            )
        )
    return out


def _weak_copy_engine(results: Sequence[BenchResult]) -> list[Finding]:
    """PERF-GATHER-02: the copy-engine reference itself is weak, so every gather ratio is suspect."""
    out: list[Finding] = []
    for r in results:
        if not is_gather(r) or r.key != CE_KEY or r.status is not Status.OK:
            continue
        raw_ratio = _num(r.metrics.ratio_to_raw)
        p = r.params
        try:
            link = pcie_model.LinkParams(
                mps=p.mps_bytes or 256, mrrs=p.mrrs_bytes or 4096, rcb=p.rcb_bytes or 128
            )
        except ValueError:
            link = pcie_model.LinkParams()
        eff = pcie_model.ce_efficiency(link)
        if raw_ratio is not None and raw_ratio / eff < CE_OF_MODEL_HEALTHY:
            out.append(
                Finding(
                    code="PERF-GATHER-02",
                    severity=Severity.WARN,
                    title=f"copy-engine H2D reaches only {raw_ratio / eff:.0%} of what the PCIe model gives "
                    "this link",
                    evidence=(
                        f"results[{CE_KEY}].value = {r.value:.2f} GB/s",
                        f"results[{CE_KEY}].metrics.ratio_to_raw = {raw_ratio:.3f}",
                        f"model efficiency at MPS {link.mps} / MRRS {link.mrrs} = {eff:.3f}",
                    ),
                    advice="check the negotiated link, MPS/MRRS, IOMMU mode and NUMA "
                    "placement of the "
                    "pinned table before reading gather ratios",
                    reference="",
                    subject=CE_KEY,
                )
            )
            break
    return out


def _sm_budget(results: Sequence[BenchResult]) -> list[Finding]:
    """PERF-GATHER-03: how many SMs the best kernel needs for 95% of its all-SM bandwidth."""
    out: list[Finding] = []
    for r in _gathers(results):
        need = _num(r.metrics.min_sms_for_95pct)
        total = _num(r.params.sms_total)
        if need is None or not total:
            continue
        frac = need / total
        out.append(
            Finding(
                code="PERF-GATHER-03",
                severity=Severity.WARN if frac > SM_BUDGET_WARN_FRACTION else Severity.INFO,
                title=f"{r.params.kernel} needs {int(need)} of {int(total)} SMs ({frac:.0%}) "
                "for 95% of its "
                "all-SM bandwidth",
                evidence=(
                    f"results[{r.key}].metrics.min_sms_for_95pct = {int(need)}",
                    ev(f"results[{r.key}].metrics.bytes_in_flight_per_sm", r.metrics.bytes_in_flight_per_sm),
                ),
                advice="cap the gather's grid at this many SMs (leave the rest to compute)"
                if frac <= 0.25
                else "keep more bytes in flight per SM (more records per warp, more warps per SM)",
                reference="",
                subject=str(r.params.kernel),
            )
        )
    return out


def gather_findings(results: Iterable[BenchResult]) -> list[Finding]:
    """All gather-bench findings, WARN before INFO."""
    rs = list(results)
    found = align_findings(rs) + perf_findings(rs)
    return sorted((with_reference(f) for f in found), key=lambda f: f.severity.rank)


def gather_report_findings(report: Report, ctx: Context) -> list[Finding]:
    """Report rule form (``(Report, Context) -> findings``) for the diagnose registry."""
    return gather_findings(report.results)


RULES = [gather_report_findings]
