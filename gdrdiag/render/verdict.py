"""The verdict block each bench leads with: a few lines of numbers and ratios, then the findings.

Formatting only: every number comes from ``model/verdict.py``'s records, which
``diagnose/verdicts.py`` derives from the results. The detail tables follow the block.
"""

from __future__ import annotations

from typing import Optional, Sequence

from gdrdiag.model.findings import Finding
from gdrdiag.model.verdict import CopyVerdict, GatherVerdict, MrVerdict, Waived
from gdrdiag.render.layout import DEFAULT_WIDTH, wrap_lines
from gdrdiag.render.results_table import num, size
from gdrdiag.render.sanitize import shown

MAX_FINDINGS = 6  # in the block; the full list (with evidence) is printed after the tables


def _pct(fraction: Optional[float]) -> str:
    return "?" if fraction is None else f"{100 * fraction:.0f}%"


def _waived_line(w: Waived) -> list[str]:
    lines = []
    if w.count:
        lines.append(f"WAIVED: {w.count} case(s)" + (f" - {w.reason}" if w.reason else ""))
    if w.errors:
        lines.append(f"ERROR: {w.errors} case(s) failed (reasons below)")
    return lines


def _findings_lines(findings: Sequence[Finding]) -> list[str]:
    if not findings:
        return ["findings: none"]
    lines = [f"findings ({len(findings)}):"]
    for f in findings[:MAX_FINDINGS]:
        subject = f" [{f.subject}]" if f.subject else ""
        lines.append(f"  {f.severity.value} {f.code}{subject}: {f.title}")
    if len(findings) > MAX_FINDINGS:
        lines.append(f"  (+{len(findings) - MAX_FINDINGS} more below)")
    return lines


def _block(title: str, lines: list[str], findings: Sequence[Finding], width: Optional[int]) -> str:
    body = [f"  {line}" for line in lines + _findings_lines(findings)]
    return wrap_lines("\n".join([f"Verdict ({title})", *body]), width)


def render_copy_verdict(
    v: CopyVerdict, findings: Sequence[Finding] = (), width: Optional[int] = DEFAULT_WIDTH
) -> str:
    """The copy-bench verdict lines: pinned copies and their share of the link model, then the rest.

    The rest: both ways at once, pageable vs pinned, and the block sizes where per-block and batched
    copies reach half the coalesced rate (each line only where measured).
    """
    lines = []
    if v.h2d_gbps is not None or v.d2h_gbps is not None:
        lines.append(
            f"pinned copies at {size(v.size_bytes)}: H2D {num(v.h2d_gbps)} GB/s, D2H {num(v.d2h_gbps)} GB/s"
        )
        if v.model_gbps is not None:
            d2h_model = (
                f" H2D, {num(v.d2h_model_gbps, 1)} GB/s D2H"
                if v.d2h_model_gbps is not None and f"{v.d2h_model_gbps:.1f}" != f"{v.model_gbps:.1f}"
                else ""
            )
            lines.append(
                f"of the PCIe model for this GPU's link ({num(v.model_gbps, 1)} GB/s{d2h_model}): "
                f"H2D {_pct(v.h2d_of_model)}, D2H {_pct(v.d2h_of_model)}"
            )
        else:
            lines.append("of the PCIe model: unknown here (the GPU's link is not in these results)")
    else:
        lines.append("pinned copies: not measured")
    if v.bidir_gbps is not None:
        lines.append(
            f"both ways at once (pinned, two streams): {num(v.bidir_gbps)} GB/s"
            + (f" = {num(v.bidir_of_sum)} x (H2D + D2H)" if v.bidir_of_sum is not None else "")
        )
    pageable = []
    if v.pageable_over_pinned is not None:
        pageable.append(
            f"pageable H2D {num(v.pageable_h2d_gbps)} GB/s = {num(v.pageable_over_pinned)} x pinned"
        )
    if v.pageable_d2h_over_pinned is not None:
        pageable.append(f"D2H {num(v.pageable_d2h_gbps)} GB/s = {num(v.pageable_d2h_over_pinned)} x pinned")
    if pageable:
        lines.append(", ".join(pageable))
    if v.largest_block is not None:
        not_reached = f"not by {size(v.largest_block)}"
        per_call = size(round(v.half_block_per_call)) if v.half_block_per_call is not None else not_reached
        batched = size(round(v.half_block_batched)) if v.half_block_batched is not None else not_reached
        lines.append(
            f"many small blocks: half the coalesced rate at {per_call} blocks with one copy call each, "
            f"{batched} with one cuMemcpyBatchAsync"
        )
    return _block("copy-bench", lines + _waived_line(v.waived), findings, width)


def render_gather_verdict(
    v: GatherVerdict, findings: Sequence[Finding] = (), width: Optional[int] = DEFAULT_WIDTH
) -> str:
    """The best kernel, its ratio to the copy engine of the same run, and to the model's ceiling."""
    lines = []
    if v.best_kernel is not None:
        lines.append(
            f"best kernel at R={shown(v.record_bytes)} B: {v.best_kernel}, {num(v.best_gbps)} GB/s"
            f" = {num(v.best_ratio_to_ce, 3)} x the copy engine ({num(v.ce_gbps)} GB/s, same run)"
        )
        if v.model_ratio_to_ce is not None:
            lines.append(
                f"model ceiling for this layout: {num(v.model_ratio_to_ce, 3)} x CE; "
                f"best/ceiling {num(v.best_of_model, 3)}"
            )
    else:
        lines.append("no gather kernel measured")
    return _block("gather-bench", lines + _waived_line(v.waived), findings, width)


def render_mr_verdict(
    v: MrVerdict, findings: Sequence[Finding] = (), width: Optional[int] = DEFAULT_WIDTH
) -> str:
    """Best RDMA WRITE per memory kind, RO on/off where measured, and whether it is software."""
    soft = " [soft: NOT a hardware number]"
    lines = [
        f"best write into {b.memory} ({b.reg_path}, {size(b.size_bytes)}): {num(b.gbps, 1)} Gb/s"
        + (soft if b.provider == "soft" else "")
        for b in v.best
    ]
    lines += [
        f"write latency into {t.memory} ({t.reg_path}, {size(t.size_bytes)}): p50 {num(t.p50_us)} us, "
        f"p99 {num(t.p99_us)} us" + (soft if t.provider == "soft" else "")
        for t in v.latency
    ]
    lines = lines or [
        "no RDMA WRITE bandwidth or latency measured (the tables below hold this mode's numbers)"
    ]
    lines += [f"RO on/off {r.memory}/{r.reg_path}: {num(r.ratio, 2)} ({r.words})" for r in v.ro]
    return _block("mr-bench", lines + _waived_line(v.waived), findings, width)
