r"""MR registration cost and RDMA WRITE loops: memory kind x registration path x access flags.

Cases (keys; ``<kind>`` uses ``_`` for ``-``, ``<reg>`` is ``mr`` or ``dmabuf``):

- ``rdma_write_<kind>_<reg>``        bandwidth loop (size, QPs, RO ... in params); unit Gb/s
- ``rdma_write_lat_<kind>_<reg>``    one WRITE at a time, post -> completion; unit us
- ``rdma_write_blocks_<kind>_<reg>`` 10,000 blocks as one WR each, as post lists, as one WR
- ``mr_reg_<kind>_<reg>``            register / deregister time per size; unit us
- ``mr_reuse_<kind>_<reg>``          per-transfer time: register once vs register per transfer
- ``mr_loop_cost``                   the loop's own cost: soft provider, no bytes moved; unit WR/s

Each case is one object in :data:`CASES` (``bench/cases.py``'s ``Case``: key, typed ``MrParams``
template, its :class:`MrMode`, steps, run); ``--list``, selection, the progress total and
:func:`run` read that tuple. The registration-cost case's body is in ``mr_reg_cost.py``.

Every WRITE result states where the bytes land (``landing``: gpu or host, ``lands_in`` in words),
the provider, and whether the payload was verified: the destination is poisoned before each
measured run and every byte compared with the source pattern after it (device memory included).
Resources are owned by ``ExitStack``\\ s in creation order, so QPs and MRs are released before
the PD and before the memory under them, on every exit path (Ctrl-C included).
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
from dataclasses import dataclass
from typing import Any, Callable, Optional, Sequence, Union

from gdrdiag.bench import rdma_math
from gdrdiag.bench.cases import Case, Needs, Step
from gdrdiag.bench.mr_config import (  # noqa: F401 - mr-bench's public names, re-exported
    DEFAULT_ACCESS,
    POISON,
    REG_PATHS,
    SOFT_NOTE,
    SWEEP_SIZES,
    MrBenchConfig,
    MrMode,
    ProgressFn,
    case_key,
    landing,
    matrix_config,
)
from gdrdiag.bench.mr_loop_cost import loop_cost  # noqa: F401 - re-exported
from gdrdiag.bench.mr_reg_cost import reg_case
from gdrdiag.bench.mr_setup import (  # noqa: F401 - re-exported
    Endpoints,
    GpuScope,
    MrSession,
    Region,
    alloc_for_sweep,
    allocate_region,
    base_params,
    bw_method,
    bw_result,
    checked_result,
    describe,
    dmabuf_exports,
    fill_sources,
    lane_of_lists,
    loopback_regions,
    needs_gpu,
    ok_status,
    register_region,
    reregister,
    run_settings_of,
    uses_local_gpu,
    verify,
    wire_loopback,
    write_wrs,
)
from gdrdiag.bench.mr_twohost import run_client, serve  # noqa: F401 - re-exported
from gdrdiag.bench.rdma_loop import LoopOutcome, LoopTimeout, build_lanes, run_bw, run_latency
from gdrdiag.bench.runner import note_partial, on_gpu, run_case, with_placement
from gdrdiag.errors import GdrdiagError
from gdrdiag.hw import placement
from gdrdiag.hw import verbs as v
from gdrdiag.hw.memory import MemoryKind
from gdrdiag.model.params import MrMetrics, MrParams
from gdrdiag.model.results import BenchResult, SampleStats
from gdrdiag.model.vocabulary import AccessFlags, RegPath, RelaxedOrdering
from gdrdiag.model.words import NumaRequest
from gdrdiag.units import format_size

# -- where the bytes land ----------------------------------------------------------------------------


# -- memory + registration -------------------------------------------------------------------------------


# -- the loopback / two-machine plumbing --------------------------------------------------------------------


# -- bandwidth (plain, sweep, RO A/B, matrix) -------------------------------------------------------------


def _bw_case(
    key: str, s: MrSession, kind: MemoryKind, reg_path: str, progress: ProgressFn
) -> list[BenchResult]:
    """One (kind, reg path): buffers and QPs set up once; every size (and RO setting) measured."""
    cfg, ep, gpus, tick = s.cfg, s.ep, s.gpus, s.tick
    provider = ep.provider
    slot = max(cfg.sizes)
    arms = cfg.arm_access
    rx = cfg.tx_depth if cfg.write_with_imm else 1
    signal_every = rdma_math.signal_interval(cfg.tx_depth, cfg.post_list, cfg.cq_mod)
    results: list[BenchResult] = []
    with contextlib.ExitStack() as stack:
        regions = _ab_regions(stack, cfg, ep, gpus, kind, reg_path, slot * cfg.qps, arms)
        wiring = wire_loopback(stack, ep, cfg, cfg.qps, cfg.tx_depth, rx)
        if cfg.write_with_imm:
            for qp in wiring.resp:
                qp.post_recv(rx, regions[arms[0]][1].mr)
        for size in cfg.sizes:
            if progress:
                progress(f"{key} size {format_size(size)}")
            try:
                outcomes, failure = _measure_size(cfg, wiring, regions, slot, size, signal_every, tick)
            except (LoopTimeout, v.CompletionError) as exc:
                # This size failed (a timeout or an error completion leaves the QPs unusable):
                # keep every size already measured, record this one as an ERROR with its own
                # reason, and stop the sweep here instead of discarding the whole case.
                results.extend(_size_error(cfg, kind, reg_path, provider, key, size, arms, exc))
                break
            for arm in arms:
                params = dataclasses.replace(
                    base_params(cfg, kind, reg_path, provider, "loopback"),
                    size_bytes=size,
                    access=AccessFlags(regions[arm][1].mr.access),
                    mode="bw",
                    write_with_imm=cfg.write_with_imm,
                )
                settings = run_settings_of(
                    cfg,
                    ro_ab=cfg.ro is RelaxedOrdering.AB,
                    iterations=cfg.iterations,
                    duration_s=cfg.duration,
                )
                results.append(
                    bw_result(
                        key,
                        params,
                        settings,
                        outcomes[arm],
                        failure,
                        provider,
                        describe(kind, reg_path, provider, "RDMA WRITE loopback"),
                        bw_method(cfg, signal_every, provider),
                    )
                )
            note_partial(results)  # a Ctrl-C later in the sweep keeps this size
    return results


def _ab_regions(
    stack,
    cfg: MrBenchConfig,
    ep: Endpoints,
    gpus: GpuScope,
    kind: MemoryKind,
    reg_path: str,
    nbytes: int,
    arms: Sequence[AccessFlags],
) -> dict:
    """{access flags of an RO arm: (source, destination)}: one pair of buffers, registered once per arm."""
    src_reg = reg_path if (cfg.src_kind or kind) is kind else "mr"
    regions: dict = {}
    for access in arms:
        if not regions:
            src, dst = loopback_regions(stack, cfg, ep, gpus, kind, reg_path, nbytes, access)
        else:  # same buffers, registered again with the other access flags
            first_src, first_dst = next(iter(regions.values()))
            src = reregister(stack, ep.req_pd, first_src, src_reg, access)
            dst = reregister(stack, ep.resp_pd, first_dst, reg_path, access)
        regions[access] = (src, dst)
    return regions


def _measure_size(
    cfg: MrBenchConfig, wiring, regions: dict, slot: int, size: int, signal_every: int, tick
) -> tuple[dict[AccessFlags, list[LoopOutcome]], Optional[str]]:
    """Warm up, then ``repeats`` runs per RO setting, interleaved so drift hits both; every run verified."""
    lanes, expected = {}, None
    for arm, (src, dst) in regions.items():
        expected = fill_sources(src, cfg.qps, slot, size)
        wrs = [write_wrs(src, dst, i, slot, size, cfg.post_list, cfg.write_with_imm) for i in range(cfg.qps)]
        lanes[arm] = build_lanes(wiring.req, wrs)
    first_dst = next(iter(regions.values()))[1]
    recv = (wiring.rcq, wiring.resp, first_dst.mr) if cfg.write_with_imm else None
    loop = dict(
        tx_depth=cfg.tx_depth, signal_every=signal_every, timeout_s=cfg.timeout_s, recv=recv, tick=tick
    )
    for arm in regions:  # warm-up (not measured): a few signalled rounds through every MR
        warm = max(cfg.post_list, min(cfg.iterations or 256, signal_every * cfg.post_list * 2))
        run_bw(lanes[arm], wiring.cq, lists_total=warm // cfg.post_list, **loop)
    outcomes: dict[AccessFlags, list[LoopOutcome]] = {arm: [] for arm in regions}
    failure = None
    for _ in range(cfg.repeats):
        for arm, (_src, dst) in regions.items():
            dst.buffer.fill(POISON, dst.nbytes)
            lists = (cfg.iterations // cfg.post_list) if cfg.iterations else None
            outcomes[arm].append(
                run_bw(lanes[arm], wiring.cq, lists_total=lists, duration=cfg.duration, **loop)
            )
            bad = verify(dst, expected, slot)  # type: ignore[arg-type]
            failure = failure or bad
    return outcomes, failure


def _size_error(
    cfg: "MrBenchConfig",
    kind: MemoryKind,
    reg_path: str,
    provider: str,
    key: str,
    size: int,
    arms: Sequence[AccessFlags],
    exc: GdrdiagError,
) -> list[BenchResult]:
    """ERROR results for the one size of a loopback sweep that failed (earlier sizes stand)."""
    later = [s for s in cfg.sizes if s > size]
    rest = f"; the {len(later)} larger size(s) were not run" if later else ""
    out = []
    for access in arms:
        params = dataclasses.replace(
            base_params(cfg, kind, reg_path, provider, "loopback"),
            size_bytes=size,
            access=access,
            mode="bw",
            write_with_imm=cfg.write_with_imm,
        )
        out.append(
            BenchResult.error(
                key,
                f"size {format_size(size)}: {exc}{rest}",
                params=params,
                settings=run_settings_of(cfg, ro_ab=cfg.ro is RelaxedOrdering.AB),
                provider=provider,
                description=describe(kind, reg_path, provider, "RDMA WRITE loopback"),
            )
        )
    return out


# -- latency ------------------------------------------------------------------------------------------------


def _lat_case(
    key: str, s: MrSession, kind: MemoryKind, reg_path: str, progress: ProgressFn
) -> list[BenchResult]:
    cfg, ep, gpus, tick = s.cfg, s.ep, s.gpus, s.tick
    provider = ep.provider
    iterations = cfg.iterations or 1000
    results = []
    slot = max(cfg.sizes)
    with contextlib.ExitStack() as stack:
        src, dst = loopback_regions(stack, cfg, ep, gpus, kind, reg_path, slot, cfg.single_access)
        wiring = wire_loopback(stack, ep, cfg, 1, max(cfg.tx_depth, 1))
        for size in cfg.sizes:
            if progress:
                progress(f"{key} size {format_size(size)}")
            expected = fill_sources(src, 1, slot, size)
            dst.buffer.fill(POISON, dst.nbytes)
            wr = write_wrs(src, dst, 0, slot, size, 1)[0]
            run_latency(
                wiring.req[0], wiring.cq, wr, iterations=min(100, iterations), timeout_s=cfg.timeout_s
            )
            samples, out = run_latency(
                wiring.req[0], wiring.cq, wr, iterations=iterations, timeout_s=cfg.timeout_s, tick=tick
            )
            bad = verify(dst, expected, slot)
            us = tuple(s * 1e6 for s in samples)
            params = dataclasses.replace(
                base_params(cfg, kind, reg_path, provider, "loopback"),
                size_bytes=size,
                qps=1,
                access=AccessFlags(dst.mr.access),
                mode="latency",
            )
            metrics = MrMetrics(
                **rdma_math.latency_summary_us(samples), cpu_us_per_msg=out.cpu_seconds / out.messages * 1e6
            )
            method = (
                f"one signalled RDMA WRITE outstanding at a time; each sample is ibv_post_send -> its "
                f"completion polled ({'CLOCK_MONOTONIC in C' if provider == 'native' else 'perf_counter'}), "
                f"not ib_write_lat's half round trip; {iterations} "
                f"samples after 100 warm-up, all kept; payload checked after the run"
            )
            fields = dict(
                description=describe(kind, reg_path, provider, "RDMA WRITE completion latency"),
                params=params,
                settings=run_settings_of(cfg, iterations=iterations),
                unit="us",
                samples=us,
                stats=SampleStats.of(us),
                metrics=metrics,
                method=f"{method}; {SOFT_NOTE}" if provider == "soft" else method,
                provider=provider,
            )
            results.append(checked_result(key, bad, fields))
            note_partial(results)
    return results


# -- block mode --------------------------------------------------------------------------------


def _blocks_case(
    key: str, s: MrSession, kind: MemoryKind, reg_path: str, progress: ProgressFn
) -> list[BenchResult]:
    """N blocks of one size moved three ways: one WR each, posted lists, one coalesced WR."""
    cfg, ep, gpus, tick = s.cfg, s.ep, s.gpus, s.tick
    provider = ep.provider
    nblocks = cfg.blocks or 10000
    size = cfg.sizes[0]
    total = nblocks * size
    plist = cfg.post_list if cfg.post_list > 1 else min(32, cfg.tx_depth)
    results = []
    with contextlib.ExitStack() as stack:
        src, dst = loopback_regions(stack, cfg, ep, gpus, kind, reg_path, total, cfg.single_access)
        wiring = wire_loopback(stack, ep, cfg, 1, cfg.tx_depth)
        expected = fill_sources(src, 1, total, total)
        blocks = [
            v.WriteWR(0, src.addr(i * size), size, src.mr.lkey, dst.addr(i * size), dst.mr.rkey, False)
            for i in range(nblocks)
        ]
        if total > ep.req_dev.port_info().max_msg_size:
            coalesced = None
        else:
            coalesced = [v.WriteWR(0, src.addr(0), total, src.mr.lkey, dst.addr(0), dst.mr.rkey, False)]
        variants = [
            ("wr_per_block", 1, [blocks[i : i + 1] for i in range(nblocks)]),
            ("post_list", plist, [blocks[i : i + plist] for i in range(0, nblocks, plist)]),
        ]
        if coalesced:
            variants.append(("coalesced", 1, [coalesced]))
        for variant, pl, lists in variants:
            if progress:
                progress(f"{key} {variant}")
            signal_every = rdma_math.signal_interval(cfg.tx_depth, min(pl, cfg.tx_depth), cfg.cq_mod)
            lane = lane_of_lists(wiring.req[0], lists)
            outs = []
            failure = None
            for _ in range(cfg.repeats):
                dst.buffer.fill(POISON, dst.nbytes)
                outs.append(
                    run_bw(
                        [lane],
                        wiring.cq,
                        tx_depth=cfg.tx_depth,
                        signal_every=signal_every,
                        lists_total=len(lists),
                        timeout_s=cfg.timeout_s,
                        tick=tick,
                    )
                )
                failure = failure or verify(dst, expected, total)
            params = dataclasses.replace(
                base_params(cfg, kind, reg_path, provider, "loopback"),
                size_bytes=size,
                blocks=nblocks,
                variant=variant,
                qps=1,
                post_list=pl,
                mode="blocks",
            )
            results.append(_blocks_result(cfg, key, params, outs, lists, failure, provider))
    return results


def _blocks_result(
    cfg: MrBenchConfig,
    key: str,
    params: MrParams,
    outs: list[LoopOutcome],
    lists: list,
    failure: Optional[str],
    provider: str,
) -> BenchResult:
    """One block-mode variant: time per block, the blocks' payload rate, CPU cost per block."""
    nblocks, size, variant = params.blocks or 1, params.size_bytes, params.variant or ""
    samples = tuple(o.seconds / nblocks * 1e6 for o in outs)
    gb = sorted(o.gbps for o in outs)
    metrics = MrMetrics(
        gbps=gb[len(gb) // 2],
        wrs_per_set=float(sum(len(x) for x in lists)),
        total_us=sorted(o.seconds * 1e6 for o in outs)[len(outs) // 2],
        cpu_us_per_block=sorted(o.cpu_seconds / nblocks * 1e6 for o in outs)[len(outs) // 2],
    )
    method = (
        f"{nblocks} blocks of {size} B moved as {variant.replace('_', ' ')} (TX depth {cfg.tx_depth}); "
        f"time per block = first post to last completion / blocks; {cfg.repeats} run(s), median; "
        f"every byte checked"
    )
    fields = dict(
        description=describe(
            params.memory, str(params.reg_path), provider, f"RDMA WRITE of {nblocks} blocks"
        ),
        params=params,
        unit="us/block",
        samples=samples,
        stats=SampleStats.of(samples),
        metrics=metrics,
        method=f"{method}; {SOFT_NOTE}" if provider == "soft" else method,
        provider=provider,
    )
    return checked_result(key, failure, fields)


# -- the loop's own cost -----------------------------------------------------------------------------------


# -- the cases -------------------------------------------------------------------------------------------

#: The destination memory kinds of mr-bench's cases, in registry order.
MR_KINDS = (
    MemoryKind.DEVICE,
    MemoryKind.MANAGED,
    MemoryKind.PINNED,
    MemoryKind.PINNED_WC,
    MemoryKind.REGISTERED,
    MemoryKind.PAGEABLE,
)
#: A many-block case's steps: one WR per block, post lists, one coalesced WR.
BLOCK_VARIANTS = 3


@dataclass(frozen=True)
class MrPlan:
    """What mr-bench's cases count their steps against: the options, the run's mode, whether a GPU is here.

    Cases WAIVED before their first step take none, so the total is what the progress lines reach:
    the GPU kinds' cases with ``gpu_here`` False (the CLI found no GPU: a total that counted them
    ended at [23/69] for ``-a``), and WRITE cases over dma-buf into memory it cannot export. The
    executor selects with ``waived_too``: every case the options name runs, and gives its WAIVED row.
    """

    cfg: MrBenchConfig
    mode: MrMode
    gpu_here: bool = True
    waived_too: bool = False  # count the steps of cases WAIVED before their first one (selection)


def _case_steps(key: str, mode: MrMode, kind: MemoryKind, reg: RegPath, plan: MrPlan) -> int:
    """A case's steps: one per size (bw, latency), per ``--reg-sizes`` size (reg) or per block variant.

    0 where the plan does not run it: another mode, a kind or path the options do not name, a key a
    selection left out, or a GPU kind where there is no GPU. A WRITE case over dma-buf into memory
    the path cannot export is WAIVED before its first step, so it takes none (the registration-cost
    case still steps through its sizes, each WAIVED at registration).
    """
    cfg = plan.cfg
    named = plan.mode is mode and kind in cfg.kinds and reg.value in cfg.reg_paths
    if not named or (cfg.only is not None and key not in cfg.only):
        return 0
    if not plan.waived_too and kind.needs_gpu and not plan.gpu_here:
        return 0
    if mode is MrMode.REG:
        return len(cfg.reg_sizes)
    if not plan.waived_too and reg is RegPath.DMABUF and not dmabuf_exports(kind):
        return 0
    if mode is MrMode.BLOCKS:
        return BLOCK_VARIANTS
    return len(cfg.sizes)


def _loopback(key: str, kind: MemoryKind, reg: RegPath, s: MrSession, body: Callable[[], list]) -> list:
    """A loopback WRITE case's rows: a failure before its first row is one ERROR or WAIVED row."""
    params = MrParams(
        memory=kind, reg_path=reg, topology="loopback", landing=landing(kind, reg.value, s.ep.provider)[0]
    )
    return run_case(key, body, params=params, provider=s.ep.provider)


def _bw_run(key: str, kind: MemoryKind, reg: RegPath, s: MrSession, step: Step) -> list[BenchResult]:
    """Bandwidth: every size (and RO setting) through one set of buffers and QPs."""
    return _loopback(key, kind, reg, s, lambda: _bw_case(key, s, kind, reg.value, step))


def _lat_run(key: str, kind: MemoryKind, reg: RegPath, s: MrSession, step: Step) -> list[BenchResult]:
    """Latency: one WRITE outstanding at a time, every size."""
    return _loopback(key, kind, reg, s, lambda: _lat_case(key, s, kind, reg.value, step))


def _blocks_run(key: str, kind: MemoryKind, reg: RegPath, s: MrSession, step: Step) -> list[BenchResult]:
    """Many blocks of one size: one WR each, as post lists, as one WR."""
    return _loopback(key, kind, reg, s, lambda: _blocks_case(key, s, kind, reg.value, step))


def _reg_run(key: str, kind: MemoryKind, reg: RegPath, s: MrSession, step: Step) -> list[BenchResult]:
    """Registration cost: each size's rows stand on their own (``reg_case`` runs them one by one)."""
    return reg_case(key, s, kind, reg.value, step)


CaseRun = Callable[[str, MemoryKind, RegPath, MrSession, Step], list[BenchResult]]

#: Each mode's key prefix, the words its descriptions start with, and how one of its cases runs.
_MODES: tuple[tuple[MrMode, str, str, CaseRun], ...] = (
    (MrMode.BW, "rdma_write", "RDMA WRITE bandwidth into", _bw_run),
    (MrMode.LATENCY, "rdma_write_lat", "RDMA WRITE latency into", _lat_run),
    (MrMode.BLOCKS, "rdma_write_blocks", "many-block RDMA WRITEs into", _blocks_run),
    (MrMode.REG, "mr_reg", "registration cost of", _reg_run),
)


def _case(mode: MrMode, prefix: str, words: str, run: CaseRun, kind: MemoryKind, reg: RegPath) -> Case:
    """The case of one mode, destination memory kind and registration path."""
    key = case_key(prefix, kind, reg.value)
    how = "ibv_reg_mr" if reg is RegPath.MR else "a dma-buf MR"
    return Case(
        key,
        f"{words} {kind.value} memory, {how}",
        Needs.RDMA_AND_GPU if kind.needs_gpu else Needs.RDMA,
        mode,
        MrParams(memory=kind, reg_path=reg, mode=None if mode is MrMode.REG else mode.value),
        functools.partial(_case_steps, key, mode, kind, reg),
        functools.partial(run, key, kind, reg),
    )


#: mr-bench's cases, in registry order: mode x destination memory kind x registration path (dma-buf
#: into host memory is WAIVED when run: the path exports device memory only), then the loop cost.
#: ``--list``, selection, the progress total and :func:`run` read this tuple. ``mr_loop_cost`` runs
#: from ``--loop-cost``'s own options with no device (cli/mr_bench_cmd.py), not case by case.
CASES: tuple[Case, ...] = (
    *(
        _case(mode, prefix, words, body, kind, reg)
        for mode, prefix, words, body in _MODES
        for kind in MR_KINDS
        for reg in RegPath
    ),
    Case(
        "mr_loop_cost",
        "the post/poll loop's own WR rate (soft provider, no copies)",
        Needs.NOTHING,
        MrMode.LOOP,
        MrParams(),
    ),
)


def case_target(case: Case) -> tuple[MemoryKind, RegPath]:
    """The destination memory kind and registration path of a (mode, kind, path) case."""
    p = case.params
    if not isinstance(p, MrParams) or p.memory is None or p.reg_path is None:
        raise ValueError(f"{case.key} is not a memory kind x registration path case")
    return p.memory, p.reg_path


def planned_cases(plan: MrPlan) -> list[Case]:
    """The cases a run measures, in run order: those with steps, kind by kind and path by path as named.

    The options' kinds and paths are in registry order for the defaults, ``--matrix`` and a case
    selection, so this is registry order there; ``--memory pinned,device`` runs pinned first, as asked.
    """
    cfg = plan.cfg

    def order(case: Case) -> tuple[int, int]:
        kind, reg = case_target(case)
        return cfg.kinds.index(kind), cfg.reg_paths.index(reg.value)

    return sorted((c for c in CASES if c.steps(plan) > 0), key=order)


def planned_steps(plan: MrPlan) -> int:
    """A run's progress total: the sum of its cases' steps."""
    return sum(c.steps(plan) for c in CASES)


def _uncounted(label: str) -> None:
    """The step of a case whose steps were not counted (no progress, or WAIVED here): nothing shown."""


# -- the command's entry point -------------------------------------------------------------------------


def run(
    cfg: MrBenchConfig,
    *,
    mode: Union[MrMode, str] = MrMode.BW,
    progress: ProgressFn = None,
    tick: Optional[Callable[[], None]] = None,
) -> list[BenchResult]:
    """Run the loopback cases of ``mode`` that ``cfg`` names (:func:`planned_cases`), one after another.

    Device problems (no RDMA device) raise NotSupported before any case; a case that cannot
    run here becomes WAIVED with the reason, a failing one ERROR; bad input raises UserInputError.
    A case WAIVED before its first step (a GPU kind without the GPU, dma-buf into host memory)
    takes no progress step: none was planned for it (:class:`MrPlan`). A case with device or
    managed memory records the GPU's CUDA ordinal (``cfg.gpu``).
    """
    cfg.validate()
    mode = MrMode(mode)
    cases = planned_cases(MrPlan(cfg, mode, waived_too=True))
    results: list[BenchResult] = []
    with contextlib.ExitStack() as stack:
        ep = Endpoints(cfg, stack)
        where = stack.enter_context(placement.applied(placement.plan_for_rdma(cfg.numa, ep.req_dev.name)))
        gpus = GpuScope(cfg.gpu, needs_gpu(cfg))
        stack.callback(gpus.close)
        session = MrSession(cfg, ep, gpus, tick)
        for case in cases:
            kind, _reg = case_target(case)
            counted = case.steps(MrPlan(cfg, mode, gpu_here=gpus.runs(kind))) > 0
            step = progress if progress is not None and counted else _uncounted
            results.extend(case.run(session, step))
    return with_placement(on_gpu(results, cfg.gpu, uses_local_gpu), where)


def placed_loop_cost(numa: NumaRequest, **common: Any) -> list[BenchResult]:
    """``--loop-cost``: the Python loop's own cost, then the C loop's, with no NIC and no device.

    Placed only where ``numa`` names a node (``auto`` has no device to follow); the placement is
    recorded in every row either way. ``common`` is what both loops take (duration, TX depth,
    repeats, link rate, progress).
    """
    from gdrdiag.bench.loop_cost_native import native_loop_cost

    asked = placement.plan(numa, None, "the loop", no_device="--loop-cost measures no device")
    with placement.applied(asked) as where:
        return with_placement(loop_cost(**common) + native_loop_cost(**common), where)


# -- two machines -------------------------------------------------------------------------------------------
