"""peer-bench: GPU<->GPU transfers for every ordered pair of GPUs, measured against the path model.

Per ordered pair ``src -> dst`` and size (the bytes always move from ``src``'s memory into ``dst``'s):

1. ``peer_ce_off`` / ``peer_ce_on``: copy-engine copies (``cuMemcpyPeerAsync`` between the two
   primary contexts) with peer access disabled (the driver stages the copy through host memory)
   and enabled (NVLink or PCIe peer-to-peer). ``on_over_off`` on the ``on`` rows is the staging loss.
2. ``peer_ce_bidir_off`` / ``peer_ce_bidir_on``: both directions at once (one stream per GPU,
   joined by events); bytes counted both ways.
3. ``peer_sm_read`` / ``peer_sm_write``: the NVRTC kernel ``native/peer.cu`` launched on the
   destination GPU reading the peer's memory through UVA, or on the source GPU writing into it;
   the best of a few grid sizes per size; ``ratio_to_ce`` against the copy engine's same bytes.
4. ``peer_ce_reference``: at one size, gdrdiag's CE copy (``peer_ce_gdrdiag``) and CuPy's
   ``cudaMemcpyPeerAsync`` (``peer_ce_reference``) on the same buffers, interleaved over several
   rounds, peer access off and on; ``gdrdiag_over_reference`` on the CuPy rows.
5. ``peer_lat_ce_off`` / ``peer_lat_ce_on``: one 4-byte copy at a time, median per-copy latency in
   microseconds; ``peer_lat_sm_on``: one SM load's round trip to the peer's memory (a pointer
   chase) (:mod:`gdrdiag.bench.peer_latency`).
6. ``peer_all_to_one``: every other GPU's copy engine into one GPU at once, per destination
   (:mod:`gdrdiag.bench.peer_all_to_one`).
7. ``peer_blocks``: many small blocks GPU -> GPU, one call each, batched, coalesced and a gather
   kernel, with each way's half-bandwidth block size (:mod:`gdrdiag.bench.peer_blocks`).

Every destination is poisoned before a case and checked byte for byte after it; a wrong byte makes
the row ERROR. Timing is :mod:`gdrdiag.bench.timing` (CUDA events, warm-up, every sample kept,
median); with peer access on, iterations queue behind a spin gate (enqueue cost excluded); staged
copies (peer access off) run ungated, because the driver's staging may wait on the host. Each row's
``expected_gbytes_per_s`` and ``measured_over_expected`` come from :mod:`gdrdiag.pathmodel.peer`.
With fewer than two GPUs every case is WAIVED with the reason.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, Optional

from gdrdiag.bench.copy_config import POISON, gbytes_per_s
from gdrdiag.bench.peer_all_to_one import ALL_TO_ONE_KEY, all_to_one_results
from gdrdiag.bench.peer_blocks import (
    BLOCKS_CASE,
    DEFAULT_BLOCK_COUNT,
    DEFAULT_BLOCK_SIZES,
    DEFAULT_REGION_MAX,
    block_results,
)
from gdrdiag.bench.peer_latency import LATENCY_KEYS, SM_LATENCY_KEY, latency_case, sm_latency_case
from gdrdiag.bench.runner import run_case
from gdrdiag.bench.timing import SpinGate, Timed, gated_iterations, time_stream
from gdrdiag.errors import NotSupported, UserInputError
from gdrdiag.hw import cuda, memory, nvrtc
from gdrdiag.hw import peer as hw_peer
from gdrdiag.hw.memory import Buffer, MemoryKind
from gdrdiag.model.machine import MachineInfo
from gdrdiag.model.params import PeerMetrics, PeerParams, RunSettings
from gdrdiag.model.results import BenchResult, SampleStats, Status
from gdrdiag.pathmodel.peer import Expectation, expect, pair_of
from gdrdiag.units import GiB, KiB, MiB

DEFAULT_SIZES = (4 * KiB, 64 * KiB, 1 * MiB, 16 * MiB, 256 * MiB)
ALL_SIZES = tuple(4 * KiB * 4**i for i in range(10))  # 4 KiB .. 1 GiB
CE_KEYS = ("peer_ce_off", "peer_ce_on", "peer_ce_bidir_off", "peer_ce_bidir_on")
SM_KEYS = ("peer_sm_read", "peer_sm_write")
REFERENCE_KEY = "peer_ce_reference"
ALL_KEYS = (*CE_KEYS, *SM_KEYS, REFERENCE_KEY, *LATENCY_KEYS, ALL_TO_ONE_KEY, BLOCKS_CASE)
KERNEL_KEYS = (*SM_KEYS, SM_LATENCY_KEY, BLOCKS_CASE)  # cases that load native/peer.cu
ON_ONLY_KEYS = ("peer_ce_on", "peer_ce_bidir_on", *SM_KEYS, "peer_lat_ce_on", SM_LATENCY_KEY, BLOCKS_CASE)
SM_BLOCKS_PER_SM = (1, 2, 4, 8)
SM_THREADS = 512
_SEEDS = (0x5A, 0x3C)  # payload pattern seeds: one per direction of a pair


@dataclass(frozen=True)
class PeerBenchOptions:
    """What peer-bench runs; validated before any GPU work."""

    sizes: tuple[int, ...] = DEFAULT_SIZES
    keys: tuple[str, ...] = ALL_KEYS  # the selected cases, in run order
    pairs: Optional[tuple[tuple[int, int], ...]] = None  # ordered (src, dst); None: every pair
    iterations: int = 10
    warmup: int = 2
    reference_size: int = 256 * MiB
    reference_rounds: int = 5
    sm_blocks_per_sm: tuple[int, ...] = SM_BLOCKS_PER_SM
    block_sizes: tuple[int, ...] = DEFAULT_BLOCK_SIZES  # the many-small-blocks sweep (peer_blocks)
    block_count: int = DEFAULT_BLOCK_COUNT
    block_region_max: int = DEFAULT_REGION_MAX

    def validate(self) -> None:
        """Raise UserInputError for what cannot run (checked before allocating)."""
        for k in self.keys:
            if k not in ALL_KEYS:
                raise UserInputError(f"unknown peer-bench case {k!r} (see --list)")
        if not self.sizes:
            raise UserInputError("--sizes: give at least one size")
        for s in (*self.sizes, self.reference_size):
            if s < 16 or s % 16:
                raise UserInputError(f"size {s}: peer-bench sizes are multiples of 16 bytes (>= 16)")
            if s > 4 * GiB:
                raise UserInputError(f"size {s}: at most 4 GiB per buffer")
        if self.iterations < 1 or self.warmup < 0 or self.reference_rounds < 1:
            raise UserInputError("iterations and rounds must be >= 1 and warm-up >= 0")
        for a, b in self.pairs or ():
            if a == b:
                raise UserInputError(f"--pairs {a}:{b}: a pair needs two different GPUs")
        if BLOCKS_CASE in self.keys:
            self._validate_blocks()

    def _validate_blocks(self) -> None:
        if not self.block_sizes:
            raise UserInputError("--block-sizes: give at least one size")
        if self.block_count < 1:
            raise UserInputError("--blocks: at least one block")
        for s in self.block_sizes:
            if s < 16 or s % 16:
                raise UserInputError(f"block size {s}: peer-bench block sizes are multiples of 16 bytes")
            if s > self.block_region_max:
                raise UserInputError(
                    f"block size {s}: larger than --block-region-max {self.block_region_max}"
                )
        if self.block_region_max > 4 * GiB:
            raise UserInputError("--block-region-max: at most 4 GiB (the source region is twice that)")


@dataclass
class _Gpu:
    """One GPU's context, stream pair, gate and peer kernel module."""

    ctx: cuda.GpuContext
    streams: list[cuda.Stream] = field(default_factory=list)
    gate: Optional[SpinGate] = None
    module: Any = None

    @property
    def ordinal(self) -> int:
        return self.ctx.ordinal

    def current(self) -> None:
        hw_peer.make_current(self.ctx)


