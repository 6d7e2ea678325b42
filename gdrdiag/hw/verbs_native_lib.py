"""The C side of the native provider: native/verbs_loop.c's ABI, loading it, its errors and results.

The structures and signatures must match the C file; the library is the one scripts/setup.sh built.

hw/verbs_native.py builds the provider objects on top of this; nothing else loads the library.
"""

from __future__ import annotations

import ctypes
import errno
import threading
from dataclasses import dataclass
from typing import Any, Callable, Optional

from gdrdiag.errors import GdrdiagError, HardwareError, NotSupported, UserInputError
from gdrdiag.hw import verbs as v
from gdrdiag.hw import verbs_pyverbs
from gdrdiag.hw.native_lib import CachedLoad, Loaded, declare, open_library

ABI_VERSION = 2


LIB_NAME = "libgdr_verbs.so"


GD_ECOMPLETION = 1001


GD_ETIMEDOUT = 1002


GD_ESTOPPED = 1003


GD_F_SIGNALED = 1


GD_F_IMM = 2


GD_LOOP_TIME_CALLS = 1


ERRLEN = 512


#: Samples kept per run (one per retired signalled list); the rest are counted, not kept.
MAX_SAMPLES = 1 << 20

_U32 = ctypes.c_uint32
_U64 = ctypes.c_uint64
_PU32 = ctypes.POINTER(ctypes.c_uint32)


class DevInfo(ctypes.Structure):
    """``struct gd_dev_info``."""

    _fields_ = [
        ("name", ctypes.c_char * 64),
        ("port", ctypes.c_uint32),
        ("phys_port_cnt", ctypes.c_uint32),
        ("state", ctypes.c_uint32),
        ("lid", ctypes.c_uint32),
        ("link_layer", ctypes.c_uint32),
        ("active_mtu", ctypes.c_uint32),
        ("max_msg_sz", ctypes.c_uint32),
        ("gid_tbl_len", ctypes.c_uint32),
        ("gid_index", ctypes.c_int32),
        ("gid_type", ctypes.c_uint32),
        ("gid", ctypes.c_uint8 * 16),
        ("max_qp", ctypes.c_uint32),
        ("max_qp_wr", ctypes.c_uint32),
        ("max_cqe", ctypes.c_uint32),
        ("max_sge", ctypes.c_uint32),
        ("max_mr_size", ctypes.c_uint64),
    ]


class Wc(ctypes.Structure):
    """``struct gd_wc``: a flattened ``ibv_wc`` (imm in host order)."""

    _fields_ = [
        ("wr_id", ctypes.c_uint64),
        ("status", ctypes.c_uint32),
        ("opcode", ctypes.c_uint32),
        ("byte_len", ctypes.c_uint32),
        ("qp_num", ctypes.c_uint32),
        ("imm", ctypes.c_uint32),
        ("wc_flags", ctypes.c_uint32),
        ("vendor_err", ctypes.c_uint32),
        ("pad", ctypes.c_uint32),
    ]


class Wr(ctypes.Structure):
    """``struct gd_wr``: one RDMA WRITE as Python describes it."""

    _fields_ = [
        ("wr_id", ctypes.c_uint64),
        ("local_addr", ctypes.c_uint64),
        ("remote_addr", ctypes.c_uint64),
        ("length", ctypes.c_uint32),
        ("lkey", ctypes.c_uint32),
        ("rkey", ctypes.c_uint32),
        ("flags", ctypes.c_uint32),
        ("imm", ctypes.c_uint32),
        ("pad", ctypes.c_uint32),
    ]


class LaneC(ctypes.Structure):
    """``struct gd_lane``."""

    _fields_ = [
        ("qp", ctypes.c_void_p),
        ("plain", ctypes.POINTER(ctypes.c_void_p)),
        ("signaled", ctypes.POINTER(ctypes.c_void_p)),
        ("nlists", ctypes.c_uint32),
        ("pad", ctypes.c_uint32),
    ]


class BwParams(ctypes.Structure):
    """``struct gd_bw_params``."""

    _fields_ = [
        ("tx_depth", ctypes.c_uint32),
        ("signal_every", ctypes.c_uint32),
        ("lists_total", ctypes.c_uint64),
        ("duration_ns", ctypes.c_uint64),
        ("timeout_ns", ctypes.c_uint64),
        ("flags", ctypes.c_uint32),
        ("n_resp", ctypes.c_uint32),
        ("recv_cq", ctypes.c_void_p),
        ("resp_qps", ctypes.POINTER(ctypes.c_void_p)),
        ("resp_qpns", ctypes.POINTER(ctypes.c_uint32)),
        ("recv_addr", ctypes.c_uint64),
        ("recv_lkey", ctypes.c_uint32),
        ("pad", ctypes.c_uint32),
    ]


