"""``gdrdiag import FILE... --bundle node.tar.gz -o r.json``: other tools' outputs into a Report."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from gdrdiag.cli import app
from gdrdiag.cli.common import EXIT_FAIL, EXIT_OK, echo, echo_text, handles_errors, wants_json
from gdrdiag.errors import UserInputError


@app.command("import")
@handles_errors
def import_cmd(
    ctx: typer.Context,
    files: list[Path] = typer.Argument(
        ..., metavar="FILE...", help="perftest BW text or --out_json, nvbandwidth -j."
    ),
    bundle: Optional[Path] = typer.Option(
        None, "--bundle", help="inspect/collect bundle (folder or .tar.gz) of the machine the tools ran on."
    ),
    into: Optional[Path] = typer.Option(None, "--into", help="Add the results to this saved Report instead."),
    output: Optional[Path] = typer.Option(None, "--output", "-o", help="Write the Report (JSON) here."),
    perftest_gbits: bool = typer.Option(
        False, "--perftest-gbits", help="perftest JSON files were made with --report_gbits (default MB/sec)."
    ),
) -> None:
    """Turn perftest (ib_write_bw/ib_read_bw/ib_send_bw) and nvbandwidth outputs into Report results.

    With --bundle (or --into) the machine facts come along, so `diagnose` and `compare` judge the
    imported numbers against this machine. Exit code: 0, or 1 with a FAIL finding; 2 for input it
    cannot read (one line saying why).
    """
    import dataclasses

    from gdrdiag.cli.report_files import load_report, write_text_file
    from gdrdiag.cli.reporting import results_report
    from gdrdiag.diagnose import diagnose
    from gdrdiag.importers import import_text
    from gdrdiag.model.findings import Severity
    from gdrdiag.render.findings_table import render_findings

    if bundle is not None and into is not None:
        raise UserInputError("give --bundle or --into, not both")
    results = []
    for path in files:
        if not path.is_file():
            raise UserInputError(f"{path}: no such file")
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise UserInputError(f"{path}: cannot read as text ({type(exc).__name__})") from None
        try:
            results.extend(import_text(text, path.name, perftest_gbits=perftest_gbits))
        except UserInputError as exc:
            raise UserInputError(f"{path}: {exc}") from None
    if into is not None:
        base = load_report(into)
        report = dataclasses.replace(
            base,
            results=base.results + tuple(results),
            notes=base.notes + (f"imported {', '.join(p.name for p in files)}",),
        )
    else:
        machine = _machine(bundle) if bundle is not None else None
        report = results_report("import", results, machine=machine)
    report = dataclasses.replace(report, findings=tuple(diagnose(report)))
    if output is not None:
        write_text_file(output, report.to_json())
    if wants_json(ctx):
        echo(report.to_json())
    else:
        where = f"; wrote {output}" if output else " (give -o to keep them)"
        echo_text(
            ctx,
            f"imported {len(results)} results from {len(files)} file(s){where}"
            + ("" if report.machine else "; no machine facts (give --bundle)"),
        )
        echo_text(ctx, render_findings(report.findings))
    raise typer.Exit(EXIT_FAIL if any(f.severity is Severity.FAIL for f in report.findings) else EXIT_OK)


def _machine(bundle: Path):
    from gdrdiag.hw.bundle import open_bundle
    from gdrdiag.inspect.collect import inspect_source

    if not bundle.exists():
        raise UserInputError(f"--bundle {bundle}: no such file or folder")
    with open_bundle(str(bundle)) as source:
        return inspect_source(source)
