"""The gather model against saved measurements (tests/fixtures/gather/, captured on the device
machine): the model is a pure function of the indices, the CE rate and the plan time each row
recorded, so every row is re-scored here with the current code, no GPU needed."""

import json
from pathlib import Path

import pytest

from gdrdiag.bench import gather as g
from gdrdiag.pathmodel import pcie as pm

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "gather"
H100 = FIXTURES / "h100_record_size_2026-11-26.json"


def _load(path):
    data = json.loads(path.read_text())
    lay = g.Layout(slots=data["slots"], records=data["records"], seed=data["seed"])
    return data, lay


def _layout(base, row):
    R = row["record_bytes"]
    return g.Layout(
        record_bytes=R,
        stride=R,
        pattern=row["pattern"],
        slots=base.slots,
        records=base.records,
        seed=base.seed,
    )


def _score(data, base, rate=None):
    """Per record-size row: (row, ceiling, prediction) with the model at ``rate`` G requests/s.

    Without ``rate``, each row's own: the rate its sweep measured. Rows that carry the CE's cost
    per copy (``ce_fixed_us``) are timed at the link's rate (pcie_model.batch_ratio).
    """
    out, cache = [], {}
    for row in data["rows"]:
        if row["sweep"] != "record-size":
            continue
        link = pm.LinkParams(**data["link"], read_requests_per_ns=rate or row["request_rate"])
        lay = _layout(base, row)
        if lay.index_key not in cache:
            cache = {lay.index_key: g.make_indices(lay)[0]}
        src = cache[lay.index_key]
        m = g.model_metrics(
            g.KERNELS[row["kernel"]],
            lay,
            src,
            link,
            row["ce_gbytes_per_s"],
            row["plan_us"],
            row["plan_reuse"],
            row["group"],
            row.get("ce_fixed_us"),
        )
        out.append(
            (row, m["ceiling_ratio_to_ce"], m.get("model_kernel_ratio_to_ce") or m["ceiling_ratio_to_ce"])
        )
    return out


@pytest.fixture(scope="module")
def h100():
    data, base = _load(H100)
    return data, base, _score(data, base, data["request_rate"])


def test_the_calibration_row_gives_the_rate_the_run_used(h100):
    data, base, _ = h100
    cal = next(r for r in data["rows"] if r["sweep"] == "request-rate")
    lay = g.request_rate_layout(base)
    assert (cal["record_bytes"], cal["kernel"], cal["pattern"]) == (16, "warp", lay.pattern)
    src, _ = g.make_indices(lay)
    rate = g.measured_request_rate(cal["gbytes_per_s"], lay, src, pm.LinkParams(**data["link"]))
    assert rate == pytest.approx(data["request_rate"])
    assert 0.70 < rate < 0.80  # the H100's 0.75 G/s calibrated first, measured again in the sweep


def _best(scored, pattern, R):
    rows = [(row, c, p) for row, c, p in scored if row["pattern"] == pattern and row["record_bytes"] == R]
    return max(rows, key=lambda t: t[0]["ratio_to_ce"])


SIZES = [64, 128, 256, 512, 640, 656, 768, 1024, 2048, 4096]


@pytest.mark.parametrize("pattern", ["unique", "random"])
@pytest.mark.parametrize("R", SIZES)
def test_best_kernel_reaches_its_ceiling_from_64_bytes_up(h100, pattern, R):
    # Best / ceiling >= 0.99 at 64 B-4 KiB in both patterns (this run: 0.994-1.003).
    _, _, scored = h100
    row, ceiling, _ = _best(scored, pattern, R)
    assert 0.99 <= row["ratio_to_ce"] / ceiling <= 1.01, (row["kernel"], row["ratio_to_ce"], ceiling)


@pytest.mark.parametrize("pattern", ["unique", "random"])
@pytest.mark.parametrize("R", [16, 32])
def test_small_records_are_predicted_within_3_percent(h100, pattern, R):
    # The best kernel at 16 and 32 B is a planned one; its prediction (sector plan, request cap
    # at the measured rate, sort cost) against its measurement. Unique 16 B is the tightest:
    # 0.971 (the kernel beats the sector count by ~3%, docs/gather-bench.md "Not done").
    _, _, scored = h100
    row, _, pred = _best(scored, pattern, R)
    assert row["kernel"] in ("planned-flat", "planned-lines")
    assert pred / row["ratio_to_ce"] == pytest.approx(1.0, abs=0.03), (
        row["kernel"],
        pred,
        row["ratio_to_ce"],
    )


