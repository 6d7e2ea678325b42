"""planned-lines without a GPU: its read plan, its model columns, the sort's cost term,
the record-size summary."""

import numpy as np
import pytest

from gdrdiag.bench import gather as g
from gdrdiag.model.params import GatherMetrics, GatherParams, RunSettings
from gdrdiag.model.results import BenchResult, SampleStats, Status
from gdrdiag.pathmodel import pcie as pm

LINK = pm.LinkParams(rcb=64)


def brute_plan(src, layout, group):
    """lines_step DEDUPE (native/gather.cu) record by record: who reads which segment."""
    src = sorted(int(v) for v in src)
    R, stride, base = layout.record_bytes, layout.stride, layout.base_offset
    merge = stride == R and R % 16 == 0 and base % 16 == 0
    hist: dict = {}
    reads = 0
    for first in range(0, len(src), group):
        seg_start, seg_len, last_owner = None, 0, None
        for i in range(first, min(first + group, len(src))):
            if i > 0 and src[i] == src[i - 1]:
                continue  # a repeat: its run's owner reads it
            reads += 1
            if merge and last_owner is not None and src[i] == src[last_owner] + 1:
                seg_len += 1
            else:
                if seg_start is not None:
                    key = ((base + seg_start * stride) % 4096, seg_len)
                    hist[key] = hist.get(key, 0) + 1
                seg_start, seg_len = src[i], 1
            last_owner = i
        if seg_start is not None:
            key = ((base + seg_start * stride) % 4096, seg_len)
            hist[key] = hist.get(key, 0) + 1
    return hist, reads


@pytest.mark.parametrize("group", [8, 32])
@pytest.mark.parametrize(
    "R,stride,pattern,slots",
    [(64, 64, "random", 400), (64, 64, "unique", 5000), (656, 656, "random", 300), (48, 64, "random", 200)],
)
def test_planned_read_plan_matches_the_kernel_record_by_record(group, R, stride, pattern, slots):
    lay = g.Layout(record_bytes=R, stride=stride, pattern=pattern, slots=slots, records=3000, seed=3)
    src, _ = g.make_indices(lay)
    assert g.planned_read_plan(src, lay, group) == brute_plan(src, lay, group)


def test_planned_read_plan_reads_each_slot_once_and_unaligned_layouts_every_record():
    lay = g.Layout(record_bytes=64, stride=64, slots=500, records=4000, seed=1)
    src, _ = g.make_indices(lay)
    hist, reads = g.planned_read_plan(src, lay, 32)
    assert reads == len(np.unique(src)) < lay.records
    assert sum(k * c for (_, k), c in hist.items()) == reads
    odd = g.Layout(record_bytes=100, stride=100, slots=500, records=4000, seed=1)
    assert g.planned_read_plan(g.make_indices(odd)[0], odd, 32)[1] == odd.records


def test_records_per_step_and_sweep_sizes():
    assert g.planned_records_per_step(16) == g.planned_records_per_step(128) == 32
    assert g.planned_records_per_step(129) == g.planned_records_per_step(656) == 8
    sizes = [c.layout.record_bytes for c in g.sweep_cases("record-size", g.Layout(), ["warp"], 132)]
    assert sizes[:3] == [16, 32, 64] and sizes[-1] == 4096


def test_model_columns_for_planned_lines():
    spec = g.KERNELS["planned-lines"]
    uniq = g.Layout(record_bytes=64, stride=64, pattern="unique", slots=50_000, records=40_000)
    src, _ = g.make_indices(uniq)
    m = g.model_metrics(spec, uniq, src, LINK, 55.0, plan_us=30.0, reuse=32, group=8)
    sorted_lines = g.model_metrics(g.KERNELS["sorted-lines"], uniq, src, LINK, 55.0, plan_us=30.0)
    # No repeats and the same groups: the same read plan as sort-first, less the sort's cost.
    assert m["records_read_fraction"] == 1.0
    assert m["model_ratio_to_ce"] == pytest.approx(sorted_lines["model_ratio_to_ce"])
    assert sorted_lines["model_kernel_ratio_to_ce"] < m["model_kernel_ratio_to_ce"] < m["ceiling_ratio_to_ce"]
    # Larger steps split fewer lines between warps: a higher ceiling.
    assert g.model_metrics(spec, uniq, src, LINK, group=32)["model_ratio_to_ce"] > m["model_ratio_to_ce"]
    rand = g.Layout(record_bytes=128, stride=128, pattern="random", slots=50_000, records=40_000)
    src, _ = g.make_indices(rand)
    r = g.model_metrics(spec, rand, src, LINK, group=32)
    # Whole-line records, each distinct slot read once: 0.927 of CE over the read fraction.
    assert r["model_ratio_to_ce"] == pytest.approx(
        pm.whole_line_efficiency(LINK) / pm.ce_efficiency(LINK) / r["records_read_fraction"]
    )
    assert "model_kernel_ratio_to_ce" not in r  # no plan time measured, no prediction


