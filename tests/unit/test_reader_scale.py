"""Every reader of outside input costs about linearly in the size of what it reads.

Each reader gets the same kind of input at three sizes (1x, 10x, 100x rows) and its cost is the
number of Python lines, calls and C calls it runs (``sys.settrace`` and ``sys.setprofile``
events), not the wall clock, so a busy machine cannot flip the verdict. Linear cost grows about
10x per step (less where a fixed cost dominates); a reader that compares every row with every
other grows about 100x per step and fails the bounds below. The sizes stay well under the readers'
own limits (``MAX_IMPORT_RESULTS``, ``MAX_MESSAGE``, ``MAX_RECORD_BYTES``).
"""

from __future__ import annotations

import json
import socket
import struct
import sys
import threading
from pathlib import Path
from typing import Any, Callable

import pytest

from gdrdiag.bench import exchange
from gdrdiag.importers import import_text
from gdrdiag.model.report import Report
from gdrdiag.node_record import load_records, record_line

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "imported"
SCALES = (1, 10, 100)


def cost(fn: Callable[[], Any]) -> int:
    """How many trace and profile events ``fn()`` raises: Python lines and calls, and C calls.

    ``fn`` runs once untraced first, so imports and caches filled on a first call are not counted.
    Work inside one C call (``json.loads`` of a whole document) counts as one event.
    """
    fn()
    n = 0

    def tracer(frame, event, arg):
        nonlocal n
        n += 1
        return tracer

    def profiler(frame, event, arg):
        nonlocal n
        if event == "c_call":
            n += 1

    old_trace, old_profile = sys.gettrace(), sys.getprofile()
    sys.settrace(tracer)
    sys.setprofile(profiler)
    try:
        fn()
    finally:
        sys.setprofile(old_profile)
        sys.settrace(old_trace)
    return n


# ---- inputs of n rows, one builder per format ---------------------------------------------------


def _perftest_text(n: int) -> str:
    head, _, _ = (FIXTURES / "ib_write_bw_host.txt").read_text().partition(" 1048576    5000")
    rows = "".join(
        f" {4096 * (i + 1)}    5000             396.40             395.62  \t\t   0.047162\n"
        for i in range(n)
    )
    return head + rows + "-" * 87 + "\n"


def _perftest_json(n: int) -> str:
    """perftest --out_json holds one result; its size grows with the fields around it."""
    data = json.loads((FIXTURES / "perftest_write.json").read_text())
    data["test_info"].update({f"extra_{i}": "OFF" for i in range(10 * n)})
    return json.dumps(data)


def _nvbandwidth(n: int) -> str:
    data = json.loads((FIXTURES / "nvbandwidth.json").read_text())
    case = data["nvbandwidth"]["testcases"][0]
    data["nvbandwidth"]["testcases"] = [dict(case, name=f"{case['name']}") for _ in range(n)]
    return json.dumps(data)


def _bandwidth_test(n: int) -> str:
    text = (FIXTURES / "bandwidthTest_mbs_range.txt").read_text()
    head, _, tail = text.partition("   1048576\t\t\t6342.8\n")
    tail = tail[tail.index("\n\n") :]
    rows = "".join(f"   {1048576 * (i + 1)}\t\t\t6342.8\n" for i in range(n))
    return head + rows + tail


def _p2p_test(n: int) -> str:
    """p2pBandwidthLatencyTest prints GPU x GPU matrices: n rows of cells is about sqrt(n) GPUs."""
    gpus = {1: 2, 10: 6, 100: 20}[n]
    out = ["[P2P (Peer-to-Peer) GPU Bandwidth Latency Test]"]
    out += [
        f"Device: {i}, NVIDIA H100 80GB HBM3, pciBusID: {i}, pciDeviceID: 0, pciDomainID:0"
        for i in range(gpus)
    ]
    out += [f"Device={i} CAN Access Peer Device={j}" for i in range(gpus) for j in range(gpus) if i != j]
    head = "   D\\D" + "".join(f"{j:>7}" for j in range(gpus))
    for title in (
        "Unidirectional P2P=Disabled Bandwidth Matrix (GB/s)",
        "Unidirectional P2P=Enabled Bandwidth (P2P Writes) Matrix (GB/s)",
        "Bidirectional P2P=Disabled Bandwidth Matrix (GB/s)",
        "Bidirectional P2P=Enabled Bandwidth Matrix (GB/s)",
    ):
        out += [title, head]
        out += [
            f"{i:>6} " + " ".join("2500.00" if i == j else "41.37" for j in range(gpus)) for i in range(gpus)
        ]
    return "\n".join(out) + "\n"


def _nccl_tests_text(n: int) -> str:
    text = (FIXTURES / "nccl_all_reduce_8gpu.txt").read_text()
    lines = text.splitlines(keepends=True)
    at = next(i for i, ln in enumerate(lines) if ln.strip().startswith("8 "))
    end = next(i for i, ln in enumerate(lines) if ln.startswith("# Out of bounds"))
    row = "{:>12} {:>13}     float     sum      -1" + "    24.00    0.00    0.00       0" * 2 + "\n"
    rows = [row.format(8 * (i + 1), 2 * (i + 1)) for i in range(n)]
    return "".join(lines[:at] + rows + lines[end:])


