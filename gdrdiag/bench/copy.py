"""copy-bench: host<->GPU copies through the copy engines, measured four ways.

1. **Sweep** — memory kind x direction (H2D, D2H, bidirectional) x size, asynchronous
   (cuMemcpy*Async, CUDA-event timed) and synchronous (cuMemcpy*, wall-clock timed).
   The pinned H2D number at the largest size is checked against a reference copy made by
   another library (CuPy on the same buffers; PyTorch on its own) in the same run.
2. **Pinning trade-off** — copy from pageable memory, pin on demand then copy (pinning time
   counted), copy from a preallocated pinned buffer.
3. **Overlap** — N layers of H2D -> compute kernel -> D2H on one stream versus a two-stream
   pipeline, with the sum of the separately timed parts for context.
4. **Block sweep** — 10,000 blocks of one size moved host->device as one cuMemcpyAsync per
   block, one batched call (cuMemcpyBatchAsync), one coalesced copy, and an NVRTC copy
   kernel; the block size at which per-block copies reach half the coalesced bandwidth.
   The per-block and batched calls are made twice: from Python and from a C loop
   (``native/copy_loop.c``, rows ``*_c``), so the driver's per-call cost is told apart from
   the binding's; ``issue_us_per_call`` is the host time spent issuing, per call.

Every measured destination is poisoned first and checked byte for byte afterwards; a wrong
byte turns the result into ERROR. All statistics are computed here; renderers only format.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
from typing import Any, Callable, Iterator, Optional

from gdrdiag.bench.cases import Case, Needs, Step, kind_key
from gdrdiag.bench.copy_blocks import block_results
from gdrdiag.bench.copy_config import (
    DIRECTIONS,
    POISON,
    SWEEP_KINDS,
    CopyBenchOptions,
    CopyContext,
    copy_result,
    first_wrong_byte,
    with_metrics,
)
from gdrdiag.bench.copy_overlap import overlap_results
from gdrdiag.bench.runner import on_gpu, run_case, with_placement
from gdrdiag.bench.timing import SpinGate, Timed, gated_iterations, time_host, time_stream
from gdrdiag.errors import GdrdiagError, NotSupported
from gdrdiag.hw import cuda, gpu_link, memory, placement
from gdrdiag.hw.memory import Buffer, MemoryKind
from gdrdiag.model.params import CopyParams
from gdrdiag.model.results import BenchResult, SampleStats, Status
from gdrdiag.model.vocabulary import Direction
from gdrdiag.units import KiB, MiB

# --------------------------------------------------------------------------------------------
# 1. sweep
# --------------------------------------------------------------------------------------------


def _gated(kind: MemoryKind) -> bool:
    # Pageable copies synchronise with the stream before staging (CUDA Programming Guide,
    # "Asynchronous Concurrent Execution"), so behind a gate they would wait for the gate's
    # timeout; managed copies may fault pages in on the host. Time both ungated.
    return kind not in (MemoryKind.PAGEABLE, MemoryKind.MANAGED)


def sweep_modes(direction: str, opts: CopyBenchOptions) -> tuple[str, ...]:
    """The modes a sweep case of ``direction`` runs: bidirectional overlap needs asynchronous copies."""
    return tuple(m for m in opts.modes if not (direction == "bidir" and m == "sync"))


def _sweep_steps(kind: MemoryKind, direction: str, opts: CopyBenchOptions) -> int:
    """A sweep case's steps: one per mode and size, where the options run this kind and direction."""
    runs = "sweep" in opts.parts and kind in opts.kinds and direction in opts.directions
    if not runs or not opts.selects(f"copy_{direction}_{kind_key(kind)}"):
        return 0
    return len(sweep_modes(direction, opts)) * len(opts.sizes)


