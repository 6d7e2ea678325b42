"""gather-bench on a real GPU: every kernel verified for every layout kind, the ladder order, the
best kernel against CE and the model, SM limits, poison checks, nothing leaked."""

import json

import numpy as np
import pytest
from typer.testing import CliRunner

from gdrdiag.bench import gather
from gdrdiag.errors import UserInputError
from gdrdiag.hw import cuda
from gdrdiag.model.results import Status

pytestmark = pytest.mark.gpu


def _free() -> int:
    with cuda.GpuContext(0) as gpu:
        return gpu.free_memory()[0]


def _run(layout, kernels=gather.LADDER, sweeps=("ladder",), **kw):
    cfg = gather.GatherConfig(
        base=layout, kernels=kernels, sweeps=sweeps, iterations=5, time_budget_s=0.05, **kw
    )
    return gather.run(cfg)


def _by_kernel(results):
    return {r.params.kernel: r for r in results if r.key != gather.CE_KEY}


@pytest.mark.parametrize(
    "R,stride,off,pattern,k",
    [
        (656, 656, 0, "random", 1),  # the KV token, 16-B aligned, partial lines
        (640, 640, 16, "random", 1),  # whole lines made partial by the base offset
        (100, 100, 0, "random", 1),  # not 16-B aligned: the shifted general paths
        (37, 53, 3, "random", 1),  # odd everything
        (656, 656, 0, "runs", 5),  # merged runs in gather_lines, runs crossing warp groups
        (4096, 4096, 0, "sorted", 1),  # several passes per record, duplicates
        (5000, 5120, 64, "random", 1),  # records larger than one warp_ilp pass (4 KiB)
        (64, 64, 0, "random", 1),  # planned-flat's domain: records that divide 512 B
        (256, 256, 16, "random", 1),  # ... starting mid-line
    ],
)
def test_every_kernel_is_verified(R, stride, off, pattern, k):
    lay = gather.Layout(
        record_bytes=R,
        stride=stride,
        base_offset=off,
        pattern=pattern,
        run_length=k,
        slots=20_000,
        records=8_192,
        seed=11,
    )
    run = _run(lay)
    for r in run.results:
        if r.params.kernel == "bulk" and r.status is Status.WAIVED:
            continue  # before sm_90
        if r.params.kernel == "planned-flat" and gather.flat_layout_problem(R, stride, off):
            assert r.status is Status.WAIVED and "divide 512 B" in (r.reason or ""), (r.status, r.reason)
            continue
        assert r.status is Status.OK, (r.key, r.reason)
        assert r.verified is True


def test_ladder_order_and_best_kernel_at_656_random():
    run = _run(gather.Layout())  # the workload: 262,144 x 656 B from 300,000 slots
    k = _by_kernel(run.results)
    gbps = {name: r.value for name, r in k.items() if r.status is Status.OK}
    assert gbps["byte"] * 5 < gbps["vec16"]
    assert gbps["vec16"] * 2 < gbps["warp"]
    # warp and warp-ilp differ by ~1-2% (docs/benchmarks.md), under one run's noise on a shared
    # machine: no order is asserted between them, only that they are the same class of kernel.
    assert 0.5 < gbps["warp-ilp"] / gbps["warp"] < 2.0
    # lines vs warp, the model's 3% agreement and sorted-lines' 1.25 x CE are measured in benchmarks
    # (docs/benchmarks.md): on a shared machine one run moved lines from 0.88 to 0.64 of CE, so a test
    # asserts only what such noise cannot flip: every kernel within reach of its ceiling.
    for name in ("lines", "sorted-lines"):
        m = k[name].metrics
        assert 0.1 * m.ceiling_ratio_to_ce <= m.ratio_to_ce <= 2.0, (
            name,
            m.ratio_to_ce,
            m.ceiling_ratio_to_ce,
        )
    assert any("best kernel" in n for n in run.notes)


