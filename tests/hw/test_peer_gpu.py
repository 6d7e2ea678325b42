"""peer-bench on a machine with two or more GPUs: verified payloads, CuPy parity, SM vs CE, the model.

Noise-proof by construction: every comparison is within one run, between medians of many samples
(the CuPy reference is interleaved with gdrdiag's copy over rounds on the same buffers), and the
thresholds sit well away from what the x2 machine measures (docs/benchmarks.md).
Skipped with the reason on a machine with fewer than two GPUs.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from gdrdiag.units import KiB, MiB
from tests.conftest import gpu_count

pytestmark = pytest.mark.gpu


needs_two = pytest.mark.skipif(gpu_count() < 2, reason="peer tests need two or more GPUs")


@pytest.fixture(scope="module")
def machine():
    from gdrdiag.hw.bundle import LiveSource
    from gdrdiag.inspect.collect import inspect_source

    return inspect_source(LiveSource())


@pytest.fixture(scope="module")
def run(machine):
    from gdrdiag.bench.peer import ALL_KEYS, BLOCKS_CASE, PeerBenchOptions, run_peer_bench

    opts = PeerBenchOptions(
        sizes=(4 * KiB, 1 * MiB, 256 * MiB),
        keys=tuple(k for k in ALL_KEYS if k != BLOCKS_CASE),  # the block sweep: test_peer_blocks_gpu.py
        pairs=((0, 1), (1, 0)),
        reference_rounds=5,
        iterations=10,
    )
    return run_peer_bench(opts, machine)


def _rows(results, key, **params):
    return [r for r in results if r.key == key and all(getattr(r.params, k) == v for k, v in params.items())]


@needs_two
def test_peer_matrix_is_read(machine):
    pairs = {(p.src_ordinal, p.dst_ordinal): p for p in machine.peers}
    assert (0, 1) in pairs and (1, 0) in pairs
    for p in pairs.values():
        assert p.can_access_peer is not None
        assert p.performance_rank is not None
        if p.nvlinks:
            assert p.path_text == f"NV{p.nvlinks}"
            assert p.nvlink_gbytes_per_s and p.nvlink_gbytes_per_s > 0


@needs_two
def test_every_case_ran_and_every_byte_was_checked(run):
    errors = [(r.key, r.reason) for r in run if r.status.value == "ERROR"]
    assert not errors, errors
    ok = [r for r in run if r.status.value == "OK"]
    assert ok and all(r.verified for r in ok)
    keys = {r.key for r in ok}
    assert {"peer_ce_off", "peer_ce_on", "peer_ce_bidir_off", "peer_ce_bidir_on"} <= keys
    assert {"peer_sm_read", "peer_sm_write", "peer_ce_reference", "peer_ce_gdrdiag"} <= keys
    assert {"peer_all_to_one", "peer_lat_sm_on", "peer_all_to_all", "peer_one_to_all"} <= keys


@needs_two
@pytest.mark.parametrize("on", [False, True])
@pytest.mark.parametrize("pair", [(0, 1), (1, 0)])
def test_ce_peer_copy_matches_cupy_on_the_same_buffers(run, on, pair):
    refs = _rows(run, "peer_ce_reference", src_gpu=pair[0], dst_gpu=pair[1], peer_access=on)
    assert len(refs) == 1, [r.reason for r in _rows(run, "peer_ce_reference")]
    ratio = refs[0].metrics.gdrdiag_over_reference
    assert ratio is not None and ratio >= 0.98, (ratio, refs[0].value)


@needs_two
@pytest.mark.parametrize("pair", [(0, 1), (1, 0)])
def test_sm_read_reaches_the_copy_engine_or_the_model_says_why(run, pair):
    sm = _rows(run, "peer_sm_read", src_gpu=pair[0], dst_gpu=pair[1], size_bytes=256 * MiB)
    ce = _rows(run, "peer_ce_on", src_gpu=pair[0], dst_gpu=pair[1], size_bytes=256 * MiB)
    assert sm and ce
    ratio = sm[0].metrics.ratio_to_ce
    assert ratio is not None
    if ratio >= 0.95:
        return
    # The model's SM and CE expectations for this path explain the gap: the measured ratio is
    # within 10% of the model's, and the model's is under 0.95 (SM payloads are 128 B, CE 256 B).
    model_ratio = sm[0].metrics.expected_gbytes_per_s / ce[0].metrics.expected_gbytes_per_s
    assert model_ratio < 0.95 and ratio >= 0.9 * model_ratio, (ratio, model_ratio)


@needs_two
def test_peer_access_on_beats_staging_and_rows_carry_the_model(run, machine):
    pair = next(p for p in machine.peers if p.src_ordinal == 0 and p.dst_ordinal == 1)
    on = _rows(run, "peer_ce_on", src_gpu=0, dst_gpu=1, size_bytes=256 * MiB)[0]
    assert on.metrics.on_over_off is not None
    if pair.nvlinks:
        assert on.metrics.on_over_off > 2.0
        assert on.metrics.measured_over_expected is not None
        assert 0.8 < on.metrics.measured_over_expected < 1.1, (on.value, on.params.model)


@needs_two
def test_one_visible_gpu_waives_every_case_with_the_reason():
    env = dict(os.environ, CUDA_VISIBLE_DEVICES="0")
    out = subprocess.run(
        [sys.executable, "-m", "gdrdiag", "--json", "peer-bench", "--sizes", "64K", "--quiet"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    results = json.loads(out.stdout)["results"]
    assert results and all(r["status"] == "WAIVED" for r in results)
    assert all("two or more GPUs" in r["reason"] for r in results)


@needs_two
def test_cli_small_run_is_verified():
    from typer.testing import CliRunner

    from gdrdiag.cli import app

    res = CliRunner().invoke(
        app,
        [
            "--json",
            "peer-bench",
            "--sizes",
            "64K",
            "--rounds",
            "1",
            "--reference-size",
            "16M",
            "--block-sizes",
            "128,64K",
            "--block-region-max",
            "16M",
            "--quiet",
        ],
    )
    assert res.exit_code == 0, res.output
    results = json.loads(res.stdout)["results"]
    assert results and all(r["status"] == "OK" for r in results), [r["reason"] for r in results]


@needs_two
@pytest.mark.parametrize("pair", [(0, 1), (1, 0)])
def test_latency_rows_one_copy_at_a_time_staging_is_slower(run, pair):
    """peer_lat_ce_*: a 4-byte copy per sample, verified; peer access on is faster than staged."""
    off = _rows(run, "peer_lat_ce_off", src_gpu=pair[0], dst_gpu=pair[1])
    on = _rows(run, "peer_lat_ce_on", src_gpu=pair[0], dst_gpu=pair[1])
    assert len(off) == 1 and len(on) == 1, [r.reason for r in run if r.key.startswith("peer_lat")]
    for r in (off[0], on[0]):
        assert r.status.value == "OK" and r.verified and r.unit == "us", r.reason
        assert r.params.size_bytes == 4 and len(r.samples) == 200
        assert 0 < r.value < 1000, r.value
    assert on[0].value < off[0].value, (on[0].value, off[0].value)
