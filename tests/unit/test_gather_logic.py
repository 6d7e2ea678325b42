"""gather-bench logic that needs no GPU: indices, layouts, segments, verification, planning."""

import numpy as np
import pytest

from gdrdiag.bench import gather as g
from gdrdiag.errors import NotSupported, UserInputError
from gdrdiag.hw.memory import pattern
from gdrdiag.model.params import GatherParams
from gdrdiag.model.results import BenchResult, SampleStats, Status


def small(**kw):
    base = dict(record_bytes=100, stride=100, slots=5000, records=3000, seed=7)
    base.update(kw)
    return g.Layout(**base)


def host_gather(layout, table, src, dst):
    out = np.full((layout.records, layout.dst_stride), g.POISON, np.uint8)
    for i in range(layout.records):
        o = layout.base_offset + int(src[i]) * layout.stride
        out[dst[i], : layout.record_bytes] = table[o : o + layout.record_bytes]
    return out.reshape(-1)


def test_defaults_are_the_issue_workload():
    lay = g.Layout()
    assert (lay.records, lay.record_bytes, lay.slots) == (128 * 2048, 656, 300_000)
    assert lay.dst_stride == 656 and lay.nbytes == 262144 * 656


@pytest.mark.parametrize(
    "pattern_,k", [("random", 1), ("unique", 1), ("sorted", 1), ("runs", 16), ("sequential", 1)]
)
def test_indices_are_deterministic_in_range_and_destinations_unique(pattern_, k):
    lay = small(pattern=pattern_, run_length=k)
    s1, d1 = g.make_indices(lay)
    s2, d2 = g.make_indices(lay)
    assert np.array_equal(s1, s2) and np.array_equal(d1, d2)
    assert s1.dtype == np.uint32 and s1.size == lay.records and s1.max() < lay.slots
    assert np.array_equal(np.sort(d1), np.arange(lay.records))
    if pattern_ == "sorted":
        assert np.all(np.diff(s1.astype(np.int64)) >= 0)
    if pattern_ == "runs":
        assert np.all(np.diff(s1[:16].astype(np.int64)) == 1)
    if pattern_ == "sequential":
        assert np.array_equal(s1, np.arange(lay.records))
    if pattern_ == "unique":
        assert np.unique(s1).size == lay.records
    other, _ = g.make_indices(small(pattern=pattern_, run_length=k, seed=8))
    assert pattern_ == "sequential" or not np.array_equal(s1, other)


@pytest.mark.parametrize(
    "kw,needle",
    [
        (dict(record_bytes=0), "greater than 0"),
        (dict(record_bytes=2 << 20, stride=2 << 20), "limit"),
        (dict(stride=50), "smaller than the record size"),
        (dict(base_offset=5000), "0..4095"),
        (dict(slots=0), "slots"),
        (dict(records=0), "records"),
        (dict(pattern="sequential", slots=100), "sequential indices need"),
        (dict(pattern="unique", slots=100), "unique indices need"),
        (dict(pattern="runs", run_length=6000), "runs of 6000"),
        (dict(pattern="zigzag"), "unknown index pattern"),
    ],
)
def test_bad_layouts_are_user_errors(kw, needle):
    with pytest.raises(UserInputError, match=needle):
        small(**kw).validate()


def test_table_larger_than_free_memory_is_refused_before_any_gpu_work():
    cfg = g.GatherConfig(base=g.Layout(record_bytes=1 << 20, stride=1 << 20, slots=(1 << 32) - 1))
    with pytest.raises(UserInputError, match="host memory"):
        cfg.validate()


def test_parsers():
    assert g.parse_pattern("runs:16") == ("runs", 16)
    assert g.parse_pattern("Sorted") == ("sorted", 1)
    for bad in ("runs", "runs:0", "spiral"):
        with pytest.raises(UserInputError):
            g.parse_pattern(bad)
    assert g.parse_kernels("all") == g.LADDER
    assert g.parse_kernels("warp, lines") == ("warp", "lines")
    with pytest.raises(UserInputError, match="unknown gather kernel"):
        g.parse_kernels("warp,fast")
    assert g.parse_sweeps(None) == ("ladder",)
    assert g.parse_sweeps("sm") == ("ladder", "sm")
    assert g.parse_sweeps("all") == g.SWEEPS
    with pytest.raises(UserInputError):
        g.parse_sweeps("everything")


