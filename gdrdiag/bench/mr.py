r"""MR registration cost and RDMA WRITE loops: memory kind x registration path x access flags.

Cases (keys; ``<kind>`` uses ``_`` for ``-``, ``<reg>`` is ``mr`` or ``dmabuf``):

- ``rdma_write_<kind>_<reg>``        bandwidth loop (size, QPs, RO ... in params); unit Gb/s
- ``rdma_write_lat_<kind>_<reg>``    one WRITE at a time, post -> completion; unit us
- ``rdma_write_blocks_<kind>_<reg>`` 10,000 blocks as one WR each, as post lists, as one WR
- ``mr_reg_<kind>_<reg>``            register / deregister time per size; unit us
- ``mr_reuse_<kind>_<reg>``          per-transfer time: register once vs register per transfer
- ``mr_loop_cost``                   the loop's own cost: soft provider, no bytes moved; unit WR/s

Every WRITE result states where the bytes land (``landing``: gpu or host, ``lands_in`` in words),
the provider, and whether the payload was verified: the destination is poisoned before each
measured run and every byte compared with the source pattern after it (device memory included).
Resources are owned by ``ExitStack``\\ s in creation order, so QPs and MRs are released before
the PD and before the memory under them, on every exit path (Ctrl-C included).
"""

from __future__ import annotations

import contextlib
import dataclasses
import time
from typing import Callable, Optional, Sequence

from gdrdiag.bench import rdma_math
from gdrdiag.bench.mr_config import (  # noqa: F401 - mr-bench's public names, re-exported
    DEFAULT_ACCESS,
    POISON,
    REG_PATHS,
    SOFT_NOTE,
    SWEEP_SIZES,
    MrBenchConfig,
    ProgressFn,
    case_key,
    landing,
    matrix_config,
)
from gdrdiag.bench.mr_loop_cost import loop_cost  # noqa: F401 - re-exported
from gdrdiag.bench.mr_setup import (  # noqa: F401 - re-exported
    Endpoints,
    GpuScope,
    Region,
    alloc_for_sweep,
    allocate_region,
    base_params,
    bw_method,
    bw_result,
    checked_result,
    describe,
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
from gdrdiag.hw.memory import MemoryKind, first_mismatch, pattern
from gdrdiag.model.params import MrMetrics, MrParams
from gdrdiag.model.results import BenchResult, SampleStats
from gdrdiag.model.vocabulary import AccessFlags, RegPath, RelaxedOrdering
from gdrdiag.units import GiB, format_size

# -- where the bytes land ----------------------------------------------------------------------------


# -- memory + registration -------------------------------------------------------------------------------


# -- the loopback / two-machine plumbing --------------------------------------------------------------------


# -- bandwidth (plain, sweep, RO A/B, matrix) -------------------------------------------------------------


def _bw_case(
    cfg: MrBenchConfig,
    ep: Endpoints,
    gpus: GpuScope,
    kind: MemoryKind,
    reg_path: str,
    progress: ProgressFn,
    tick: Optional[Callable[[], None]],
) -> list[BenchResult]:
    """One (kind, reg path): buffers and QPs set up once; every size (and RO setting) measured."""
    provider = ep.provider
    key = case_key("rdma_write", kind, reg_path)
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
    cfg: MrBenchConfig,
    ep: Endpoints,
    gpus: GpuScope,
    kind: MemoryKind,
    reg_path: str,
    progress: ProgressFn,
    tick: Optional[Callable[[], None]],
) -> list[BenchResult]:
    provider = ep.provider
    key = case_key("rdma_write_lat", kind, reg_path)
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
    cfg: MrBenchConfig,
    ep: Endpoints,
    gpus: GpuScope,
    kind: MemoryKind,
    reg_path: str,
    progress: ProgressFn,
    tick: Optional[Callable[[], None]],
) -> list[BenchResult]:
    """N blocks of one size moved three ways: one WR each, posted lists, one coalesced WR."""
    provider = ep.provider
    key = case_key("rdma_write_blocks", kind, reg_path)
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


# -- registration cost --------------------------------------------------------------------------------------


