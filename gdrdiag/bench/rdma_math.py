"""Pure arithmetic for mr-bench: rates, percentiles, the loop-cost bound. No hardware imports.

Units: sizes in bytes, times in seconds, link rates in Gb/s (1e9 bit/s, as units.py decides).
"""

from __future__ import annotations

import math
from typing import Optional, Sequence

#: Link rates the loop-cost report states its bound for.
LINK_RATES_GBPS = (100.0, 200.0, 400.0, 800.0)


def gbits(nbytes: float, seconds: float) -> float:
    """Gb/s for ``nbytes`` in ``seconds``."""
    if seconds <= 0:
        raise ValueError("seconds must be > 0")
    return nbytes * 8 / seconds / 1e9


def percentile(sorted_values: Sequence[float], q: float) -> float:
    """Nearest-rank-interpolated percentile ``q`` (0..100) of already sorted values."""
    if not sorted_values:
        raise ValueError("no values")
    if not 0 <= q <= 100:
        raise ValueError("q must be in 0..100")
    n = len(sorted_values)
    pos = (n - 1) * q / 100
    lo = math.floor(pos)
    hi = min(lo + 1, n - 1)
    frac = pos - lo
    return sorted_values[lo] * (1 - frac) + sorted_values[hi] * frac


def latency_summary_us(latencies_s: Sequence[float]) -> dict[str, float]:
    """p50/p90/p99/p99.9/min/max of latencies, in microseconds, keyed with the unit in the name."""
    xs = sorted(latencies_s)
    return {
        "lat_min_us": xs[0] * 1e6,
        "lat_p50_us": percentile(xs, 50) * 1e6,
        "lat_p90_us": percentile(xs, 90) * 1e6,
        "lat_p99_us": percentile(xs, 99) * 1e6,
        "lat_p999_us": percentile(xs, 99.9) * 1e6,
        "lat_max_us": xs[-1] * 1e6,
    }


def min_message_for_rate(wr_per_s: float, link_gbps: float) -> float:
    """Smallest message (bytes) at which posting ``wr_per_s`` WRs keeps ``link_gbps`` busy.

    A loop that can post R work requests per second moves R x S bytes per second with
    S-byte messages, so it saturates a link of B bit/s only when S >= B / 8 / R.
    """
    if wr_per_s <= 0:
        raise ValueError("wr_per_s must be > 0")
    if link_gbps <= 0:
        raise ValueError("link_gbps must be > 0")
    return link_gbps * 1e9 / 8 / wr_per_s


def wr_rate_needed(message_bytes: int, link_gbps: float) -> float:
    """Work requests per second needed to keep ``link_gbps`` busy with ``message_bytes`` messages."""
    if message_bytes <= 0:
        raise ValueError("message_bytes must be > 0")
    return link_gbps * 1e9 / 8 / message_bytes


def pow2_at_least(n: float) -> int:
    """Smallest power of two >= n (n > 0)."""
    if n <= 1:
        return 1
    return 1 << math.ceil(math.log2(n))


def signal_interval(tx_depth: int, post_list: int, cq_mod: Optional[int]) -> int:
    """How many post lists go between signalled ones so the send queue can never stall.

    A WR is retired only when a later-or-equal signalled WR of its QP completes, so the signalled
    WRs must come at least every ``tx_depth`` WRs. A ``cq_mod`` the user gave (``-Q``, checked to be
    1..tx_depth, perftest's own bound) is honoured; without one we signal every 100 WRs (perftest's
    CQ moderation default) but at most every half depth, so posting never waits on a full queue.
    Returned in post lists (>= 1).
    """
    if post_list < 1 or tx_depth < post_list:
        raise ValueError("need 1 <= post_list <= tx_depth")
    if cq_mod:
        wrs = max(post_list, min(cq_mod, tx_depth))
    else:
        wrs = max(post_list, min(100, max(1, tx_depth // 2)))
    return max(1, wrs // post_list)


def fit_post_cost(points: Sequence[tuple[int, float]]) -> tuple[float, float]:
    """Least-squares fit of seconds-per-post = fixed + per_wr x post_list.

    ``points`` are (post list length, seconds per post). ``fixed`` is what the loop costs per
    ibv_post_send call whatever the list length (bookkeeping, the call, polling); ``per_wr``
    is what each WR in the list adds (for the soft provider: its checks). Needs two distinct
    post-list lengths.
    """
    xs = [float(p) for p, _ in points]
    ys = [float(t) for _, t in points]
    if len(set(xs)) < 2:
        raise ValueError("need at least two different post-list lengths")
    n = len(xs)
    mx, my = sum(xs) / n, sum(ys) / n
    sxx = sum((x - mx) ** 2 for x in xs)
    sxy = sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True))
    per_wr = sxy / sxx
    return my - per_wr * mx, per_wr
