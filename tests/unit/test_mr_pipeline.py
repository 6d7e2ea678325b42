"""The whole mr-bench pipeline on the soft provider: loops, RO A/B, modes, two machines, release."""

from __future__ import annotations

import socket
import threading

import pytest

from gdrdiag.bench import exchange, mr
from gdrdiag.errors import UserInputError
from gdrdiag.hw import verbs as v
from gdrdiag.hw import verbs_soft
from gdrdiag.hw.memory import MemoryKind
from gdrdiag.model.results import Status
from gdrdiag.model.vocabulary import AccessFlags, RelaxedOrdering

PAGEABLE = (MemoryKind.PAGEABLE,)


def soft(**kw):
    base = dict(
        provider="soft", kinds=PAGEABLE, sizes=(4096,), qps=2, iterations=400, repeats=2, timeout_s=5.0
    )
    base.update(kw)
    return mr.MrBenchConfig(**base)


@pytest.fixture(autouse=True)
def no_leaks():
    yield
    assert verbs_soft.live_objects() == {}


def test_bandwidth_loop_moves_verified_bytes():
    (r,) = mr.run(soft(post_list=4))
    assert r.status is Status.OK and r.verified is True and r.provider == "soft"
    assert r.key == "rdma_write_pageable_mr" and r.unit == "Gb/s" and len(r.samples) == 2
    assert r.params.size_bytes == 4096 and r.params.qps == 2 and r.params.landing == "host"
    assert r.metrics.messages_per_run == 2 * 400 and r.metrics.cpu_us_per_msg > 0
    assert "NOT a hardware number" in r.description and "NOT a hardware number" in r.method


def test_sweep_and_offset():
    res = mr.run(soft(sizes=(2, 3, 1 << 16), offset=3, qps=1, iterations=64, repeats=1))
    assert [r.params.size_bytes for r in res] == [2, 3, 1 << 16]
    assert all(r.status is Status.OK and r.verified and r.params.offset_bytes == 3 for r in res)


def test_ro_ab_runs_both_on_the_same_setup():
    res = mr.run(soft(ro=RelaxedOrdering.AB))
    assert [r.params.relaxed_ordering for r in res] == [False, True]
    assert all(r.status is Status.OK and r.verified for r in res)
    assert AccessFlags.RELAXED_ORDERING in res[1].params.access
    assert AccessFlags.RELAXED_ORDERING not in res[0].params.access
    from gdrdiag.diagnose import rdma_rules

    (pair,) = rdma_rules.ro_pairs(res)
    assert pair.verdict.code == "not_judged"


def test_duration_mode_and_write_with_imm():
    (r,) = mr.run(soft(iterations=None, duration=0.05, write_with_imm=True, tx_depth=16, repeats=1))
    assert r.status is Status.OK and r.verified and r.params.write_with_imm is True


def test_latency_and_blocks_and_reg_cost():
    (lat,) = mr.run(soft(iterations=200, qps=1), mode="latency")
    assert lat.status is Status.OK and lat.unit == "us" and lat.metrics.lat_p99_us >= lat.metrics.lat_p50_us
    blocks = mr.run(soft(blocks=500, qps=1, repeats=1), mode="blocks")
    assert [b.params.variant for b in blocks] == ["wr_per_block", "post_list", "coalesced"]
    assert all(b.status is Status.OK and b.verified for b in blocks)
    assert blocks[2].metrics.wrs_per_set == 1 and blocks[0].metrics.wrs_per_set == 500
    reg = mr.run(soft(reg_sizes=(4096, 1 << 20), reg_iterations=3), mode="reg")
    assert [(r.key, r.params.size_bytes) for r in reg] == [
        ("mr_reg_pageable_mr", 4096),
        ("mr_reuse_pageable_mr", 4096),
        ("mr_reg_pageable_mr", 1 << 20),
        ("mr_reuse_pageable_mr", 1 << 20),
    ]
    assert all(r.status is Status.OK for r in reg)
    assert reg[1].metrics.register_each_us > 0 and reg[1].verified


