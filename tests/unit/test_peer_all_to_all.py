"""peer-bench all-to-all and one-to-all without a GPU: the model, the rows, the judge, the registry.

The path model's node-wide figures pinned on built machines (4 and 8 H100-class GPUs behind NVSwitch,
every pair NV18; a 4-GPU NVLink mesh of NV2 pairs; a 4-GPU PCIe-only box), the rows' params and
judgement, the table labels, selection, the default node run and the progress step counts.
"""

from __future__ import annotations

import dataclasses
import json
import re

import pytest
from typer.testing import CliRunner

from gdrdiag.bench.peer import ALL_KEYS, PeerBenchOptions, _Session, planned_case_count
from gdrdiag.bench.peer_all_to_all import (
    ALL_TO_ALL_KEY,
    ONE_TO_ALL_KEY,
    all_to_all_pattern,
    one_to_all_pattern,
    pattern_row,
)
from gdrdiag.bench.peer_all_to_one import all_to_one_row
from gdrdiag.bench.profiles import NODE_PEER_KEYS
from gdrdiag.bench.registry import peer_registry
from gdrdiag.bench.timing import Timed
from gdrdiag.cli import app
from gdrdiag.diagnose import diagnose
from gdrdiag.model.machine import LinkHop, MachineInfo, NvLink, PathClass
from gdrdiag.model.report import Report
from gdrdiag.pathmodel.judge import judge
from gdrdiag.pathmodel.pcie import LinkParams, ce_efficiency
from gdrdiag.pathmodel.peer import (
    CE_NVLINK_EFFICIENCY,
    all_to_all_schedule,
    expect_all_to_all,
    expect_one_to_all,
)
from gdrdiag.pathmodel.rows import path_of
from gdrdiag.render.peer_table import render_peer_results
from gdrdiag.units import MiB
from tests.conftest import FIXTURES

LINK = 26.5625  # NVLink 4, one way per link (nvidia-smi nvlink -s on H100)
GPU_EGRESS = 18 * LINK * CE_NVLINK_EFFICIENCY  # 396.84 GB/s: one H100/H200's 18 links
GEN5_X16 = 63.02


@pytest.fixture(scope="module")
def base() -> MachineInfo:
    report = Report.from_json((FIXTURES / "reports" / "peer_h100x2.json").read_text())
    assert report.machine is not None
    return report.machine


def _node(base: MachineInfo, n: int, pair_links: int, gpu_links: int, pcie: bool = False) -> MachineInfo:
    """``n`` GPUs like the fixture's: each with ``gpu_links`` active NVLinks, each ordered pair
    ``pair_links`` of them (NVSwitch: every pair shows all 18), or PCIe peer-to-peer only."""
    g0 = base.gpus[0]
    links = tuple(NvLink(k, True, 4, gbytes_per_s=LINK) for k in range(gpu_links))
    gpus = tuple(
        dataclasses.replace(
            g0, bdf=f"0000:{0x10 + k:02x}:00.0", cuda_ordinal=k, nvlinks=() if pcie else links
        )
        for k in range(n)
    )
    peers = []
    for a in range(n):
        for b in range(n):
            if a == b:
                continue
            p = dataclasses.replace(
                base.peers[0], src_ordinal=a, dst_ordinal=b, src_bdf=gpus[a].bdf, dst_bdf=gpus[b].bdf
            )
            if pcie:
                hop = LinkHop(gpus[a].bdf, 32.0, 16, GEN5_X16)
                p = dataclasses.replace(
                    p,
                    path_class=PathClass.NODE,
                    nvlinks=None,
                    nvlink_gbytes_per_s=None,
                    narrowest_capable=hop,
                )
            else:
                p = dataclasses.replace(p, nvlinks=pair_links, nvlink_gbytes_per_s=pair_links * LINK)
            peers.append(p)
    return dataclasses.replace(base, gpus=gpus, peers=tuple(peers))


def _timed(seconds: float, n: int = 5) -> Timed:
    return Timed(tuple(seconds * (1 + 0.001 * k) for k in range(n)), "events (synthetic)")


# -- the model ----------------------------------------------------------------------------------


