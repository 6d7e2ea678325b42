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

import ctypes
import dataclasses
from dataclasses import dataclass
from typing import Any, Callable, Iterator, Optional

from gdrdiag.bench.copy_blocks import block_results
from gdrdiag.bench.copy_config import (
    POISON,
    CopyBenchOptions,
    CopyContext,
    copy_result,
    first_wrong_byte,
    with_metrics,
)
from gdrdiag.bench.runner import on_gpu, run_case, with_placement
from gdrdiag.bench.timing import SpinGate, Timed, gated_iterations, time_host, time_stream
from gdrdiag.errors import GdrdiagError, NotSupported
from gdrdiag.hw import cuda, gpu_link, memory, nvrtc, placement
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


def sweep_cases(ctx: CopyContext) -> Iterator[tuple[str, Callable[[], Any], dict]]:
    """Yield (key, case, result fields) for the kind x direction x mode x size sweep."""
    opts = ctx.opts
    largest = max(opts.sizes)
    expected = memory.pattern(largest)
    for kind in opts.kinds:
        for direction in opts.directions:
            for mode in opts.modes:
                if direction == "bidir" and mode == "sync":
                    continue  # bidirectional overlap needs asynchronous copies on two streams
                key = f"copy_{direction}_{kind.value.replace('-', '_')}"
                if opts.only is not None and key not in opts.only:
                    continue
                for size in opts.sizes:
                    params = CopyParams(
                        memory=kind, direction=Direction(direction), mode=mode, size_bytes=size
                    )
                    yield key, _SweepCase(ctx, kind, direction, mode, size, expected), {"params": params}


class _SweepBuffers:
    """Host and device buffers of one kind, sized for the largest sweep size and reused."""

    def __init__(self) -> None:
        self.kind: Optional[MemoryKind] = None
        self.bufs: list[Buffer] = []
        self.managed_on_host = False

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
        key = f"copy_{self.direction}_{kind.value.replace('-', '_')}"
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
# 3. overlap
# --------------------------------------------------------------------------------------------


