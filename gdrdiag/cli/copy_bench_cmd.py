"""``gdrdiag copy-bench``: host<->GPU copies (sweep, pinning, overlap, block sweep)."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from gdrdiag.cli import app
from gdrdiag.cli.cases import CASES_HELP, LIST_HELP
from gdrdiag.cli.common import (
    EXIT_FAIL,
    EXIT_OK,
    echo,
    echo_text,
    handles_errors,
    output_width,
    split_list,
    wants_json,
)
from gdrdiag.cli.progress import QUIET_HELP, Progress
from gdrdiag.model.words import NUMA_HELP
from gdrdiag.units import parse_size, parse_size_list

DEFAULT_KINDS = "pinned,pinned-wc,registered,pageable,managed"
DEFAULT_SIZES = "4K,16K,64K,256K,1M,4M,16M,64M,256M,1G"
DEFAULT_BLOCKS = "128..2M"


def _narrowed_to(opts, selected):
    """Options that run just the selected cases (kinds and directions from the sweep keys)."""
    import dataclasses

    from gdrdiag.model.vocabulary import MemoryKind

    sweep = [c.key for c in selected if c.part == "sweep"]
    kinds = tuple(
        k for k in MemoryKind if any(key.endswith("_" + k.value.replace("-", "_")) for key in sweep)
    )
    directions = tuple(
        d for d in ("h2d", "d2h", "bidir") if any(key.startswith(f"copy_{d}_") for key in sweep)
    )
    parts = tuple(
        p
        for p in ("sweep", "pinning", "overlap", "blocks")
        if (p == "sweep" and (sweep or any(c.part == "reference" for c in selected)))
        or any(c.part == p for c in selected)
    )
    return dataclasses.replace(
        opts,
        kinds=kinds or opts.kinds,
        directions=directions or opts.directions,
        parts=parts,
        reference=any(c.part == "reference" for c in selected),
        only=frozenset(sweep),
    )


def _live_machine(report):
    """The Report's machine, or this machine's facts when a copy was measured here, else None.

    The verdict judges pinned copies against the PCIe model for the GPU's link, which needs the
    link and its MaxPayload/MaxReadReq: one inspect (about a second) after a run of minutes.
    """
    from gdrdiag.errors import GdrdiagError
    from gdrdiag.model.results import Status

    if report.machine is not None or not any(r.status is Status.OK for r in report.results):
        return report.machine
    from gdrdiag.hw.bundle import LiveSource
    from gdrdiag.inspect.collect import inspect_source

    try:
        return inspect_source(LiveSource())
    except GdrdiagError:
        return None


def _text(report, width) -> str:
    """The verdict block (numbers that matter, findings), the detail tables, then the findings.

    The findings are those the results add to what ``gdrdiag inspect`` says about the machine.
    """
    import dataclasses

    from gdrdiag.diagnose import diagnose, diagnose_machine
    from gdrdiag.diagnose.verdicts import copy_verdict
    from gdrdiag.render.copy_table import render_copy_results
    from gdrdiag.render.findings_table import render_findings
    from gdrdiag.render.verdict import render_copy_verdict

    machine = _live_machine(report)
    inspect_says = {(f.code, f.subject) for f in diagnose_machine(machine)} if machine else set()
    judged = dataclasses.replace(report, machine=machine)
    findings = [f for f in diagnose(judged) if (f.code, f.subject) not in inspect_says]
    results = list(report.results)
    verdict = render_copy_verdict(copy_verdict(results, machine), findings, width)
    return f"{verdict}\n\n{render_copy_results(results, width)}\n\n{render_findings(findings)}"


@app.command("copy-bench")
@handles_errors
def copy_bench(
    ctx: typer.Context,
    cases: Optional[list[str]] = typer.Argument(
        None, help=CASES_HELP, show_default=False, metavar="[CASE]..."
    ),
    list_cases: bool = typer.Option(False, "--list", help=LIST_HELP),
    kinds: str = typer.Option(
        DEFAULT_KINDS,
        "--kinds",
        "--memory",
        "-G",
        help="Host memory kinds, comma-separated (-m is perftest's MTU, so not used here).",
    ),
    directions: str = typer.Option("h2d,d2h,bidir", "--directions", help="h2d, d2h, bidir."),
    sizes: str = typer.Option(DEFAULT_SIZES, "--sizes", "-s", help="Sizes (4K,1M,...) or a range 4K..1G."),
    modes: str = typer.Option("async,sync", "--modes", help="async (events) and/or sync (wall clock)."),
    parts: str = typer.Option("sweep,pinning,overlap,blocks", "--parts", help="Which parts to run."),
    iterations: int = typer.Option(10, "--iters", "-n", help="Timed samples per case."),
    warmup: int = typer.Option(2, "--warmup", help="Warm-up iterations per case."),
    device: int = typer.Option(0, "--device", help="CUDA device ordinal (-d is perftest's RDMA device)."),
    pin_size: str = typer.Option("256M", "--pin-size", help="Size for the pinning trade-off."),
    layers: int = typer.Option(16, "--layers", help="Layers in the overlap pipeline."),
    chunk: str = typer.Option("64M", "--chunk", help="Bytes per layer in the overlap pipeline."),
    block_count: int = typer.Option(10_000, "--blocks", help="Blocks per block-sweep point."),
    block_sizes: str = typer.Option(DEFAULT_BLOCKS, "--block-sizes", help="Block sizes, list or range."),
    reference: bool = typer.Option(
        True, "--reference/--no-reference", help="Also time CuPy/PyTorch copies of the same size."
    ),
    quick: bool = typer.Option(False, "--quick", help="A small run: a few sizes and kinds."),
    numa: str = typer.Option("auto", "--numa", help=NUMA_HELP),
    json_out: Optional[Path] = typer.Option(None, "--json-out", help="Also write the results as JSON here."),
    force: bool = typer.Option(False, "--force", "-f", help="Overwrite an existing --json-out file."),
    quiet: bool = typer.Option(False, "--quiet", help=QUIET_HELP),
) -> None:
    """Host<->GPU copy bandwidth: memory kinds, directions, sizes, pinning, overlap, many small blocks."""
    from gdrdiag.bench.copy import run_copy_bench
    from gdrdiag.bench.copy_config import CopyBenchOptions
    from gdrdiag.bench.registry import copy_registry
    from gdrdiag.hw.placement import check_request
    from gdrdiag.model.results import Status
    from gdrdiag.model.words import parse_memory_kind, parse_numa

    registry = copy_registry()
    if list_cases:
        from gdrdiag.cli.cases import print_case_list, probe_capabilities

        print_case_list(ctx, registry, probe_capabilities(), wants_json(ctx))
    selected = registry.select(cases or ())

    if quick:
        kinds, sizes, block_sizes = "pinned,pageable", "64K,16M,256M", "4K,64K,1M"
        iterations, layers, chunk = min(iterations, 5), 8, "32M"
    opts = CopyBenchOptions(
        kinds=tuple(parse_memory_kind(k) for k in split_list(kinds, "--kinds")),
        directions=split_list(directions, "--directions"),
        modes=split_list(modes, "--modes"),
        sizes=tuple(parse_size_list(sizes, what="--sizes")),
        parts=split_list(parts, "--parts"),
        iterations=iterations,
        warmup=warmup,
        device=device,
        pin_size=parse_size(pin_size, what="--pin-size"),
        overlap_layers=layers,
        overlap_chunk=parse_size(chunk, what="--chunk"),
        block_count=block_count,
        block_sizes=tuple(parse_size_list(block_sizes, what="--block-sizes")),
        reference=reference,
        numa=parse_numa(numa),
    )
    check_request(opts.numa)
    if cases:
        opts = _narrowed_to(opts, selected)
    opts.validate()
    from gdrdiag.bench.copy import planned_case_count
    from gdrdiag.cli.interrupt import exit_130_after, measure
    from gdrdiag.cli.reporting import bench_report

    progress = Progress("copy-bench", planned_case_count(opts), enabled=not quiet)
    results, stopped = measure(lambda: run_copy_bench(opts, progress=progress.step), list)
    report = bench_report("copy-bench", results, notes=(stopped.note,) if stopped else ())
    with exit_130_after(stopped):
        if json_out is not None:
            from gdrdiag.cli.report_files import write_text_file

            write_text_file(json_out, report.to_json(), force=force, what="--json-out")
        if wants_json(ctx):
            echo(report.to_json())
        else:
            echo_text(ctx, _text(report, output_width(ctx)))
        raise typer.Exit(EXIT_FAIL if any(r.status is Status.ERROR for r in results) else EXIT_OK)
