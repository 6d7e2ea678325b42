"""peer-bench's block sweep, all-to-one and SM round trip on a machine with two or more GPUs.

Noise-proof by construction: payloads are checked byte for byte; the speed comparisons are between
ways that differ by orders of magnitude at 128-byte blocks (10,000 driver calls against one), and
the model bands are wide (0.8-1.1) around what the x2 machine measures at 128-256 MiB.
Skipped with the reason on a machine with fewer than two GPUs.
"""

from __future__ import annotations

import pytest

from gdrdiag.units import KiB, MiB
from tests.conftest import gpu_count

pytestmark = pytest.mark.gpu

BLOCK_SIZES = (128, 4 * KiB, 64 * KiB, 2 * MiB)
REGION = 128 * MiB  # 10,000 blocks up to 4 KiB, then 2,048 of 64 KiB and 64 of 2 MiB
PAIRS = ((0, 1), (1, 0))


needs_two = pytest.mark.skipif(gpu_count() < 2, reason="peer tests need two or more GPUs")


@pytest.fixture(scope="module")
def run():
    from gdrdiag.bench.peer import PeerBenchOptions, run_peer_bench
    from gdrdiag.hw.bundle import LiveSource
    from gdrdiag.inspect.collect import inspect_source

    opts = PeerBenchOptions(
        sizes=(1 * MiB, 256 * MiB),
        keys=("peer_lat_ce_on", "peer_lat_sm_on", "peer_all_to_one", "peer_blocks"),
        pairs=PAIRS,
        iterations=10,
        block_sizes=BLOCK_SIZES,
        block_region_max=REGION,
    )
    return run_peer_bench(opts, inspect_source(LiveSource()))


def _one(results, key, **params):
    rows = [r for r in results if r.key == key and all(getattr(r.params, k) == v for k, v in params.items())]
    assert len(rows) == 1, (key, params, [(r.key, r.status.value, r.reason) for r in results if r.key == key])
    return rows[0]


@needs_two
def test_every_block_row_is_verified_and_nothing_failed(run):
    errors = [(r.key, r.reason) for r in run if r.status.value == "ERROR"]
    assert not errors, errors
    for src, dst in PAIRS:
        for size in BLOCK_SIZES:
            for key in ("peer_blocks_per_call", "peer_blocks_coalesced", "peer_blocks_kernel"):
                r = _one(run, key, src_gpu=src, dst_gpu=dst, block_bytes=size)
                assert r.status.value == "OK" and r.verified, (key, size, r.reason)
                assert r.params.size_bytes == size * r.params.blocks and r.metrics.us_per_block > 0
            b = _one(run, "peer_blocks_batched", src_gpu=src, dst_gpu=dst, block_bytes=size)
            assert b.status.value == "OK" and b.verified, b.reason  # CUDA 12.8+ driver on the machine
        assert (
            _one(run, "peer_blocks_per_call", src_gpu=src, dst_gpu=dst, block_bytes=128).params.blocks
            == 10_000
        )


@needs_two
@pytest.mark.parametrize("pair", PAIRS)
def test_at_128_bytes_one_call_per_block_is_the_slowest_way(run, pair):
    src, dst = pair
    rows = {
        k: _one(run, f"peer_blocks_{k}", src_gpu=src, dst_gpu=dst, block_bytes=128)
        for k in ("per_call", "batched", "coalesced", "kernel")
    }
    per_call = rows["per_call"].value
    assert rows["coalesced"].value > 10 * per_call, {k: r.value for k, r in rows.items()}
    assert rows["kernel"].value > 10 * per_call, {k: r.value for k, r in rows.items()}
    assert rows["batched"].value > per_call, {k: r.value for k, r in rows.items()}
    assert (
        rows["per_call"].metrics.issue_us_per_call > 0 and rows["per_call"].metrics.ratio_to_coalesced < 0.1
    )


@needs_two
@pytest.mark.parametrize("pair", PAIRS)
def test_the_coalesced_copy_is_within_the_models_band_and_the_summary_is_there(run, pair):
    src, dst = pair
    big = _one(run, "peer_blocks_coalesced", src_gpu=src, dst_gpu=dst, block_bytes=2 * MiB)
    assert big.params.size_bytes == REGION
    ratio = big.metrics.measured_over_expected
    assert ratio is not None and 0.8 < ratio < 1.1, (big.value, big.params.model)
    summary = _one(run, "peer_blocks_summary", src_gpu=src, dst_gpu=dst)
    half = summary.metrics.half_bandwidth_block_bytes_per_call
    assert half is None or half > 128  # 10,000 calls of 128 B cannot reach half of one copy


@needs_two
@pytest.mark.parametrize("dst", [0, 1])
def test_all_to_one_is_labelled_by_its_sources_and_near_the_ingress_model(run, dst):
    r = _one(run, "peer_all_to_one", dst_gpu=dst, size_bytes=256 * MiB)
    assert r.status.value == "OK" and r.verified, r.reason
    n = gpu_count()
    assert r.params.sources == n - 1
    if n == 2:
        assert r.params.src_gpu == 1 - dst and "one source" in r.description
    ratio = r.metrics.measured_over_expected
    assert ratio is not None and 0.8 < ratio < 1.1, (r.value, r.params.model)


@needs_two
@pytest.mark.parametrize("pair", PAIRS)
def test_the_sm_round_trip_is_a_verified_chase(run, pair):
    r = _one(run, "peer_lat_sm_on", src_gpu=pair[0], dst_gpu=pair[1])
    assert r.status.value == "OK" and r.verified and r.unit == "us", r.reason
    assert len(r.samples) == 20 and 0.1 < r.value < 20, r.value
