"""One gather-bench session on the GPU: resources, the copy-engine reference, and one measured gather case.

The session owns every GPU resource of a run (context, stream, spin gate, NVRTC module, pinned table,
device buffers) in one ExitStack, released on every exit path, Ctrl-C included. It measures one case at a
time; gather.py decides which cases run and in what order.
"""

from __future__ import annotations

import contextlib
import ctypes
from dataclasses import dataclass, replace
from typing import Optional, Sequence

from gdrdiag.bench.gather_analysis import model_metrics
from gdrdiag.bench.gather_config import CE_KEY, QUIET_SPREAD, GatherConfig
from gdrdiag.bench.gather_kernels import (
    KERNELS,
    KernelSpec,
    bulk_config,
    bytes_in_flight_per_warp,
    flat_layout_problem,
    flat_records_per_load,
    planned_records_per_step,
    round_up,
)
from gdrdiag.bench.gather_layout import (
    POISON,
    TABLE_PAD,
    Case,
    Layout,
    make_indices,
    pattern_name,
    verify_gather,
)
from gdrdiag.errors import NotSupported
from gdrdiag.model.params import GatherMetrics, GatherParams, RunSettings
from gdrdiag.model.results import BenchResult, SampleStats, Status


class GatherSession:
    """GPU resources of one run, released on every exit path (Ctrl-C included)."""

    def __init__(self, config: GatherConfig):
        self.config = config
        self.stack = contextlib.ExitStack()

    def __enter__(self) -> "GatherSession":
        from gdrdiag.bench import timing
        from gdrdiag.hw import cuda, memory, nvrtc

        try:
            self.gpu = self.stack.enter_context(cuda.GpuContext(self.config.device))
            self.facts = cuda.device_facts(self.config.device)
            self.sm_count = self.gpu.sm_count
            self.cc = int(self.gpu.arch[3:])
            self.stream = self.stack.enter_context(cuda.Stream())
            self.gate = self.stack.enter_context(timing.SpinGate(self.gpu))
            self.module = self.stack.enter_context(nvrtc.load("gather", self.gpu.arch))
            self.smem_optin = (
                cuda.device_attribute(self.gpu.device, "MAX_SHARED_MEMORY_PER_BLOCK_OPTIN") or 49152
            )
            self.memory = memory
            self.rounds = 1
            self.table = None
            self.dst = None
            self.idx = None
            self.sm_ids = self.stack.enter_context(
                memory.allocate("device", 4 * max(1, self.sm_count), gpu=self.gpu)
            )
        except BaseException:
            self.stack.close()
            raise
        return self

    def __exit__(self, *exc) -> None:
        self.stack.close()

    # -- resources sized for every case up front, so a too-large request fails before work ----
    def allocate_for(self, layouts: Sequence[Layout]) -> None:
        """Allocate (once) the pinned table, destination and index buffers the layouts need."""
        import numpy as np

        # The CE reference copies records * R bytes from the table start: the table holds at least that.
        table_bytes = max(max(lay.table_bytes, lay.nbytes + TABLE_PAD) for lay in layouts)
        dst_bytes = max(lay.records * lay.dst_stride for lay in layouts)
        idx_bytes = 4 * max(lay.records for lay in layouts)
        count_bytes = 4 * max(round_up(lay.slots, 64) + -(-lay.slots // 1024) for lay in layouts)
        ce_bytes = max(lay.nbytes for lay in layouts)
        # Everything this run needs, checked together before anything is allocated.
        self.memory.check_fits(
            dst_bytes + 4 * idx_bytes + count_bytes + (ce_bytes if self.config.paired_ce else 0),
            table_bytes,
            self.gpu,
        )
        if self.dst is None or self.dst.size < dst_bytes:
            if self.dst is not None:
                self.dst.close()
            self.dst = self.stack.enter_context(self.memory.allocate("device", dst_bytes, gpu=self.gpu))
        if self.idx is None or self.idx[0].size < idx_bytes:
            if self.idx is not None:
                for b in self.idx:
                    b.close()
            # source, destination, and the sort-first kernel's sorted copies of both
            self.idx = tuple(
                self.stack.enter_context(self.memory.allocate("device", idx_bytes, gpu=self.gpu))
                for _ in range(4)
            )
        # counts per slot, then one total per 1024-slot tile (the sort-first kernel's scan): count_bytes.
        # The paired CE copies (GatherConfig.paired_ce) land in their own buffer (ce_bytes), so the
        # gather's destination keeps its poison and records for verification.
        if self.config.paired_ce and (getattr(self, "ce_dst", None) is None or self.ce_dst.size < ce_bytes):
            self.ce_dst = self.stack.enter_context(self.memory.allocate("device", ce_bytes, gpu=self.gpu))
        if getattr(self, "counts", None) is None or self.counts.size < count_bytes:
            self.counts = self.stack.enter_context(self.memory.allocate("device", count_bytes, gpu=self.gpu))
        # The pinned table last: a destination too large for the GPU then fails before up to the
        # same size of host memory is pinned and filled (an 80-GB GPU next to 128 GiB of host
        # memory ran out of host memory the other way round).
        if self.table is None or self.table.size < table_bytes:
            if self.table is not None:
                self.table.close()
            self.table = self.stack.enter_context(
                self.memory.allocate("pinned", table_bytes, alignment=4096, gpu=self.gpu)
            )
            self.table.write(self.memory.pattern(table_bytes, seed=0x3C))
            self.table_np = np.ctypeslib.as_array((ctypes.c_uint8 * table_bytes).from_address(self.table.ptr))
        self._loaded_indices = None
        self._index_cache: dict = {}

    def indices(self, layout: Layout):
        """Host indices for ``layout`` (cached), copied to the device when they change."""
        key = layout.index_key
        if key not in self._index_cache:
            self._index_cache = {key: make_indices(layout)}
        src, dst = self._index_cache[key]
        if self._loaded_indices != key:
            self.idx[0].write(src)
            self.idx[1].write(dst)
            self._loaded_indices = key
        return src, dst

    # -- measurement ----------------------------------------------------------------------------
    def _samples(self, op, what: str, entries: int = 3):
        """Estimate, then poison and time behind the gate; returns Timed.

        The device machines are shared: another tenant's traffic on the link slows a stretch of
        samples (seen on the H100: a CE reference whose samples ran 24-47 GB/s in one round and
        54-55 GB/s in the next). Interference only ever slows, so a round whose samples spread
        more than QUIET_SPREAD is measured again, up to ``config.rounds`` rounds, and the round
        with the shortest median is kept; the number of rounds is in ``self.rounds`` and the
        method text.
        """
        from gdrdiag.bench import timing

        est = timing.time_stream(self.stream, op, iterations=1, warmup=1, what=what)
        t = max(est.seconds[0], 1e-6)
        iters = int(min(self.config.iterations, max(3, self.config.time_budget_s / t)))
        if self.config.quick:
            iters = min(iters, 8)
        iters = timing.gated_iterations(iters, entries)
        best, rnd = None, 0
        while rnd < max(1, self.config.rounds):
            rnd += 1
            self.dst.fill(POISON)
            timed = timing.time_stream(self.stream, op, iterations=iters, warmup=1, gate=self.gate, what=what)
            med = sorted(timed.seconds)[len(timed.seconds) // 2]
            if best is None or med < best[0]:
                best = (med, timed)
            if self._settled(rnd, timed.seconds):
                break
        self.rounds = rnd
        timed = best[1]
        if self.config.rounds > 1:
            timed = replace(
                timed,
                method=timed.method + f"; {rnd} round(s) ({self._rounds_rule()}; the round "
                "with the shortest median is kept)",
            )
        return timed

    def _settled(self, rounds_done: int, seconds: Sequence[float]) -> bool:
        """Whether to stop measuring: at least ``min_rounds`` done and the last round quiet.

        A round can be slow all through (another tenant's traffic for its whole length) and still
        spread under QUIET_SPREAD; a second round taken anyway gives the shorter median a chance.
        """
        quiet = max(seconds) <= (1 + QUIET_SPREAD) * min(seconds)
        return quiet and rounds_done >= self.config.min_rounds

    def _rounds_rule(self) -> str:
        at_least = f"at least {self.config.min_rounds}, " if self.config.min_rounds > 1 else ""
        return (
            f"{at_least}a round spreading over {100 * QUIET_SPREAD:.0f}% is re-measured, up to "
            f"{self.config.rounds}"
        )

    def _paired_samples(self, op, nbytes: int, what: str, entries: int):
        """Time ``op`` with a CE copy of ``nbytes`` from the table queued before every sample.

        Returns (Timed of the gather samples, CE copy seconds per sample, in the same order).
        Rounds as in :meth:`_samples` (the round with the shortest median gather time is kept).
        """
        from gdrdiag.bench import timing
        from gdrdiag.hw import cuda

        ce_dst, table = self.ce_dst.ptr, self.table.ptr

        def ce_op(stream) -> None:
            cuda.call(cuda.driver().cuMemcpyHtoDAsync, ce_dst, table, nbytes, stream.handle)

        t = sum(timing.time_stream(self.stream, f, iterations=1, warmup=1).seconds[0] for f in (op, ce_op))
        iters = int(min(self.config.iterations, max(3, self.config.time_budget_s / max(t, 1e-6))))
        if self.config.quick:
            iters = min(iters, 8)
        iters = timing.gated_iterations(iters, entries + 2)
        best, rnd = None, 0
        while rnd < max(1, self.config.rounds):
            rnd += 1
            self.dst.fill(POISON)
            self.ce_dst.fill(POISON)
            op(self.stream)  # warm-up
            ce_op(self.stream)
            self.stream.synchronize()
            events = [(cuda.Event(), cuda.Event(), cuda.Event()) for _ in range(iters)]
            try:
                self.gate.hold(self.stream)
                try:
                    for a, b, c in events:
                        a.record(self.stream)
                        ce_op(self.stream)
                        b.record(self.stream)
                        op(self.stream)
                        c.record(self.stream)
                finally:
                    self.gate.release()
                self.stream.synchronize()
                ce_s = tuple(cuda.elapsed_ms(a, b) / 1e3 for a, b, _ in events)
                g_s = tuple(cuda.elapsed_ms(b, c) / 1e3 for _, b, c in events)
            finally:
                for trio in events:
                    for e in trio:
                        e.close()
            med = sorted(g_s)[len(g_s) // 2]
            if best is None or med < best[0]:
                best = (med, g_s, ce_s)
            if self._settled(rnd, g_s):
                break
        self.rounds = rnd
        method = (
            f"{what}: CUDA events on one stream, queued behind a spin-gate kernel (enqueue cost "
            f"excluded); 1 warm-up, {iters} samples kept, median reported; before every sample a "
            "copy-engine copy of the same bytes from the same table (paired CE reference; ratio_to_ce "
            f"= median of the per-pair ratios); {rnd} round(s) ({self._rounds_rule()}; the shortest "
            "median is kept)"
        )
        return timing.Timed(best[1], method), best[2]

    def ce_reference(self, nbytes: int, layout: Layout) -> BenchResult:
        """CuMemcpyHtoDAsync of ``nbytes`` from the pinned table start, verified."""
        from gdrdiag.hw import cuda

        table_ptr, dst_ptr = self.table.ptr, self.dst.ptr

        def op(stream) -> None:
            cuda.call(cuda.driver().cuMemcpyHtoDAsync, dst_ptr, table_ptr, nbytes, stream.handle)

        timed = self._samples(op, "copy engine")
        got = self.dst.read_array(nbytes)
        bad = self.memory.first_mismatch(got, self.table_np[:nbytes])
        params = GatherParams(record_bytes=layout.record_bytes, records=layout.records, copy_bytes=nbytes)
        samples = tuple(nbytes / s / 1e9 for s in timed.seconds)
        common = dict(
            description="copy-engine H2D reference: cuMemcpyHtoDAsync of the same bytes from the "
            "same pinned table",
            params=params,
            unit="GB/s",
            provider="cuda",
            method=timed.method + "; destination poisoned before, every byte compared after",
        )
        if bad is not None:
            return BenchResult.error(
                CE_KEY,
                f"copy engine wrote a wrong byte at offset {bad}",
                verified=False,
                samples=samples,
                stats=SampleStats.of(samples),
                **common,
            )
        stats = SampleStats.of(samples)
        return BenchResult(
            key=CE_KEY,
            status=Status.OK,
            samples=samples,
            stats=stats,
            verified=True,
            metrics=GatherMetrics(
                us_per_batch=stats.median and nbytes / stats.median / 1e3,
                ratio_to_raw=self._ratio_raw(stats.median),
                rounds=float(self.rounds),
            ),
            **common,
        )

    def _ratio_raw(self, gbps: float) -> Optional[float]:
        raw = getattr(self.link, "raw_gbytes_per_s", None)
        return gbps / raw if raw else None

    def gather(self, case: Case, ce: Optional[BenchResult]) -> BenchResult:
        """Measure and verify one gather case."""
        spec, layout = KERNELS[case.kernel], case.layout
        if self.cc < spec.min_cc:
            raise NotSupported(f"{spec.name} needs sm_{spec.min_cc} or newer; this GPU is sm_{self.cc}")
        if spec.flat:
            problem = flat_layout_problem(layout.record_bytes, layout.stride, layout.base_offset)
            if problem:
                raise NotSupported(problem)
        src, dst = self.indices(layout)
        launch = self._launch(case, spec)
        if spec.mapping == "persistent":
            self.sm_ids.fill(0xFF)
        nbytes = layout.nbytes
        paired = None
        if self.config.paired_ce:
            timed, paired = self._paired_samples(launch.op, nbytes, f"gather {spec.name}", launch.entries)
        else:
            timed = self._samples(launch.op, f"gather {spec.name}", launch.entries)
        # A planned sample is one plan plus `reuse` gathers: the time per batch is the sample over
        # `reuse` (the plan's cost shared by the batches that use it, as the kernel is meant to run).
        per_batch = tuple(t / launch.reuse for t in timed.seconds)
        samples = tuple(nbytes / t / 1e9 for t in per_batch)
        stats = SampleStats.of(samples)
        problem = verify_gather(
            self.table_np, self.dst.read_array(layout.records * layout.dst_stride), src, dst, layout
        )
        if paired is not None and problem is None:
            bad = self.memory.first_mismatch(self.ce_dst.read_array(nbytes), self.table_np[:nbytes])
            if bad is not None:
                problem = f"the paired copy-engine reference wrote a wrong byte at offset {bad}"
        metrics = self._case_metrics(spec, case, launch, src, per_batch, stats, ce, paired, timed.seconds)
        method = timed.method
        if self.config.ce_per_case:
            method += "; x CE against a CE copy of the same bytes measured just before this case"
        if spec.presort:
            method += (
                f"; one sample = the sort (plan) + {launch.reuse} gather(s) over the same indices, "
                f"divided by {launch.reuse}"
                + ("" if launch.reuse > 1 else " (a sort in every batch)")
                + "; plan_us = the sort alone, timed the same way"
                + (
                    "; batches 2.. launched with programmatic dependent launch (each starts as the "
                    "one before it ends)"
                    if launch.params.overlapped_batches
                    else ""
                )
            )
        common = dict(
            description=f"zero-copy gather, {spec.doc}",
            params=launch.params,
            settings=self._settings(case),
            unit="GB/s",
            samples=samples,
            stats=stats,
            metrics=metrics,
            provider="cuda",
            method=method + "; destination poisoned before the run, every byte checked on the "
            "host with numpy after it (records and the poison past them)",
        )
        if problem:
            return BenchResult.error(spec.key, f"wrong data: {problem}", verified=False, **common)
        return BenchResult(key=spec.key, status=Status.OK, verified=True, **common)

    def _launch(self, case: Case, spec: KernelSpec) -> "_Launch":
        """Launch shape (grid, threads, shared memory, depth), kernel arguments, and the timed op."""
        from gdrdiag.hw import cuda

        layout = case.layout
        params = self._params(case)
        fn = self.module.function(spec.function)
        threads = case.threads or spec.default_threads
        shared, depth = 0, 0
        if spec.flat:
            # gather_flat_dedupe ignores depth; recorded as the records one warp load covers
            depth = flat_records_per_load(layout.record_bytes)
            params = replace(params, records_per_step=depth)
        elif spec.dedupe:
            # native/gather.cu gather_lines_dedupe: depth = records per warp step (8 or 32)
            depth = self.config.records_per_step or planned_records_per_step(layout.record_bytes)
            params = replace(params, records_per_step=depth)
        if spec.name == "bulk":
            threads, depth, shared = bulk_config(layout.record_bytes, threads, self.smem_optin)
            drv = cuda.driver()
            attr = drv.CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
            cuda.call(cuda.driver().cuFuncSetAttribute, fn, attr, shared)
        if spec.mapping == "thread":
            grid = -(-layout.records // threads)
        elif spec.mapping == "warp":
            grid = -(-layout.records // (threads // 32))
        else:
            grid = min(case.sm_limit or self.sm_count, self.sm_count)
        params = replace(params, threads=threads, grid=grid, depth=depth or None)
        args = self._kernel_args(spec, layout, depth)
        if not spec.presort:

            def op(stream) -> None:
                cuda.launch(fn, grid, threads, args, stream, shared)

            return _Launch(op, params, fn, grid, threads, shared, depth, entries=3, reuse=1, plan_us=None)
        plan = self._plan_op(layout)
        reuse = self.config.plan_reuse if spec.reuse_plan else 1
        overlap = self.overlaps_batches(spec) and reuse > 1
        params = replace(params, plan_reuse=reuse, overlapped_batches=overlap if spec.reuse_plan else None)
        op = self._presorted(plan, fn, grid, threads, args, shared, reuse, overlap)
        return _Launch(op, params, fn, grid, threads, shared, depth, 8 + reuse, reuse, self._plan_us(plan))

    def _kernel_args(self, spec: KernelSpec, layout: Layout, depth: int) -> list:
        """The argument list every gather kernel of native/gather.cu takes, in its order."""
        sm_ids_ptr = self.sm_ids.ptr if spec.mapping == "persistent" else 0
        sidx, didx = (
            (self.idx[2].ptr, self.idx[3].ptr) if spec.presort else (self.idx[0].ptr, self.idx[1].ptr)
        )
        return [
            (self.dst.ptr, ctypes.c_void_p),
            (self.table.device_ptr + layout.base_offset, ctypes.c_void_p),
            (sidx, ctypes.c_void_p),
            (didx, ctypes.c_void_p),
            (layout.records, ctypes.c_ulonglong),
            (layout.record_bytes, ctypes.c_ulonglong),
            (layout.stride, ctypes.c_ulonglong),
            (layout.dst_stride, ctypes.c_ulonglong),
            (sm_ids_ptr, ctypes.c_void_p),
            (depth, ctypes.c_uint),
        ]

    def _case_metrics(self, spec, case, launch, src, per_batch, stats, ce, paired, seconds) -> GatherMetrics:
        """Ratios to the same-run CE (paired per sample when asked), occupancy, Little's law, the model."""
        from gdrdiag.hw import cuda

        layout, nbytes = case.layout, case.layout.nbytes
        ce_gbps = ce.value if ce is not None and ce.status is Status.OK else None
        ratio_to_ce = stats.median / ce_gbps if ce_gbps else None
        unpaired = None
        if paired is not None:
            # Each gather sample against the CE copy of the same bytes queued just before it: a
            # tenant's traffic slows both, so the median of the per-pair ratios keeps its meaning.
            ratios = sorted(c / (g / launch.reuse) for c, g in zip(paired, seconds, strict=True))
            ce_gbps = nbytes / sorted(paired)[len(paired) // 2] / 1e9
            ratio_to_ce = ratios[len(ratios) // 2]
            unpaired = stats.median / ce.value if ce is not None and ce.value else None
        if spec.mapping == "persistent":
            ids = self.sm_ids.read_array(4 * launch.grid).view("<i4")
            sms_used, blocks_per_sm = len({int(v) for v in ids if v >= 0}), 1.0
        else:
            sms_used = self.sm_count
            occupancy = cuda.call(
                cuda.driver().cuOccupancyMaxActiveBlocksPerMultiprocessor,
                launch.fn,
                launch.threads,
                launch.shared,
            )
            blocks_per_sm = min(float(occupancy), launch.grid / max(1, self.sm_count)) or 1.0
        per_sm = (
            blocks_per_sm
            * launch.threads
            / 32
            * bytes_in_flight_per_warp(spec, layout.record_bytes, launch.depth)
        )
        ce_fixed = ce.metrics.ce_fixed_us if ce is not None else None
        model = self._model_metrics(
            spec, layout, src, ce_gbps, launch.plan_us, launch.reuse, launch.depth, ce_fixed_us=ce_fixed
        )
        return GatherMetrics(
            us_per_batch=float(sorted(per_batch)[len(per_batch) // 2] * 1e6),
            rounds=float(self.rounds),
            plan_us=launch.plan_us,
            ratio_to_ce=ratio_to_ce,
            ratio_to_ce_unpaired=unpaired,
            ce_gbytes_per_s=ce_gbps,
            ce_fixed_us=ce_fixed,
            ratio_to_raw=self._ratio_raw(stats.median),
            sms_used=float(sms_used),
            bytes_in_flight_per_sm=per_sm,
            # Little's law: the round trip the design's in-flight bytes would allow at this rate.
            littles_law_latency_us=per_sm * sms_used / (stats.median * 1e9) * 1e6 if stats.median else None,
            **model,
        )

    def _plan_op(self, layout: Layout):
        """The plan: count, scan, scatter (native/gather.cu) of the pairs by source slot."""
        from gdrdiag.hw import cuda

        names = ("sort_count", "sort_scan_blocks", "sort_scan", "sort_scan_add", "sort_scatter")
        f_count, f_blocks, f_scan, f_add, f_scatter = (self.module.function(n) for n in names)
        n, slots = layout.records, layout.slots
        tiles = -(-slots // 1024)
        cgrid = max(1, min(-(-n // 256), 8 * self.sm_count))
        counts, s_in, d_in, s_out, d_out = (
            self.counts.ptr,
            self.idx[0].ptr,
            self.idx[1].ptr,
            self.idx[2].ptr,
            self.idx[3].ptr,
        )
        sums = counts + 4 * round_up(slots, 64)
        vp, ull = ctypes.c_void_p, ctypes.c_ulonglong

        def op(stream) -> None:
            cuda.call(cuda.driver().cuMemsetD32Async, counts, 0, slots, stream.handle)
            cuda.launch(f_count, cgrid, 256, [(s_in, vp), (n, ull), (counts, vp)], stream)
            cuda.launch(f_blocks, tiles, 1024, [(counts, vp), (slots, ull), (sums, vp)], stream)
            cuda.launch(f_scan, 1, 1024, [(sums, vp), (tiles, ull)], stream)
            cuda.launch(f_add, tiles, 1024, [(counts, vp), (slots, ull), (sums, vp)], stream)
            cuda.launch(
                f_scatter,
                cgrid,
                256,
                [(s_in, vp), (d_in, vp), (n, ull), (counts, vp), (s_out, vp), (d_out, vp)],
                stream,
            )

        return op

    def overlaps_batches(self, spec: KernelSpec) -> bool:
        """Whether ``spec``'s batches 2..N start as the batch before ends (see :meth:`_presorted`)."""
        return spec.reuse_plan and self.config.overlap_batches and self.cc >= 90

    def _presorted(self, plan, fn, grid: int, threads: int, args, shared: int, reuse: int = 1, overlap=False):
        """The sort-first sample: the plan, then ``reuse`` gathers over the sorted pairs.

        With ``overlap`` batches 2..reuse use programmatic dependent launch: each may start while
        the batch before it finishes (the planned kernels let it launch as they start and wait for
        the batch before only at their end; native/gather.cu). The first batch after the plan is
        launched plainly: it reads the pairs the plan's kernels wrote.
        """
        from gdrdiag.hw import cuda

        def op(stream) -> None:
            plan(stream)
            for k in range(reuse):
                cuda.launch(fn, grid, threads, args, stream, shared, overlap_previous=overlap and k > 0)

        return op

    def _plan_us(self, plan) -> float:
        """Median microseconds of the plan alone (the model's sort cost term), behind the gate."""
        from gdrdiag.bench import timing

        timed = timing.time_stream(
            self.stream, plan, iterations=timing.gated_iterations(15, 8), warmup=1, gate=self.gate
        )
        return float(sorted(timed.seconds)[len(timed.seconds) // 2] * 1e6)

    def _model_metrics(
        self,
        spec: KernelSpec,
        layout: Layout,
        src,
        ce_gbps,
        plan_us: Optional[float] = None,
        reuse: int = 1,
        group: int = 0,
        ce_fixed_us: Optional[float] = None,
    ) -> dict[str, Optional[float]]:
        if spec.model_mode is None:
            return {"model_ratio_to_ce": None}
        return model_metrics(spec, layout, src, self.config.link, ce_gbps, plan_us, reuse, group, ce_fixed_us)

    def _params(self, case: Case) -> GatherParams:
        lay = case.layout
        p = self.config.link
        return GatherParams(
            kernel=case.kernel,
            record_bytes=lay.record_bytes,
            stride_bytes=lay.stride,
            base_offset_bytes=lay.base_offset,
            pattern=pattern_name(lay.pattern, lay.run_length),
            sm_limit=case.sm_limit,
            sms_total=self.sm_count,
            records=lay.records,
            slots=lay.slots,
            dst_stride_bytes=lay.dst_stride,
            mps_bytes=p.mps,
            mrrs_bytes=p.mrrs,
            rcb_bytes=p.rcb,
            link_params=self._link_params(),
            link=self.link_text,
        )

    def _link_params(self) -> str:
        """Where the model's parameters came from, the read-request rate its cap used included."""
        rate = self.config.link.read_requests_per_ns
        return (
            f"{self.config.link_source}; read-request rate "
            + ("none" if rate is None else f"{rate:.3f} G/s")
            + f" ({self.config.request_rate_source})"
        )

    @staticmethod
    def _settings(case: Case) -> RunSettings:
        return RunSettings(sweep=case.sweep, seed=case.layout.seed)

    # -- orchestration ---------------------------------------------------------------------------
    def sample_link(self) -> None:
        """Read the GPU link from sysfs while copies run (GPUs downclock idle links)."""
        from gdrdiag.hw import gpu_link

        nbytes = min(self.table.size, self.dst.size, 256 << 20)
        sample = gpu_link.sample_during_copies(
            self.facts.pci_bus_id, self.dst.ptr, self.table.ptr, nbytes, self.stream
        )
        self.link, self.link_text = sample.link, sample.text


@dataclass(frozen=True)
class _Launch:
    """How one case's kernel is launched and timed (``op``), and what its params record."""

    op: object
    params: GatherParams
    fn: object
    grid: int
    threads: int
    shared: int
    depth: int
    entries: int  # events queued per sample (the spin gate's budget)
    reuse: int  # gathers per plan (planned-lines), 1 otherwise
    plan_us: Optional[float]
