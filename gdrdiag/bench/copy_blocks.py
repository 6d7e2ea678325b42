"""copy-bench's many-small-blocks part, and the block size where each way reaches half the coalesced rate.

The ways: one call per block (from Python and from C), cuMemcpyBatchAsync (from Python and from C, the
same entry point with arrays built before the call; and through cuda-bindings, whose list conversion
is part of every call), one coalesced copy, and a gather kernel.
"""

from __future__ import annotations

import ctypes
import time
from typing import Any, Callable, Optional

from gdrdiag.bench.copy_config import POISON, CopyContext, copy_result, first_wrong_byte, with_metrics
from gdrdiag.bench.runner import run_case
from gdrdiag.bench.timing import Timed, gated_iterations, time_interleaved, time_stream
from gdrdiag.errors import NotSupported, UserInputError
from gdrdiag.hw import cuda, memcpy_batch, memory, nvrtc
from gdrdiag.hw.memory import Buffer, MemoryKind
from gdrdiag.model.params import CopyMetrics, CopyParams
from gdrdiag.model.results import BenchResult, SampleStats, Status
from gdrdiag.model.vocabulary import Direction
from gdrdiag.units import KiB


def _binding_batch_op(dsts: list[int], srcs: list[int], sizes: list[int]) -> Callable[[cuda.Stream], None]:
    """An op issuing one cuMemcpyBatchAsync (CUDA 12.8+) for all blocks through cuda-bindings.

    The bindings' ``CUdeviceptr`` objects are made here, once; the bindings still turn the three
    Python lists into C arrays inside every call, and that is part of what this row times (the
    ctypes row beside it calls the driver with arrays built once). NotSupported where the driver
    or bindings lack the call.
    """
    drv = cuda.driver()
    try:
        fn = drv.cuMemcpyBatchAsync
    except AttributeError:
        raise NotSupported(
            "cuMemcpyBatchAsync is not in these cuda-python bindings (needs CUDA 12.8+)"
        ) from None
    attrs = drv.CUmemcpyAttributes()
    attrs.srcAccessOrder = drv.CUmemcpySrcAccessOrder.CU_MEMCPY_SRC_ACCESS_ORDER_STREAM
    dst_ptrs = [drv.CUdeviceptr(p) for p in dsts]
    src_ptrs = [drv.CUdeviceptr(p) for p in srcs]
    count = len(sizes)

    def op(stream: cuda.Stream) -> None:
        try:
            result = fn(dst_ptrs, src_ptrs, sizes, count, [attrs], [0], 1, stream.handle)
        except TypeError as exc:  # a bindings signature this code does not know
            raise NotSupported(f"cuMemcpyBatchAsync: unexpected bindings signature ({exc})") from None
        err = result[0] if isinstance(result, tuple) else result
        if int(err) == int(drv.CUresult.CUDA_ERROR_NOT_SUPPORTED):
            raise NotSupported("cuMemcpyBatchAsync: CUDA_ERROR_NOT_SUPPORTED on this driver")
        cuda.check(result, "cuMemcpyBatchAsync")

    return op


def _ctypes_batch_op(
    dsts: list[int], srcs: list[int], sizes: list[int], issue: dict[str, list[float]]
) -> tuple[Callable[[cuda.Stream], None], str]:
    """An op issuing one cuMemcpyBatchAsync from Python through ctypes, and the entry point's name.

    The arrays are built once (hw/memcpy_batch.py), so the call is the C row's call: the same
    entry point, the same attribute set, arrays that already exist. Records the driver call's host
    time. NotSupported (raised by the op, so the row is WAIVED) where the driver lacks the call.
    """
    try:
        batch = memcpy_batch.BatchCopy(dsts, srcs, sizes)
    except NotSupported as exc:
        reason = exc.reason

        def unsupported(stream: cuda.Stream) -> None:
            raise NotSupported(reason)

        return unsupported, "cuMemcpyBatchAsync"

    def op(stream: cuda.Stream) -> None:
        issue.setdefault("copy_blocks_batched", []).append(batch.issue(int(stream.handle)))

    return op, batch.entry.name


