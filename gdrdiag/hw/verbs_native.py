"""The native RDMA provider: ctypes over ``native/verbs_loop.c`` (the timed loop runs in C).

Same interface as the pyverbs and soft providers (``Device`` -> ``PD`` / ``CQ`` -> ``MR`` /
``QP``), so mr-bench and the contract tests use it unchanged. What differs is the timed
loop: :meth:`NativeCQ.run_bw` and :meth:`NativeCQ.run_latency` hand whole runs to C
(``gd_run_bw``, ``gd_run_latency``), so no Python runs between two ``ibv_post_send`` calls.
``bench/rdma_loop.py`` calls them when the CQ offers them.

This is the only module that loads ``build/native/libgdr_verbs.so`` (built by
``scripts/build_native.sh`` from set-up). When the library is missing, :func:`availability`
says why (the build's one-line status), and ``--provider auto`` falls back to pyverbs.

Ctrl-C: a run executes in a worker thread while the main thread waits; KeyboardInterrupt sets
the C loop's stop flag, waits for the loop to return (it stops posting at once and returns
after the posted signalled lists complete, or after its timeout), then re-raises, so the
caller's ``with`` blocks release QPs, MRs, PD and device in order with no C code still using
them.

Errors: every C call returns 0 or an errno value plus a one-line message; they become
``HardwareError`` (named call, errno name, message) or ``NotSupported``, never a crash.
"""

from __future__ import annotations

import ctypes
import errno
import os
import weakref
from typing import Any, Optional, Sequence

from gdrdiag.errors import HardwareError, NotSupported, UserInputError
from gdrdiag.hw import verbs as v
from gdrdiag.hw import verbs_pyverbs
from gdrdiag.hw.verbs import QpState
from gdrdiag.hw.verbs_native_lib import (
    ERRLEN,
    GD_ESTOPPED,
    GD_F_IMM,
    GD_F_SIGNALED,
    LIB_NAME,
    BwResult,
    DevInfo,
    LaneC,
    NativeLoopResult,
    Wc,
    Wr,
    availability,
    bw_params,
    call_c,
    error_from_code,
    interruptible,
    lib,
    loop_failed,
    loop_result,
    sample_buffer,
)

# -- C structures (must match native/verbs_loop.c) -----------------------------------------------


# -- loading ------------------------------------------------------------------------------------


# -- errors -------------------------------------------------------------------------------------


def list_device_names() -> list[str]:
    """Names libibverbs sees, through the native library; NotSupported("no RDMA devices: ...")."""
    native = lib()
    names = ctypes.create_string_buffer(4096)
    count = ctypes.c_int(0)
    err = ctypes.create_string_buffer(ERRLEN)
    rc = native.gd_list_devices(names, len(names), ctypes.byref(count), err, ERRLEN)
    if rc:
        msg = err.value.decode(errors="replace")
        if rc == errno.ENODEV:
            raise NotSupported(f"no RDMA devices: libibverbs lists none; {verbs_pyverbs.why_no_devices()}")
        raise NotSupported(
            f"no RDMA devices: libibverbs could not list devices ({msg}); {verbs_pyverbs.why_no_devices()}"
        )
    return [n for n in names.value.decode().split(",") if n]


def auto_choice() -> tuple[str, str]:
    """What ``--provider auto`` means here: ("native" | "pyverbs", the reason in words)."""
    loaded, why = availability()
    if loaded is None:
        return "pyverbs", f"{why}; using pyverbs"
    try:
        names = list_device_names()
    except NotSupported as exc:
        return "pyverbs", f"native library built, but {exc.reason}; using pyverbs"
    return "native", f"native provider (C loop, {LIB_NAME}) on {', '.join(names)}"


# -- the provider objects -------------------------------------------------------------------------


def _gid_text(raw: Sequence[int]) -> str:
    """16 GID bytes -> ``fe80:0000:...`` (the format pyverbs' GID str() gives)."""
    b = bytes(raw)
    return ":".join(b[i : i + 2].hex() for i in range(0, 16, 2))


