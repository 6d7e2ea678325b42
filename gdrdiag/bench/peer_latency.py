"""peer-bench latency cases: one small copy-engine peer copy at a time, peer access off and on.

``peer_lat_ce_off`` / ``peer_lat_ce_on``: ``cuMemcpyPeerAsync`` of ``LATENCY_BYTES`` from ``src``'s
memory into ``dst``'s, each copy between its own pair of CUDA events and waited for before the next
is queued (nothing overlaps, so each sample is one copy's time on the GPU, without the host's
enqueue). The value is the median per-copy latency in microseconds over ``LATENCY_ITERATIONS``
samples. The destination is poisoned first and its bytes checked after the last copy. Off, the
driver stages the copy through host memory; on, the copy engine writes the peer directly.

``peer_lat_sm_on``: an SM's round trip to the peer's memory. ``peer_chase`` (native/peer.cu), one
thread on GPU ``dst``, follows a ring of pointers in GPU ``src``'s memory through UVA (peer access
on): each 8-byte load gives the address of the next, so no load can start before the one before it
has come back. The ring has :data:`CHASE_SLOTS` entries :data:`CHASE_STRIDE` bytes apart (64 MiB,
more than an H100's 50 MB L2) in random cyclic order, and each launch continues where the one before
stopped. The value is the median over launches of (kernel time / :data:`CHASE_HOPS`) in
microseconds: one dependent load's round trip, the launch's few microseconds spread over the hops
(under 0.5%). The address the chase ends on is checked against the ring walked on the host.

These rows are latencies, not bandwidths: the path model does not judge them.
"""

from __future__ import annotations

import ctypes
import dataclasses
from typing import Any, Optional

from gdrdiag.bench.timing import Timed, time_stream
from gdrdiag.hw import cuda, memory
from gdrdiag.hw.memory import MemoryKind
from gdrdiag.model.params import PeerMetrics, PeerParams, RunSettings
from gdrdiag.model.results import BenchResult, SampleStats, Status
from gdrdiag.units import KiB

SM_LATENCY_KEY = "peer_lat_sm_on"
LATENCY_KEYS = ("peer_lat_ce_off", "peer_lat_ce_on", SM_LATENCY_KEY)
LATENCY_BYTES = 4  # one 32-bit word, as a flag or a small message would be
LATENCY_ITERATIONS = 200
LATENCY_WARMUP = 10
CHASE_SLOTS = 16_384
CHASE_STRIDE = 4 * KiB
CHASE_HOPS = 2_000
CHASE_LAUNCHES = 20
CHASE_WARMUP = 2


def latency_result(
    key: str, params: PeerParams, timed: Timed, mismatch: Optional[int], description: str, warmup: int
) -> BenchResult:
    """A latency row: samples in microseconds, the median its value."""
    samples = tuple(s * 1e6 for s in timed.seconds)
    ok = mismatch is None
    return BenchResult(
        key=key,
        status=Status.OK if ok else Status.ERROR,
        description=description,
        params=dataclasses.replace(params, model=None),
        unit="us",
        samples=samples,
        stats=SampleStats.of(samples),
        metrics=PeerMetrics(seconds_median=SampleStats.of(timed.seconds).median),
        settings=RunSettings(iterations=len(timed.seconds), warmup=warmup),
        method=timed.method,
        provider="cuda",
        verified=ok,
        reason=None if ok else f"payload check failed: first wrong byte at offset {mismatch}",
    )


def latency_case(session: Any, bufs: Any, src: int, dst: int, on: bool) -> BenchResult:
    """One small peer copy at a time, GPU ``src`` -> ``dst``; median per-copy latency (us)."""
    n = LATENCY_BYTES
    g = session.gpus[src]
    session.poison(bufs.dst[dst], dst, n)
    g.current()
    timed = time_stream(
        g.streams[0],
        session.copy_op(src, dst, bufs, n),
        iterations=LATENCY_ITERATIONS,
        warmup=LATENCY_WARMUP,
        sync_each=True,
        what=f"one {n}-byte cuMemcpyPeerAsync at a time on GPU {src}'s stream, "
        f"peer access {'on' if on else 'off'}",
    )
    mm = session.check(bufs.dst[dst], dst, bufs.expected[src], n)
    params = session.params(
        src, dst, mover="ce", op="latency", peer_access=on, bidirectional=False, size_bytes=n
    )
    how = "peer access enabled" if on else "peer access disabled: staged through host memory"
    desc = f"latency of one {n}-byte copy GPU {src} -> GPU {dst}, {how}"
    return latency_result(f"peer_lat_ce_{'on' if on else 'off'}", params, timed, mm, desc, LATENCY_WARMUP)


