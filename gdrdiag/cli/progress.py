"""Progress of a bench or report run on stderr: one flushed line per case or point, TTY or not.

``[3/19] copy_h2d_pinned ... ETA 12 s``: the count, the step that starts now, and the time the
remaining steps will take at the mean pace so far. Where a run knows each step's planned seconds
(``mr-bench --loop-cost``: timed runs of ``-D`` seconds, one step longer than another), the ETA is the
remaining plan scaled by the pace measured against the plan, so unequal steps do not skew it.
Lines go to stderr, so stdout (tables, ``--json``) stays exactly what it was; ``--quiet`` silences
them. A run of a minute is never silent, also under a pipe, CI or ``nohup`` (a progress bar only on
a terminal left those runs without a sign of life).
"""

from __future__ import annotations

from time import monotonic
from typing import Callable, Optional, Sequence

import typer

QUIET_HELP = "No progress lines on stderr."


class Progress:
    """Counts the steps of one run and writes a line per step to stderr (nothing when disabled).

    ``total`` is the planned number of steps, or None where it is not known beforehand (a server
    waits for its client); a plan that runs short shows the count alone from then on. ``plan``, where
    given, is each step's planned seconds (its length is the total): steps that take no time are not
    in it (a WAIVED part that never starts).
    """

    def __init__(
        self,
        command: str,
        total: Optional[int],
        *,
        enabled: bool = True,
        clock: Optional[Callable[[], float]] = None,
        plan: Optional[Sequence[float]] = None,
    ) -> None:
        self.command = command
        self.plan = tuple(plan) if plan is not None else None
        self.total = len(self.plan) if self.plan is not None else total
        self.enabled = enabled
        self.done = 0
        self._clock = clock or monotonic
        self._start = self._clock()

    def step(self, label: str) -> None:
        """Say that the next step, ``label``, starts now, with the count and the ETA."""
        self.done += 1
        if not self.enabled:
            return
        if self.total is None or self.done > self.total:
            typer.echo(f"[{self.done}] {label}", err=True)
            return
        typer.echo(f"[{self.done}/{self.total}] {label} ... ETA {self._eta()}", err=True)

    def counted(self, number: int, total: int, label: str) -> None:
        """Step ``number`` of ``total`` starts now, for a bench that counts its own steps (gather-bench)."""
        self.total = total
        self.done = number - 1
        self.step(label)

    def note(self, text: str) -> None:
        """A line that is not a step (the provider chosen, waiting for a peer)."""
        if self.enabled:
            typer.echo(f"{self.command}: {text}", err=True)

    def _eta(self) -> str:
        """The remaining steps (this one included) at the mean pace of the finished ones.

        With a plan: the remaining planned seconds times (seconds taken / seconds planned) of the
        finished steps; before any step finished, the plan itself.
        """
        finished = self.done - 1
        if self.plan is not None and len(self.plan) == self.total:
            remaining, planned_done = sum(self.plan[finished:]), sum(self.plan[:finished])
            if finished < 1 or planned_done <= 0:
                return format_seconds(remaining)
            return format_seconds(remaining * (self._clock() - self._start) / planned_done)
        if finished < 1 or self.total is None:
            return "unknown (first step)"
        per_step = (self._clock() - self._start) / finished
        return format_seconds(per_step * (self.total - finished))


def format_seconds(seconds: float) -> str:
    """``12 s``, ``3 min 5 s``, ``1 h 2 min``: a duration people read at a glance."""
    s = max(0, round(seconds))
    if s < 60:
        return f"{s} s"
    if s < 3600:
        return f"{s // 60} min {s % 60} s"
    return f"{s // 3600} h {s % 3600 // 60} min"