def _sweep_run(kind: MemoryKind, direction: str, ctx: CopyContext, step: Step) -> list[BenchResult]:
    """One sweep case: every mode x size of one memory kind and direction, a step each."""
    opts = ctx.opts
    key = f"copy_{direction}_{kind_key(kind)}"
    expected = ctx.sweep_buffers.pattern(max(opts.sizes))
    results: list[BenchResult] = []
    for mode in sweep_modes(direction, opts):
        for size in opts.sizes:
            params = CopyParams(memory=kind, direction=Direction(direction), mode=mode, size_bytes=size)
            step(key)
            case = _SweepCase(ctx, kind, direction, mode, size, expected)
            results.extend(run_case(key, case, params=params))
    return results


class SweepBuffers:
    """Host and device buffers of one kind, sized for the largest sweep size and reused."""

    def __init__(self) -> None:
        self.kind: Optional[MemoryKind] = None
        self.bufs: list[Buffer] = []
        self.managed_on_host = False
        self._pattern: Any = None

    def pattern(self, n: int) -> Any:
        """The payload of ``n`` bytes every sweep case writes, made once per run."""
        if self._pattern is None or len(self._pattern) < n:
            self._pattern = memory.pattern(n)
        return self._pattern

    def get(self, ctx: CopyContext, kind: MemoryKind, largest: int) -> list[Buffer]:
        if self.kind is not kind:
            self.close()
            try:
                for k in (kind, kind, MemoryKind.DEVICE, MemoryKind.DEVICE):
                    self.bufs.append(memory.allocate(k, largest, alignment=64 * KiB, gpu=ctx.gpu))
                if kind is MemoryKind.MANAGED:
                    self.managed_on_host = all(b.prefer_host_residency() for b in self.bufs[:2])
            except BaseException:
                self.close()
                raise
            self.kind = kind
        return self.bufs

    def close(self) -> None:
        for b in self.bufs:
            b.close()
        self.bufs = []
        self.kind = None


class _SweepCase:
    """One sweep point; buffers are shared between consecutive points of the same kind."""

    def __init__(
        self, ctx: CopyContext, kind: MemoryKind, direction: str, mode: str, size: int, expected: Any
    ):
        self.ctx, self.kind, self.direction, self.mode, self.size = ctx, kind, direction, mode, size
        self.expected = expected

    def __call__(self) -> BenchResult:
        ctx, kind, n = self.ctx, self.kind, self.size
        host_a, host_b, dev_a, dev_b = ctx.sweep_buffers.get(ctx, kind, max(ctx.opts.sizes))
        key = f"copy_{self.direction}_{kind_key(kind)}"
        location = kind.location
        if kind is MemoryKind.MANAGED:
            location = (
                "managed, preferred location host DRAM (cuMemAdvise), mapped for the GPU"
                if ctx.sweep_buffers.managed_on_host
                else "managed; the driver refused a host preference, pages may have migrated to the GPU"
            )
        params = CopyParams(memory=kind, direction=Direction(self.direction), mode=self.mode, size_bytes=n)
        desc = f"{self.direction.upper()} {self.mode} copy, {kind.value} host memory ({location})"
        # Sources carry the pattern; destinations are poisoned.
        if self.direction in ("h2d", "bidir"):
            host_a.write(self.expected[:n])
            dev_a.fill(POISON, n)
        if self.direction in ("d2h", "bidir"):
            dev_b.write(self.expected[:n])
            host_b.fill(POISON, n)
        timed, moved = self._timed(host_a, host_b, dev_a, dev_b)
        mismatch = None
        if self.direction in ("h2d", "bidir"):
            mismatch = first_wrong_byte(dev_a, self.expected, n)
        if mismatch is None and self.direction in ("d2h", "bidir"):
            mismatch = first_wrong_byte(host_b, self.expected, n)
        return copy_result(
            key,
            n,
            timed,
            params,
            verified=mismatch is None,
            mismatch=mismatch,
            description=desc,
            bytes_per_sample=moved,
        )

    def _timed(self, host_a: Buffer, host_b: Buffer, dev_a: Buffer, dev_b: Buffer) -> tuple[Timed, int]:
        """Time the copy as its mode asks (sync: wall clock; bidir: two streams; async); and bytes moved."""
        ctx, n, opts = self.ctx, self.size, self.ctx.opts
        s0, s1 = ctx.streams

        def h2d(stream: cuda.Stream) -> None:
            cuda.call(cuda.driver().cuMemcpyAsync, dev_a.ptr, host_a.ptr, n, stream.handle)

        def d2h(stream: cuda.Stream) -> None:
            cuda.call(cuda.driver().cuMemcpyAsync, host_b.ptr, dev_b.ptr, n, stream.handle)

        if self.mode == "sync":
            fn = (
                (lambda: cuda.call(cuda.driver().cuMemcpy, dev_a.ptr, host_a.ptr, n))
                if self.direction == "h2d"
                else (lambda: cuda.call(cuda.driver().cuMemcpy, host_b.ptr, dev_b.ptr, n))
            )
            return time_host(fn, iterations=opts.iterations, warmup=opts.warmup, what="cuMemcpy"), n
        gate = ctx.gate if _gated(self.kind) else None
        if self.direction != "bidir":
            op = h2d if self.direction == "h2d" else d2h
            timed = time_stream(
                s0,
                op,
                iterations=gated_iterations(opts.iterations),
                warmup=opts.warmup,
                gate=gate,
                what="cuMemcpyAsync",
            )
            return timed, n
        with cuda.Event() as fork, cuda.Event() as join:

            def both(stream: cuda.Stream) -> None:
                fork.record(stream)
                s1.wait(fork)
                h2d(stream)
                d2h(s1)
                join.record(s1)
                stream.wait(join)

            timed = time_stream(
                s0,
                both,
                iterations=gated_iterations(opts.iterations, 8),
                warmup=opts.warmup,
                gate=gate,
                what="H2D on one stream and D2H on another, fork/join events",
            )
        return timed, 2 * n


