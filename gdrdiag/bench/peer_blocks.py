"""peer-bench's many-small-blocks sweep: GPU -> GPU with peer access on, four ways, each block size.

The workload of a GPU-to-GPU transfer of many KV-cache blocks (UCX, NIXL): ``count`` blocks of one
size sit scattered over a region of the source GPU (in :data:`SCATTER` times as many slots, in
random order) and land packed in the destination GPU's memory. Four ways move them; each is timed
per block size and every destination byte is checked after it (poisoned first):

- ``peer_blocks_per_call``: one ``cuMemcpyAsync`` per block (unified addressing: the driver sees a
  peer copy), issued from a Python loop on the source GPU's stream. The host's issue time is part of
  each sample, because the loop is what an application pays; ``issue_us_per_call`` is its share.
- ``peer_blocks_batched``: one ``cuMemcpyBatchAsync`` (CUDA 12.8+) for every block, issued the same
  way; WAIVED with the reason where the bindings or the driver lack it.
- ``peer_blocks_coalesced``: one ``cuMemcpyAsync`` of the same total bytes from a contiguous
  region (the one registered, coalesced region a transfer library could use instead), queued
  behind the spin gate.
- ``peer_blocks_kernel``: ``peer_gather_blocks`` (native/peer.cu) on the destination GPU reads the
  scattered blocks of the peer through UVA, queued behind the gate.

Each row carries ``ratio_to_coalesced``; one ``peer_blocks_summary`` row per ordered pair holds the
block size where each way reaches half the coalesced rate (copy_blocks' log2-linear
interpolation, :func:`gdrdiag.bench.copy_blocks.half_bandwidth_block_size`).

Bounds (device memory and run time): ``count`` blocks per size (default 10,000) unless
``count x size`` exceeds ``region_max`` (default 512 MiB), then ``region_max // size`` blocks
(8,192 of 64 KiB ... 256 of 2 MiB; the params say how many). The source region is
``SCATTER x region_max`` on the source GPU, the destination ``region_max`` on the destination.
"""

from __future__ import annotations

import ctypes
import dataclasses
import time
from dataclasses import dataclass
from typing import Any, Callable, Optional

from gdrdiag.bench.copy_blocks import half_bandwidth_block_size
from gdrdiag.bench.copy_config import BLOCK_SIZES
from gdrdiag.bench.runner import run_case
from gdrdiag.bench.timing import Timed, gated_iterations, time_stream
from gdrdiag.errors import NotSupported
from gdrdiag.hw import cuda, memcpy_batch, memory
from gdrdiag.hw.memory import Buffer, MemoryKind
from gdrdiag.model.params import PeerMetrics
from gdrdiag.model.results import BenchResult, SampleStats, Status
from gdrdiag.units import KiB, MiB

BLOCKS_CASE = "peer_blocks"  # the registered case; its rows carry the keys below
PER_CALL, BATCHED, COALESCED, KERNEL = (
    "peer_blocks_per_call",
    "peer_blocks_batched",
    "peer_blocks_coalesced",
    "peer_blocks_kernel",
)
BLOCK_KEYS = (PER_CALL, BATCHED, COALESCED, KERNEL)
SUMMARY_KEY = "peer_blocks_summary"
HALF_BANDWIDTH_WAYS = ((PER_CALL, "per_call"), (BATCHED, "batched"), (KERNEL, "kernel"))
DEFAULT_BLOCK_SIZES = BLOCK_SIZES  # 128 B .. 2 MiB, copy-bench's
DEFAULT_BLOCK_COUNT = 10_000
DEFAULT_REGION_MAX = 512 * MiB
SCATTER = 2  # source slots per block: blocks fill half the slots of their region, in random order
KERNEL_THREADS = 512
KERNEL_CTAS_PER_SM = 4
_SEED = 0x21  # the slot permutation's seed (the same layout every run)