def test_case_keys_follow_kernel_names():
    assert g.KERNELS["warp-ilp"].key == "gather_warp_ilp"
    assert g.KERNELS["sorted-lines"].key == "gather_sorted_lines"
    assert g.KERNELS["sorted-lines"].function == "gather_lines"
    assert all(k.function == k.key for k in g.KERNELS.values() if not k.presort)


def test_read_plan_sorts_and_drops_back_to_back_repeats():
    lay = small(record_bytes=656, stride=656, records=6, slots=100)
    src = np.array([7, 3, 3, 4, 9, 7], dtype=np.uint32)
    hist, n_read = g.read_plan(src, lay, g.KERNELS["sorted-lines"])  # 3 3 4 7 7 9 -> 3 4 7 9
    assert n_read == 4 and sum(k * c for (_, k), c in hist.items()) == 4
    assert sorted(k for (_, k) in hist) == [1, 1, 2]  # (3,4) merged, 7, 9
    hist, n_read = g.read_plan(src, lay, g.KERNELS["lines"])  # 7 3 (3) 4 9 7: one repeat in a row
    assert n_read == 5
    hist, n_read = g.read_plan(src, lay, g.KERNELS["bulk"])  # TMA bypasses L1: every record read
    assert n_read == 6


@pytest.mark.parametrize("R,stride,off", [(100, 100, 0), (656, 656, 16), (640, 768, 112), (17, 33, 3)])
def test_verify_accepts_a_right_gather_and_names_the_first_wrong_byte(R, stride, off):
    lay = small(record_bytes=R, stride=stride, base_offset=off)
    src, dst = g.make_indices(lay)
    table = pattern(lay.table_bytes)
    got = host_gather(lay, table, src, dst)
    assert g.verify_gather(table, got, src, dst, lay) is None
    bad = got.copy()
    bad[int(dst[5]) * lay.dst_stride + R - 1] ^= 0x40
    msg = g.verify_gather(table, bad, src, dst, lay)
    assert msg.startswith("record 5 ") and f"byte {R - 1}" in msg
    if lay.dst_stride > R:
        over = got.copy()
        over[3 * lay.dst_stride + R] = 0
        assert "past the record" in g.verify_gather(table, over, src, dst, lay)


def test_verify_catches_an_untouched_poisoned_destination():
    lay = small(record_bytes=64, stride=64)
    src, dst = g.make_indices(lay)
    table = pattern(lay.table_bytes)
    poisoned = np.full(lay.records * lay.dst_stride, g.POISON, np.uint8)
    assert g.verify_gather(table, poisoned, src, dst, lay) is not None


def test_segments_merge_only_consecutive_packed_slots_within_a_warp_group():
    lay = small(record_bytes=656, stride=656, pattern="sequential", records=16, slots=100)
    src, _ = g.make_indices(lay)
    merged = g.segment_histogram(src, lay, g.KERNELS["lines"])
    assert sum(merged.values()) == 2 and all(k == 8 for (_, k) in merged)
    single = g.segment_histogram(src, lay, g.KERNELS["warp"])
    assert sum(single.values()) == 16 and all(k == 1 for (_, k) in single)
    padded = g.segment_histogram(
        src,
        small(record_bytes=656, stride=768, pattern="sequential", records=16, slots=100),
        g.KERNELS["lines"],
    )
    assert all(k == 1 for (_, k) in padded)
    offsets = {o for (o, _) in single}
    assert offsets == {(i * 656) % 4096 for i in range(16)}


def test_bytes_in_flight_per_warp_by_design():
    assert g.bytes_in_flight_per_warp(g.KERNELS["warp"], 656) == 512
    assert g.bytes_in_flight_per_warp(g.KERNELS["warp-ilp"], 656) == 656
    assert g.bytes_in_flight_per_warp(g.KERNELS["lines"], 656) == 4 * 656
    assert g.bytes_in_flight_per_warp(g.KERNELS["sorted-lines"], 656) == 4 * 656
    assert g.bytes_in_flight_per_warp(g.KERNELS["bulk"], 656, depth=8) == 8 * 656