def test_sort_cost_term():
    # 16 MiB at 0.9 x 55 GB/s is 339 us; 34 us of sort in every batch costs 9%.
    n = 16 << 20
    assert pm.ratio_with_fixed_cost(0.9, n, 55.0, 0.0) == pytest.approx(0.9)
    assert pm.ratio_with_fixed_cost(0.9, n, 55.0, 33.9) == pytest.approx(0.9 * 339 / (339 + 33.9), rel=1e-3)
    k = pm.reuse_for_fraction(0.9, n, 55.0, 33.9, 0.99)
    assert pm.ratio_with_fixed_cost(0.9, n, 55.0, 33.9 / k) >= 0.99 * 0.9
    assert pm.ratio_with_fixed_cost(0.9, n, 55.0, 33.9 / (k - 1)) < 0.99 * 0.9
    with pytest.raises(ValueError):
        pm.reuse_for_fraction(0.9, n, 55.0, 33.9, 1.0)


def _row(kernel, R, pattern, gbps, ratio, ceiling, pred=None):
    metrics = GatherMetrics(ratio_to_ce=ratio, ceiling_ratio_to_ce=ceiling, model_kernel_ratio_to_ce=pred)
    return BenchResult(
        key="gather_" + kernel.replace("-", "_"),
        status=Status.OK,
        params=GatherParams(kernel=kernel, record_bytes=R, pattern=pattern),
        settings=RunSettings(sweep="record-size"),
        unit="GB/s",
        samples=(gbps,),
        stats=SampleStats.of((gbps,)),
        metrics=metrics,
        verified=True,
    )


def test_record_size_summary_picks_the_fastest_against_its_own_ceiling():
    rows = g.record_size_summary(
        [
            _row("warp", 64, "unique", 42.0, 0.77, 0.808),
            _row("planned-lines", 64, "unique", 49.0, 0.90, 0.906, pred=0.904),
            _row("warp", 128, "unique", 50.7, 0.926, 0.927),
            _row("planned-lines", 128, "unique", 50.0, 0.913, 0.927, pred=0.925),
        ]
    )
    assert [(r["record_bytes"], r["best_kernel"]) for r in rows] == [(64, "planned-lines"), (128, "warp")]
    assert rows[0]["best_over_ceiling"] == pytest.approx(0.90 / 0.906)
    assert rows[0]["kernel_predicted_over_measured"] == pytest.approx(0.904 / 0.90)
    assert rows[1]["kernel_ratio_to_ce"] == 0.913