def test_the_schedule_gives_every_gpu_one_destination_per_step():
    steps = all_to_all_schedule([0, 1, 2, 3])
    assert steps == (
        ((0, 1), (1, 2), (2, 3), (3, 0)),
        ((0, 2), (1, 3), (2, 0), (3, 1)),
        ((0, 3), (1, 0), (2, 1), (3, 2)),
    )
    for n in (2, 3, 5, 8):
        gpus = list(range(10, 10 + n))
        steps = all_to_all_schedule(gpus)
        assert len(steps) == n - 1
        for step in steps:  # one copy out of and one into every GPU
            assert sorted(s for s, _ in step) == gpus and sorted(d for _, d in step) == gpus
        every = [c for step in steps for c in step]
        assert sorted(every) == [(s, d) for s in gpus for d in gpus if s != d]  # each pair once


def test_four_gpus_behind_nvswitch_send_their_own_links_not_three_pairs(base):
    m = _node(base, 4, 18, 18)
    exp = expect_all_to_all(m)
    assert exp.gbytes_per_s == pytest.approx(4 * GPU_EGRESS)  # 1587.4 GB/s
    assert exp.gbytes_per_s == pytest.approx(1587.375)
    assert "4 GPUs in 3 step(s) of one copy per GPU" in exp.text and "4 x 396.8" in exp.text


def test_eight_gpus_behind_nvswitch(base):
    m = _node(base, 8, 18, 18)
    assert expect_all_to_all(m).gbytes_per_s == pytest.approx(8 * GPU_EGRESS)  # 3174.75 GB/s
    assert expect_all_to_all(m).gbytes_per_s == pytest.approx(3174.75)
    assert expect_one_to_all(m, 3).gbytes_per_s == pytest.approx(GPU_EGRESS)
    # a subset of the GPUs: each still limited by its own links
    assert expect_all_to_all(m, [0, 1, 2]).gbytes_per_s == pytest.approx(3 * GPU_EGRESS)


def test_an_nvlink_mesh_step_loads_one_pairs_links_per_gpu(base):
    m = _node(base, 4, 2, 6)  # NV2 to each of 3 peers, 6 links per GPU
    pair = 2 * LINK * CE_NVLINK_EFFICIENCY
    # one copy per GPU at a time: a step uses one pair's two links out of each GPU's six
    assert expect_all_to_all(m).gbytes_per_s == pytest.approx(4 * pair)  # 176.4 GB/s
    assert expect_all_to_all(m).gbytes_per_s == pytest.approx(176.375)
    assert expect_one_to_all(m, 0).gbytes_per_s == pytest.approx(3 * pair)


def test_a_step_lasts_as_long_as_its_slowest_pair(base):
    m = _node(base, 3, 18, 18)
    slow = 9 * LINK  # GPU 0 -> 1 on half its links
    m = dataclasses.replace(
        m,
        peers=tuple(
            dataclasses.replace(p, nvlinks=9, nvlink_gbytes_per_s=slow)
            if (p.src_ordinal, p.dst_ordinal) == (0, 1)
            else p
            for p in m.peers
        ),
    )
    exp = expect_all_to_all(m)
    half = slow * CE_NVLINK_EFFICIENCY
    # step 1 (0->1, 1->2, 2->0) waits for the half-rate pair; step 2 runs at the full pair rate
    assert exp.gbytes_per_s == pytest.approx(6 / (1 / half + 1 / GPU_EGRESS))
    assert "step 1 3 x 198.4 (GPU 0 -> 1 NV9)" in exp.text and "step 2 3 x 396.8" in exp.text


def test_a_pcie_only_box_is_held_to_each_pairs_narrowest_link(base):
    m = _node(base, 4, 0, 0, pcie=True)
    one = GEN5_X16 * ce_efficiency(LinkParams())  # 58.03 GB/s
    exp = expect_all_to_all(m)
    assert exp.gbytes_per_s == pytest.approx(4 * one)  # 232.1 GB/s
    assert exp.gbytes_per_s == pytest.approx(232.13, abs=0.01)
    assert "every step 4 x 58.0 GB/s (GPU 0 -> 1 NODE" in exp.text
    assert expect_one_to_all(m, 2).gbytes_per_s == pytest.approx(one)


