"""The tail every bench command shares: progress -> measure -> Report -> --json-out -> print -> exit.

A bench command parses its options, checks them, and hands a :class:`BenchCommand` to
:func:`run_bench_command`, which does the rest the same way for every bench: progress lines on stderr
(none with ``--quiet``), the run (a Ctrl-C keeps the rows measured before it, notes the Report as
partial and exits 130 after showing it), the Report, ``--json-out`` (never over an existing file
without ``--force``), the Report as JSON (``--json``) or the bench's text, and the exit code (1 when
the run failed, else 0), then the bench's afterword on stderr where it has one (not after a Ctrl-C).
What differs between benches is data on the command object, not copies of this code.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Generic, NoReturn, Optional, TypeVar

import typer

from gdrdiag.cli.common import EXIT_FAIL, EXIT_OK, echo, echo_text, output_width, wants_json
from gdrdiag.cli.progress import Progress
from gdrdiag.model.report import Report
from gdrdiag.model.results import BenchResult, Status

Run = TypeVar("Run")


def any_error(report: Report) -> bool:
    """A bench run failed when one of its rows is ERROR (a wrong payload, a crash in a case)."""
    return any(r.status is Status.ERROR for r in report.results)


def no_afterword(run: object, report: Report) -> str:
    """Most benches say nothing after their output."""
    return ""


@dataclass(frozen=True)
class Output:
    """Where a bench command's results go: ``--json-out`` (with ``--force``) and ``--quiet``."""

    json_out: Optional[Path] = None
    force: bool = False
    quiet: bool = False


@dataclass(frozen=True)
class BenchCommand(Generic[Run]):
    """One bench command's run, as the shared tail needs it.

    ``steps`` is the progress total (None where the bench counts its own steps). ``measure`` runs the
    bench with the command's progress and returns its run (a list of rows, or the bench's own
    record); ``partial`` makes a run of the rows measured before a Ctrl-C. ``report`` makes the Report
    of a run, given the notes the run adds (the interrupt's). ``text`` is the bench's text output of
    a run and its Report at a width (None: no limit); ``failed`` decides exit code 1. ``afterword``
    is a line for stderr after the output ('' for none; mr-bench says there when nothing was
    measured), left out after a Ctrl-C, whose own line says what was kept.
    """

    name: str
    steps: Optional[int]
    measure: Callable[[Progress], Run]
    partial: Callable[[list[BenchResult]], Run]
    report: Callable[[Run, tuple[str, ...]], Report]
    text: Callable[[Run, Report, Optional[int]], str]
    failed: Callable[[Report], bool] = any_error
    afterword: Callable[[Run, Report], str] = no_afterword


def run_bench_command(ctx: typer.Context, command: BenchCommand[Run], output: Output) -> NoReturn:
    """Run ``command`` and finish it: write, show, and exit with its code (130 after a Ctrl-C)."""
    from gdrdiag.cli.interrupt import exit_130_after, measure

    progress = Progress(command.name, command.steps, enabled=not output.quiet)
    run, stopped = measure(lambda: command.measure(progress), command.partial)
    report = command.report(run, (stopped.note,) if stopped else ())
    with exit_130_after(stopped):
        if output.json_out is not None:
            from gdrdiag.cli.report_files import write_text_file

            write_text_file(output.json_out, report.to_json(), force=output.force, what="--json-out")
        if wants_json(ctx):
            echo(report.to_json())
        else:
            echo_text(ctx, command.text(run, report, output_width(ctx)))
        line = "" if stopped else command.afterword(run, report)
        if line:
            typer.echo(line, err=True)
        raise typer.Exit(EXIT_FAIL if command.failed(report) else EXIT_OK)
    raise AssertionError("exit_130_after always exits")  # for the type checker: NoReturn
