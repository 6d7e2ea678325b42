"""The PCIe read-efficiency model (gdrdiag/pathmodel/pcie.py): spec rules and the known anchors."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gdrdiag.pathmodel import pcie as m

P = m.LinkParams(mps=256, mrrs=4096, rcb=128, cpl_overhead=20)  # closed forms below


def test_completions_obey_mps_and_rcb():
    # Intel AN 829 worked example shape: a 512-B aligned read with MPS 256 -> 2 x 256.
    assert m.completion_sizes(0, 512, P) == [256, 256]
    # Misaligned start: the first completion ends on an RCB boundary (PCIe 2.3.1.1).
    assert m.completion_sizes(16, 656, P) == [240, 256, 160]
    # Small requests come back whole.
    assert m.completion_sizes(96, 32, P) == [32]
    p64 = m.LinkParams(mps=128, rcb=64, cpl_overhead=20)
    assert m.completion_sizes(32, 300, p64) == [96, 128, 76]


def test_requests_split_at_mrrs_and_4k_pages():
    assert m.split_request(4000, 200, P) == [(4000, 96), (4096, 104)]
    small = m.LinkParams(mrrs=512)
    assert [n for _, n in m.split_request(0, 2048, small)] == [512] * 4


def test_ce_efficiency_is_mps_completions():
    assert m.ce_efficiency(P) == pytest.approx(256 / 276)
    assert m.ce_efficiency(m.LinkParams(mps=128, cpl_overhead=20)) == pytest.approx(128 / 148)


def test_whole_line_records_reach_the_128b_ceiling():
    # With 20 B per completion: 128-B completions 86.5% vs CE's 256-B 92.75% -> 0.932.
    for R in (640, 768, 4096):
        pr = m.predict_random(R, R, 0, 300_000, "sector", line_aware=False, p=P)
        assert pr.ratio_to_ce == pytest.approx((128 / 148) / (256 / 276), rel=1e-9)
        assert pr.partial_line_loss == pytest.approx(0.0)


def test_656_byte_records_need_six_completions():
    # 656 B = 5 lines + 16 B: 21 sectors (672 B) in 6 completions (docs/gather-bench.md "The PCIe model").
    la = m.predict_random(656, 656, 0, 300_000, "sector", line_aware=True, p=P)
    assert la.completions_per_record == pytest.approx(6.0)
    assert la.efficiency == pytest.approx(656 / (672 + 6 * 20))
    assert la.partial_line_loss == pytest.approx(1 - (656 / 792) / (128 / 148))
    # Non line-aware warps split one line between two instructions for 7 of 8 start offsets.
    plain = m.predict_random(656, 656, 0, 300_000, "sector", line_aware=False, p=P)
    assert plain.requests_per_record == pytest.approx(6.875)
    assert plain.ratio_to_ce < la.ratio_to_ce
    # Fetching whole lines (`line` mode, a hypothesis docs/gather-bench.md keeps) would be far worse.
    line = m.predict_random(656, 656, 0, 300_000, "line", line_aware=True, p=P)
    assert line.efficiency == pytest.approx(656 / (768 + 6 * 20))


def test_base_offset_breaks_whole_line_records():
    aligned = m.predict_random(640, 640, 0, 300_000, "sector", line_aware=True, p=P)
    off16 = m.predict_random(640, 640, 16, 300_000, "sector", line_aware=True, p=P)
    assert off16.ratio_to_ce < aligned.ratio_to_ce
    assert off16.partial_line_loss > 0.05


def test_runs_recover_most_of_the_partial_line_loss():
    single = m.predict_random(656, 656, 0, 300_000, "sector", line_aware=True, p=P)
    runs = m.predict_runs(656, 0, 8, "sector", line_aware=True, p=P)
    assert runs.ratio_to_ce > single.ratio_to_ce + 0.02
    assert runs.partial_line_loss < 0.01


def test_offset_histogram_is_a_distribution_over_the_period():
    h = m.offset_histogram(656, 0, 300_000)
    assert sum(h.values()) == pytest.approx(1.0)
    assert {o % 128 for o in h} == set(range(0, 128, 16))
    assert m.offset_histogram(4096, 64, 10) == {64: 1.0}


def test_ce_run_ratio_follows_call_overhead():
    assert m.ce_run_ratio(1 << 30, 55.0, 2.0) > 0.99
    assert m.ce_run_ratio(4096, 55.0, 2.0) < 0.05
    assert m.ce_run_ratio(0, 55.0) == 0.0


def test_bad_link_parameters_are_refused():
    for kw in (
        {"mps": 100},
        {"rcb": 32},
        {"mps": 64, "rcb": 128},
        {"cpl_overhead": -1},
        {"read_requests_per_ns": 0},
        {"read_requests_per_ns": -0.5},
    ):
        with pytest.raises(ValueError):
            m.LinkParams(**kw)
    with pytest.raises(ValueError):
        m.range_requests(0, 10, "ce", line_aware=False, p=P)


@settings(max_examples=200, deadline=None)
@given(
    start=st.integers(0, 8191),
    length=st.integers(1, 5000),
    mode=st.sampled_from(["sector", "line", "bulk"]),
    line_aware=st.booleans(),
    mps=st.sampled_from([128, 256, 512]),
    rcb=st.sampled_from([64, 128]),
)
def test_requests_cover_the_range_and_completions_cover_requests(start, length, mode, line_aware, mps, rcb):
    p = m.LinkParams(mps=mps, rcb=rcb)
    reqs = m.range_requests(start, length, mode, line_aware=line_aware, p=p)
    covered = set()
    for a, n in reqs:
        assert n > 0
        assert a // m.PAGE == (a + n - 1) // m.PAGE  # never crosses 4 KiB
        cpl = m.completion_sizes(a, n, p)
        assert sum(cpl) == n and max(cpl) <= p.mps
        covered.update(range(a, a + n))
    assert set(range(start, start + length)) <= covered
    eff = m.segments_efficiency({(start, 1): 1}, length, mode, line_aware=line_aware, p=p)
    assert 0 < eff.efficiency <= length / (length + p.cpl_overhead) + 1e-12


def test_every_completion_costs_the_same_overhead_whatever_its_size():
    # The wire charges cpl_overhead per completion, small or large (PCIe 2.3.1.1 framing and
    # header do not depend on the payload); what slows small reads is their request rate.
    p = m.LinkParams(rcb=64)
    small = m.segments_efficiency({(0, 1): 1}, 64, "sector", line_aware=True, p=p)
    assert small.wire == 64 + 22 and small.overhead == 22 and small.requests == 1
    line = m.segments_efficiency({(0, 1): 1}, 128, "sector", line_aware=True, p=p)
    assert line.wire == 128 + 22 and line.overhead == 22


def test_the_request_rate_caps_small_reads_only():
    p = m.LinkParams()  # 0.75 G requests/s
    # 16-B reads, one request each, CE at 50 GB/s: 0.75 x 16 = 12 GB/s at most = 0.24 of CE,
    # far under the wire's 16 / (32 + 22) sector-rounded share.
    cap16, cap128 = m.request_cap(16, 50.0, p), m.request_cap(128, 50.0, p)
    assert cap16 == pytest.approx(0.75 * 16 / 50.0)
    assert m.batch_ratio(0.9, cap16, 1 << 20, 50.0, None) == pytest.approx(cap16)
    # 128-B reads: 96 GB/s of requests, more than the wire's ratio, which stands.
    assert m.batch_ratio(0.93, cap128, 1 << 20, 50.0, None) == 0.93
    # No CE rate measured, or no request limit: no cap, the wire's ratio as it is.
    assert m.request_cap(16, None, p) is None
    assert m.request_cap(16, 50.0, m.LinkParams(read_requests_per_ns=None)) is None
    assert m.batch_ratio(0.9, None, 1 << 20, 50.0, None) == 0.9


def test_a_batch_is_timed_at_the_links_rate_with_its_own_fixed_cost():
    # 4 MiB against a CE at 50 GB/s whose copy costs 4 us: the link moves the bytes in
    # 83.89 - 4 = 79.89 us; a kernel at 0.8 of the CE's efficiency takes 79.89 / 0.8 + 3 us.
    n = 4 << 20
    t_ce = n / 50e3
    t = (t_ce - 4.0) / 0.8 + m.BATCH_FIXED_US
    assert m.batch_ratio(0.8, None, n, 50.0, 4.0) == pytest.approx(t_ce / t)
    # Held by its requests where they take longer: 0.5 of the CE's time is the cap.
    assert m.batch_ratio(0.8, 0.5, n, 50.0, 4.0) == pytest.approx(0.5)
    # With no fixed cost on either side the ratio is the link's, as before.
    assert m.batch_ratio(0.8, None, n, 50.0, 0.0, batch_fixed_us=0.0) == pytest.approx(0.8)
    # A CE cost of more than half the copy is not believed: the link is at most twice the CE.
    assert m.batch_ratio(1.0, None, n, 50.0, 1e6, batch_fixed_us=0.0) == pytest.approx(2.0)


def test_the_cost_per_copy_from_two_copy_sizes():
    # t = 4 us + bytes / 55 GB/s, exactly, at 1 and 4 MiB.
    t = [4e-6 + b / 55e9 for b in (1 << 20, 4 << 20)]
    assert m.fixed_cost_of_two_copies(1 << 20, t[0], 4 << 20, t[1]) == pytest.approx(4.0)
    # Noise that makes the line cross below zero gives 0, not a negative cost.
    assert m.fixed_cost_of_two_copies(1 << 20, 1e-6, 4 << 20, 1e-3) == 0.0
    with pytest.raises(ValueError):
        m.fixed_cost_of_two_copies(4 << 20, t[1], 1 << 20, t[0])