def test_two_gpus_all_to_all_is_the_pair_both_ways(base):
    exp = expect_all_to_all(base)
    assert exp.gbytes_per_s == pytest.approx(2 * GPU_EGRESS)
    assert "both ways" in exp.text


def test_unknown_facts_give_no_number(base):
    assert expect_all_to_all(None).gbytes_per_s is None
    assert expect_all_to_all(base, [0, 5]).gbytes_per_s is None  # no facts for GPU 5
    assert expect_one_to_all(base, 7).gbytes_per_s is None


# -- rows, judge, table -------------------------------------------------------------------------


def test_the_all_to_all_row_is_judged_against_the_schedules_steps(base):
    m = _node(base, 4, 18, 18)
    session = _Session(PeerBenchOptions(), m, None)
    pat = all_to_all_pattern([0, 1, 2, 3])
    assert len(pat.copies) == 12 and pat.hub == 0 and pat.slots(1) == 3
    assert pat.copies[:4] == ((0, 1), (1, 2), (2, 3), (3, 0))  # step 1 first: the schedule's order
    assert pat.slot(3, 0) == 0 and pat.slot(1, 0) == 2  # GPU 0 takes 3's copy in step 1, 1's in step 3
    assert pat.streams == [(0, 0), (1, 1), (2, 2), (3, 3)]  # one stream per source, copies queued in order
    assert pat.stream_of(2, 0) == (2, 2)
    moved = 12 * 64 * MiB
    row = pattern_row(session, pat, 64 * MiB, _timed(moved / 1500e9), None)
    p = row.params
    assert row.key == ALL_TO_ALL_KEY and p.op == "all_to_all" and p.sources == 4 and p.src_gpu is None
    assert p.path == "NV18" and row.verified
    assert row.value == pytest.approx(1500, rel=0.01)
    assert row.metrics.expected_gbytes_per_s == pytest.approx(4 * GPU_EGRESS)
    path, why = path_of(row)
    assert why is None and path.peer_pattern == "all_to_all" and path.size == moved
    # a sample pays the fork/join across GPUs (20 us) and 4 us for each of a GPU's 3 copies in turn
    assert path.per_sample_us == pytest.approx(32.0)
    (j,) = judge([row], m)
    at_size = moved / (moved / (4 * GPU_EGRESS * 1e9) + 32e-6) / 1e9  # 1493.2 GB/s at 64 MiB
    assert j.bound.startswith("all to all, 4 GPUs") and j.expected_gbytes_per_s == pytest.approx(at_size)
    assert j.ratio == pytest.approx(1500 / at_size, rel=0.01) and "32 us per sample" in j.per_op_source
    text = render_peer_results([row], width=None)
    assert "CE all-to-all" in text and "4 GPUs<->all" in text


def test_the_one_to_all_row_is_judged_against_the_sources_egress(base):
    m = _node(base, 4, 18, 18)
    session = _Session(PeerBenchOptions(), m, None)
    pat = one_to_all_pattern(2, [0, 1, 2, 3])
    assert pat.copies == ((2, 0), (2, 1), (2, 3)) and pat.hub == 2
    assert pat.streams == [(2, 0), (2, 1), (2, 3)]  # a stream per copy
    # 4 x H200 (docs/benchmarks.md): 374.2 GB/s at 64 MiB per copy
    row = pattern_row(session, pat, 64 * MiB, _timed(3 * 64 * MiB / 374.2e9), None)
    p = row.params
    assert row.key == ONE_TO_ALL_KEY and p.src_gpu == 2 and p.dst_gpu is None and p.destinations == 3
    (j,) = judge([row], m)
    moved = 3 * 64 * MiB
    at_size = moved / (moved / (GPU_EGRESS * 1e9) + 32e-6) / 1e9  # the copy engine runs the 3 in turn
    assert j.bound.startswith("GPU 2 to all") and j.expected_gbytes_per_s == pytest.approx(at_size)
    assert j.ratio == pytest.approx(374.2 / at_size, rel=0.01)  # 1.002
    assert "2->3 GPUs" in render_peer_results([row], width=None)


