"""peer-bench's new cases without a GPU: the block sweep, all-to-one and the SM round trip.

Row shapes, the registry and CLI selection (WAIVED here: no GPU), the sweep's layout and bounds,
the half-bandwidth summary, the path model's view of each row (per-operation cost fitted from the
sweep; all-to-one against the destination's ingress), the tables, and diagnosis of the fixture
Report of the two-H100 machine with such rows added (no warning from a sweep built to be slow).
"""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest
from typer.testing import CliRunner

from gdrdiag.bench.copy_blocks import half_bandwidth_block_size
from gdrdiag.bench.peer import ALL_KEYS, PeerBenchOptions, _Session, planned_case_count
from gdrdiag.bench.peer_all_to_one import ALL_TO_ONE_KEY, all_to_one_row
from gdrdiag.bench.peer_blocks import (
    BATCHED,
    BLOCKS_CASE,
    COALESCED,
    KERNEL,
    PER_CALL,
    SCATTER,
    SUMMARY_KEY,
    block_row,
    blocks_for,
    blocks_summary,
    gathered,
    scatter_slots,
)
from gdrdiag.bench.peer_latency import CHASE_SLOTS, CHASE_STRIDE, SM_LATENCY_KEY, chase_end, chase_ring
from gdrdiag.bench.registry import peer_registry
from gdrdiag.bench.timing import Timed
from gdrdiag.cli import app
from gdrdiag.diagnose import diagnose
from gdrdiag.errors import UserInputError
from gdrdiag.model.machine import PathClass
from gdrdiag.model.path import Mover, Verdict
from gdrdiag.model.report import Report
from gdrdiag.model.results import Status
from gdrdiag.pathmodel.judge import judge
from gdrdiag.pathmodel.peer import CE_NVLINK_EFFICIENCY, expect_all_to_one
from gdrdiag.pathmodel.rows import path_of
from gdrdiag.render.peer_table import render_peer_results
from gdrdiag.units import KiB, MiB
from tests.conftest import FIXTURES

FIXTURE = FIXTURES / "reports" / "peer_h100x2.json"
NVLINK_ONE_WAY = 18 * 26.5625


@pytest.fixture(scope="module")
def report() -> Report:
    return Report.from_json(FIXTURE.read_text())


@pytest.fixture(scope="module")
def session(report):
    return _Session(PeerBenchOptions(), report.machine, None)


def _timed(seconds: float, n: int = 5) -> Timed:
    return Timed(tuple(seconds * (1 + 0.001 * k) for k in range(n)), "events (synthetic)")


def _sweep(
    session, src=0, dst=1, count=10_000, sizes=(128, 4 * KiB, 64 * KiB, 1 * MiB), link=1.0, slow_host=()
):
    """Rows as a healthy NVLink pair gives them (2 x H100, docs/benchmarks.md): one call per block
    costs the host loop 2.5 us and the stream 2.45 us per copy beside its bytes (the slower wins);
    a batched entry 0.6 us of the host's call, its bytes pipelined on the stream. ``link`` scales the
    link's rate; ``slow_host`` lists block sizes whose host loop ran at 8 us per call."""
    peak = 396.8e9 * link
    rows = []
    for size in sizes:
        total = size * count
        per_call_issue = 8.0 if size in slow_host else 2.5
        t = {
            PER_CALL: count * max(per_call_issue * 1e-6, 2.45e-6 + size / peak),
            BATCHED: count * max(0.6e-6, size / peak),
            COALESCED: 5e-6 + total / peak,
            KERNEL: 8e-6 + total / (0.9 * 370e9 * link),
        }
        for key, seconds in t.items():
            issue = per_call_issue if key == PER_CALL else (0.6 * count if key == BATCHED else None)
            rows.append(
                block_row(session, key, src, dst, size, count, _timed(seconds), None, issue, "synthetic")
            )
    coalesced = {r.params.block_bytes: r.value for r in rows if r.key == COALESCED}
    rows = [
        dataclasses.replace(
            r,
            metrics=dataclasses.replace(
                r.metrics, ratio_to_coalesced=r.value / coalesced[r.params.block_bytes]
            ),
        )
        for r in rows
    ]
    return rows + [blocks_summary(rows, session.params(src, dst, peer_access=True))]


