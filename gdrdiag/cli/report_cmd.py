"""``gdrdiag report -o r.json``: inspect plus the standard benches into one Report."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Callable, Optional

import typer

from gdrdiag.cli import app
from gdrdiag.cli.common import EXIT_FAIL, EXIT_OK, echo, handles_errors, progress_enabled, wants_json
from gdrdiag.errors import UserInputError


def _copy_results(level: str) -> list:
    from gdrdiag.bench.copy import CopyBenchOptions, run_copy_bench
    from gdrdiag.hw.memory import MemoryKind
    from gdrdiag.units import KiB, MiB

    if level == "full":
        return run_copy_bench(CopyBenchOptions())
    kinds = (
        (MemoryKind.PINNED, MemoryKind.PAGEABLE)
        if level == "quick"
        else (
            MemoryKind.PINNED,
            MemoryKind.PINNED_WC,
            MemoryKind.REGISTERED,
            MemoryKind.PAGEABLE,
            MemoryKind.MANAGED,
        )
    )
    opts = CopyBenchOptions(
        kinds=kinds,
        directions=("h2d", "d2h") if level == "quick" else ("h2d", "d2h", "bidir"),
        modes=("async",),
        sizes=(64 * KiB, 64 * MiB) if level == "quick" else (64 * KiB, 1 * MiB, 64 * MiB, 256 * MiB),
        parts=("sweep",) if level == "quick" else ("sweep", "pinning", "overlap", "blocks"),
        iterations=5,
        pin_size=64 * MiB,
        overlap_layers=8,
        overlap_chunk=32 * MiB,
        block_sizes=(4 * KiB, 64 * KiB, 1 * MiB) if level != "quick" else (64 * KiB,),
        reference=False,
    )
    return run_copy_bench(opts)


def _gather_results(level: str) -> list:
    from gdrdiag.bench import gather
    from gdrdiag.errors import NotSupported
    from gdrdiag.model.results import BenchResult

    config = gather.GatherConfig(
        quick=level == "quick", sweeps=gather.SWEEPS if level == "full" else ("ladder",)
    )
    try:
        return list(gather.run(config).results)
    except NotSupported as exc:
        return [BenchResult.waived("gather_ladder", exc.reason, description="gather-bench ladder")]


@dataclasses.dataclass(frozen=True)
class RdmaPart:
    """How big the RDMA matrix of a report is; ``None`` fields take the level's default.

    A slow device (Soft-RoCE under emulation moves ~0.2 Gb/s: the default quick matrix ran for
    minutes in the QEMU lab) needs a way to shrink this part, or to leave it out.
    """

    skip: bool = False
    size: Optional[int] = None
    iterations: Optional[int] = None
    qps: Optional[int] = None


def _rdma_results(level: str, part: RdmaPart = RdmaPart()) -> list:
    """RDMA matrix on a real device only: soft-provider numbers never go into a machine's Report."""
    from gdrdiag.bench import mr
    from gdrdiag.errors import NotSupported
    from gdrdiag.model.results import BenchResult

    description = "RDMA WRITE matrix (memory kinds x registration x RO)"
    if part.skip:
        return [BenchResult.waived("rdma_write_matrix", "left out by --no-rdma", description=description)]
    cfg = mr.matrix_config(
        mr.MrBenchConfig(
            provider="pyverbs",
            sizes=(part.size or 1 << 20,),
            qps=part.qps or 4,
            iterations=part.iterations or (2000 if level != "full" else 20000),
        )
    )
    try:
        return list(mr.run(cfg, mode="bw"))
    except NotSupported as exc:
        return [BenchResult.waived("rdma_write_matrix", exc.reason, description=description)]


BENCHES: tuple[tuple[str, Callable[[str], list]], ...] = (
    ("copy-bench", _copy_results),
    ("gather-bench", _gather_results),
    ("mr-bench", _rdma_results),
)