def _gid_bytes(text: str) -> Optional[bytes]:
    """The inverse of :func:`_gid_text`; None for an all-zero or empty GID (no GRH)."""
    hexs = text.replace(":", "")
    if not hexs or not int(hexs, 16):
        return None
    if len(hexs) != 32:
        raise UserInputError(f"bad GID {text!r}")
    return bytes.fromhex(hexs)


class NativeMR(v.MR):
    """An MR registered by the C library."""

    provider = "native"

    def __init__(
        self,
        pd: "NativePD",
        handle: int,
        lkey: int,
        rkey: int,
        addr: int,
        length: int,
        access: int,
        reg_path: str,
    ):
        super().__init__(pd)
        self._lib = pd._lib
        self._h: Optional[int] = handle
        self.lkey, self.rkey = lkey, rkey
        self.addr, self.length, self.access, self.reg_path = addr, length, access, reg_path

    def _destroy(self) -> None:
        h, self._h = self._h, None
        if h:
            call_c(self._lib.gd_dereg_mr, h, call="ibv_dereg_mr")


class NativeCQ(v.CQ):
    """A CQ; besides polling, it runs whole timed loops in C (:meth:`run_bw`, :meth:`run_latency`)."""

    def __init__(self, dev: "NativeDevice", depth: int):
        super().__init__(dev)
        self._lib = dev._lib
        self.device = dev
        if depth < 1 or depth > dev._info.max_cqe:
            raise UserInputError(f"CQ depth {depth} outside 1..{dev._info.max_cqe}")
        h = ctypes.c_void_p()
        call_c(
            self._lib.gd_create_cq,
            dev._h,
            depth,
            ctypes.byref(h),
            call="ibv_create_cq",
            what=f"depth {depth}",
        )
        self._h: Optional[int] = h.value
        self.depth = depth
        self._wcs = (Wc * 64)()

    def poll(self, max_entries: int = 16) -> list[v.Completion]:
        self._check_open()
        got = ctypes.c_int(0)
        call_c(
            self._lib.gd_poll_cq,
            self._h,
            min(max_entries, 64),
            self._wcs,
            ctypes.byref(got),
            call="ibv_poll_cq",
        )
        out = []
        for w in self._wcs[: got.value]:
            imm = int(w.imm) if w.wc_flags & 2 else None  # IBV_WC_WITH_IMM
            out.append(
                v.Completion(
                    int(w.wr_id),
                    int(w.status),
                    int(w.opcode),
                    int(w.byte_len),
                    int(w.qp_num),
                    imm,
                    int(w.vendor_err),
                )
            )
        return out

    def run_bw(self, lanes: Sequence[Any], **kw: Any) -> "NativeLoopResult":
        """The ib_write_bw loop in C over ``lanes`` (objects with ``qp``, ``plain``, ``signaled``)."""
        return run_bw(self, lanes, **kw)

    def run_latency(self, qp: "NativeQP", prepared: "NativePrepared", **kw: Any) -> "NativeLoopResult":
        """One signalled WRITE at a time, in C."""
        return run_latency(self, qp, prepared, **kw)

    def _destroy(self) -> None:
        h, self._h = self._h, None
        if h:
            call_c(self._lib.gd_destroy_cq, h, call="ibv_destroy_cq")


