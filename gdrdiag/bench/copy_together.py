"""Every GPU copying at once: the host's share of PCIe and memory bandwidth across a node.

``--gpus`` measures each GPU alone, which is each GPU's own path. Whether the host feeds all of them
at once is another question: the GPUs of a node share root complexes, the inter-socket link and host
DRAM, and a training job's input pipeline or checkpoint does copy on every GPU together. This case
issues one pinned copy of ``size`` bytes on every GPU's stream, then waits for all of them, and
reports the total bytes over the wall time (``copy_h2d_pinned_together``, ``copy_d2h_pinned_together``),
beside the sum of the GPUs' rates alone (``ratio_to_sum_alone``), so a host that cannot feed them
together shows as a ratio well below 1.

The path model does not judge these rows: the bound is the host's memory and root-complex fabric,
which gdrdiag reads no model of (pathmodel/rows.py says so on the row).
"""

from __future__ import annotations

import contextlib
from typing import Optional

from gdrdiag.bench.copy_config import POISON, copy_result, first_wrong_byte, with_metrics
from gdrdiag.bench.runner import run_case
from gdrdiag.bench.timing import time_host
from gdrdiag.hw import cuda, memory
from gdrdiag.model.params import COPY_MODE_TOGETHER, CopyParams
from gdrdiag.model.results import BenchResult, Status
from gdrdiag.model.vocabulary import Direction, MemoryKind

KEYS = {"h2d": "copy_h2d_pinned_together", "d2h": "copy_d2h_pinned_together"}


def run_together(
    ordinals: tuple[int, ...], size: int, *, iterations: int = 5, warmup: int = 1
) -> list[BenchResult]:
    """One row per direction: every GPU in ``ordinals`` copying ``size`` bytes at once (wall clock).

    Every GPU's buffers are allocated, filled and checked the way a one-GPU copy's are; all of them are
    released on every path (Ctrl-C included) by the exit stack.
    """
    expected = memory.pattern(size)
    results = []
    with contextlib.ExitStack() as stack:
        ends = []
        for ordinal in ordinals:
            gpu = stack.enter_context(cuda.GpuContext(ordinal))
            stream = stack.enter_context(cuda.Stream())
            host = stack.enter_context(memory.allocate(MemoryKind.PINNED, size, gpu=gpu))
            dev = stack.enter_context(memory.allocate(MemoryKind.DEVICE, size, gpu=gpu))
            # Unwinding frees this GPU's buffers and stream before releasing its context: make its context
            # current first, since the last one released may have been destroyed (the driver then
            # refuses every call made in it: CUDA_ERROR_CONTEXT_IS_DESTROYED).
            stack.callback(cuda.call, cuda.driver().cuCtxSetCurrent, gpu.handle)
            ends.append((gpu, stream, host, dev))
        for direction in ("h2d", "d2h"):
            for gpu, _, host, dev in ends:
                cuda.call(cuda.driver().cuCtxSetCurrent, gpu.handle)
                if direction == "h2d":
                    host.write(expected)
                    dev.fill(POISON, size)
                else:
                    dev.write(expected)
                    host.fill(POISON, size)

            def all_at_once(direction: str = direction) -> None:
                for gpu, stream, host, dev in ends:  # issue every GPU's copy, then wait for all
                    cuda.call(cuda.driver().cuCtxSetCurrent, gpu.handle)
                    dst, src = (dev, host) if direction == "h2d" else (host, dev)
                    cuda.call(cuda.driver().cuMemcpyAsync, dst.ptr, src.ptr, size, stream.handle)
                for gpu, stream, _, _ in ends:
                    cuda.call(cuda.driver().cuCtxSetCurrent, gpu.handle)
                    stream.synchronize()

            timed = time_host(
                all_at_once,
                iterations=iterations,
                warmup=warmup,
                what=f"one cuMemcpyAsync per GPU on its own stream ({len(ends)} GPUs), then all synchronised",
            )
            mismatch = None
            for gpu, _, host, dev in ends:
                cuda.call(cuda.driver().cuCtxSetCurrent, gpu.handle)
                mismatch = (
                    mismatch
                    if mismatch is not None
                    else first_wrong_byte(dev if direction == "h2d" else host, expected, size)
                )
            params = CopyParams(
                memory=MemoryKind.PINNED,
                direction=Direction(direction),
                mode=COPY_MODE_TOGETHER,
                size_bytes=size,
                streams=len(ends),
            )
            results.append(
                copy_result(
                    KEYS[direction],
                    size * len(ends),
                    timed,
                    params,
                    verified=mismatch is None,
                    mismatch=mismatch,
                    description=f"{direction.upper()} pinned copies on GPUs {', '.join(map(str, ordinals))} "
                    "at once: their total over the wall time",
                )
            )
    return results


def together_case(
    ordinals: tuple[int, ...], size: int, *, iterations: int = 5, warmup: int = 1
) -> list[BenchResult]:
    """:func:`run_together` as one case of a run: a failure becomes a WAIVED or ERROR row, never a crash."""
    return run_case(
        "copy_together", lambda: run_together(ordinals, size, iterations=iterations, warmup=warmup)
    )


def with_sum_alone(results: list[BenchResult]) -> list[BenchResult]:
    """``results`` with ``ratio_to_sum_alone`` on each together row: its rate over the GPUs' rates alone.

    The GPUs' rows alone are the pinned async copies of the same direction and size that each GPU
    measured in the same run; where a GPU has none the ratio stays unknown.
    """
    alone: dict[tuple[str, Optional[int]], dict[int, float]] = {}
    for r in results:
        q = r.params
        if isinstance(q, CopyParams) and r.status is Status.OK and r.value is not None and q.mode == "async":
            alone.setdefault((r.key, q.size_bytes), {}).setdefault(q.gpu or 0, r.value)
    out = []
    for t in results:
        p = t.params
        if t.key in KEYS.values() and isinstance(p, CopyParams) and t.value is not None and p.direction:
            rates = alone.get((f"copy_{p.direction.value}_pinned", p.size_bytes), {})
            if rates and len(rates) == p.streams:
                t = with_metrics(t, ratio_to_sum_alone=t.value / sum(rates.values()))
        out.append(t)
    return out
