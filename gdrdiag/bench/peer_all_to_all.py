"""peer-bench all-to-all and one-to-all: many GPU pairs' copy engines at once, peer access on.

``peer_all_to_all``: every GPU copies ``size`` bytes of its own memory into its own slice of a
buffer on every other GPU, every GPU at once, in the shifted steps of
:func:`gdrdiag.pathmodel.peer.all_to_all_schedule` (step k: GPU i into GPU i+k): one
``cuMemcpyPeerAsync`` per ordered pair, a GPU's copies queued in step order on one stream of its
own (the source's context current), so each GPU sends one copy at a time and no destination takes
two at once. Issued all at once instead (a stream per copy), the copies' order is the driver's and
sources collide at destinations: on 4 x H200 behind NVSwitch that reached half the links' rate,
varying x1.7 between samples (the path model's docstring and docs/benchmarks.md).
``peer_one_to_all``: one GPU's copies into every other GPU at once, each on a stream of its own.
The first GPU's (all to all) or the source's (one to all) stream is the hub: it records a fork event
that every copy stream waits for, and waits for each stream's join event (CUDA events; queued behind
the hub's spin gate, so the copies start together and host enqueue cost is excluded). A sample is
the time from the common fork to the last join; the value is every copy's bytes over it. Every
destination slice is poisoned first and checked byte for byte after.

The expectations are :func:`gdrdiag.pathmodel.peer.expect_all_to_all` (the steps' times, each step
as long as its slowest pair's copy) and :func:`gdrdiag.pathmodel.peer.expect_one_to_all` (the
source's egress). With two GPUs all-to-all is that pair both ways at once and one-to-all is the
pair's copy; the cases are for machines with more GPUs (the descriptions say so).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

from gdrdiag.bench.runner import run_case
from gdrdiag.bench.timing import Timed, gated_iterations, time_stream
from gdrdiag.errors import NotSupported
from gdrdiag.hw import cuda, memory
from gdrdiag.hw import peer as hw_peer
from gdrdiag.hw.memory import Buffer, MemoryKind
from gdrdiag.model.params import PeerParams
from gdrdiag.model.results import BenchResult
from gdrdiag.pathmodel.peer import (
    Expectation,
    all_to_all_schedule,
    expect_all_to_all,
    expect_one_to_all,
    paths_text,
)
from gdrdiag.units import KiB

ALL_TO_ALL_KEY = "peer_all_to_all"
ONE_TO_ALL_KEY = "peer_one_to_all"
_SEED = 0x47


@dataclass(frozen=True)
class Pattern:
    """Which copies run at once: ``copies`` ordered (src, dst) pairs; ``hub`` owns the fork and the gate.

    ``queued_per_source``: a source's copies go on one stream, in ``copies``' order (one at a time
    per GPU); otherwise every copy has a stream of its own.
    """

    key: str
    copies: tuple[tuple[int, int], ...]
    hub: int
    queued_per_source: bool = False

    def stream_of(self, src: int, dst: int) -> tuple[int, int]:
        """The stream a copy goes on, named by (source GPU, destination GPU or the source again)."""
        return (src, src) if self.queued_per_source else (src, dst)

    @property
    def streams(self) -> list[tuple[int, int]]:
        """Every stream the pattern needs, in the order its copies first use them."""
        return list(dict.fromkeys(self.stream_of(s, d) for s, d in self.copies))

    @property
    def sources(self) -> list[int]:
        return sorted({s for s, _ in self.copies})

    @property
    def destinations(self) -> list[int]:
        return sorted({d for _, d in self.copies})

    def slot(self, src: int, dst: int) -> int:
        """Where ``src``'s bytes land in ``dst``'s buffer, in copies of ``size``."""
        return [s for s, d in self.copies if d == dst].index(src)

    def slots(self, dst: int) -> int:
        return sum(1 for _, d in self.copies if d == dst)


def all_to_all_pattern(gpus: list[int]) -> Pattern:
    """Every ordered pair of ``gpus`` in shifted-step order, queued per source; the lowest is the hub."""
    steps = all_to_all_schedule(sorted(gpus))
    copies = tuple(c for step in steps for c in step)
    return Pattern(ALL_TO_ALL_KEY, copies, sorted(gpus)[0], queued_per_source=True)


def one_to_all_pattern(src: int, gpus: list[int]) -> Pattern:
    """``src`` into every other GPU of ``gpus``; the source is the hub."""
    return Pattern(ONE_TO_ALL_KEY, tuple((src, d) for d in gpus if d != src), src)


@dataclass
class _Buffers:
    """A source buffer per source GPU (its payload in ``expected``), a slotted buffer per destination."""

    src: dict[int, Buffer] = field(default_factory=dict)
    dst: dict[int, Buffer] = field(default_factory=dict)
    expected: dict[int, Any] = field(default_factory=dict)


def enable_pairs(session: Any, copies: tuple[tuple[int, int], ...]) -> None:
    """Peer access for every copy, both ways; NotSupported naming a pair the driver offers none."""
    both = sorted({(a, b) for s, d in copies for a, b in ((s, d), (d, s))})
    for a, b in both:
        if not hw_peer.can_access_peer(a, b):
            raise NotSupported(
                f"cuDeviceCanAccessPeer({a}, {b}) is 0: the driver offers no peer access between "
                "these GPUs (P2P not supported on this path or refused in this VM)"
            )
    for a, b in both:
        hw_peer.set_peer_access(session.gpus[a].ctx, session.gpus[b].ctx, True)


def _allocate(session: Any, pat: Pattern, size: int) -> _Buffers:
    bufs = _Buffers()
    try:
        for k, s in enumerate(pat.sources):
            g = session.gpus[s]
            g.current()
            memory.check_fits(size + 64 * KiB, 0, g.ctx)
            bufs.src[s] = memory.allocate(MemoryKind.DEVICE, size, alignment=64 * KiB, gpu=g.ctx)
            bufs.expected[s] = memory.pattern(size, seed=_SEED + k)
            bufs.src[s].write(bufs.expected[s])
        for d in pat.destinations:
            g = session.gpus[d]
            g.current()
            n = pat.slots(d) * size
            memory.check_fits(n + 64 * KiB, 0, g.ctx)
            bufs.dst[d] = memory.allocate(MemoryKind.DEVICE, n, alignment=64 * KiB, gpu=g.ctx)
    except BaseException:
        _free(session, bufs)
        raise
    return bufs


def _free(session: Any, bufs: _Buffers) -> None:
    for owned in (bufs.src, bufs.dst):
        for o in list(owned):
            session.gpus[o].current()
            owned.pop(o).close()


def many_results(session: Any, pat: Pattern) -> list[BenchResult]:
    """One row per size: every copy of ``pat`` at once."""
    enable_pairs(session, pat.copies)
    sizes = session.opts.sizes
    bufs = _allocate(session, pat, max(sizes))
    streams: dict[tuple[int, int], cuda.Stream] = {}
    out: list[BenchResult] = []
    try:
        for s, d in pat.streams:  # on the source GPU: a stream per copy, or per source (queued in order)
            session.gpus[s].current()
            streams[(s, d)] = cuda.Stream()
        for n in sizes:
            out.extend(
                run_case(
                    pat.key,
                    functools.partial(_one_size, session, pat, bufs, streams, n),
                    params=pattern_params(session, pat, n),
                    provider="cuda",
                )
            )
    finally:
        for (s, _), st in streams.items():
            session.gpus[s].current()
            st.close()
        _free(session, bufs)
    return out


def pattern_params(session: Any, pat: Pattern, n: int) -> PeerParams:
    """The row's params: all-to-all counts its GPUs; one-to-all names its source and counts the rest."""
    dsts = pat.destinations
    if pat.key == ALL_TO_ALL_KEY:
        src, dst, op = None, None, "all_to_all"
        sources, destinations = len(pat.sources), None
    else:
        src, dst, op = pat.hub, (dsts[0] if len(dsts) == 1 else None), "one_to_all"
        sources, destinations = None, len(dsts)
    return PeerParams(
        src_gpu=src,
        dst_gpu=dst,
        mover="ce",
        op=op,
        peer_access=True,
        bidirectional=False,
        size_bytes=n,
        sources=sources,
        destinations=destinations,
        path=paths_text(session.machine, pat.copies),
    )


