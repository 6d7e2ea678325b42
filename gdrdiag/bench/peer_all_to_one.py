"""peer-bench all-to-one: every other GPU's copy engine writes into one GPU at once, peer access on.

``peer_all_to_one``: for a destination GPU ``d``, each other visible GPU ``s`` copies ``size`` bytes
of its own memory into its own slice of a buffer on ``d`` (``cuMemcpyPeerAsync`` on ``s``'s stream,
``s``'s context current), all at once: ``d``'s stream records a fork event that every source
stream waits for, and waits for each source's join event (CUDA events; queued behind ``d``'s spin
gate, so the copies start together and host enqueue cost is excluded). The value is every source's
bytes over the time. Every slice is poisoned first and checked byte for byte after.

The expectation is the destination's ingress (:func:`gdrdiag.pathmodel.peer.expect_all_to_one`): the
sum of the sources' pair paths, capped by the destination's active NVLinks or its PCIe link. With
two GPUs there is one source, so the row is that pair's copy under another name; the case is there
for machines with more GPUs (the description and ``sources`` say so).
"""

from __future__ import annotations

import dataclasses
from typing import Any, Optional

from gdrdiag.bench.runner import run_case
from gdrdiag.bench.timing import Timed, gated_iterations, time_stream
from gdrdiag.errors import NotSupported
from gdrdiag.hw import cuda, memory
from gdrdiag.hw import peer as hw_peer
from gdrdiag.hw.memory import Buffer, MemoryKind
from gdrdiag.model.results import BenchResult
from gdrdiag.pathmodel.peer import expect_all_to_one, paths_text
from gdrdiag.units import KiB

ALL_TO_ONE_KEY = "peer_all_to_one"
_SEED = 0x71


def enable_all(session: Any, dst: int, sources: list[int]) -> None:
    """Peer access between ``dst`` and every source, both ways; NotSupported naming a pair that has none."""
    for s in sources:
        for a, b in ((s, dst), (dst, s)):
            if not hw_peer.can_access_peer(a, b):
                raise NotSupported(
                    f"cuDeviceCanAccessPeer({a}, {b}) is 0: the driver offers no peer access between "
                    "these GPUs (P2P not supported on this path or refused in this VM)"
                )
    for s in sources:
        hw_peer.set_peer_access(session.gpus[s].ctx, session.gpus[dst].ctx, True)
        hw_peer.set_peer_access(session.gpus[dst].ctx, session.gpus[s].ctx, True)


def _allocate(session: Any, dst: int, sources: list[int], size: int) -> tuple[dict, Buffer, dict]:
    srcs: dict[int, Buffer] = {}
    expected: dict[int, Any] = {}
    d_buf: Optional[Buffer] = None
    try:
        for k, s in enumerate(sources):
            g = session.gpus[s]
            g.current()
            memory.check_fits(size + 64 * KiB, 0, g.ctx)
            srcs[s] = memory.allocate(MemoryKind.DEVICE, size, alignment=64 * KiB, gpu=g.ctx)
            expected[s] = memory.pattern(size, seed=_SEED + k)
            srcs[s].write(expected[s])
        gd = session.gpus[dst]
        gd.current()
        memory.check_fits(len(sources) * size + 64 * KiB, 0, gd.ctx)
        d_buf = memory.allocate(MemoryKind.DEVICE, len(sources) * size, alignment=64 * KiB, gpu=gd.ctx)
    except BaseException:
        _free(session, dst, srcs, d_buf)
        raise
    return srcs, d_buf, expected


def _free(session: Any, dst: int, srcs: dict, d_buf: Optional[Buffer]) -> None:
    for s, buf in srcs.items():
        session.gpus[s].current()
        buf.close()
    if d_buf is not None:
        session.gpus[dst].current()
        d_buf.close()