def _measure_method(
    ctx: CopyContext,
    dev: Buffer,
    expected: Any,
    params: CopyParams,
    issue: dict,
    key: str,
    desc: str,
    op: Callable,
    gate: Any,
) -> BenchResult:
    """One way of moving the blocks: poisoned, timed, every byte checked; time per block and per call."""
    count, size = params.blocks or 1, params.block_bytes or 0
    total = count * size
    opts, s0 = ctx.opts, ctx.streams[0]
    dev.fill(POISON, total)
    iters = gated_iterations(opts.iterations) if gate else max(2, min(opts.iterations, 5))
    timed = time_stream(s0, op, iterations=iters, warmup=1, gate=gate)
    mm = first_wrong_byte(dev, expected, total)
    return _block_result(params, issue, key, desc, timed, mm)


def _block_result(
    params: CopyParams, issue: dict, key: str, desc: str, timed: Timed, mm: Optional[int]
) -> BenchResult:
    """One way's result: GB/s, time per block, and the host time per driver call of the timed calls."""
    count, size = params.blocks or 1, params.block_bytes or 0
    metrics = {"us_per_block": SampleStats.of(timed.seconds).median / count * 1e6}
    calls = issue.get(key, [])[-len(timed.seconds) :]  # the timed iterations, not the warm-up
    if calls:  # host time spent issuing, per driver call (per_call: count calls; batched: 1)
        metrics["issue_us_per_call"] = (
            SampleStats.of(tuple(calls)).median * 1e6 / (count if "per_call" in key else 1)
        )
    timed = Timed(timed.seconds, f"{desc}: {timed.method}")
    return copy_result(
        key, count * size, timed, params, verified=mm is None, mismatch=mm, description=desc, metrics=metrics
    )


BATCHED = ("copy_blocks_batched", "copy_blocks_batched_c", "copy_blocks_batched_binding")


def _measure_batched(
    ctx: CopyContext, dev: Buffer, expected: Any, params: CopyParams, issue: dict, ways: list[tuple]
) -> list[BenchResult]:
    """The batched call from Python, from C and through cuda-bindings: each verified, then timed together.

    Each way moves the blocks once into a poisoned destination and every byte is checked; then the
    ways are timed in interleaved rounds, every call on a drained stream (timing.time_interleaved).
    Why drained: the driver's host time for one batch depends on whether the stream has work in
    flight when the call is made (H100, driver 580, 10,000 blocks of 16 KiB: about 37 ms on an idle
    stream, 4.6 ms behind queued work, for every way of making the call; docs/benchmarks.md, issue
    24). Samples made back to back raced between the two: a caller that issued the next batch
    within microseconds found the stream busy, one that spent 0.5 ms converting its arguments (the
    bindings) found it drained, and stayed on the slow path.
    """
    count, size = params.blocks or 1, params.block_bytes or 0
    s0 = ctx.streams[0]
    outcome: dict[str, Any] = {}  # key -> first wrong byte (None: all right) or the exception raised
    for key, _desc, op in ways:
        try:
            dev.fill(POISON, count * size)
            op(s0)
            s0.synchronize()
            outcome[key] = first_wrong_byte(dev, expected, count * size)
        except (UserInputError, KeyboardInterrupt):
            raise
        except Exception as exc:  # noqa: BLE001 - becomes this way's WAIVED/ERROR result below
            outcome[key] = exc
    live = {key: op for key, _desc, op in ways if not isinstance(outcome[key], Exception)}
    iters = max(2, min(ctx.opts.iterations, 5))
    try:
        timed = time_interleaved(s0, live, iterations=iters, warmup=1) if live else {}
    except (UserInputError, KeyboardInterrupt):
        raise
    except Exception as exc:  # noqa: BLE001 - every way that was to be timed reports it
        timed = {}
        for key in live:
            outcome[key] = exc

    def result(key: str, desc: str) -> BenchResult:
        got = outcome[key]
        if isinstance(got, Exception):
            raise got
        return _block_result(params, issue, key, desc, timed[key], got)

    rows: list[BenchResult] = []
    for key, desc, _op in ways:
        rows.extend(run_case(key, lambda k=key, d=desc: result(k, d), params=params))
    return rows


