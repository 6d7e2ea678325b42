"""copy-bench's overlap part: N layers of H2D -> compute -> D2H, one stream against a two-stream pipeline.

The compute kernel (``busy_compute`` in ``native/copy.cu``) is sized to take about as long as one
layer's H2D copy, so the pipeline is balanced; the two-stream run must produce exactly what the serial
run produced, and the kernel must have changed the data (otherwise nothing was timed).
"""

from __future__ import annotations

import ctypes
import dataclasses
from dataclasses import dataclass
from typing import Any

from gdrdiag.bench.copy_config import CopyContext, copy_result
from gdrdiag.bench.timing import Timed, time_stream
from gdrdiag.hw import cuda, memory, nvrtc
from gdrdiag.hw.memory import Buffer, MemoryKind
from gdrdiag.model.params import CopyParams
from gdrdiag.model.results import BenchResult


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