class NativePrepared(v.PreparedWrites):
    """A C ``ibv_send_wr`` chain, built once; freed by :meth:`close` or when collected."""

    def __init__(self, native: ctypes.CDLL, wrs: Sequence[v.WriteWR], inline_max: int):
        if not wrs:
            raise UserInputError("an empty post list")
        self.wrs = tuple(wrs)
        arr = (Wr * len(wrs))()
        for i, w in enumerate(wrs):
            if not 0 <= w.length < 1 << 32:
                raise UserInputError(f"WR length {w.length} does not fit 32 bits")
            flags = (GD_F_SIGNALED if w.signaled else 0) | (GD_F_IMM if w.imm is not None else 0)
            arr[i] = Wr(
                w.wr_id,
                w.local_addr,
                w.remote_addr,
                w.length,
                w.lkey & 0xFFFFFFFF,
                w.rkey & 0xFFFFFFFF,
                flags,
                (w.imm or 0) & 0xFFFFFFFF,
                0,
            )
        h = ctypes.c_void_p()
        call_c(native.gd_wrlist_create, arr, len(wrs), inline_max, ctypes.byref(h), call="prepare")
        self._free = native.gd_wrlist_free
        self.handle: Optional[int] = h.value
        self.nbytes = sum(w.length for w in wrs)

    def close(self) -> None:
        """Free the C chain (idempotent)."""
        h, self.handle = self.handle, None
        if h:
            self._free(h)

    def __del__(self) -> None:  # pragma: no cover - depends on the collector
        try:
            self.close()
        except Exception:
            pass


class NativeQP(v.QP):
    """An RC QP created and moved through its states by the C library."""

    def __init__(
        self, pd: "NativePD", cq: NativeCQ, max_send_wr: int, max_recv_wr: int, recv_cq: Optional[NativeCQ]
    ):
        super().__init__(pd)
        dev = pd.device
        self._lib, self._dev = pd._lib, dev
        if not 1 <= max_send_wr <= dev._info.max_qp_wr:
            raise UserInputError(f"max_send_wr {max_send_wr} outside 1..{dev._info.max_qp_wr} (device limit)")
        h, qpn, inline, granted = ctypes.c_void_p(), ctypes.c_uint32(), ctypes.c_uint32(), ctypes.c_uint32()
        call_c(
            self._lib.gd_create_qp,
            pd._h,
            cq._h,
            (recv_cq or cq)._h,
            max_send_wr,
            max_recv_wr,
            dev.inline,
            ctypes.byref(h),
            ctypes.byref(qpn),
            ctypes.byref(inline),
            ctypes.byref(granted),
            call="ibv_create_qp",
            what=f"RC, max_send_wr {max_send_wr}",
        )
        self._h: Optional[int] = h.value
        # libibverbs refuses to destroy a CQ that a QP still uses (EBUSY): closing a CQ closes
        # its QPs first, whatever order the caller created things in.
        for used in {id(cq): cq, id(recv_cq or cq): recv_cq or cq}.values():
            used._children.append(weakref.ref(self))
        self.qp_num = int(qpn.value)
        self.inline = int(inline.value)
        self.psn = int.from_bytes(os.urandom(3), "little")
        self.state = QpState.RESET
        # What the device granted (ibv_create_qp updates cap), which may exceed what was asked.
        self.max_send_wr = max(max_send_wr, int(granted.value))

    def info(self) -> v.QpInfo:
        pi = self._dev.port_info()
        return v.QpInfo(self.qp_num, self.psn, pi.lid, pi.gid, pi.active_mtu)

    def to_init(self, access: int) -> None:
        self._check_open()
        call_c(
            self._lib.gd_qp_init, self._h, self._dev.port, access, call="ibv_modify_qp", what="RESET->INIT"
        )
        self.state = QpState.INIT

    def to_rtr(self, remote: v.QpInfo) -> None:
        self._check_open()
        mtu = min(self._dev.port_info().active_mtu, remote.mtu)
        dgid = _gid_bytes(remote.gid)
        call_c(
            self._lib.gd_qp_rtr,
            self._h,
            self._dev.port,
            self._dev.gid_index,
            v.MTU_ENUM.get(mtu, v.MTU_ENUM[1024]),
            remote.qp_num,
            remote.psn,
            remote.lid,
            dgid,
            call="ibv_modify_qp",
            what="INIT->RTR",
        )
        self.state = QpState.RTR

    def to_rts(self) -> None:
        self._check_open()
        call_c(self._lib.gd_qp_rts, self._h, self.psn, call="ibv_modify_qp", what="RTR->RTS")
        self.state = QpState.RTS

    def to_error(self) -> None:
        self._check_open()
        call_c(self._lib.gd_qp_err, self._h, call="ibv_modify_qp", what="->ERR")
        self.state = QpState.ERR

    def prepare(self, wrs: Sequence[v.WriteWR]) -> NativePrepared:
        return NativePrepared(self._lib, wrs, self.inline)

    def post(self, prepared: v.PreparedWrites) -> None:
        self._check_open()
        if not isinstance(prepared, NativePrepared) or prepared.handle is None:
            raise UserInputError("post() needs a list prepared by this native QP (and not closed)")
        bad = ctypes.c_int(-1)
        err = ctypes.create_string_buffer(ERRLEN)
        rc = self._lib.gd_post(self._h, prepared.handle, ctypes.byref(bad), err, ERRLEN)
        if rc == errno.ENOMEM:
            raise HardwareError(
                "ibv_post_send", rc, "ENOMEM", f"send queue full (max_send_wr {self.max_send_wr})"
            )
        if rc:
            raise error_from_code(
                rc,
                err.value.decode(errors="replace"),
                "ibv_post_send",
                f"QP {self.qp_num} in {self.state.name}",
            )

    def post_recv(self, count: int, mr: v.MR, wr_id: int = 0) -> None:
        self._check_open()
        call_c(self._lib.gd_post_recv, self._h, count, mr.addr, mr.lkey, wr_id, call="ibv_post_recv")

    def _destroy(self) -> None:
        h, self._h = self._h, None
        if h:
            call_c(self._lib.gd_destroy_qp, h, call="ibv_destroy_qp")


