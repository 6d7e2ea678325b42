"""``gdrdiag copy-bench``: host<->GPU copies (sweep, pinning, overlap, block sweep)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Optional

import typer

from gdrdiag.bench.gpus import GPUS_HELP
from gdrdiag.cli.application import app
from gdrdiag.cli.bench_command import BenchCommand, Output, run_bench_command
from gdrdiag.cli.cases import CASES_HELP, LIST_HELP
from gdrdiag.cli.common import handles_errors, split_list, wants_json
from gdrdiag.cli.progress import QUIET_HELP, Progress
from gdrdiag.model.vocabulary import MemoryKind
from gdrdiag.model.words import NUMA_HELP
from gdrdiag.units import KiB, MiB, parse_size, parse_size_list

if TYPE_CHECKING:
    from gdrdiag.bench.cases import Case
    from gdrdiag.bench.copy_config import CopyBenchOptions
    from gdrdiag.bench.gpus import GpuLoop
    from gdrdiag.model.report import Report

FULL_HELP = (
    "The whole matrix (about 2.5 minutes on an H100): five memory kinds x three directions x ten sizes "
    "(4K..1G) x async and sync, the CuPy/PyTorch reference, the pinning trade-off, the overlap pipeline "
    "and the block sweep 128..2M. Without it (and without CASEs or --quick) copy-bench runs a first "
    "look in under a minute: pinned and pageable at 256M in each direction and both at once, and the "
    "block sweep 2K,8K,32K,128K,512K."
)


def _narrowed_to(opts: "CopyBenchOptions", selected: tuple[Case, ...]) -> "CopyBenchOptions":
    """Options that run just the selected cases: kinds, directions and parts from the cases' params.

    Only the selected keys run (``only``); a case of any other part (one a bench module adds) runs by
    its key alone.
    """
    import dataclasses

    from gdrdiag.bench.copy_config import DIRECTIONS
    from gdrdiag.model.params import CopyParams

    sweep = [c.params for c in selected if c.part == "sweep" and isinstance(c.params, CopyParams)]
    kinds = tuple(k for k in MemoryKind if any(p.memory is k for p in sweep))
    directions = tuple(d for d in DIRECTIONS if any(p.direction and p.direction.value == d for p in sweep))
    reference = any(c.part == "reference" for c in selected)
    parts = tuple(
        p
        for p in ("sweep", "pinning", "overlap", "blocks")
        if (p == "sweep" and (sweep or reference)) or any(c.part == p for c in selected)
    )
    return dataclasses.replace(
        opts,
        kinds=kinds or opts.kinds,
        directions=directions or opts.directions,
        parts=parts,
        reference=reference,
        only=frozenset(c.key for c in selected),
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
    from gdrdiag.diagnose.node_rules import outliers, sibling_rows, split_by_gpu
    from gdrdiag.diagnose.verdicts import copy_verdict
    from gdrdiag.render.copy_table import render_copy_results
    from gdrdiag.render.findings_table import render_findings
    from gdrdiag.render.gpu_table import render_gpus_side_by_side
    from gdrdiag.render.verdict import render_copy_verdict

    machine = _live_machine(report)
    inspect_says = {(f.code, f.subject) for f in diagnose_machine(machine)} if machine else set()
    judged = dataclasses.replace(report, machine=machine)
    diagnosis = diagnose(judged)
    findings = [f for f in diagnosis.findings if (f.code, f.subject) not in inspect_says]
    results = list(report.results)
    shares = split_by_gpu(results, diagnosis.judgements, machine)
    if len(shares) > 1:  # --gpus: a verdict per GPU, then the GPUs side by side
        rows = sibling_rows(results)
        blocks = [
            f"GPU {s.gpu}{f' ({s.address})' if s.address else ''}:\n"
            + render_copy_verdict(copy_verdict(list(s.results), s.judgements), (), width)
            for s in shares
        ]
        side = render_gpus_side_by_side(results, rows, outliers(results, rows), width)
        return "\n\n".join([*blocks, side, render_findings(findings)])
    verdict = render_copy_verdict(copy_verdict(results, diagnosis.judgements), findings, width)
    return f"{verdict}\n\n{render_copy_results(results, width)}\n\n{render_findings(findings)}"


@app.command("copy-bench")
@handles_errors
def copy_bench(
    ctx: typer.Context,
    cases: Optional[list[str]] = typer.Argument(
        None, help=CASES_HELP, show_default=False, metavar="[CASE]..."
    ),
    list_cases: bool = typer.Option(False, "--list", help=LIST_HELP),
    full: bool = typer.Option(False, "--full", help=FULL_HELP),
    kinds: Optional[str] = typer.Option(
        None,
        "--kinds",
        "--memory",
        "-G",
        help="Host memory kinds, comma-separated (-m is perftest's MTU, so not used here). "
        "Default pinned,pageable; --full: pinned,pinned-wc,registered,pageable,managed.",
        show_default=False,
    ),
    directions: Optional[str] = typer.Option(
        None, "--directions", help="h2d, d2h, bidir (default: all three).", show_default=False
    ),
    sizes: Optional[str] = typer.Option(
        None,
        "--sizes",
        "-s",
        help="Sizes (4K,1M,...) or a range 4K..1G. Default 256M; --full: 4K,16K,...,1G.",
        show_default=False,
    ),
    modes: Optional[str] = typer.Option(
        None,
        "--modes",
        help="async (events) and/or sync (wall clock). Default async; --full: async,sync.",
        show_default=False,
    ),
    parts: Optional[str] = typer.Option(
        None,
        "--parts",
        help="Which parts to run: sweep, pinning, overlap, blocks. Default sweep,blocks; --full: all four.",
        show_default=False,
    ),
    iterations: int = typer.Option(10, "--iters", "-n", help="Timed samples per case."),
    warmup: int = typer.Option(2, "--warmup", help="Warm-up iterations per case."),
    device: Optional[int] = typer.Option(
        None,
        "--device",
        help="CUDA device ordinal (default 0; -d is perftest's RDMA device).",
        show_default=False,
    ),
    gpus: Optional[str] = typer.Option(None, "--gpus", help=GPUS_HELP, show_default=False),
    pin_size: str = typer.Option("256M", "--pin-size", help="Size for the pinning trade-off."),
    layers: int = typer.Option(16, "--layers", help="Layers in the overlap pipeline."),
    chunk: str = typer.Option("64M", "--chunk", help="Bytes per layer in the overlap pipeline."),
    block_count: int = typer.Option(10_000, "--blocks", help="Blocks per block-sweep point."),
    block_sizes: Optional[str] = typer.Option(
        None,
        "--block-sizes",
        help="Block sizes, list or range. Default 2K,8K,32K,128K,512K; --full: 128..2M.",
        show_default=False,
    ),
    reference: Optional[bool] = typer.Option(
        None,
        "--reference/--no-reference",
        help="Also time CuPy/PyTorch copies of the same size (default: with --full or CASEs).",
        show_default=False,
    ),
    quick: bool = typer.Option(
        False, "--quick", help="A small run of the whole matrix: a few sizes and kinds."
    ),
    numa: str = typer.Option("auto", "--numa", help=NUMA_HELP),
    json_out: Optional[Path] = typer.Option(None, "--json-out", help="Also write the results as JSON here."),
    force: bool = typer.Option(False, "--force", "-f", help="Overwrite an existing --json-out file."),
    quiet: bool = typer.Option(False, "--quiet", help=QUIET_HELP),
) -> None:
    """Host<->GPU copy bandwidth: by default a first look in under a minute; --full for every case.

    The first look: pinned and pageable memory at 256M, host->GPU, GPU->host and both at once, and
    many small blocks (one call each, batched, coalesced, a kernel), verdict first.
    """
    from gdrdiag.bench import copy
    from gdrdiag.bench.gpus import GpuLoop, choose_gpus
    from gdrdiag.bench.registry import copy_registry

    registry = copy_registry()
    if list_cases:
        from gdrdiag.bench.preflight import probe_capabilities
        from gdrdiag.cli.cases import print_case_list

        print_case_list(ctx, registry, probe_capabilities(), wants_json(ctx), cases)
    selected = registry.select(cases or ())
    opts = copy_options(
        full=full or bool(cases),
        quick=quick,
        given=CopyChoices(kinds, directions, sizes, modes, parts, block_sizes, reference),
        iterations=iterations,
        warmup=warmup,
        device=device or 0,
        pin_size=pin_size,
        layers=layers,
        chunk=chunk,
        block_count=block_count,
        numa=numa,
    )
    opts.check_numa()
    if cases:
        opts = _narrowed_to(opts, selected)
    opts.validate()
    loop = GpuLoop(choose_gpus(gpus, device) or (opts.device,))
    command = BenchCommand(
        name="copy-bench",
        steps=copy.planned_case_count(opts) * len(loop.ordinals),
        measure=lambda progress: _measure(opts, loop, progress),
        partial=loop.tag_partial,  # results measured before a Ctrl-C record their GPU too
        report=_report,
        text=lambda results, report, width: _text(report, width),
    )
    run_bench_command(ctx, command, Output(json_out, force, quiet))


def _measure(opts: "CopyBenchOptions", loop: "GpuLoop", progress: Progress) -> list:
    """The run on each GPU of ``loop``, then (several GPUs) every GPU copying at once."""
    import dataclasses

    from gdrdiag.bench import copy

    results = loop.run(lambda gpu: copy.run_copy_bench(dataclasses.replace(opts, device=gpu), progress.step))
    if len(loop.ordinals) > 1 and "sweep" in opts.parts and MemoryKind.PINNED in opts.kinds:
        from gdrdiag.bench.copy_together import together_case

        # every GPU at once, at the sweep's largest size (each GPU measured it alone above)
        results += together_case(
            loop.ordinals, max(opts.sizes), iterations=opts.iterations, warmup=opts.warmup
        )
    return results


def _report(results: list, notes: tuple[str, ...]) -> "Report":
    """The Report: the rows (together rows beside the sum of the GPUs alone) and this machine."""
    from gdrdiag.bench.copy_together import with_sum_alone
    from gdrdiag.cli.reporting import bench_report

    return bench_report("copy-bench", with_sum_alone(results), notes=notes)


@dataclass(frozen=True)
class CopyChoices:
    """The options whose default depends on the run (first look or --full): None = not given."""

    kinds: Optional[str] = None
    directions: Optional[str] = None
    sizes: Optional[str] = None
    modes: Optional[str] = None
    parts: Optional[str] = None
    block_sizes: Optional[str] = None
    reference: Optional[bool] = None


def copy_options(
    *,
    full: bool,
    quick: bool,
    given: CopyChoices,
    iterations: int = 10,
    warmup: int = 2,
    device: int = 0,
    pin_size: str = "256M",
    layers: int = 16,
    chunk: str = "64M",
    block_count: int = 10_000,
    numa: str = "auto",
) -> "CopyBenchOptions":
    """The options a copy-bench command line asks for (before a CASE selection narrows them).

    The base is the first look (``copy_config.FIRST_LOOK``) unless ``full`` (``--full``, or cases
    named) or ``quick`` (a small run of the whole matrix, as it always was); what the user gave
    replaces the base's value. Bad input raises UserInputError (one line, exit 2).
    """
    import dataclasses

    from gdrdiag.bench.copy_config import FIRST_LOOK, CopyBenchOptions
    from gdrdiag.errors import UserInputError
    from gdrdiag.model.words import parse_memory_kind, parse_numa

    if full and quick:
        raise UserInputError("--quick and --full ask for different runs: choose one")
    base = CopyBenchOptions() if full or quick else FIRST_LOOK
    chosen = dataclasses.replace(
        base,
        iterations=iterations,
        warmup=warmup,
        device=device,
        pin_size=parse_size(pin_size, what="--pin-size"),
        overlap_layers=layers,
        overlap_chunk=parse_size(chunk, what="--chunk"),
        block_count=block_count,
        numa=parse_numa(numa),
    )
    g = given
    if g.kinds is not None:
        chosen = dataclasses.replace(
            chosen, kinds=tuple(parse_memory_kind(k) for k in split_list(g.kinds, "--kinds"))
        )
    if g.directions is not None:
        chosen = dataclasses.replace(chosen, directions=split_list(g.directions, "--directions"))
    if g.sizes is not None:
        chosen = dataclasses.replace(chosen, sizes=tuple(parse_size_list(g.sizes, what="--sizes")))
    if g.modes is not None:
        chosen = dataclasses.replace(chosen, modes=split_list(g.modes, "--modes"))
    if g.parts is not None:
        chosen = dataclasses.replace(chosen, parts=split_list(g.parts, "--parts"))
    if g.block_sizes is not None:
        sizes_ = tuple(parse_size_list(g.block_sizes, what="--block-sizes"))
        chosen = dataclasses.replace(chosen, block_sizes=sizes_)
    if g.reference is not None:
        chosen = dataclasses.replace(chosen, reference=g.reference)
    if quick:  # --quick has always meant these, whatever else is given
        chosen = dataclasses.replace(
            chosen,
            kinds=(MemoryKind.PINNED, MemoryKind.PAGEABLE),
            sizes=(64 * KiB, 16 * MiB, 256 * MiB),
            block_sizes=(4 * KiB, 64 * KiB, 1 * MiB),
            iterations=min(iterations, 5),
            overlap_layers=8,
            overlap_chunk=32 * MiB,
        )
    return chosen
