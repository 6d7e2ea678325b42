"""``gdrdiag peer-bench``: GPU<->GPU copies and SM peer reads/writes for every ordered GPU pair."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from gdrdiag.cli.application import app
from gdrdiag.cli.bench_command import BenchCommand, Output, run_bench_command
from gdrdiag.cli.cases import CASES_HELP, LIST_HELP
from gdrdiag.cli.common import handles_errors, wants_json
from gdrdiag.cli.progress import QUIET_HELP
from gdrdiag.errors import UserInputError
from gdrdiag.units import parse_size, parse_size_list

DEFAULT_SIZES = "4K,64K,1M,16M,256M"
ALL_SIZES = "4K..1G"
DEFAULT_BLOCK_SIZES = "128..2M"


def parse_pairs(text: Optional[str]) -> Optional[tuple[tuple[int, int], ...]]:
    """``0:1,1:0`` -> ((0, 1), (1, 0)); None for all ordered pairs."""
    if not text:
        return None
    out = []
    for item in text.split(","):
        a, sep, b = item.strip().partition(":")
        if not sep or not a.strip().isdigit() or not b.strip().isdigit():
            raise UserInputError(f"--pairs {item!r}: write SRC:DST with CUDA ordinals, e.g. 0:1,1:0")
        out.append((int(a), int(b)))
    return tuple(out)


def _gpu_count() -> int:
    """How many GPUs CUDA lists here (0 where CUDA cannot be used)."""
    from gdrdiag.bench.gpus import cuda_gpu_count

    return cuda_gpu_count() or 0


def _text(report, width) -> str:
    """The run's notes, the result tables, then the findings the results add."""
    from gdrdiag.diagnose import diagnose
    from gdrdiag.diagnose.peer_rules import CODES
    from gdrdiag.render.findings_table import render_findings
    from gdrdiag.render.peer_table import render_peer_results

    findings = [f for f in diagnose(report).findings if f.code in CODES or f.code == "PERF-PAIR-OUTLIER"]
    said = "".join(f"{note}\n\n" for note in report.notes if note.startswith("more than two GPUs"))
    return f"{said}{render_peer_results(list(report.results), width)}\n\n{render_findings(findings)}"


@app.command("peer-bench")
@handles_errors
def peer_bench(
    ctx: typer.Context,
    cases: Optional[list[str]] = typer.Argument(None, help=CASES_HELP, show_default=False),
    list_cases: bool = typer.Option(False, "--list", help=LIST_HELP),
    sizes: Optional[str] = typer.Option(
        None, "--sizes", "-s", help=f"Sizes (4K,1M,...) or a range 4K..1G (default {DEFAULT_SIZES})."
    ),
    all_sizes: bool = typer.Option(False, "--all-sizes", "-a", help=f"Every size {ALL_SIZES} (doubling)."),
    pairs: Optional[str] = typer.Option(
        None, "--pairs", help="Ordered GPU pairs SRC:DST,... (default: all)."
    ),
    iterations: int = typer.Option(10, "--iters", "-n", help="Timed samples per case."),
    warmup: int = typer.Option(2, "--warmup", help="Warm-up iterations per case."),
    reference_size: str = typer.Option("256M", "--reference-size", help="Size of the CuPy reference copy."),
    rounds: int = typer.Option(5, "--rounds", help="Interleaved rounds of the reference comparison."),
    block_count: int = typer.Option(10_000, "--blocks", help="Blocks per block size (peer_blocks)."),
    block_sizes: str = typer.Option(
        DEFAULT_BLOCK_SIZES, "--block-sizes", help="Block sizes of peer_blocks, list or range."
    ),
    block_region_max: str = typer.Option(
        "512M", "--block-region-max", help="Most bytes peer_blocks moves per block size (fewer blocks above)."
    ),
    json_out: Optional[Path] = typer.Option(None, "--json-out", help="Also write the results as JSON here."),
    force: bool = typer.Option(False, "--force", "-f", help="Overwrite an existing --json-out file."),
    quiet: bool = typer.Option(False, "--quiet", help=QUIET_HELP),
) -> None:
    """GPU<->GPU paths: CE and SM peer copies, latencies, all-to-one, many small blocks; vs the path model."""
    import dataclasses

    from gdrdiag.bench.peer import PeerBenchOptions
    from gdrdiag.bench.registry import peer_registry

    registry = peer_registry()
    if list_cases:
        from gdrdiag.bench.preflight import probe_capabilities
        from gdrdiag.cli.cases import print_case_list

        print_case_list(ctx, registry, probe_capabilities(), wants_json(ctx), cases)
    if all_sizes and sizes is not None:
        raise UserInputError("-a/--all-sizes runs every size and --sizes names some; give one of them")
    selected = registry.select(cases or ())
    node_matrix = not (cases or sizes or all_sizes or pairs) and _gpu_count() > 2
    opts = PeerBenchOptions(
        sizes=tuple(parse_size_list(ALL_SIZES if all_sizes else sizes or DEFAULT_SIZES, what="--sizes")),
        keys=tuple(c.key for c in selected),
        pairs=parse_pairs(pairs),
        iterations=iterations,
        warmup=warmup,
        reference_size=parse_size(reference_size, what="--reference-size"),
        reference_rounds=rounds,
        block_sizes=tuple(parse_size_list(block_sizes, what="--block-sizes")),
        block_count=block_count,
        block_region_max=parse_size(block_region_max, what="--block-region-max"),
    )
    notes: list[str] = []
    if node_matrix:  # every ordered pair at one size: n(n-1) pairs x the sweep would take many minutes
        from gdrdiag.bench.profiles import NODE_PEER_KEYS, NODE_PEER_SIZE

        opts = dataclasses.replace(opts, sizes=(NODE_PEER_SIZE,), keys=NODE_PEER_KEYS)
        notes.append(
            "more than two GPUs: each ordered pair at one size (64 MiB: CE copies with peer access off and "
            "on, the SM's read, all-to-one into each GPU and all-to-all once); --sizes, -a, --pairs or a "
            "CASE runs the sweep"
        )
    opts.validate()
    from gdrdiag.bench import peer
    from gdrdiag.cli.reporting import results_report
    from gdrdiag.hw.bundle import LiveSource
    from gdrdiag.inspect.collect import inspect_source

    try:  # the path model needs the pairs' facts before the run
        machine = inspect_source(LiveSource())
    except Exception as exc:  # noqa: BLE001 - the results are worth having without the model
        machine = None
        notes.append(f"machine facts unknown: {' '.join(str(exc).split())[:200]}")
    n_pairs = max(1, len(machine.peers)) if machine is not None else 2
    command = BenchCommand(
        name="peer-bench",
        steps=peer.planned_case_count(opts, n_pairs),
        measure=lambda progress: peer.run_peer_bench(opts, machine, progress=progress.step),
        partial=list,
        report=lambda results, more: results_report(
            "peer-bench", results, machine=machine, notes=(*notes, *more)
        ),
        text=lambda results, report, width: _text(report, width),
    )
    run_bench_command(ctx, command, Output(json_out, force, quiet))
