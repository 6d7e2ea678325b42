"""The report profiles (quick, standard, full): which cases of each bench a ``report`` runs.

Defined once, beside the case registry, so ``gdrdiag report`` and anything else that builds a
standard Report (fleet records) run the same measurements. Each bench function takes the level
and returns its results; a bench that cannot run here returns WAIVED results with the reason.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Callable, Optional

from gdrdiag.model.machine import MachineInfo
from gdrdiag.model.words import AUTO, NumaRequest

LEVELS = ("quick", "standard", "full")


@dataclass(frozen=True)
class RdmaPart:
    """How big a report's RDMA matrix is; ``None`` fields take the level's default.

    A slow device (Soft-RoCE under emulation moves ~0.2 Gb/s: the default quick matrix ran for
    minutes in the QEMU lab) needs a way to shrink this part, or to leave it out.
    """

    skip: bool = False
    size: Optional[int] = None
    iterations: Optional[int] = None
    qps: Optional[int] = None


@dataclass(frozen=True)
class Profile:
    """One report profile: the level (quick, standard, full) and the RDMA part's size."""

    level: str = "standard"
    rdma: RdmaPart = field(default_factory=RdmaPart)
    numa: NumaRequest = AUTO  # CPU/memory placement of every bench (--numa)
    # This machine's facts as report's inspect read them: the peer cases' path model needs the GPU
    # pairs (None: the peer rows carry no expectation).
    machine: Optional[MachineInfo] = None
    # --gpus: the GPUs the per-GPU benches (PER_GPU_BENCHES) measure in turn; ``gpu`` is the one a pass
    # measures, and ``host_kinds`` False on the passes after the first (host memory is measured once)
    gpus: tuple[int, ...] = (0,)
    gpu: int = 0
    host_kinds: bool = True

    def check_numa(self) -> None:
        """Refuse ``--numa N`` for a node this machine lacks, before inspect or any bench runs."""
        from gdrdiag.bench import preflight

        preflight.check_numa(self.numa)


def _waived(profile: Profile, key: str, reason: str, description: str, why_not_run: str) -> list:
    """One WAIVED result for a bench that cannot run here, with the placement it would have had."""
    from gdrdiag.bench.runner import with_placement
    from gdrdiag.hw import placement
    from gdrdiag.model.results import BenchResult

    where = placement.not_run(profile.numa, why_not_run)
    return with_placement([BenchResult.waived(key, reason, description=description)], where)


def _copy_results(profile: Profile) -> list:
    level = profile.level
    from gdrdiag.bench.copy import run_copy_bench
    from gdrdiag.bench.copy_config import CopyBenchOptions
    from gdrdiag.hw.memory import MemoryKind
    from gdrdiag.units import KiB, MiB

    if level == "full":
        return run_copy_bench(CopyBenchOptions(numa=profile.numa, device=profile.gpu))
    if not profile.host_kinds:  # a later GPU's pass: its own path only, and at the end all GPUs at once
        return _later_gpu_copies(profile)
    kinds = (
        (MemoryKind.PINNED, MemoryKind.PAGEABLE)
        if level == "quick"
        else (
            MemoryKind.PINNED,
            MemoryKind.PINNED_WC,
            MemoryKind.REGISTERED,
            MemoryKind.PAGEABLE,
            MemoryKind.MANAGED,
        )
    )
    opts = CopyBenchOptions(
        kinds=kinds,
        directions=("h2d", "d2h") if level == "quick" else ("h2d", "d2h", "bidir"),
        modes=("async",),
        sizes=(64 * KiB, 64 * MiB) if level == "quick" else (64 * KiB, 1 * MiB, 64 * MiB, 256 * MiB),
        parts=("sweep",) if level == "quick" else ("sweep", "pinning", "overlap", "blocks"),
        iterations=5,
        pin_size=64 * MiB,
        overlap_layers=8,
        overlap_chunk=32 * MiB,
        block_sizes=(4 * KiB, 64 * KiB, 1 * MiB) if level != "quick" else (64 * KiB,),
        reference=False,
        numa=profile.numa,
        device=profile.gpu,
    )
    return run_copy_bench(opts)


def _later_gpu_copies(profile: Profile) -> list:
    """A later GPU's copies: its own path (pinned, each direction); on the last GPU, every GPU at once.

    The together rows are measured at the pass's largest size, which every GPU's pass measured alone,
    so ``copy_together.with_sum_alone`` can set their ratio to the GPUs' sum once the run is done.
    """
    from gdrdiag.bench import copy_together
    from gdrdiag.bench.copy import run_copy_bench
    from gdrdiag.bench.copy_config import CopyBenchOptions
    from gdrdiag.hw.memory import MemoryKind
    from gdrdiag.units import KiB, MiB

    sizes = (64 * KiB, 64 * MiB) if profile.level == "quick" else (1 * MiB, 64 * MiB, 256 * MiB)
    opts = CopyBenchOptions(
        kinds=(MemoryKind.PINNED,),
        directions=("h2d", "d2h") if profile.level == "quick" else ("h2d", "d2h", "bidir"),
        modes=("async",),
        sizes=sizes,
        parts=("sweep",),
        iterations=5,
        reference=False,
        numa=profile.numa,
        device=profile.gpu,
    )
    rows = run_copy_bench(opts)
    if profile.gpu == profile.gpus[-1]:
        rows += copy_together.together_case(profile.gpus, max(sizes), iterations=5)
    return rows