def _one_size(
    session: Any, pat: Pattern, bufs: _Buffers, streams: dict[tuple[int, int], cuda.Stream], n: int
) -> BenchResult:
    hub = session.gpus[pat.hub]
    for d, buf in bufs.dst.items():
        session.poison(buf, d, n * pat.slots(d))
    hub.current()
    fork = cuda.Event()
    joins: dict[tuple[int, int], cuda.Event] = {}
    try:
        for s, d in pat.streams:
            session.gpus[s].current()
            joins[(s, d)] = cuda.Event()  # recorded on that stream: made in its source's context

        def all_at_once(stream: cuda.Stream) -> None:
            fork.record(stream)
            for s, d in pat.streams:
                session.gpus[s].current()
                streams[(s, d)].wait(fork)
            for s, d in pat.copies:
                gs, gd = session.gpus[s], session.gpus[d]
                gs.current()
                st = streams[pat.stream_of(s, d)]
                cuda.call(
                    cuda.driver().cuMemcpyPeerAsync,
                    bufs.dst[d].ptr + pat.slot(s, d) * n,
                    gd.ctx.handle,
                    bufs.src[s].ptr,
                    gs.ctx.handle,
                    n,
                    st.handle,
                )
            for key, ev in joins.items():
                session.gpus[key[0]].current()
                ev.record(streams[key])
            hub.current()
            for ev in joins.values():
                stream.wait(ev)

        hub.current()  # the timing events and the gate belong to the hub's stream
        timed = time_stream(
            hub.streams[0],
            all_at_once,
            iterations=gated_iterations(session.opts.iterations, 4 + len(pat.copies)),
            warmup=session.opts.warmup,
            gate=hub.gate,
            what=f"{len(pat.copies)} cuMemcpyPeerAsync ({_who(pat)}), "
            + (
                "each GPU's copies in step order on one stream of its own"
                if pat.queued_per_source
                else "a stream per copy on its source GPU"
            )
            + f", fork/join events on GPU {pat.hub}'s stream",
        )
    finally:
        for (s, _), ev in joins.items():
            session.gpus[s].current()
            ev.close()
        hub.current()
        fork.close()
    return pattern_row(session, pat, n, timed, _check(session, pat, bufs, n))


