"""The case registry: every bench's list of case objects (nvbandwidth's shape: ``--list``, then cases by key).

A case object (:class:`gdrdiag.bench.cases.Case`) says what the case is, what it needs, how many
progress steps it takes and how to run it. Every bench keeps its cases in its own module, beside the
functions that measure them (``copy.CASES``, ``gather.CASES``, ``mr.CASES``, ``peer.CASES``), and
its executor runs exactly those objects; the registries below read those tuples when asked, so a
new case there is listed, selectable and counted with no change here. An mr-bench run has one mode,
so a selection of mr cases also sets the run's options: ``mr_selection`` reads them from the
selected cases' mode and typed params.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from gdrdiag.bench.cases import Capabilities, Case, Needs, Registry
from gdrdiag.errors import UserInputError
from gdrdiag.model.params import MrParams
from gdrdiag.model.vocabulary import Bench, MemoryKind

if TYPE_CHECKING:
    from gdrdiag.bench.mr_config import MrMode

__all__ = ["Capabilities", "Case", "Needs", "Registry", "copy_registry", "gather_registry", "peer_registry"]


def copy_registry() -> Registry:
    """copy-bench: the sweep per direction and host memory kind, the CuPy/PyTorch reference, and the parts."""
    from gdrdiag.bench import copy

    return Registry(Bench.COPY, copy.CASES)


# ---------------------------------------------------------------------------------------------
# gather-bench
# ---------------------------------------------------------------------------------------------


def gather_registry() -> Registry:
    """gather-bench: the copy-engine reference and one case per kernel of the kernel table."""
    from gdrdiag.bench import gather

    return Registry(Bench.GATHER, gather.CASES)


# ---------------------------------------------------------------------------------------------
# mr-bench
# ---------------------------------------------------------------------------------------------


def mr_registry() -> Registry:
    """mr-bench: mode x destination memory kind x registration path, and the loop-cost case."""
    from gdrdiag.bench import mr

    return Registry(Bench.MR, mr.CASES)


@dataclass(frozen=True)
class MrSelection:
    """What an mr-bench selection sets: one mode, the memory kinds and the registration paths."""

    mode: MrMode
    kinds: tuple[MemoryKind, ...]
    reg_paths: tuple[str, ...]


def mr_selection(selected: tuple[Case, ...]) -> MrSelection:
    """The options of a run of the selected cases, read from their mode and typed params.

    Cases of different modes cannot share one run (refused); the kinds and paths keep the order of
    the selected cases (registry order).
    """
    from gdrdiag.bench.mr_config import MrMode

    modes = {MrMode(c.part) for c in selected}
    if len(modes) != 1:
        raise UserInputError(
            f"the selected cases need different modes ({', '.join(sorted(modes))}); run them separately"
        )
    mode = modes.pop()
    kinds: list[MemoryKind] = []
    regs: list[str] = []
    for c in selected:
        p = c.params
        if not isinstance(p, MrParams) or p.memory is None or p.reg_path is None:
            continue  # mr_loop_cost: no memory kind or path to set
        if p.memory not in kinds:
            kinds.append(p.memory)
        if p.reg_path.value not in regs:
            regs.append(p.reg_path.value)
    return MrSelection(mode, tuple(kinds), tuple(regs))


# ---------------------------------------------------------------------------------------------
# peer-bench
# ---------------------------------------------------------------------------------------------


def peer_registry() -> Registry:
    """peer-bench's cases, per ordered GPU pair.

    CE copies (peer access off/on, one way and both), SM read/write, latencies, all-to-one and the
    many-small-blocks sweep.
    """
    from gdrdiag.bench import peer

    return Registry(Bench.PEER, peer.CASES)
