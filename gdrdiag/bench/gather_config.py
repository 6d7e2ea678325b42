"""What a gather-bench run is asked to do (GatherConfig, validated before allocating) and what it returns."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Optional

from gdrdiag.bench.gather_kernels import DEFAULT_PLAN_REUSE, LADDER, kernel_spec
from gdrdiag.bench.gather_layout import TABLE_PAD, Layout
from gdrdiag.errors import UserInputError
from gdrdiag.model.results import BenchResult
from gdrdiag.model.words import AUTO, NumaRequest
from gdrdiag.pathmodel import pcie as pcie_model

CE_KEY = "gather_ce_reference"


QUIET_SPREAD = 0.03  # a round whose slowest sample is > 3% slower than its fastest is re-measured


@dataclass
class GatherConfig:
    """Everything a gather-bench run needs; built by the CLI, validated by :meth:`validate`."""

    base: Layout = field(default_factory=Layout)
    kernels: tuple[str, ...] = LADDER
    sweeps: tuple[str, ...] = ("ladder",)
    sweep_kernels: tuple[str, ...] = ("best", "warp")
    sm_limit: Optional[int] = None
    threads: Optional[int] = None
    device: int = 0
    numa: NumaRequest = AUTO  # CPU/memory placement (hw/placement.py)
    iterations: int = 20
    time_budget_s: float = 0.25
    quick: bool = False
    plan_reuse: int = DEFAULT_PLAN_REUSE  # batches one plan serves (planned-lines)
    # Launch batches 2..plan_reuse of a planned kernel with programmatic dependent launch where the
    # GPU has it (compute capability 9.0+): measured 4-6 us less per batch on the H100, the
    # launch's ramp and tail (docs/benchmarks.md). Off: every batch waits for the last.
    overlap_batches: bool = True
    records_per_step: Optional[int] = None  # planned-lines: 8 or 32 records per warp step; None = by R
    rounds: int = 1  # timing rounds per case when samples are disturbed (see GatherSession._samples)
    min_rounds: int = 1  # rounds measured whatever the spread (a round can be slow all through)
    # A CE copy of the same bytes before every gather sample (ratio per pair). Off by default: on
    # the H100 a CE copy just before each sample slowed random-order gathers of small records by
    # up to a third (docs/gather-bench.md), so paired ratios understate back-to-back gathers.
    paired_ce: bool = False
    # Measure the CE reference of a case's byte count again just before the case, and divide by
    # that: the reference measured once per byte count moved 45-55 GB/s between stretches on the
    # shared H100 (docs/benchmarks.md), which moves every ratio of those cases alike.
    ce_per_case: bool = False
    link: pcie_model.LinkParams = field(default_factory=pcie_model.LinkParams)
    # Read requests per ns (G/s) for the model's request cap. None: measured in the run by the
    # request-rate calibration when it gathers records under 128 B (gather.py), else the H100's
    # 0.75 that LinkParams assumes. The rate is a property of the machine, not of the GPU alone.
    request_rate: Optional[float] = None
    request_rate_source: str = "assumed: 0.75 G/s, measured on the H100 VM (docs/gather-bench.md)"
    link_source: str = "assumed (MPS 256 / MRRS 4096 / RCB 128, as read on an H200 VM)"
    link_explicit: bool = False  # True when the user gave --mps/--mrrs/--rcb
    only: Optional[frozenset[str]] = None  # the case keys a CASE selection chose; None: every case

    def selects(self, key: str) -> bool:
        """Whether the case ``key`` is chosen: every case without a selection, else the selected ones."""
        return self.only is None or key in self.only

    def validate(self) -> "GatherConfig":
        """Check user input before anything is allocated."""
        self.base.validate()
        for k in self.kernels:
            kernel_spec(k)
        for k in self.sweep_kernels:
            if k != "best":
                kernel_spec(k)
        if self.sm_limit is not None and self.sm_limit < 1:
            raise UserInputError(f"--sm-limit must be at least 1, got {self.sm_limit}")
        if self.threads is not None and (self.threads < 32 or self.threads > 1024 or self.threads % 32):
            raise UserInputError(f"--threads must be a multiple of 32 in 32..1024, got {self.threads}")
        if self.iterations < 1:
            raise UserInputError(f"--iterations must be at least 1, got {self.iterations}")
        if not 1 <= self.plan_reuse <= 256:
            raise UserInputError(f"--plan-reuse must be in 1..256, got {self.plan_reuse}")
        if self.records_per_step not in (None, 8, 32):
            raise UserInputError(f"--records-per-step must be 8 or 32, got {self.records_per_step}")
        if not 1 <= self.rounds <= 10:
            raise UserInputError(f"--rounds must be in 1..10, got {self.rounds}")
        if self.request_rate is not None and not 0 < self.request_rate <= 100:
            raise UserInputError(f"--request-rate must be in (0, 100] G requests/s, got {self.request_rate}")
        if not 1 <= self.min_rounds <= self.rounds:
            raise UserInputError(
                f"--min-rounds must be in 1..{self.rounds} (--rounds), got {self.min_rounds}"
            )
        from gdrdiag.hw.memory import host_available_bytes

        need = max(self.base.table_bytes, self.base.nbytes + TABLE_PAD)
        free = host_available_bytes()
        if need > free:
            raise UserInputError(
                f"the pinned table needs {need} bytes but only {free} bytes of host memory are "
                "free; use fewer --slots or a smaller record or stride"
            )
        return self


@dataclass
class GatherRun:
    """What a run produced: results in order, the link, and summary notes."""

    results: list[BenchResult]
    notes: list[str]
    link: object = None
    gpu_name: str = ""
    sm_count: int = 0


ProgressFn = Optional[Callable[[int, int, str], None]]
