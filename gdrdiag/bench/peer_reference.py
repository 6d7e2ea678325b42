"""peer-bench's same-run reference: gdrdiag's CE peer copy and CuPy's on the same buffers, interleaved.

At one size (``--reference-size``), per ordered pair and with peer access off and on, gdrdiag's
``cuMemcpyPeerAsync`` (``peer_ce_gdrdiag``) and CuPy's ``cudaMemcpyPeerAsync`` (``peer_ce_reference``)
take turns over several rounds, so noise on the link hits both alike; ``gdrdiag_over_reference`` on
the CuPy rows says whether gdrdiag's own copy is as fast as the library's.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Optional

from gdrdiag.bench.timing import Timed, time_stream
from gdrdiag.model.results import BenchResult

REFERENCE_KEY = "peer_ce_reference"


def reference_case(session: Any, bufs: Any, src: int, dst: int, on: bool) -> list[BenchResult]:
    """Our copy and CuPy's on the same buffers, interleaved over rounds (noise hits both alike)."""
    from gdrdiag.hw import reference_copy

    opts = session.opts
    n = opts.reference_size
    g = session.gpus[src]
    op = session.copy_op(src, dst, bufs, n)
    ours: list[float] = []
    theirs: list[float] = []
    mismatch: Optional[int] = None
    methods: dict[str, str] = {}

    def check() -> Optional[int]:
        return session.check(bufs.dst[dst], dst, bufs.expected[src], n)

    def run_ours() -> None:
        session.poison(bufs.dst[dst], dst, n)
        g.current()
        t = time_stream(
            g.streams[0],
            op,
            iterations=opts.iterations,
            warmup=opts.warmup,
            what="cuMemcpyPeerAsync",
            sync_each=True,  # as the reference loop times
        )
        ours.extend(t.seconds)
        methods["ours"] = t.method

    def run_theirs() -> None:
        session.poison(bufs.dst[dst], dst, n)
        ref = reference_copy.cupy_peer(
            src, dst, bufs.dst[dst].ptr, bufs.src[src].ptr, n, iterations=opts.iterations, warmup=opts.warmup
        )
        g.current()
        theirs.extend(ref.seconds)
        methods["theirs"], methods["library"] = ref.method, ref.library

    for r in range(opts.reference_rounds):
        # Alternate which goes first, so neither always follows the other.
        for step in (run_ours, run_theirs) if r % 2 == 0 else (run_theirs, run_ours):
            step()
            mismatch = mismatch if mismatch is not None else check()
    ours_method, theirs_method, library = methods["ours"], methods["theirs"], methods["library"]
    rounds = float(opts.reference_rounds)
    note = f"; {opts.reference_rounds} rounds interleaved with the other library's"
    base = dict(mover="ce", op="copy", peer_access=on, bidirectional=False, size_bytes=n)
    mine = session.result(
        "peer_ce_gdrdiag",
        session.params(src, dst, **base),
        Timed(tuple(ours), ours_method + note),
        n,
        mismatch,
        f"gdrdiag cuMemcpyPeerAsync GPU {src} -> {dst}, peer access {'on' if on else 'off'}, "
        "beside the reference",
        rounds=rounds,
    )
    ref_row = session.result(
        REFERENCE_KEY,
        session.params(src, dst, library=library, same_buffers=True, **base),
        Timed(tuple(theirs), theirs_method + note),
        n,
        mismatch,
        f"reference peer copy by {library}, GPU {src} -> {dst}, peer access {'on' if on else 'off'}",
        rounds=rounds,
    )
    if mine.value and ref_row.value and mismatch is None:
        ref_row = dataclasses.replace(
            ref_row,
            metrics=dataclasses.replace(ref_row.metrics, gdrdiag_over_reference=mine.value / ref_row.value),
        )
    return [mine, ref_row]
