"""The request-rate calibration of gather-bench without a GPU: when it runs, what it measures, and
that every row after it is capped at the measured rate (a fake session stands in for the GPU)."""

from dataclasses import replace

import pytest

from gdrdiag.bench import gather as g
from gdrdiag.bench.gather_config import GatherConfig
from gdrdiag.bench.gather_session import GatherSession
from gdrdiag.errors import NotSupported
from gdrdiag.model.params import GatherMetrics, GatherParams, RunSettings
from gdrdiag.model.results import BenchResult, SampleStats, Status
from gdrdiag.pathmodel import pcie as pm


class FakeSession:
    """What gather._Run asks of a GatherSession, with made-up rates: no GPU, no CUDA."""

    _params = GatherSession._params  # the real session's params (link parameters and rate included)
    _link_params = GatherSession._link_params

    _model_metrics = GatherSession._model_metrics  # the real model, at the config's rate

    def __init__(self, config, calibration_gbps, warp_gbps=12.0):
        self.config = config
        self.warp_gbps = warp_gbps  # the warp kernel's rows after the calibration
        self.sm_count = 8
        self.facts = type("F", (), {"name": "fake GPU"})()
        self.calibration_gbps = calibration_gbps
        self.seen: list[tuple[str, int, str, object]] = []  # (kernel, R, sweep, rate when measured)

    def allocate_for(self, layouts):
        self.layouts = list(layouts)

    def sample_link(self):
        self.link, self.link_text = None, "fake link"

    link_text = "not read yet"

    def indices(self, layout):
        return g.make_indices(layout)

    def _settings(self, case):
        return RunSettings(sweep=case.sweep, seed=case.layout.seed)

    def _result(self, key, gbps, metrics, params):
        return BenchResult(
            key=key,
            status=Status.OK,
            params=params,
            unit="GB/s",
            samples=(gbps,),
            stats=SampleStats.of((gbps,)),
            metrics=metrics,
            verified=True,
        )

    def ce_reference(self, nbytes, layout):
        params = GatherParams(copy_bytes=nbytes, record_bytes=layout.record_bytes)
        return self._result(g.CE_KEY, 50.0, GatherMetrics(), params)

    def gather(self, case, ce):
        lay, spec = case.layout, g.KERNELS[case.kernel]
        problem = spec.flat and g.flat_layout_problem(lay.record_bytes, lay.stride, lay.base_offset)
        if problem:
            raise NotSupported(problem)  # as GatherSession.gather
        self.seen.append((case.kernel, lay.record_bytes, case.sweep, self.config.link.read_requests_per_ns))
        gbps = self.calibration_gbps if case.sweep == "request-rate" else 20.0
        gbps = self.warp_gbps if case.kernel == "warp" and case.sweep != "request-rate" else gbps
        src, _ = g.make_indices(lay)
        plan = (30.0, 32) if spec.presort else (None, 1)
        fixed = ce.metrics.ce_fixed_us
        model = self._model_metrics(spec, lay, src, ce.value, *plan, ce_fixed_us=fixed)
        metrics = GatherMetrics(
            ratio_to_ce=gbps / ce.value, ce_gbytes_per_s=ce.value, ce_fixed_us=fixed, **model
        )
        return replace(
            self._result(spec.key, gbps, metrics, self._params(case)),
            settings=self._settings(case),
        )


def _run(base, calibration_gbps=14.4, warp_gbps=12.0, **kw):
    cfg = GatherConfig(base=base, kernels=("warp", "planned-flat"), **kw)
    session = FakeSession(cfg, calibration_gbps, warp_gbps)
    return g._Run(session, None).all(), session


SMALL = g.Layout(record_bytes=16, stride=16, slots=20_000, records=8_192, seed=3)


