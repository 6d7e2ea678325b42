"""The RDMA WRITE loop, written once against the provider interface (pyverbs or soft).

Like ``ib_write_bw``: each lane (one requester QP) keeps up to ``tx_depth`` WRs outstanding,
posting prepared lists of ``post_list`` WRs; only every ``signal_every``-th list is signalled
(selective signalling), and one completion retires every WR posted before it on that QP. The
clock runs from the first post to the last completion. Iterations are counted per QP, as
perftest's ``-n`` does; ``duration`` replaces them with a deadline.

No wait is unbounded: if no completion arrives for ``timeout_s`` the loop stops with a
:class:`LoopTimeout` that says how many WRs were outstanding.

Where the provider's CQ can run whole loops itself (the native provider: ``cq.run_bw`` /
``cq.run_latency``, in C), these functions hand the run over after the same argument checks
and convert the result, so callers do not care which loop ran.
"""

from __future__ import annotations

import collections
import contextlib
import time
from dataclasses import dataclass, field
from typing import Callable, Iterator, Optional, Sequence

from gdrdiag.errors import GdrdiagError, UserInputError
from gdrdiag.hw import verbs as v


class LoopTimeout(GdrdiagError):
    """No completion arrived within the timeout (peer gone, link down, or a lost completion)."""


@dataclass
class Lane:
    """One requester QP and the post lists it cycles through.

    ``plain[k]`` and ``signaled[k]`` hold the same WRs; in ``signaled[k]`` the last one is
    signalled and its ``wr_id`` is the lane index, so a completion finds its lane.
    """

    qp: v.QP
    plain: list
    signaled: list
    index: int = 0
    posted_lists: int = 0
    outstanding: int = 0
    since_signal: int = 0
    since_bytes: int = 0
    completed: int = 0
    completed_bytes: int = 0
    pending: collections.deque = field(default_factory=collections.deque)
    done_posting: bool = False

    def reset(self) -> None:
        """Zero the counters before a run."""
        self.posted_lists = self.outstanding = self.since_signal = self.since_bytes = 0
        self.completed = self.completed_bytes = 0
        self.pending.clear()
        self.done_posting = False


@dataclass(frozen=True)
class LoopOutcome:
    """What one measured run did; ``native`` holds the C loop's per-WR split when it ran."""

    messages: int
    bytes: int
    seconds: float
    cpu_seconds: float
    posts: int
    native: Optional[dict] = None

    @property
    def gbps(self) -> float:
        """Gb/s."""
        return self.bytes * 8 / self.seconds / 1e9 if self.seconds > 0 else 0.0

    @property
    def msgs_per_s(self) -> float:
        """Messages per second."""
        return self.messages / self.seconds if self.seconds > 0 else 0.0


def build_lanes(qps: Sequence[v.QP], wr_lists: Sequence[Sequence[v.WriteWR]]) -> list[Lane]:
    """One lane per QP, each with one post list (prepared unsignalled and last-signalled)."""
    lanes = []
    for i, (qp, wrs) in enumerate(zip(qps, wr_lists, strict=True)):
        plain = [_with(w, wr_id=i, signaled=False) for w in wrs]
        sig = plain[:-1] + [_with(wrs[-1], wr_id=i, signaled=True)]
        lanes.append(Lane(qp=qp, plain=[qp.prepare(plain)], signaled=[qp.prepare(sig)], index=i))
    return lanes


def _with(w: v.WriteWR, **kw) -> v.WriteWR:
    d = dict(
        wr_id=w.wr_id,
        local_addr=w.local_addr,
        length=w.length,
        lkey=w.lkey,
        remote_addr=w.remote_addr,
        rkey=w.rkey,
        signaled=w.signaled,
        imm=w.imm,
    )
    d.update(kw)
    return v.WriteWR(**d)


