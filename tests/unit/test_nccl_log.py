"""NCCL's INFO log and nccl-tests within one node: the facts, the peer-path bound, the causes.

Synthetic excerpts follow NCCL's source formats (gdrdiag/importers/nccl_log.py); tests/real/<machine>/
holds real runs (2 x H200, NV18, no RDMA NIC) with the machine's bundle, used when present.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from gdrdiag.diagnose import diagnose
from gdrdiag.errors import UserInputError
from gdrdiag.importers import import_text
from gdrdiag.importers.nccl_log import MAX_KINDS, parse_log
from gdrdiag.model.path import Place, Verdict
from gdrdiag.model.report import Report
from gdrdiag.pathmodel.judge import judge

ROOT = Path(__file__).resolve().parents[1]
PEER_H100X2 = ROOT / "fixtures" / "reports" / "peer_h100x2.json"  # 2 x H100 NV18, no NIC, no peermem

HEAD = """# nccl-tests version 2.17.6 nccl-headers=22803 nccl-library=22803
# Collective test starting: all_reduce_perf
# nThread 1 nGpus 2 minBytes 8 maxBytes 1073741824 step: 2(factor) warmup iters: 5 iters: 20
#  Rank  0 Group  0 Pid   4242 on     node1 device  0 [0000:18:00] NVIDIA H100 80GB HBM3
#  Rank  1 Group  0 Pid   4242 on     node1 device  1 [0000:2a:00] NVIDIA H100 80GB HBM3
"""
LOG = """node1:4242:4242 [0] NCCL INFO NCCL version 2.28.3+cuda13.0
node1:4242:4250 [0] NCCL INFO {env}
node1:4242:4250 [0] NCCL INFO ncclCommInitAll comm 0x55d0c0a0 rank 0 nranks 2 cudaDev 0 nvmlDev 0 \
busId 18000 commId 0x1b2c - Init START
node1:4242:4250 [0] NCCL INFO comm 0x55d0c0a0 rank 0 nRanks 2 nNodes 1 localRanks 2 localRank 0 MNNVL 0
node1:4242:4250 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via {via}
node1:4242:4251 [1] NCCL INFO Channel 00/0 : 1[1] -> 0[0] via {via}
node1:4242:4250 [0] NCCL INFO {channels} coll channels, 0 collnet channels, 0 nvls channels, 2 p2p channels, \
2 p2p channels per peer
"""
TABLE = """#  size  count  type  redop  root  time  algbw  busbw #wrong  time  algbw  busbw #wrong
   134217728  33554432  float  sum  -1  4971.1  {bw}  {bw}  0  4960.2  {bw}  {bw}  0
  1073741824  268435456  float  sum  -1  39768.0  {bw}  {bw}  0  39700.0  {bw}  {bw}  0