def _nccl_tests_json(n: int) -> str:
    data = json.loads((FIXTURES / "nccl_reduce_scatter.json").read_text())
    one = data["results"][0]
    data["results"] = [dict(one, size=4 * (i + 1), count=i + 1) for i in range(n)]
    return json.dumps(data)


def _nccl_log(n: int) -> str:
    text = (FIXTURES / "nccl_info_log_h200x2.txt").read_text()
    extra = "".join(
        f"vm:1977:1988 [0] NCCL INFO Channel {i % 64:02d}/0 : 0[0] -> 1[1] via P2P/CUMEM/read\n"
        f"vm:1977:1988 [0] NCCL INFO comm 0x557e0ae6a5d0 rank 0 nRanks 2 nNodes 1 localRanks 2 "
        f"localRank 0 MNNVL 0\n"
        for i in range(5 * n)
    )
    return text + extra


def _ucx_perftest(n: int) -> str:
    """ucx_perftest's test box and Final line, 5n runs (a batch file's output)."""
    run = (
        "| API:          protocol layer |\n| Test:         tag match bandwidth |\n"
        "| Send memory:  cuda |\n| Recv memory:  cuda |\n| Message size: 1048576 |\n| Window size:  32 |\n"
        "|   overhead (usec)   |   bandwidth (MB/s)  |  message rate (msg/s) |\n"
        "Final:   1000   1.801   6.023   6.023   166040.69  166040.69   166041   166041\n"
    )
    return run * (5 * n)


IMPORTS = {
    "perftest-text": _perftest_text,
    "perftest-json": _perftest_json,
    "nvbandwidth-json": _nvbandwidth,
    "bandwidthTest-text": _bandwidth_test,
    "p2pBandwidthLatencyTest-text": _p2p_test,
    "nccl-tests-text": _nccl_tests_text,
    "nccl-tests-json": _nccl_tests_json,
    "nccl-log-text": _nccl_log,
    "ucx_perftest-text": _ucx_perftest,
}


def _report(n: int) -> Report:
    results = import_text(_nccl_tests_json(5 * n), "scale")
    return Report(tool_version="scale", command="import", results=tuple(results))


def _assert_linear(costs: dict[int, int]) -> None:
    """10x the rows cost at most 30x (linear is <= 10x, quadratic about 100x); 100x at most 300x."""
    c1, c10, c100 = (costs[s] for s in SCALES)
    assert c10 <= 30 * c1 and c100 <= 30 * c10 and c100 <= 300 * c1, costs


# ---- the readers ---------------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", sorted(IMPORTS))
def test_each_importer_costs_linearly_in_its_rows(fmt):
    texts = {s: IMPORTS[fmt](s) for s in SCALES}
    counts = {s: len(import_text(texts[s], "scale")) for s in SCALES}
    one = fmt in ("perftest-json", "nccl-log-text")  # one result per file, however long the file
    assert counts[1] >= 1 and (one or counts[100] >= 20 * counts[1]), counts
    _assert_linear({s: cost(lambda t=texts[s]: import_text(t, "scale")) for s in SCALES})


def test_a_saved_report_reads_back_in_linear_cost():
    texts = {s: _report(s).to_json() for s in SCALES}
    _assert_linear({s: cost(lambda t=texts[s]: Report.from_json(t)) for s in SCALES})


def test_a_folder_of_node_records_loads_in_linear_cost(tmp_path):
    line = record_line(_report(1), "n0", 0)
    costs = {}
    for s in SCALES:
        path = tmp_path / f"{s}.jsonl"
        path.write_text("".join(line.replace('"n0"', f'"n{i}"', 1) + "\n" for i in range(2 * s)))
        assert len(load_records(path).records) == 2 * s
        costs[s] = cost(lambda p=path: load_records(p))
    _assert_linear(costs)


def test_a_hello_with_many_qps_is_received_in_linear_cost():
    qp = {"qp_num": 1, "psn": 1, "lid": 0, "gid": "00" * 16, "mtu": 1024}
    costs = {}
    for s in SCALES:
        body = json.dumps({"type": "hello", "qps": [qp] * (20 * s), "params": {}}).encode()
        a, b = socket.socketpair()
        with exchange.Channel(a, "scale", 5.0), exchange.Channel(b, "scale", 5.0) as rx:
            sender = threading.Thread(
                target=a.sendall, args=((struct.pack(">I", len(body)) + body) * 2,)
            )  # warm-up, counted
            sender.start()
            costs[s] = cost(lambda rx=rx: rx.recv("hello"))
            sender.join()
    _assert_linear(costs)


def test_the_bounds_catch_a_reader_that_compares_every_row_with_every_other():
    def quadratic(rows: list[int]) -> int:
        seen = 0
        for i, row in enumerate(rows):
            for other in rows[:i]:
                seen += other == row
        return seen

    def linear(rows: list[int]) -> int:
        return len(set(rows))

    _assert_linear({s: cost(lambda n=s: linear(list(range(20 * n)))) for s in SCALES})
    with pytest.raises(AssertionError):
        _assert_linear({s: cost(lambda n=s: quadratic(list(range(20 * n)))) for s in SCALES})
