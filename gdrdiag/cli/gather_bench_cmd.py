"""``gdrdiag gather-bench``: GPU zero-copy gather of records from pinned host memory, against the CE."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Optional

import typer

from gdrdiag.bench.gpus import GPUS_HELP
from gdrdiag.cli.application import app
from gdrdiag.cli.bench_command import BenchCommand, Output, run_bench_command
from gdrdiag.cli.cases import CASES_HELP, LIST_HELP
from gdrdiag.cli.common import handles_errors, wants_json
from gdrdiag.cli.progress import QUIET_HELP, Progress
from gdrdiag.errors import UserInputError
from gdrdiag.model.words import NUMA_HELP
from gdrdiag.units import parse_size

if TYPE_CHECKING:
    from gdrdiag.model.report import Report


def _stride(text: str, record_bytes: int) -> int:
    t = text.strip().lower()
    if t == "packed":
        return record_bytes
    if t in ("padded", "padded128", "line"):
        return -(-record_bytes // 128) * 128
    return parse_size(t, what="--stride")


@app.command("gather-bench")
@handles_errors
def gather_bench(
    ctx: typer.Context,
    cases: Optional[list[str]] = typer.Argument(
        None, help=CASES_HELP, show_default=False, metavar="[CASE]..."
    ),
    list_cases: bool = typer.Option(False, "--list", help=LIST_HELP),
    kernels: str = typer.Option(
        "all",
        "--kernels",
        "-k",
        help="Kernels for the ladder, comma-separated: byte, vec16, warp, warp-ilp, persistent, lines, "
        "sorted-lines, planned-lines, planned-flat, lines-l2pf, bulk; or all.",
    ),
    record_bytes: str = typer.Option("656", "--record-bytes", "-s", help="Record size R in bytes."),
    stride: str = typer.Option(
        "packed", "--stride", help="Slot stride: packed (= R), padded (R up to 128) or bytes."
    ),
    base_offset: int = typer.Option(0, "--base-offset", help="Table start past a 4 KiB boundary, bytes."),
    pattern: str = typer.Option("random", "--pattern", help="random, unique, sorted, sequential or runs:K."),
    slots: int = typer.Option(300_000, "--slots", help="Table slots S."),
    requests: int = typer.Option(128, "--requests", help="Requests per batch."),
    records_per_request: int = typer.Option(2048, "--records-per-request", help="Records per request."),
    seed: int = typer.Option(20251121, "--seed", help="Seed of the index generator (recorded in params)."),
    sweep: Optional[str] = typer.Option(
        None,
        "--sweep",
        help="Also sweep, comma-separated: record-size, stride, offset, pattern, sm, threads, "
        "working-set; or all.",
    ),
    sweep_kernels: str = typer.Option(
        "best,warp", "--sweep-kernels", help="Kernels for the sweeps; 'best' is the ladder's fastest."
    ),
    sm_limit: Optional[int] = typer.Option(
        None, "--sm-limit", help="SMs for persistent kernels (default all)."
    ),
    threads: Optional[int] = typer.Option(None, "--threads", help="Threads per block (default per kernel)."),
    iterations: int = typer.Option(20, "--iters", "-n", help="Most timed samples per case."),
    plan_reuse: int = typer.Option(
        32,
        "--plan-reuse",
        help="planned-lines/-flat: batches over one index set that share one sort (1 = a sort per batch).",
    ),
    overlap_batches: bool = typer.Option(
        True,
        "--overlap-batches/--no-overlap-batches",
        help="planned-lines/-flat: start each batch as the one before ends (PDL, sm_90+).",
    ),
    records_per_step: Optional[int] = typer.Option(
        None, "--records-per-step", help="planned-lines: records per warp step, 8 or 32 (default: by size)."
    ),
    rounds: int = typer.Option(
        1, "--rounds", help="Re-measure a case whose samples spread over 3% (shared link), up to N rounds."
    ),
    min_rounds: int = typer.Option(
        1, "--min-rounds", help="Measure every case at least this many rounds; keep the fastest median."
    ),
    paired_ce: bool = typer.Option(
        False,
        "--paired-ce/--no-paired-ce",
        help="A CE copy of the same bytes before every gather sample; x CE = median per-pair ratio.",
    ),
    ce_per_case: bool = typer.Option(
        False,
        "--ce-per-case",
        help="Measure the CE reference again just before each case and divide by that one.",
    ),
    device: Optional[int] = typer.Option(
        None,
        "--device",
        help="CUDA device ordinal (default 0; -d is perftest's RDMA device).",
        show_default=False,
    ),
    gpus: Optional[str] = typer.Option(None, "--gpus", help=GPUS_HELP, show_default=False),
    mps: Optional[int] = typer.Option(
        None, "--mps", help="Model: Max Payload Size (default: read, else 256)."
    ),
    mrrs: Optional[int] = typer.Option(
        None, "--mrrs", help="Model: Max Read Request Size (default: read, else 4096)."
    ),
    rcb: Optional[int] = typer.Option(
        None, "--rcb", help="Model: Read Completion Boundary 64/128 (default: read, else 128)."
    ),
    request_rate: Optional[float] = typer.Option(
        None,
        "--request-rate",
        help="Model: read requests per ns (G/s) that cap small reads (default: measured in the run "
        "when records under 128 B are gathered, else 0.75).",
    ),
    quick: bool = typer.Option(False, "--quick", help="A short run: fewer sweep points and samples."),
    numa: str = typer.Option("auto", "--numa", help=NUMA_HELP),
    json_out: Optional[Path] = typer.Option(None, "--json-out", help="Also write the Report as JSON here."),
    force: bool = typer.Option(False, "--force", "-f", help="Overwrite an existing --json-out file."),
    quiet: bool = typer.Option(False, "--quiet", help=QUIET_HELP),
) -> None:
    """Gather R-byte records from pinned host memory into the GPU by zero-copy, against the copy engine."""
    from gdrdiag.bench import gather
    from gdrdiag.bench.preflight import check_numa
    from gdrdiag.model.words import parse_numa
    from gdrdiag.pathmodel import pcie as pcie_model

    numa_request = parse_numa(numa)
    check_numa(numa_request)
    only = _selected_cases(ctx, cases, list_cases, kernels)
    R = parse_size(record_bytes, what="--record-bytes")
    pat, run_length = gather.parse_pattern(pattern)
    if requests <= 0 or records_per_request <= 0:
        raise UserInputError("--requests and --records-per-request must be greater than 0")
    layout = gather.Layout(
        record_bytes=R,
        stride=_stride(stride, R),
        base_offset=base_offset,
        pattern=pat,
        run_length=run_length,
        slots=slots,
        records=requests * records_per_request,
        seed=seed,
    )
    try:
        link = pcie_model.LinkParams(mps=mps or 256, mrrs=mrrs or 4096, rcb=rcb or 128)
    except ValueError as exc:
        raise UserInputError(f"PCIe model parameters: {exc}") from None
    explicit = any(v is not None for v in (mps, mrrs, rcb))
    sweeps = gather.parse_sweeps(sweep)
    if quick and sweep is None:
        sweeps = ("ladder", "record-size", "sm")
    config = gather.GatherConfig(
        base=layout,
        kernels=gather.parse_kernels(kernels),
        sweeps=sweeps,
        sweep_kernels=tuple(k.strip().lower() for k in sweep_kernels.split(",") if k.strip()),
        sm_limit=sm_limit,
        threads=threads,
        device=device or 0,
        iterations=min(iterations, 8) if quick else iterations,
        time_budget_s=0.1 if quick else 0.25,
        quick=quick,
        plan_reuse=plan_reuse,
        overlap_batches=overlap_batches,
        records_per_step=records_per_step,
        rounds=rounds,
        min_rounds=min_rounds,
        paired_ce=paired_ce,
        ce_per_case=ce_per_case,
        link=link,
        link_source="given on the command line"
        if explicit
        else "assumed (MPS 256 / MRRS 4096 / RCB 128, as read on an H200 VM)",
        link_explicit=explicit,
        request_rate=request_rate,
        numa=numa_request,
        only=only,
    )
    config.validate()
    from gdrdiag.bench.gather_config import GatherRun
    from gdrdiag.bench.gpus import GpuLoop, choose_gpus

    loop = GpuLoop(choose_gpus(gpus, device) or (config.device,))
    command = BenchCommand(
        name="gather-bench",
        steps=None,  # each GPU's run counts its own steps
        measure=lambda progress: _run_each_gpu(config, loop, quiet),
        partial=lambda partial: GatherRun(results=loop.tag_partial(partial), notes=[]),
        report=_report,
        text=_text,
        failed=_failed,
    )
    run_bench_command(ctx, command, Output(json_out, force, quiet))


def _selected_cases(
    ctx: typer.Context, cases: Optional[list[str]], list_cases: bool, kernels: str
) -> Optional[frozenset[str]]:
    """``--list`` (prints and exits), or the keys that case selectors choose (None: no selection)."""
    from gdrdiag.bench.gather_config import CE_KEY
    from gdrdiag.bench.registry import gather_registry

    registry = gather_registry()
    if list_cases:
        from gdrdiag.bench.preflight import probe_capabilities
        from gdrdiag.cli.cases import print_case_list

        print_case_list(ctx, registry, probe_capabilities(), wants_json(ctx), cases)
    if not cases:
        return None
    if kernels != "all":
        raise UserInputError("give cases or --kernels, not both (cases gather_<kernel> choose kernels)")
    chosen = frozenset(c.key for c in registry.select(cases))
    if chosen <= {CE_KEY}:
        raise UserInputError(
            "gather_ce_reference runs with every kernel (it is their reference); name a kernel"
        )
    return chosen


def _run_each_gpu(config, loop, quiet: bool):
    """Run the bench on each GPU of ``loop`` in turn, a progress line per case on stderr (none with --quiet).

    One GPU: its run as it is. Several: one run whose results are every GPU's (each recording its GPU),
    whose notes say which GPU each note is about, and whose header names every GPU.
    """
    import dataclasses

    from gdrdiag.bench import gather
    from gdrdiag.bench.gather_config import GatherRun

    runs: list = []

    def run_on(gpu: int) -> list:
        label = "gather-bench" if len(loop.ordinals) == 1 else f"gather-bench GPU {gpu}"
        progress = Progress(label, None, enabled=not quiet)
        run = gather.run(dataclasses.replace(config, device=gpu), progress=progress.counted)
        runs.append((gpu, run))
        return run.results

    results = loop.run(run_on)
    if len(runs) == 1:
        only = runs[0][1]
        return dataclasses.replace(only, results=results)
    notes = [f"GPU {gpu}: {note}" for gpu, run in runs for note in run.notes]
    names = ", ".join(f"GPU {gpu} {run.gpu_name}".rstrip() for gpu, run in runs)
    return GatherRun(results=results, notes=notes, gpu_name=names, sm_count=runs[0][1].sm_count)


def _report(result, notes: tuple[str, ...]) -> "Report":
    """The run's Report with its findings; with several GPUs, the GPU below its siblings, named.

    The notes a run adds (a Ctrl-C's) join the run's own, so the text shows them too.
    """
    import dataclasses

    from gdrdiag.cli.reporting import bench_report
    from gdrdiag.diagnose.gather_rules import gather_findings
    from gdrdiag.diagnose.node_rules import outlier_findings, split_by_gpu

    result.notes.extend(notes)
    findings = gather_findings(result.results)
    report = bench_report("gather-bench", result.results, findings=tuple(findings), notes=tuple(result.notes))
    if len(split_by_gpu(result.results, ())) > 1:  # --gpus: the GPU below its siblings, named
        findings = [*outlier_findings(result.results, report.machine), *findings]
        report = dataclasses.replace(report, findings=tuple(findings))
    return report


def _failed(report: "Report") -> bool:
    """Exit 1 on a failed case or a FAIL finding."""
    from gdrdiag.model.results import Status

    return any(r.status is Status.ERROR for r in report.results) or any(
        f.severity.value == "FAIL" for f in report.findings
    )


def _text(result, report: "Report", width: Optional[int]) -> str:
    """The header, the verdict (one per GPU, then the GPUs side by side), the tables, the findings."""
    from gdrdiag.diagnose.node_rules import outliers, sibling_rows, split_by_gpu
    from gdrdiag.diagnose.verdicts import gather_verdict
    from gdrdiag.model.results import Status
    from gdrdiag.render.findings_table import render_findings
    from gdrdiag.render.gather_table import render_gather_results
    from gdrdiag.render.verdict import render_gather_verdict

    findings = list(report.findings)
    header = (
        f"gather-bench on {result.gpu_name} ({result.sm_count} SMs)"
        if result.gpu_name
        else "gather-bench: interrupted; the results measured before Ctrl-C"
        if result.results and any(r.status is not Status.WAIVED for r in result.results)
        else "gather-bench: no usable GPU here; every case WAIVED (reasons below)"
    )
    shares = split_by_gpu(result.results, ())
    if len(shares) > 1:  # a verdict per GPU, then the GPUs side by side
        from gdrdiag.render.gpu_table import render_gpus_side_by_side

        rows = sibling_rows(result.results)
        blocks = [
            f"GPU {s.gpu}:\n" + render_gather_verdict(gather_verdict(list(s.results)), (), width)
            for s in shares
        ]
        side = render_gpus_side_by_side(result.results, rows, outliers(result.results, rows), width)
        body = "\n\n".join([*blocks, side])
    else:
        verdict = render_gather_verdict(gather_verdict(result.results), findings, width)
        body = f"{verdict}\n\n{render_gather_results(result.results, result.notes, width)}"
    return f"{header}\n\n{body}\n\n{render_findings(findings)}"
