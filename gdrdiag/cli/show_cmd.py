"""``gdrdiag show r.json``: a saved Report's numbers as text (or as the v2 JSON it loads as)."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from gdrdiag.cli.application import app
from gdrdiag.cli.common import EXIT_OK, echo, handles_errors, wants_json
from gdrdiag.errors import UserInputError


def _benches(name: Optional[str]):
    """The benches to show: the one ``--bench`` names, or all of them.

    A bench is named as its command (``peer-bench``), as its short name (``peer``), or ``import``;
    the names come from the one table the view titles its sections with, so every bench a Report
    can hold can be asked for.
    """
    from gdrdiag.render.report_view import BENCH_NAMES

    if name is None:
        return tuple(BENCH_NAMES)
    choices = {bench.value: bench for bench in BENCH_NAMES} | {v: b for b, v in BENCH_NAMES.items()}
    choices["import"] = choices["imported"]
    bench = choices.get(name.strip().lower())
    if bench is None:
        raise UserInputError(f"--bench {name!r}: not a bench; use one of {', '.join(BENCH_NAMES.values())}")
    return (bench,)


@app.command("show")
@handles_errors
def show_cmd(
    ctx: typer.Context,
    report_path: Path = typer.Argument(
        ..., metavar="REPORT.json", help="A Report (gdrdiag report -o, a bench's --json-out, import -o)."
    ),
    bench: Optional[str] = typer.Option(
        None,
        "--bench",
        help="Show one bench only: copy-bench, gather-bench, mr-bench, peer-bench or imported.",
    ),
) -> None:
    """Show a saved Report: where it came from, its results per bench, and the findings saved in it.

    Reads version-1 and version-2 Reports; with --json prints the Report as loaded (version 2;
    with --bench, holding that bench's results only).
    Nothing is measured or re-diagnosed (use gdrdiag diagnose for the current rules' verdict).
    """
    from gdrdiag.cli.report_files import load_report

    benches = _benches(bench)
    report = load_report(report_path)
    if wants_json(ctx):
        if bench is not None:  # the Report with that bench's results only (findings and machine kept)
            import dataclasses

            report = dataclasses.replace(
                report, results=tuple(r for r in report.results if r.bench in benches)
            )
        echo(report.to_json())
        raise typer.Exit(EXIT_OK)
    from gdrdiag.diagnose.rdma_rules import ro_pairs
    from gdrdiag.model.vocabulary import Bench
    from gdrdiag.render.report_view import ViewInput, render_report_view

    pairs = ro_pairs([r for r in report.results if r.bench is Bench.MR]) if Bench.MR in benches else ()
    view = ViewInput(report=report, label=str(report_path), benches=benches, ro_pairs=pairs)
    echo(render_report_view(view))
    raise typer.Exit(EXIT_OK)
