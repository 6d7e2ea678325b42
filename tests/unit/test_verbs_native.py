"""The native provider's ctypes layer, on any machine where the C library builds.

What runs without an RDMA device: the library loads with every symbol and the agreed ABI; the
"no device" paths give one-line NotSupported; argument validation in Python and in C; the C
loop's rules (counts, selective signalling, TX depth, several lanes, samples, duration, Ctrl-C)
over its null provider, which shares the loop body with the real gd_run_bw; and the hand-over
from bench/rdma_loop.py. The provider contract itself is in test_verbs_contract.py (rdma mark).
"""

from __future__ import annotations

import ctypes
import signal
import threading
import time

import pytest

from gdrdiag.bench import rdma_loop
from gdrdiag.errors import NotSupported, UserInputError
from gdrdiag.hw import verbs as v
from gdrdiag.hw import verbs_native as vn
from gdrdiag.hw import verbs_native_lib as vnl
from gdrdiag.hw import verbs_providers

pytestmark = pytest.mark.native


def _no_device() -> bool:
    try:
        vn.list_device_names()
    except NotSupported:
        return True
    return False


needs_no_device = pytest.mark.skipif("not _no_device()", reason="an RDMA device exists here")


def test_library_loads_with_every_symbol_and_the_abi():
    native, why = vnl.availability()
    assert native is not None, why
    assert native.gd_abi_version() == vnl.ABI_VERSION
    for name in vnl._SIGNATURES:
        assert getattr(native, name).restype is ctypes.c_int


def test_struct_sizes_match_the_c_layout():
    native = vnl.lib()
    for i, st in enumerate(vnl._STRUCTS):
        assert native.gd_struct_size(i) == ctypes.sizeof(st), st.__name__
    # And the LP64 sizes themselves, so a change on both sides is noticed in review.
    assert ctypes.sizeof(vnl.Wc) == 40
    assert ctypes.sizeof(vnl.Wr) == 48
    assert ctypes.sizeof(vnl.LaneC) == 32
    assert ctypes.sizeof(vnl.Sample) == 16
    assert ctypes.sizeof(vnl.BwResult) == 14 * 8 + 40 + 8


@needs_no_device
def test_no_device_is_a_one_line_not_supported():
    with pytest.raises(NotSupported) as exc:
        vn.list_device_names()
    assert exc.value.reason.startswith("no RDMA devices") and "\n" not in exc.value.reason
    with pytest.raises(NotSupported) as exc2:
        verbs_providers.open_device("native")
    assert exc2.value.reason.startswith("no RDMA devices") and "\n" not in exc2.value.reason


@needs_no_device
def test_auto_picks_pyverbs_without_a_device_and_says_why():
    provider, why = verbs_providers.provider_choice("auto")
    assert provider == "pyverbs"
    assert "native library built, but no RDMA devices" in why and why.endswith("using pyverbs")


def test_explicit_providers_resolve_to_themselves():
    assert verbs_providers.provider_choice("native") == ("native", "--provider native")
    assert verbs_providers.resolve_provider("soft") == "soft"
    with pytest.raises(UserInputError, match="native"):
        verbs_providers.resolve_provider("nope")


def test_c_open_rejects_a_bad_port_with_a_message():
    native = vnl.lib()
    info, h = vnl.DevInfo(), ctypes.c_void_p()
    err = ctypes.create_string_buffer(256)
    rc = native.gd_open(None, 0, -1, ctypes.byref(info), ctypes.byref(h), err, 256)
    assert rc == 22 and b"port 0 out of range" in err.value and not h.value


def test_c_post_list_rejects_an_empty_list():
    native = vnl.lib()
    h = ctypes.c_void_p()
    err = ctypes.create_string_buffer(256)
    rc = native.gd_wrlist_create((vnl.Wr * 1)(), 0, 0, ctypes.byref(h), err, 256)
    assert rc == 22 and err.value == b"an empty post list" and not h.value