class NativePD(v.PD):
    """A protection domain of the native provider."""

    def __init__(self, dev: "NativeDevice"):
        super().__init__(dev)
        self.device = dev
        self._lib = dev._lib
        h = ctypes.c_void_p()
        call_c(self._lib.gd_alloc_pd, dev._h, ctypes.byref(h), call="ibv_alloc_pd")
        self._h: Optional[int] = h.value

    def reg_mr(self, addr: int, length: int, access: int, *, gpu: bool = False) -> NativeMR:
        self._check_open()
        if not addr:
            raise UserInputError("cannot register address 0")
        h, lkey, rkey = ctypes.c_void_p(), ctypes.c_uint32(), ctypes.c_uint32()
        call_c(
            self._lib.gd_reg_mr,
            self._h,
            addr,
            length,
            access,
            ctypes.byref(h),
            ctypes.byref(lkey),
            ctypes.byref(rkey),
            call="ibv_reg_mr",
            what=f"{length} bytes, access {'|'.join(v.access_names(access))}",
            gpu=gpu,
        )
        return NativeMR(self, h.value, lkey.value, rkey.value, addr, length, access, "mr")

    def reg_dmabuf_mr(
        self, fd: int, offset: int, length: int, access: int, *, dmabuf_va: int, gpu: bool = True
    ) -> NativeMR:
        self._check_open()
        h, lkey, rkey = ctypes.c_void_p(), ctypes.c_uint32(), ctypes.c_uint32()
        # iova == offset, as the pyverbs provider registers it: the peer addresses the offset.
        call_c(
            self._lib.gd_reg_dmabuf_mr,
            self._h,
            offset,
            length,
            offset,
            fd,
            access,
            ctypes.byref(h),
            ctypes.byref(lkey),
            ctypes.byref(rkey),
            call="ibv_reg_dmabuf_mr",
            what=f"{length} bytes at dma-buf offset {offset}",
            gpu=True,
        )
        return NativeMR(self, h.value, lkey.value, rkey.value, offset, length, access, "dmabuf")

    def create_rc_qp(
        self, cq: v.CQ, *, max_send_wr: int, max_recv_wr: int = 1, recv_cq: Optional[v.CQ] = None
    ) -> NativeQP:
        self._check_open()
        return NativeQP(self, cq, max_send_wr, max_recv_wr, recv_cq)  # type: ignore[arg-type]

    def _destroy(self) -> None:
        h, self._h = self._h, None
        if h:
            call_c(self._lib.gd_dealloc_pd, h, call="ibv_dealloc_pd")


