"""mr-bench's registration cost: register/deregister time per size, and register once vs per transfer.

One ``mr_reg_<kind>_<reg>`` case gives two rows per size: ``mr_reg_*`` (ibv_reg_mr or the dma-buf
path, then ibv_dereg_mr, wall clock) and ``mr_reuse_*`` (one WRITE with MRs registered once against
MRs registered and released around every transfer). Its case object is in bench/mr.py's ``CASES``.
"""

from __future__ import annotations

import contextlib
import functools
import time

from gdrdiag.bench.mr_config import POISON, SOFT_NOTE, ProgressFn, case_key
from gdrdiag.bench.mr_setup import (
    MrSession,
    alloc_for_sweep,
    checked_result,
    describe,
    ok_status,
    register_region,
    wire_loopback,
)
from gdrdiag.bench.runner import run_case
from gdrdiag.errors import GdrdiagError
from gdrdiag.hw import verbs as v
from gdrdiag.hw.memory import MemoryKind, first_mismatch, pattern
from gdrdiag.model.params import MrMetrics, MrParams
from gdrdiag.model.results import BenchResult, SampleStats
from gdrdiag.model.vocabulary import RegPath
from gdrdiag.units import GiB, format_size


def reg_case(
    key: str, s: MrSession, kind: MemoryKind, reg_path: str, progress: ProgressFn
) -> list[BenchResult]:
    """Case ``key`` (``mr_reg_<kind>_<reg>``): both rows at every ``--reg-sizes`` size, a step per size.

    Each row runs on its own (an ERROR or WAIVED row for that size, the sweep goes on); the reuse
    rows carry the same kind and path under ``mr_reuse_<kind>_<reg>``.
    """
    provider = s.ep.provider
    reuse_key = case_key("mr_reuse", kind, reg_path)
    results = []
    for size in s.cfg.reg_sizes:
        if progress:
            progress(f"{key} {format_size(size)}")
        results.extend(
            run_case(
                key,
                functools.partial(_reg_one, key, s, kind, reg_path, size, provider),
                params=MrParams(memory=kind, reg_path=RegPath(reg_path), size_bytes=size),
                provider=provider,
            )
        )
        results.extend(
            run_case(
                reuse_key,
                functools.partial(_reuse_one, reuse_key, s, kind, reg_path, size, provider),
                params=MrParams(memory=kind, reg_path=RegPath(reg_path), size_bytes=size),
                provider=provider,
            )
        )
    return results


def _reg_one(
    key: str, s: MrSession, kind: MemoryKind, reg_path: str, size: int, provider: str
) -> BenchResult:
    cfg, ep, gpus = s.cfg, s.ep, s.gpus
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
    key: str, s: MrSession, kind: MemoryKind, reg_path: str, size: int, provider: str
) -> BenchResult:
    """Per-transfer time of one WRITE: MRs registered once vs registered and released per transfer."""
    cfg, ep, gpus = s.cfg, s.ep, s.gpus
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