def test_prepared_list_validation_in_python():
    with pytest.raises(UserInputError, match="empty post list"):
        vn.NativePrepared(vnl.lib(), [], 0)
    too_long = v.WriteWR(0, 1, 1 << 32, 1, 1, 1)
    with pytest.raises(UserInputError, match="32 bits"):
        vn.NativePrepared(vnl.lib(), [too_long], 0)
    ok = vn.NativePrepared(vnl.lib(), [v.WriteWR(3, 4096, 64, 1, 8192, 2, True, imm=7)] * 3, 0)
    assert ok.handle and ok.nbytes == 192 and len(ok) == 3
    ok.close()
    ok.close()
    assert ok.handle is None


def test_c_loop_rejects_bad_parameters():
    p = vnl.BwParams()  # all zero: no depth, no signal interval, no amount, no timeout
    r = vnl.BwResult()
    err = ctypes.create_string_buffer(256)
    rc = vnl.lib().gd_null_loop(1, 1, 64, ctypes.byref(p), ctypes.byref(r), None, 0, None, err, 256)
    assert rc == 22 and err.value.startswith(b"bad loop parameters")


def test_loop_parameter_validation_in_python():
    with pytest.raises(UserInputError, match="either"):
        vn.null_loop(lists_total=10, duration=1.0)
    with pytest.raises(UserInputError, match="either"):
        vn.null_loop()
    with pytest.raises(UserInputError, match="TX depth"):
        vn.null_loop(post_list=8, tx_depth=4, lists_total=10)
    with pytest.raises(UserInputError, match="nothing to post"):
        vn.null_loop(lists_total=0)


@pytest.mark.parametrize("lanes,post_list,signal_every", [(1, 1, 1), (1, 4, 3), (3, 16, 2), (2, 1, 100)])
def test_null_loop_counts_every_wr_once(lanes, post_list, signal_every):
    lists = 1000
    r = vn.null_loop(
        lanes=lanes, post_list=post_list, tx_depth=128, signal_every=signal_every, lists_total=lists, size=256
    )
    assert r.messages == lanes * lists * post_list
    assert r.bytes == r.messages * 256
    assert r.posts == lanes * lists
    # One sample per retired signalled list: every signal_every-th list, plus the last one.
    per_lane = lists // signal_every + (1 if lists % signal_every else 0)
    assert len(r.samples) == lanes * per_lane and r.samples_dropped == 0
    times = [t for t, _ in r.samples]
    counts = [c for _, c in r.samples]
    assert times == sorted(times) and counts == sorted(counts) and counts[-1] == r.messages
    assert 0 < r.seconds and r.post_seconds is None


def test_a_signal_interval_that_cannot_fit_the_send_queue_is_refused():
    with pytest.raises(UserInputError, match="would fill before any completion"):
        vn.null_loop(post_list=4, tx_depth=64, signal_every=17, lists_total=100)


def test_null_loop_duration_mode_and_call_timing():
    r = vn.null_loop(duration=0.2, time_calls=True)
    assert 0.2 <= r.seconds < 2.0 and r.messages > 1000
    split = r.per_wr_ns()
    assert split["post_ns_per_wr"] > 0 and split["poll_ns_per_wr"] > 0
    assert split["post_ns_per_wr"] + split["poll_ns_per_wr"] + split["loop_ns_per_wr"] == pytest.approx(
        r.seconds / r.messages * 1e9
    )


def test_ctrl_c_waits_for_the_loop_to_drain_before_raising():
    # A stand-in for a C loop that takes a while to drain after the stop flag: KeyboardInterrupt
    # must reach the caller only after it returned (Thread.join() would not guarantee that on
    # Python <= 3.12, CPython gh-90882), or cleanup would free QPs under the running loop.
    seen = {}

    def loop(stop_ref, err, errlen):
        stop = stop_ref._obj
        while not stop.value:
            time.sleep(0.01)
        time.sleep(0.5)  # draining
        seen["returned"] = time.monotonic()
        return vn.GD_ESTOPPED

    main = threading.main_thread().ident
    timer = threading.Timer(0.2, lambda: signal.pthread_kill(main, signal.SIGINT))
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            vnl.interruptible(loop)
        caught = time.monotonic()
    finally:
        timer.cancel()
    assert "returned" in seen and caught >= seen["returned"]


