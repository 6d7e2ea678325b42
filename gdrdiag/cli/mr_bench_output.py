"""What mr-bench shows of a run: its Report, its text, its exit rule and its stderr afterword.

``mr_bench_cmd`` hands these to the shared tail (``bench_command.run_bench_command``) as its
``BenchCommand``; they keep mr-bench's own output: the Report holds only a Ctrl-C's note, while the
text also shows the provider (or the loop-cost sentence) and the no-GPU note.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Optional

if TYPE_CHECKING:
    from gdrdiag.model.report import Report
    from gdrdiag.model.results import BenchResult


@dataclass
class MrRun:
    """An mr-bench run: its rows, and the notes its text shows (not the Report's).

    ``notes`` starts with the loop-cost sentence (or the provider) and the no-GPU note; the Report
    made of the run adds a Ctrl-C's note to both. Empty notes are not shown.
    """

    results: list["BenchResult"]
    notes: list[str]


def report(run: MrRun, notes: tuple[str, ...]) -> "Report":
    """The Report: the rows, the RDMA findings, and only the notes the run adds (a Ctrl-C's)."""
    from gdrdiag.cli.reporting import bench_report
    from gdrdiag.diagnose import rdma_rules

    run.notes.extend(notes)
    findings = rdma_rules.rdma_findings(run.results)
    return bench_report("mr-bench", run.results, findings=tuple(findings), notes=notes)


def text(matrix: bool, run: MrRun, report: "Report", width: Optional[int]) -> str:
    """The verdict (RO pairs), then the rows, matrix rows (``--matrix``), findings and notes."""
    from gdrdiag.diagnose import rdma_rules
    from gdrdiag.diagnose.verdicts import mr_verdict
    from gdrdiag.render.mr_table import render_mr_results
    from gdrdiag.render.verdict import render_mr_verdict

    results, findings = run.results, list(report.findings)
    pairs = rdma_rules.ro_pairs(results)
    rows = rdma_rules.interpret_matrix(results) if matrix else None
    notes = [n for n in run.notes if n]
    text = render_mr_results(
        results, pairs=pairs, matrix_rows=rows, findings=findings, notes=notes, width=width
    )
    return render_mr_verdict(mr_verdict(results, pairs), findings, width) + "\n\n" + text


def failed(report: "Report") -> bool:
    """Exit 1 on an ERROR row, a FAIL finding, or no row at all.

    Every case WAIVED (no GPU for the kinds asked for) exits 0, as copy-bench and gather-bench do:
    the reasons are in the output and in the Report. No result at all is a failure.
    """
    from gdrdiag.model.results import Status

    failed = any(r.status is Status.ERROR for r in report.results)
    return failed or any(f.severity.value == "FAIL" for f in report.findings) or not report.results


def afterword(run: MrRun, report: "Report") -> str:
    """The stderr line after the output when nothing ran or nothing could be measured ('' otherwise)."""
    from gdrdiag.model.results import Status

    failed = any(r.status is Status.ERROR for r in run.results)
    nothing = not any(r.status is Status.OK for r in run.results)
    if not run.results:
        return "gdrdiag: no case ran (nothing measured, nothing WAIVED)"
    if nothing and not failed:
        return "gdrdiag: nothing could be measured here (every case WAIVED; see the reasons above)"
    return ""


def loop_cost_note(results, link_gbps: float) -> str:
    """A sentence on whether the loop can keep the link busy at 64 KiB (text only; numbers from bench)."""
    from gdrdiag.model.results import Status

    ok = [r for r in results if r.status is Status.OK and r.key == "mr_loop_cost"]
    if not ok:
        return ""
    key = f"min_msg_bytes_{int(link_gbps)}g"
    single = next((r for r in ok if r.params.post_list == 1), ok[0])
    best = min(ok, key=lambda r: getattr(r.metrics, key, None) or float("inf"))
    one, low = getattr(single.metrics, key, None), getattr(best.metrics, key, None)
    if one is None or low is None:
        return f"(no bound computed for {link_gbps:g} Gb/s; try 100/200/400/800)"
    verdict = "above" if one > 64 * 1024 else "at or below"
    fixed, per_wr = single.metrics.loop_us_per_post, single.metrics.provider_us_per_wr
    split = ""
    if fixed is not None and per_wr is not None:
        split = (
            f"Fit over post-list lengths: the loop costs {fixed:.2f} us per ibv_post_send call and the "
            f"provider {per_wr:.2f} us per WR. "
        )
    text = split + (
        f"At {link_gbps:g} Gb/s the Python loop needs messages of at least {one / 1024:.1f} KiB with one "
        "WR per post "
        f"({verdict} 64 KiB) and {low / 1024:.1f} KiB with post lists of {best.params.post_list}."
    )
    native = [r for r in results if r.status is Status.OK and r.key == "mr_loop_cost_native"]
    c1 = next((r for r in native if r.params.post_list == 1), None)
    if c1 is not None and getattr(c1.metrics, key, None) is not None:
        text += (
            f" The C loop (--provider native; measured over its null provider, not a NIC) costs "
            f"{c1.metrics.ns_per_wr:.1f} ns per WR with one WR per post: its own bound is "
            f"{getattr(c1.metrics, key):.0f} B messages at {link_gbps:g} Gb/s, so on hardware the NIC "
            "and the "
            "driver's ibv_post_send set the limit, not the loop."
        )
    return text
