"""The two-machine server against a hostile or broken peer: every peer-chosen quantity is
bounded by the server's own limits before any allocation, and a stalled or hostile first connection
does not keep the real client out. Both ends run in this process over 127.0.0.1 (soft provider)."""

from __future__ import annotations

import socket
import threading

import pytest

from gdrdiag.bench import exchange, mr, mr_twohost
from gdrdiag.model.results import Status

from .test_mr_pipeline import _serve_in_thread, no_leaks, soft  # noqa: F401 - the fixture is used

QP = {"qp_num": 1, "psn": 1, "lid": 0, "gid": "00" * 16, "mtu": 1024}


class _Buffer:
    def __init__(self, nbytes):
        import numpy as np

        self.data = np.zeros(nbytes, dtype=np.uint8)

    def read_array(self, n, offset):
        return self.data[offset : offset + n]


class _Dst:
    def __init__(self, nbytes):
        self.buffer = _Buffer(nbytes)


@pytest.fixture
def no_pattern(monkeypatch):
    """Fails the test if a pattern (the allocation a peer's length sizes) is built."""

    def refuse(n, seed=0):
        raise AssertionError(f"pattern({n}, seed={seed}) built before the region was bounded")

    monkeypatch.setattr(mr_twohost, "pattern", refuse)


@pytest.mark.parametrize(
    ("region", "words"),
    [
        ({"offset": 0, "length": 8 << 30, "seed": 1}, "of 8589934592 bytes; a region is 1..4096"),
        ({"offset": 0, "length": -5, "seed": 1}, "of -5 bytes"),
        ({"offset": 0, "length": 0, "seed": 1}, "of 0 bytes"),
        ({"offset": 0, "length": 4096, "seed": 1 << 70}, "seed"),
        ({"offset": 0, "length": 4096, "seed": -1}, "seed"),
        ({"offset": 0, "length": 1.5e9, "seed": 1}, "malformed"),
        ({"offset": 0, "length": True, "seed": 1}, "malformed"),
    ],
)
def test_a_peers_region_is_bounded_before_any_pattern_is_built(no_pattern, region, words):
    """M4 and the lows: a negative length was "verified ok", 8 GiB a MemoryError, 2^70 a crash."""
    bad = mr_twohost.verify_regions(_Dst(4096), [region], 4096, 1)
    assert bad is not None and words in bad


def test_more_regions_than_qps_are_refused_before_any_pattern(no_pattern):
    regions = [{"offset": i * 4096, "length": 4096, "seed": 1} for i in range(40)]
    assert "40 regions for 1 QPs" in mr_twohost.verify_regions(_Dst(4096), regions, 4096, 1)


@pytest.mark.parametrize(
    ("params", "n_qps", "mr_size", "words"),
    [
        ({"qps": 6, "slot": 1 << 30}, 6, None, "registers at most 1073741824"),  # M5: 6 x 1 GiB
        ({"qps": 64, "slot": 1 << 20}, 64, 1 << 20, "registers at most 1048576"),  # M5: --mr-size 1M
        ({"qps": float("inf"), "slot": 4096}, 1, None, "must be integers"),
        ({"qps": 1, "slot": "4096"}, 1, None, "must be integers"),
        ({"qps": 1, "slot": 4096, "run_timeout_s": 1e9}, 1, None, "this server waits at most 8 s"),
    ],
)
def test_a_hello_past_the_servers_own_limits_is_refused_before_allocation(params, n_qps, mr_size, words):
    hello = {"type": "hello", "protocol": exchange.PROTOCOL, "qps": [QP] * n_qps, "params": params}
    with pytest.raises(exchange.PeerError, match=words):
        mr_twohost.check_hello(hello, soft(timeout_s=3.0, mr_size=mr_size, qps=1))


def test_a_bad_qp_info_is_a_peer_error_not_a_traceback():
    hello = {
        "protocol": exchange.PROTOCOL,
        "qps": [{**QP, "qp_num": float("inf")}],
        "params": {"qps": 1, "slot": 4096},
    }
    with pytest.raises(exchange.PeerError, match="malformed hello"):
        mr_twohost.check_hello(hello, soft())


@pytest.mark.parametrize(
    ("asked", "expected"),
    [(None, 8.0), ("soon", 8.0), (float("nan"), 8.0), (float("inf"), 8.0), (-1, 8.0), (2.0, 8.0)],
)
def test_the_server_waits_its_own_time_whatever_the_client_says(asked, expected):
    assert mr_twohost.server_run_timeout(asked, 3.0) == expected


def test_a_client_asking_for_longer_runs_is_refused_with_the_figures():
    """The peer's run_timeout_s used to stretch the server's wait by up to 600 s."""
    with pytest.raises(exchange.PeerError, match="runs may take 20 s; this server waits at most 8 s"):
        mr_twohost.server_run_timeout(20.0, 3.0)
    assert mr_twohost.server_run_timeout(20.0, 3.0, own_duration_s=12.0) == 20.0


def test_a_non_ascii_mac_is_refused_not_a_crash():
    assert exchange._proves({"mac": "é" * 64}, "a" * 64) is False
    assert exchange._proves({"mac": "a" * 64}, "a" * 64) is True


def _real_client(lst, out):
    try:
        out["client"] = mr.run_client(soft(timeout_s=3.0), "127.0.0.1", port=lst.port)
    except BaseException as exc:  # noqa: BLE001 - handed to the test
        out["client_error"] = exc


@pytest.mark.parametrize("first", ["stalled", "hostile_hello", "garbage"])
def test_a_stalled_or_hostile_first_connection_does_not_stop_the_real_client(first):
    out = {}
    notes = []
    with exchange.Listener(0, "127.0.0.1") as lst:
        t = _serve_in_thread(soft(timeout_s=3.0), lst, out, progress=notes.append)
        bad = socket.create_connection(("127.0.0.1", lst.port))
        try:
            if first == "hostile_hello":
                ch = exchange.Channel(bad, "hostile", 3.0)
                ch.send("hello", protocol=exchange.PROTOCOL, qps=[QP] * 6, params={"qps": 6, "slot": 1 << 30})
            elif first == "garbage":
                bad.sendall(b"\xff\xff\xff\xffHTTP/1.1 400")
            c = threading.Thread(target=_real_client, args=(lst, out), daemon=True)
            c.start()
            c.join(20)
            t.join(20)
        finally:
            bad.close()
    assert "client_error" not in out, out.get("client_error")
    assert "server_error" not in out, out.get("server_error")
    (s,) = out["server"]
    assert s.status is Status.OK and s.metrics.verified_runs == 2
    if first != "stalled":
        assert any(n.startswith("refused ") for n in notes), notes


def test_no_client_within_the_wait_names_the_last_refusal():
    out = {}
    with exchange.Listener(0, "127.0.0.1") as lst:
        t = threading.Thread(
            target=lambda: out.setdefault(
                "err", _catch(lambda: mr.serve(soft(), listener=lst, accept_timeout_s=1.0))
            )
        )
        t.start()
        with exchange.connect("127.0.0.1", lst.port, timeout_s=2.0, io_timeout_s=2.0) as ch:
            ch.send("hello", protocol="other/9", qps=[], params={})
            with pytest.raises(exchange.PeerError, match="we speak"):
                ch.recv("welcome")
        t.join(10)
    assert "no client connected" in str(out["err"]) and "we speak" in str(out["err"])


def _catch(fn):
    try:
        fn()
    except exchange.PeerError as exc:
        return exc
    return None