def blocks_for(size: int, count: int, region_max: int) -> int:
    """Blocks of ``size`` the sweep moves: ``count``, unless their total would exceed ``region_max``."""
    return max(1, min(count, region_max // size))


def scatter_slots(count: int, seed: int = _SEED) -> Any:
    """``count`` distinct slots out of ``SCATTER x count``, in random order (numpy uint64)."""
    import numpy as np

    rng = np.random.default_rng(seed)
    return rng.choice(SCATTER * count, size=count, replace=False).astype(np.uint64)


def gathered(source: Any, slots: Any, size: int) -> Any:
    """What the destination must hold: block ``b`` = ``source``'s slot ``slots[b]`` (slots of ``size``)."""
    nslots = SCATTER * len(slots)
    return source[: nslots * size].reshape(nslots, size)[slots.astype("int64")].ravel()


@dataclass
class _Buffers:
    """One ordered pair's sweep buffers: the scattered source, the packed destination, the slot table."""

    src: Buffer  # on the source GPU: SCATTER x region bytes
    dst: Buffer  # on the destination GPU: region bytes
    slots: Buffer  # on the destination GPU: the kernel's slot table (uint64 per block)
    source: Any  # the bytes written into src (numpy uint8)


@dataclass(frozen=True)
class _Way:
    key: str
    description: str
    runner: int  # the GPU whose stream runs it
    op: Callable[[cuda.Stream], None]
    gated: bool
    issue: Optional[list[float]] = None  # host seconds per op call (the ungated ways)


def _allocate(session: Any, src: int, dst: int, region: int, max_blocks: int) -> _Buffers:
    gs, gd = session.gpus[src], session.gpus[dst]
    made: list[tuple[Any, Buffer]] = []
    try:
        gs.current()
        memory.check_fits(SCATTER * region + 64 * KiB, 0, gs.ctx)
        s_buf = memory.allocate(MemoryKind.DEVICE, SCATTER * region, alignment=64 * KiB, gpu=gs.ctx)
        made.append((gs, s_buf))
        source = memory.pattern(SCATTER * region, seed=0x6B)
        s_buf.write(source)
        gd.current()
        memory.check_fits(region + max_blocks * 8 + 128 * KiB, 0, gd.ctx)
        d_buf = memory.allocate(MemoryKind.DEVICE, region, alignment=64 * KiB, gpu=gd.ctx)
        made.append((gd, d_buf))
        t_buf = memory.allocate(MemoryKind.DEVICE, max_blocks * 8, alignment=64 * KiB, gpu=gd.ctx)
        made.append((gd, t_buf))
    except BaseException:
        _free(made)
        raise
    return _Buffers(s_buf, d_buf, t_buf, source)


def _free(made: list[tuple[Any, Buffer]]) -> None:
    for g, buf in reversed(made):
        g.current()
        buf.close()


def _ways(session: Any, bufs: _Buffers, src: int, dst: int, size: int, count: int, slots: Any) -> list[_Way]:
    """The four ways of moving this size's blocks (pointers computed once, outside the timing)."""
    drv = cuda.driver()
    memcpy_async, success = drv.cuMemcpyAsync, drv.CUresult.CUDA_SUCCESS
    sp, dp, total = bufs.src.ptr, bufs.dst.ptr, size * count
    srcs = [sp + int(k) * size for k in slots]
    dsts = [dp + b * size for b in range(count)]
    per_call_issue: list[float] = []
    batched_issue: list[float] = []

    def per_call(stream: cuda.Stream) -> None:
        hs = stream.handle  # the loop is the measurement: one driver call per block
        t0 = time.perf_counter()
        for d, s in zip(dsts, srcs, strict=True):
            err = memcpy_async(d, s, size, hs)[0]
            if err != success:
                cuda.check((err,), "cuMemcpyAsync")
        per_call_issue.append(time.perf_counter() - t0)

    try:
        batch: Optional[memcpy_batch.BatchCopy] = memcpy_batch.BatchCopy(dsts, srcs, [size] * count)
        why = ""
    except NotSupported as exc:
        batch, why = None, exc.reason

    def batched(stream: cuda.Stream) -> None:
        # One driver call for every block, its arrays built once (hw/memcpy_batch.py): the row times
        # the driver's batch, as copy-bench's ctypes and C rows do, not the bindings' list conversion.
        if batch is None:
            raise NotSupported(why)
        batched_issue.append(batch.issue(int(stream.handle)))

    gd = session.gpus[dst]
    kernel = gd.module.function("peer_gather_blocks")
    words = size // 16
    shift = words.bit_length() - 1 if words & (words - 1) == 0 else -1
    grid = max(1, min(gd.ctx.sm_count * KERNEL_CTAS_PER_SM, -(-words * count // KERNEL_THREADS)))
    args = [
        (dp, ctypes.c_void_p),
        (sp, ctypes.c_void_p),
        (bufs.slots.ptr, ctypes.c_void_p),
        (words, ctypes.c_ulonglong),
        (count, ctypes.c_ulonglong),
        (shift, ctypes.c_int),
    ]
    return [
        _Way(
            PER_CALL, "one cuMemcpyAsync per block, issued from Python", src, per_call, False, per_call_issue
        ),
        _Way(
            BATCHED,
            f"one {batch.entry.name if batch else 'cuMemcpyBatchAsync'} for all blocks",
            src,
            batched,
            False,
            batched_issue,
        ),
        _Way(
            COALESCED,
            "one cuMemcpyAsync of the same bytes from a contiguous region",
            src,
            lambda s: cuda.call(cuda.driver().cuMemcpyAsync, dp, sp, total, s.handle),
            True,
        ),
        _Way(
            KERNEL,
            f"peer_gather_blocks on GPU {dst} reading the scattered blocks through UVA, "
            f"{grid} x {KERNEL_THREADS} threads",
            dst,
            lambda s: cuda.launch(kernel, grid, KERNEL_THREADS, args, s),
            True,
        ),
    ]


def _measure(
    session: Any, bufs: _Buffers, way: _Way, src: int, dst: int, size: int, count: int, expected: Any
) -> BenchResult:
    """One way at one block size: poisoned, timed, every byte checked."""
    opts, total = session.opts, size * count
    runner = session.gpus[way.runner]
    session.poison(bufs.dst, dst, total)
    runner.current()
    iters = gated_iterations(opts.iterations) if way.gated else max(2, min(opts.iterations, 5))
    timed = time_stream(
        runner.streams[0],
        way.op,
        iterations=iters,
        warmup=1,
        gate=runner.gate if way.gated else None,
        what=f"{way.description}, GPU {src} -> GPU {dst}",
    )
    mismatch = session.check(bufs.dst, dst, expected, total)
    issue = None
    if way.issue:  # the timed iterations, not the warm-up; per driver call
        calls = count if way.key == PER_CALL else 1
        issue = SampleStats.of(tuple(way.issue[-iters:])).median * 1e6 / calls
    return block_row(session, way.key, src, dst, size, count, timed, mismatch, issue, way.description)


def block_row(
    session: Any,
    key: str,
    src: int,
    dst: int,
    size: int,
    count: int,
    timed: Timed,
    mismatch: Optional[int],
    issue_us_per_call: Optional[float],
    how: str,
) -> BenchResult:
    """One way's row at one block size: GB/s of all blocks, time per block, the path model's numbers."""
    total = size * count
    kernel = key == KERNEL
    params = session.params(
        src,
        dst,
        mover="sm" if kernel else "ce",
        op="read" if kernel else "copy",
        peer_access=True,
        bidirectional=False,
        size_bytes=total,
        block_bytes=size,
        blocks=count,
    )
    desc = f"{count} blocks of {size} B, GPU {src} -> GPU {dst}: {how}"
    per_block = timed.stats.median / count * 1e6
    return session.result(
        key, params, timed, total, mismatch, desc, us_per_block=per_block, issue_us_per_call=issue_us_per_call
    )


def _size_rows(session: Any, bufs: _Buffers, src: int, dst: int, size: int) -> list[BenchResult]:
    """Every way for one block size; ratios to the coalesced copy of the same bytes."""
    opts = session.opts
    count = blocks_for(size, opts.block_count, opts.block_region_max)
    slots = scatter_slots(count)
    session.gpus[dst].current()
    bufs.slots.write(slots.tobytes())
    scattered = gathered(bufs.source, slots, size)
    contiguous = bufs.source[: size * count]
    row: list[BenchResult] = []
    for way in _ways(session, bufs, src, dst, size, count, slots):
        expected = contiguous if way.key == COALESCED else scattered
        params = session.params(src, dst, peer_access=True, block_bytes=size, blocks=count)
        row.extend(
            run_case(
                way.key,
                lambda w=way, e=expected: _measure(session, bufs, w, src, dst, size, count, e),
                params=params,
                provider="cuda",
            )
        )
    coalesced = next((r.value for r in row if r.key == COALESCED and r.status is Status.OK), None)
    if not coalesced:
        return row
    return [_with(r, ratio_to_coalesced=r.value / coalesced) if r.value else r for r in row]


def _with(r: BenchResult, **metrics: Optional[float]) -> BenchResult:
    return dataclasses.replace(r, metrics=dataclasses.replace(r.metrics, **metrics))


def block_results(session: Any, src: int, dst: int) -> list[BenchResult]:
    """The sweep for one ordered pair (peer access on both ways), then its summary row."""
    opts = session.opts
    counts = [blocks_for(s, opts.block_count, opts.block_region_max) for s in opts.block_sizes]
    region = max(s * c for s, c in zip(opts.block_sizes, counts, strict=True))
    bufs = _allocate(session, src, dst, region, max(counts))
    results: list[BenchResult] = []
    try:
        for size in opts.block_sizes:
            results.extend(_size_rows(session, bufs, src, dst, size))
    finally:
        _free([(session.gpus[src], bufs.src), (session.gpus[dst], bufs.dst), (session.gpus[dst], bufs.slots)])
    results.append(blocks_summary(results, session.params(src, dst, peer_access=True)))
    return results


def blocks_summary(results: list[BenchResult], params: Any) -> BenchResult:
    """Where each way first reaches half the coalesced rate (None: never within the sweep)."""
    half: dict[str, Optional[float]] = {}
    for key, name in HALF_BANDWIDTH_WAYS:
        pts = [
            (r.params.block_bytes, r.metrics.ratio_to_coalesced)
            for r in results
            if r.key == key and r.status is Status.OK and getattr(r.metrics, "ratio_to_coalesced", None)
        ]
        half[f"half_bandwidth_block_bytes_{name}"] = half_bandwidth_block_size(pts) if pts else None
    return BenchResult(
        key=SUMMARY_KEY,
        status=Status.OK,
        description=f"GPU {params.src_gpu} -> GPU {params.dst_gpu}: block size at which each way reaches "
        "half the coalesced rate",
        params=params,
        metrics=PeerMetrics(**half),
        method="log2-linear interpolation of ratio_to_coalesced between the measured block sizes",
        provider="cuda",
        unit="bytes",
    )
