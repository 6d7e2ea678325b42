"""peer-bench all-to-all and one-to-all without a GPU: the model, the rows, the judge, the registry.

The path model's node-wide figures pinned on built machines (4 and 8 H100-class GPUs behind NVSwitch,
every pair NV18; a 4-GPU NVLink mesh of NV2 pairs; a 4-GPU PCIe-only box), the rows' params and
judgement, the table labels, selection, the default node run and the progress step counts.
"""

from __future__ import annotations

import dataclasses
import json

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
from gdrdiag.bench.profiles import NODE_PEER_KEYS
from gdrdiag.bench.registry import peer_registry
from gdrdiag.bench.timing import Timed
from gdrdiag.cli import app
from gdrdiag.diagnose import diagnose
from gdrdiag.model.machine import LinkHop, MachineInfo, NvLink, PathClass
from gdrdiag.model.report import Report
from gdrdiag.pathmodel.judge import judge
from gdrdiag.pathmodel.pcie import LinkParams, ce_efficiency
from gdrdiag.pathmodel.peer import CE_NVLINK_EFFICIENCY, expect_all_to_all, expect_one_to_all
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


def test_four_gpus_behind_nvswitch_send_their_own_links_not_three_pairs(base):
    m = _node(base, 4, 18, 18)
    exp = expect_all_to_all(m)
    assert exp.gbytes_per_s == pytest.approx(4 * GPU_EGRESS)  # 1587.4 GB/s
    assert exp.gbytes_per_s == pytest.approx(1587.375)
    assert "egress" in exp.text and "below its 3 pairs' sum" in exp.text and "4 GPUs" in exp.text


def test_eight_gpus_behind_nvswitch(base):
    m = _node(base, 8, 18, 18)
    assert expect_all_to_all(m).gbytes_per_s == pytest.approx(8 * GPU_EGRESS)  # 3174.75 GB/s
    assert expect_all_to_all(m).gbytes_per_s == pytest.approx(3174.75)
    assert expect_one_to_all(m, 3).gbytes_per_s == pytest.approx(GPU_EGRESS)
    # a subset of the GPUs: each still limited by its own links
    assert expect_all_to_all(m, [0, 1, 2]).gbytes_per_s == pytest.approx(3 * GPU_EGRESS)


def test_an_nvlink_mesh_sums_its_distinct_pair_links(base):
    m = _node(base, 4, 2, 6)  # NV2 to each of 3 peers, 6 links per GPU
    per_gpu = 3 * 2 * LINK * CE_NVLINK_EFFICIENCY
    assert expect_all_to_all(m).gbytes_per_s == pytest.approx(4 * per_gpu)  # 529.1 GB/s
    assert expect_all_to_all(m).gbytes_per_s == pytest.approx(529.125)
    assert expect_one_to_all(m, 0).gbytes_per_s == pytest.approx(per_gpu)


def test_a_pcie_only_box_is_held_to_each_gpus_own_link(base):
    m = _node(base, 4, 0, 0, pcie=True)
    one = GEN5_X16 * ce_efficiency(LinkParams())  # 58.03 GB/s
    exp = expect_all_to_all(m)
    assert exp.gbytes_per_s == pytest.approx(4 * one)  # 232.1 GB/s
    assert exp.gbytes_per_s == pytest.approx(232.13, abs=0.01)
    assert "PCIe egress" in exp.text
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


def test_the_all_to_all_row_is_judged_against_the_sum_of_egress(base):
    m = _node(base, 4, 18, 18)
    session = _Session(PeerBenchOptions(), m, None)
    pat = all_to_all_pattern([0, 1, 2, 3])
    assert len(pat.copies) == 12 and pat.hub == 0 and pat.slot(3, 0) == 2 and pat.slots(1) == 3
    moved = 12 * 64 * MiB
    row = pattern_row(session, pat, 64 * MiB, _timed(moved / 1500e9), None)
    p = row.params
    assert row.key == ALL_TO_ALL_KEY and p.op == "all_to_all" and p.sources == 4 and p.src_gpu is None
    assert p.path == "NV18" and row.verified
    assert row.value == pytest.approx(1500, rel=0.01)
    assert row.metrics.expected_gbytes_per_s == pytest.approx(4 * GPU_EGRESS)
    path, why = path_of(row)
    assert why is None and path.peer_pattern == "all_to_all" and path.size == moved
    assert path.ops_in_flight == 12
    (j,) = judge([row], m)
    assert j.bound.startswith("all to all, 4 GPUs") and j.ratio == pytest.approx(
        1500 / (4 * GPU_EGRESS), rel=0.01
    )
    text = render_peer_results([row], width=None)
    assert "CE all-to-all" in text and "4 GPUs<->all" in text


def test_the_one_to_all_row_is_judged_against_the_sources_egress(base):
    m = _node(base, 4, 18, 18)
    session = _Session(PeerBenchOptions(), m, None)
    pat = one_to_all_pattern(2, [0, 1, 2, 3])
    assert pat.copies == ((2, 0), (2, 1), (2, 3)) and pat.hub == 2
    row = pattern_row(session, pat, 64 * MiB, _timed(3 * 64 * MiB / 380e9), None)
    p = row.params
    assert row.key == ONE_TO_ALL_KEY and p.src_gpu == 2 and p.dst_gpu is None and p.destinations == 3
    (j,) = judge([row], m)
    assert j.bound.startswith("GPU 2 to all") and 0.9 < j.ratio < 1.0
    assert "2->3 GPUs" in render_peer_results([row], width=None)


def test_on_two_gpus_the_rows_say_what_they_are(base):
    session = _Session(PeerBenchOptions(), base, None)
    row = pattern_row(session, all_to_all_pattern([0, 1]), 64 * MiB, _timed(2 * 64 * MiB / 780e9), None)
    assert "the pair both ways at once" in row.description
    (j,) = judge([row], base)
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
