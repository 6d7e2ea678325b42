"""``gdrdiag report -o r.json``: inspect plus the standard benches into one Report."""

from __future__ import annotations

from pathlib import Path
from typing import Callable, Optional

import typer

from gdrdiag.bench.profiles import PROFILE_BENCHES
from gdrdiag.cli import app
from gdrdiag.cli.common import EXIT_FAIL, EXIT_OK, echo, handles_errors, progress_enabled, wants_json
from gdrdiag.errors import UserInputError


def build_report(level: str, progress: Optional[Callable[[str], None]] = None):
    """Inspect this machine, run the standard benches at ``level``, diagnose; return the Report."""
    import dataclasses

    from gdrdiag.bench.runner import run_case
    from gdrdiag.cli.reporting import results_report
    from gdrdiag.diagnose import diagnose
    from gdrdiag.hw.bundle import LiveSource
    from gdrdiag.inspect.collect import inspect_source

    if progress:
        progress("inspect")
    machine = inspect_source(LiveSource())
    results = []
    for name, bench in PROFILE_BENCHES:
        if progress:
            progress(name)
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
    if progress_enabled() and not wants_json(ctx):
        with typer.progressbar(length=1 + len(PROFILE_BENCHES), label=f"report ({level})") as bar:
            report = build_report(level, progress=lambda _step: bar.update(1))
    else:
        report = build_report(level)
    output.write_text(report.to_json())
    if html is not None:
        from gdrdiag.cli.report_files import write_text_file
        from gdrdiag.render.html import report_html

        write_text_file(html, report_html(report, report.findings))
    if wants_json(ctx):
        echo(report.to_json())
    else:
        counts: dict[str, int] = {}
        for r in report.results:
            counts[r.status.value] = counts.get(r.status.value, 0) + 1
        echo(f"wrote {output}: {len(report.results)} results "
             f"({', '.join(f'{n} {s}' for s, n in sorted(counts.items()))})")
        echo(render_findings(report.findings))
    raise typer.Exit(EXIT_FAIL if any(f.severity is Severity.FAIL for f in report.findings) else EXIT_OK)
