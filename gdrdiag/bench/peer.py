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
   (:mod:`gdrdiag.bench.peer_all_to_one`); ``peer_all_to_all``: every GPU into every other at once,
   once per run; ``peer_one_to_all``: one GPU into every other at once, per source
   (:mod:`gdrdiag.bench.peer_all_to_all`).
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
import functools
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, Optional, Union

from gdrdiag.bench.cases import Case, Needs, Step
from gdrdiag.bench.copy_config import POISON, gbytes_per_s
from gdrdiag.bench.peer_all_to_all import ALL_TO_ALL_KEY, ONE_TO_ALL_KEY, all_to_all_run, one_to_all_run
from gdrdiag.bench.peer_all_to_one import ALL_TO_ONE_KEY, all_to_one_results
from gdrdiag.bench.peer_blocks import (
    BLOCKS_CASE,
    DEFAULT_BLOCK_COUNT,
    DEFAULT_BLOCK_SIZES,
    DEFAULT_REGION_MAX,
    block_results,
)
from gdrdiag.bench.peer_copies import bidir_case, ce_case, sm_case
from gdrdiag.bench.peer_latency import SM_LATENCY_KEY, latency_case, sm_latency_case
from gdrdiag.bench.peer_reference import REFERENCE_KEY, reference_case
from gdrdiag.bench.runner import run_case
from gdrdiag.bench.timing import SpinGate, Timed
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
SM_KEYS = ("peer_sm_read", "peer_sm_write")
KERNEL_KEYS = (*SM_KEYS, SM_LATENCY_KEY, BLOCKS_CASE)  # cases that load native/peer.cu
NODE_WIDE_KEYS = (ALL_TO_ONE_KEY, ALL_TO_ALL_KEY, ONE_TO_ALL_KEY)  # cases every visible GPU takes part in
SM_BLOCKS_PER_SM = (1, 2, 4, 8)
_SEEDS = (0x5A, 0x3C)  # payload pattern seeds: one per direction of a pair


@dataclass(frozen=True)
class PeerBenchOptions:
    """What peer-bench runs; validated before any GPU work."""

    sizes: tuple[int, ...] = DEFAULT_SIZES
    keys: tuple[str, ...] = field(default_factory=lambda: ALL_KEYS)  # the selected cases (CASES' keys)
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
    """Progress steps of a run over ``n_pairs`` ordered pairs: the sum of the cases' steps."""
    return sum(c.steps(PeerPlan(opts, n_pairs)) for c in CASES)


def run_peer_bench(
    opts: PeerBenchOptions,
    machine: Optional[MachineInfo] = None,
    progress: Optional[Callable[[str], None]] = None,
) -> list[BenchResult]:
    """Run the selected cases over every selected ordered pair; WAIVED with the reason below two GPUs.

    Each unordered pair gets its buffers once; with peer access off, then on, every selected case
    runs its part of that pair (:class:`PairPhase`); then every case runs what comes after all the
    pairs (:class:`AfterPairs`: all-to-one, per destination).
    """
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
    cases = [c for c in CASES if c.key in opts.keys]
    step: Step = progress or (lambda label: None)
    results: list[BenchResult] = []
    # all-to-one, all-to-all, one-to-all: every GPU takes part, whatever pairs were selected
    every = any(k in NODE_WIDE_KEYS for k in opts.keys)
    ordinals = list(range(n)) if every else sorted({o for p in pairs for o in p})
    try:
        for o in ordinals:
            g = _Gpu(cuda.GpuContext(o).__enter__())
            session.gpus[o] = g
            g.streams = [cuda.Stream(), cuda.Stream()]
            g.gate = SpinGate(g.ctx)
            if any(k in KERNEL_KEYS for k in opts.keys):
                g.module = nvrtc.load("peer", g.ctx.arch)
        for a, b in _unordered(pairs):
            ordered = [p for p in pairs if set(p) == {a, b}]
            results.extend(_run_pair(session, cases, a, b, ordered, step))
        after = AfterPairs(session, tuple(pairs), tuple(ordinals))
        for case in cases:
            results.extend(case.run(after, step))
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


def _run_pair(
    session: _Session, cases: list[Case], a: int, b: int, ordered: list[tuple[int, int]], step: Step
) -> list[BenchResult]:
    """The selected cases on one pair, peer access off then on.

    Cases that need peer access on are WAIVED where the driver offers none.
    """
    opts = session.opts
    largest = max(max(opts.sizes), opts.reference_size if REFERENCE_KEY in opts.keys else 0)
    results: list[BenchResult] = []
    bufs = _allocate(session, a, b, largest)
    try:
        can = all(hw_peer.can_access_peer(s, d) for s, d in ((a, b), (b, a)))
        for on in (False, True):
            for x, y in ((a, b), (b, a)):
                hw_peer.set_peer_access(session.gpus[x].ctx, session.gpus[y].ctx, on and can)
            refused = None
            if on and not can:
                refused = (
                    f"cuDeviceCanAccessPeer({a}, {b}) or ({b}, {a}) is 0: the driver offers no peer access "
                    "between these GPUs (P2P not supported on this path or refused in this VM)"
                )
            phase = PairPhase(session, bufs, tuple(ordered), on, refused)
            for case in cases:
                results.extend(case.run(phase, step))
    finally:
        _free(session, bufs)
    return results


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


