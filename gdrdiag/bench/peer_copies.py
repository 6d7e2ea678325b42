"""peer-bench's bandwidth cases on one ordered pair: CE copies one way and both ways, SM reads and writes.

``ce_case``: ``cuMemcpyPeerAsync`` between the two primary contexts, peer access off (the driver stages
through host memory) or on. ``bidir_case``: both directions at once, one stream per GPU joined by
events, bytes counted both ways. ``sm_case``: ``native/peer.cu``'s ``peer_copy`` kernel on the
destination GPU reading the peer's memory through UVA, or on the source GPU writing into it, the
best of a few grid sizes. Each poisons the destination first and checks it byte for byte after.
"""

from __future__ import annotations

from typing import Any, Optional

from gdrdiag.bench.timing import Timed, gated_iterations, time_stream
from gdrdiag.hw import cuda
from gdrdiag.model.results import BenchResult

SM_THREADS = 512


def ce_case(session: Any, bufs: Any, src: int, dst: int, n: int, on: bool) -> BenchResult:
    """``n`` bytes from ``src`` into ``dst`` by the copy engine, peer access ``on`` or off (staged)."""
    opts = session.opts
    g = session.gpus[src]
    session.poison(bufs.dst[dst], dst, n)
    g.current()
    timed = time_stream(
        g.streams[0],
        session.copy_op(src, dst, bufs, n),
        iterations=gated_iterations(opts.iterations) if on else opts.iterations,
        warmup=opts.warmup,
        gate=g.gate if on else None,
        what=f"cuMemcpyPeerAsync on GPU {src}'s stream, peer access {'on' if on else 'off'}",
    )
    mm = session.check(bufs.dst[dst], dst, bufs.expected[src], n)
    params = session.params(
        src, dst, mover="ce", op="copy", peer_access=on, bidirectional=False, size_bytes=n
    )
    how = "peer access enabled" if on else "peer access disabled: staged through host memory"
    desc = f"copy engine GPU {src} -> GPU {dst}, {how}"
    return session.result(f"peer_ce_{'on' if on else 'off'}", params, timed, n, mm, desc)


def bidir_case(session: Any, bufs: Any, a: int, b: int, n: int, on: bool) -> BenchResult:
    """``n`` bytes each way between ``a`` and ``b`` at once, on one stream per GPU joined by events."""
    opts = session.opts
    ga, gb = session.gpus[a], session.gpus[b]
    session.poison(bufs.dst[b], b, n)
    session.poison(bufs.dst[a], a, n)
    ab, ba = session.copy_op(a, b, bufs, n), session.copy_op(b, a, bufs, n)
    gb.current()
    join = cuda.Event()
    ga.current()
    fork = cuda.Event()
    s_a, s_b = ga.streams[0], gb.streams[0]
    try:

        def both(stream: cuda.Stream) -> None:
            # Work for GPU b is issued with b's context current, then a's again.
            fork.record(stream)
            gb.current()
            s_b.wait(fork)
            ba(s_b)
            join.record(s_b)
            ga.current()
            ab(stream)
            stream.wait(join)

        timed = time_stream(
            s_a,
            both,
            iterations=gated_iterations(opts.iterations, 8) if on else opts.iterations,
            warmup=opts.warmup,
            gate=ga.gate if on else None,
            what=f"GPU {a} -> {b} on GPU {a}'s stream and {b} -> {a} on GPU {b}'s, fork/join events",
        )
    finally:
        ga.current()
        fork.close()
        gb.current()
        join.close()
    mm = session.check(bufs.dst[b], b, bufs.expected[a], n)
    if mm is None:
        mm = session.check(bufs.dst[a], a, bufs.expected[b], n)
    params = session.params(a, b, mover="ce", op="copy", peer_access=on, bidirectional=True, size_bytes=n)
    desc = f"copy engines both ways at once, GPU {a} <-> GPU {b}, peer access {'on' if on else 'off'}"
    return session.result(f"peer_ce_bidir_{'on' if on else 'off'}", params, timed, 2 * n, mm, desc)


def sm_case(session: Any, bufs: Any, key: str, src: int, dst: int, n: int) -> BenchResult:
    """The kernel on ``dst`` (read) or ``src`` (write), best of the grid sizes."""
    opts = session.opts
    runner = session.gpus[dst] if key == "peer_sm_read" else session.gpus[src]
    kernel = runner.module.function("peer_copy")
    d_buf, s_buf = bufs.dst[dst], bufs.src[src]
    words = n // 16
    best: Optional[tuple[Timed, int]] = None
    mismatch: Optional[int] = None
    for per_sm in opts.sm_blocks_per_sm:
        grid = max(1, min(runner.ctx.sm_count * per_sm, -(-words // SM_THREADS)))
        session.poison(d_buf, dst, n)
        runner.current()
        args = [(d_buf.ptr, cuda.c_void_p), (s_buf.ptr, cuda.c_void_p), (words, cuda.c_ulonglong)]
        timed = time_stream(
            runner.streams[0],
            lambda s, grid=grid, args=args: cuda.launch(kernel, grid, SM_THREADS, args, s),
            iterations=gated_iterations(opts.iterations),
            warmup=opts.warmup,
            gate=runner.gate,
            what=f"peer_copy kernel on GPU {runner.ordinal}, {grid} x {SM_THREADS} threads",
        )
        mm = session.check(d_buf, dst, bufs.expected[src], n)
        if mm is not None:
            mismatch = mm
            best = (timed, grid)
            break
        if best is None or timed.stats.median < best[0].stats.median:
            best = (timed, grid)
        if grid * SM_THREADS * 4 >= words:
            break  # a larger grid would leave threads without work
    assert best is not None
    timed, grid = best
    op = "read" if key == "peer_sm_read" else "write"
    params = session.params(
        src,
        dst,
        mover="sm",
        op=op,
        peer_access=True,
        bidirectional=False,
        size_bytes=n,
        grid=grid,
        threads=SM_THREADS,
    )
    who = (
        f"GPU {dst} reads GPU {src}'s memory" if op == "read" else f"GPU {src} writes into GPU {dst}'s memory"
    )
    desc = f"SM kernel: {who} through UVA (best of {len(opts.sm_blocks_per_sm)} grid sizes)"
    method = (
        f"{timed.method}; best median of grids of {', '.join(map(str, opts.sm_blocks_per_sm))} CTAs per SM"
    )
    return session.result(key, params, Timed(timed.seconds, method), n, mismatch, desc)
