"""Ctrl-C part way through a bench: keep what was measured, write and show it, exit 130.

A later Ctrl-C once exited 130 cleanly but lost the points already measured. Every result a
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
from gdrdiag.model.results import BenchResult, Status

T = TypeVar("T")


def _count(n: int, one: str, many: str) -> str:
    return f"{n} {one if n == 1 else many}"


@dataclass(frozen=True)
class Interruption:
    """A run stopped by Ctrl-C: how many results it had produced, and how many of them are WAIVED.

    A WAIVED result is a case that could not run here, not a measurement: counted as one, a Ctrl-C
    during the only runnable case said its WAIVED placeholders were "results measured".
    """

    results: int
    waived: int = 0

    @property
    def measured(self) -> int:
        """Results that are measurements (OK or ERROR), not WAIVED placeholders."""
        return self.results - self.waived

    @property
    def note(self) -> str:
        """The Report note that marks a partial Report."""
        if self.waived:
            kept = (
                f"{_count(self.measured, 'measured result', 'measured results')} and "
                f"{_count(self.waived, 'WAIVED case', 'WAIVED cases')}"
            )
        else:
            kept = _count(self.results, "result", "results")
        return (
            f"interrupted by Ctrl-C after {kept}: the cases after them did not run, so this Report is partial"
        )

    @property
    def kept(self) -> str:
        """The one line saying exactly what was kept."""
        waived = ""
        if self.waived:
            it = "it cannot" if self.waived == 1 else "they cannot"
            waived = (
                f"the {_count(self.waived, 'WAIVED case', 'WAIVED cases')} ({it} run here) "
                f"{'was' if self.waived == 1 else 'were'} kept"
            )
        if self.measured == 0:
            kept = waived or "nothing was kept"
            return (
                f"gdrdiag: interrupted before anything was measured; {kept} (the Report says it is partial)"
            )
        measured = (
            "1 result measured before it was"
            if self.measured == 1
            else f"{self.measured} results measured before it were"
        )
        also = f", and {waived}" if waived else ""
        return f"gdrdiag: interrupted; the {measured} kept{also} (the Report says it is partial)"


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
    waived = sum(r.status is Status.WAIVED for r in results)
    return from_partial(results), Interruption(len(results), waived)


@contextlib.contextmanager
def exit_130_after(stopped: Optional[Interruption]) -> Iterator[None]:
    """Let the command write and show its (partial) results, then exit 130 when it was interrupted."""
    try:
        yield
    except typer.Exit:
        if stopped is None:
            raise
    if stopped is not None:
        say_interrupted(stopped.kept)
        raise typer.Exit(EXIT_INTERRUPTED)