def _methods(
    ctx: CopyContext,
    host: Buffer,
    dev: Buffer,
    kernel: Any,
    size: int,
    count: int,
    per_block: Callable,
    batched: tuple[Callable, str, Callable],
    c_ops: tuple,
) -> tuple:
    """(key, description, op, gate) of every way the block sweep moves one set of blocks."""
    d, h, total = dev.ptr, host.ptr, count * size
    batched_py, entry_name, batched_binding = batched
    kernel_grid = min(count, ctx.gpu.sm_count * 16)
    kernel_args = [
        (d, ctypes.c_void_p),
        (host.device_ptr, ctypes.c_void_p),
        (size, ctypes.c_ulonglong),
        (count, ctypes.c_ulonglong),
    ]
    methods = (
        ("copy_blocks_per_call", "one cuMemcpyHtoDAsync per block, issued from Python", per_block, None),
        (
            "copy_blocks_per_call_c",
            "one cuMemcpyHtoDAsync per block, issued from a C loop (native/copy_loop.c)",
            c_ops[0],
            None,
        ),
        (
            "copy_blocks_batched",
            f"one {entry_name} for all blocks from Python: arrays built once, called through ctypes",
            batched_py,
            None,
        ),
        (
            "copy_blocks_batched_c",
            f"one {_c_batch_entry()} for all blocks, issued from C (native/copy_loop.c)",
            c_ops[1],
            None,
        ),
        (
            "copy_blocks_batched_binding",
            "one cuMemcpyBatchAsync for all blocks through cuda-bindings (lists converted in each call)",
            batched_binding,
            None,
        ),
        (
            "copy_blocks_coalesced",
            "one cuMemcpyHtoDAsync of the contiguous region",
            lambda s: cuda.call(cuda.driver().cuMemcpyHtoDAsync, d, h, total, s.handle),
            ctx.gate,
        ),
        (
            "copy_blocks_kernel",
            "NVRTC copy kernel, one CTA per block, reading mapped pinned memory",
            lambda s: cuda.launch(kernel, kernel_grid, 256, kernel_args, s),
            ctx.gate,
        ),
    )
    return methods


def _block_row(
    ctx: CopyContext, host: Buffer, dev: Buffer, kernel: Any, expected: Any, size: int, count: int
) -> list[BenchResult]:
    """Every method for one block size (Python and C issued); ratios against the coalesced copy."""
    params = CopyParams(block_bytes=size, blocks=count, memory=MemoryKind.PINNED, direction=Direction.H2D)
    drv = cuda.driver()
    memcpy_async, success = drv.cuMemcpyHtoDAsync, drv.CUresult.CUDA_SUCCESS
    h, d = host.ptr, dev.ptr

    issue: dict[str, list[float]] = {}  # method key -> host seconds spent issuing, per call of op

    def per_block(stream: cuda.Stream) -> None:
        # The loop is the measurement: one driver call per block, as an application would make.
        hs = stream.handle
        t0 = time.perf_counter()
        for i in range(count):
            off = i * size
            err = memcpy_async(d + off, h + off, size, hs)[0]
            if err != success:
                cuda.check((err,), "cuMemcpyHtoDAsync")
        issue.setdefault("copy_blocks_per_call", []).append(time.perf_counter() - t0)

    c_ops = _c_block_ops(h, d, size, count, issue)

    dsts, srcs = [d + i * size for i in range(count)], [h + i * size for i in range(count)]
    sizes = [size] * count
    batched_py, entry_name = _ctypes_batch_op(dsts, srcs, sizes, issue)
    try:
        binding: Any = _binding_batch_op(dsts, srcs, sizes)
    except NotSupported as exc:
        reason = exc.reason

        def binding(stream: cuda.Stream) -> None:
            raise NotSupported(reason)

    def batched_binding(stream: cuda.Stream, op: Callable[[cuda.Stream], None] = binding) -> None:
        t0 = time.perf_counter()
        op(stream)
        issue.setdefault("copy_blocks_batched_binding", []).append(time.perf_counter() - t0)

    methods = _methods(
        ctx, host, dev, kernel, size, count, per_block, (batched_py, entry_name, batched_binding), c_ops
    )
    row: list[BenchResult] = []
    batched = [(key, desc, op) for key, desc, op, _gate in methods if key in BATCHED]
    for key, desc, op, gate in methods:
        if key == BATCHED[0]:  # the three batched ways, measured together
            row.extend(_measure_batched(ctx, dev, expected, params, issue, batched))
        if key in BATCHED:
            continue
        row.extend(
            run_case(
                key,
                lambda k=key, de=desc, o=op, g=gate: _measure_method(
                    ctx, dev, expected, params, issue, k, de, o, g
                ),
                params=params,
            )
        )
    coalesced = next((r.value for r in row if r.key == "copy_blocks_coalesced" and r.value), None)
    return [
        with_metrics(r, ratio_to_coalesced=r.value / coalesced) if coalesced and r.value else r for r in row
    ]


