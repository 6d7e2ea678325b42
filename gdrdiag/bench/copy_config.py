"""What copy-bench is asked to do, the context every case shares, and how a copy becomes a result.

CopyBenchOptions is validated before any GPU work; copy_result is the one way a timed copy becomes a
verified result.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Optional

from gdrdiag.bench import preflight
from gdrdiag.bench.timing import SpinGate, Timed
from gdrdiag.errors import UserInputError
from gdrdiag.hw import cuda, memory
from gdrdiag.hw.memory import Buffer, MemoryKind
from gdrdiag.model.params import CopyMetrics, CopyParams
from gdrdiag.model.results import BenchResult, SampleStats, Status
from gdrdiag.model.words import AUTO, NumaRequest
from gdrdiag.units import GiB, KiB, MiB

DIRECTIONS = ("h2d", "d2h", "bidir")


MODES = ("async", "sync")


PARTS = ("sweep", "pinning", "overlap", "blocks")


SWEEP_KINDS = (
    MemoryKind.PINNED,
    MemoryKind.PINNED_WC,
    MemoryKind.REGISTERED,
    MemoryKind.PAGEABLE,
    MemoryKind.MANAGED,
)


DEFAULT_SIZES = tuple(4 * KiB * 4**i for i in range(10))  # 4 KiB, 16 KiB, ... 1 GiB


BLOCK_SIZES = tuple(128 * 2**i for i in range(15))  # 128 B .. 2 MiB


POISON = 0xA5


@dataclass(frozen=True)
class CopyBenchOptions:
    """What copy-bench runs; validated in :meth:`validate` before any GPU work."""

    kinds: tuple[MemoryKind, ...] = SWEEP_KINDS
    directions: tuple[str, ...] = DIRECTIONS
    modes: tuple[str, ...] = MODES
    sizes: tuple[int, ...] = DEFAULT_SIZES
    parts: tuple[str, ...] = PARTS
    iterations: int = 10
    warmup: int = 2
    device: int = 0
    pin_size: int = 256 * MiB
    overlap_layers: int = 16
    overlap_chunk: int = 64 * MiB
    block_count: int = 10_000
    block_sizes: tuple[int, ...] = BLOCK_SIZES
    block_region_max: int = 2 * GiB
    reference: bool = True
    only: Optional[frozenset[str]] = None  # the case keys a CASE selection chose; None: all the parts run
    numa: NumaRequest = AUTO  # CPU/memory placement (hw/placement.py)

    def selects(self, key: str) -> bool:
        """Whether the case ``key`` is chosen: every case without a selection, else the selected ones."""
        return self.only is None or key in self.only

    def check_numa(self) -> None:
        """Refuse ``--numa N`` for a node this machine lacks: the first check, before any other."""
        preflight.check_numa(self.numa)

    def validate(self) -> None:
        """Raise UserInputError for impossible combinations (checked before allocating)."""
        for k in self.kinds:
            if k not in SWEEP_KINDS:
                allowed = ", ".join(x.value for x in SWEEP_KINDS)
                raise UserInputError(f"--kinds {k.value}: not a host memory kind (choose from: {allowed})")
        for d in self.directions:
            if d not in DIRECTIONS:
                raise UserInputError(f"unknown direction {d!r} (choose from: {', '.join(DIRECTIONS)})")
        for m in self.modes:
            if m not in MODES:
                raise UserInputError(f"unknown mode {m!r} (choose from: {', '.join(MODES)})")
        for p in self.parts:
            if p not in PARTS:
                raise UserInputError(f"unknown part {p!r} (choose from: {', '.join(PARTS)})")
        if self.iterations < 1 or self.warmup < 0:
            raise UserInputError("iterations must be >= 1 and warm-up >= 0")
        if self.overlap_layers < 2:
            raise UserInputError("the overlap pipeline needs at least 2 layers")
        if self.block_count < 1:
            raise UserInputError("block count must be >= 1")
        host_free = memory.host_available_bytes()
        largest = max(self.sizes) if self.sizes else 0
        for what, need in (
            ("size", 2 * largest),
            ("--pin-size", self.pin_size),
            ("overlap buffers", 2 * self.overlap_layers * self.overlap_chunk),
        ):
            if need > host_free:
                raise UserInputError(f"{what}: needs {need} bytes of host memory, only {host_free} available")


#: What a bare ``gdrdiag copy-bench`` runs, a user's first questions in under a minute on an H100:
#: pinned and pageable copies at one large size, host->GPU, GPU->host and both at once, then a short
#: many-small-blocks sweep (2 KiB-512 KiB, blocks capped at a 512 MiB region). CopyBenchOptions()'s
#: own defaults are the whole matrix: ``copy-bench --full``, and what ``report --full`` runs.
FIRST_LOOK = CopyBenchOptions(
    kinds=(MemoryKind.PINNED, MemoryKind.PAGEABLE),
    modes=("async",),
    sizes=(256 * MiB,),
    parts=("sweep", "blocks"),
    block_sizes=(2 * KiB, 8 * KiB, 32 * KiB, 128 * KiB, 512 * KiB),
    block_region_max=512 * MiB,
    reference=False,
)


@dataclass
class CopyContext:
    """What every case needs: the GPU, a stream pair, the gate, and the options."""

    gpu: cuda.GpuContext
    opts: CopyBenchOptions
    streams: list[cuda.Stream] = field(default_factory=list)
    gate: Optional[SpinGate] = None
    sweep_buffers: Any = None  # the sweep's reusable buffers (copy.SweepBuffers), made by run_copy_bench


def with_metrics(result: BenchResult, **metrics: Optional[float]) -> BenchResult:
    """A copy of ``result`` with extra derived metrics (results are frozen)."""
    return dataclasses.replace(result, metrics=dataclasses.replace(result.metrics, **metrics))


def gbytes_per_s(nbytes: int, seconds: tuple[float, ...]) -> tuple[float, ...]:
    return tuple(nbytes / s / 1e9 for s in seconds)


def copy_result(
    key: str,
    nbytes: int,
    timed: Timed,
    params: CopyParams,
    *,
    verified: bool,
    description: str,
    metrics: Optional[dict] = None,
    bytes_per_sample: Optional[int] = None,
    mismatch: Optional[int] = None,
) -> BenchResult:
    moved = bytes_per_sample if bytes_per_sample is not None else nbytes
    samples = gbytes_per_s(moved, timed.seconds)
    stats = SampleStats.of(samples)
    m = CopyMetrics(seconds_median=SampleStats.of(timed.seconds).median, **(metrics or {}))
    return BenchResult(
        key=key,
        status=Status.OK if verified else Status.ERROR,
        description=description,
        params=params,
        unit="GB/s",
        samples=samples,
        stats=stats,
        metrics=m,
        method=timed.method,
        provider="cuda",
        verified=verified,
        reason=None if verified else f"payload check failed: first wrong byte at offset {mismatch}",
    )


def first_wrong_byte(dst: Buffer, expected: Any, nbytes: int) -> Optional[int]:
    """First wrong byte of ``dst[:nbytes]`` against ``expected[:nbytes]``, or None."""
    return memory.first_mismatch(dst.read_array(nbytes), expected[:nbytes])
