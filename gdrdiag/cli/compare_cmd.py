"""``gdrdiag compare a.json b.json``: two Reports side by side, with what differs and why."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from gdrdiag.cli.application import app
from gdrdiag.cli.collector import pauses_collector
from gdrdiag.cli.common import EXIT_FAIL, EXIT_OK, echo, echo_text, handles_errors, output_width, wants_json


@app.command("compare")
@handles_errors
@pauses_collector
def compare_cmd(
    ctx: typer.Context,
    a_path: Path = typer.Argument(..., metavar="A.json", help="First Report (e.g. bare metal)."),
    b_path: Path = typer.Argument(..., metavar="B.json", help="Second Report (e.g. the VM)."),
    all_cases: bool = typer.Option(False, "--all", help="Show every matched case, not only large deltas."),
    html: Optional[Path] = typer.Option(None, "--html", help="Also write an HTML page with plots."),
    force: bool = typer.Option(False, "--force", "-f", help="Overwrite an existing --html file."),
) -> None:
    """Match cases, show ratios (B/A), machine facts that differ and the causes of each large delta.

    Both Reports are re-diagnosed with the current rules. Exits 1 when B has a FAIL finding.
    """
    import json

    from gdrdiag.cli.report_files import load_report
    from gdrdiag.compare import compare
    from gdrdiag.diagnose import diagnose
    from gdrdiag.model.findings import Severity
    from gdrdiag.model.serde import to_jsonable
    from gdrdiag.render.compare_table import render_comparison

    a, b = load_report(a_path), load_report(b_path)
    fa, fb = list(diagnose(a).findings), list(diagnose(b).findings)
    comparison = compare(a, b, a_label=a_path.stem, b_label=b_path.stem, findings=(fa, fb))
    if html is not None:
        from gdrdiag.cli.report_files import write_text_file
        from gdrdiag.render.html import comparison_html

        write_text_file(html, comparison_html(comparison, a, b), force=force, what="--html")
    if wants_json(ctx):
        echo(json.dumps(to_jsonable(comparison), indent=2))
    else:
        # --wide (added to every command by the root group) makes output_width None.
        echo_text(ctx, render_comparison(comparison, all_cases=all_cases, width=output_width(ctx)))
        if html is not None:
            echo(f"wrote {html}")
    # README: exit 1 means a FAIL finding; B is the Report being judged against A.
    raise typer.Exit(EXIT_FAIL if any(f.severity is Severity.FAIL for f in fb) else EXIT_OK)
