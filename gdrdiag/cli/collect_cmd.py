"""``gdrdiag collect -o node.tar.gz``: save the raw inputs of inspect, to diagnose elsewhere.

The bundle holds exactly what inspect read (sysfs/procfs files, config-space bytes) plus the
CUDA, NVML and verbs facts as JSON; ``gdrdiag inspect --bundle node.tar.gz`` replays it. Run
as root to include full config space (registers); without root the bundle says so.
"""

from __future__ import annotations

import os
from pathlib import Path

import typer

from gdrdiag.cli.application import app
from gdrdiag.cli.common import EXIT_OK, echo, handles_errors, wants_json
from gdrdiag.errors import UserInputError


@app.command("collect")
@handles_errors
def collect(
    ctx: typer.Context,
    output: Path = typer.Option(..., "--output", "-o", help="Bundle to write (.tar.gz)."),  # noqa: B008
    force: bool = typer.Option(False, "--force", "-f", help="Overwrite an existing file."),
) -> None:
    """Save a support bundle of this machine's inspect inputs (.tar.gz)."""
    import json

    from gdrdiag.inspect.collect import collect_bundle

    out = str(output)
    if os.path.isdir(out):
        raise UserInputError(f"--output {out} is a folder; give a file name such as node.tar.gz")
    if os.path.exists(out) and not force:
        raise UserInputError(f"--output {out} exists; use -f/--force to overwrite")
    parent = os.path.dirname(os.path.abspath(out))
    if not os.path.isdir(parent):
        raise UserInputError(f"--output: folder {parent} does not exist")
    machine, summary = collect_bundle(out, replace=force)
    if wants_json(ctx):
        echo(
            json.dumps(
                {
                    **summary,
                    "privileged": machine.privileged,
                    "gpus": len(machine.gpus),
                    "nics": len(machine.nics),
                }
            )
        )
    else:
        note = "" if machine.privileged else " (not root: config space beyond 64 bytes not captured)"
        echo(
            f"wrote {summary['path']}: {summary['files']} files, {summary['bytes']} bytes, "
            f"{len(machine.gpus)} GPU(s), {len(machine.nics)} RDMA device(s){note}"
        )
        echo(f"read it anywhere with: gdrdiag inspect --bundle {summary['path']}")
    raise typer.Exit(EXIT_OK)