def test_gpu_kinds_and_dmabuf_are_waived_with_the_reason_without_a_gpu():
    from tests.conftest import gpu_absent_reason

    if gpu_absent_reason() is None:
        pytest.skip("a GPU is present")
    res = mr.run(soft(kinds=(MemoryKind.PINNED, MemoryKind.PAGEABLE), reg_paths=("mr", "dmabuf")))
    by = {(r.params.memory, r.params.reg_path): r for r in res}
    assert by[("pinned", "mr")].status is Status.WAIVED
    assert by[("pinned", "mr")].reason.startswith("pinned memory needs a GPU context")
    assert (
        by[("pageable", "dmabuf")].status is Status.WAIVED
        and "device memory" in by[("pageable", "dmabuf")].reason
    )
    assert by[("pageable", "mr")].status is Status.OK


def test_write_without_remote_write_is_an_error_result_with_a_clear_message():
    (r,) = mr.run(soft(access=v.ACCESS_LOCAL_WRITE))
    assert r.status is Status.ERROR
    assert "IBV_WC_REM_ACCESS_ERR" in r.reason and "remote_write" in r.reason


def test_device_limits_are_usage_errors():
    tiny = v.DeviceLimits(max_qp=4, max_qp_wr=32, max_cqe=4096, max_mr_size=1 << 20, max_sge=1)
    with pytest.raises(UserInputError, match="allows at most 4 QPs"):
        mr.run(soft(qps=3, soft_options={"limits": tiny}))
    with pytest.raises(UserInputError, match="at most 32 WRs"):
        mr.run(soft(qps=1, tx_depth=64, soft_options={"limits": tiny}))
    with pytest.raises(UserInputError, match="max MR size"):
        mr.run(soft(qps=2, tx_depth=32, sizes=(1 << 20,), soft_options={"limits": tiny}))


def test_ctrl_c_mid_run_releases_everything():
    calls = {"n": 0}

    def tick():
        calls["n"] += 1
        if calls["n"] == 5:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        mr.run(soft(iterations=100_000), tick=tick)
    # no_leaks checks the soft objects; the buffers are owned by the same ExitStack.


def test_loop_cost_reports_the_bound():
    res = mr.loop_cost(duration=0.05, repeats=1, post_lists=(1, 8))
    assert [r.params.post_list for r in res] == [1, 8]
    for r in res:
        assert r.provider == "soft" and r.value > 0
        assert r.metrics.min_msg_bytes_400g == pytest.approx(400e9 / 8 / r.value)
        assert r.metrics.loop_us_per_post is not None and r.metrics.provider_us_per_wr is not None


# -- two machines over TCP on 127.0.0.1 (both ends in this process: the soft wire is in-process) ---------


def _serve_in_thread(cfg, listener, out, **serve_options):
    def target():
        try:
            out["server"] = mr.serve(cfg, listener=listener, accept_timeout_s=5.0, **serve_options)
        except BaseException as exc:  # noqa: BLE001 - handed to the test
            out["server_error"] = exc

    t = threading.Thread(target=target, daemon=True)
    t.start()
    return t


def test_two_machines_client_server_verified():
    out = {}
    with exchange.Listener(0, "127.0.0.1") as lst:
        t = _serve_in_thread(soft(), lst, out)
        (c,) = mr.run_client(soft(ro=RelaxedOrdering.ON), "127.0.0.1", port=lst.port)
        t.join(10)
    assert not t.is_alive() and "server_error" not in out
    (s,) = out["server"]
    assert (
        c.status is Status.OK
        and c.verified
        and c.params.topology == "two_machine"
        and c.params.relaxed_ordering
    )
    assert s.status is Status.OK and s.verified and s.params.role == "server" and s.metrics.verified_runs == 2
    assert s.params.relaxed_ordering is True  # the server registered its MR with RO as the client asked


def test_unreachable_peer_is_a_clear_usage_error():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # nothing listens here once closed
    with pytest.raises(UserInputError, match=f"cannot reach peer 127.0.0.1:{port}"):
        mr.run_client(soft(), "127.0.0.1", port=port, connect_timeout_s=1.0)


def test_server_waits_a_bounded_time_for_a_client():
    with exchange.Listener(0, "127.0.0.1") as lst:
        with pytest.raises(exchange.PeerError, match="no client connected"):
            mr.serve(soft(), listener=lst, accept_timeout_s=0.2)