def chase_ring(base: int, seed: int = 0x2C) -> tuple[Any, list[int]]:
    """The ring as 64-bit words (numpy) for a region at ``base``, and its slot order.

    Slot ``order[k]`` holds the address of slot ``order[k + 1]`` (cyclically), every slot
    :data:`CHASE_STRIDE` bytes apart.
    """
    import numpy as np

    order = np.random.default_rng(seed).permutation(CHASE_SLOTS)
    words = np.zeros(CHASE_SLOTS * CHASE_STRIDE // 8, dtype=np.uint64)
    step = CHASE_STRIDE // 8
    nxt = np.roll(order, -1)
    words[order * step] = np.uint64(base) + nxt.astype(np.uint64) * np.uint64(CHASE_STRIDE)
    return words, [int(x) for x in order]


def chase_end(base: int, order: list[int], hops: int) -> int:
    """The address a chase of ``hops`` from slot ``order[0]`` ends on."""
    return base + order[hops % len(order)] * CHASE_STRIDE


def sm_latency_case(session: Any, src: int, dst: int) -> BenchResult:
    """One SM load's round trip from GPU ``dst`` to GPU ``src``'s memory (peer access on), in us."""
    gs, gd = session.gpus[src], session.gpus[dst]
    gs.current()
    ring = memory.allocate(MemoryKind.DEVICE, CHASE_SLOTS * CHASE_STRIDE, alignment=64 * KiB, gpu=gs.ctx)
    cursor = None
    try:
        words, order = chase_ring(ring.ptr)
        ring.write(words)
        want = chase_end(ring.ptr, order, (CHASE_LAUNCHES + CHASE_WARMUP) * CHASE_HOPS)
        gd.current()
        cursor = memory.allocate(MemoryKind.DEVICE, 8, gpu=gd.ctx)
        cursor.write(chase_end(ring.ptr, order, 0).to_bytes(8, "little"))
        kernel = gd.module.function("peer_chase")
        args = [(cursor.ptr, ctypes.c_void_p), (CHASE_HOPS, ctypes.c_ulonglong)]
        timed = time_stream(
            gd.streams[0],
            lambda s: cuda.launch(kernel, 1, 1, args, s),
            iterations=CHASE_LAUNCHES,
            warmup=CHASE_WARMUP,
            sync_each=True,
            what=f"peer_chase on GPU {dst}: {CHASE_HOPS} dependent 8-byte loads per launch from GPU "
            f"{src}'s memory ({CHASE_SLOTS} slots {CHASE_STRIDE} B apart, random cycle), one launch "
            "at a time; value = launch time / hops",
        )
        end = int.from_bytes(cursor.read(8), "little")
    finally:
        if cursor is not None:
            gd.current()
            cursor.close()
        gs.current()
        ring.close()
    mismatch = None if end == want else 0
    params = session.params(
        src, dst, mover="sm", op="latency", peer_access=True, bidirectional=False, size_bytes=8
    )
    per_hop = Timed(tuple(t / CHASE_HOPS for t in timed.seconds), timed.method)
    desc = f"SM round trip: a load on GPU {dst} from GPU {src}'s memory, each waiting for the one before"
    row = latency_result(SM_LATENCY_KEY, params, per_hop, mismatch, desc, CHASE_WARMUP)
    if mismatch is not None:
        why = f"the chase ended at {end:#x}, not {want:#x}: a load returned a wrong address"
        row = dataclasses.replace(row, reason=why)
    return row