def test_sort_first_helps_without_repeated_slots():
    run = _run(gather.Layout(pattern="unique"), kernels=("lines", "sorted-lines"))
    k = _by_kernel(run.results)
    # The ~4% gain over lines is a benchmark number (noise on a shared link exceeds it); the read
    # plan is exact: with unique indices every record is read once.
    assert all(r.status is Status.OK and r.verified for r in k.values())
    assert k["sorted-lines"].metrics.records_read_fraction == 1.0


def test_whole_line_records_are_gathered_and_modelled():
    run = _run(gather.Layout(record_bytes=640, stride=640), kernels=("warp", "lines"))
    # Reaching the 128-B completion ceiling (0.92-0.93 of CE) is a benchmark (docs/benchmarks.md):
    # a co-tenant on the shared link has halved one run's ratio (0.45 against a 0.93 ceiling), so a
    # test asserts only a verified gather and a model ceiling for whole lines.
    for r in _by_kernel(run.results).values():
        assert r.status is Status.OK and r.verified, r.params.kernel
        assert 0.0 < r.metrics.ratio_to_ce and 0.85 < r.metrics.ceiling_ratio_to_ce < 0.95, r.params.kernel


def test_sm_limit_uses_that_many_sms_and_sm_sweep_finds_the_budget():
    lay = gather.Layout(records=65_536)
    run = _run(lay, kernels=("lines",), sweeps=("ladder", "sm"), sweep_kernels=("lines",), quick=True)
    rows = [r for r in run.results if r.settings.sweep == "sm"]
    assert rows and all(r.status is Status.OK for r in rows)
    for r in rows:
        assert r.metrics.sms_used == r.params.sm_limit
    assert any("95% of its all-SM bandwidth" in n for n in run.notes)
    full = [r for r in rows if r.params.sm_limit == r.params.sms_total]
    assert full[0].metrics.min_sms_for_95pct >= 1


def test_an_unwritten_destination_slot_is_an_error(monkeypatch):
    real = gather.make_indices

    def one_destination_twice(layout):
        src, dst = real(layout)
        dst = dst.copy()
        dst[1] = dst[0]  # slot dst[1] is never written: its poison must be found
        return src, dst

    from gdrdiag.bench import gather_session

    monkeypatch.setattr(gather_session, "make_indices", one_destination_twice)
    run = _run(gather.Layout(slots=10_000, records=4_096), kernels=("warp", "lines"))
    errors = [r for r in run.results if r.key != gather.CE_KEY]
    assert errors and all(r.status is Status.ERROR and r.verified is False for r in errors)
    assert all("wrong data" in r.reason for r in errors)


def test_ce_reference_is_measured_once_per_byte_count_and_verified():
    run = _run(
        gather.Layout(slots=10_000, records=4_096),
        kernels=("warp",),
        sweeps=("ladder", "record-size"),
        sweep_kernels=("warp",),
        quick=True,
    )
    ce = [r for r in run.results if r.key == gather.CE_KEY]
    assert len({r.params.copy_bytes for r in ce}) == len(ce) >= 3
    assert all(r.status is Status.OK and r.verified for r in ce)
    link = run.link
    for r in run.results:
        if r.key != gather.CE_KEY and r.status is Status.OK:
            assert r.metrics.ratio_to_ce and r.metrics.bytes_in_flight_per_sm > 0
            if link is not None and link.raw_gbytes_per_s:
                assert 0 < r.metrics.ratio_to_raw < 1


def test_too_large_for_the_device_is_a_user_error_and_leaks_nothing():
    free_before = _free()
    with cuda.GpuContext(0) as gpu:
        total = gpu.free_memory()[1]
    records = total // 4096 + 1024  # destination larger than the whole GPU
    lay = gather.Layout(record_bytes=4096, stride=4096, slots=16, records=int(records))
    # One of the preflights, before any allocation: the device check, or, where host memory is
    # smaller than the GPU's (the H200 machine: 128 GiB host, 139 GiB GPU), the pinned table's.
    with pytest.raises(UserInputError, match="this run needs|bytes of host memory are free"):
        _run(lay, kernels=("warp",))
    assert _free() > free_before - (64 << 20)