class NativeDevice(v.Device):
    """A device opened by the C library: the same open and GID rules as the pyverbs provider.

    ``inline``: QPs ask for this much inline data and WRs up to the granted size are posted
    with IBV_SEND_INLINE (0 = never, the default). ``time_calls``: the C loop also times every
    ``ibv_post_send`` and ``ibv_poll_cq`` (two clock reads each; off for bandwidth runs).
    """

    provider = "native"

    def __init__(
        self,
        name: Optional[str] = None,
        *,
        port: int = 1,
        gid_index: Optional[int] = None,
        inline: int = 0,
        time_calls: bool = False,
    ):
        super().__init__(None)
        if inline < 0:
            raise UserInputError(f"inline threshold {inline} must be >= 0")
        self._lib = lib()
        if name is not None:
            names = list_device_names()
            if name not in names:
                raise UserInputError(f"RDMA device {name!r} not found (devices: {', '.join(names)})")
        else:
            list_device_names()  # "no RDMA devices: <why>" before anything else
        info, h = DevInfo(), ctypes.c_void_p()
        err = ctypes.create_string_buffer(ERRLEN)
        rc = self._lib.gd_open(
            name.encode() if name else None,
            port,
            -1 if gid_index is None else gid_index,
            ctypes.byref(info),
            ctypes.byref(h),
            err,
            ERRLEN,
        )
        msg = err.value.decode(errors="replace")
        if rc in (errno.ERANGE,):
            raise UserInputError(msg)
        if rc in (errno.ENETDOWN, errno.ENODEV, errno.ENOENT):
            raise NotSupported(msg)
        if rc:
            raise error_from_code(rc, msg, "ibv_open_device", name or "")
        self._h: Optional[int] = h.value
        self._info = info
        self.name = info.name.decode()
        self.port = port
        self.gid_index = int(info.gid_index)
        self.inline = inline
        self.time_calls = time_calls
        self._gid = _gid_text(info.gid)

    def port_info(self) -> v.PortInfo:
        i = self._info
        return v.PortInfo(
            self.name,
            self.port,
            int(i.state),
            int(i.lid),
            self._gid,
            self.gid_index,
            v.LINK_LAYER.get(int(i.link_layer), str(int(i.link_layer))),
            v.MTU_BYTES.get(int(i.active_mtu), 1024),
            int(i.max_msg_sz),
        )

    def limits(self) -> v.DeviceLimits:
        i = self._info
        return v.DeviceLimits(
            int(i.max_qp), int(i.max_qp_wr), int(i.max_cqe), int(i.max_mr_size), int(i.max_sge)
        )

    def alloc_pd(self) -> NativePD:
        self._check_open()
        return NativePD(self)

    def create_cq(self, depth: int) -> NativeCQ:
        self._check_open()
        return NativeCQ(self, depth)

    def _destroy(self) -> None:
        h, self._h = self._h, None
        if h:
            call_c(self._lib.gd_close, h, call="ibv_close_device")


# -- the timed loops ------------------------------------------------------------------------------