# --------------------------------------------------------------------------------------------
# the cases
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PeerPlan:
    """What a peer case's step count depends on: the options and how many ordered pairs run."""

    opts: PeerBenchOptions
    n_pairs: int


@dataclass(frozen=True)
class PairPhase:
    """One unordered pair's buffers with peer access off or on: where each per-pair case runs its part.

    ``refused`` is why peer access cannot be on (the WAIVED reason of the cases that need it), else None.
    """

    session: _Session
    bufs: _PairBuffers
    ordered: tuple[tuple[int, int], ...]
    on: bool
    refused: Optional[str] = None


@dataclass(frozen=True)
class AfterPairs:
    """Every pair done: what a case that spans the pairs (all-to-one) runs on."""

    session: _Session
    pairs: tuple[tuple[int, int], ...]
    ordinals: tuple[int, ...]


PeerStage = Union[PairPhase, AfterPairs]
Work = Callable[[PairPhase], Iterator[Callable[[], Any]]]
Counter = Callable[[PeerPlan], int]


def _steps_if_selected(key: str, count: Callable[[PeerPlan], int], plan: PeerPlan) -> int:
    return count(plan) if key in plan.opts.keys else 0


def _run_per_pair(key: str, phases: tuple[bool, ...], work: Work, stage: PeerStage, step: Step) -> list:
    """A per-pair case's part of ``stage``: a step and a row (or rows) per unit of ``work``.

    A case that runs only with peer access on is one WAIVED row per pair where the driver refuses it.
    """
    if not isinstance(stage, PairPhase) or stage.on not in phases:
        return []
    if stage.refused is not None:
        if phases != (True,):
            return []
        a, b = stage.ordered[0]
        params = stage.session.params(min(a, b), max(a, b))
        return [BenchResult.waived(key, stage.refused, provider="cuda", params=params)]
    out: list[BenchResult] = []
    for unit in work(stage):
        step(key)
        out.extend(run_case(key, unit))
    return out


def _per_pair(
    key: str,
    description: str,
    part: str,
    phases: tuple[bool, ...],
    count: Callable[[PeerPlan], int],
    work: Work,
) -> Case:
    """A case that runs on each pair, in the phases (peer access off, on) it names."""
    return Case(
        key,
        description,
        Needs.GPU_PAIR,
        part,
        PeerParams(),
        functools.partial(_steps_if_selected, key, count),
        functools.partial(_run_per_pair, key, phases, work),
    )


def _per_size(plan: PeerPlan) -> int:
    return plan.n_pairs * len(plan.opts.sizes)


def _per_pair_once(plan: PeerPlan) -> int:
    return plan.n_pairs


def _ce_work(x: PairPhase) -> Iterator[Callable[[], Any]]:
    for src, dst in x.ordered:
        for n in x.session.opts.sizes:
            yield functools.partial(ce_case, x.session, x.bufs, src, dst, n, x.on)


def _bidir_work(x: PairPhase) -> Iterator[Callable[[], Any]]:
    src, dst = x.ordered[0]
    for n in x.session.opts.sizes:
        yield functools.partial(bidir_case, x.session, x.bufs, src, dst, n, x.on)


def _sm_work(key: str, x: PairPhase) -> Iterator[Callable[[], Any]]:
    for src, dst in x.ordered:
        for n in x.session.opts.sizes:
            yield functools.partial(sm_case, x.session, x.bufs, key, src, dst, n)


def _each_ordered(body: Callable[[PairPhase, int, int], Any], x: PairPhase) -> Iterator[Callable[[], Any]]:
    for src, dst in x.ordered:
        yield functools.partial(body, x, src, dst)


def _all_to_one_run(stage: PeerStage, step: Step) -> list[BenchResult]:
    """Every other GPU's copy engine into each selected destination at once, a step per destination."""
    if not isinstance(stage, AfterPairs):
        return []
    out: list[BenchResult] = []
    for d in sorted({d for _, d in stage.pairs}):
        step(ALL_TO_ONE_KEY)
        sources = [o for o in stage.ordinals if o != d]
        out.extend(
            run_case(
                ALL_TO_ONE_KEY,
                functools.partial(all_to_one_results, stage.session, d, sources),
                provider="cuda",
                params=PeerParams(dst_gpu=d, sources=len(sources), op="all_to_one"),
            )
        )
    return out


def _after_pairs(body: Callable[..., list[BenchResult]], stage: PeerStage, step: Step) -> list[BenchResult]:
    """A case that runs once every pair is done (all to all, one to all): nothing in a pair's phase."""
    if not isinstance(stage, AfterPairs):
        return []
    return body(stage.session, stage.pairs, stage.ordinals, step)