def _check(session: Any, pat: Pattern, bufs: _Buffers, n: int) -> Optional[int]:
    """The first wrong byte over the destinations' buffers, each read whole (None: all match)."""
    for d in pat.destinations:
        session.gpus[d].current()
        got = bufs.dst[d].read_array(n * pat.slots(d))
        for s in [s for s, dd in pat.copies if dd == d]:
            k = pat.slot(s, d)
            mm = memory.first_mismatch(got[k * n : (k + 1) * n], bufs.expected[s][:n])
            if mm is not None:
                return k * n + mm
    return None


def _who(pat: Pattern) -> str:
    if pat.key == ALL_TO_ALL_KEY:
        n = len(pat.sources)
        return f"every ordered pair of GPUs {', '.join(map(str, pat.sources))}, in {n - 1} shifted step(s)"
    return f"GPU {pat.hub} into GPU(s) {', '.join(map(str, pat.destinations))}"


def pattern_expectation(session: Any, pat: Pattern) -> Expectation:
    """The path model's node-wide figure for ``pat`` (pathmodel/peer.py)."""
    if pat.key == ALL_TO_ALL_KEY:
        return expect_all_to_all(session.machine, pat.sources)
    return expect_one_to_all(session.machine, pat.hub, pat.destinations)


def pattern_row(session: Any, pat: Pattern, n: int, timed: Timed, mismatch: Optional[int]) -> BenchResult:
    """The row of one size: every copy's bytes over the time from the fork to the last join."""
    params = pattern_params(session, pat, n)
    if pat.key == ALL_TO_ALL_KEY:
        k = len(pat.sources)
        lone = (
            ": on two GPUs this is the pair both ways at once; the case is for machines with more GPUs"
            if k == 2
            else ""
        )
        desc = (
            f"all to all: each of {k} GPUs' copy engine into every other GPU, every GPU at once in {k - 1} "
            f"shifted step(s) (step j: GPU i into GPU i+j), one copy at a time per GPU, peer access on{lone}"
        )
    else:
        k = len(pat.destinations)
        lone = (
            ": one destination, so this is that pair's copy; the case is for machines with more GPUs"
            if k == 1
            else ""
        )
        desc = f"one to all: GPU {pat.hub}'s copy engines into {k} other GPU(s) at once, peer access on{lone}"
    exp = pattern_expectation(session, pat)
    return session.result(pat.key, params, timed, n * len(pat.copies), mismatch, desc, expectation=exp)


def all_to_all_run(
    session: Any, pairs: tuple[tuple[int, int], ...], ordinals: tuple[int, ...], step: Callable[[str], None]
) -> list[BenchResult]:
    """Every GPU into every other at once: one step for the whole run (not one per pair)."""
    step(ALL_TO_ALL_KEY)
    return run_case(
        ALL_TO_ALL_KEY,
        lambda: many_results(session, all_to_all_pattern(list(ordinals))),
        provider="cuda",
        params=PeerParams(op="all_to_all", sources=len(ordinals)),
    )


def one_to_all_run(
    session: Any, pairs: tuple[tuple[int, int], ...], ordinals: tuple[int, ...], step: Callable[[str], None]
) -> list[BenchResult]:
    """One GPU into every other at once, a step per selected source."""
    out: list[BenchResult] = []
    for s in sorted({s for s, _ in pairs}):
        step(ONE_TO_ALL_KEY)
        out.extend(
            run_case(
                ONE_TO_ALL_KEY,
                functools.partial(many_results, session, one_to_all_pattern(s, list(ordinals))),
                provider="cuda",
                params=PeerParams(src_gpu=s, op="one_to_all", destinations=len(ordinals) - 1),
            )
        )
    return out