@dataclass
class _PairBuffers:
    """Per unordered pair {a, b}: a source and a destination buffer on each GPU."""

    src: dict[int, Buffer]
    dst: dict[int, Buffer]
    expected: dict[int, Any]  # payload written into src[ordinal]


class _Session:
    """Everything the cases of one run share."""

    def __init__(self, opts: PeerBenchOptions, machine: Optional[MachineInfo], progress: Any):
        self.opts = opts
        self.machine = machine
        self.progress = progress
        self.gpus: dict[int, _Gpu] = {}

    # -- helpers -------------------------------------------------------------------------------
    def params(self, src: int, dst: int, **kw: Any) -> PeerParams:
        pair = pair_of(self.machine, src, dst)
        return PeerParams(src_gpu=src, dst_gpu=dst, path=pair.path_text if pair else None, **kw)

    def result(
        self,
        key: str,
        params: PeerParams,
        timed: Timed,
        moved: int,
        mismatch: Optional[int],
        description: str,
        expectation: Optional[Expectation] = None,
        **metrics: Optional[float],
    ) -> BenchResult:
        """A bandwidth row: GB/s samples, the path model's expectation (the pair's, unless given)."""
        samples = gbytes_per_s(moved, timed.seconds)
        stats = SampleStats.of(samples)
        pair = pair_of(self.machine, params.src_gpu, params.dst_gpu)
        exp = expectation or expect(
            self.machine,
            pair,
            mover=params.mover or "ce",
            peer_access=bool(params.peer_access),
            bidirectional=bool(params.bidirectional),
        )
        m = PeerMetrics(
            seconds_median=SampleStats.of(timed.seconds).median,
            expected_gbytes_per_s=exp.gbytes_per_s,
            measured_over_expected=stats.median / exp.gbytes_per_s if exp.gbytes_per_s else None,
            **metrics,
        )
        ok = mismatch is None
        return BenchResult(
            key=key,
            status=Status.OK if ok else Status.ERROR,
            description=description,
            params=dataclasses.replace(params, model=exp.text),
            unit="GB/s",
            samples=samples,
            stats=stats,
            metrics=m,
            settings=RunSettings(iterations=len(timed.seconds), warmup=self.opts.warmup),
            method=timed.method,
            provider="cuda",
            verified=ok,
            reason=None if ok else f"payload check failed: first wrong byte at offset {mismatch}",
        )

    def poison(self, buf: Buffer, owner: int, n: int) -> None:
        self.gpus[owner].current()
        buf.fill(POISON, n)

    def check(self, buf: Buffer, owner: int, expected: Any, n: int) -> Optional[int]:
        self.gpus[owner].current()
        return memory.first_mismatch(buf.read_array(n), expected[:n])

    def copy_op(self, src: int, dst: int, bufs: _PairBuffers, n: int) -> Callable[[cuda.Stream], None]:
        s_buf, d_buf = bufs.src[src], bufs.dst[dst]
        s_ctx, d_ctx = self.gpus[src].ctx, self.gpus[dst].ctx

        def op(stream: cuda.Stream) -> None:
            cuda.call(
                cuda.driver().cuMemcpyPeerAsync,
                d_buf.ptr,
                d_ctx.handle,
                s_buf.ptr,
                s_ctx.handle,
                n,
                stream.handle,
            )

        return op


