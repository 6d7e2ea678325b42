"""Probe: why concurrent peer copies on an NVSwitch node fall short of each GPU's summed egress.

A probe, not part of the product: CuPy only (independent of gdrdiag's own copy code), every GPU the
process sees. For each traffic pattern (a set of ordered (src, dst) copies of SIZE bytes) it starts
every copy at once (a fork event on GPU 0's stream that every copy's stream waits for) and reports:

- the total rate: every copy's bytes over the fork-to-last-join time (GPU 0's events);
- each copy's own time (start/end events on its own stream), so uneven progress shows;

Patterns: one pair; a pair both ways; two disjoint pairs both ways; a ring one way (each GPU one out,
one in); the ring both ways; one to all; all to one; all to all among 3 and among all GPUs; all to
all issued on the destinations' streams (pull: the destination's copy engines read); all to all in
n-1 permutation rounds one after another (each round: every GPU sends to one peer and receives from
one), the way a scheduled all-to-all avoids many flows per link.

Usage (on a node with 3 GPUs or more):  python3 scripts/probes/all_to_all_probe.py [SIZE_MIB] [REPS]
"""

from __future__ import annotations

import json
import statistics
import sys

import cupy as cp

SIZE = int(sys.argv[1] if len(sys.argv) > 1 else 256) << 20
REPS = int(sys.argv[2] if len(sys.argv) > 2 else 7)
N = cp.cuda.runtime.getDeviceCount()


def enable_peers() -> None:
    for a in range(N):
        with cp.cuda.Device(a):
            for b in range(N):
                if a != b:
                    try:
                        cp.cuda.runtime.deviceEnablePeerAccess(b)
                    except cp.cuda.runtime.CUDARuntimeError:
                        pass


def patterns() -> dict[str, list[list[tuple[int, int]]]]:
    """Name -> rounds (each round: copies at once; rounds run one after another)."""
    all_n = list(range(N))
    a2a = [(s, d) for s in all_n for d in all_n if s != d]
    a2a3 = [(s, d) for s in range(3) for d in range(3) if s != d]
    ring = [(i, (i + 1) % N) for i in all_n]
    ring_back = [((i + 1) % N, i) for i in all_n]
    out: dict[str, list[list[tuple[int, int]]]] = {
        "pair 0->1": [[(0, 1)]],
        "pair both ways 0<->1": [[(0, 1), (1, 0)]],
        "ring one way": [ring],
        "ring both ways": [ring + ring_back],
        "one to all (0)": [[(0, d) for d in all_n if d != 0]],
        "all to one (0)": [[(s, 0) for s in all_n if s != 0]],
        "all to all, 3 GPUs": [a2a3],
        "all to all": [a2a],
        "all to all, pull": [a2a],  # issued on the destination's stream
        "all to all, permutation rounds": [[(i, (i + k) % N) for i in all_n] for k in range(1, N)],
        # the same order with no barrier between steps: a GPU's copies queued on one stream
        "all to all, shifted steps queued per source": [
            [(i, (i + k) % N) for k in range(1, N) for i in all_n]
        ],
    }
    if N >= 4:
        out["two pairs both ways 0<->1 2<->3"] = [[(0, 1), (1, 0), (2, 3), (3, 2)]]
    return out


def main() -> None:
    enable_peers()
    src, dst = {}, {}
    for g in range(N):
        with cp.cuda.Device(g):
            src[g] = cp.arange(SIZE // 4, dtype=cp.uint32) + g
            dst[g] = cp.zeros(SIZE // 4 * (N - 1), dtype=cp.uint32)
    streams = {}
    for s in range(N):
        with cp.cuda.Device(s):
            streams[(s, s, s)] = cp.cuda.Stream(non_blocking=True)
        for d in range(N):
            if s != d:
                for issuer in (s, d):
                    with cp.cuda.Device(issuer):
                        streams[(s, d, issuer)] = cp.cuda.Stream(non_blocking=True)
    with cp.cuda.Device(0):
        hub = cp.cuda.Stream(non_blocking=True)
    results = []
    for name, rounds in patterns().items():
        pull = "pull" in name
        queued = "queued" in name
        totals, per_copy = [], {}
        for rep in range(REPS + 1):
            with cp.cuda.Device(0):
                t0, t1 = cp.cuda.Event(), cp.cuda.Event()
                t0.record(hub)
            marks = []
            for copies in rounds:
                fork = cp.cuda.Event()
                with cp.cuda.Device(0):
                    fork.record(hub)
                joins = []
                for s, d in copies:
                    issuer = d if pull else s
                    st = streams[(s, s, s) if queued else (s, d, issuer)]
                    with cp.cuda.Device(issuer):
                        st.wait_event(fork)
                        a, b = cp.cuda.Event(), cp.cuda.Event()
                        a.record(st)
                        slot = [x for x in range(N) if x != d].index(s)
                        cp.cuda.runtime.memcpyPeerAsync(
                            dst[d].data.ptr + slot * SIZE, d, src[s].data.ptr, s, SIZE, st.ptr
                        )
                        b.record(st)
                        joins.append(b)
                        marks.append(((s, d), a, b))
                with cp.cuda.Device(0):
                    for j in joins:
                        hub.wait_event(j)
            with cp.cuda.Device(0):
                t1.record(hub)
                t1.synchronize()
            if rep == 0:
                continue  # warm-up
            ms = cp.cuda.get_elapsed_time(t0, t1)
            nbytes = SIZE * sum(len(c) for c in rounds)
            totals.append(nbytes / ms / 1e6)
            for (s, d), a, b in marks:
                issuer = d if pull else s
                with cp.cuda.Device(issuer):
                    per_copy.setdefault(f"{s}->{d}", []).append(SIZE / cp.cuda.get_elapsed_time(a, b) / 1e6)
        for g in range(N):
            with cp.cuda.Device(g):
                cp.cuda.Device(g).synchronize()
        row = {
            "pattern": name,
            "copies": sum(len(c) for c in rounds),
            "rounds": len(rounds),
            "total_gbps_median": round(statistics.median(totals), 1),
            "total_gbps_min": round(min(totals), 1),
            "total_gbps_max": round(max(totals), 1),
            "per_copy_gbps_median": {k: round(statistics.median(v), 1) for k, v in per_copy.items()},
        }
        results.append(row)
        pc = sorted(row["per_copy_gbps_median"].values())
        print(
            f"{name:34s} copies {row['copies']:2d} rounds {row['rounds']}  "
            f"total {row['total_gbps_median']:7.1f} "
            f"GB/s ({row['total_gbps_min']:.0f}-{row['total_gbps_max']:.0f})  each copy alone-timed "
            f"{pc[0]:.0f}-{pc[-1]:.0f} GB/s",
            flush=True,
        )
    print(json.dumps({"gpus": N, "size": SIZE, "reps": REPS, "results": results}))


if __name__ == "__main__":
    main()