def test_small_records_measure_the_rate_first_and_every_row_is_capped_at_it():
    # 16-B unique records read by the warp kernel: one request each, so 14.4 GB/s is 0.9 G/s.
    run, session = _run(SMALL)
    first, *rest = session.seen
    assert first == ("warp", 16, "request-rate", 0.75)  # before it: the assumed rate
    assert rest and all(rate == pytest.approx(0.9) for *_, rate in rest)
    assert session.config.link.read_requests_per_ns == pytest.approx(0.9)
    assert g.request_rate_layout(SMALL) in session.layouts  # allocated with the rest
    (cal,) = [r for r in run.results if r.settings.sweep == "request-rate"]
    # Its own model columns are recomputed with the rate it measured: 0.9 G/s x 16 B / 50 GB/s.
    assert cal.metrics.request_cap_ratio_to_ce == pytest.approx(0.9 * 16 / 50.0)
    planned = [r for r in run.results if r.params.kernel == "planned-flat"]
    assert planned and all(r.metrics.request_cap_ratio_to_ce is not None for r in planned)
    note = next(n for n in run.notes if n.startswith("read-request rate"))
    assert "0.900 G requests/s" in note and "measured in this run" in note
    # Each row says which rate its cap used (params.link_params: shown, not identity).
    assert "read-request rate 0.750 G/s (assumed" in cal.params.link_params
    assert all("read-request rate 0.900 G/s (measured in this run" in r.params.link_params for r in planned)


def test_large_records_or_a_given_rate_need_no_calibration():
    run, session = _run(g.Layout(slots=2_000, records=1_024))
    assert all(sweep != "request-rate" for _, _, sweep, _ in session.seen)
    assert session.config.link.read_requests_per_ns == 0.75
    assert any("0.750 G requests/s (assumed" in n for n in run.notes)
    run, session = _run(SMALL, request_rate=1.2)
    assert all(sweep != "request-rate" and rate == 1.2 for _, _, sweep, rate in session.seen)
    assert any("(given (--request-rate))" in n for n in run.notes)


def test_a_calibration_that_fails_keeps_the_assumed_rate_and_says_why():
    class Broken(FakeSession):
        def gather(self, case, ce):
            if case.sweep == "request-rate":
                raise RuntimeError("launch failed")
            return super().gather(case, ce)

    cfg = GatherConfig(base=SMALL, kernels=("warp",))
    run = g._Run(Broken(cfg, 14.4), None).all()
    assert cfg.link.read_requests_per_ns == 0.75
    note = next(n for n in run.notes if n.startswith("read-request rate"))
    assert "did not measure (ERROR: RuntimeError: launch failed)" in note


def test_the_calibration_layout_and_its_request_count():
    lay = g.request_rate_layout(g.Layout())
    assert (lay.record_bytes, lay.stride, lay.pattern) == (16, 16, "unique")
    assert (lay.slots, lay.records, lay.seed) == (g.Layout().slots, g.Layout().records, g.Layout().seed)
    few = g.request_rate_layout(g.Layout(slots=1_000, records=4_096))
    assert few.pattern == "random"  # too few slots for unique
    # Random slots: a back-to-back repeat is an L1 hit and sends no request.
    src, _ = g.make_indices(few)
    repeats = int((src[1:] == src[:-1]).sum())
    assert repeats > 0
    link = pm.LinkParams()
    assert g.measured_request_rate(16.0, few, src, link) == pytest.approx((4_096 - repeats) / 4_096)
    assert g.needs_request_rate([g.Layout(), lay]) and not g.needs_request_rate([g.Layout()])


def test_a_faster_warp_row_raises_the_rate_and_the_small_rows_are_modelled_again():
    # The ladder's warp row reads the same 16-B records, one request each, at 16 GB/s = 1.0 G/s:
    # faster than the calibration's 0.9, so that is the run's rate, and every small row's cap.
    run, session = _run(SMALL, warp_gbps=16.0)
    assert all(rate == pytest.approx(0.9) for *_, rate in session.seen[1:])  # as they were measured
    assert session.config.link.read_requests_per_ns == pytest.approx(1.0, rel=1e-3)
    note = next(n for n in run.notes if n.startswith("read-request rate"))
    assert "1.000 G requests/s" in note and "the fastest of 2 gathers" in note
    planned = [r for r in run.results if r.params.kernel == "planned-flat"]
    src, _ = g.make_indices(SMALL)
    link = session.config.link
    again = g.model_metrics(g.KERNELS["planned-flat"], SMALL, src, link, 50.0, 30.0, 32, 0, 0.0)
    assert planned and all(
        r.metrics.request_cap_ratio_to_ce == pytest.approx(again["request_cap_ratio_to_ce"]) for r in planned
    )
    assert all(
        "read-request rate 1.000 G/s (measured in this run: the fastest" in r.params.link_params
        for r in planned
    )


