"""``gdrdiag inspect``: facts about this machine (or a bundle) plus ranked findings.

Exit codes (docs/inspect.md): 0 when no finding is worse than WARN, 1 when a FAIL finding
exists (or the machine could not be read), 2 for a usage error (bad option, unreadable or
corrupt bundle).
"""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from gdrdiag.cli.application import app
from gdrdiag.cli.common import EXIT_FAIL, EXIT_OK, echo, echo_text, handles_errors, output_width, wants_json
from gdrdiag.errors import UserInputError


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
    check: bool = typer.Option(
        False,
        "--check",
        help="Readiness check for a Slurm prolog / k8s probe: one line, exit 0 ready, 1 not, 2 error.",
    ),
    strict: bool = typer.Option(
        False, "--strict", help="With --check: a WARN finding also makes the node not ready."
    ),
    expect_gpus: Optional[int] = typer.Option(
        None, "--expect-gpus", help="With --check: GPUs this node must have."
    ),
    expect_nics: Optional[int] = typer.Option(
        None, "--expect-nics", help="With --check: RDMA devices this node must have."
    ),
) -> None:
    """Read the machine (PCIe, virtualization, GPUs, RDMA NICs, topology) and say what is wrong."""
    from gdrdiag.model.findings import Severity
    from gdrdiag.render.machine_table import render_inspect

    if not check and (strict or expect_gpus is not None or expect_nics is not None):
        raise UserInputError("--strict, --expect-gpus and --expect-nics go with --check")
    if check:
        _check(ctx, str(bundle) if bundle else None, strict, expect_gpus, expect_nics)
    report = inspect_report(str(bundle) if bundle else None)
    if wants_json(ctx):
        echo(report.to_json())
    else:
        text = render_inspect(report.machine, report.findings, verbose=not brief, width=output_width(ctx))
        echo_text(ctx, text)
    failed = any(f.severity == Severity.FAIL for f in report.findings)
    raise typer.Exit(EXIT_FAIL if failed else EXIT_OK)


def _check(
    ctx: typer.Context,
    bundle: Optional[str],
    strict: bool,
    expect_gpus: Optional[int],
    expect_nics: Optional[int],
) -> None:
    """``inspect --check``: configuration only (no benchmark), one line, exit 0 ready / 1 not ready.

    Not ready: a FAIL finding (with ``--strict`` also a WARN), or fewer GPUs / RDMA devices than
    ``--expect-gpus`` / ``--expect-nics``. Exit 2 (one line on stderr) when the check itself could
    not run: a bad option or an unreadable bundle. Meant for a Slurm prolog/healthcheck or a
    Kubernetes readiness probe; docs/fleet.md.
    """
    import json
    import time

    from gdrdiag.model.findings import Severity

    if (expect_gpus is not None and expect_gpus < 0) or (expect_nics is not None and expect_nics < 0):
        raise UserInputError("--expect-gpus/--expect-nics must be >= 0")
    start = time.monotonic()
    report = inspect_report(bundle)
    machine = report.machine
    bad_levels = (Severity.FAIL, Severity.WARN) if strict else (Severity.FAIL,)
    problems = [
        f"{f.code} {f.subject}: {f.title}".replace(" :", ":")
        for f in report.findings
        if f.severity in bad_levels
    ]
    gpus = len(machine.gpus) if machine else 0
    nics = len(machine.nics) if machine else 0
    if expect_gpus is not None and gpus < expect_gpus:
        problems.insert(0, f"CHECK-GPU-COUNT: {gpus} GPU(s), expected {expect_gpus}")
    if expect_nics is not None and nics < expect_nics:
        problems.insert(0, f"CHECK-NIC-COUNT: {nics} RDMA device(s), expected {expect_nics}")
    seconds = time.monotonic() - start
    counts = {s.value: sum(1 for f in report.findings if f.severity is s) for s in Severity}
    if wants_json(ctx):
        echo(
            json.dumps(
                {
                    "ready": not problems,
                    "problems": problems,
                    "findings": counts,
                    "gpus": gpus,
                    "nics": nics,
                    "seconds": round(seconds, 3),
                }
            )
        )
    elif problems:
        echo(f"NOT READY: {problems[0]}" + (f" (+{len(problems) - 1} more)" if len(problems) > 1 else ""))
    else:
        echo(
            f"ready: {gpus} GPU(s), {nics} RDMA device(s), {counts['FAIL']} FAIL, {counts['WARN']} WARN, "
            f"{counts['INFO']} INFO ({seconds:.1f} s)"
        )
    raise typer.Exit(EXIT_FAIL if problems else EXIT_OK)