class Sample(ctypes.Structure):
    """``struct gd_sample``: a retired signalled list: when, and WRs completed so far."""

    _fields_ = [("t_ns", ctypes.c_uint64), ("completed", ctypes.c_uint64)]


class BwResult(ctypes.Structure):
    """``struct gd_bw_result``."""

    _fields_ = [
        ("messages", ctypes.c_uint64),
        ("bytes", ctypes.c_uint64),
        ("posts", ctypes.c_uint64),
        ("t_start_ns", ctypes.c_uint64),
        ("t_end_ns", ctypes.c_uint64),
        ("cpu_ns", ctypes.c_uint64),
        ("post_ns", ctypes.c_uint64),
        ("poll_ns", ctypes.c_uint64),
        ("polls", ctypes.c_uint64),
        ("empty_polls", ctypes.c_uint64),
        ("recv_reposted", ctypes.c_uint64),
        ("n_samples", ctypes.c_uint64),
        ("samples_dropped", ctypes.c_uint64),
        ("outstanding", ctypes.c_uint64),
        ("bad_wc", Wc),
        ("bad_wc_is_recv", ctypes.c_int32),
        ("pad", ctypes.c_int32),
    ]


_P = ctypes.c_void_p


_PP = ctypes.POINTER(ctypes.c_void_p)


_ERR = [ctypes.c_char_p, ctypes.c_size_t]


_STOP = ctypes.POINTER(ctypes.c_int32)


#: name -> argtypes (all return int); the error buffer pair is appended to each.
_SIGNATURES: dict[str, list] = {
    "gd_list_devices": [ctypes.c_char_p, ctypes.c_size_t, ctypes.POINTER(ctypes.c_int)],
    "gd_open": [ctypes.c_char_p, ctypes.c_int, ctypes.c_int, ctypes.POINTER(DevInfo), _PP],
    "gd_close": [_P],
    "gd_alloc_pd": [_P, _PP],
    "gd_dealloc_pd": [_P],
    "gd_reg_mr": [_P, _U64, _U64, ctypes.c_int, _PP, _PU32, _PU32],
    "gd_reg_dmabuf_mr": [_P, _U64, _U64, _U64, ctypes.c_int, ctypes.c_int, _PP, _PU32, _PU32],
    "gd_dereg_mr": [_P],
    "gd_create_cq": [_P, ctypes.c_int, _PP],
    "gd_destroy_cq": [_P],
    "gd_poll_cq": [_P, ctypes.c_int, ctypes.POINTER(Wc), ctypes.POINTER(ctypes.c_int)],
    "gd_create_qp": [_P, _P, _P, _U32, _U32, _U32, _PP, _PU32, _PU32, _PU32],
    "gd_destroy_qp": [_P],
    "gd_qp_init": [_P, ctypes.c_int, ctypes.c_int],
    "gd_qp_rtr": [_P, ctypes.c_int, ctypes.c_int, _U32, _U32, _U32, _U32, ctypes.c_char_p],
    "gd_qp_rts": [_P, _U32],
    "gd_qp_err": [_P],
    "gd_wrlist_create": [ctypes.POINTER(Wr), ctypes.c_int, _U32, _PP],
    "gd_post": [_P, _P, ctypes.POINTER(ctypes.c_int)],
    "gd_post_recv": [_P, ctypes.c_int, _U64, _U32, _U64],
    "gd_run_bw": [
        ctypes.POINTER(LaneC),
        ctypes.c_int,
        _P,
        ctypes.POINTER(BwParams),
        ctypes.POINTER(BwResult),
        ctypes.POINTER(Sample),
        _U64,
        _STOP,
    ],
    "gd_run_latency": [_P, _P, _P, _U64, _U64, ctypes.POINTER(_U64), ctypes.POINTER(BwResult), _STOP],
    "gd_null_loop": [
        ctypes.c_int,
        ctypes.c_int,
        _U32,
        ctypes.POINTER(BwParams),
        ctypes.POINTER(BwResult),
        ctypes.POINTER(Sample),
        _U64,
        _STOP,
    ],
}