def test_peer_dying_mid_run_ends_with_a_clear_error():
    """A server that vanishes after the handshake: the client errors out, bounded, and releases."""
    with exchange.Listener(0, "127.0.0.1") as lst:

        def fake_server():
            with lst.accept(5.0, 5.0) as ch:
                hello = ch.recv("hello")
                # Offer plausible QPs and an MR, then die without answering "run".
                ch.send(
                    "welcome",
                    qps=hello["qps"],
                    mr={"addr": 4096, "rkey": 1, "length": 1 << 20},
                    memory="pageable",
                    reg_path="mr",
                )

        t = threading.Thread(target=fake_server, daemon=True)
        t.start()
        # The server's close is a FIN, or an RST when the client's next message arrived unread
        # (RFC 1122 4.2.2.13): both end the run with the same one-line PeerError.
        with pytest.raises(exchange.PeerError, match="closed the connection|lost the connection.*reset"):
            mr.run_client(soft(timeout_s=2.0), "127.0.0.1", port=lst.port)
        t.join(5)


def test_garbage_peer_is_rejected():
    with exchange.Listener(0, "127.0.0.1") as lst:

        def garbage():
            conn, _ = lst.sock.accept()
            conn.sendall(b"\xff\xff\xff\xffHTTP/1.1 400")
            conn.close()

        t = threading.Thread(target=garbage, daemon=True)
        t.start()
        with pytest.raises(exchange.PeerError, match="is it a gdrdiag"):
            mr.run_client(soft(), "127.0.0.1", port=lst.port)
        t.join(5)


def test_client_dying_is_seen_by_the_server():
    out = {}
    with exchange.Listener(0, "127.0.0.1") as lst:
        t = _serve_in_thread(soft(timeout_s=2.0), lst, out)
        with exchange.connect("127.0.0.1", lst.port, timeout_s=2.0) as ch:
            ch.send(
                "hello",
                protocol=exchange.PROTOCOL,
                params={"qps": 1, "slot": 4096, "run_timeout_s": 2.0},
                qps=[
                    {
                        "qp_num": 0x999,
                        "psn": 1,
                        "lid": 1,
                        "gid": "fe80:0000:0000:0000:0000:0000:0000:0001",
                        "mtu": 4096,
                    }
                ],
            )
            ch.recv("welcome")
        t.join(10)
    assert "closed the connection" in str(out.get("server_error"))


def test_two_machine_mode_refuses_multi_point_runs():
    with pytest.raises(UserInputError, match="one size"):
        mr.run_client(soft(sizes=(64, 128)), "127.0.0.1", port=1)


# -- the server's own limits rule (a peer must not choose the server's memory or timeouts) ----


def _hostile_hello(lst, params, n_qps):
    """Connect like a client and send a hello with ``params``; the server's answer (an error raises)."""
    with exchange.connect("127.0.0.1", lst.port, timeout_s=5.0, io_timeout_s=5.0) as ch:
        qp = {"qp_num": 1, "psn": 1, "lid": 0, "gid": "00" * 16, "mtu": 1024}
        ch.send("hello", protocol=exchange.PROTOCOL, qps=[qp] * n_qps, params=params)
        return ch.recv(("welcome", "error"))


@pytest.mark.parametrize(
    ("params", "n_qps", "words"),
    [
        ({"qps": 1, "slot": 1 << 31, "ro": False}, 1, "slots; this server allows up to 1048576"),
        ({"qps": 65, "slot": 4096, "ro": False}, 65, "this server takes 1..64"),
    ],
)
def test_a_client_cannot_choose_the_servers_memory(params, n_qps, words):
    out = {}
    with exchange.Listener(0, "127.0.0.1") as lst:
        t = _serve_in_thread(soft(mr_size=1 << 20), lst, out)
        with pytest.raises(exchange.PeerError, match=words):
            _hostile_hello(lst, params, n_qps)
        t.join(10)
    assert isinstance(out.get("server_error"), exchange.PeerError) and words in str(out["server_error"])


def test_the_server_listens_on_loopback_unless_told():
    with exchange.Listener(0) as lst:
        assert lst.sock.getsockname()[0] == "127.0.0.1"