def reference_results(ctx: CopyContext) -> list[BenchResult]:
    """CuPy (same buffers) and PyTorch (own buffers) H2D copies at the largest sweep size."""
    from gdrdiag.hw import reference_copy

    n = max(ctx.opts.sizes)
    with (
        memory.allocate(MemoryKind.PINNED, n, alignment=64 * KiB, gpu=ctx.gpu) as host,
        memory.allocate(MemoryKind.DEVICE, n, alignment=64 * KiB, gpu=ctx.gpu) as dev,
    ):
        expected = memory.pattern(n)
        host.write(expected)

        def ours_now() -> BenchResult:
            # Our copy, timed again right next to the references on the same buffers.
            dev.fill(POISON, n)
            timed = time_stream(
                ctx.streams[0],
                lambda s: cuda.call(cuda.driver().cuMemcpyAsync, dev.ptr, host.ptr, n, s.handle),
                iterations=gated_iterations(ctx.opts.iterations),
                warmup=ctx.opts.warmup,
                gate=ctx.gate,
                what="cuMemcpyAsync (gdrdiag)",
            )
            mm = first_wrong_byte(dev, expected, n)
            return copy_result(
                "copy_h2d_pinned_gdrdiag",
                n,
                timed,
                CopyParams(size_bytes=n, memory=MemoryKind.PINNED),
                verified=mm is None,
                mismatch=mm,
                description="gdrdiag pinned H2D, beside the references",
            )

        def cupy_case() -> BenchResult:
            dev.fill(POISON, n)
            ref = reference_copy.cupy_h2d(
                ctx.gpu.ordinal, dev.ptr, host.ptr, n, iterations=ctx.opts.iterations, warmup=ctx.opts.warmup
            )
            mm = first_wrong_byte(dev, expected, n)
            timed = Timed(ref.seconds, ref.method)
            return copy_result(
                "copy_h2d_pinned_reference",
                n,
                timed,
                CopyParams(size_bytes=n, memory=MemoryKind.PINNED, library=ref.library, same_buffers=True),
                verified=mm is None,
                mismatch=mm,
                description=f"reference H2D copy by {ref.library}",
            )

        def torch_case() -> BenchResult:
            ref = reference_copy.torch_h2d(
                ctx.gpu.ordinal, n, iterations=ctx.opts.iterations, warmup=ctx.opts.warmup
            )
            timed = Timed(ref.seconds, ref.method)
            # Torch copies its own tensors; its payload is torch's business, so it is unverified here.
            res = copy_result(
                "copy_h2d_pinned_reference",
                n,
                timed,
                CopyParams(size_bytes=n, memory=MemoryKind.PINNED, library=ref.library, same_buffers=False),
                verified=True,
                description=f"reference H2D copy by {ref.library}",
            )
            return dataclasses.replace(res, verified=None)

        mine = run_case("copy_h2d_pinned_gdrdiag", ours_now)
        refs = run_case("copy_h2d_pinned_reference", cupy_case, params=CopyParams(library="cupy")) + run_case(
            "copy_h2d_pinned_reference", torch_case, params=CopyParams(library="torch")
        )
    ours_value = mine[0].value
    refs = [
        with_metrics(r, gdrdiag_over_reference=ours_value / r.value)
        if r.status is Status.OK and ours_value and r.value
        else r
        for r in refs
    ]
    return mine + refs