#: Structures shared with C, in gd_struct_size()'s order.
_STRUCTS = (DevInfo, Wc, Wr, LaneC, BwParams, Sample, BwResult)


def _load() -> Loaded:
    lib, why = open_library(LIB_NAME, "native provider", "gd_abi_version", ABI_VERSION)
    if lib is None:
        return None, why
    try:
        declare(lib, _SIGNATURES, _ERR)
        lib.gd_wrlist_free.argtypes = [_P]
        lib.gd_wrlist_free.restype = None
        lib.gd_struct_size.argtypes = [ctypes.c_int]
        lib.gd_struct_size.restype = ctypes.c_size_t
        for i, st in enumerate(_STRUCTS):
            if lib.gd_struct_size(i) != ctypes.sizeof(st):
                return None, (
                    f"native provider unavailable: {LIB_NAME}'s struct {st.__name__} is "
                    f"{lib.gd_struct_size(i)} bytes, this gdrdiag expects {ctypes.sizeof(st)} (re-run set-up)"
                )
    except AttributeError as exc:
        return None, f"native provider unavailable: {LIB_NAME} lacks a symbol ({exc}); re-run set-up"
    return lib, why


_cached = CachedLoad(_load)


def availability() -> Loaded:
    """(the loaded library, or None, and a one-line reason), cached per process."""
    return _cached.get()


def _reset_for_tests() -> None:
    """Forget the cached load (tests point GDRDIAG_NATIVE_DIR elsewhere)."""
    _cached.forget()


def lib() -> ctypes.CDLL:
    """The loaded library; NotSupported with the reason when it is not there."""
    loaded, why = availability()
    if loaded is None:
        raise NotSupported(why)
    return loaded


class _Errno(Exception):
    """Adapter so :func:`gdrdiag.hw.verbs._verbs_error` maps our codes like pyverbs errors."""

    def __init__(self, code: int, message: str):
        super().__init__(message)
        self.error_code = code


def error_from_code(code: int, message: str, call: str, what: str = "", *, gpu: bool = False) -> Exception:
    """An errno value from the C side -> gdrdiag's exception tree (same rules as pyverbs)."""
    if code == GD_ETIMEDOUT:
        return HardwareError(call, code, "ETIMEDOUT", message)
    exc = verbs_pyverbs.verbs_error(_Errno(code, message), call, what, gpu=gpu)
    if isinstance(exc, HardwareError) and not gpu and exc.code > 0 and not call.startswith("ibv_reg"):
        # Keep the C side's precise one-liner (which WR, which state) as the explanation.
        return HardwareError(call, exc.code, exc.name, message)
    return exc


def call_c(fn: Any, *args: Any, call: str, what: str = "", gpu: bool = False) -> None:
    """Call a gd_* function with an error buffer; raise on a non-zero return."""
    buf = ctypes.create_string_buffer(ERRLEN)
    rc = fn(*args, buf, ERRLEN)
    if rc:
        raise error_from_code(rc, buf.value.decode(errors="replace"), call, what, gpu=gpu)


@dataclass(frozen=True)
class NativeLoopResult:
    """What one C run did. Times in seconds; per-call times only when ``time_calls`` was on."""

    messages: int
    bytes: int
    posts: int
    seconds: float
    cpu_seconds: float
    post_seconds: Optional[float]
    poll_seconds: Optional[float]
    polls: int
    empty_polls: int
    samples: tuple[tuple[float, int], ...]  # (seconds since start, WRs completed so far)
    samples_dropped: int
    latencies: tuple[float, ...] = ()

    def per_wr_ns(self) -> dict[str, Optional[float]]:
        """Time per WR inside ibv_post_send, inside ibv_poll_cq, and in the loop's own code."""
        if not self.messages or self.post_seconds is None or self.poll_seconds is None:
            return {"post_ns_per_wr": None, "poll_ns_per_wr": None, "loop_ns_per_wr": None}
        own = self.seconds - self.post_seconds - self.poll_seconds
        n = self.messages
        return {
            "post_ns_per_wr": self.post_seconds / n * 1e9,
            "poll_ns_per_wr": self.poll_seconds / n * 1e9,
            "loop_ns_per_wr": own / n * 1e9,
        }


