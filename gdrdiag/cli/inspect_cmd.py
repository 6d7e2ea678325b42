"""``gdrdiag inspect``: facts about this machine (or a bundle) plus ranked findings.

Exit codes (docs/inspect.md): 0 when no finding is worse than WARN, 1 when a FAIL finding
exists (or the machine could not be read), 2 for a usage error (bad option, unreadable or
corrupt bundle).
"""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from gdrdiag.cli import app
from gdrdiag.cli.common import EXIT_FAIL, EXIT_OK, echo, handles_errors, wants_json


def inspect_report(bundle: Optional[str]):
    """Run inspect + diagnose over a bundle or this machine; return the Report."""
    from gdrdiag.cli.reporting import results_report
    from gdrdiag.diagnose import diagnose_machine
    from gdrdiag.hw.bundle import LiveSource, open_bundle
    from gdrdiag.inspect.collect import inspect_source

    if bundle:
        with open_bundle(bundle) as source:
            machine = inspect_source(source)
    else:
        machine = inspect_source(LiveSource())
    return results_report("inspect", [], machine=machine, findings=tuple(diagnose_machine(machine)))


@app.command("inspect")
@handles_errors
def inspect(
    ctx: typer.Context,
    bundle: Optional[Path] = typer.Option(  # noqa: B008
        None,
        "--bundle",
        "-b",
        help="Read a bundle from `gdrdiag collect` (.tar.gz or unpacked folder) instead of this machine.",
    ),
    brief: bool = typer.Option(False, "--brief", help="Findings table only, without evidence and advice."),
) -> None:
    """Read the machine (PCIe, virtualization, GPUs, RDMA NICs, topology) and say what is wrong."""
    from gdrdiag.model.findings import Severity
    from gdrdiag.render.machine_table import render_inspect

    report = inspect_report(str(bundle) if bundle else None)
    if wants_json(ctx):
        echo(report.to_json())
    else:
        echo(render_inspect(report.machine, report.findings, verbose=not brief))
    failed = any(f.severity == Severity.FAIL for f in report.findings)
    raise typer.Exit(EXIT_FAIL if failed else EXIT_OK)