# -- registry, selection, options -------------------------------------------------------------


def test_the_new_cases_are_registered_listed_and_selectable():
    keys = [c.key for c in peer_registry().cases]
    for k in (BLOCKS_CASE, ALL_TO_ONE_KEY, SM_LATENCY_KEY):
        assert k in keys and k in ALL_KEYS
    assert [c.key for c in peer_registry().select(("peer_blocks",))] == [BLOCKS_CASE]
    res = CliRunner().invoke(app, ["peer-bench", "--list"], env={"COLUMNS": "160"})
    assert res.exit_code == 0
    for k in (BLOCKS_CASE, ALL_TO_ONE_KEY, SM_LATENCY_KEY):
        assert k in res.output


def test_without_two_gpus_each_new_case_is_waived_with_the_reason():
    res = CliRunner().invoke(
        app, ["--json", "peer-bench", "peer_blocks", "peer_all_to_one", "peer_lat_sm_on", "--quiet"]
    )
    assert res.exit_code == 0, res.output
    rows = json.loads(res.stdout)["results"]
    assert {r["key"] for r in rows} == {BLOCKS_CASE, ALL_TO_ONE_KEY, SM_LATENCY_KEY}
    assert all(r["status"] == "WAIVED" and r["reason"] for r in rows)


def test_block_options_are_checked_before_any_gpu_work():
    base = dict(keys=(BLOCKS_CASE,))
    with pytest.raises(UserInputError, match="multiples of 16"):
        PeerBenchOptions(block_sizes=(100,), **base).validate()
    with pytest.raises(UserInputError, match="larger than"):
        PeerBenchOptions(block_sizes=(4 * MiB,), block_region_max=2 * MiB, **base).validate()
    with pytest.raises(UserInputError, match="at least one block"):
        PeerBenchOptions(block_count=0, **base).validate()
    PeerBenchOptions(block_sizes=(100,), keys=("peer_ce_on",)).validate()  # not selected: not checked
    res = CliRunner().invoke(app, ["peer-bench", "peer_blocks", "--block-sizes", "100"])
    assert res.exit_code == 2 and "multiples of 16" in res.output and "Traceback" not in res.output


def test_progress_counts_the_sweep_and_all_to_one_once_per_pair():
    opts = PeerBenchOptions(keys=(BLOCKS_CASE, ALL_TO_ONE_KEY, SM_LATENCY_KEY), sizes=(4096, 65536))
    assert planned_case_count(opts, 2) == 6


# -- layout and bounds --------------------------------------------------------------------------


def test_the_sweep_moves_ten_thousand_blocks_until_the_region_cap():
    cap = 512 * MiB
    assert blocks_for(128, 10_000, cap) == 10_000
    assert blocks_for(32 * KiB, 10_000, cap) == 10_000
    assert blocks_for(64 * KiB, 10_000, cap) == 8192
    assert blocks_for(2 * MiB, 10_000, cap) == 256
    assert blocks_for(4 * MiB, 10_000, 2 * MiB) == 1


def test_blocks_are_scattered_and_gathered_in_order():
    slots = scatter_slots(1000)
    assert len(set(slots.tolist())) == 1000 and int(slots.max()) < SCATTER * 1000
    assert not np.all(np.diff(slots.astype(np.int64)) > 0)  # not in address order
    assert np.array_equal(slots, scatter_slots(1000))  # the same layout every run
    size = 48
    source = (np.arange(SCATTER * 1000 * size) % 251).astype(np.uint8)
    got = gathered(source, slots, size)
    want = np.concatenate([source[int(k) * size : (int(k) + 1) * size] for k in slots])
    assert np.array_equal(got, want)