def run_bw(
    lanes: Sequence[Lane],
    cq: v.CQ,
    *,
    tx_depth: int,
    signal_every: int,
    lists_total: Optional[int] = None,
    duration: Optional[float] = None,
    timeout_s: float = 10.0,
    recv: Optional[tuple[v.CQ, Sequence[v.QP], v.MR]] = None,
    tick: Optional[Callable[[], None]] = None,
) -> LoopOutcome:
    """Post ``lists_total`` lists per lane (cycling through its lists), or until ``duration`` s.

    ``recv`` = (responder CQ, responder QPs, an MR) replenishes receives consumed by
    WRITE_WITH_IMM. ``tick`` is called once per polling round (progress, tests).
    """
    sizes, by_index = _checked_lanes(lanes, tx_depth, signal_every, lists_total, duration)
    native_run = getattr(cq, "run_bw", None)
    if native_run is not None:  # the provider runs whole loops in C (verbs_native)
        with _native_timeouts():
            res = native_run(
                lanes,
                tx_depth=tx_depth,
                signal_every=signal_every,
                lists_total=lists_total,
                duration=duration,
                timeout_s=timeout_s,
                recv=recv,
            )
        if tick is not None:
            tick()
        return _from_native(res)
    perf = time.perf_counter
    cpu0 = time.process_time()
    t0 = perf()
    deadline = t0 + duration if duration is not None else None
    last_progress = t0
    posts = 0
    active = list(lanes)
    while active:
        for lane in active:
            if not lane.done_posting:
                posts += _post_lane(
                    lane, sizes[lane.index], tx_depth, signal_every, lists_total, deadline, perf
                )
        wcs = cq.poll(64)
        if wcs:
            last_progress = perf()
            _retire(wcs, by_index)
        elif perf() - last_progress > timeout_s:
            outstanding = sum(lane.outstanding for lane in lanes)
            raise LoopTimeout(
                f"no RDMA completion for {timeout_s:g} s with {outstanding} WRs outstanding "
                f"(peer gone, link down, wrong GID/QP number, or a device slower than --timeout allows)"
            )
        if recv is not None:
            _replenish(*recv)
        if tick is not None:
            tick()
        active = [lane for lane in active if not (lane.done_posting and lane.outstanding == 0)]
    return LoopOutcome(
        messages=sum(lane.completed for lane in lanes),
        bytes=sum(lane.completed_bytes for lane in lanes),
        seconds=perf() - t0,
        cpu_seconds=time.process_time() - cpu0,
        posts=posts,
    )


def _checked_lanes(
    lanes: Sequence[Lane],
    tx_depth: int,
    signal_every: int,
    lists_total: Optional[int],
    duration: Optional[float],
) -> tuple[dict, dict]:
    """Refuse impossible loops; reset the lanes; ({lane: (WRs per list, bytes per list)}, {index: lane})."""
    if (lists_total is None) == (duration is None):
        raise UserInputError("give either iterations (-n) or a duration (-D), not both")
    if lists_total is not None and lists_total < 1:
        raise UserInputError("nothing to post")
    if signal_every < 1:
        raise UserInputError("signal_every must be >= 1")
    by_index = {lane.index: lane for lane in lanes}
    if len(by_index) != len(lanes):
        raise UserInputError("lanes need distinct indexes")
    sizes = {}
    for lane in lanes:
        lane.reset()
        lens = [len(p) for p in lane.plain]
        if max(lens) > tx_depth:
            raise UserInputError(f"a post list of {max(lens)} WRs does not fit the TX depth {tx_depth}")
        sizes[lane.index] = (lens, [sum(w.length for w in p.wrs) for p in lane.plain])
    return sizes, by_index