def test_cli_quick_json_end_to_end(tmp_path):
    from gdrdiag.cli import app

    out = tmp_path / "g.json"
    res = CliRunner().invoke(
        app,
        [
            "--json",
            "gather-bench",
            "--quick",
            "--kernels",
            "warp,lines",
            "--requests",
            "16",
            "--sweep",
            "sm",
            "--json-out",
            str(out),
        ],
    )
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    assert data == json.loads(out.read_text())
    assert all(r["status"] == "OK" for r in data["results"])
    assert np.isfinite([r["stats"]["median"] for r in data["results"]]).all()


@pytest.mark.parametrize(
    "R,pattern,slots,records",
    [
        (16, "random", 20_000, 8_192),  # the smallest sweep size; about a fifth of draws repeat
        (64, "random", 500, 8_192),  # each slot ~16 times: runs of one slot cross warp groups
        (64, "unique", 20_000, 8_192),  # no repeats: merging only
        (656, "random", 2_000, 8_192),  # partial lines, several instructions per record
        (4096, "random", 300, 2_048),  # several passes per record and long runs of one slot
    ],
)
def test_planned_lines_verified_and_reads_each_slot_once(R, pattern, slots, records):
    lay = gather.Layout(record_bytes=R, stride=R, pattern=pattern, slots=slots, records=records, seed=5)
    run = _run(lay, kernels=("planned-lines",), plan_reuse=4)
    r = _by_kernel(run.results)["planned-lines"]
    assert r.status is Status.OK and r.verified is True, r.reason
    assert r.params.plan_reuse == 4 and r.metrics.plan_us > 0
    src, _ = gather.make_indices(lay)
    assert r.metrics.records_read_fraction == pytest.approx(len(np.unique(src)) / records)


def test_planned_lines_at_64b_unique_beats_a_sort_per_batch_and_nears_its_ceiling():
    # The small-record case: 262,144 x 64 B from 300,000 unique slots. The sort costs
    # ~10% of a 64-B batch, so sharing it across 32 batches is several times the noise.
    lay = gather.Layout(record_bytes=64, stride=64, pattern="unique")
    run = _run(lay, kernels=("sorted-lines", "planned-lines"))
    k = _by_kernel(run.results)
    planned, sorted_ = k["planned-lines"].metrics, k["sorted-lines"].metrics
    # The gain over a sort per batch and the model's agreement are benchmarks (docs/benchmarks.md;
    # a shared link moved the ratio by 25% between runs). What noise cannot flip: both verified,
    # the planned kernel within reach of its ceiling, and the model's sort-cost term present.
    assert k["planned-lines"].verified and k["sorted-lines"].verified
    assert planned.ratio_to_ce >= 0.1 * planned.ceiling_ratio_to_ce
    assert planned.model_kernel_ratio_to_ce is not None and planned.plan_us and planned.plan_us > 0
    assert sorted_.model_kernel_ratio_to_ce is not None or sorted_.ceiling_ratio_to_ce is not None


@pytest.mark.parametrize(
    "R,pattern,slots,records",
    [
        (16, "random", 20_000, 8_192),  # one chunk per record
        (64, "random", 500, 8_192),  # each slot ~16 times: runs of one slot cross warp loads
        (64, "unique", 20_000, 8_192),  # no repeats: merging only
        (256, "random", 2_000, 8_192),  # 16 chunks per record, two records per warp load
        (512, "random", 300, 4_096),  # one record per warp load, long runs of one slot
    ],
)
def test_planned_flat_verified_and_reads_each_slot_once(R, pattern, slots, records):
    lay = gather.Layout(record_bytes=R, stride=R, pattern=pattern, slots=slots, records=records, seed=5)
    run = _run(lay, kernels=("planned-flat",), plan_reuse=4)
    r = _by_kernel(run.results)["planned-flat"]
    assert r.status is Status.OK and r.verified is True, r.reason
    assert r.params.plan_reuse == 4 and r.metrics.plan_us > 0 and r.params.records_per_step == 512 // R
    src, _ = gather.make_indices(lay)
    assert r.metrics.records_read_fraction == pytest.approx(len(np.unique(src)) / records)