def test_a_slower_warp_row_keeps_the_calibration_and_a_given_rate_is_never_replaced():
    run, session = _run(SMALL, warp_gbps=12.0)  # 0.75 G/s, under the calibration's 0.9
    assert session.config.link.read_requests_per_ns == pytest.approx(0.9)
    run, session = _run(SMALL, warp_gbps=40.0, request_rate=0.5)
    assert session.config.link.read_requests_per_ns == 0.5


def test_the_copy_engine_cost_per_copy_is_measured_once_and_every_row_carries_it():
    class SlowStart(FakeSession):
        """A copy engine with 1 us per copy on top of 55 GB/s."""

        def ce_reference(self, nbytes, layout):
            self.sizes = [*getattr(self, "sizes", []), nbytes]
            res = super().ce_reference(nbytes, layout)
            gbps = nbytes / (1e-6 + nbytes / 55e9) / 1e9
            return replace(res, samples=(gbps,), stats=SampleStats.of((gbps,)))

    # A given rate far above what binds: the wire decides, so the test can price it alone.
    cfg = GatherConfig(base=SMALL, kernels=("warp", "planned-flat"), request_rate=100.0)
    session = SlowStart(cfg, 14.4)
    run = g._Run(session, None).all()
    # The reference of the run's one byte count (the calibration's is the same), then the pair
    # that prices a copy: a quarter of it and all of it, once.
    assert session.sizes == [SMALL.nbytes, SMALL.nbytes // 4, SMALL.nbytes]
    refs = [r for r in run.results if r.key == g.CE_KEY]
    rows = [r for r in run.results if r.key != g.CE_KEY]
    assert len(refs) == 1 and all(r.metrics.ce_fixed_us == pytest.approx(1.0) for r in refs + rows)
    # Judged at the link's own rate plus the kernel's fixed cost, not at the CE's rate.
    planned = next(r for r in rows if r.params.kernel == "planned-flat")
    src, _ = g.make_indices(SMALL)
    ce = planned.metrics.ce_gbytes_per_s
    plain = g.model_metrics(g.KERNELS["planned-flat"], SMALL, src, cfg.link, ce, group=0)
    t_ce = SMALL.nbytes / (ce * 1e3)
    wire = plain["model_ratio_to_ce"]  # the link-bound ratio (the cap is 100 G/s)
    expected = t_ce / ((t_ce - 1.0) / wire + pm.BATCH_FIXED_US)
    assert planned.metrics.model_ratio_to_ce == pytest.approx(expected)


def test_no_pair_is_copied_for_a_cost_per_copy_when_the_copies_would_be_tiny():
    tiny = g.Layout(record_bytes=16, stride=16, slots=20_000, records=2_048, seed=3)  # 32 KiB
    run, _ = _run(tiny)
    assert all(r.metrics.ce_fixed_us is None for r in run.results)


def test_a_rows_layout_is_rebuilt_from_its_params_and_seed():
    lay = g.Layout(
        record_bytes=24, stride=32, base_offset=16, pattern="runs", run_length=4, slots=999, records=64
    )
    params = GatherParams(
        kernel="warp",
        record_bytes=24,
        stride_bytes=32,
        base_offset_bytes=16,
        pattern=g.pattern_name("runs", 4),
        slots=999,
        records=64,
    )
    assert g.layout_of(params, lay.seed) == lay
    assert g.layout_of(GatherParams(copy_bytes=1 << 20, record_bytes=24), 1) is None  # a CE row
