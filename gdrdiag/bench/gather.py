"""gather-bench: GPU zero-copy gather of records from pinned host memory, against the copy engine.

The workload: gather ``n`` records of ``R`` bytes from a table of ``slots`` slots in
mapped pinned host memory into device memory, at (source slot, destination slot) pairs, with the
GPU reading host memory over PCIe. Kernels live in ``native/gather.cu`` (the ladder is explained
there). Every gather is divided by a copy-engine reference measured in the same process: a
``cuMemcpyHtoDAsync`` of the same byte count from the same pinned table (``gather_ce_reference``).

Method, per case (docs/gather-bench.md):

1. indices are generated on the host with numpy (seeded; the seed is in params) and copied to
   device memory once per index set;
2. one ungated launch estimates the time, which sets the number of samples for a time budget;
3. the destination is poisoned, then the samples run queued behind the spin gate (CUDA events,
   enqueue cost excluded, bench/timing.py);
4. every destination byte is checked on the host with numpy (records gathered by fancy indexing
   of the pinned table; bytes past each record must still hold the poison); one wrong byte makes
   the result ERROR;
5. the PCIe model (gdrdiag/pathmodel/pcie.py) predicts the best ratio to CE the layout allows for the
   kernel's way of reading, from the exact start offsets of the indices used.

Only ``hw/`` talks to the driver; this module uses it through ``hw.cuda``, ``hw.memory``,
``hw.nvrtc``, ``hw.gpu_link`` and ``bench.timing``.
"""

from __future__ import annotations

import contextlib
import functools
from dataclasses import dataclass, field, replace
from typing import Optional

from gdrdiag.bench import cases as bench_cases
from gdrdiag.bench.cases import Needs, Step
from gdrdiag.bench.gather_analysis import (  # noqa: F401 - gather-bench's public names, re-exported
    REQUEST_RATE_KERNEL,
    fmt_ratio,
    measured_request_rate,
    min_sms_for_fraction,
    model_metrics,
    pick_best,
    record_size_summary,
)
from gdrdiag.bench.gather_config import CE_KEY, GatherConfig, GatherRun, ProgressFn  # noqa: F401
from gdrdiag.bench.gather_kernels import (  # noqa: F401 - gather-bench's public names, re-exported
    KERNELS,
    LADDER,
    KernelSpec,
    bulk_config,
    bytes_in_flight_per_warp,
    flat_layout_problem,
    flat_records_per_load,
    kernel_spec,
    parse_kernels,
    planned_records_per_step,
)
from gdrdiag.bench.gather_layout import (  # noqa: F401 - gather-bench's public names, re-exported
    POISON,
    REQUEST_RATE_BELOW_BYTES,
    REQUEST_RATE_MAX_RECORD_BYTES,
    SWEEPS,
    Case,
    Layout,
    layout_of,
    make_indices,
    needs_request_rate,
    parse_pattern,
    parse_sweeps,
    pattern_name,
    planned_read_plan,
    read_plan,
    request_rate_layout,
    segment_histogram,
    sweep_cases,
    verify_gather,
)
from gdrdiag.errors import NotSupported
from gdrdiag.model.params import GatherParams
from gdrdiag.model.results import BenchResult, Status
from gdrdiag.pathmodel import pcie as pcie_model

# The copy engine's cost per copy comes from copies of this size and a quarter of it (the table
# start; fewer bytes where the run copies fewer), if that quarter is at least the minimum.
CE_FIXED_COPY_BYTES = 4 << 20
CE_FIXED_MIN_BYTES = 16 << 10


def run(config: GatherConfig, progress: ProgressFn = None) -> GatherRun:
    """Run the ladder, then the sweeps with the best kernel; always return results.

    Without a usable GPU (no driver, no device, no NVRTC) every case is WAIVED with the reason,
    as copy-bench does: the run still has a Report, an exit code of 0 and the reason per case.
    Every result records the CUDA ordinal it ran on (``config.device``).
    """
    config.validate()
    from gdrdiag.bench.gather_session import GatherSession
    from gdrdiag.bench.runner import on_gpu, with_placement
    from gdrdiag.hw import cuda, placement

    try:
        cuda.init()
    except NotSupported as exc:
        done = waived_run(config, exc.reason)
        waived = on_gpu(done.results, config.device)
        return replace(done, results=with_placement(waived, placement.not_run(config.numa, "no GPU")))
    with placement.applied(placement.plan_for_gpu(config.numa, config.device)) as where:
        with contextlib.ExitStack() as stack:
            try:
                session = stack.enter_context(GatherSession(config))
            except NotSupported as exc:
                done = waived_run(config, exc.reason)
            else:
                done = _Run(session, progress).all()
    return replace(done, results=with_placement(on_gpu(done.results, config.device), where))


