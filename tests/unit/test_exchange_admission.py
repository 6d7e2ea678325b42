"""The two-machine server's admission against connections that never become a client.

Each test runs a real server (:meth:`exchange.Listener.admit`, soft provider) and real sockets on
127.0.0.1: a frame nested past the JSON decoder's recursion limit, or a sender that trickles a
byte a second, must not hold one of the :data:`exchange.MAX_PENDING` slots for longer than the
admission deadline, and a deep frame after admission is one line, not a traceback.
"""

from __future__ import annotations

import json
import socket
import struct
import threading
import time

import pytest

from gdrdiag.bench import exchange

from .test_mr_pipeline import _serve_in_thread, no_leaks, soft  # noqa: F401 - the fixture is used
from .test_twohost_hostile import QP

DEPTH = 100_000  # far past CPython's recursion limit (sys.getrecursionlimit() is 1000 by default)


def _deep_frame() -> bytes:
    body = b"[" * DEPTH + b"]" * DEPTH
    assert len(body) <= exchange.MAX_MESSAGE
    return struct.pack(">I", len(body)) + body


def _admit_in_thread(lst, out, timeout_s, io_timeout_s):
    def target():
        try:
            out["won"] = lst.admit(timeout_s, io_timeout_s, None, lambda hello: hello["who"])
        except BaseException as exc:  # noqa: BLE001 - handed to the test
            out["error"] = exc

    t = threading.Thread(target=target, daemon=True)
    t.start()
    return t


def _hello(port, who, timeout_s=10.0):
    ch = exchange.connect("127.0.0.1", port, timeout_s=timeout_s, io_timeout_s=timeout_s)
    ch.send("hello", who=who)
    return ch


def test_a_deep_frame_is_refused_in_one_line():
    a, b = socket.socketpair()
    with exchange.Channel(a, "deep", 2.0), exchange.Channel(b, "deep", 2.0) as rx:
        a.sendall(_deep_frame())
        with pytest.raises(exchange.PeerError) as err:
            rx.recv("hello")
    assert "nested" in str(err.value) and "\n" not in str(err.value)


def test_nine_deep_frames_then_the_real_client_is_admitted():
    """A deep frame before authentication killed the admission thread with its slot still counted:
    MAX_PENDING of them locked every later client out until the server's wait ended."""
    out = {}
    with exchange.Listener(0, "127.0.0.1") as lst:
        t = _admit_in_thread(lst, out, timeout_s=10.0, io_timeout_s=5.0)
        bad = []
        for _ in range(exchange.MAX_PENDING + 1):
            s = socket.create_connection(("127.0.0.1", lst.port))
            s.sendall(_deep_frame())
            bad.append(s)
        time.sleep(0.5)  # let the server read and refuse them all before the real client comes
        try:
            with _hello(lst.port, "real"):
                t.join(8)
        finally:
            for s in bad:
                s.close()
    assert "error" not in out, out.get("error")
    ch, who = out["won"]
    ch.close()
    assert who == "real"


def test_slow_senders_do_not_hold_the_slots_past_the_admission_deadline():
    """A connection trickling one byte a second used to keep its slot for as long as each message
    took under the per-message timeout, and every handshake message got a fresh one; now the whole
    admission has one deadline, and a client that came while every slot was taken waits in the
    listen backlog instead of being closed."""
    out = {}
    io_timeout_s = 1.5
    stop = threading.Event()
    with exchange.Listener(0, "127.0.0.1") as lst:
        t = _admit_in_thread(lst, out, timeout_s=20.0, io_timeout_s=io_timeout_s)
        slow = [socket.create_connection(("127.0.0.1", lst.port)) for _ in range(exchange.MAX_PENDING)]
        frame = struct.pack(">I", 20) + b'{"type":"hello"}    '

        def trickle():
            for i in range(len(frame)):
                if stop.wait(0.3):
                    return
                for s in slow:
                    try:
                        s.send(frame[i : i + 1])
                    except OSError:
                        pass

        trickler = threading.Thread(target=trickle, daemon=True)
        trickler.start()
        time.sleep(0.3)
        start = time.monotonic()
        try:
            with _hello(lst.port, "real"):
                t.join(10)
        finally:
            stop.set()
            for s in slow:
                s.close()
        took = time.monotonic() - start
    assert "error" not in out, out.get("error")
    ch, who = out["won"]
    ch.close()
    assert who == "real"
    assert took < io_timeout_s + 3.0, took


def test_a_deep_frame_after_admission_is_a_one_line_peer_error():
    out = {}
    with exchange.Listener(0, "127.0.0.1") as lst:
        t = _serve_in_thread(soft(timeout_s=3.0), lst, out)
        with exchange.connect("127.0.0.1", lst.port, timeout_s=3.0, io_timeout_s=3.0) as ch:
            ch.send("hello", protocol=exchange.PROTOCOL, qps=[QP], params={"qps": 1, "slot": 4096})
            ch.recv("welcome")
            ch.sock.sendall(_deep_frame())
            t.join(10)
    err = out.get("server_error")
    assert isinstance(err, exchange.PeerError), err
    assert "nested" in str(err) and "\n" not in str(err)


def test_a_frame_that_is_json_but_not_an_object_is_still_refused():
    a, b = socket.socketpair()
    with exchange.Channel(a, "p", 2.0), exchange.Channel(b, "p", 2.0) as rx:
        body = json.dumps([1, 2]).encode()
        a.sendall(struct.pack(">I", len(body)) + body)
        with pytest.raises(exchange.PeerError, match="malformed"):
            rx.recv("hello")


def test_a_check_that_crashes_frees_its_slot_too():
    """A ``check`` failing with something other than PeerError/ValueError ended the thread before
    its slot was given back; now any failure refuses that connection and frees the slot."""
    out = {}
    notes = []

    def check(hello):
        if hello["who"] != "real":
            raise KeyError("a bug in check")
        return "real"

    with exchange.Listener(0, "127.0.0.1") as lst:
        t = threading.Thread(
            target=lambda: out.setdefault("won", lst.admit(10.0, 5.0, None, check, note=notes.append)),
            daemon=True,
        )
        t.start()
        bad = [_hello(lst.port, f"bad{i}") for i in range(exchange.MAX_PENDING + 1)]
        try:
            with _hello(lst.port, "real"):
                t.join(8)
        finally:
            for ch in bad:
                ch.close()
    ch, who = out["won"]
    ch.close()
    assert who == "real" and any("KeyError" in n for n in notes), notes
