"""The ``gdrdiag`` command line: one module per command, wired onto one typer app.

Only this package prints or picks exit codes. Command modules import heavy dependencies
(cuda-python, numpy, pyverbs, matplotlib) inside their functions, so ``gdrdiag --help``
stays fast.

Exit codes: 0 success (or nothing worse than WARN), 1 a FAIL finding or a failed
measurement, 2 a usage error, 130 interrupted.
"""

from __future__ import annotations

from typing import Optional

import typer

from gdrdiag import __version__

app = typer.Typer(
    name="gdrdiag",
    help="Find out why GPU<->NIC and host<->GPU data paths are slow, and say what to change.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _version_callback(value: bool) -> None:
    if value:
        typer.echo(f"gdrdiag {__version__}")
        raise typer.Exit(0)


@app.callback()
def _root(
    ctx: typer.Context,
    json_output: bool = typer.Option(False, "--json", help="Machine-readable JSON on stdout."),
    version: Optional[bool] = typer.Option(
        None, "--version", callback=_version_callback, is_eager=True, help="Print the version and exit."
    ),
) -> None:
    ctx.obj = {"json": json_output}


# One module per command; each adds its command(s) to ``app`` when imported. Imports at module
# level in these modules are light by contract (typer, gdrdiag.errors/units/model only).
COMMAND_MODULES = (
    "copy_bench_cmd",
    "inspect_cmd",
    "collect_cmd",
    "diagnose_cmd",
    "compare_cmd",
    "report_cmd",
    "mr_bench_cmd",
    "gather_bench_cmd",
    "fleet_cmd",
    "import_cmd",
)


def _register_commands() -> None:
    import importlib

    for name in COMMAND_MODULES:
        importlib.import_module(f"gdrdiag.cli.{name}")


_register_commands()


def main() -> None:
    """Console-script entry point."""
    app()