def waived_run(config: GatherConfig, reason: str) -> GatherRun:
    """One WAIVED result per case the run would have measured: the CE reference and each kernel case."""
    base = config.base
    params = dict(
        record_bytes=base.record_bytes,
        stride_bytes=base.stride,
        base_offset_bytes=base.base_offset,
        pattern=pattern_name(base.pattern, base.run_length),
    )
    results = [
        BenchResult.waived(
            CE_KEY,
            reason,
            provider="cuda",
            description="gather-bench copy-engine reference",
            params=GatherParams(copy_bytes=base.nbytes, **params),
        )
    ]
    results += [
        BenchResult.waived(
            c.key,
            reason,
            provider="cuda",
            description=f"gather-bench {c.part}",
            params=GatherParams(kernel=c.part, **params),
        )
        for c in planned_cases(config)
        if c.part != REFERENCE_PART
    ]
    sweeps = [w for w in config.sweeps if w != "ladder"]
    notes = [f"sweeps not run (no GPU): {', '.join(sweeps)}"] if sweeps else []
    return GatherRun(results=results, notes=notes)


@dataclass
class _Run:
    """The order of one run: plan and allocate, the ladder, the sweeps, the summary notes."""

    session: object
    progress: ProgressFn
    results: list[BenchResult] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    ce_cache: dict[int, BenchResult] = field(default_factory=dict)
    ce_fixed: dict[int, Optional[float]] = field(default_factory=dict)  # by the copies' size
    calibration_failure: str = ""  # why the request-rate calibration did not measure, if it did not
    done: int = 0
    total: int = 0

    @property
    def config(self) -> GatherConfig:
        """The run's configuration (the session's)."""
        return self.session.config  # type: ignore[attr-defined]

    def all(self) -> GatherRun:
        """Calibrate, run the planned cases (the ladder), the sweeps with its best kernel, then notes."""
        s, cfg = self.session, self.session.config  # type: ignore[attr-defined]
        ladder = planned_cases(cfg)
        sweeps = [w for w in cfg.sweeps if w != "ladder"]
        layouts = [cfg.base] + [
            c.layout for w in sweeps for c in sweep_cases(w, cfg.base, ["warp"], s.sm_count, quick=cfg.quick)
        ]
        calibrate = cfg.request_rate is None and needs_request_rate(layouts)
        if calibrate:
            layouts.append(request_rate_layout(cfg.base))
        self._allocate_and_read_link(layouts)
        # The ladder's steps are its cases' own; the sweeps' are estimated (their kernels wait on it).
        ladder_steps = sum(c.steps(cfg) for c in ladder)
        self.total = ladder_steps + self._sweep_case_estimate(sweeps) + int(calibrate)
        self._request_rate(calibrate)
        best = self._ladder(ladder)
        best_name = str(best.params.kernel) if best is not None else "lines"
        for sweep in sweeps:
            self._sweep(sweep, best_name)
        if calibrate:
            self._fastest_request_rate()
        self._summary_notes()
        return GatherRun(
            results=self.results, notes=self.notes, link=s.link, gpu_name=s.facts.name, sm_count=s.sm_count
        )

    def _allocate_and_read_link(self, layouts: list[Layout]) -> None:
        """Allocate for every layout the run will use, then read the link under load for the model."""
        s, cfg = self.session, self.session.config  # type: ignore[attr-defined]
        for lay in layouts:
            lay.validate()
        s.allocate_for(layouts)
        s.link, s.link_text = None, "unknown: not read yet"
        s.sample_link()
        lk = s.link
        if not cfg.link_explicit and lk is not None and lk.mps and lk.mrrs and lk.rcb:
            try:
                cfg.link = replace(cfg.link, mps=lk.mps, mrrs=lk.mrrs, rcb=lk.rcb)
                cfg.link_source = "read from the GPU's PCIe capability (a VM shows its virtual view)"
            except ValueError:
                pass

    def _request_rate(self, calibrate: bool) -> None:
        """The model's read-request rate: given (--request-rate), measured here, or the assumed 0.75.

        The calibration gathers 16-B records with the warp kernel, one read request each, from
        the 16-B table the small-record rows read (gather_layout.request_rate_layout), before
        the ladder, so every row of the run is capped at this machine's rate. Its row stays in
        the results (sweep "request-rate"), its model columns recomputed with the rate it measured.
        """
        s, cfg = self.session, self.session.config  # type: ignore[attr-defined]
        if cfg.request_rate is not None:
            cfg.link = replace(cfg.link, read_requests_per_ns=cfg.request_rate)
            cfg.request_rate_source = "given (--request-rate)"
            return
        if not calibrate:
            return
        lay = request_rate_layout(cfg.base)
        out = self._measure(Case(REQUEST_RATE_KERNEL, lay, sweep="request-rate"))
        self.results.extend(out)
        res = out[0] if out else None
        if res is None or res.status is not Status.OK or not res.value:
            why = f"{res.status.value}: {res.reason}" if res is not None else "no result"
            self.calibration_failure = f"; the request-rate calibration did not measure ({why})"
            cfg.request_rate_source += self.calibration_failure
            return
        src, _ = s.indices(lay)
        rate = measured_request_rate(res.value, lay, src, cfg.link)
        cfg.link = replace(cfg.link, read_requests_per_ns=rate)
        cfg.request_rate_source = (
            f"measured in this run: {REQUEST_RATE_KERNEL} kernel, 16-B records from {lay.slots} slots, "
            f"{lay.pattern} order, one request each"
        )
        model = s._model_metrics(
            KERNELS[REQUEST_RATE_KERNEL],
            lay,
            src,
            res.metrics.ce_gbytes_per_s,
            ce_fixed_us=res.metrics.ce_fixed_us,
        )
        fixed = replace(res, metrics=replace(res.metrics, **model))
        self.results = [fixed if r is res else r for r in self.results]

    def _sweep_case_estimate(self, sweeps: list[str]) -> int:
        """Cases the sweeps will run (for progress; the sweep kernels are not known before the ladder)."""
        s, cfg = self.session, self.session.config  # type: ignore[attr-defined]
        placeholder = ["lines", "warp", "warp-ilp", "persistent"][: max(1, len(cfg.sweep_kernels))]
        return sum(
            len(
                sweep_cases(w, cfg.base, placeholder if w != "sm" else ["lines"], s.sm_count, quick=cfg.quick)
            )
            for w in sweeps
        )

    def _fastest_request_rate(self) -> None:
        """Re-cap the small-record rows at the fastest read-request rate this run measured.

        The rate is the path's: read requests in flight over their round trip, and the round
        trip moves with the host's load, which only ever slows it. One calibration is a few ms of
        samples; five a minute apart on one H100 gave 0.67-0.74 G/s (docs/benchmarks.md). Every
        warp-kernel row of 16-32-B records sends one request per record as well, so each is
        another measurement of the same rate: the fastest is the machine's, and the rows the
        cap can bind (records under 128 B) are modelled again with it.
        """
        s, cfg = self.session, self.session.config  # type: ignore[attr-defined]
        rates = []
        for r in self.results:
            lay = layout_of(r.params, r.settings.seed) if r.status is Status.OK and r.value else None
            if lay is not None and r.params.kernel == REQUEST_RATE_KERNEL:
                if lay.record_bytes <= REQUEST_RATE_MAX_RECORD_BYTES:
                    rates.append(measured_request_rate(r.value, lay, s.indices(lay)[0], cfg.link))
        if not rates or max(rates) <= (cfg.link.read_requests_per_ns or 0.0):
            return
        cfg.link = replace(cfg.link, read_requests_per_ns=max(rates))
        cfg.request_rate_source = (
            f"measured in this run: the fastest of {len(rates)} gathers of 16-32-B records by the "
            f"{REQUEST_RATE_KERNEL} kernel, one request each"
            + (self.calibration_failure or ", the calibration included")
        )
        self.results = [self._remodelled(r) for r in self.results]

    def _remodelled(self, r: BenchResult) -> BenchResult:
        """``r`` with its model columns computed again at the run's request rate (small records only)."""
        lay = layout_of(r.params, r.settings.seed) if r.status is Status.OK else None
        if lay is None or lay.record_bytes >= REQUEST_RATE_BELOW_BYTES:
            return r
        s, m = self.session, r.metrics
        src, _ = s.indices(lay)  # type: ignore[attr-defined]
        model = s._model_metrics(  # type: ignore[attr-defined]
            KERNELS[str(r.params.kernel)],
            lay,
            src,
            m.ce_gbytes_per_s,
            m.plan_us,
            r.params.plan_reuse or 1,
            r.params.depth or 0,
            ce_fixed_us=m.ce_fixed_us,
        )
        return replace(r, metrics=replace(m, **model), params=replace(r.params, link_params=s._link_params()))  # type: ignore[attr-defined]

    def _ce_for(self, layout: Layout) -> BenchResult:
        """The copy-engine reference for this many bytes, measured (and recorded) once per byte count."""
        self.results.extend(self.new_reference(layout))
        return self.ce_cache[layout.nbytes]

    def new_reference(self, layout: Layout) -> list[BenchResult]:
        """The reference's rows for ``layout``'s byte count where not measured yet, else none.

        The reference is shared by every case of that byte count, so it is measured once and cached;
        the caller records the rows returned.
        """
        from gdrdiag.bench.runner import run_case

        if layout.nbytes in self.ce_cache:
            return []
        res = run_case(CE_KEY, lambda: self.session.ce_reference(layout.nbytes, layout))  # type: ignore[attr-defined]
        ref = self._with_ce_fixed(res[0], layout)
        self.ce_cache[layout.nbytes] = ref
        return [ref, *res[1:]]

    def _with_ce_fixed(self, ref: BenchResult, layout: Layout) -> BenchResult:
        """``ref`` with the copy engine's cost per copy in its metrics (None where not measured).

        Measured once per run from CE copies of 4 MiB and 1 MiB from the table start (fewer
        bytes where the run copies fewer): t = fixed + bytes / rate through the fastest sample
        of each (a tenant's traffic only adds time; pcie_model.fixed_cost_of_two_copies). Large
        copies keep a few us of it, so it is measured where it is a large share of the time.
        """
        from gdrdiag.bench.runner import run_case

        if ref.status is not Status.OK:
            return ref
        size = min(layout.nbytes, CE_FIXED_COPY_BYTES) // 64 * 64
        if size not in self.ce_fixed:
            self.ce_fixed[size] = None
            if size >= 4 * CE_FIXED_MIN_BYTES:
                small, large = (
                    run_case(CE_KEY, lambda n=n: self.session.ce_reference(n, layout))[0]  # type: ignore[attr-defined]
                    for n in (size // 4, size)
                )
                if all(r.status is Status.OK and r.samples for r in (small, large)):
                    small_s, large_s = (
                        n / (max(r.samples) * 1e9) for n, r in ((size // 4, small), (size, large))
                    )
                    fixed = pcie_model.fixed_cost_of_two_copies(size // 4, small_s, size, large_s)
                    self.ce_fixed[size] = fixed
                    self.notes.append(
                        f"copy engine: {fixed:.2f} us per copy (its fastest copies of {size // 4 >> 10} "
                        f"and {size >> 10} KiB); the model times kernels at the link's rate without it, "
                        f"plus {pcie_model.BATCH_FIXED_US:.1f} us of their own per batch"
                    )
        return replace(ref, metrics=replace(ref.metrics, ce_fixed_us=self.ce_fixed[size]))

    def step(self, label: str) -> None:
        """The next progress step starts now (the count and total are the run's)."""
        self.done += 1
        if self.progress:
            self.progress(self.done, max(self.total, self.done), label)

    def _measure(self, case: Case) -> list[BenchResult]:
        """One counted gather (a step of its own), its rows returned for the caller to record."""
        self.step(step_label(case))
        return self.measure(case)

    def measure(self, case: Case) -> list[BenchResult]:
        """One gather through the runner: a failure is a WAIVED/ERROR result that says what it was.

        The copy-engine reference of its byte count is measured first where it is not yet (and
        recorded then); the gather's rows are returned, not recorded.
        """
        from gdrdiag.bench.runner import run_case

        ce = self._ce_for(case.layout)
        lay = case.layout
        if self.session.config.ce_per_case and ce.status is Status.OK:  # type: ignore[attr-defined]
            # A fresh reference for this case; the Report keeps the once-per-size one, and the
            # case's ce_gbytes_per_s metric records the one its ratios used.
            fresh = run_case(CE_KEY, lambda: self.session.ce_reference(lay.nbytes, lay))[0]  # type: ignore[attr-defined]
            if fresh.status is Status.OK:
                ce = replace(fresh, metrics=replace(fresh.metrics, ce_fixed_us=ce.metrics.ce_fixed_us))
        fields = dict(
            params=GatherParams(
                kernel=case.kernel,
                record_bytes=lay.record_bytes,
                stride_bytes=lay.stride,
                base_offset_bytes=lay.base_offset,
                pattern=pattern_name(lay.pattern, lay.run_length),
                sm_limit=case.sm_limit,
                threads=case.threads,
            ),
            settings=self.session._settings(case),  # type: ignore[attr-defined]
        )
        return run_case(KERNELS[case.kernel].key, lambda: self.session.gather(case, ce), **fields)  # type: ignore[attr-defined]

    def _ladder(self, ladder: list[bench_cases.Case]) -> Optional[BenchResult]:
        """Every planned case in turn, its rows recorded; returns the best kernel row (a note says which)."""
        cfg = self.session.config  # type: ignore[attr-defined]
        ok = []
        for case in ladder:
            rows = case.run(self, self.step)
            self.results.extend(rows)
            ok += [r for r in rows if r.key != CE_KEY and r.status is Status.OK and r.value]
        best = pick_best(ok)
        if best is not None:
            ratio, model = best.metrics.ratio_to_ce, best.metrics.model_ratio_to_ce
            self.notes.append(
                f"best kernel at R={cfg.base.record_bytes} B, "
                f"{pattern_name(cfg.base.pattern, cfg.base.run_length)}"
                f" indices: {best.params.kernel}, {best.value:.2f} GB/s"
                + (f" = {ratio:.3f} of CE measured in the same run" if ratio else "")
                + (f" (model allows {model:.3f})" if model else "")
            )
        return best

    def _sweep(self, sweep: str, best_name: str) -> None:
        """One sweep with the sweep kernels ('best' = the ladder's fastest); the SM sweep finds the budget."""
        s, cfg = self.session, self.session.config  # type: ignore[attr-defined]
        kernels = tuple(dict.fromkeys(best_name if k == "best" else k for k in cfg.sweep_kernels))
        ks = kernels if sweep != "sm" else (best_name,)
        if sweep == "sm" and KERNELS[best_name].mapping != "persistent":
            ks = ("lines",)
        cases = sweep_cases(sweep, cfg.base, ks, s.sm_count, quick=cfg.quick, threads=cfg.threads)
        swept = []
        for c in cases:
            rows = self._measure(c)
            self.results.extend(rows)
            swept += rows
        if sweep == "sm":
            self._sm_budget(swept, ks[0])

    def _sm_budget(self, swept: list[BenchResult], kernel: str) -> None:
        """The fewest SMs for 95% of the all-SM bandwidth, noted and written onto the all-SM result."""
        sm_count = self.session.sm_count  # type: ignore[attr-defined]
        pts = [
            (int(r.params.sm_limit), r.value)
            for r in swept
            if r.status is Status.OK and r.value and r.params.sm_limit
        ]
        need = min_sms_for_fraction(pts, 0.95)
        if need is None:
            return
        self.notes.append(f"{kernel} reaches 95% of its all-SM bandwidth with {need} of {sm_count} SMs")
        self.results = [
            replace(r, metrics=replace(r.metrics, min_sms_for_95pct=float(need)))
            if any(r is w for w in swept) and r.params.sm_limit == sm_count
            else r
            for r in self.results
        ]

    def _summary_notes(self) -> None:
        """Per record size and pattern: best kernel vs its ceiling; a planned kernel predicted vs measured."""
        s, cfg = self.session, self.session.config  # type: ignore[attr-defined]
        for row in record_size_summary(self.results):
            line = (
                f"R={row['record_bytes']} B {row['pattern']}: best {row['best_kernel']} "
                f"{fmt_ratio(row['best_ratio_to_ce'])} x CE, "
                f"ceiling {fmt_ratio(row['ceiling_ratio_to_ce'])}, "
                f"best/ceiling {fmt_ratio(row['best_over_ceiling'])}"
            )
            if row.get("kernel_ratio_to_ce") is not None:
                line += (
                    f"; {row['kernel']} {fmt_ratio(row['kernel_ratio_to_ce'])} measured vs "
                    f"{fmt_ratio(row.get('kernel_predicted_ratio_to_ce'))} predicted "
                    f"(pred/meas {fmt_ratio(row.get('kernel_predicted_over_measured'))})"
                )
            self.notes.append(line)
        self.notes.append(
            f"link: {s.link_text}; model PCIe parameters: MPS {cfg.link.mps}, MRRS {cfg.link.mrrs}, "
            f"RCB {cfg.link.rcb}, {cfg.link.cpl_overhead} B per completion ({cfg.link_source})"
        )
        rate = cfg.link.read_requests_per_ns
        self.notes.append(
            "read-request rate for the model's cap: "
            + ("none" if rate is None else f"{rate:.3f} G requests/s")
            + f" ({cfg.request_rate_source})"
        )


# --------------------------------------------------------------------------------------------
# the cases
# --------------------------------------------------------------------------------------------

REFERENCE_PART = "reference"


def step_label(case: Case) -> str:
    """A gather's progress label: its sweep, kernel and record size."""
    return f"{case.sweep}: {case.kernel} R={case.layout.record_bytes}"


def _reference_steps(config: GatherConfig) -> int:
    """The CE reference takes no step of its own: it runs with every kernel case (their ratios need it)."""
    return 0


def _reference_run(run: _Run, step: Step) -> list[BenchResult]:
    """The reference of the base layout's byte count (none new where the calibration measured it)."""
    return run.new_reference(run.config.base)


def _kernel_steps(name: str, config: GatherConfig) -> int:
    """A kernel case is one step where ``--kernels`` names the kernel and the selection chose it."""
    return 1 if name in config.kernels and config.selects(KERNELS[name].key) else 0


def _kernel_run(name: str, run: _Run, step: Step) -> list[BenchResult]:
    """The kernel on the base layout (the ladder), with ``--sm-limit`` and ``--threads`` as given."""
    cfg = run.config
    case = Case(name, cfg.base, sweep="ladder", sm_limit=cfg.sm_limit, threads=cfg.threads)
    step(step_label(case))
    return run.measure(case)


def _kernel_case(spec: KernelSpec) -> bench_cases.Case:
    return bench_cases.Case(
        spec.key,
        spec.doc,
        Needs.GPU,
        spec.name,
        GatherParams(kernel=spec.name),
        functools.partial(_kernel_steps, spec.name),
        functools.partial(_kernel_run, spec.name),
    )


#: gather-bench's cases, in registry order: the copy-engine reference, then one case per kernel of
#: the table (gather_kernels.KERNELS). ``--list``, selection, progress and the ladder read this.
CASES: tuple[bench_cases.Case, ...] = (
    bench_cases.Case(
        CE_KEY,
        "the copy engine reading the same bytes (every ratio's reference)",
        Needs.GPU,
        REFERENCE_PART,
        GatherParams(),
        _reference_steps,
        _reference_run,
    ),
    *(_kernel_case(spec) for spec in KERNELS.values()),
)


def planned_cases(config: GatherConfig) -> list[bench_cases.Case]:
    """The cases a run measures, in run order: the CE reference, then the cases with steps.

    Kernel cases run in the order ``--kernels`` names them; a case whose kernel it does not name
    keeps its place in :data:`CASES`, after them. No case with steps: nothing, not even the reference.
    """
    stepped = [c for c in CASES if c.steps(config) > 0]
    if not stepped:
        return []
    order = {name: i for i, name in enumerate(config.kernels)}
    stepped.sort(key=lambda c: order.get(c.part, len(order)))
    return [c for c in CASES if c.part == REFERENCE_PART] + stepped