def all_to_one_results(session: Any, dst: int, sources: list[int]) -> list[BenchResult]:
    """One row per size: every source into ``dst`` at once."""
    enable_all(session, dst, sources)
    sizes = session.opts.sizes
    srcs, d_buf, expected = _allocate(session, dst, sources, max(sizes))
    out: list[BenchResult] = []
    try:
        for n in sizes:
            params = _params(session, dst, sources, n)
            out.extend(
                run_case(
                    ALL_TO_ONE_KEY,
                    lambda n=n: _one_size(session, dst, sources, srcs, d_buf, expected, n),
                    params=params,
                    provider="cuda",
                )
            )
    finally:
        _free(session, dst, srcs, d_buf)
    return out


def _params(session: Any, dst: int, sources: list[int], n: int) -> Any:
    """The row's params: the lone source where there is one, the sources' paths (``NV18``, ``NV18/SYS``)."""
    lone = sources[0] if len(sources) == 1 else None
    p = session.params(
        lone, dst, mover="ce", op="all_to_one", peer_access=True, bidirectional=False, size_bytes=n
    )
    path = paths_text(session.machine, [(s, dst) for s in sources])
    return dataclasses.replace(p, sources=len(sources), path=path)


def _one_size(
    session: Any, dst: int, sources: list[int], srcs: dict, d_buf: Buffer, expected: dict, n: int
) -> BenchResult:
    opts = session.opts
    gd = session.gpus[dst]
    session.poison(d_buf, dst, n * len(sources))
    gd.current()
    fork = cuda.Event()
    joins: dict[int, cuda.Event] = {}
    try:
        for s in sources:
            session.gpus[s].current()
            joins[s] = cuda.Event()  # recorded on that source's stream: made in its context
        gd.current()  # the timing events and the gate belong to the destination's stream

        def all_at_once(stream: cuda.Stream) -> None:
            fork.record(stream)
            for k, s in enumerate(sources):
                gs = session.gpus[s]
                gs.current()
                st = gs.streams[0]
                st.wait(fork)
                cuda.call(
                    cuda.driver().cuMemcpyPeerAsync,
                    d_buf.ptr + k * n,
                    gd.ctx.handle,
                    srcs[s].ptr,
                    gs.ctx.handle,
                    n,
                    st.handle,
                )
                joins[s].record(st)
            gd.current()
            for s in sources:
                stream.wait(joins[s])

        timed = time_stream(
            gd.streams[0],
            all_at_once,
            iterations=gated_iterations(opts.iterations, 4 + 3 * len(sources)),
            warmup=opts.warmup,
            gate=gd.gate,
            what=f"cuMemcpyPeerAsync from GPU(s) {', '.join(map(str, sources))} into GPU {dst} at once, "
            "one stream per source, fork/join events on the destination's stream",
        )
    finally:
        for s, ev in joins.items():
            session.gpus[s].current()
            ev.close()
        gd.current()
        fork.close()
    mismatch = None
    for k, s in enumerate(sources):
        gd.current()
        got = d_buf.read_array(n, offset=k * n)
        mm = memory.first_mismatch(got, expected[s][:n])
        if mm is not None:
            mismatch = k * n + mm
            break
    return all_to_one_row(session, dst, sources, n, timed, mismatch)


def all_to_one_row(
    session: Any, dst: int, sources: list[int], n: int, timed: Timed, mismatch: Optional[int]
) -> BenchResult:
    """The row of one size: every source's bytes over the time, against the destination's ingress."""
    params = _params(session, dst, sources, n)
    exp = expect_all_to_one(session.machine, dst, sources)
    who = (
        f"one source (GPU {sources[0]}): on two GPUs this is that pair's copy; the case is for "
        "machines with more GPUs"
        if len(sources) == 1
        else f"{len(sources)} sources (GPUs {', '.join(map(str, sources))})"
    )
    desc = f"all to one: every other GPU's copy engine into GPU {dst} at once, peer access on; {who}"
    return session.result(ALL_TO_ONE_KEY, params, timed, n * len(sources), mismatch, desc, expectation=exp)