def build_report(level: str, progress: Optional[Callable[[str], None]] = None, rdma: RdmaPart = RdmaPart()):
    """Inspect this machine, run the standard benches at ``level``, diagnose; return the Report."""
    from gdrdiag.bench.runner import run_case
    from gdrdiag.cli.reporting import results_report
    from gdrdiag.diagnose import diagnose
    from gdrdiag.hw.bundle import LiveSource
    from gdrdiag.inspect.collect import inspect_source

    if progress:
        progress("inspect")
    machine = inspect_source(LiveSource())
    results = []
    for name, bench in BENCHES:
        if progress:
            progress(name)
        if bench is _rdma_results:
            results.extend(run_case(name.replace("-", "_"), lambda: _rdma_results(level, rdma)))
        else:
            results.extend(run_case(name.replace("-", "_"), lambda b=bench: b(level)))
    report = results_report("report", results, machine=machine)
    return dataclasses.replace(report, findings=tuple(diagnose(report)))


@app.command("report")
@handles_errors
def report_cmd(
    ctx: typer.Context,
    output: Path = typer.Option(..., "--output", "-o", help="Where to write the Report (JSON)."),
    quick: bool = typer.Option(False, "--quick", help="A short bench set (about 20 s on a GPU)."),
    full: bool = typer.Option(False, "--full", help="Every sweep of every bench (several minutes)."),
    html: Optional[Path] = typer.Option(None, "--html", help="Also write an HTML page with plots."),
    no_rdma: bool = typer.Option(False, "--no-rdma", help="Leave the RDMA matrix out (WAIVED)."),
    rdma_size: Optional[str] = typer.Option(
        None, "--rdma-size", help="RDMA matrix message size (default 1M)."
    ),
    rdma_iters: Optional[int] = typer.Option(
        None, "--rdma-iters", help="RDMA matrix WRs per QP per run (default 2000; --full 20000)."
    ),
    rdma_qps: Optional[int] = typer.Option(None, "--rdma-qps", help="RDMA matrix QPs (default 4)."),
) -> None:
    """Inspect this machine and run the standard benches it supports into one Report (WAIVED for the rest)."""
    from gdrdiag.model.findings import Severity
    from gdrdiag.render.findings_table import render_findings

    if quick and full:
        raise UserInputError("choose --quick or --full, not both")
    for path in (output, html):
        if path is not None and not path.parent.exists():
            raise UserInputError(f"{path}: directory {path.parent} does not exist")
    level = "quick" if quick else ("full" if full else "standard")
    from gdrdiag.units import parse_size

    for name, value in (("--rdma-iters", rdma_iters), ("--rdma-qps", rdma_qps)):
        if value is not None and value < 1:
            raise UserInputError(f"{name} must be at least 1")
    rdma = RdmaPart(
        skip=no_rdma,
        size=parse_size(rdma_size, what="--rdma-size") if rdma_size is not None else None,
        iterations=rdma_iters,
        qps=rdma_qps,
    )
    if progress_enabled() and not wants_json(ctx):
        with typer.progressbar(length=1 + len(BENCHES), label=f"report ({level})") as bar:
            report = build_report(level, progress=lambda _step: bar.update(1), rdma=rdma)
    else:
        report = build_report(level, rdma=rdma)
    output.write_text(report.to_json())
    if html is not None:
        from gdrdiag.render.html import write_report_html

        write_report_html(html, report, report.findings)
    if wants_json(ctx):
        echo(report.to_json())
    else:
        counts: dict[str, int] = {}
        for r in report.results:
            counts[r.status.value] = counts.get(r.status.value, 0) + 1
        echo(
            f"wrote {output}: {len(report.results)} results "
            f"({', '.join(f'{n} {s}' for s, n in sorted(counts.items()))})"
        )
        echo(render_findings(report.findings))
    raise typer.Exit(EXIT_FAIL if any(f.severity is Severity.FAIL for f in report.findings) else EXIT_OK)