@dataclass
class _Pipeline:
    """N layers of H2D -> compute -> D2H over pinned host buffers and two device buffers."""

    host_in: Buffer
    host_out: Buffer
    devs: tuple[Buffer, Buffer]
    kernel: Any
    grid: int
    block: int
    chunk: int
    layers: int

    def h2d(self, layer: int, dev: Buffer, stream: cuda.Stream) -> None:
        cuda.call(
            cuda.driver().cuMemcpyHtoDAsync,
            dev.ptr,
            self.host_in.ptr + layer * self.chunk,
            self.chunk,
            stream.handle,
        )

    def compute(self, dev: Buffer, stream: cuda.Stream, iters: int) -> None:
        args = [(dev.ptr, ctypes.c_void_p), (self.chunk // 4, ctypes.c_ulonglong), (iters, ctypes.c_int)]
        cuda.launch(self.kernel, self.grid, self.block, args, stream)

    def d2h(self, layer: int, dev: Buffer, stream: cuda.Stream) -> None:
        cuda.call(
            cuda.driver().cuMemcpyDtoHAsync,
            self.host_out.ptr + layer * self.chunk,
            dev.ptr,
            self.chunk,
            stream.handle,
        )

    def calibrate(self, stream: cuda.Stream) -> tuple[float, float, float, int]:
        """(H2D, compute, D2H seconds per layer, kernel iterations) for a balanced pipeline.

        Compute is sized to take about as long as one layer's H2D copy: a balanced pipeline is
        where overlap matters and reads easiest.
        """
        dev = self.devs[0]
        t_h2d = time_stream(stream, lambda s: self.h2d(0, dev, s), iterations=5, warmup=1).stats.median
        probe_iters = 64
        t_probe = time_stream(
            stream, lambda s: self.compute(dev, s, probe_iters), iterations=3, warmup=1
        ).stats.median
        iters = max(1, min(1_000_000, int(probe_iters * t_h2d / t_probe)))
        t_k = time_stream(stream, lambda s: self.compute(dev, s, iters), iterations=5, warmup=1).stats.median
        t_d2h = time_stream(stream, lambda s: self.d2h(0, dev, s), iterations=5, warmup=1).stats.median
        return t_h2d, t_k, t_d2h, iters

    def one_stream(self, stream: cuda.Stream, iters: int) -> None:
        for layer in range(self.layers):
            self.h2d(layer, self.devs[0], stream)
            self.compute(self.devs[0], stream, iters)
            self.d2h(layer, self.devs[0], stream)

    def two_streams(
        self, stream: cuda.Stream, s1: cuda.Stream, fork: cuda.Event, join: cuda.Event, iters: int
    ) -> None:
        fork.record(stream)
        s1.wait(fork)
        for layer in range(self.layers):
            st, dev = (stream, self.devs[0]) if layer % 2 == 0 else (s1, self.devs[1])
            self.h2d(layer, dev, st)
            self.compute(dev, st, iters)
            self.d2h(layer, dev, st)
        join.record(s1)
        stream.wait(join)


def _overlap_results(
    params: CopyParams,
    host_in: Buffer,
    reference_out: Any,
    two_out: Any,
    t_one: Timed,
    t_two: Timed,
    parts: tuple[float, float, float],
    iters: int,
) -> list[BenchResult]:
    """The two pipeline results: the serial run, and the two-stream run checked against it."""
    import numpy as np

    layers, chunk = params.layers or 1, params.chunk_bytes or 0
    t_h2d, t_k, t_d2h = parts
    # The pipeline must produce exactly what the serial run produced, and the kernel must
    # have changed the data (otherwise we timed nothing).
    mm = memory.first_mismatch(two_out, reference_out)
    changed = not np.array_equal(reference_out[:chunk], host_in.read_array(chunk))
    parts_sum = layers * (t_h2d + t_k + t_d2h)
    total_bytes = 2 * layers * chunk
    common = {
        "parts_sum_ms": parts_sum * 1e3,
        "h2d_ms": t_h2d * 1e3,
        "compute_ms": t_k * 1e3,
        "d2h_ms": t_d2h * 1e3,
        "compute_iters": float(iters),
    }
    one = copy_result(
        "copy_overlap_one_stream",
        total_bytes,
        t_one,
        dataclasses.replace(params, streams=1),
        verified=changed,
        mismatch=0,
        metrics=dict(common),
        description="N x (H2D -> compute -> D2H) on one stream",
    )
    two = copy_result(
        "copy_overlap_two_streams",
        total_bytes,
        t_two,
        params,
        verified=mm is None and changed,
        mismatch=mm if mm is not None else 0,
        metrics={
            **common,
            "speedup_vs_one_stream": t_one.stats.median / t_two.stats.median,
            "speedup_vs_parts_sum": parts_sum / t_two.stats.median,
        },
        description="the same work pipelined over two streams",
    )
    return [one, two]


def overlap_results(ctx: CopyContext) -> list[BenchResult]:
    """One stream vs a two-stream pipeline of N x (H2D -> compute -> D2H)."""
    import numpy as np

    opts = ctx.opts
    layers, chunk = opts.overlap_layers, opts.overlap_chunk
    s0, s1 = ctx.streams
    module = nvrtc.load("copy", ctx.gpu.arch)
    params = CopyParams(layers=layers, chunk_bytes=chunk, streams=2)
    try:
        with (
            memory.allocate(MemoryKind.PINNED, layers * chunk, gpu=ctx.gpu) as host_in,
            memory.allocate(MemoryKind.PINNED, layers * chunk, gpu=ctx.gpu) as host_out,
            memory.allocate(MemoryKind.DEVICE, chunk, gpu=ctx.gpu) as dev0,
            memory.allocate(MemoryKind.DEVICE, chunk, gpu=ctx.gpu) as dev1,
        ):
            host_in.write(np.random.default_rng(1234).random(layers * (chunk // 4), dtype=np.float32))
            pipe = _Pipeline(
                host_in,
                host_out,
                (dev0, dev1),
                module.function("busy_compute"),
                ctx.gpu.sm_count * 4,
                256,
                chunk,
                layers,
            )
            t_h2d, t_k, t_d2h, iters = pipe.calibrate(s0)
            n_iter = max(3, min(opts.iterations, 5))
            with cuda.Event() as fork, cuda.Event() as join:
                host_out.fill(0)
                t_one = time_stream(
                    s0, lambda s: pipe.one_stream(s, iters), iterations=n_iter, warmup=1, what="one stream"
                )
                reference_out = host_out.read_array()
                host_out.fill(0)
                t_two = time_stream(
                    s0,
                    lambda s: pipe.two_streams(s, s1, fork, join, iters),
                    iterations=n_iter,
                    warmup=1,
                    what="two streams, layers alternate, fork/join events",
                )
                two_out = host_out.read_array()
            return _overlap_results(
                params, host_in, reference_out, two_out, t_one, t_two, (t_h2d, t_k, t_d2h), iters
            )
    finally:
        module.close()


# --------------------------------------------------------------------------------------------
# 4. block sweep
# --------------------------------------------------------------------------------------------


# --------------------------------------------------------------------------------------------
# driver
# --------------------------------------------------------------------------------------------


def planned_case_count(opts: CopyBenchOptions) -> int:
    """How many progress steps a run has (for the progress bar)."""
    n = 0
    if "sweep" in opts.parts:
        for key in sweep_keys(opts):
            modes = [m for m in opts.modes if not (key.startswith("copy_bidir") and m == "sync")]
            n += len(modes) * len(opts.sizes)
        n += 1 if opts.reference else 0
    n += sum(1 for p in ("pinning", "overlap", "blocks") if p in opts.parts)
    return n


def sweep_keys(opts: CopyBenchOptions) -> list[str]:
    """The sweep case keys these options run, in run order."""
    keys = [f"copy_{d}_{k.value.replace('-', '_')}" for k in opts.kinds for d in opts.directions]
    return [k for k in keys if opts.only is None or k in opts.only]


def waived_cases(opts: CopyBenchOptions, reason: str) -> list[BenchResult]:
    """One WAIVED result per case these options would run, so a Report names each one."""
    keys = sweep_keys(opts) if "sweep" in opts.parts else []
    keys += ["copy_h2d_pinned_reference"] if "sweep" in opts.parts and opts.reference else []
    keys += [f"copy_{p}" for p in opts.parts if p != "sweep"]
    return [BenchResult.waived(k, reason, provider="cuda", description=f"copy-bench {k}") for k in keys]


def run_copy_bench(
    opts: CopyBenchOptions, progress: Optional[Callable[[str], None]] = None
) -> list[BenchResult]:
    """Run the selected parts on the GPU's NUMA node (``opts.numa``); with no GPU, all WAIVED.

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
        results, link = _run_parts(gpu, opts, progress)
    return with_placement(on_gpu([with_link(r, link) for r in results], opts.device), where)


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


def _run_parts(
    gpu: cuda.GpuContext, opts: CopyBenchOptions, progress: Optional[Callable[[str], None]]
) -> tuple[list[BenchResult], Optional[gpu_link.LinkSample]]:
    """The selected parts in order, and the link sampled under load before them."""
    results: list[BenchResult] = []
    link = None
    with gpu, cuda.Stream() as s0, cuda.Stream() as s1:
        gate = None
        try:
            gate = SpinGate(gpu)
            ctx = CopyContext(gpu=gpu, opts=opts, streams=[s0, s1], gate=gate, sweep_buffers=_SweepBuffers())
            try:
                link = sample_link(ctx)
            except (GdrdiagError, ValueError) as exc:
                link = gpu_link.LinkSample(None, f"unknown: {exc}")
            if "sweep" in opts.parts:
                try:
                    for key, case, fields in sweep_cases(ctx):
                        if progress:
                            progress(key)
                        results.extend(run_case(key, case, **fields))
                finally:
                    ctx.sweep_buffers.close()
                if opts.reference:
                    if progress:
                        progress("copy_h2d_pinned_reference")
                    results.extend(reference_results(ctx))
            for part, fn in (
                ("pinning", pinning_results),
                ("overlap", overlap_results),
                ("blocks", block_results),
            ):
                if part in opts.parts:
                    if progress:
                        progress(f"copy_{part}")
                    results.extend(run_case(f"copy_{part}", lambda fn=fn: fn(ctx)))
        finally:
            if gate is not None:
                gate.close()
    return results, link
