"""peer-bench latency cases: one small copy-engine peer copy at a time, peer access off and on.

``peer_lat_ce_off`` / ``peer_lat_ce_on``: ``cuMemcpyPeerAsync`` of ``LATENCY_BYTES`` from ``src``'s
memory into ``dst``'s, each copy between its own pair of CUDA events and waited for before the next
is queued (nothing overlaps, so each sample is one copy's time on the GPU, without the host's
enqueue). The value is the median per-copy latency in microseconds over ``LATENCY_ITERATIONS``
samples. The destination is poisoned first and its bytes checked after the last copy. Off, the
driver stages the copy through host memory; on, the copy engine writes the peer directly. These
rows are latencies, not bandwidths: the path model does not judge them.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Optional

from gdrdiag.bench.timing import Timed, time_stream
from gdrdiag.model.params import PeerMetrics, PeerParams, RunSettings
from gdrdiag.model.results import BenchResult, SampleStats, Status

LATENCY_KEYS = ("peer_lat_ce_off", "peer_lat_ce_on")
LATENCY_BYTES = 4  # one 32-bit word, as a flag or a small message would be
LATENCY_ITERATIONS = 200
LATENCY_WARMUP = 10


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
