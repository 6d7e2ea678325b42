"""What a bench case is: one object per case, and a bench's list of them (nvbandwidth's shape).

A :class:`Case` carries everything about one case in one place: its key, a description, the type
of the params its rows carry, what it needs from the machine (and so why it is WAIVED where that is
missing), how many progress steps it takes under given options, and how to run it. A bench module
keeps its cases in one tuple; ``--list``, selection (:meth:`Registry.select`), the progress total
(the sum of the selected cases' :attr:`Case.steps`) and the bench's executor all read that tuple,
so adding a case is one new object beside the function that measures it.

A case's key is the key of the results it produces (``copy_h2d_pinned`` gives the rows of that key
at every size). Selectors are exact keys, prefixes (``copy_h2d``) or globs (``rdma_write_*_dmabuf``);
a selector that matches nothing is a one-line usage error.
"""

from __future__ import annotations

import enum
import fnmatch
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Optional

from gdrdiag.errors import UserInputError
from gdrdiag.model.results import BenchResult
from gdrdiag.model.vocabulary import Bench

#: Says that the next progress step, named by its label, starts now.
Step = Callable[[str], None]


class Needs(str, enum.Enum):
    """What a case needs from the machine."""

    GPU = "gpu"
    GPU_PAIR = "gpu+gpu"  # two or more GPUs (peer-bench)
    RDMA = "rdma"  # an RDMA device (or --provider soft)
    RDMA_AND_GPU = "rdma+gpu"
    NOTHING = "nothing"  # runs anywhere (mr_loop_cost: the soft and null providers, no device)


@dataclass(frozen=True)
class Capabilities:
    """What this machine has: None where present, else the reason it is absent (the WAIVED text)."""

    gpu_missing: Optional[str] = None
    rdma_missing: Optional[str] = None
    gpu_pair_missing: Optional[str] = None  # why there are not two GPUs (None: there are)


def _no_steps(options: Any) -> int:
    """The step count of a case its bench does not run case by case (mr_loop_cost): none counted here."""
    return 0


def _not_runnable(session: Any, step: Step) -> list[BenchResult]:
    """The runner of a case its bench runs from its own options (mr_loop_cost), not from the case."""
    raise NotImplementedError("this bench runs its cases from its options, not case by case")


@dataclass(frozen=True)
class Case:
    """One registered case: what it is, what it needs, how many steps it takes and how to run it.

    ``params`` is a typed template of the params its rows carry (``CopyParams(memory=PINNED,
    direction=H2D)`` for ``copy_h2d_pinned``): the case's identity, read where a selection becomes
    options. ``steps(options)`` is the number of progress steps the case takes under the bench's
    options: 0 when those options do not run it, so the selected cases are those with steps.
    ``run(session, step)`` measures it: ``session`` is what the bench's executor shares between its
    cases (copy-bench: the ``CopyContext``; peer-bench: one pair's phase), ``step`` is called once per
    counted step, and the rows come back (a failure is an ERROR or WAIVED row, never a raise).
    """

    key: str
    description: str
    needs: Needs
    part: str = ""  # the bench's own grouping (copy: sweep/pinning/...; mr: bw/latency/...)
    params: Any = None
    steps: Callable[[Any], int] = _no_steps
    run: Callable[[Any, Step], list[BenchResult]] = _not_runnable

    def applicable(self, caps: Capabilities) -> Optional[str]:
        """None when the case can run here, else the WAIVED reason."""
        if self.needs in (Needs.GPU, Needs.RDMA_AND_GPU, Needs.GPU_PAIR) and caps.gpu_missing:
            return caps.gpu_missing
        if self.needs is Needs.GPU_PAIR and caps.gpu_pair_missing:
            return caps.gpu_pair_missing
        if self.needs in (Needs.RDMA, Needs.RDMA_AND_GPU) and caps.rdma_missing:
            return caps.rdma_missing
        return None


@dataclass(frozen=True)
class Registry:
    """The cases of one bench, in the order they run."""

    bench: Bench
    cases: tuple[Case, ...]

    def select(self, selectors: Iterable[str]) -> tuple[Case, ...]:
        """The cases matching any selector (key, prefix or glob), in registry order; all when none given."""
        wanted = [s.strip() for s in selectors if s.strip()]
        if not wanted:
            return self.cases
        chosen: set[str] = set()
        for sel in wanted:
            hits = {c.key for c in self.cases if _matches(c.key, sel)}
            if not hits:
                raise UserInputError(
                    f"no {self.bench.value} case matches {sel!r} (see --list; keys, prefixes and globs work)"
                )
            chosen |= hits
        return tuple(c for c in self.cases if c.key in chosen)

    def lines(self, caps: Optional[Capabilities] = None) -> list[tuple[str, str, str]]:
        """(key, description, 'runs' or 'WAIVED: reason') for ``--list``."""
        out = []
        for c in self.cases:
            why = c.applicable(caps) if caps is not None else None
            out.append((c.key, c.description, f"WAIVED: {why}" if why else "runs"))
        return out

    def steps(self, options: Any) -> int:
        """The progress total of a run under ``options``: the sum of its cases' steps."""
        return sum(c.steps(options) for c in self.cases)


def _matches(key: str, selector: str) -> bool:
    if any(ch in selector for ch in "*?["):
        return fnmatch.fnmatchcase(key, selector)
    return key == selector or key.startswith(selector)


def kind_key(kind: enum.Enum) -> str:
    """A memory kind as it appears in a case key (``pinned-wc`` -> ``pinned_wc``)."""
    return str(kind.value).replace("-", "_")