def _c_batch_entry() -> str:
    """The entry point the C loop's batch calls on this driver (its own choice, read back)."""
    from gdrdiag.hw import copy_native

    try:
        abi = copy_native.batch_abi()
    except NotSupported:  # no C loop here: the row is WAIVED with the reason
        return "cuMemcpyBatchAsync"
    return "cuMemcpyBatchAsync_v2" if abi == 13000 else "cuMemcpyBatchAsync"


def _c_block_ops(
    h: int, d: int, size: int, count: int, issue: dict[str, list[float]]
) -> tuple[Callable[[cuda.Stream], None], ...]:
    """The per-block and batched copies issued from C (hw/copy_native.py).

    Each op records the C loop's own issue time. Where the library, the driver entry point or
    CUDA 12.8 is missing, the op raises NotSupported with the reason (the row becomes WAIVED).
    """
    from gdrdiag.hw import copy_native

    def per_call_c(stream: cuda.Stream) -> None:
        t = copy_native.per_block(stream=stream.handle, dst=d, src=h, block=size, count=count)
        issue.setdefault("copy_blocks_per_call_c", []).append(t.issue_seconds)

    def batched_c(stream: cuda.Stream) -> None:
        t = copy_native.batch(stream=stream.handle, dst=d, src=h, block=size, count=count)
        issue.setdefault("copy_blocks_batched_c", []).append(t.issue_seconds)

    return per_call_c, batched_c


def block_results(ctx: CopyContext) -> list[BenchResult]:
    """Per-block vs batched vs coalesced vs kernel copies, for each block size, then the summary."""
    opts = ctx.opts
    largest = max(opts.block_sizes)
    region = max(min(opts.block_count * largest, opts.block_region_max), largest)
    expected = memory.pattern(region)
    module = nvrtc.load("copy", ctx.gpu.arch)
    results: list[BenchResult] = []
    try:
        with (
            memory.allocate(MemoryKind.PINNED, region, alignment=64 * KiB, gpu=ctx.gpu) as host,
            memory.allocate(MemoryKind.DEVICE, region, alignment=64 * KiB, gpu=ctx.gpu) as dev,
        ):
            host.write(expected)
            for size in opts.block_sizes:
                # 10,000 blocks unless that exceeds the region cap; the count is in the params.
                count = max(1, min(opts.block_count, region // size))
                results.extend(
                    _block_row(ctx, host, dev, module.function("copy_blocks"), expected, size, count)
                )
    finally:
        module.close()
    results.append(block_summary(results))
    return results


def half_bandwidth_block_size(points: list[tuple[int, float]]) -> Optional[float]:
    """Block size where a ratio-to-coalesced curve first reaches 0.5.

    ``points`` are (block size, ratio) pairs. Interpolates linearly in log2(size) between the
    last point below 0.5 and the first at or above it; None if the curve never gets there,
    the smallest size if it starts above.
    """
    import math

    pts = sorted(points)
    for i, (size, ratio) in enumerate(pts):
        if ratio >= 0.5:
            if i == 0:
                return float(size)
            s0, r0 = pts[i - 1]
            frac = (0.5 - r0) / (ratio - r0) if ratio != r0 else 0.0
            return 2 ** (math.log2(s0) + frac * (math.log2(size) - math.log2(s0)))
    return None


def block_summary(results: list[BenchResult]) -> BenchResult:
    """The half-bandwidth block sizes of the per-call and batched methods."""
    half: dict[str, Optional[float]] = {}
    for key, name in (
        ("copy_blocks_per_call", "per_call"),
        ("copy_blocks_per_call_c", "per_call_c"),
        ("copy_blocks_batched", "batched"),
        ("copy_blocks_batched_c", "batched_c"),
        ("copy_blocks_kernel", "kernel"),
    ):
        pts = [
            (r.params.block_bytes, r.metrics.ratio_to_coalesced)
            for r in results
            if r.key == key and r.status is Status.OK and r.metrics.ratio_to_coalesced is not None
        ]
        half[f"half_bandwidth_block_bytes_{name}"] = half_bandwidth_block_size(pts) if pts else None
    metrics = CopyMetrics(**half)
    return BenchResult(
        key="copy_blocks_summary",
        status=Status.OK,
        description="block size at which each method reaches half the coalesced bandwidth",
        metrics=metrics,
        method="log2-linear interpolation of ratio_to_coalesced between the measured block sizes",
        provider="cuda",
        unit="bytes",
    )
