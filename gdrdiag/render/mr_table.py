"""mr-bench results as text tables (formatting only: every number was computed upstream).

Inputs are the results from :mod:`gdrdiag.bench.mr` and, for the RO A/B and the matrix, the
pairs, rows and findings :mod:`gdrdiag.diagnose.rdma_rules` derived from them.
"""

from __future__ import annotations

from typing import Iterable, Optional, Sequence

from gdrdiag.model.findings import Finding
from gdrdiag.model.results import BenchResult, Status
from gdrdiag.render.findings_table import render_findings
from gdrdiag.render.layout import DEFAULT_WIDTH, wrap_lines
from gdrdiag.render.results_table import check_mark, num, placement_line, problems, size, spread, table
from gdrdiag.render.sanitize import shown

SOFT_BANNER = (
    "SOFT PROVIDER: the numbers below were produced in software (memcpy / cuMemcpy), not by an "
    "RDMA NIC.\nThey show that the pipeline works; they are NOT hardware numbers, and no hardware "
    "verdict is drawn from them."
)


def soft_banner(results: Iterable[BenchResult]) -> str:
    """The banner when any result came from the soft provider, else ''."""
    return SOFT_BANNER if any(r.provider == "soft" for r in results) else ""


def _ok(results: Iterable[BenchResult], prefix: str) -> list[BenchResult]:
    return [r for r in results if r.status is Status.OK and r.key.startswith(prefix)]


def _ro(r: BenchResult) -> str:
    return "on" if r.params.relaxed_ordering else "off"


def bw_table(results: Sequence[BenchResult], width: Optional[int] = DEFAULT_WIDTH) -> str:
    """Bandwidth rows (rdma_write_<kind>_<reg>)."""
    rows = []
    for r in results:
        if not r.key.startswith("rdma_write_") or r.params.mode != "bw" or r.stats is None:
            continue
        p = r.params
        rows.append(
            [
                shown(p.memory),
                shown(p.reg_path),
                size(p.size_bytes),
                shown(p.qps),
                _ro(r),
                num(r.value, 1),
                spread(r),
                num((r.metrics.msgs_per_s or 0) / 1e6, 3),
                num(r.metrics.cpu_us_per_msg, 2),
                shown(p.landing),
                check_mark(r),
                r.provider,
            ]
        )
    if not rows:
        return ""
    return table(
        rows,
        [
            "memory",
            "reg",
            "size",
            "QPs",
            "RO",
            "Gb/s",
            "min-max",
            "Mmsg/s",
            "CPU us/msg",
            "lands in",
            "payload",
            "provider",
        ],
        width=width,
        wrap=(9,),
        drop=(11, 9, 7, 6),  # provider is in the banner and notes; where bytes land, under the table
    )


def latency_table(results: Sequence[BenchResult], width: Optional[int] = DEFAULT_WIDTH) -> str:
    """Latency percentiles (rdma_write_lat_*)."""
    rows = []
    for r in _ok(results, "rdma_write_lat_"):
        m, p = r.metrics, r.params
        rows.append(
            [
                shown(p.memory),
                shown(p.reg_path),
                size(p.size_bytes),
                _ro(r),
                num(m.lat_p50_us),
                num(m.lat_p90_us),
                num(m.lat_p99_us),
                num(m.lat_p999_us),
                num(m.lat_max_us),
                num(m.cpu_us_per_msg),
                check_mark(r),
            ]
        )
    if not rows:
        return ""
    return "post -> completion latency (us)\n" + table(
        rows,
        ["memory", "reg", "size", "RO", "p50", "p90", "p99", "p99.9", "max", "CPU us/msg", "payload"],
        width=width,
        drop=(10, 9),
    )


