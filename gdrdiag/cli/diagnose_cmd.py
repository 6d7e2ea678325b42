"""``gdrdiag diagnose r.json``: findings from a saved Report, offline."""

from __future__ import annotations

from pathlib import Path

import typer

from gdrdiag.cli.application import app
from gdrdiag.cli.common import EXIT_FAIL, EXIT_OK, echo, echo_text, handles_errors, wants_json


@app.command("diagnose")
@handles_errors
def diagnose_cmd(
    ctx: typer.Context,
    report_path: Path = typer.Argument(
        ..., metavar="REPORT.json", help="A Report written by gdrdiag report."
    ),
    all_rows: bool = typer.Option(
        False, "--all-rows", help="Show every judged row against its path (default: the first 30)."
    ),
) -> None:
    """Run every rule over a saved Report (machine facts and bench results); no hardware needed.

    Exit code: 0 when nothing is worse than WARN, 1 with a FAIL finding, 2 for a bad file.
    """
    import json

    from gdrdiag.cli.report_files import load_report
    from gdrdiag.diagnose import diagnose
    from gdrdiag.model.findings import Severity
    from gdrdiag.model.serde import to_jsonable
    from gdrdiag.render.findings_table import render_findings
    from gdrdiag.render.path_table import render_judgements

    report = load_report(report_path)
    diagnosis = diagnose(report)
    findings, judgements = list(diagnosis.findings), diagnosis.judgements
    if wants_json(ctx):
        doc = {"report": str(report_path), "findings": to_jsonable(findings), "rows": to_jsonable(judgements)}
        echo(json.dumps(doc, indent=2))
    else:
        title = f"Findings for {report_path} ({report.command or 'report'})"
        text = render_findings(findings, title=title)
        if judgements:
            text += "\n\n" + render_judgements(judgements, limit=0 if all_rows else 30)
        echo_text(ctx, text)
    raise typer.Exit(EXIT_FAIL if any(f.severity is Severity.FAIL for f in findings) else EXIT_OK)
