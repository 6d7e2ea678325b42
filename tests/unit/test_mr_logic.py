"""mr-bench pure logic: loop-cost arithmetic, percentiles, signalling, config checks, landing labels."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gdrdiag.bench import mr, rdma_math
from gdrdiag.bench.rdma_loop import Lane, LoopTimeout, run_bw
from gdrdiag.errors import UserInputError
from gdrdiag.hw import verbs as v
from gdrdiag.hw.memory import MemoryKind
from gdrdiag.model.vocabulary import AccessFlags, RelaxedOrdering


def test_min_message_for_rate():
    # 1 M WR/s at 400 Gb/s = 50 GB/s -> 50,000 B per WR.
    assert rdma_math.min_message_for_rate(1e6, 400) == pytest.approx(50_000)
    assert rdma_math.min_message_for_rate(781_250, 400) == pytest.approx(64_000)
    assert rdma_math.wr_rate_needed(65536, 400) == pytest.approx(400e9 / 8 / 65536)
    with pytest.raises(ValueError):
        rdma_math.min_message_for_rate(0, 400)


@given(st.floats(1e3, 1e9), st.floats(1, 1600))
def test_min_message_and_rate_are_inverse(rate, link):
    size = rdma_math.min_message_for_rate(rate, link)
    assert rdma_math.wr_rate_needed(int(size) + 1, link) <= rate * 1.0001


def test_percentiles_and_latency_summary():
    xs = sorted(float(i) for i in range(1, 101))
    assert rdma_math.percentile(xs, 50) == pytest.approx(50.5)
    assert rdma_math.percentile(xs, 0) == 1 and rdma_math.percentile(xs, 100) == 100
    s = rdma_math.latency_summary_us([1e-6, 2e-6, 3e-6])
    assert s["lat_p50_us"] == pytest.approx(2.0) and s["lat_max_us"] == pytest.approx(3.0)
    with pytest.raises(ValueError):
        rdma_math.percentile([], 50)


@pytest.mark.parametrize(
    "depth,plist,mod,expect",
    [
        (128, 1, None, 64),
        (128, 4, None, 16),
        (16, 1, None, 8),
        (128, 1, 10, 10),
        (128, 1, 100, 100),  # -Q as given, up to the TX depth (it was cut to 64 silently)
        (128, 1, 128, 128),
        (128, 16, 16, 1),
        (4, 4, None, 1),
        (1, 1, None, 1),
    ],
)
def test_signal_interval_never_exceeds_the_queue(depth, plist, mod, expect):
    k = rdma_math.signal_interval(depth, plist, mod)
    assert k == expect and k * plist <= max(depth, plist)


def test_fit_post_cost_separates_loop_and_per_wr_cost():
    pts = [(pl, 0.9e-6 + 0.4e-6 * pl) for pl in (1, 4, 16, 64)]
    fixed, per_wr = rdma_math.fit_post_cost(pts)
    assert fixed == pytest.approx(0.9e-6) and per_wr == pytest.approx(0.4e-6)
    with pytest.raises(ValueError):
        rdma_math.fit_post_cost([(4, 1.0), (4, 2.0)])


def test_gbits_and_pow2():
    assert rdma_math.gbits(50e9, 1.0) == pytest.approx(400.0)
    assert rdma_math.pow2_at_least(65000) == 65536 and rdma_math.pow2_at_least(0.5) == 1


def test_landing_labels_managed_as_host():
    assert mr.landing(MemoryKind.DEVICE, "dmabuf", "pyverbs")[0] == "gpu"
    where, words = mr.landing(MemoryKind.MANAGED, "mr", "pyverbs")
    assert where == "host" and "host-memory number" in words
    assert "NOT a hardware number" in mr.landing(MemoryKind.PINNED, "mr", "soft")[1]


def test_case_keys():
    assert mr.case_key("rdma_write", MemoryKind.PINNED_WC, "mr") == "rdma_write_pinned_wc_mr"


@pytest.mark.parametrize(
    "kw,match",
    [
        (dict(sizes=(0,)), "greater than 0"),
        (dict(qps=0), "at least one QP"),
        (dict(post_list=200, tx_depth=128), "post-list"),
        (dict(iterations=None, duration=None), "either"),
        (dict(iterations=10, duration=1.0), "either"),
        (dict(reg_paths=("peermem",)), "registration path"),
        (dict(access=mr.DEFAULT_ACCESS | AccessFlags.RELAXED_ORDERING), "ro setting"),
        (dict(cq_mod=0), "-Q 0"),
        (dict(cq_mod=1000), "-Q 1000"),
        (dict(mtu=1500), "-m 1500"),
        (dict(sizes=(1 << 20,), qps=2, mr_size=1 << 20), "larger than the MR"),
        (dict(offset=1 << 16), "offset"),
        (dict(provider="ib"), "unknown provider"),
    ],
)
def test_config_rejects_bad_input(kw, match):
    with pytest.raises(UserInputError, match=match):
        mr.MrBenchConfig(**kw).validate()


def test_matrix_config_covers_everything():
    m = mr.matrix_config(mr.MrBenchConfig(ro=RelaxedOrdering.ON))
    assert set(m.kinds) == set(MemoryKind) and m.reg_paths == ("mr", "dmabuf")
    assert m.ro is RelaxedOrdering.AB and m.arm_access == (
        mr.DEFAULT_ACCESS,
        mr.DEFAULT_ACCESS | AccessFlags.RELAXED_ORDERING,
    )


class _SilentCQ(v.CQ):
    depth = 16

    def poll(self, max_entries=16):
        return []


class _NullQP:
    qp_num = 1

    def post(self, prepared):
        pass


class _P(v.PreparedWrites):
    def __init__(self, n):
        self.wrs = tuple(v.WriteWR(0, 1, 8, 1, 1, 1, False) for _ in range(n))


def test_loop_gives_up_after_the_timeout_instead_of_hanging():
    lane = Lane(qp=_NullQP(), plain=[_P(1)], signaled=[_P(1)], index=0)
    with pytest.raises(LoopTimeout, match="no RDMA completion for 0.2 s with 4 WRs outstanding"):
        run_bw([lane], _SilentCQ(), tx_depth=4, signal_every=2, lists_total=100, timeout_s=0.2)


def test_loop_rejects_a_list_longer_than_the_queue():
    lane = Lane(qp=_NullQP(), plain=[_P(8)], signaled=[_P(8)], index=0)
    with pytest.raises(UserInputError, match="does not fit"):
        run_bw([lane], _SilentCQ(), tx_depth=4, signal_every=1, lists_total=1)