def _pairs(n: int, opts: PeerBenchOptions) -> list[tuple[int, int]]:
    if opts.pairs is not None:
        for a, b in opts.pairs:
            if not (0 <= a < n and 0 <= b < n):
                raise UserInputError(f"--pairs {a}:{b}: this machine has GPUs 0..{n - 1}")
        return list(opts.pairs)
    return [(a, b) for a in range(n) for b in range(n) if a != b]


def _unordered(pairs: list[tuple[int, int]]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for a, b in pairs:
        key = (min(a, b), max(a, b))
        if key not in out:
            out.append(key)
    return out


def waived_cases(opts: PeerBenchOptions, reason: str) -> list[BenchResult]:
    """One WAIVED result per selected case, so a Report names each one."""
    return [BenchResult.waived(k, reason, provider="cuda", description=f"peer-bench {k}") for k in opts.keys]


def planned_case_count(opts: PeerBenchOptions, n_pairs: int = 2) -> int:
    """Progress steps of a run.

    Per ordered pair: every sized key x size, the reference twice (off, on), each latency case and
    the block sweep once; all-to-one once per destination (about one per ordered pair of two GPUs).
    """
    once = (REFERENCE_KEY, *LATENCY_KEYS, BLOCKS_CASE, ALL_TO_ONE_KEY)
    per_pair = sum(len(opts.sizes) for k in opts.keys if k not in once)
    per_pair += sum(1 for k in opts.keys if k in (*LATENCY_KEYS, BLOCKS_CASE, ALL_TO_ONE_KEY))
    return n_pairs * per_pair + (n_pairs * 2 if REFERENCE_KEY in opts.keys else 0)


def run_peer_bench(
    opts: PeerBenchOptions,
    machine: Optional[MachineInfo] = None,
    progress: Optional[Callable[[str], None]] = None,
) -> list[BenchResult]:
    """Run the selected cases over every selected ordered pair; WAIVED with the reason below two GPUs."""
    opts.validate()
    try:
        cuda.init()
        n = cuda.device_count()
    except NotSupported as exc:
        return waived_cases(opts, exc.reason)
    if n < 2:
        return waived_cases(
            opts, f"peer-bench needs two or more GPUs; the CUDA driver sees {n} (CUDA_VISIBLE_DEVICES?)"
        )
    pairs = _pairs(n, opts)
    session = _Session(opts, machine, progress)
    results: list[BenchResult] = []
    # all-to-one: every other GPU copies into each selected destination, so every GPU takes part
    ordinals = list(range(n)) if ALL_TO_ONE_KEY in opts.keys else sorted({o for p in pairs for o in p})
    try:
        for o in ordinals:
            g = _Gpu(cuda.GpuContext(o).__enter__())
            session.gpus[o] = g
            g.streams = [cuda.Stream(), cuda.Stream()]
            g.gate = SpinGate(g.ctx)
            if any(k in KERNEL_KEYS for k in opts.keys):
                g.module = nvrtc.load("peer", g.ctx.arch)
        for a, b in _unordered(pairs):
            results.extend(_run_pair(session, a, b, [p for p in pairs if set(p) == {a, b}]))
        if ALL_TO_ONE_KEY in opts.keys:
            for d in sorted({d for _, d in pairs}):
                if session.progress:
                    session.progress(ALL_TO_ONE_KEY)
                sources = [o for o in ordinals if o != d]
                results.extend(
                    run_case(
                        ALL_TO_ONE_KEY,
                        lambda d=d, s=sources: all_to_one_results(session, d, s),
                        provider="cuda",
                        params=PeerParams(dst_gpu=d, sources=len(sources), op="all_to_one"),
                    )
                )
    finally:
        _close(session)
    return _with_ratios(results)


def _close(session: _Session) -> None:
    gpus = session.gpus
    for a in gpus:
        for b in gpus:
            if a != b:
                try:
                    hw_peer.set_peer_access(gpus[a].ctx, gpus[b].ctx, False)
                except Exception:  # noqa: BLE001 - best effort on the way out
                    pass
    for g in gpus.values():
        g.current()
        if g.gate is not None:
            g.gate.close()
        for s in g.streams:
            s.close()
        if g.module is not None:
            g.module.close()
        g.ctx.close()


def _allocate(session: _Session, a: int, b: int, size: int) -> _PairBuffers:
    bufs = _PairBuffers({}, {}, {})
    try:
        for o, seed in zip((a, b), _SEEDS, strict=True):
            g = session.gpus[o]
            g.current()
            memory.check_fits(2 * (size + 64 * KiB), 0, g.ctx)
            bufs.src[o] = memory.allocate(MemoryKind.DEVICE, size, alignment=64 * KiB, gpu=g.ctx)
            bufs.dst[o] = memory.allocate(MemoryKind.DEVICE, size, alignment=64 * KiB, gpu=g.ctx)
            bufs.expected[o] = memory.pattern(size, seed=seed)
            bufs.src[o].write(bufs.expected[o])
    except BaseException:
        _free(session, bufs)
        raise
    return bufs


def _free(session: _Session, bufs: _PairBuffers) -> None:
    for o in list(bufs.src) + list(bufs.dst):
        session.gpus[o].current()
        for d in (bufs.src, bufs.dst):
            if o in d:
                d.pop(o).close()


def _run_pair(session: _Session, a: int, b: int, ordered: list[tuple[int, int]]) -> list[BenchResult]:
    opts = session.opts
    largest = max(max(opts.sizes), opts.reference_size if REFERENCE_KEY in opts.keys else 0)
    results: list[BenchResult] = []
    bufs = _allocate(session, a, b, largest)
    try:
        can = all(hw_peer.can_access_peer(s, d) for s, d in ((a, b), (b, a)))
        for on in (False, True):
            for x, y in ((a, b), (b, a)):
                hw_peer.set_peer_access(session.gpus[x].ctx, session.gpus[y].ctx, on and can)
            if on and not can:
                reason = (
                    f"cuDeviceCanAccessPeer({a}, {b}) or ({b}, {a}) is 0: the driver offers no peer access "
                    "between these GPUs (P2P not supported on this path or refused in this VM)"
                )
                for key in ON_ONLY_KEYS:
                    if key in opts.keys:
                        results.append(
                            BenchResult.waived(key, reason, provider="cuda", params=session.params(a, b))
                        )
                continue
            results.extend(_phase(session, bufs, ordered, on))
    finally:
        _free(session, bufs)
    return results


def _cases(
    session: _Session, bufs: _PairBuffers, ordered: list[tuple[int, int]], on: bool
) -> Iterator[tuple[str, Callable[[], Any], dict]]:
    opts = session.opts
    tag = "on" if on else "off"
    for key in (f"peer_ce_{tag}",):
        if key in opts.keys:
            for src, dst in ordered:
                for n in opts.sizes:
                    yield key, lambda s=src, d=dst, n=n: _ce_case(session, bufs, s, d, n, on), {}
    key = f"peer_ce_bidir_{tag}"
    if key in opts.keys:
        src, dst = ordered[0]
        for n in opts.sizes:
            yield key, lambda n=n: _bidir_case(session, bufs, src, dst, n, on), {}
    if on:
        for key in SM_KEYS:
            if key in opts.keys:
                for src, dst in ordered:
                    for n in opts.sizes:
                        yield key, lambda k=key, s=src, d=dst, n=n: _sm_case(session, bufs, k, s, d, n), {}
    if REFERENCE_KEY in opts.keys:
        for src, dst in ordered:
            yield REFERENCE_KEY, lambda s=src, d=dst: _reference_case(session, bufs, s, d, on), {}
    if f"peer_lat_ce_{tag}" in opts.keys:
        for src, dst in ordered:
            yield f"peer_lat_ce_{tag}", lambda s=src, d=dst: latency_case(session, bufs, s, d, on), {}
    if on and SM_LATENCY_KEY in opts.keys:
        for src, dst in ordered:
            yield SM_LATENCY_KEY, lambda s=src, d=dst: sm_latency_case(session, s, d), {}
    if on and BLOCKS_CASE in opts.keys:
        for src, dst in ordered:
            yield BLOCKS_CASE, lambda s=src, d=dst: block_results(session, s, d), {}


def _phase(
    session: _Session, bufs: _PairBuffers, ordered: list[tuple[int, int]], on: bool
) -> list[BenchResult]:
    out: list[BenchResult] = []
    for key, case, fields in _cases(session, bufs, ordered, on):
        if session.progress:
            session.progress(key)
        out.extend(run_case(key, case, **fields))
    return out


def _ce_case(session: _Session, bufs: _PairBuffers, src: int, dst: int, n: int, on: bool) -> BenchResult:
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


def _bidir_case(session: _Session, bufs: _PairBuffers, a: int, b: int, n: int, on: bool) -> BenchResult:
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


def _sm_case(session: _Session, bufs: _PairBuffers, key: str, src: int, dst: int, n: int) -> BenchResult:
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


def _reference_case(session: _Session, bufs: _PairBuffers, src: int, dst: int, on: bool) -> list[BenchResult]:
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


def _ident(r: BenchResult) -> tuple:
    p = r.params
    return (p.src_gpu, p.dst_gpu, p.size_bytes, p.bidirectional)  # type: ignore[union-attr]


def _with_ratios(results: list[BenchResult]) -> list[BenchResult]:
    """``on_over_off`` on the peer-access-on CE rows; ``ratio_to_ce`` on the SM rows."""
    ok = [r for r in results if r.status is Status.OK and r.value]
    off = {_ident(r): r.value for r in ok if r.key in ("peer_ce_off", "peer_ce_bidir_off")}
    ce_on = {_ident(r): r.value for r in ok if r.key == "peer_ce_on"}
    out = []
    for r in results:
        if r.status is Status.OK and r.value:
            extra: dict[str, float] = {}
            if r.key in ("peer_ce_on", "peer_ce_bidir_on") and off.get(_ident(r)):
                extra["on_over_off"] = r.value / off[_ident(r)]  # type: ignore[operator]
            if r.key in SM_KEYS and ce_on.get(_ident(r)):
                extra["ratio_to_ce"] = r.value / ce_on[_ident(r)]  # type: ignore[operator]
            if extra:
                r = dataclasses.replace(r, metrics=dataclasses.replace(r.metrics, **extra))
        out.append(r)
    return out
