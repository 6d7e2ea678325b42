"""The case registry: one list of cases per bench (nvbandwidth's shape: ``--list``, then cases by name).

Each case has a key, a description and a rule that says whether it can run on this machine.

A case's key is the key of the results it produces (``copy_h2d_pinned`` gives the rows of that key
at every size). Selectors are exact keys, prefixes (``copy_h2d``) or globs (``rdma_write_*_dmabuf``);
a selector that matches nothing is a one-line usage error. Which options a selection sets is the
bench's business (``copy_only``, ``gather_kernels``, ``mr_selection`` below); the registry itself
only names and filters.
"""

from __future__ import annotations

import enum
import fnmatch
from dataclasses import dataclass
from typing import Iterable, Optional

from gdrdiag.errors import UserInputError
from gdrdiag.model.vocabulary import Bench, MemoryKind, RegPath


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


@dataclass(frozen=True)
class Case:
    """One registered case."""

    key: str
    description: str
    needs: Needs
    part: str = ""  # the bench's own grouping (copy: sweep/pinning/...; mr: bw/latency/...)

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


def _matches(key: str, selector: str) -> bool:
    if any(ch in selector for ch in "*?["):
        return fnmatch.fnmatchcase(key, selector)
    return key == selector or key.startswith(selector)


def _kind_key(kind: MemoryKind) -> str:
    return kind.value.replace("-", "_")


# ---------------------------------------------------------------------------------------------
# copy-bench
# ---------------------------------------------------------------------------------------------

COPY_HOST_KINDS = (
    MemoryKind.PINNED,
    MemoryKind.PINNED_WC,
    MemoryKind.REGISTERED,
    MemoryKind.PAGEABLE,
    MemoryKind.MANAGED,
)
_COPY_DIRECTION_WORDS = {"h2d": "host to GPU", "d2h": "GPU to host", "bidir": "both ways at once"}


def copy_registry() -> Registry:
    """copy-bench: the sweep per direction and host memory kind, the CuPy/PyTorch reference, and the parts."""
    cases = [
        Case(
            f"copy_{d}_{_kind_key(k)}",
            f"copies {_COPY_DIRECTION_WORDS[d]}, {k.value} host memory, every size",
            Needs.GPU,
            "sweep",
        )
        for k in COPY_HOST_KINDS
        for d in ("h2d", "d2h", "bidir")
    ]
    cases += [
        Case(
            "copy_h2d_pinned_reference",
            "the same H2D copy through CuPy and PyTorch (same-run reference)",
            Needs.GPU,
            "reference",
        ),
        Case(
            "copy_pinning",
            "pageable vs pin-on-demand vs preallocated pinned: the pinning trade-off",
            Needs.GPU,
            "pinning",
        ),
        Case(
            "copy_overlap",
            "one stream vs two: H2D, compute and D2H overlapped across layers",
            Needs.GPU,
            "overlap",
        ),
        Case(
            "copy_blocks",
            "many small blocks: one call each, batched, coalesced, and a gather kernel",
            Needs.GPU,
            "blocks",
        ),
    ]
    return Registry(Bench.COPY, tuple(cases))


# ---------------------------------------------------------------------------------------------
# gather-bench
# ---------------------------------------------------------------------------------------------


def gather_registry(kernels: Iterable[tuple[str, str]]) -> Registry:
    """gather-bench: the copy-engine reference and one case per kernel of the ladder.

    ``kernels`` is (name, one-line description) from the bench's kernel table, so a new kernel is a
    new case without touching this file.
    """
    cases = [
        Case(
            "gather_ce_reference",
            "the copy engine reading the same bytes (every ratio's reference)",
            Needs.GPU,
            "reference",
        )
    ]
    cases += [Case(f"gather_{name.replace('-', '_')}", desc, Needs.GPU, name) for name, desc in kernels]
    return Registry(Bench.GATHER, tuple(cases))


def gather_kernels(selected: tuple[Case, ...]) -> tuple[str, ...]:
    """The kernel names a gather selection runs (the CE reference always runs: ratios need it)."""
    return tuple(c.part for c in selected if c.part != "reference")


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

_PEER_CASES = (
    ("peer_ce_off", "copy engine GPU -> GPU with peer access off (staged through host memory)", "ce"),
    ("peer_ce_on", "copy engine GPU -> GPU with peer access on (NVLink or PCIe peer-to-peer)", "ce"),
    ("peer_ce_bidir_off", "copy engines both ways at once, peer access off", "ce"),
    ("peer_ce_bidir_on", "copy engines both ways at once, peer access on", "ce"),
    ("peer_sm_read", "a kernel on the destination GPU reads the peer's memory through UVA", "sm"),
    ("peer_sm_write", "a kernel on the source GPU writes into the peer's memory through UVA", "sm"),
    (
        "peer_ce_reference",
        "the same peer copy through CuPy's cudaMemcpyPeerAsync, same buffers (same-run reference)",
        "reference",
    ),
    ("peer_lat_ce_off", "latency of one 4-byte peer copy at a time, peer access off (us, median)", "latency"),
    ("peer_lat_ce_on", "latency of one 4-byte peer copy at a time, peer access on (us, median)", "latency"),
    (
        "peer_lat_sm_on",
        "SM round trip: one dependent 8-byte load from the peer's memory at a time (pointer chase, us)",
        "latency",
    ),
    (
        "peer_all_to_one",
        "every other GPU's copy engine into one GPU at once, peer access on (one source on two GPUs)",
        "ce",
    ),
    (
        "peer_blocks",
        "many small blocks GPU -> GPU: one call each, batched, coalesced, and a gather kernel",
        "blocks",
    ),
)


def peer_registry() -> Registry:
    """peer-bench's cases, per ordered GPU pair.

    CE copies (peer access off/on, one way and both), SM read/write, latencies, all-to-one and the
    many-small-blocks sweep.
    """
    return Registry(Bench.PEER, tuple(Case(k, d, Needs.GPU_PAIR, part) for k, d, part in _PEER_CASES))