def test_bulk_config_fits_shared_memory():
    threads, depth, smem = g.bulk_config(656, 1024, 232448)
    assert threads == 1024 and depth == 8 and smem == 32 * 8 * (768 + 8)
    threads, depth, smem = g.bulk_config(64 << 10, 1024, 232448)
    assert depth == 1 and threads == 32 * 3 and smem <= 232448
    with pytest.raises(NotSupported):
        g.bulk_config(1 << 20, 1024, 232448)


def test_sweep_plans():
    base = g.Layout()
    assert len(g.sweep_cases("ladder", base, g.LADDER, 132)) == len(g.LADDER)
    rs = g.sweep_cases("record-size", base, ["lines", "warp"], 132)
    sizes = {c.layout.record_bytes for c in rs}
    assert {64, 640, 656, 768, 4096} <= sizes and all(c.layout.stride == c.layout.record_bytes for c in rs)
    offs = g.sweep_cases("offset", base, ["lines"], 132)
    assert {c.layout.base_offset for c in offs} == {0, 16, 64, 112}
    strides = g.sweep_cases("stride", base, ["lines"], 132)
    assert {(c.layout.record_bytes, c.layout.stride) for c in strides} >= {(656, 656), (656, 768)}
    sm = g.sweep_cases("sm", base, ["lines", "warp"], 132)
    assert {c.kernel for c in sm} == {"lines"} and sm[-1].sm_limit == 132 and sm[0].sm_limit == 1
    pats = g.sweep_cases("pattern", base, ["lines"], 132)
    assert {c.layout.pattern for c in pats} == {"random", "unique", "sorted", "runs", "sequential"}
    few_slots = g.sweep_cases("pattern", g.Layout(slots=1000), ["lines"], 132)
    assert "sequential" not in {c.layout.pattern for c in few_slots}  # needs records <= slots
    assert len(g.sweep_cases("record-size", base, ["lines"], 132, quick=True)) == 3
    with pytest.raises(UserInputError):
        g.sweep_cases("nope", base, ["lines"], 132)


def test_sequential_pattern_planned_when_the_table_is_large_enough():
    pats = g.sweep_cases("pattern", g.Layout(slots=300_000, records=262_144), ["lines"], 132)
    assert "sequential" in {c.layout.pattern for c in pats}


def test_min_sms_and_best_pick():
    pts = [(1, 17.9), (2, 35.0), (4, 48.0), (16, 48.6), (132, 48.8)]
    assert g.min_sms_for_fraction(pts, 0.95) == 4
    assert g.min_sms_for_fraction([], 0.95) is None

    def res(kernel, v, status=Status.OK):
        return BenchResult(
            key="gather_" + kernel,
            status=status,
            params=GatherParams(kernel=kernel),
            stats=SampleStats.of([v]),
        )

    rs = [res("warp", 47.5), res("lines-l2pf", 48.77), res("lines", 48.75), res("bulk", 60.0, Status.ERROR)]
    assert g.pick_best(rs).params.kernel == "lines"  # tie within 0.5% -> candidate order
    rs.append(res("persistent", 52.0))
    assert g.pick_best(rs).params.kernel == "persistent"
    assert g.pick_best([]) is None


def test_a_round_stops_the_measurement_only_when_quiet_and_after_min_rounds():
    # GatherSession._settled decides after each timing round; it reads nothing but the config.
    from gdrdiag.bench.gather_config import QUIET_SPREAD, GatherConfig
    from gdrdiag.bench.gather_session import GatherSession

    session = object.__new__(GatherSession)
    quiet, noisy = [1.0, 1.01, 1.02], [1.0, 1.0 + 2 * QUIET_SPREAD]
    session.config = GatherConfig(rounds=3)
    assert session._settled(1, quiet) and not session._settled(1, noisy)
    session.config = GatherConfig(rounds=3, min_rounds=2)
    assert not session._settled(1, quiet)  # slow all through would look quiet: measure again
    assert session._settled(2, quiet) and not session._settled(2, noisy)
    assert "at least 2" in session._rounds_rule()