def test_min_rounds_measures_every_case_that_many_times():
    lay = gather.Layout(record_bytes=128, stride=128, slots=20_000, records=8_192, seed=6)
    run = _run(lay, kernels=("warp", "planned-flat"), rounds=3, min_rounds=2)
    for r in _by_kernel(run.results).values():
        assert r.status is Status.OK and r.verified, r.reason
        assert r.metrics.rounds >= 2 and "at least 2" in r.method


@pytest.mark.parametrize("overlap", [True, False])
def test_planned_batches_overlap_where_the_gpu_can_and_stay_verified(overlap):
    # Batches 2..N of a plan start as the batch before ends (programmatic dependent launch,
    # compute capability 9.0+); off, each waits. Either way every byte is checked, the batches
    # keep their order (the last one ends after the rest), and the params say which ran.
    lay = gather.Layout(record_bytes=128, stride=128, slots=20_000, records=8_192, seed=4)
    run = _run(lay, kernels=("planned-flat", "planned-lines"), plan_reuse=8, overlap_batches=overlap)
    with cuda.GpuContext(0) as gpu:
        can = int(gpu.arch[3:]) >= 90
    for r in _by_kernel(run.results).values():
        assert r.status is Status.OK and r.verified, r.reason
        assert r.params.overlapped_batches is (overlap and can)
        assert ("programmatic dependent launch" in r.method) is (overlap and can)


def test_ce_per_case_divides_each_case_by_its_own_fresh_reference(monkeypatch):
    # Each case's reference is a CE copy measured for it: the session measures one per byte
    # count (kept in the Report) and then one before every case, and each case divides by the
    # value of its own. (Comparing floats would not do: two medians of a 1-MiB copy timed with
    # CUDA events can be equal to the last bit.)
    from gdrdiag.bench.gather_session import GatherSession

    measured = []
    real = GatherSession.ce_reference

    def counting(self, nbytes, layout):
        res = real(self, nbytes, layout)
        measured.append(res.value)
        return res

    monkeypatch.setattr(GatherSession, "ce_reference", counting)
    lay = gather.Layout(record_bytes=128, stride=128, slots=20_000, records=8_192, seed=3)
    run = _run(lay, kernels=("warp", "planned-flat"), ce_per_case=True)
    (ce,) = [r for r in run.results if r.key == gather.CE_KEY]  # the once-per-size one stays
    cases = list(_by_kernel(run.results).values())
    # The once-per-size reference, the pair that prices a copy (a quarter of the bytes, then all
    # of them), then one fresh reference per case.
    assert len(measured) == 3 + len(cases) and measured[0] == ce.value
    assert ce.metrics.ce_fixed_us is not None and ce.metrics.ce_fixed_us >= 0
    for r, own in zip(cases, measured[3:], strict=True):
        assert r.status is Status.OK and r.verified, r.reason
        m = r.metrics
        assert "measured just before this case" in r.method
        assert m.ce_gbytes_per_s == own
        assert m.ratio_to_ce == pytest.approx(r.stats.median / own)


def test_small_records_measure_the_read_request_rate_first():
    # Records under 128 B: the run first gathers 16-B records with the warp kernel, one read
    # request each, and caps every row's model at the rate it measured.
    lay = gather.Layout(record_bytes=16, stride=16, pattern="random", slots=20_000, records=8_192, seed=2)
    run = _run(lay, kernels=("warp", "planned-flat"))
    (cal,) = [r for r in run.results if r.settings.sweep == "request-rate"]
    assert cal.status is Status.OK and cal.verified, cal.reason
    assert cal.params.record_bytes == 16 and cal.params.kernel == "warp" and cal.params.pattern == "unique"
    note = next(n for n in run.notes if n.startswith("read-request rate"))
    assert "measured in this run" in note
    rate = float(note.split("cap: ")[1].split(" G")[0])
    assert rate > 0.05  # any GPU that gathers at all sends more than 50 M requests/s
    flat = _by_kernel([r for r in run.results if r.settings.sweep == "ladder"])["planned-flat"]
    assert flat.status is Status.OK and flat.metrics.request_cap_ratio_to_ce is not None
    assert f"read-request rate {rate:.3f} G/s (measured in this run" in flat.params.link_params