def blocks_table(results: Sequence[BenchResult], width: Optional[int] = DEFAULT_WIDTH) -> str:
    """Block mode: the same blocks as one WR each, as post lists, as one WR."""
    rows = []
    for r in _ok(results, "rdma_write_blocks_"):
        p, m = r.params, r.metrics
        rows.append(
            [
                shown(p.memory),
                shown(p.reg_path),
                shown(p.blocks),
                size(p.size_bytes),
                shown(p.variant),
                shown(p.post_list),
                num(r.value, 3),
                num(m.gbps, 1),
                num(m.cpu_us_per_block, 3),
                check_mark(r),
            ]
        )
    if not rows:
        return ""
    return table(
        rows,
        [
            "memory",
            "reg",
            "blocks",
            "block",
            "as",
            "post list",
            "us/block",
            "Gb/s",
            "CPU us/block",
            "payload",
        ],
        width=width,
        drop=(9, 8),
    )


def reg_table(results: Sequence[BenchResult], width: Optional[int] = DEFAULT_WIDTH) -> str:
    """Registration cost and register-once vs per-transfer."""
    reuse = {(r.params.memory, r.params.reg_path, r.params.size_bytes): r for r in _ok(results, "mr_reuse_")}
    rows = []
    for r in _ok(results, "mr_reg_"):
        p = r.params
        u = reuse.get((p.memory, p.reg_path, p.size_bytes))
        rows.append(
            [
                shown(p.memory),
                shown(p.reg_path),
                size(p.size_bytes),
                num(r.value, 1),
                num(r.metrics.dereg_us, 1),
                num(u.metrics.reuse_us, 1) if u else "-",
                num(u.metrics.register_each_us, 1) if u else "-",
                num(u.metrics.register_each_over_reuse, 1) if u else "-",
            ]
        )
    if not rows:
        return ""
    return "registration cost (us, median)\n" + table(
        rows,
        ["memory", "reg", "size", "reg", "dereg", "transfer (MR reused)", "transfer (reg each)", "x"],
        width=width,
    )


def loop_cost_table(results: Sequence[BenchResult], width: Optional[int] = DEFAULT_WIDTH) -> str:
    """The loop's own cost and the smallest message that keeps each link rate busy."""
    rows = []
    for r in sorted(_ok(results, "mr_loop_cost"), key=lambda r: r.key):  # Python rows, then the C rows
        m = r.metrics
        rows.append(
            [
                "C + null provider" if r.key == "mr_loop_cost_native" else "Python + soft (no copy)",
                shown(r.params.post_list),
                num((r.value or 0) / 1e6, 3),
                num((m.posts_per_s or 0) / 1e6, 3),
                num(m.cpu_us_per_wr, 3),
                size(int(m.min_msg_bytes_100g or 0)),
                size(int(m.min_msg_bytes_400g or 0)),
                size(int(m.min_msg_bytes_800g or 0)),
            ]
        )
    if not rows:
        return ""
    return (
        wrap_lines(
            "loop cost (no NIC, no bytes moved; NOT hardware numbers): WRs per second each loop sustains",
            width,
        )
        + "\n"
        + table(
            rows,
            [
                "loop",
                "post list",
                "M WR/s",
                "M posts/s",
                "CPU us/WR",
                "min msg 100G",
                "min msg 400G",
                "min msg 800G",
            ],
            width=width,
            wrap=(0,),
        )
    )


def ro_ab_table(pairs: Sequence, width: Optional[int] = DEFAULT_WIDTH) -> str:
    """RO A/B pairs (``rdma_rules.RoPair``) with the verdict in words."""
    rows = []
    for pr in pairs:
        p = pr.off.params
        rows.append(
            [
                shown(p.memory),
                shown(p.reg_path),
                size(p.size_bytes),
                num(pr.off.value, 1),
                num(pr.on.value, 1),
                num(pr.verdict.ratio, 2) if pr.verdict.ratio else "-",
                pr.verdict.words,
            ]
        )
    if not rows:
        return ""
    return "relaxed ordering A/B (same buffers, QPs and sizes)\n" + table(
        rows,
        ["memory", "reg", "size", "RO off Gb/s", "RO on Gb/s", "on/off", "verdict"],
        width=width,
        wrap=(6,),
    )