def flat_kernel_segments(src, layout):
    """gather_flat_dedupe (native/gather.cu) chunk by chunk: the contiguous source ranges each
    512-B warp load reads, as {(start mod 4096, records): count}."""
    src = sorted(int(v) for v in src)
    R, stride, base = layout.record_bytes, layout.stride, layout.base_offset
    chunks = R // 16
    hist: dict = {}
    total = len(src) * chunks
    for block in range(0, total, 32):  # one warp load: chunks block .. block + 31
        addrs = []
        for t in range(block, min(block + 32, total)):
            rec, part = divmod(t, chunks)
            if rec == 0 or src[rec - 1] != src[rec]:  # duplicates load nothing
                addrs.append(base + src[rec] * stride + 16 * part)
        start = prev = None
        for a in addrs + [None]:
            if a is not None and prev is not None and a == prev + 16:
                prev = a
                continue
            if start is not None:
                key = (start % 4096, (prev + 16 - start) // R)
                hist[key] = hist.get(key, 0) + 1
            start = prev = a
    return hist


@pytest.mark.parametrize(
    "R,pattern,slots", [(16, "random", 300), (64, "random", 400), (64, "unique", 5000), (256, "random", 200)]
)
def test_planned_flat_reads_what_its_model_plan_says(R, pattern, slots):
    # The model reads planned-flat as planned-lines' plan with groups of 512 / R records.
    lay = g.Layout(record_bytes=R, stride=R, pattern=pattern, slots=slots, records=3000, seed=7)
    src, _ = g.make_indices(lay)
    hist, reads = g.planned_read_plan(src, lay, g.flat_records_per_load(R))
    assert hist == flat_kernel_segments(src, lay)
    assert reads == len(np.unique(src))
    spec = g.KERNELS["planned-flat"]
    m = g.model_metrics(spec, lay, src, LINK, 55.0, plan_us=30.0, reuse=32)
    same = g.model_metrics(
        g.KERNELS["planned-lines"], lay, src, LINK, 55.0, 30.0, 32, g.flat_records_per_load(R)
    )
    assert m["model_ratio_to_ce"] == pytest.approx(same["model_ratio_to_ce"])
    assert m["model_kernel_ratio_to_ce"] < m["ceiling_ratio_to_ce"]


@pytest.mark.parametrize("R", [16, 32, 64, 128, 256, 512])
def test_planned_flat_takes_records_that_divide_512_bytes(R):
    assert g.flat_layout_problem(R, R, 0) is None and g.flat_records_per_load(R) * R == 512
    assert g.bytes_in_flight_per_warp(g.KERNELS["planned-flat"], R) == 4 * 512


@pytest.mark.parametrize(
    "R,stride,off", [(656, 656, 0), (48, 48, 0), (1024, 1024, 0), (64, 64, 8), (64, 72, 0)]
)
def test_planned_flat_refuses_other_layouts_with_the_reason(R, stride, off):
    why = g.flat_layout_problem(R, stride, off)
    assert why and "divide 512 B" in why and f"R={R}" in why and "planned-lines" in why


def test_record_size_summary_predicts_the_best_planned_kernel():
    rows = g.record_size_summary(
        [
            _row("planned-lines", 64, "random", 62.0, 1.15, 1.306, pred=1.30),
            _row("planned-flat", 64, "random", 66.0, 1.22, 1.306, pred=1.29),
            _row("warp", 656, "random", 48.0, 0.88, 0.89),
            _row("planned-lines", 656, "random", 70.0, 1.31, 1.36, pred=1.35),
        ]
    )
    assert rows[0]["best_kernel"] == rows[0]["kernel"] == "planned-flat"
    assert rows[0]["kernel_predicted_over_measured"] == pytest.approx(1.29 / 1.22)
    assert rows[1]["kernel"] == "planned-lines"


def test_the_request_rate_caps_kernels_whose_requests_are_counted_exactly():
    # 16-B random records: the warp kernel sends one request per record, so at 0.75 G requests/s
    # and a 50 GB/s CE it delivers at most 12 GB/s = 0.24 of CE, under its wire share. The
    # planned kernels' requests are counted sector by sector (gather_requests), so their plan is
    # capped too; sorted-lines leaves repeats to L1, its count is an upper bound: no cap.
    lay = g.Layout(record_bytes=16, stride=16, pattern="random", slots=5000, records=3000, seed=3)
    src, _ = g.make_indices(lay)
    warp = g.model_metrics(g.KERNELS["warp"], lay, src, LINK, 50.0)
    assert warp["request_cap_ratio_to_ce"] == pytest.approx(0.75 * 16 / 50.0)
    assert warp["model_ratio_to_ce"] == pytest.approx(warp["request_cap_ratio_to_ce"])
    # (its ceiling also counts back-to-back repeats as L1 hits: a few requests fewer)
    assert warp["ceiling_ratio_to_ce"] == pytest.approx(warp["request_cap_ratio_to_ce"], rel=0.01)
    no_ce = g.model_metrics(g.KERNELS["warp"], lay, src, LINK)
    assert no_ce.get("request_cap_ratio_to_ce") is None and no_ce["model_ratio_to_ce"] > 0.24
    slow = pm.LinkParams(rcb=64, read_requests_per_ns=0.2)  # a rate low enough to bind the plan
    for kernel in ("planned-flat", "planned-lines"):
        free = g.model_metrics(g.KERNELS[kernel], lay, src, LINK, 50.0, plan_us=30.0, reuse=32)
        capped = g.model_metrics(g.KERNELS[kernel], lay, src, slow, 50.0, plan_us=30.0, reuse=32)
        cap = capped["request_cap_ratio_to_ce"]
        assert cap == pytest.approx(free["request_cap_ratio_to_ce"] * 0.2 / 0.75)
        assert capped["ceiling_ratio_to_ce"] == pytest.approx(cap)
        assert cap < free["ceiling_ratio_to_ce"]
        assert capped["model_kernel_ratio_to_ce"] < cap
    sorted_lines = g.model_metrics(g.KERNELS["sorted-lines"], lay, src, slow, 50.0, plan_us=30.0)
    assert sorted_lines.get("request_cap_ratio_to_ce") is None
    # 256-B records: one request moves 256 B, 192 GB/s of requests: the wire binds.
    big = g.Layout(record_bytes=256, stride=256, pattern="random", slots=5000, records=3000, seed=3)
    wide = g.model_metrics(g.KERNELS["warp"], big, g.make_indices(big)[0], LINK, 50.0)
    assert wide["request_cap_ratio_to_ce"] > wide["model_ratio_to_ce"]