def report_sweeps(level: str) -> tuple[str, ...]:
    """The gather sweeps a Report runs: the ladder, or with --full every sweep but working-set.

    The working-set sweep pins tables up to a quarter of host memory; it runs when asked for
    (gather-bench --sweep working-set), not inside every full Report.
    """
    from gdrdiag.bench.gather_layout import SWEEPS

    return tuple(s for s in SWEEPS if s != "working-set") if level == "full" else ("ladder",)


def _gather_results(profile: Profile) -> list:
    level = profile.level
    from gdrdiag.bench import gather
    from gdrdiag.errors import NotSupported

    config = gather.GatherConfig(
        quick=level == "quick", sweeps=report_sweeps(level), numa=profile.numa, device=profile.gpu
    )
    try:
        return list(gather.run(config).results)
    except NotSupported as exc:
        return _waived(profile, "gather_ladder", exc.reason, "gather-bench ladder", "could not run here")


def _rdma_results(profile: Profile) -> list:
    """RDMA matrix on a real device only: soft-provider numbers never go into a machine's Report."""
    from gdrdiag.bench import mr
    from gdrdiag.errors import NotSupported

    part = profile.rdma
    description = "RDMA WRITE matrix (memory kinds x registration x RO)"
    if part.skip:
        return _waived(profile, "rdma_write_matrix", "left out by --no-rdma", description, "--no-rdma")
    cfg = mr.matrix_config(
        mr.MrBenchConfig(
            provider="pyverbs",
            sizes=(part.size or 1 << 20,),
            qps=part.qps or 4,
            iterations=part.iterations or (2000 if profile.level != "full" else 20000),
            numa=profile.numa,
            gpu=profile.gpu,
        )
    )
    if not profile.host_kinds:  # a later GPU's pass: its GPU memory only
        gpu_kinds = tuple(k for k in cfg.kinds if k.needs_gpu)
        if not gpu_kinds:
            return []
        cfg = dataclasses.replace(cfg, kinds=gpu_kinds)
    try:
        return list(mr.run(cfg, mode="bw"))
    except NotSupported as exc:
        return _waived(profile, "rdma_write_matrix", exc.reason, description, "could not run here")


# A node of more than two GPUs has n(n-1) ordered pairs (56 on 8 GPUs): report measures each pair at one
# size (copy engine with peer access off and on, the SM's read), all-to-one into each GPU and one
# all-to-all over the node (every pair at once: one case, ~n(n-1) x 64 MiB moved in a few ms on
# NVLink), so its cost grows with the pairs, not with pairs x sizes x cases; peer-bench runs any
# pair's full sweep.
NODE_PEER_KEYS = ("peer_ce_off", "peer_ce_on", "peer_sm_read", "peer_all_to_one", "peer_all_to_all")
# 64 MiB: on NVLink (NV18, ~390 GB/s) a copy of it takes ~0.17 ms, far above the copy's per-call cost, so
# it measures the path; each case's payload check reads the whole buffer back, which at 256 MiB was most
# of the ~1.7 s a pair cost on 4 x H200 (docs/benchmarks.md, whole node).
NODE_PEER_SIZE = 64 << 20


def _peer_results(profile: Profile) -> list:
    """GPU<->GPU cases where there are two or more GPUs (none otherwise: a one-GPU Report stays as it was).

    quick: CE peer copies off/on and the SM read at 1 MiB and 256 MiB; standard adds both-ways copies,
    the SM write, the latencies and all-to-one at 64 KiB, 16 MiB and 256 MiB, and a short block sweep
    (4 KiB, 64 KiB and 1 MiB blocks, at most 64 MiB each, as copy-bench's standard block sizes); full
    runs every case at every size, reference and the whole block sweep (128 B .. 2 MiB) included.
    Each ordered pair; a two-GPU NVLink machine runs standard in well under a minute. On more than two
    GPUs (quick and standard) each pair runs at one size (``NODE_PEER_KEYS`` at ``NODE_PEER_SIZE``).
    """
    from gdrdiag.bench import peer
    from gdrdiag.errors import GdrdiagError
    from gdrdiag.hw import cuda
    from gdrdiag.units import KiB, MiB

    try:
        cuda.init()
        if cuda.device_count() < 2:
            return []
    except GdrdiagError:
        return []
    level = profile.level
    if level == "full":
        opts = peer.PeerBenchOptions(sizes=peer.ALL_SIZES)
    elif (
        cuda.device_count() > 2
    ):  # a node: every ordered pair at one size, each GPU receiving from all, all to all
        opts = peer.PeerBenchOptions(sizes=(NODE_PEER_SIZE,), keys=NODE_PEER_KEYS, iterations=5)
    elif level == "quick":
        opts = peer.PeerBenchOptions(
            sizes=(1 * MiB, 256 * MiB), keys=("peer_ce_off", "peer_ce_on", "peer_sm_read"), iterations=5
        )
    else:
        keys = tuple(k for k in peer.ALL_KEYS if k != peer.REFERENCE_KEY)
        opts = peer.PeerBenchOptions(
            sizes=(64 * KiB, 16 * MiB, 256 * MiB),
            keys=keys,
            iterations=5,
            block_sizes=(4 * KiB, 64 * KiB, 1 * MiB),
            block_region_max=64 * MiB,
        )
    return peer.run_peer_bench(opts, profile.machine)


# The benches that measure one GPU at a time: with --gpus each runs once per GPU (peer-bench measures
# the node's pairs itself).
PER_GPU_BENCHES = frozenset({"copy-bench", "gather-bench", "mr-bench"})

PROFILE_BENCHES: tuple[tuple[str, Callable[[Profile], list]], ...] = (
    ("copy-bench", _copy_results),
    ("gather-bench", _gather_results),
    ("mr-bench", _rdma_results),
    ("peer-bench", _peer_results),
)