# --------------------------------------------------------------------------------------------
# 2. pinning trade-off
# --------------------------------------------------------------------------------------------


def pinning_results(ctx: CopyContext) -> list[BenchResult]:
    """Pageable copy vs pin-on-demand (pin + copy + unpin) vs preallocated pinned, host->device."""
    n, opts = ctx.opts.pin_size, ctx.opts
    expected = memory.pattern(n)
    params = CopyParams(size_bytes=n, direction=Direction.H2D)
    results = []
    drv = cuda.driver()
    with (
        memory.allocate(MemoryKind.PAGEABLE, n, gpu=ctx.gpu) as pageable,
        memory.allocate(MemoryKind.PINNED, n, gpu=ctx.gpu) as pinned,
        memory.allocate(MemoryKind.DEVICE, n, gpu=ctx.gpu) as dev,
    ):
        pageable.write(expected)
        pinned.write(expected)
        pin_seconds: list[float] = []

        def pin_copy_unpin() -> None:
            import time

            t0 = time.perf_counter()
            cuda.call(cuda.driver().cuMemHostRegister, pageable.ptr, n, drv.CU_MEMHOSTREGISTER_PORTABLE)
            pin_seconds.append(time.perf_counter() - t0)
            try:
                cuda.call(cuda.driver().cuMemcpy, dev.ptr, pageable.ptr, n)
            finally:
                cuda.call(cuda.driver().cuMemHostUnregister, pageable.ptr)

        variants = (
            (
                "copy_pinning_pageable",
                "copy from pageable memory (driver stages through its own pinned buffers)",
                lambda: cuda.call(cuda.driver().cuMemcpy, dev.ptr, pageable.ptr, n),
            ),
            (
                "copy_pinning_on_demand",
                "cuMemHostRegister, copy, cuMemHostUnregister each time (pinning counted)",
                pin_copy_unpin,
            ),
            (
                "copy_pinning_preallocated",
                "copy from a buffer pinned once in advance",
                lambda: cuda.call(cuda.driver().cuMemcpy, dev.ptr, pinned.ptr, n),
            ),
        )
        for key, desc, fn in variants:

            def case(key=key, desc=desc, fn=fn) -> BenchResult:
                dev.fill(POISON, n)
                pin_seconds.clear()
                timed = time_host(fn, iterations=opts.iterations, warmup=opts.warmup, what="cuMemcpy")
                mm = first_wrong_byte(dev, expected, n)
                metrics = {"pin_ms_median": SampleStats.of(pin_seconds).median * 1e3} if pin_seconds else {}
                return copy_result(
                    key, n, timed, params, verified=mm is None, mismatch=mm, description=desc, metrics=metrics
                )

            results.extend(run_case(key, case, params=params))
    ref = next((r.value for r in results if r.key == "copy_pinning_preallocated" and r.value), None)
    return [with_metrics(r, ratio_to_preallocated=r.value / ref) if ref and r.value else r for r in results]