# Avg bus bandwidth    : {bw}
"""


def _text(
    bw: float,
    env: str = "NCCL_DEBUG set by environment to INFO.",
    via: str = "P2P/CUMEM/read",
    channels: int = 2,
    log: bool = True,
) -> str:
    info = LOG.format(env=env, via=via, channels=channels) if log else ""
    return HEAD + info + TABLE.format(bw=f"{bw:.2f}")


@pytest.fixture(scope="module")
def node() -> Report:
    return Report.from_json(PEER_H100X2.read_text())


def _report(node: Report, text: str) -> Report:
    return dataclasses.replace(node, results=tuple(import_text(text, "out.txt")))


def test_the_log_becomes_typed_facts_that_round_trip(node):
    rs = import_text(_text(27.0, env="NCCL_P2P_DISABLE set by environment to 1.", via="SHM/direct/direct"))
    facts = rs[0].params.nccl
    assert facts.version == "2.28.3+cuda13.0" and facts.ranks == 2 and facts.nodes == 1
    assert facts.hosts == ("node1",) and [d.cuda_dev for d in facts.devices] == [0, 1]
    assert facts.devices[0].bus_id == "18000" and facts.setting("NCCL_P2P_DISABLE") == "1"
    assert [(t.kind, t.detail, t.connections) for t in facts.transports] == [("SHM", "direct/direct", 2)]
    assert facts.coll_channels == 2 and facts.debug_info
    rep = _report(node, _text(27.0))
    assert Report.from_json(rep.to_json()) == rep


def test_a_pasted_log_alone_and_its_bounds():
    assert parse_log("no nccl here") is None
    lines = [f"h:1:1 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/K{i}" for i in range(500)]
    lines += [
        "h:1:1 [0] NCCL INFO " + "x" * 100_000,
        "h:1:1 [0] NCCL INFO NCCL_PROTO set by environment to LL",
    ]
    facts = parse_log("\n".join(lines))
    assert len(facts.transports) == MAX_KINDS and facts.setting("NCCL_PROTO") == "LL"


def test_a_healthy_single_node_all_reduce_is_judged_on_nvlink_not_pcie(node):
    for text in (_text(315.0), _text(315.0, log=False)):
        j = judge(_report(node, text).results, node.machine)[-1]
        assert j.destination.place is Place.GPU and "gpu0(device)->gpu1(device)" in j.label
        assert j.verdict is Verdict.OK and "NVLink" in j.bound and 0.8 < j.ratio < 1.15


def test_p2p_disabled_leads_with_the_variable_and_no_nic_cause(node):
    rep = _report(node, _text(27.0, env="NCCL_P2P_DISABLE set by environment to 1.", via="SHM/direct/direct"))
    j = judge(rep.results, node.machine)[-1]
    assert "staged through host memory" in j.bound  # the staged path, not a NIC, not one PCIe link
    fs = diagnose(rep).findings
    assert fs[0].code == "CAUSE-NCCL-NO-P2P" and "NCCL_P2P_DISABLE=1" in fs[0].title
    assert not [f for f in fs if f.code in ("CAUSE-NO-PEER-MEMORY", "CAUSE-GPU-NIC-FAR")]


@pytest.mark.parametrize(
    ("env", "via", "channels", "code", "words"),
    [
        ("NCCL_PROTO set by environment to LL", "P2P/CUMEM/read", 2, "CAUSE-NCCL-SETTING", "NCCL_PROTO=LL"),
        (
            "NCCL_MAX_NCHANNELS set by environment to 1.",
            "P2P/CUMEM/read",
            1,
            "CAUSE-NCCL-SETTING",
            "NCCL_MAX_NCHANNELS=1",
        ),
        ("NCCL_SHM_DISABLE set by environment to 1.", "NET/Socket/0", 2, "CAUSE-NCCL-SOCKET-LOCAL", "Socket"),
        ("NCCL_P2P_LEVEL set by environment to LOC", "SHM/direct/direct", 2, "CAUSE-NCCL-NO-P2P", "LOC"),
    ],
)
def test_each_knob_is_named(node, env, via, channels, code, words):
    fs = diagnose(_report(node, _text(20.0, env=env, via=via, channels=channels))).findings
    assert fs[0].code == code and words in fs[0].title


def test_without_the_log_the_hypotheses_and_the_rerun(node):
    fs = diagnose(_report(node, _text(27.0, log=False))).findings
    codes = [f.code for f in fs]
    assert "MEASURE-NCCL-LOG" in codes and "CAUSE-NO-PEER-MEMORY" not in codes
    f = next(f for f in fs if f.code == "MEASURE-NCCL-LOG")
    assert "NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,GRAPH,ENV" in f.next_step


def test_several_ranks_outputs_concatenated(node):
    text = (
        _text(315.0)
        + LOG.format(env="NCCL_DEBUG set by environment to INFO.", via="P2P/CUMEM/read", channels=2).replace(
            "node1", "node1"
        )
        + _text(315.0)
    )
    rs = import_text(text)
    assert len(rs) == 2 and rs[0].params.ranks == 2


def test_hostile_rank_lines_and_rows_are_one_line():
    with pytest.raises(UserInputError):
        import_text(
            HEAD + "#       size         count      type   redop    root     time   algbw   busbw #wrong\n"
            "  8 2 float sum -1 1e999 1 1 0\n"
        )


REAL = sorted((ROOT / "real").glob("*/runs/*nccl*")) if (ROOT / "real").is_dir() else []
EXPECTED = {
    "p2p-disable-all_reduce-info": "CAUSE-NCCL-NO-P2P",
    "p2p-disable-sendrecv-info": "CAUSE-NCCL-NO-P2P",
    "p2p-level-loc-all_gather-info": "CAUSE-NCCL-NO-P2P",
    "proto-ll-all_reduce-info": "CAUSE-NCCL-SETTING",
    "one-channel-all_reduce-info": "CAUSE-NCCL-SETTING",
    "socket-all_reduce-info": "CAUSE-NCCL-SOCKET-LOCAL",
}


@pytest.mark.parametrize("run", REAL, ids=[f"{r.parents[1].name}/{r.name}" for r in REAL])
def test_real_runs_on_one_node(run):
    from gdrdiag.cli.import_cmd import _machine

    bundle = run.parents[1] / "bundle.tar.gz"
    src = run / "result.json" if (run / "result.json").exists() else run / "output.txt"
    if not bundle.exists() or not src.exists():
        pytest.skip("real run without its bundle")
    machine = _machine(bundle)
    rep = Report(machine=machine, results=tuple(import_text(src.read_text(), src.name)))
    fs = diagnose(rep).findings
    codes = [f.code for f in fs]
    assert not {"CAUSE-NO-PEER-MEMORY", "CAUSE-GPU-NIC-FAR"} & set(codes)
    for j in judge(rep.results, machine):
        assert not j.bound_on_nic and (j.bound is None or "NIC" not in j.bound)
    want = next((c for k, c in EXPECTED.items() if run.name.endswith(k)), None)
    if want:
        assert codes[0] == want


TUNING = ROOT / "fixtures" / "imported" / "nccl_all_gather_tuning_h200x2.txt"


def test_log_lines_glued_inside_result_rows_leave_the_rows_whole():
    # captured: NCCL_DEBUG_SUBSYS=...,TUNING prints a line per call, between the pieces of each row
    text = TUNING.read_text()
    assert "-1vm:1365:1365 [0] NCCL INFO AllGather" in text
    rows = import_text(text, TUNING.name)
    assert [(r.params.size_bytes, r.value) for r in rows] == [
        (268435456, 246.12),
        (536870912, 258.01),
        (1073741824, 270.01),
    ]
    facts = rows[0].params.nccl
    assert facts is not None and facts.coll_channels == 24 and facts.version


def test_a_glued_log_line_is_found_by_its_host_and_pid_even_after_a_digit():
    # broadcast's root column is a rank number and a host may begin with a digit: "0" + "0node:..."
    head = HEAD.replace("all_reduce_perf", "broadcast_perf").replace("node1", "0node")
    info = "0node:77:78 [0] NCCL INFO NCCL version 2.28.3+cuda13.0\n"
    glued = "0node:77:77 [0] NCCL INFO Broadcast: 1073741824 Bytes -> Algo RING proto SIMPLE\n"
    table = (
        "#  size  count  type  redop  root  time  algbw  busbw #wrong  time  algbw  busbw #wrong\n"
        f"  1073741824  268435456  float  none  0{glued}"
        f"  3000.0  357.9  357.9  0{glued}"
        "  3001.0  357.8  357.8  0\n"
    )
    rows = import_text(head + info + table, "out.txt")
    assert [(r.params.size_bytes, r.value) for r in rows] == [(1073741824, 357.9)]


def test_a_run_of_glued_pieces_that_never_ends_is_no_row():
    info = "node1:4242:4250 [0] NCCL INFO NCCL version 2.28.3+cuda13.0\n"
    glued = "1" * 50 + "node1:4242:4242 [0] NCCL INFO x\n"
    table = "#  size  count  type  redop  root  time  algbw  busbw #wrong  time  algbw  busbw #wrong\n"
    with pytest.raises(UserInputError):
        import_text(HEAD + info + table + glued * 1000, "out.txt")
