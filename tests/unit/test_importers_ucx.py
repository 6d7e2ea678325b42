"""ucx_perftest output -> results, and the UCX cause rules, on the real outputs of tests/real/h200x2-1128d.

The outputs there are raw (server and client in one terminal, ``UCX_PROTO_INFO=y`` tables where the
run set it); these tests pin what the importer reads from them and what the rules make of it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from gdrdiag.errors import UserInputError
from gdrdiag.importers import detect, import_text
from gdrdiag.importers.ucx_perftest import route_facts
from gdrdiag.model.imported_path import Flow, PathKind
from gdrdiag.model.vocabulary import MemoryKind
from tests.real.corpus import RealRun, judged, runs

RUNS = Path(__file__).resolve().parents[1] / "real" / "h200x2-1128d" / "runs"


def _text(run: str) -> str:
    return (RUNS / run / "output.txt").read_text()


def _run(name: str) -> RealRun:
    return next(r for r in runs() if r.machine == "h200x2-1128d" and r.name == name)


def test_a_gpu_to_gpu_run_is_one_peer_row_sender_gpu_1_receiver_gpu_0():
    text = _text("ucx-tag_bw-cuda-64M-info")
    assert detect(text) == "ucx_perftest-text"
    (r,) = import_text(text, "out.txt")
    p = r.params
    assert (p.tool, p.test, p.size_bytes) == ("ucx_perftest", "tag_bw", 64 << 20)
    assert (p.path_kind, p.flow, p.memory, p.gpu, p.peer_gpu) == (
        PathKind.GPU_GPU,
        Flow.PEER,
        MemoryKind.DEVICE,
        1,
        0,
    )
    # the Final line's overall bandwidth, 365322.69 "MB/s" = MiB/s, in GB/s
    assert r.unit == "GB/s" and r.value == pytest.approx(365322.69 * 1048576 / 1e9)
    assert p.ucx is not None and p.ucx.proto_info and p.ucx.cuda_ipc and not p.ucx.staged
    assert p.peer_access is True


def test_the_protocol_tables_show_the_staged_and_the_tcp_routes():
    staged = route_facts(_text("fault-ucx-no-cuda-ipc-tag_bw-cuda-64M-info").splitlines())
    assert staged.proto_info and staged.staged and not staged.cuda_ipc and not staged.tcp
    assert any("frag host" in route for route in staged.routes)
    tcp = route_facts(_text("fault-ucx-tcp-tag_bw-cuda-64M-info").splitlines())
    assert tcp.tcp and not tcp.cuda_ipc
    none = route_facts(_text("ucx-tag_bw-cuda-64M").splitlines())
    assert not none.proto_info


def test_host_rows_latency_rows_and_host_to_host_rows():
    (h2d,) = import_text(_text("ucx-tag_bw-host-cuda-64M-info"))
    assert (h2d.params.path_kind, h2d.params.flow, h2d.params.gpu) == (PathKind.HOST_GPU, Flow.H2D, 0)
    (d2h,) = import_text(_text("ucx-tag_bw-cuda-host-64M-info"))
    assert (d2h.params.flow, d2h.params.gpu) == (Flow.D2H, 1)
    (lat,) = import_text(_text("ucx-tag_lat-cuda-8"))
    assert lat.unit == "us" and lat.value == pytest.approx(8.855)
    (hh,) = import_text(_text("ucx-tag_bw-host-64M-info"))
    assert hh.params.path_kind is None and "host memory to host memory" in (hh.params.path_unknown or "")


def test_the_clients_output_alone_is_kept_and_says_why_it_is_not_judged():
    client = "\n".join(
        ln
        for ln in _text("ucx-tag_bw-cuda-64M").splitlines()
        if not ln.startswith(("|", "+", "Waiting", "Accepted"))
    )
    client = "|   overhead (usec)   |   bandwidth (MB/s)  |  message rate (msg/s) |\n" + client
    (r,) = import_text(client)
    assert r.params.path_kind is None and "test box" in (r.params.path_unknown or "")


def test_thousands_separators_and_several_runs_in_one_output():
    box = (
        "| API:          protocol layer |\n| Test:         tag match bandwidth |\n"
        "| Send memory:  cuda |\n| Recv memory:  cuda |\n| Message size: 1048576 |\n"
    )
    final = "Final:   1,000   1.801   6.023   6.023   166,040.69  166,040.69   166,041   166,041\n"
    rows = import_text(box + final + box + final)
    assert len(rows) == 2 and rows[0].value == pytest.approx(166040.69 * 1048576 / 1e9)


@pytest.mark.parametrize(
    "text",
    [
        "|   bandwidth (MB/s)  |  message rate (msg/s) |\n",  # a header and no Final line
        "|   bandwidth (MB/s)  |  message rate (msg/s) |\nFinal: 1 2 3 4 5 6 7 " + "9" * 60 + "\n",
    ],
)
def test_a_broken_output_is_one_line_error(text):
    with pytest.raises(UserInputError) as exc:
        import_text(text)
    assert "\n" not in str(exc.value)


@pytest.mark.parametrize(
    ("name", "code"),
    [
        ("fault-ucx-no-cuda-ipc-tag_bw-cuda-64M-info", "CAUSE-UCX-NO-CUDA-IPC"),
        ("fault-ucx-tcp-tag_bw-cuda-64M-info", "CAUSE-UCX-NO-CUDA-IPC"),
        ("fault-ucx-no-cuda-ipc-tag_bw-cuda-64M", "MEASURE-UCX-PROTO"),
    ],
)
def test_a_staged_ucx_route_is_named_and_peer_access_advice_is_not_given(name, code):
    from gdrdiag.diagnose import diagnose

    codes = [f.code for f in diagnose(judged(_run(name))).findings]
    assert code in codes
    # enabling peer access is not what fixes a route UCX chose
    assert "PEER-ACCESS-OFF" not in codes


def test_a_healthy_ucx_run_names_no_ucx_cause():
    from gdrdiag.diagnose import diagnose

    for name in ("ucx-tag_bw-cuda-64M", "ucx-tag_bw-cuda-10K-info", "ucx-ucp_put_bw-cuda-64M"):
        codes = {f.code for f in diagnose(judged(_run(name))).findings}
        assert not codes & {"CAUSE-UCX-NO-CUDA-IPC", "MEASURE-UCX-PROTO", "PERF-PATH-SLOW"}, name