def run_bw(
    cq: NativeCQ,
    lanes: Sequence[Any],
    *,
    tx_depth: int,
    signal_every: int,
    lists_total: Optional[int] = None,
    duration: Optional[float] = None,
    timeout_s: float = 10.0,
    recv: Optional[tuple[Any, Sequence[Any], Any]] = None,
) -> NativeLoopResult:
    """ib_write_bw-style loop in C: same rules as ``bench.rdma_loop.run_bw`` (see there).

    ``lanes[i]`` must have ``index == i``, lists prepared by native QPs (``plain[k]`` and
    ``signaled[k]``, cycled through in order) and signalled WRs carrying ``wr_id == i``, as
    ``build_lanes`` and mr-bench's block lanes make them.
    """
    cq._check_open()
    native = cq._lib
    dev = cq.device
    p = bw_params(tx_depth, signal_every, lists_total, duration, timeout_s, dev.time_calls)
    arr = (LaneC * len(lanes))()
    keep: list[Any] = []
    for i, lane in enumerate(lanes):
        if lane.index != i or len(lane.plain) != len(lane.signaled) or not lane.plain:
            raise UserInputError("the native loop takes lanes 0..n-1, each with matching post lists")
        lists = list(lane.plain) + list(lane.signaled)
        if not all(isinstance(x, NativePrepared) and x.handle for x in lists):
            raise UserInputError("the native loop needs open lists prepared by native QPs")
        if any(w.wr_id != i for x in lane.signaled for w in x.wrs if w.signaled):
            raise UserInputError("signalled WRs must carry their lane index as wr_id")
        lane.qp._check_open()
        n = len(lane.plain)
        plain = (ctypes.c_void_p * n)(*[x.handle for x in lane.plain])
        sig = (ctypes.c_void_p * n)(*[x.handle for x in lane.signaled])
        keep += [plain, sig]
        arr[i] = LaneC(lane.qp._h, plain, sig, n, 0)
    if recv is not None:
        rcq, resp, mr = recv
        qps = (ctypes.c_void_p * len(resp))(*[q._h for q in resp])
        qpns = (ctypes.c_uint32 * len(resp))(*[q.qp_num for q in resp])
        keep += [qps, qpns]
        p.n_resp, p.recv_cq, p.resp_qps, p.resp_qpns = len(resp), rcq._h, qps, qpns
        p.recv_addr, p.recv_lkey = mr.addr, mr.lkey
    samples, cap = sample_buffer(p, len(lanes))
    r = BwResult()
    rc, msg = interruptible(
        native.gd_run_bw, arr, len(lanes), cq._h, ctypes.byref(p), ctypes.byref(r), samples, cap
    )
    del keep
    if rc:
        raise loop_failed(rc, msg, r)
    return loop_result(r, samples, dev.time_calls)


def run_latency(
    cq: NativeCQ, qp: NativeQP, prepared: NativePrepared, *, iterations: int, timeout_s: float = 10.0
) -> NativeLoopResult:
    """One signalled WRITE outstanding; each sample is post -> its completion polled, in C."""
    cq._check_open()
    qp._check_open()
    if iterations < 1:
        raise UserInputError("latency needs at least one iteration")
    lat = (ctypes.c_uint64 * iterations)()
    r = BwResult()
    rc, msg = interruptible(
        cq._lib.gd_run_latency,
        qp._h,
        cq._h,
        prepared.handle,
        iterations,
        int(timeout_s * 1e9),
        lat,
        ctypes.byref(r),
    )
    if rc:
        raise loop_failed(rc, msg, r)
    return loop_result(r, None, False, tuple(x / 1e9 for x in lat[: r.messages]))


def null_loop(
    *,
    lanes: int = 1,
    post_list: int = 1,
    size: int = 64,
    tx_depth: int = 128,
    signal_every: int = 1,
    lists_total: Optional[int] = None,
    duration: Optional[float] = None,
    time_calls: bool = False,
) -> NativeLoopResult:
    """The C loop over the null provider (every signalled WR completes at once; no device).

    The C counterpart of the soft provider's no-copy mode: what is left is the loop's own
    work and walking the WR chain. It runs anywhere the library built, with no RDMA device.
    """
    native = lib()
    p = bw_params(tx_depth, signal_every, lists_total, duration, 10.0, time_calls)
    if post_list > tx_depth:
        raise UserInputError(f"a post list of {post_list} WRs does not fit the TX depth {tx_depth}")
    samples, cap = sample_buffer(p, lanes)
    r = BwResult()
    rc, msg = interruptible(
        native.gd_null_loop, lanes, post_list, size, ctypes.byref(p), ctypes.byref(r), samples, cap
    )
    if rc and rc != GD_ESTOPPED:
        raise loop_failed(rc, msg, r)
    return loop_result(r, samples, time_calls)