def test_ctrl_c_stops_the_c_loop_and_raises_after_it_returned():
    main = threading.main_thread().ident
    timer = threading.Timer(0.3, lambda: signal.pthread_kill(main, signal.SIGINT))
    t0 = time.monotonic()
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            vn.null_loop(duration=60.0)
    finally:
        timer.cancel()
    assert time.monotonic() - t0 < 5.0
    for t in threading.enumerate():
        if t.name == "gdrdiag-native-loop":
            t.join(5.0)  # an uninterrupted join is reliable: the C call has returned
            assert not t.is_alive()


class _FakeNativeCQ:
    """A CQ that offers run_bw/run_latency like NativeCQ: rdma_loop must hand the run over."""

    def __init__(self, result):
        self.result = result
        self.calls = []

    def run_bw(self, lanes, **kw):
        self.calls.append(kw)
        return self.result

    def run_latency(self, qp, prepared, **kw):
        self.calls.append(kw)
        return self.result


def _loop_result(**kw):
    base = dict(
        messages=100,
        bytes=6400,
        posts=100,
        seconds=0.5,
        cpu_seconds=0.4,
        post_seconds=None,
        poll_seconds=None,
        polls=10,
        empty_polls=1,
        samples=(),
        samples_dropped=0,
    )
    base.update(kw)
    return vnl.NativeLoopResult(**base)


class _StubQP:
    def prepare(self, wrs):
        class P:
            def __init__(self, w):
                self.wrs = tuple(w)

            def __len__(self):
                return len(self.wrs)

        return P(wrs)


def test_rdma_loop_hands_bw_runs_to_the_provider_loop():
    cq = _FakeNativeCQ(_loop_result(post_seconds=0.1, poll_seconds=0.2))
    wr = v.WriteWR(0, 4096, 64, 1, 8192, 2)
    lanes = rdma_loop.build_lanes([_StubQP()], [[wr, wr]])
    ticks = []
    out = rdma_loop.run_bw(
        lanes, cq, tx_depth=8, signal_every=3, lists_total=50, tick=lambda: ticks.append(1)
    )
    assert cq.calls == [
        dict(tx_depth=8, signal_every=3, lists_total=50, duration=None, timeout_s=10.0, recv=None)
    ]
    assert (out.messages, out.bytes, out.posts, out.seconds) == (100, 6400, 100, 0.5)
    assert out.native["post_ns_per_wr"] == pytest.approx(1e6) and ticks == [1]


def test_rdma_loop_checks_arguments_before_handing_over():
    cq = _FakeNativeCQ(_loop_result())
    lanes = rdma_loop.build_lanes([_StubQP()], [[v.WriteWR(0, 4096, 64, 1, 8192, 2)] * 9])
    with pytest.raises(UserInputError, match="TX depth"):
        rdma_loop.run_bw(lanes, cq, tx_depth=8, signal_every=1, lists_total=5)
    assert cq.calls == []


def test_rdma_loop_latency_uses_the_c_samples():
    cq = _FakeNativeCQ(_loop_result(messages=3, latencies=(1e-6, 2e-6, 3e-6)))
    samples, out = rdma_loop.run_latency(_StubQP(), cq, v.WriteWR(0, 4096, 64, 1, 8192, 2), iterations=3)
    assert samples == [1e-6, 2e-6, 3e-6] and out.messages == 3


def test_native_timeout_becomes_the_loop_timeout():
    class TimingOut(_FakeNativeCQ):
        def run_bw(self, lanes, **kw):
            raise vnl.LoopTimeout("no RDMA completion for 0.2 s with 4 WRs outstanding")

    lanes = rdma_loop.build_lanes([_StubQP()], [[v.WriteWR(0, 4096, 64, 1, 8192, 2)]])
    with pytest.raises(rdma_loop.LoopTimeout, match="4 WRs outstanding"):
        rdma_loop.run_bw(lanes, TimingOut(None), tx_depth=8, signal_every=1, lists_total=5)


def test_gid_text_round_trip():
    raw = bytes(range(16))
    text = vn._gid_text(raw)
    assert text == "0001:0203:0405:0607:0809:0a0b:0c0d:0e0f"
    assert vn._gid_bytes(text) == raw
    assert vn._gid_bytes("0000:0000:0000:0000:0000:0000:0000:0000") is None and vn._gid_bytes("") is None