def test_the_per_segment_count_missed_16_byte_records(h100):
    # Why the model changed: pricing planned-flat per sorted segment (each run of consecutive
    # slots its own requests, no request cap), as calibrated on the H100, put 16-B records
    # 12-15% off; the sector plan brings them within 3%.
    data, base, scored = h100
    link = pm.LinkParams(**data["link"])
    for pattern in ("unique", "random"):
        row, _, pred = _best(scored, pattern, 16)
        assert row["kernel"] == "planned-flat"
        lay = _layout(base, row)
        hist, reads = g.planned_read_plan(g.make_indices(lay)[0], lay, g.flat_records_per_load(16))
        old = pm.predict(hist, 16, "sector", line_aware=True, p=link).ratio_to_ce * lay.records / reads
        old = pm.ratio_with_fixed_cost(
            old, lay.nbytes, row["ce_gbytes_per_s"], row["plan_us"] / row["plan_reuse"]
        )
        assert abs(old / row["ratio_to_ce"] - 1) > 0.10
        assert abs(pred / row["ratio_to_ce"] - 1) < 0.03


# Recorded since the model times batches at the link's rate (the CE's cost per copy taken out,
# 3 us of the kernel's own) and takes the run's fastest one-request rate. The two H200 runs were
# written before the CE's cost was measured: their rows carry it fitted over each Report's
# 4-32 MiB CE references. Each: (file, cells of 64 B-4 KiB at >= 0.99 of the ceiling, of 20).
LATER = {
    "h200_a": ("h200_record_size_2026-11-26_a.json", 19),  # random 656 B at 0.965 (0.997 in run b)
    "h200_b": ("h200_record_size_2026-11-26_b.json", 19),  # unique 656 B at 0.9897
    "h100_x2": ("h100_record_size_2026-11-27.json", 17),  # 640-656 B at 0.983-0.988
}


@pytest.fixture(scope="module", params=sorted(LATER))
def later(request):
    name, ok_cells = LATER[request.param]
    data, base = _load(FIXTURES / name)
    return data, ok_cells, _score(data, base)


def test_the_h200_and_the_h100_pair_keep_64_bytes_up_at_their_ceiling(later):
    data, ok_cells, scored = later
    ratios = [
        r["ratio_to_ce"] / c
        for pattern in ("unique", "random")
        for R in SIZES
        for r, c, _ in [_best(scored, pattern, R)]
    ]
    assert len(ratios) == 20
    assert sum(0.99 <= x <= 1.04 for x in ratios) >= ok_cells, sorted(ratios)
    assert min(ratios) > 0.96, sorted(ratios)


def test_the_h200_and_the_h100_pair_predict_16_and_32_byte_records_within_3_percent(later):
    data, _, scored = later
    for pattern in ("unique", "random"):
        for R in (16, 32):
            row, _, pred = _best(scored, pattern, R)
            assert row["kernel"] in ("planned-flat", "planned-lines")
            assert pred / row["ratio_to_ce"] == pytest.approx(1.0, abs=0.03), (pattern, R, row["kernel"])


def test_the_copy_engines_cost_per_copy_is_what_the_old_model_missed_on_the_h200():
    # Judged against the 4 MiB CE copy as it ran (the model before), unique 16-B records were
    # predicted 5% low on the H200: that copy paid 5.6-6.1 us per copy, the gather did not.
    data, base = _load(FIXTURES / LATER["h200_a"][0])
    rows = [dict(r, ce_fixed_us=None) for r in data["rows"]]
    old = _score(dict(data, rows=rows), base)
    new = _score(data, base)
    for scored, low, high in ((old, 0.94, 0.96), (new, 0.98, 1.02)):
        row, _, pred = _best(scored, "unique", 16)
        assert low < pred / row["ratio_to_ce"] < high
