"""Ctrl-C part way through a bench: keep what was measured, write and show it, exit 130.

Issue 12: a later Ctrl-C exited 130 cleanly but lost the points already measured. Every result a
bench produces passes through ``bench.runner.run_case``, which notes it in the active
``keep_partial()`` block; the commands run their bench through :func:`measure`, and on Ctrl-C get
those results back with a note for the Report. The benches' own context managers have released
their CUDA memory, MRs and QPs by then (the interrupt unwinds through them first).
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import Callable, Iterator, Optional, TypeVar

import typer

from gdrdiag.cli.common import EXIT_INTERRUPTED, say_interrupted
from gdrdiag.model.results import BenchResult

T = TypeVar("T")


@dataclass(frozen=True)
class Interruption:
    """A run stopped by Ctrl-C: how many results it had produced."""

    results: int

    @property
    def note(self) -> str:
        """The Report note that marks a partial Report."""
        return (
            f"interrupted by Ctrl-C after {self.results} result{'' if self.results == 1 else 's'}: "
            "the cases after them did not run, "
            "so this Report is partial"
        )


def measure(
    run: Callable[[], T], from_partial: Callable[[list[BenchResult]], T]
) -> tuple[T, Optional[Interruption]]:
    """``run()``; on Ctrl-C, ``from_partial(results so far)`` and what stopped it."""
    from gdrdiag.bench.runner import keep_partial

    with keep_partial() as partial:
        try:
            return run(), None
        except KeyboardInterrupt:
            results = list(partial.results)
    return from_partial(results), Interruption(len(results))


@contextlib.contextmanager
def exit_130_after(stopped: Optional[Interruption]) -> Iterator[None]:
    """Let the command write and show its (partial) results, then exit 130 when it was interrupted."""
    try:
        yield
    except typer.Exit:
        if stopped is None:
            raise
    if stopped is not None:
        kept = (
            "1 result measured before it was"
            if stopped.results == 1
            else (f"{stopped.results} results measured before it were")
        )
        say_interrupted(f"gdrdiag: interrupted; the {kept} kept (the Report says it is partial)")
        raise typer.Exit(EXIT_INTERRUPTED)