def _reg_case(
    cfg: MrBenchConfig, ep: Endpoints, gpus: GpuScope, kind: MemoryKind, reg_path: str, progress: ProgressFn
) -> list[BenchResult]:
    provider = ep.provider
    results = []
    for size in cfg.reg_sizes:
        if progress:
            progress(f"{case_key('mr_reg', kind, reg_path)} {format_size(size)}")
        results.extend(
            run_case(
                case_key("mr_reg", kind, reg_path),
                lambda s=size: _reg_one(cfg, ep, gpus, kind, reg_path, s, provider),
                params=MrParams(memory=kind, reg_path=RegPath(reg_path), size_bytes=size),
                provider=provider,
            )
        )
        results.extend(
            run_case(
                case_key("mr_reuse", kind, reg_path),
                lambda s=size: _reuse_one(cfg, ep, gpus, kind, reg_path, s, provider),
                params=MrParams(memory=kind, reg_path=RegPath(reg_path), size_bytes=size),
                provider=provider,
            )
        )
    return results


def _reg_one(
    cfg: MrBenchConfig,
    ep: Endpoints,
    gpus: GpuScope,
    kind: MemoryKind,
    reg_path: str,
    size: int,
    provider: str,
) -> BenchResult:
    key = case_key("mr_reg", kind, reg_path)
    with contextlib.ExitStack() as stack:
        buf = alloc_for_sweep(stack, gpus, kind, size)
        reg_us, dereg_us = [], []
        for i in range(cfg.reg_iterations + 1):
            t0 = time.perf_counter()
            mr = register_region(ep.req_pd, buf, reg_path, size, cfg.single_access)
            t1 = time.perf_counter()
            mr.close()
            t2 = time.perf_counter()
            if i:  # the first registration of a range also faults its pages in: warm-up
                reg_us.append((t1 - t0) * 1e6)
                dereg_us.append((t2 - t1) * 1e6)
    dereg_sorted = sorted(dereg_us)
    method = (
        "wall clock around "
        f"ibv_reg_mr{'/cuMemGetHandleForAddressRange+ibv_reg_dmabuf_mr' if reg_path == 'dmabuf' else ''} "
        f"and ibv_dereg_mr on one buffer; 1 warm-up, {cfg.reg_iterations} samples, median"
    )
    return BenchResult(
        key=key,
        status=ok_status(),
        description=describe(kind, reg_path, provider, f"MR registration of {format_size(size)}"),
        params=MrParams(memory=kind, reg_path=RegPath(reg_path), size_bytes=size, access=cfg.single_access),
        unit="us",
        samples=tuple(reg_us),
        stats=SampleStats.of(reg_us),
        metrics=MrMetrics(
            dereg_us=dereg_sorted[len(dereg_sorted) // 2],
            reg_us_per_gib=SampleStats.of(reg_us).median * GiB / size,
        ),
        method=f"{method}; {SOFT_NOTE}" if provider == "soft" else method,
        provider=provider,
    )


def _reuse_one(
    cfg: MrBenchConfig,
    ep: Endpoints,
    gpus: GpuScope,
    kind: MemoryKind,
    reg_path: str,
    size: int,
    provider: str,
) -> BenchResult:
    """Per-transfer time of one WRITE: MRs registered once vs registered and released per transfer."""
    key = case_key("mr_reuse", kind, reg_path)
    n = cfg.reg_iterations
    with contextlib.ExitStack() as stack:
        src_buf = alloc_for_sweep(stack, gpus, kind, size)
        dst_buf = alloc_for_sweep(stack, gpus, kind, size)
        wiring = wire_loopback(stack, ep, cfg, 1, 4)
        qp, cq = wiring.req[0], wiring.cq
        src_buf.write(pattern(size, 0x33))

        def transfer(src_mr: v.MR, dst_mr: v.MR) -> None:
            qp.post_writes([v.WriteWR(0, src_mr.addr, size, src_mr.lkey, dst_mr.addr, dst_mr.rkey, True)])
            deadline = time.perf_counter() + cfg.timeout_s
            while True:
                wcs = cq.poll(1)
                if wcs:
                    if not wcs[0].ok:
                        raise v.CompletionError(wcs[0])
                    return
                if time.perf_counter() > deadline:
                    raise GdrdiagError(f"no completion within {cfg.timeout_s:g} s")

        src_mr = register_region(ep.req_pd, src_buf, reg_path, size, cfg.single_access)
        stack.callback(src_mr.close)
        dst_mr = register_region(ep.resp_pd, dst_buf, reg_path, size, cfg.single_access)
        stack.callback(dst_mr.close)
        transfer(src_mr, dst_mr)
        reuse = []
        for _ in range(n):
            t0 = time.perf_counter()
            transfer(src_mr, dst_mr)
            reuse.append((time.perf_counter() - t0) * 1e6)
        each = []
        for _ in range(n):
            t0 = time.perf_counter()
            a = register_region(ep.req_pd, src_buf, reg_path, size, cfg.single_access)
            try:
                b = register_region(ep.resp_pd, dst_buf, reg_path, size, cfg.single_access)
                try:
                    transfer(a, b)
                finally:
                    b.close()
            finally:
                a.close()
            each.append((time.perf_counter() - t0) * 1e6)
        dst_buf.fill(POISON, size)
        transfer(src_mr, dst_mr)
        bad = first_mismatch(dst_buf.read_array(size), pattern(size, 0x33))
    r = SampleStats.of(reuse).median
    e = SampleStats.of(each).median
    method = (
        f"one signalled {format_size(size)} WRITE per transfer, wall clock; reuse: MRs registered once; "
        f"register-each: source and destination MRs registered and released around every transfer; "
        f"{n} samples each, median; samples are the register-each times"
    )
    fields = dict(
        description=describe(kind, reg_path, provider, "register once vs per transfer"),
        params=MrParams(memory=kind, reg_path=RegPath(reg_path), size_bytes=size),
        unit="us",
        samples=tuple(each),
        stats=SampleStats.of(each),
        metrics=MrMetrics(reuse_us=r, register_each_us=e, register_each_over_reuse=e / r if r > 0 else None),
        method=f"{method}; {SOFT_NOTE}" if provider == "soft" else method,
        provider=provider,
    )
    if bad is not None:
        return checked_result(key, f"payload mismatch at byte {bad}", fields)
    return checked_result(key, None, fields)


# -- the loop's own cost -----------------------------------------------------------------------------------


# -- the command's entry point -------------------------------------------------------------------------


def run(
    cfg: MrBenchConfig,
    *,
    mode: str = "bw",
    progress: ProgressFn = None,
    tick: Optional[Callable[[], None]] = None,
) -> list[BenchResult]:
    """Run every (kind, registration path) case of ``mode`` (bw | latency | blocks | reg).

    Device problems (no RDMA device) raise NotSupported before any case; a case that cannot
    run here becomes WAIVED with the reason, a failing one ERROR; bad input raises UserInputError.
    A case with device or managed memory records the GPU's CUDA ordinal (``cfg.gpu``).
    """
    cfg.validate()
    results: list[BenchResult] = []
    with contextlib.ExitStack() as stack:
        ep = Endpoints(cfg, stack)
        where = stack.enter_context(placement.applied(placement.plan_for_rdma(cfg.numa, ep.req_dev.name)))
        gpus = GpuScope(cfg.gpu, needs_gpu(cfg))
        stack.callback(gpus.close)
        for kind in cfg.kinds:
            for reg in cfg.reg_paths:
                prefix = {"bw": "rdma_write", "latency": "rdma_write_lat", "blocks": "rdma_write_blocks"}.get(
                    mode, "mr_reg"
                )
                if cfg.only is not None and case_key(prefix, kind, reg) not in cfg.only:
                    continue
                if mode == "reg":
                    # A kind WAIVED here (no GPU) takes no progress steps: the CLI planned none for it.
                    results.extend(_reg_case(cfg, ep, gpus, kind, reg, progress if gpus.runs(kind) else None))
                    continue
                key_prefix = {"bw": "rdma_write", "latency": "rdma_write_lat", "blocks": "rdma_write_blocks"}[
                    mode
                ]
                fn = {"bw": _bw_case, "latency": _lat_case, "blocks": _blocks_case}[mode]
                params = MrParams(
                    memory=kind,
                    reg_path=RegPath(reg),
                    topology="loopback",
                    landing=landing(kind, reg, ep.provider)[0],
                )
                results.extend(
                    run_case(
                        case_key(key_prefix, kind, reg),
                        lambda k=kind, r=reg, f=fn: f(cfg, ep, gpus, k, r, progress, tick),
                        params=params,
                        provider=ep.provider,
                    )
                )
    return with_placement(on_gpu(results, cfg.gpu, uses_local_gpu), where)


# -- two machines -------------------------------------------------------------------------------------------