def gpus_of(plan: PeerPlan) -> int:
    """How many GPUs ``plan``'s ordered pairs span: n where n(n-1) = pairs (every pair), else the pairs."""
    n = round((1 + (1 + 4 * plan.n_pairs) ** 0.5) / 2)
    return n if n * (n - 1) == plan.n_pairs else plan.n_pairs


_OFF, _ON, _BOTH = (False,), (True,), (False, True)


def _ce_case_object(on: bool) -> Case:
    tag = "on" if on else "off"
    how = "on (NVLink or PCIe peer-to-peer)" if on else "off (staged through host memory)"
    return _per_pair(
        f"peer_ce_{tag}", f"copy engine GPU -> GPU with peer access {how}", "ce", (on,), _per_size, _ce_work
    )


def _bidir_steps(plan: PeerPlan) -> int:
    """Both ways at once runs once per unordered pair (two ordered pairs), a step per size."""
    return -(-plan.n_pairs // 2) * len(plan.opts.sizes)


def _latency_work(x: PairPhase) -> Iterator[Callable[[], Any]]:
    return _each_ordered(lambda p, s, d: latency_case(p.session, p.bufs, s, d, p.on), x)


#: peer-bench's cases, in the order each pair runs them (per phase: peer access off, then on), then
#: all-to-one after every pair. ``--list``, selection, progress and the run read this tuple.
CASES: tuple[Case, ...] = (
    _ce_case_object(False),
    _ce_case_object(True),
    *(
        _per_pair(
            f"peer_ce_bidir_{'on' if on else 'off'}",
            f"copy engines both ways at once, peer access {'on' if on else 'off'}",
            "ce",
            (on,),
            _bidir_steps,
            _bidir_work,
        )
        for on in (False, True)
    ),
    _per_pair(
        "peer_sm_read",
        "a kernel on the destination GPU reads the peer's memory through UVA",
        "sm",
        _ON,
        _per_size,
        functools.partial(_sm_work, "peer_sm_read"),
    ),
    _per_pair(
        "peer_sm_write",
        "a kernel on the source GPU writes into the peer's memory through UVA",
        "sm",
        _ON,
        _per_size,
        functools.partial(_sm_work, "peer_sm_write"),
    ),
    _per_pair(
        REFERENCE_KEY,
        "the same peer copy through CuPy's cudaMemcpyPeerAsync, same buffers (same-run reference)",
        "reference",
        _BOTH,
        lambda plan: 2 * plan.n_pairs,  # peer access off and on
        functools.partial(_each_ordered, lambda p, s, d: reference_case(p.session, p.bufs, s, d, p.on)),
    ),
    *(
        _per_pair(
            f"peer_lat_ce_{'on' if on else 'off'}",
            f"latency of one 4-byte peer copy at a time, peer access {'on' if on else 'off'} (us, median)",
            "latency",
            (on,),
            _per_pair_once,
            _latency_work,
        )
        for on in (False, True)
    ),
    _per_pair(
        SM_LATENCY_KEY,
        "SM round trip: one dependent 8-byte load from the peer's memory at a time (pointer chase, us)",
        "latency",
        _ON,
        _per_pair_once,
        functools.partial(_each_ordered, lambda p, s, d: sm_latency_case(p.session, s, d)),
    ),
    Case(
        ALL_TO_ONE_KEY,
        "every other GPU's copy engine into one GPU at once, peer access on (one source on two GPUs)",
        Needs.GPU_PAIR,
        "ce",
        PeerParams(op="all_to_one"),
        functools.partial(_steps_if_selected, ALL_TO_ONE_KEY, gpus_of),
        _all_to_one_run,
    ),
    Case(
        ALL_TO_ALL_KEY,
        "every GPU's copy engines into every other GPU at once, peer access on; once per run "
        "(on two GPUs: the pair both ways at once)",
        Needs.GPU_PAIR,
        "ce",
        PeerParams(op="all_to_all"),
        functools.partial(_steps_if_selected, ALL_TO_ALL_KEY, lambda plan: 1),
        functools.partial(_after_pairs, all_to_all_run),
    ),
    Case(
        ONE_TO_ALL_KEY,
        "one GPU's copy engines into every other GPU at once, peer access on, per source "
        "(on two GPUs: the pair's copy)",
        Needs.GPU_PAIR,
        "ce",
        PeerParams(op="one_to_all"),
        functools.partial(_steps_if_selected, ONE_TO_ALL_KEY, gpus_of),
        functools.partial(_after_pairs, one_to_all_run),
    ),
    _per_pair(
        BLOCKS_CASE,
        "many small blocks GPU -> GPU: one call each, batched, coalesced, and a gather kernel",
        "blocks",
        _ON,
        _per_pair_once,
        functools.partial(_each_ordered, lambda p, s, d: block_results(p.session, s, d)),
    ),
)
ALL_KEYS: tuple[str, ...] = tuple(c.key for c in CASES)
