"""NCCL's ring copy-out step (gdrdiag/pathmodel/collective.py) in the one-node collective bound.

The share of the NVLink a ring collective fills follows from its link steps per chunk; it applies to
NVLink bounds only, and leaves collectives without the step (broadcast, sendrecv) and staged runs as
they were.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from gdrdiag.importers import import_text
from gdrdiag.model.report import Report
from gdrdiag.pathmodel.collective import RING_COPY_OUT_STEP, ring_link_share
from gdrdiag.pathmodel.judge import judge

ROOT = Path(__file__).resolve().parents[1]
PEER_H100X2 = ROOT / "fixtures" / "reports" / "peer_h100x2.json"  # 2 x H100 NV18


def _nccl_tests(collective: str, busbw: float, ranks: int = 2, env: str = "") -> str:
    ranks_lines = "".join(
        f"#  Rank  {r} Group  0 Pid   4242 on     node1 device  {r} [0000:1{r}:00] NVIDIA H100 80GB HBM3\n"
        for r in range(ranks)
    )
    log = (
        "node1:4242:4242 [0] NCCL INFO NCCL version 2.28.3+cuda13.0\n"
        f"node1:4242:4250 [0] NCCL INFO {env}\n"
        "node1:4242:4250 [0] NCCL INFO comm 0x1 rank 0 nRanks 2 nNodes 1 localRanks 2 localRank 0 MNNVL 0\n"
        "node1:4242:4250 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via SHM/direct/direct\n"
        if env
        else ""
    )
    return (
        "# nccl-tests version 2.17.6 nccl-headers=22803 nccl-library=22803\n"
        f"# Collective test starting: {collective}_perf\n"
        f"# nThread 1 nGpus {ranks} minBytes 8 maxBytes 1073741824 step: 2(factor) warmup iters: 5\n"
        + ranks_lines
        + log
        + "#  size  count  type  redop  root  time  algbw  busbw #wrong  time  algbw  busbw #wrong\n"
        f"  1073741824  268435456  float  sum  -1  39768.0  {busbw:.2f}  {busbw:.2f}  0  39700.0  {busbw:.2f}"
        f"  {busbw:.2f}  0\n"
    )


@pytest.fixture(scope="module")
def node() -> Report:
    return Report.from_json(PEER_H100X2.read_text())


def _bound(node: Report, text: str):
    rep = dataclasses.replace(node, results=tuple(import_text(text, "out.txt")))
    return judge(rep.results, node.machine)[-1]


def test_the_share_follows_the_ring_kernels_link_steps():
    two = ring_link_share("all_gather", 2)
    assert two is not None and two[0] == pytest.approx(1 / (1 + RING_COPY_OUT_STEP))
    assert ring_link_share("reduce_scatter", 4)[0] == pytest.approx(3 / (3 + RING_COPY_OUT_STEP))
    assert ring_link_share("all_reduce", 2)[0] == pytest.approx(2 / (2 + RING_COPY_OUT_STEP))
    # more ranks, more link steps per copy-out: the share grows toward the link
    shares = [ring_link_share("all_gather", n)[0] for n in (2, 4, 8)]
    assert shares == sorted(shares) and shares[-1] < 1.0
    for none in (("broadcast", 2), ("sendrecv", 2), ("alltoall", 4), ("all_gather", 1), (None, 2)):
        assert ring_link_share(*none) is None


def test_the_bound_of_an_all_gather_carries_the_step_and_a_broadcast_does_not(node):
    gather = _bound(node, _nccl_tests("all_gather", 250.0))
    bcast = _bound(node, _nccl_tests("broadcast", 250.0))
    assert "copy out of its receive buffer" in gather.bound and "copy out" not in bcast.bound
    assert gather.expected_gbytes_per_s == pytest.approx(
        bcast.expected_gbytes_per_s / (1 + RING_COPY_OUT_STEP), rel=0.01
    )


def test_a_staged_collective_is_bound_by_host_memory_without_the_step(node):
    staged = _bound(node, _nccl_tests("all_gather", 20.0, env="NCCL_P2P_DISABLE set by environment to 1."))
    assert "staged through host memory" in staged.bound and "copy out" not in staged.bound
