"""The case registry: every bench's list of case objects (nvbandwidth's shape: ``--list``, then cases by key).

A case object (:class:`gdrdiag.bench.cases.Case`) says what the case is, what it needs, how many
progress steps it takes and how to run it. copy-bench, gather-bench and peer-bench keep their cases
in their own module, beside the functions that measure them (``copy.CASES``, ``gather.CASES``,
``peer.CASES``), and their executors run exactly those objects; the registries below read those
tuples when asked, so a new case there is listed, selectable and counted with no change here.
mr-bench's cases are mode x memory kind x registration path; which options an mr selection sets is
the bench's business (``mr_selection`` below).
"""

from __future__ import annotations

from dataclasses import dataclass

from gdrdiag.bench.cases import Capabilities, Case, Needs, Registry, kind_key
from gdrdiag.errors import UserInputError
from gdrdiag.model.vocabulary import Bench, MemoryKind, RegPath

__all__ = ["Capabilities", "Case", "Needs", "Registry", "copy_registry", "gather_registry", "peer_registry"]

_kind_key = kind_key


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

MR_KINDS = (
    MemoryKind.DEVICE,
    MemoryKind.MANAGED,
    MemoryKind.PINNED,
    MemoryKind.PINNED_WC,
    MemoryKind.REGISTERED,
    MemoryKind.PAGEABLE,
)
_MR_MODES = (
    ("bw", "rdma_write", "RDMA WRITE bandwidth into"),
    ("latency", "rdma_write_lat", "RDMA WRITE latency into"),
    ("blocks", "rdma_write_blocks", "many-block RDMA WRITEs into"),
    ("reg", "mr_reg", "registration cost of"),
)


def mr_registry() -> Registry:
    """mr-bench: mode x destination memory kind x registration path, and the loop-cost case."""
    cases = []
    for mode, prefix, words in _MR_MODES:
        for kind in MR_KINDS:
            for reg in RegPath:
                if reg is RegPath.DMABUF and kind is MemoryKind.PAGEABLE:
                    continue  # dma-buf exports GPU allocations only
                needs = Needs.RDMA_AND_GPU if kind.needs_gpu else Needs.RDMA
                how = "ibv_reg_mr" if reg is RegPath.MR else "a dma-buf MR"
                cases.append(
                    Case(
                        f"{prefix}_{_kind_key(kind)}_{reg.value}",
                        f"{words} {kind.value} memory, {how}",
                        needs,
                        mode,
                    )
                )
    cases.append(
        Case(
            "mr_loop_cost",
            "the post/poll loop's own WR rate (soft provider, no copies)",
            Needs.NOTHING,
            "loop",
        )
    )
    return Registry(Bench.MR, tuple(cases))


@dataclass(frozen=True)
class MrSelection:
    """What an mr-bench selection sets: one mode, the memory kinds and the registration paths."""

    mode: str
    kinds: tuple[MemoryKind, ...]
    reg_paths: tuple[str, ...]


def mr_selection(selected: tuple[Case, ...]) -> MrSelection:
    """Options for the selected cases; cases of different modes cannot share one run."""
    modes = {c.part for c in selected}
    if len(modes) != 1:
        raise UserInputError(
            f"the selected cases need different modes ({', '.join(sorted(modes))}); run them separately"
        )
    mode = modes.pop()
    kinds, regs = [], []
    for c in selected:
        if c.part == "loop":
            continue
        stem, reg = c.key.rsplit("_", 1)
        kind = next(k for k in MR_KINDS if stem.endswith("_" + _kind_key(k)))
        kinds.append(kind) if kind not in kinds else None
        regs.append(reg) if reg not in regs else None
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
