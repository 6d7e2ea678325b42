"""The mr-bench loop's own cost: WRs per second the Python loop posts and retires over the soft provider.

No bytes move (the soft provider in no-copy mode), so the number bounds the smallest message the loop
could keep a link busy with; the C loop's counterpart is bench/loop_cost_native.py.
"""

from __future__ import annotations

import contextlib
import dataclasses
from typing import Sequence

from gdrdiag.bench import rdma_math
from gdrdiag.bench.mr_config import DEFAULT_ACCESS, SOFT_NOTE, MrBenchConfig, ProgressFn
from gdrdiag.bench.mr_setup import Endpoints, GpuScope, allocate_region, ok_status, wire_loopback, write_wrs
from gdrdiag.bench.rdma_loop import build_lanes, run_bw
from gdrdiag.bench.runner import note_partial, replace_partial
from gdrdiag.hw.memory import MemoryKind
from gdrdiag.model.params import MrMetrics, MrParams, RunSettings
from gdrdiag.model.results import BenchResult, SampleStats

LOOP_COST_POST_LISTS = (1, 4, 16, 64)


def warmup_seconds(duration: float) -> float:
    """The untimed run before each post-list length's measured runs (both loops)."""
    return min(0.1, duration)


def planned_seconds(
    *,
    duration: float = 1.0,
    tx_depth: int = 128,
    repeats: int = 3,
    post_lists: Sequence[int] = LOOP_COST_POST_LISTS,
) -> tuple[float, ...]:
    """Seconds each progress step of :func:`loop_cost` is planned to take (warm-up + timed runs).

    The runs are timed by ``duration``, so the plan is what the progress ETA weighs each step by;
    post-list lengths above ``tx_depth`` are skipped there and are not planned here.
    """
    return tuple(warmup_seconds(duration) + repeats * duration for pl in post_lists if pl <= tx_depth)


def loop_cost(
    *,
    duration: float = 1.0,
    tx_depth: int = 128,
    size: int = 64,
    repeats: int = 3,
    post_lists: Sequence[int] = LOOP_COST_POST_LISTS,
    link_gbps: float = 400.0,
    progress: ProgressFn = None,
) -> list[BenchResult]:
    """How many WRs per second the loop posts when the provider moves no bytes (soft, no-copy)."""
    results = []
    cfg = MrBenchConfig(
        provider="soft",
        kinds=(MemoryKind.PAGEABLE,),
        sizes=(size,),
        tx_depth=tx_depth,
        iterations=None,
        duration=duration,
        soft_options={"copy": False},
    )
    with contextlib.ExitStack() as stack:
        ep = Endpoints(cfg, stack)
        gpus = GpuScope(0, False)
        src = allocate_region(stack, ep.req_pd, gpus, MemoryKind.PAGEABLE, "mr", size, DEFAULT_ACCESS)
        dst = allocate_region(stack, ep.resp_pd, gpus, MemoryKind.PAGEABLE, "mr", size, DEFAULT_ACCESS)
        wiring = wire_loopback(stack, ep, cfg, 1, tx_depth)
        for pl in post_lists:
            if pl > tx_depth:
                continue
            if progress:
                progress(f"mr_loop_cost post list {pl}")
            lanes = build_lanes(wiring.req, [write_wrs(src, dst, 0, size, size, pl)])
            se = rdma_math.signal_interval(tx_depth, pl, None)
            run_bw(lanes, wiring.cq, tx_depth=tx_depth, signal_every=se, duration=warmup_seconds(duration))
            outs = [
                run_bw(lanes, wiring.cq, tx_depth=tx_depth, signal_every=se, duration=duration)
                for _ in range(repeats)
            ]
            rates = tuple(o.messages / o.seconds for o in outs)
            med = SampleStats.of(rates).median
            metrics = MrMetrics(
                posts_per_s=sorted(o.posts / o.seconds for o in outs)[len(outs) // 2],
                cpu_us_per_wr=sorted(o.cpu_seconds / o.messages * 1e6 for o in outs)[len(outs) // 2],
                **{
                    f"min_msg_bytes_{int(g)}g": rdma_math.min_message_for_rate(med, g)
                    for g in rdma_math.LINK_RATES_GBPS
                },
            )
            results.append(
                BenchResult(
                    key="mr_loop_cost",
                    status=ok_status(),
                    provider="soft",
                    description=(
                        "WRs per second the mr-bench loop itself posts and retires (soft provider in no-copy "
                        "mode: every key/state check, no bytes moved); bounds the smallest message that can "
                        "keep a link busy"
                    ),
                    params=MrParams(
                        post_list=pl, tx_depth=tx_depth, signal_every_wrs=se * pl, size_bytes=size
                    ),
                    settings=RunSettings(link_gbps=link_gbps, duration_s=duration, repeats=repeats),
                    unit="WR/s",
                    samples=rates,
                    stats=SampleStats.of(rates),
                    metrics=metrics,
                    method=(
                        f"run_bw on one soft QP, no copies, {duration:g} s per run after 0.1 s warm-up, "
                        f"{repeats} runs, median; min message = link rate / 8 / WR rate; {SOFT_NOTE}"
                    ),
                )
            )
            note_partial(results)  # a Ctrl-C in a later post list keeps this one
    return _with_fit(results)


def _with_fit(results: list[BenchResult]) -> list[BenchResult]:
    """The results with the least-squares split of a post's time (loop per call, provider per WR) added.

    Results are immutable once made: the fit over all of them is added by making new ones, which
    replace the ones noted for a Ctrl-C (so a Ctrl-C in the C loop after this keeps the fit).
    """
    if len({r.params.post_list for r in results}) < 2:
        return results
    fixed, per_wr = rdma_math.fit_post_cost(
        [(int(r.params.post_list), 1.0 / float(r.metrics.posts_per_s or 1)) for r in results]
    )
    fitted = [
        dataclasses.replace(
            r,
            metrics=dataclasses.replace(
                r.metrics, loop_us_per_post=fixed * 1e6, provider_us_per_wr=per_wr * 1e6
            ),
        )
        for r in results
    ]
    replace_partial(results, fitted)
    return fitted
