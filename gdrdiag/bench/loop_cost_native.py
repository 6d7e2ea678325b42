"""The C loop's own cost (``mr_loop_cost_native``), beside the Python loop's ``mr_loop_cost``.

``mr_loop_cost`` runs the Python loop over the soft provider in no-copy mode. This runs the
same loop rules in C (``native/verbs_loop.c``) over its *null provider*: every signalled WR
completes the moment it is posted, no device, no bytes. What is left is the loop's book-keeping
plus walking each WR chain as a driver would, i.e. the floor the tool itself adds per WR. It
is not a NIC number: on hardware ``ibv_post_send`` adds the driver's WQE build and doorbell
(see ``--time-calls`` on a real device for that split).

Results carry ``provider = "native-null"`` and say so in words. Where the C library is not
built, one WAIVED result carries the build's reason.
"""

from __future__ import annotations

from typing import Callable, Optional, Sequence

from gdrdiag.bench import rdma_math
from gdrdiag.bench.mr_loop_cost import LOOP_COST_POST_LISTS, warmup_seconds
from gdrdiag.bench.mr_loop_cost import planned_seconds as planned_python
from gdrdiag.bench.runner import note_partial
from gdrdiag.errors import NotSupported
from gdrdiag.model.params import MrMetrics, MrParams, RunSettings
from gdrdiag.model.results import BenchResult, SampleStats, Status

KEY = "mr_loop_cost_native"
NULL_NOTE = (
    "C loop over the null provider (no RDMA device, no bytes moved): the loop's own cost, "
    "NOT a hardware number"
)


def split_seconds(duration: float) -> float:
    """The extra run with every call timed (its split is reported apart from the rate)."""
    return min(duration, 0.5)


def planned_seconds(
    *,
    duration: float = 1.0,
    tx_depth: int = 128,
    repeats: int = 3,
    post_lists: Sequence[int] = LOOP_COST_POST_LISTS,
) -> tuple[float, ...]:
    """Seconds each progress step of :func:`native_loop_cost` is planned to take; none without the library.

    Without the C library the whole bench is one WAIVED result and reports no step, so planning
    its steps made the ETA count seconds that never come.
    """
    from gdrdiag.hw import verbs_native

    try:
        verbs_native.lib()
    except NotSupported:
        return ()
    # the Python loop's plan per post list, plus the C loop's extra timed-calls run
    python_plan = planned_python(duration=duration, tx_depth=tx_depth, repeats=repeats, post_lists=post_lists)
    return tuple(step + split_seconds(duration) for step in python_plan)


def native_loop_cost(
    *,
    duration: float = 1.0,
    tx_depth: int = 128,
    size: int = 64,
    repeats: int = 3,
    post_lists: Sequence[int] = LOOP_COST_POST_LISTS,
    link_gbps: float = 400.0,
    progress: Optional[Callable[[str], None]] = None,
) -> list[BenchResult]:
    """WRs per second the C loop sustains per post-list length (one lane), with the per-WR split."""
    from gdrdiag.hw import verbs_native

    try:
        verbs_native.lib()
    except NotSupported as exc:
        return [BenchResult.waived(KEY, exc.reason, description="the C loop's own cost")]
    results = []
    for pl in post_lists:
        if pl > tx_depth:
            continue
        if progress:
            progress(f"{KEY} post list {pl}")
        se = rdma_math.signal_interval(tx_depth, pl, None)
        kw = dict(post_list=pl, size=size, tx_depth=tx_depth, signal_every=se)
        verbs_native.null_loop(duration=warmup_seconds(duration), **kw)  # warm-up
        outs = [verbs_native.null_loop(duration=duration, **kw) for _ in range(repeats)]
        # One more run with every post and poll timed: the split costs two clock reads per call,
        # so it is reported separately and never used for the rate.
        split = verbs_native.null_loop(duration=split_seconds(duration), time_calls=True, **kw).per_wr_ns()
        rates = tuple(o.messages / o.seconds for o in outs)
        med = SampleStats.of(rates).median
        metrics = MrMetrics(
            ns_per_wr=1e9 / med,
            posts_per_s=sorted(o.posts / o.seconds for o in outs)[len(outs) // 2],
            cpu_us_per_wr=sorted(o.cpu_seconds / o.messages * 1e6 for o in outs)[len(outs) // 2],
            timed_post_ns_per_wr=split["post_ns_per_wr"],
            timed_poll_ns_per_wr=split["poll_ns_per_wr"],
            timed_loop_ns_per_wr=split["loop_ns_per_wr"],
            **{
                f"min_msg_bytes_{int(g)}g": rdma_math.min_message_for_rate(med, g)
                for g in rdma_math.LINK_RATES_GBPS
            },
        )
        results.append(
            BenchResult(
                key=KEY,
                status=Status.OK,
                provider="native-null",
                description=f"WRs per second the C loop itself posts and retires ({NULL_NOTE})",
                params=MrParams(post_list=pl, tx_depth=tx_depth, signal_every_wrs=se * pl, size_bytes=size),
                settings=RunSettings(link_gbps=link_gbps, duration_s=duration, repeats=repeats),
                unit="WR/s",
                samples=rates,
                stats=SampleStats.of(rates),
                metrics=metrics,
                method=(
                    f"gd_null_loop (native/verbs_loop.c, the same loop body as gd_run_bw), one lane, "
                    f"{duration:g} s per run after 0.1 s warm-up, {repeats} runs, median; CLOCK_MONOTONIC; "
                    f"timed_* from one extra run with clock reads around every call; {NULL_NOTE}"
                ),
            )
        )
        note_partial(results)  # a Ctrl-C in a later post list keeps this one
    return results