def test_on_two_gpus_the_rows_say_what_they_are(base):
    session = _Session(PeerBenchOptions(), base, None)
    row = pattern_row(session, all_to_all_pattern([0, 1]), 64 * MiB, _timed(2 * 64 * MiB / 680e9), None)
    assert "the pair both ways at once" in row.description
    (j,) = judge([row], base)
    moved = 2 * 64 * MiB  # one step: 0 -> 1 and 1 -> 0 at once, 20 + 4 us per sample
    assert j.expected_gbytes_per_s == pytest.approx(moved / (moved / (2 * GPU_EGRESS * 1e9) + 24e-6) / 1e9)
    assert j.ratio is not None and 0.95 < j.ratio < 1.0
    one = pattern_row(session, one_to_all_pattern(1, [0, 1]), 64 * MiB, _timed(64 * MiB / 390e9), None)
    assert one.params.dst_gpu == 0 and "that pair's copy" in one.description


def test_a_wrong_byte_makes_the_row_an_error_and_unknown_facts_leave_it_unjudged(base):
    session = _Session(PeerBenchOptions(), None, None)
    row = pattern_row(session, all_to_all_pattern([0, 1, 2]), 1 * MiB, _timed(1e-4), 17)
    assert row.status.value == "ERROR" and "offset 17" in (row.reason or "")
    ok = pattern_row(session, all_to_all_pattern([0, 1, 2]), 1 * MiB, _timed(1e-4), None)
    assert ok.metrics.expected_gbytes_per_s is None
    (j,) = judge([ok], _node(base, 2, 18, 18))  # facts for two GPUs only: no bound, not a PCIe guess
    assert j.ratio is None


def test_node_rows_stay_out_of_the_pair_outliers(base):
    m = _node(base, 4, 18, 18)
    session = _Session(PeerBenchOptions(), m, None)
    rows = [
        pattern_row(session, one_to_all_pattern(s, [0, 1, 2, 3]), 64 * MiB, _timed(t), None)
        for s, t in ((0, 1e-3), (1, 1e-3), (2, 1e-3), (3, 4e-3))
    ]
    report = Report.from_json((FIXTURES / "reports" / "peer_h100x2.json").read_text())
    report = dataclasses.replace(report, machine=m, results=tuple(rows))
    assert not [f for f in diagnose(report).findings if f.code == "PERF-PAIR-OUTLIER"]


def _diagnosed(base, m, rows):
    report = Report.from_json((FIXTURES / "reports" / "peer_h100x2.json").read_text())
    report = dataclasses.replace(report, machine=m, results=tuple(rows))
    return [f for f in diagnose(report).findings if f.code == "PEER-SLOW"]


def test_a_slow_all_to_all_is_a_finding_and_a_healthy_one_is_not(base):
    m = _node(base, 4, 18, 18)
    session = _Session(PeerBenchOptions(), m, None)
    pat = all_to_all_pattern([0, 1, 2, 3])
    moved = 12 * 256 * MiB
    # 4 x H200 behind NVSwitch, every copy issued at once (docs/benchmarks.md): 808 GB/s, 0.51 of the model
    slow = pattern_row(session, pat, 256 * MiB, _timed(moved / 808e9), None)
    (f,) = _diagnosed(base, m, [slow])
    assert f.severity.value == "WARN" and f.subject == "gpus-all-to-all"
    assert f.title.startswith("all to all among 4 GPUs (NV18): peer copies reach 52%")
    assert f.evidence[0].startswith("results[peer_all_to_all 4 GPUs size=256 MiB] = 80")
    assert "nvlink -s" in f.advice and "Fabric" in f.advice
    # the same GPUs' pairs alone are healthy: the evidence says so
    pair = pattern_row(session, one_to_all_pattern(0, [0, 1]), 256 * MiB, _timed(256 * MiB / 390e9), None)
    pair = dataclasses.replace(pair, key="peer_ce_on", params=dataclasses.replace(pair.params, op="copy"))
    (f,) = _diagnosed(base, m, [slow, pair])
    alone = r"pair copies, one at a time, reach 9\d%-9\d% of their model"
    assert re.search(alone, f.evidence[-1]), f.evidence
    # the shifted steps on the same node (docs/benchmarks.md): 1544 GB/s at 256 MiB, 0.97: no finding
    healthy = pattern_row(session, pat, 256 * MiB, _timed(moved / 1544e9), None)
    assert _diagnosed(base, m, [healthy]) == []
    # below 64 MiB a row is not read (its per-copy costs weigh), however slow
    small = pattern_row(session, pat, 16 * MiB, _timed(12 * 16 * MiB / 400e9), None)
    assert _diagnosed(base, m, [small]) == []


