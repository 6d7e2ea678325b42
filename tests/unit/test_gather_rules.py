"""ALIGN-* and PERF-GATHER-* rules from plain BenchResults (no GPU)."""

from gdrdiag.diagnose import context
from gdrdiag.diagnose import gather_rules as gr
from gdrdiag.model import Report
from gdrdiag.model.params import GatherMetrics, GatherParams, RunSettings
from gdrdiag.model.results import BenchResult, SampleStats, Status


def gather(
    kernel="lines",
    R=656,
    stride=None,
    off=0,
    pattern="random",
    ratio=0.88,
    model=0.893,
    loss=0.042,
    sweep="ladder",
    sm_limit=None,
    sms_total=132,
    **metrics,
):
    m = {
        "ratio_to_ce": ratio,
        "model_ratio_to_ce": model,
        "layout_partial_line_loss": loss,
        "ce_gbytes_per_s": 55.5,
    }
    m.update(metrics)
    return BenchResult(
        settings=RunSettings(sweep=sweep),
        key="gather_" + kernel.replace("-", "_"),
        status=Status.OK,
        params=GatherParams(
            kernel=kernel,
            record_bytes=R,
            stride_bytes=stride or R,
            base_offset_bytes=off,
            pattern=pattern,
            sm_limit=sm_limit,
            sms_total=sms_total,
            slots=300000,
            mps_bytes=256,
            mrrs_bytes=4096,
            rcb_bytes=128,
        ),
        stats=SampleStats.of([ratio * 55.5]),
        metrics=GatherMetrics(**m),
        verified=True,
    )


def codes(findings):
    return [f.code for f in findings]


def test_656_packed_random_is_not_an_alignment_problem():
    # The line-aware model's partial-line loss of packed 656-B records is ~4.4% (656/(672+6x22) against
    # 128/(128+22), docs/gather-bench.md "The PCIe model"), under ALIGN-01's 5% threshold.
    assert gr.gather_findings([gather()]) == []


def test_offset_that_splits_whole_lines_gets_align_01_with_the_fix():
    f = gr.align_findings([gather(R=640, off=16, loss=0.066, ratio=0.856, model=0.871)])
    assert codes(f) == ["ALIGN-01"]
    assert "128-B boundary instead of +16 B" in f[0].advice
    assert "pad the stride" not in f[0].advice  # 640 is already a whole number of lines
    assert any("layout_partial_line_loss = 0.066" in e for e in f[0].evidence)


def test_small_misaligned_records_get_padding_advice_and_align_02():
    f = gr.align_findings([gather(R=100, stride=100, loss=0.29, ratio=0.62, model=0.66)])
    assert codes(f) == ["ALIGN-01", "ALIGN-02"]
    assert "pad the stride to 128 B" in f[0].advice
    assert "multiple of 16" in f[1].advice


def test_one_finding_per_layout_not_per_kernel():
    rs = [gather(R=640, off=16, loss=0.066, kernel=k) for k in ("warp", "lines", "bulk")]
    assert codes(gr.align_findings(rs)) == ["ALIGN-01"]


def test_long_runs_suggest_the_copy_engine():
    f = gr.align_findings([gather(pattern="runs:4096", ratio=0.90, loss=0.0)])
    assert codes(f) == ["ALIGN-03"]
    short = gr.align_findings([gather(pattern="runs:16", ratio=0.90, loss=0.0)])
    assert short == []


def test_perf_01_when_measurement_is_well_below_the_model():
    f = gr.perf_findings(
        [
            gather(kernel="lines", R=100, ratio=0.37, model=0.66),
            gather(kernel="lines", R=64, ratio=0.50, model=0.82),
        ]
    )
    assert codes(f) == ["PERF-GATHER-01"]
    assert len(f[0].evidence) == 2 and "R=100" in f[0].evidence[0]  # worst first


def test_perf_01_ignores_sm_limited_rows_and_close_results():
    rs = [
        gather(ratio=0.3, sweep="sm", sm_limit=1),
        gather(ratio=0.86, model=0.893),
        gather(kernel="byte", ratio=0.02, model=None),
    ]
    assert gr.perf_findings(rs) == []


def test_perf_02_weak_copy_engine_reference():
    ce = BenchResult(
        key="gather_ce_reference",
        status=Status.OK,
        stats=SampleStats.of([40.0]),
        metrics=GatherMetrics(ratio_to_raw=40 / 63.02),
    )
    assert codes(gr.perf_findings([ce])) == ["PERF-GATHER-02"]
    good = BenchResult(
        key="gather_ce_reference",
        status=Status.OK,
        stats=SampleStats.of([55.5]),
        metrics=GatherMetrics(ratio_to_raw=0.88),
    )
    unknown = BenchResult(
        key="gather_ce_reference",
        status=Status.OK,
        stats=SampleStats.of([55.5]),
        metrics=GatherMetrics(ratio_to_raw=None),
    )
    assert gr.perf_findings([good, unknown]) == []


def test_perf_03_sm_budget_severity():
    info = gr.perf_findings([gather(sweep="sm", sm_limit=132, min_sms_for_95pct=4.0)])
    assert codes(info) == ["PERF-GATHER-03"] and info[0].severity.value == "INFO"
    warn = gr.perf_findings([gather(sweep="sm", sm_limit=132, min_sms_for_95pct=64.0)])
    assert warn[0].severity.value == "WARN"


def test_errors_and_waived_results_are_ignored_and_report_rule_form_works():
    bad = BenchResult.error(
        "gather_lines", "wrong data", params=GatherParams(record_bytes=100, stride_bytes=100)
    )
    waived = BenchResult.waived("gather_bulk", "needs sm_90")
    assert gr.gather_findings([bad, waived]) == []
    rep = Report(results=(gather(R=640, off=16, loss=0.066),))
    assert codes(gr.RULES[0](rep, context(rep)[0])) == ["ALIGN-01"]