def test_the_chase_ring_is_one_cycle_over_every_slot():
    base = 0x7F0000000000
    words, order = chase_ring(base)
    step = CHASE_STRIDE // 8
    addr, seen = chase_end(base, order, 0), set()
    for _ in range(CHASE_SLOTS):
        seen.add(addr)
        addr = int(words[(addr - base) // 8])
    assert len(seen) == CHASE_SLOTS and addr == chase_end(base, order, 0)
    assert chase_end(base, order, 3 * CHASE_SLOTS + 5) == chase_end(base, order, 5)
    assert int(np.count_nonzero(words)) == CHASE_SLOTS and step * 8 == CHASE_STRIDE


# -- rows, summary, path model --------------------------------------------------------------------


def test_block_rows_carry_the_sweep_and_the_models_numbers(session):
    rows = _sweep(session)
    per_call = next(r for r in rows if r.key == PER_CALL and r.params.block_bytes == 128)
    p, m = per_call.params, per_call.metrics
    assert p.src_gpu == 0 and p.dst_gpu == 1 and p.path == "NV18" and p.peer_access is True
    assert p.blocks == 10_000 and p.size_bytes == 128 * 10_000 and p.mover == "ce"
    assert m.us_per_block == pytest.approx(2.5, rel=0.01) and m.issue_us_per_call == 2.5
    assert m.expected_gbytes_per_s == pytest.approx(NVLINK_ONE_WAY * CE_NVLINK_EFFICIENCY)
    kernel = next(r for r in rows if r.key == KERNEL)
    assert kernel.params.mover == "sm" and kernel.params.op == "read"
    assert kernel.metrics.expected_gbytes_per_s < m.expected_gbytes_per_s  # 128-B SM payloads
    bad = block_row(session, COALESCED, 0, 1, 128, 10, _timed(1e-5), 7, None, "x")
    assert bad.status is Status.ERROR and "offset 7" in bad.reason


def test_the_summary_is_copy_blocks_half_bandwidth_interpolation(session):
    rows = _sweep(session)
    summary = rows[-1]
    assert summary.key == SUMMARY_KEY and summary.status is Status.OK and summary.value is None
    pts = [(r.params.block_bytes, r.metrics.ratio_to_coalesced) for r in rows if r.key == PER_CALL]
    assert summary.metrics.half_bandwidth_block_bytes_per_call == half_bandwidth_block_size(pts)
    # 2.5 us per call on a 396.8 GB/s path: half the coalesced rate between 64 KiB and 1 MiB blocks
    assert 64 * KiB < summary.metrics.half_bandwidth_block_bytes_per_call < 1 * MiB
    assert (
        summary.metrics.half_bandwidth_block_bytes_batched
        < summary.metrics.half_bandwidth_block_bytes_per_call
    )
    assert summary.metrics.half_bandwidth_block_bytes_kernel == 128  # at or above half from the start
    never = blocks_summary([r for r in rows if r.params.block_bytes == 128], summary.params)
    assert never.metrics.half_bandwidth_block_bytes_per_call is None  # never reached: None, not a guess


def test_the_path_model_fits_the_per_call_cost_from_the_sweep(session, report):
    rows = _sweep(session)
    path, _ = path_of(next(r for r in rows if r.key == PER_CALL and r.params.block_bytes == 4 * KiB))
    assert path.size == 4 * KiB and path.mover is Mover.COPY_ENGINE  # one operation per block
    path, _ = path_of(next(r for r in rows if r.key == COALESCED and r.params.block_bytes == 4 * KiB))
    assert path.size == 4 * KiB * 10_000  # one operation for every block
    path, _ = path_of(next(r for r in rows if r.key == KERNEL))
    assert path.mover is Mover.SM
    assert path_of(rows[-1]) == (
        None,
        "a summary of the block sweep (half-bandwidth block sizes), not a bandwidth",
    )
    js = {j.index: j for j in judge(rows, report.machine)}
    assert len(js) == len(rows) - 1  # every bandwidth row judged; the summary has no value
    small = next(j for i, j in js.items() if rows[i].key == PER_CALL and rows[i].params.block_bytes == 128)
    assert "host loop 2.50 us per block" in small.per_op_source and small.per_op_us == pytest.approx(
        2.5, rel=0.01
    )
    assert small.ratio == pytest.approx(1.0, rel=0.01) and small.verdict is Verdict.OK
    big = next(j for i, j in js.items() if rows[i].key == COALESCED and rows[i].params.block_bytes == 1 * MiB)
    assert big.ratio is not None and 0.95 < big.ratio < 1.05
    assert all(j.ratio is not None and j.expected_gbytes_per_s for j in js.values())


def _per_block_ratios(session, report, **sweep):
    rows = _sweep(session, sizes=(128, 4 * KiB, 512 * KiB, 1 * MiB, 2 * MiB), **sweep)
    return {
        (rows[j.index].key, rows[j.index].params.block_bytes): j
        for j in judge(rows, report.machine)
        if rows[j.index].key in (PER_CALL, BATCHED)
    }


def test_per_block_rows_run_at_the_slower_of_the_host_loop_and_the_stream(session, report):
    """Healthy: every per-call and batched row at 1.0 of the model, small blocks bound by the host
    loop, large ones by the stream (2.45 us per copy, fitted from the rows where it outlasted the
    loop); a row whose host loop ran slow is the host's, not the path's."""
    js = _per_block_ratios(session, report, slow_host=(4 * KiB,))
    assert all(j.ratio == pytest.approx(1.0, abs=0.02) and j.verdict is Verdict.OK for j in js.values()), {
        k: j.ratio for k, j in js.items()
    }
    assert "host loop bounds this row" in js[(PER_CALL, 4 * KiB)].per_op_source
    assert js[(PER_CALL, 4 * KiB)].per_op_us == pytest.approx(8.0, rel=0.01)
    stream = js[(PER_CALL, 2 * MiB)]
    assert "stream outlasted the host loop" in stream.per_op_source
    assert stream.per_op_us == pytest.approx(2.45, rel=0.01)


def test_a_slow_link_shows_in_the_stream_bound_block_rows(session, report):
    """At half the link's rate the per-call rows the stream bounds fall below the model (the fitted
    stream cost is the least of theirs, so it cannot absorb the loss), and so do the batched rows."""
    js = _per_block_ratios(session, report, link=0.5)
    assert js[(PER_CALL, 2 * MiB)].verdict is not Verdict.OK
    assert js[(BATCHED, 2 * MiB)].verdict is not Verdict.OK
    assert js[(PER_CALL, 128)].verdict is Verdict.OK  # host-bound: the link is not what it waits for


def test_diagnose_with_a_block_sweep_adds_no_warning(report):
    session = _Session(PeerBenchOptions(), report.machine, None)
    with_sweep = dataclasses.replace(
        report, results=(*report.results, *_sweep(session), *_sweep(session, 1, 0))
    )
    before = {(f.code, f.severity.value) for f in diagnose(report).findings}
    after = {(f.code, f.severity.value) for f in diagnose(with_sweep).findings}
    new = after - before
    assert all(sev == "INFO" for _, sev in new), new
    small = [f for f in diagnose(with_sweep).findings if f.code == "CAUSE-SMALL-COPIES"]
    assert (
        small and "peer_blocks" in small[0].subject and "peer-bench peer_blocks" in (small[0].next_step or "")
    )
    assert "peer GPU's memory through UVA" in small[0].advice


# -- all to one ---------------------------------------------------------------------------------


def test_all_to_one_on_two_gpus_is_the_pair_labelled_as_one_source(session, report):
    row = all_to_one_row(session, 1, [0], 256 * MiB, _timed(256 * MiB / 395e9), None)
    p = row.params
    assert row.key == ALL_TO_ONE_KEY and p.op == "all_to_one" and p.sources == 1 and p.src_gpu == 0
    assert "one source" in row.description and "more GPUs" in row.description
    assert row.metrics.expected_gbytes_per_s == pytest.approx(NVLINK_ONE_WAY * CE_NVLINK_EFFICIENCY)
    assert "18 active NVLinks" in p.model and 0.98 < row.metrics.measured_over_expected < 1.01
    (j,) = judge([row], report.machine)
    assert j.ratio is not None and 0.97 < j.ratio < 1.01
    text = render_peer_results([row], width=None)
    assert "CE all-to-one" in text and "0->1" in text


def _switched(report):
    """Three GPUs behind NVSwitch: each pair NV18, each GPU 18 links (a destination takes in 18)."""
    m = report.machine
    g0, g1 = m.gpus[0], m.gpus[1]
    g2 = dataclasses.replace(g1, bdf="0000:00:08.0", cuda_ordinal=2)
    gpus = (g0, g1, g2)
    peers = []
    for a in range(3):
        for b in range(3):
            if a != b:
                peers.append(
                    dataclasses.replace(
                        m.peers[0], src_ordinal=a, dst_ordinal=b, src_bdf=gpus[a].bdf, dst_bdf=gpus[b].bdf
                    )
                )
    return dataclasses.replace(m, gpus=gpus, peers=tuple(peers))


def test_all_to_one_is_capped_by_the_destinations_ingress(report):
    m = _switched(report)
    assert all(p.path_class is PathClass.NV for p in m.peers)
    exp = expect_all_to_one(m, 2)
    assert exp.gbytes_per_s == pytest.approx(NVLINK_ONE_WAY * CE_NVLINK_EFFICIENCY)  # not twice it
    assert "ingress" in exp.text and "below the 2 sources' sum" in exp.text
    session = _Session(PeerBenchOptions(), m, None)
    row = all_to_one_row(session, 2, [0, 1], 64 * MiB, _timed(128 * MiB / 360e9), None)
    assert row.params.src_gpu is None and row.params.sources == 2
    path, _ = path_of(row)
    # the two sources copy at once: one fork/join across the GPUs and one copy each per sample
    assert path.peer_sources == 2 and path.per_sample_us == pytest.approx(24.0) and path.size == 128 * MiB
    (j,) = judge([row], m)
    at_size = 128 * MiB / (128 * MiB / (NVLINK_ONE_WAY * CE_NVLINK_EFFICIENCY * 1e9) + 24e-6) / 1e9
    assert j.bound.startswith("all to GPU 2") and j.expected_gbytes_per_s == pytest.approx(at_size)  # 370.5
    assert 0.95 < j.ratio < 1.0
    assert "2 GPUs->2" in render_peer_results([row], width=None)


# -- tables -------------------------------------------------------------------------------------


def test_the_block_table_and_half_bandwidth_line_are_shown(session):
    rows = _sweep(session)
    text = render_peer_results(rows, width=None)
    assert "Block sweep, GPU 0 -> GPU 1 (NV18, peer access on)" in text
    assert "per call (Python)" in text and "gather kernel" in text and "(2.505 us)" in text
    assert "half the coalesced rate is reached at block size" in text and "kernel: 128 B" in text
    assert "GPU<->GPU transfers" not in text  # the sweep's rows stay out of the main table
    narrow = render_peer_results(rows, width=80)
    assert "Block sweep" in narrow and max(len(line) for line in narrow.splitlines()) <= 80


def test_the_sm_round_trip_sits_beside_the_copy_latencies():
    from gdrdiag.bench.peer_latency import latency_result
    from gdrdiag.model.params import PeerParams

    p = PeerParams(
        src_gpu=1, dst_gpu=0, mover="sm", op="latency", peer_access=True, size_bytes=8, path="NV18"
    )
    row = latency_result(SM_LATENCY_KEY, p, Timed((1.1e-6, 1.2e-6, 1.3e-6), "chase"), None, "sm", 2)
    assert row.unit == "us" and row.value == pytest.approx(1.2)
    assert path_of(row)[0] is None
    text = render_peer_results([row], width=None)
    assert "SM load round trip" in text and "1->0" in text and "1.20" in text