def test_all_to_one_and_one_to_all_name_their_gpu_by_address(base):
    m = _node(base, 4, 18, 18)
    session = _Session(PeerBenchOptions(), m, None)
    # every other GPU into GPU 2 at 53% (GPU 2 time-sliced with another process, docs/benchmarks.md)
    into = all_to_one_row(session, 2, [0, 1, 3], 256 * MiB, _timed(3 * 256 * MiB / 212e9), None)
    out = pattern_row(
        session, one_to_all_pattern(1, [0, 1, 2, 3]), 256 * MiB, _timed(3 * 256 * MiB / 300e9), None
    )
    found = {f.subject: f for f in _diagnosed(base, m, [into, out])}
    assert set(found) == {m.gpus[2].bdf, m.gpus[1].bdf}
    assert found[m.gpus[2].bdf].title.startswith(f"3 GPUs into GPU 2 ({m.gpus[2].bdf}) at once")
    assert found[m.gpus[1].bdf].title.startswith(f"GPU 1 ({m.gpus[1].bdf}) into 3 GPUs at once (NV18)")


def test_patterns_that_are_one_pair_are_left_to_the_pairs_rows(base):
    session = _Session(PeerBenchOptions(), base, None)
    rows = [
        pattern_row(session, all_to_all_pattern([0, 1]), 256 * MiB, _timed(2 * 256 * MiB / 300e9), None),
        pattern_row(session, one_to_all_pattern(0, [0, 1]), 256 * MiB, _timed(256 * MiB / 150e9), None),
        all_to_one_row(session, 1, [0], 256 * MiB, _timed(256 * MiB / 150e9), None),
    ]
    assert _diagnosed(base, base, rows) == []


# -- registry, selection, progress --------------------------------------------------------------


def test_the_cases_are_listed_selectable_and_waived_without_gpus():
    assert ALL_TO_ALL_KEY in ALL_KEYS and ONE_TO_ALL_KEY in ALL_KEYS
    assert [c.key for c in peer_registry().select((ALL_TO_ALL_KEY,))] == [ALL_TO_ALL_KEY]
    res = CliRunner().invoke(app, ["peer-bench", "--list"], env={"COLUMNS": "200"})
    assert res.exit_code == 0 and ALL_TO_ALL_KEY in res.output and ONE_TO_ALL_KEY in res.output
    res = CliRunner().invoke(app, ["--json", "peer-bench", ALL_TO_ALL_KEY, ONE_TO_ALL_KEY, "--quiet"])
    assert res.exit_code == 0, res.output
    rows = json.loads(res.stdout)["results"]
    assert {r["key"] for r in rows} == {ALL_TO_ALL_KEY, ONE_TO_ALL_KEY}
    assert all(r["status"] == "WAIVED" and r["reason"] for r in rows)


def test_the_default_node_run_has_one_all_to_all():
    assert ALL_TO_ALL_KEY in NODE_PEER_KEYS and ONE_TO_ALL_KEY not in NODE_PEER_KEYS
    opts = PeerBenchOptions(keys=(ALL_TO_ALL_KEY,), sizes=(64 * MiB,))
    for n in (2, 4, 8):
        assert planned_case_count(opts, n * (n - 1)) == 1  # once per run, not per pair


def test_progress_counts_one_to_all_and_all_to_one_per_gpu():
    opts = PeerBenchOptions(keys=(ONE_TO_ALL_KEY, "peer_all_to_one", ALL_TO_ALL_KEY), sizes=(4096, 65536))
    assert planned_case_count(opts, 2) == 2 + 2 + 1
    assert planned_case_count(opts, 12) == 4 + 4 + 1  # 4 GPUs
    assert planned_case_count(opts, 56) == 8 + 8 + 1  # 8 GPUs