# --------------------------------------------------------------------------------------------
# the cases
# --------------------------------------------------------------------------------------------

_DIRECTION_WORDS = {"h2d": "host to GPU", "d2h": "GPU to host", "bidir": "both ways at once"}


def _sweep_case(kind: MemoryKind, direction: str) -> Case:
    return Case(
        f"copy_{direction}_{kind_key(kind)}",
        f"copies {_DIRECTION_WORDS[direction]}, {kind.value} host memory, every size",
        Needs.GPU,
        "sweep",
        CopyParams(memory=kind, direction=Direction(direction)),
        functools.partial(_sweep_steps, kind, direction),
        functools.partial(_sweep_run, kind, direction),
    )


def _reference_steps(opts: CopyBenchOptions) -> int:
    """The reference runs beside the sweep, when asked for."""
    runs = "sweep" in opts.parts and opts.reference and opts.selects(REFERENCE_KEY)
    return 1 if runs else 0


def _reference_run(ctx: CopyContext, step: Step) -> list[BenchResult]:
    step(REFERENCE_KEY)
    return reference_results(ctx)


def _part_steps(part: str, opts: CopyBenchOptions) -> int:
    """pinning, overlap and blocks are one step each, when their part is asked for."""
    return 1 if part in opts.parts and opts.selects(f"copy_{part}") else 0


def _part_run(
    part: str, body: Callable[[CopyContext], list[BenchResult]], ctx: CopyContext, step: Step
) -> list[BenchResult]:
    step(f"copy_{part}")
    return run_case(f"copy_{part}", lambda: body(ctx))


def _part_case(part: str, description: str, body: Callable[[CopyContext], list[BenchResult]]) -> Case:
    return Case(
        f"copy_{part}",
        description,
        Needs.GPU,
        part,
        CopyParams(),
        functools.partial(_part_steps, part),
        functools.partial(_part_run, part, body),
    )


REFERENCE_KEY = "copy_h2d_pinned_reference"

#: copy-bench's cases, in the order they run: the sweep per host memory kind and direction, the
#: CuPy/PyTorch reference, then the parts. ``--list``, selection, progress and the run read this.
CASES: tuple[Case, ...] = (
    *(_sweep_case(k, d) for k in SWEEP_KINDS for d in DIRECTIONS),
    Case(
        REFERENCE_KEY,
        "the same H2D copy through CuPy and PyTorch (same-run reference)",
        Needs.GPU,
        "reference",
        CopyParams(memory=MemoryKind.PINNED, direction=Direction.H2D),
        _reference_steps,
        _reference_run,
    ),
    _part_case(
        "pinning", "pageable vs pin-on-demand vs preallocated pinned: the pinning trade-off", pinning_results
    ),
    _part_case(
        "overlap", "one stream vs two: H2D, compute and D2H overlapped across layers", overlap_results
    ),
    _part_case(
        "blocks", "many small blocks: one call each, batched, coalesced, and a gather kernel", block_results
    ),
)


# --------------------------------------------------------------------------------------------
# driver
# --------------------------------------------------------------------------------------------


def planned_cases(opts: CopyBenchOptions) -> list[Case]:
    """The cases these options run, in run order: those with steps, the sweep in the options' order.

    The sweep runs kind by kind (buffers are reused within a kind) in the order ``--kinds`` and
    ``--directions`` name them; every other case keeps its place in :data:`CASES`.
    """
    chosen = [c for c in CASES if c.steps(opts) > 0]

    def order(case: Case) -> tuple[int, int, int]:
        p = case.params
        if case.part == "sweep" and isinstance(p, CopyParams) and p.memory in opts.kinds and p.direction:
            return (0, opts.kinds.index(p.memory), opts.directions.index(p.direction.value))
        return (1, 0, 0)

    return sorted(chosen, key=order)


def planned_case_count(opts: CopyBenchOptions) -> int:
    """How many progress steps a run has: the sum of the planned cases' steps."""
    return sum(c.steps(opts) for c in planned_cases(opts))


