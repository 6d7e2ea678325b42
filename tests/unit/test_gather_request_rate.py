"""The request-rate calibration of gather-bench without a GPU: when it runs, what it measures, and
that every row after it is capped at the measured rate (a fake session stands in for the GPU)."""

from dataclasses import replace

import pytest

from gdrdiag import pcie_model as pm
from gdrdiag.bench import gather as g
from gdrdiag.bench.gather_config import GatherConfig
from gdrdiag.bench.gather_session import GatherSession
from gdrdiag.errors import NotSupported
from gdrdiag.model.params import GatherMetrics, GatherParams, RunSettings
from gdrdiag.model.results import BenchResult, SampleStats, Status


class FakeSession:
    """What gather._Run asks of a GatherSession, with made-up rates: no GPU, no CUDA."""

    _params = GatherSession._params  # the real session's params (link parameters and rate included)
    _link_params = GatherSession._link_params

    def __init__(self, config, calibration_gbps):
        self.config = config
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

    def _model_metrics(self, spec, layout, src, ce_gbps, plan_us=None, reuse=1, group=0):
        return g.model_metrics(spec, layout, src, self.config.link, ce_gbps, plan_us, reuse, group)

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
        src, _ = g.make_indices(lay)
        model = self._model_metrics(spec, lay, src, ce.value, 30.0 if spec.presort else None, 32)
        metrics = GatherMetrics(ratio_to_ce=gbps / ce.value, ce_gbytes_per_s=ce.value, **model)
        return replace(
            self._result(spec.key, gbps, metrics, self._params(case)),
            settings=self._settings(case),
        )


def _run(base, calibration_gbps=14.4, **kw):
    cfg = GatherConfig(base=base, kernels=("warp", "planned-flat"), **kw)
    session = FakeSession(cfg, calibration_gbps)
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