def matrix_table(rows: Sequence, width: Optional[int] = DEFAULT_WIDTH) -> str:
    """The memory-kind x registration-path matrix (``rdma_rules.MatrixRow``)."""
    out = []
    reasons: list[str] = []  # a WAIVED/ERROR reason is numbered under the table, not in its row
    for r in rows:
        if r.status != "OK":
            if r.reason and r.reason not in reasons:
                reasons.append(r.reason)
            mark = f" ({reasons.index(r.reason) + 1})" if r.reason else ""
            out.append([r.memory, r.reg_path, r.landing or "-", "-", "-", "-", "-", f"{r.status}{mark}"])
            continue
        out.append(
            [
                r.memory,
                r.reg_path,
                r.landing,
                num(r.off_gbps, 1),
                num(r.on_gbps, 1),
                num(r.ratio, 2),
                num(r.vs_host, 2),
                r.verdict.words if r.verdict else "",
            ]
        )
    if not out:
        return ""
    return (
        wrap_lines(
            "memory kind x registration path x relaxed ordering\n"
            "(vs host = RO-off GPU-memory bandwidth / RO-off host-memory reference of the same run)",
            width,
        )
        + "\n"
        + table(
            out,
            [
                "memory",
                "reg",
                "lands in",
                "RO off Gb/s",
                "RO on Gb/s",
                "on/off",
                "vs host",
                "verdict / status",
            ],
            width=width,
            wrap=(7,),
            drop=(2,),
        )
        + "".join(f"\n{wrap_lines(f'({i}) {reason}', width)}" for i, reason in enumerate(reasons, 1))
    )


def server_table(results: Sequence[BenchResult], width: Optional[int] = DEFAULT_WIDTH) -> str:
    """The server side of a two-machine run."""
    rows = [
        [
            shown(r.params.memory),
            shown(r.params.reg_path),
            shown(r.params.qps),
            num(r.metrics.runs, 0),
            num(r.metrics.verified_runs, 0),
            check_mark(r),
        ]
        for r in results
        if r.params.role == "server"
    ]
    if not rows:
        return ""
    return "server: destination buffer checked after every client run\n" + table(
        rows, ["memory", "reg", "QPs", "runs", "verified", "payload"], width=width
    )


def lands_in_notes(results: Sequence[BenchResult]) -> str:
    """Where the bytes of each measured memory kind landed, once per kind."""
    seen = {}
    for r in results:
        if r.key.startswith("rdma_write") and r.params.lands_in:
            seen.setdefault((r.params.memory, r.params.reg_path), r.params.lands_in)
    if not seen:
        return ""
    lines = (f"  {shown(m)}/{shown(g)}: {w}" for (m, g), w in seen.items())
    return "where the bytes land:\n" + "\n".join(lines)


def render_mr_results(
    results: Sequence[BenchResult],
    *,
    pairs: Sequence = (),
    matrix_rows: Optional[Sequence] = None,
    findings: Sequence[Finding] = (),
    notes: Sequence[str] = (),
    width: Optional[int] = DEFAULT_WIDTH,
) -> str:
    """Everything mr-bench prints, in order: banner, tables, problems, notes, findings.

    Fitted to ``width`` (None: every column, unwrapped).
    """
    parts = [wrap_lines(soft_banner(results), width), wrap_lines(placement_line(results), width)]
    if matrix_rows is not None:
        parts.append(matrix_table(matrix_rows, width))
    else:
        parts += [bw_table(results, width), ro_ab_table(pairs, width)]
    parts += [
        latency_table(results, width),
        blocks_table(results, width),
        reg_table(results, width),
        loop_cost_table(results, width),
        server_table(results, width),
        wrap_lines(lands_in_notes(results), width),
        wrap_lines(problems(results), width),
    ]
    parts += [wrap_lines(n, width) for n in notes]
    if findings:
        parts.append(wrap_lines(render_findings(findings), width))
    return "\n\n".join(p for p in parts if p)