def sweep_keys(opts: CopyBenchOptions) -> list[str]:
    """The sweep case keys these options run, in run order."""
    return [c.key for c in planned_cases(opts) if c.part == "sweep"]


def waived_cases(opts: CopyBenchOptions, reason: str) -> list[BenchResult]:
    """One WAIVED result per case these options would run, so a Report names each one."""
    keys = [c.key for c in planned_cases(opts)]
    return [BenchResult.waived(k, reason, provider="cuda", description=f"copy-bench {k}") for k in keys]


def run_copy_bench(
    opts: CopyBenchOptions, progress: Optional[Callable[[str], None]] = None
) -> list[BenchResult]:
    """Run the planned cases on the GPU's NUMA node (``opts.numa``); with no GPU, all WAIVED.

    Every result records the CUDA ordinal it ran on (``--device``) and the placement, and, when the
    GPU is there, the link read under load in its params.
    """
    opts.validate()
    try:
        cuda.init()
        gpu = cuda.GpuContext(opts.device)
    except NotSupported as exc:
        waived = on_gpu(waived_cases(opts, exc.reason), opts.device)
        return with_placement(waived, placement.not_run(opts.numa, "no GPU"))
    with placement.applied(placement.plan_for_gpu(opts.numa, opts.device)) as where:
        with copy_session(gpu, opts) as (ctx, link):
            results = run_cases(ctx, planned_cases(opts), progress)
    return with_placement(on_gpu([with_link(r, link) for r in results], opts.device), where)


def run_cases(ctx: CopyContext, cases: list[Case], progress: Optional[Step] = None) -> list[BenchResult]:
    """Each case in turn, on one shared context; the sweep's buffers are freed once the sweep is done."""
    step: Step = progress or (lambda label: None)
    results: list[BenchResult] = []
    try:
        for case in cases:
            if case.part != "sweep":
                ctx.sweep_buffers.close()
            results.extend(case.run(ctx, step))
    finally:
        ctx.sweep_buffers.close()
    return results


def with_link(result: BenchResult, sample: Optional[gpu_link.LinkSample]) -> BenchResult:
    """``result`` with the link sampled during the run in its params (copy results only)."""
    if sample is None or not isinstance(result.params, CopyParams):
        return result
    lk = sample.link
    return dataclasses.replace(
        result,
        params=dataclasses.replace(
            result.params,
            link=sample.text,
            link_generation=lk.generation if lk else None,
            link_width=lk.width if lk else None,
            link_max_generation=lk.max_generation if lk else None,
            link_max_width=lk.max_width if lk else None,
        ),
    )


LINK_SAMPLE_BYTES = 64 * MiB


def sample_link(ctx: CopyContext) -> gpu_link.LinkSample:
    """Read the GPU link while host->device copies run (the same reader gather-bench uses)."""
    n = min(LINK_SAMPLE_BYTES, memory.host_available_bytes() // 4)
    with (
        memory.allocate(MemoryKind.PINNED, n, gpu=ctx.gpu) as host,
        memory.allocate(MemoryKind.DEVICE, n, gpu=ctx.gpu) as dev,
    ):
        bus_id = cuda.device_facts(ctx.gpu.ordinal).pci_bus_id
        return gpu_link.sample_during_copies(bus_id, dev.ptr, host.ptr, n, ctx.streams[0])


@contextlib.contextmanager
def copy_session(gpu: cuda.GpuContext, opts: CopyBenchOptions) -> Iterator[tuple[CopyContext, Any]]:
    """The context every case shares (streams, gate, sweep buffers) and the link sampled under load first."""
    with gpu, cuda.Stream() as s0, cuda.Stream() as s1:
        gate = None
        try:
            gate = SpinGate(gpu)
            ctx = CopyContext(gpu=gpu, opts=opts, streams=[s0, s1], gate=gate, sweep_buffers=SweepBuffers())
            try:
                link = sample_link(ctx)
            except (GdrdiagError, ValueError) as exc:
                link = gpu_link.LinkSample(None, f"unknown: {exc}")
            yield ctx, link
        finally:
            if gate is not None:
                gate.close()