def _post_lane(
    lane: Lane,
    size: tuple[list[int], list[int]],
    tx_depth: int,
    signal_every: int,
    lists_total: Optional[int],
    deadline: Optional[float],
    perf: Callable[[], float],
) -> int:
    """Post this lane's next lists while they fit the TX depth; returns the ibv_post_send calls made.

    A list is signalled every ``signal_every`` lists and at the end.
    """
    lens, nbytes = size
    nlists = len(lens)
    posts = 0
    while True:
        k = lane.posted_lists % nlists
        if lane.outstanding + lens[k] > tx_depth:
            return posts
        n = lane.posted_lists + 1
        last = n >= lists_total if lists_total is not None else perf() >= deadline  # type: ignore[operator]
        signaled = last or n % signal_every == 0
        lane.qp.post(lane.signaled[k] if signaled else lane.plain[k])
        posts += 1
        lane.posted_lists = n
        lane.outstanding += lens[k]
        lane.since_signal += lens[k]
        lane.since_bytes += nbytes[k]
        if signaled:
            lane.pending.append((lane.since_signal, lane.since_bytes))
            lane.since_signal = lane.since_bytes = 0
        if last:
            lane.done_posting = True
            return posts


def _retire(wcs: Sequence[v.Completion], by_index: dict) -> None:
    """Account each signalled completion to its lane; an error completion ends the run."""
    for wc in wcs:
        if not wc.ok:
            raise v.CompletionError(wc)
        lane = by_index[wc.wr_id]
        n, b = lane.pending.popleft()
        lane.outstanding -= n
        lane.completed += n
        lane.completed_bytes += b


@contextlib.contextmanager
def _native_timeouts() -> Iterator[None]:
    """The C loop's timeout raised as this module's LoopTimeout, like the Python loop's."""
    from gdrdiag.hw.verbs_native_lib import LoopTimeout as NativeTimeout

    try:
        yield
    except NativeTimeout as exc:
        raise LoopTimeout(str(exc)) from None


def _from_native(res) -> LoopOutcome:
    """A native provider's run result as a LoopOutcome (the C loop's per-WR split kept)."""
    split = {k: val for k, val in res.per_wr_ns().items() if val is not None}
    return LoopOutcome(
        messages=res.messages,
        bytes=res.bytes,
        seconds=res.seconds,
        cpu_seconds=res.cpu_seconds,
        posts=res.posts,
        native=split or {},
    )


def _replenish(cq: v.CQ, qps: Sequence[v.QP], mr: v.MR) -> None:
    """Re-post one receive for each WRITE_WITH_IMM the responder consumed."""
    by_qpn = {qp.qp_num: qp for qp in qps}
    while True:
        wcs = cq.poll(64)
        if not wcs:
            return
        for wc in wcs:
            if not wc.ok:
                raise v.CompletionError(wc, "receive of WRITE_WITH_IMM")
            by_qpn[wc.qp_num].post_recv(1, mr)


def run_latency(
    qp: v.QP,
    cq: v.CQ,
    wr: v.WriteWR,
    *,
    iterations: int,
    timeout_s: float = 10.0,
    tick: Optional[Callable[[], None]] = None,
) -> tuple[list[float], LoopOutcome]:
    """One signalled WRITE at a time; each sample is post -> its completion polled (seconds)."""
    prepared = qp.prepare([_with(wr, wr_id=0, signaled=True)])
    native_run = getattr(cq, "run_latency", None)
    if native_run is not None:
        with _native_timeouts():
            res = native_run(qp, prepared, iterations=iterations, timeout_s=timeout_s)
        if tick is not None:
            tick()
        return list(res.latencies), _from_native(res)
    perf = time.perf_counter
    samples = []
    cpu0 = time.process_time()
    t0 = perf()
    for _ in range(iterations):
        start = perf()
        qp.post(prepared)
        while True:
            wcs = cq.poll(1)
            if wcs:
                break
            if perf() - start > timeout_s:
                raise LoopTimeout(
                    f"no RDMA completion for {timeout_s:g} s (peer gone, link down, or a device slower "
                    f"than --timeout allows)"
                )
        end = perf()
        if not wcs[0].ok:
            raise v.CompletionError(wcs[0])
        samples.append(end - start)
        if tick is not None:
            tick()
    seconds = perf() - t0
    out = LoopOutcome(
        messages=iterations,
        bytes=iterations * wr.length,
        seconds=seconds,
        cpu_seconds=time.process_time() - cpu0,
        posts=iterations,
    )
    return samples, out