def interruptible(fn: Callable[..., int], *args: Any) -> tuple[int, str]:
    """Run a C loop in a worker thread; on Ctrl-C stop it, wait for it, then re-raise.

    The C loop reads ``stop`` once per round; it stops posting, lets the posted signalled
    lists complete (bounded by its timeout) and returns, so no C code touches the QPs when
    the caller's cleanup runs. The wait uses an Event set by the worker, not Thread.join():
    on Python <= 3.12 a join interrupted by KeyboardInterrupt can mark a still-running thread
    as stopped (the interrupted acquire releases the thread's state lock, CPython gh-90882),
    and cleanup would then free QPs under the running loop.
    """
    stop = ctypes.c_int32(0)
    err = ctypes.create_string_buffer(ERRLEN)
    box: list[Any] = []
    done = threading.Event()

    def run() -> None:
        try:
            box.append(fn(*args, ctypes.byref(stop), err, ERRLEN))
        except BaseException as exc:  # a ctypes argument error: re-raised in the caller's thread
            box.append(exc)
        finally:
            done.set()

    threading.Thread(target=run, daemon=True, name="gdrdiag-native-loop").start()
    try:
        while not done.wait(0.05):
            pass
    except KeyboardInterrupt:
        stop.value = 1
        while True:
            try:
                if done.wait(0.05):
                    break
            except KeyboardInterrupt:  # a second Ctrl-C: the loop is already draining
                continue
        raise
    if isinstance(box[0], BaseException):
        raise box[0]
    return int(box[0]), err.value.decode(errors="replace")


def loop_result(
    r: BwResult, samples: Any, timed: bool, latencies: tuple[float, ...] = ()
) -> NativeLoopResult:
    t0 = r.t_start_ns
    kept = tuple(((s.t_ns - t0) / 1e9, int(s.completed)) for s in samples[: r.n_samples]) if samples else ()
    return NativeLoopResult(
        messages=int(r.messages),
        bytes=int(r.bytes),
        posts=int(r.posts),
        seconds=(r.t_end_ns - r.t_start_ns) / 1e9,
        cpu_seconds=r.cpu_ns / 1e9,
        post_seconds=r.post_ns / 1e9 if timed else None,
        poll_seconds=r.poll_ns / 1e9 if timed else None,
        polls=int(r.polls),
        empty_polls=int(r.empty_polls),
        samples=kept,
        samples_dropped=int(r.samples_dropped),
        latencies=latencies,
    )


def loop_failed(rc: int, msg: str, r: BwResult) -> Exception:
    if rc == GD_ECOMPLETION:
        w = r.bad_wc
        c = v.Completion(
            int(w.wr_id),
            int(w.status),
            int(w.opcode),
            int(w.byte_len),
            int(w.qp_num),
            None,
            int(w.vendor_err),
        )
        return v.CompletionError(c, "receive of WRITE_WITH_IMM" if r.bad_wc_is_recv else "RDMA WRITE")
    if rc == GD_ETIMEDOUT:
        return LoopTimeout(msg)
    if rc == errno.EINVAL:
        return UserInputError(msg)
    return error_from_code(rc, msg, "native loop")


class LoopTimeout(GdrdiagError):
    """No completion within the timeout (the C loop's GD_ETIMEDOUT)."""


def bw_params(
    tx_depth: int,
    signal_every: int,
    lists_total: Optional[int],
    duration: Optional[float],
    timeout_s: float,
    time_calls: bool,
) -> BwParams:
    if (lists_total is None) == (duration is None):
        raise UserInputError("give either iterations (-n) or a duration (-D), not both")
    if lists_total is not None and lists_total < 1:
        raise UserInputError("nothing to post")
    if tx_depth < 1 or signal_every < 1 or timeout_s <= 0:
        raise UserInputError("TX depth, signal interval and timeout must be positive")
    p = BwParams()
    p.tx_depth, p.signal_every = tx_depth, signal_every
    p.lists_total = lists_total or 0
    p.duration_ns = int((duration or 0) * 1e9) if lists_total is None else 0
    if lists_total is None and p.duration_ns < 1:
        raise UserInputError("duration must be > 0")
    p.timeout_ns = int(timeout_s * 1e9)
    p.flags = GD_LOOP_TIME_CALLS if time_calls else 0
    return p


def sample_buffer(p: BwParams, lanes: int) -> tuple[Any, int]:
    if p.lists_total:
        want = lanes * (p.lists_total // max(p.signal_every, 1) + 1)
    else:
        want = MAX_SAMPLES
    cap = max(1, min(want, MAX_SAMPLES))
    return (Sample * cap)(), cap
