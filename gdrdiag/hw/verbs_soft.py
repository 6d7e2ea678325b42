"""The soft provider: the RDMA provider interface in software, for machines without a NIC.

It is not a simulator of timing; it is a faithful model of the *rules* an HCA enforces, moving
the bytes for real, so the whole mr-bench pipeline (registration, QP state machine, post lists,
selective signalling, completions, payload verification, error paths) runs and is tested
anywhere. Its numbers are never hardware numbers: every result records ``provider = soft``.

What it enforces, with the completion a real RC HCA gives (IB spec vol.1 ch.10/11, and
libibverbs' man pages ibv_post_send(3), ibv_poll_cq(3), ibv_modify_qp(3)):

- QP state machine RESET -> INIT -> RTR -> RTS; other transitions raise EINVAL (as
  ibv_modify_qp does). Posting to a QP not in RTS/ERR fails at once with EINVAL. In ERR every
  posted WR completes with IBV_WC_WR_FLUSH_ERR (signalled or not).
- Send queue depth: more outstanding WRs than ``max_send_wr`` makes ibv_post_send fail with
  ENOMEM. A WR is outstanding until a later-or-equal signalled completion of its QP is polled.
- Local SGE: lkey must name an MR of the QP's PD and cover the range -> IBV_WC_LOC_PROT_ERR;
  longer than the port's max message size -> IBV_WC_LOC_LEN_ERR.
- Remote: no such QP, or not in RTR/RTS (peer gone) -> IBV_WC_RETRY_EXC_ERR. The responder QP
  must allow remote writes (qp_access_flags), and the rkey must name an MR of the responder
  QP's PD, registered with remote_write, covering the range -> IBV_WC_REM_ACCESS_ERR.
- WRITE_WITH_IMM consumes a posted receive at the responder; none posted ->
  IBV_WC_RNR_RETRY_EXC_ERR at the requester; the responder gets IBV_WC_RECV_RDMA_WITH_IMM.
- The first error completes even when unsignalled, moves the requester QP to ERR, and the rest
  of the list (and later posts) flush.
- Access flags: any combination of known flags is accepted; optional flags (bits 20..29,
  RELAXED_ORDERING) are recorded on the MR and have no effect, as libibverbs allows.

Bytes move with :func:`gdrdiag.hw.memory.copy_bytes` (memmove, or cuMemcpy when either side is
CUDA memory). ``copy=False`` (no-copy mode) keeps every check but skips the copy, to measure
the cost of the benchmark loop itself.

QPs find each other through a process-wide fabric keyed by (GID, QP number): loopback and
two-"machine" tests run in one process (threads). A peer in another process is unreachable
(RETRY_EXC_ERR), as it would be without a wire, unless both devices were opened with
``wire=True``: then WRITEs cross TCP on 127.0.0.1 (:mod:`gdrdiag.hw.verbs_soft_wire`), so
two-machine mr-bench runs end to end on one machine, host memory only.
"""

from __future__ import annotations

import collections
import errno
import itertools
import threading
from typing import Any, Optional, Sequence

from gdrdiag.errors import HardwareError, UserInputError
from gdrdiag.hw import verbs as v
from gdrdiag.hw.verbs import QpState, WcOpcode, WcStatus

SOFT_MAX_MSG = 1 << 31  # IB max message size (2 GiB)
_DEFAULT_LIMITS = v.DeviceLimits(max_qp=256, max_qp_wr=16384, max_cqe=1 << 20, max_mr_size=1 << 40, max_sge=1)

_lock = threading.RLock()
_fabric: dict[tuple[str, int], "SoftQP"] = {}
_live: collections.Counter = collections.Counter()
_device_ids = itertools.count(1)
_qpn = itertools.count(0x100)


def live_objects() -> dict[str, int]:
    """Count of open soft objects by type (Device, PD, CQ, MR, QP): tests assert it returns to 0."""
    with _lock:
        return {k: n for k, n in _live.items() if n}


def _modify_error(qp: "SoftQP", want: str) -> HardwareError:
    return HardwareError(
        "ibv_modify_qp", errno.EINVAL, "EINVAL", f"QP {qp.qp_num}: cannot go {qp.state.name}->{want}"
    )


class SoftMR(v.MR):
    """A soft MR: ``addr``/``length`` name the range, ``va`` is where its first byte lives."""

    provider = "soft"

    def __init__(self, pd: "SoftPD", addr: int, length: int, access: int, reg_path: str, va: int, gpu: bool):
        super().__init__(pd)
        dev = pd.device
        self.pd = pd
        self.addr = addr
        self.length = length
        self.end = addr + length
        self.access = access
        self.reg_path = reg_path
        self.va = va
        self.gpu = gpu
        self.remote_writable = bool(access & v.ACCESS_REMOTE_WRITE)
        self.optional_flags = access & v.ACCESS_OPTIONAL_RANGE  # recorded, no effect
        with _lock:
            key = dev._next_key()
            self.lkey = key
            self.rkey = key ^ 0x5A000000
            dev._by_lkey[self.lkey] = self
            dev._by_rkey[self.rkey] = self
            _live["MR"] += 1

    def _destroy(self) -> None:
        dev = self.pd.device
        with _lock:
            dev._by_lkey.pop(self.lkey, None)
            dev._by_rkey.pop(self.rkey, None)
            _live["MR"] -= 1


class SoftCQ(v.CQ):
    """A soft CQ: a deque of completions; overrun is an error, as on hardware."""

    def __init__(self, dev: "SoftDevice", depth: int):
        super().__init__(dev)
        if depth <= 0 or depth > dev._limits.max_cqe:
            raise UserInputError(f"CQ depth {depth} outside 1..{dev._limits.max_cqe}")
        self.depth = depth
        # entries: (Completion, qp or None, retire count)
        self._q: collections.deque = collections.deque()
        with _lock:
            _live["CQ"] += 1

    def _push(self, c: v.Completion, qp: Optional["SoftQP"], retire: int) -> None:
        if len(self._q) >= self.depth:
            raise HardwareError(
                "soft CQ",
                errno.EOVERFLOW,
                "EOVERFLOW",
                f"CQ overrun: more than {self.depth} completions not polled",
            )
        self._q.append((c, qp, retire))

    def poll(self, max_entries: int = 16) -> list[v.Completion]:
        self._check_open()
        out = []
        q = self._q
        while q and len(out) < max_entries:
            c, qp, retire = q.popleft()
            if qp is not None:
                qp._outstanding -= retire
            out.append(c)
        return out

    def _destroy(self) -> None:
        self._q.clear()
        with _lock:
            _live["CQ"] -= 1


class SoftPrepared(v.PreparedWrites):
    """Soft post list: the WRs as tuples, checked at post time (keys can change in between)."""

    def __init__(self, wrs: Sequence[v.WriteWR]):
        self.wrs = tuple(wrs)
        self.items = tuple(
            (w.wr_id, w.local_addr, w.length, w.lkey, w.remote_addr, w.rkey, w.signaled, w.imm)
            for w in self.wrs
        )

    def close(self) -> None:
        """Nothing to free."""


class SoftQP(v.QP):
    """A soft RC QP (see the module docstring for the rules it enforces)."""

    def __init__(
        self, pd: "SoftPD", cq: SoftCQ, max_send_wr: int, max_recv_wr: int, recv_cq: Optional[SoftCQ]
    ):
        super().__init__(pd)
        dev = pd.device
        lim = dev._limits
        if not 1 <= max_send_wr <= lim.max_qp_wr:
            raise UserInputError(f"max_send_wr {max_send_wr} outside 1..{lim.max_qp_wr} (device limit)")
        with _lock:
            if dev._qp_count >= lim.max_qp:
                raise HardwareError(
                    "ibv_create_qp", errno.ENOMEM, "ENOMEM", f"{dev.name} allows at most {lim.max_qp} QPs"
                )
            dev._qp_count += 1
            self.qp_num = next(_qpn) & 0xFFFFFF
            _fabric[(dev.gid, self.qp_num)] = self
            _live["QP"] += 1
        self.pd = pd
        self.device = dev
        self.cq = cq
        self.recv_cq = recv_cq or cq
        self.max_send_wr = max_send_wr
        self.max_recv_wr = max_recv_wr
        self.psn = (self.qp_num * 2654435761) & 0xFFFFFF
        self.state = QpState.RESET
        self.access = 0
        self.remote: Optional[v.QpInfo] = None
        self._outstanding = 0
        self._since_cqe = 0
        self._recvs: collections.deque = collections.deque()
        self._wire: Any = None  # a verbs_soft_wire.WireLink when the peer is in another process

    def info(self) -> v.QpInfo:
        return v.QpInfo(self.qp_num, self.psn, self.device.lid, self.device.gid, self.device.mtu)

    def to_init(self, access: int) -> None:
        self._check_open()
        if self.state not in (QpState.RESET, QpState.INIT):
            raise _modify_error(self, "INIT")
        self.access = access
        self.state = QpState.INIT

    def to_rtr(self, remote: v.QpInfo) -> None:
        self._check_open()
        if self.state is not QpState.INIT:
            raise _modify_error(self, "RTR")
        if remote.mtu not in v.MTU_ENUM:
            raise HardwareError("ibv_modify_qp", errno.EINVAL, "EINVAL", f"bad path MTU {remote.mtu}")
        self.remote = remote
        self.state = QpState.RTR
        if self.device._wire is not None:
            from gdrdiag.hw import verbs_soft_wire

            port = verbs_soft_wire.port_of(remote.gid)
            with _lock:
                here = (remote.gid, remote.qp_num) in _fabric
            if port is not None and not here:
                self._wire = verbs_soft_wire.WireLink(port)

    def to_rts(self) -> None:
        self._check_open()
        if self.state is not QpState.RTR:
            raise _modify_error(self, "RTS")
        self.state = QpState.RTS

    def to_error(self) -> None:
        self._check_open()
        self.state = QpState.ERR

    def prepare(self, wrs: Sequence[v.WriteWR]) -> SoftPrepared:
        if not wrs:
            raise UserInputError("an empty post list")
        return SoftPrepared(wrs)

    def _peer(self) -> Optional["SoftQP"]:
        r = self.remote
        if r is None:
            return None
        peer = _fabric.get((r.gid, r.qp_num))
        if peer is None or peer.closed or peer.state not in (QpState.RTR, QpState.RTS):
            return None
        return peer

    def _admit(self, n: int) -> QpState:
        """Refuse a post as ibv_post_send would (wrong state: EINVAL; full send queue: ENOMEM)."""
        self._check_open()
        state = self.state
        if state not in (QpState.RTS, QpState.ERR):
            raise HardwareError(
                "ibv_post_send",
                errno.EINVAL,
                "EINVAL",
                f"QP {self.qp_num} is in {state.name}; sends need RTS",
            )
        if self._outstanding + n > self.max_send_wr:
            raise HardwareError(
                "ibv_post_send",
                errno.ENOMEM,
                "ENOMEM",
                f"send queue full: {self._outstanding} outstanding + {n} posted > "
                f"max_send_wr {self.max_send_wr}",
            )
        self._outstanding += n
        return state

    def post(self, prepared: v.PreparedWrites) -> None:  # noqa: C901 - one flat loop is the point
        # One flat loop with locals hoisted: this is the hot path mr-bench --loop-cost measures.
        items = prepared.items  # type: ignore[attr-defined]
        state = self._admit(len(items))
        dev = self.device
        by_lkey = dev._by_lkey
        copy = dev.copy
        cq = self.cq
        peer = self._peer() if state is QpState.RTS else None
        if peer is None and self._wire is not None and state is QpState.RTS:
            from gdrdiag.hw import verbs_soft_wire

            verbs_soft_wire.post(self, items)
            return
        by_rkey = peer.device._by_rkey if peer is not None else None
        qpn = self.qp_num
        max_msg = dev.max_msg_size
        since = self._since_cqe
        for wr_id, laddr, length, lkey, raddr, rkey, signaled, imm in items:
            since += 1
            if self.state is QpState.ERR:
                cq._push(v.Completion(wr_id, WcStatus.WR_FLUSH_ERR, WcOpcode.RDMA_WRITE, 0, qpn), self, since)
                since = 0
                continue
            status = WcStatus.SUCCESS
            mr = by_lkey.get(lkey)
            if mr is None or mr.pd is not self.pd or laddr < mr.addr or laddr + length > mr.end:
                status = WcStatus.LOC_PROT_ERR
            elif length > max_msg:
                status = WcStatus.LOC_LEN_ERR
            elif peer is None:
                status = WcStatus.RETRY_EXC_ERR
            else:
                rmr = by_rkey.get(rkey)  # type: ignore[union-attr]
                if (
                    not peer.access & v.ACCESS_REMOTE_WRITE
                    or rmr is None
                    or rmr.pd is not peer.pd
                    or not rmr.remote_writable
                    or raddr < rmr.addr
                    or raddr + length > rmr.end
                ):
                    status = WcStatus.REM_ACCESS_ERR
                elif imm is not None and not peer._recvs:
                    status = WcStatus.RNR_RETRY_EXC_ERR
                else:
                    if copy and length:
                        _copy(
                            rmr.va + (raddr - rmr.addr), mr.va + (laddr - mr.addr), length, mr.gpu or rmr.gpu
                        )
                    if imm is not None:
                        recv_id = peer._recvs.popleft()
                        peer.recv_cq._push(
                            v.Completion(
                                recv_id,
                                WcStatus.SUCCESS,
                                WcOpcode.RECV_RDMA_WITH_IMM,
                                length,
                                peer.qp_num,
                                imm & 0xFFFFFFFF,
                            ),
                            None,
                            0,
                        )
            if status is not WcStatus.SUCCESS:
                cq._push(v.Completion(wr_id, status, WcOpcode.RDMA_WRITE, 0, qpn), self, since)
                since = 0
                self.state = QpState.ERR
                continue
            if signaled:
                cq._push(v.Completion(wr_id, WcStatus.SUCCESS, WcOpcode.RDMA_WRITE, length, qpn), self, since)
                since = 0
        self._since_cqe = since

    def post_recv(self, count: int, mr: v.MR, wr_id: int = 0) -> None:
        self._check_open()
        if self.state is QpState.RESET:
            raise HardwareError("ibv_post_recv", errno.EINVAL, "EINVAL", "QP is in RESET")
        if len(self._recvs) + count > self.max_recv_wr:
            raise HardwareError(
                "ibv_post_recv",
                errno.ENOMEM,
                "ENOMEM",
                f"receive queue full (max_recv_wr {self.max_recv_wr})",
            )
        if self.state is QpState.ERR:
            for _ in range(count):
                self.recv_cq._push(
                    v.Completion(wr_id, WcStatus.WR_FLUSH_ERR, WcOpcode.RECV_RDMA_WITH_IMM, 0, self.qp_num),
                    None,
                    0,
                )
            return
        self._recvs.extend([wr_id] * count)

    def _destroy(self) -> None:
        if self._wire is not None:
            self._wire.close()
        with _lock:
            _fabric.pop((self.device.gid, self.qp_num), None)
            self.device._qp_count -= 1
            _live["QP"] -= 1
        self.state = QpState.RESET


def _copy(dst: int, src: int, n: int, gpu: bool) -> None:
    from gdrdiag.hw.memory import copy_bytes

    copy_bytes(dst, src, n, gpu_involved=gpu)


class SoftPD(v.PD):
    """A soft protection domain."""

    def __init__(self, dev: "SoftDevice"):
        super().__init__(dev)
        self.device = dev
        with _lock:
            _live["PD"] += 1

    def _check_access(self, access: int) -> None:
        known = sum(v.ACCESS_FLAGS.values()) | v.ACCESS_OPTIONAL_RANGE
        if access & ~known:
            raise HardwareError(
                "ibv_reg_mr", errno.EINVAL, "EINVAL", f"unknown access bits 0x{access & ~known:x}"
            )
        # libibverbs/kernel rule: remote write (or atomic) access requires local write.
        if (
            access & (v.ACCESS_REMOTE_WRITE | v.ACCESS_FLAGS["remote_atomic"])
            and not access & v.ACCESS_LOCAL_WRITE
        ):
            raise HardwareError(
                "ibv_reg_mr", errno.EINVAL, "EINVAL", "remote_write/remote_atomic need local_write too"
            )

    def _check_wire(self, gpu: bool) -> None:
        if gpu and self.device._wire is not None:
            raise UserInputError(
                "the soft provider's wire moves host memory only: use --memory pageable or pinned"
            )

    def _check_length(self, length: int) -> None:
        lim = self.device._limits.max_mr_size
        if length <= 0 or length > lim:
            raise HardwareError("ibv_reg_mr", errno.EINVAL, "EINVAL", f"length {length} outside 1..{lim}")

    def reg_mr(self, addr: int, length: int, access: int, *, gpu: bool = False) -> SoftMR:
        self._check_open()
        if not addr:
            raise UserInputError("cannot register address 0")
        self._check_access(access)
        self._check_length(length)
        self._check_wire(gpu)
        return SoftMR(self, addr, length, access, "mr", addr, gpu)

    def reg_dmabuf_mr(
        self, fd: int, offset: int, length: int, access: int, *, dmabuf_va: int, gpu: bool = True
    ) -> SoftMR:
        self._check_open()
        if fd < 0:
            raise HardwareError("ibv_reg_dmabuf_mr", errno.EBADF, "EBADF", f"bad dma-buf fd {fd}")
        self._check_access(access)
        self._check_length(length)
        self._check_wire(gpu)
        # iova == offset, as pyverbs' DmaBufMR registers it; byte `offset` of the dma-buf lives
        # at dmabuf_va + offset.
        return SoftMR(self, offset, length, access, "dmabuf", dmabuf_va + offset, gpu)

    def create_rc_qp(
        self, cq: v.CQ, *, max_send_wr: int, max_recv_wr: int = 1, recv_cq: Optional[v.CQ] = None
    ) -> SoftQP:
        self._check_open()
        return SoftQP(self, cq, max_send_wr, max_recv_wr, recv_cq)  # type: ignore[arg-type]

    def _destroy(self) -> None:
        with _lock:
            _live["PD"] -= 1


class SoftDevice(v.Device):
    """A soft device with one ACTIVE port. ``copy=False`` checks everything but moves no bytes."""

    provider = "soft"

    def __init__(
        self,
        name: str = "soft0",
        *,
        port: int = 1,
        gid_index: int = 0,
        copy: bool = True,
        limits: Optional[v.DeviceLimits] = None,
        mtu: int = 4096,
        wire: bool = False,
    ):
        super().__init__(None)
        if port != 1:
            raise UserInputError(f"{name} (soft provider) has one port, port 1; got port {port}")
        if gid_index != 0:
            raise UserInputError(f"{name} (soft provider) has one GID, index 0; got {gid_index}")
        self.name = name
        self.port = port
        self.gid_index = 0
        self.copy = copy
        self._limits = limits or _DEFAULT_LIMITS
        self.mtu = mtu
        self.max_msg_size = SOFT_MAX_MSG
        self._id = next(_device_ids)
        self.lid = self._id & 0xFFFF
        self.gid = f"fe80:0000:0000:0000:0000:0000:{(self._id >> 16) & 0xFFFF:04x}:{self._id & 0xFFFF:04x}"
        self._keys = itertools.count(0x100 + (self._id << 12))
        self._by_lkey: dict[int, SoftMR] = {}
        self._by_rkey: dict[int, SoftMR] = {}
        self._qp_count = 0
        self._wire: Any = None
        if wire:  # WRITEs from other processes of this machine, over TCP on 127.0.0.1
            from gdrdiag.hw import verbs_soft_wire

            self._wire = verbs_soft_wire.WireListener(self)
            self.gid = verbs_soft_wire.gid_for(self._wire.port)
        with _lock:
            _live["Device"] += 1

    def _qp_here(self, qp_num: int) -> Optional[SoftQP]:
        """The QP ``qp_num`` of this device (for the wire's responder), or None."""
        with _lock:
            return _fabric.get((self.gid, qp_num))

    def _wire_store(self, mr: SoftMR, offset: int, data: Any, n: int) -> bool:
        """Copy ``n`` bytes of ``data`` into ``mr`` at ``offset`` while it is still registered (wire)."""
        import ctypes

        with _lock:
            if self._by_rkey.get(mr.rkey) is not mr or not 0 <= offset <= mr.length - n:
                return False
            ctypes.memmove(mr.va + offset, (ctypes.c_char * n).from_buffer(data), n)
        return True

    def _next_key(self) -> int:
        return next(self._keys) & 0xFFFFFFFF

    def port_info(self) -> v.PortInfo:
        return v.PortInfo(
            self.name, 1, v.PORT_ACTIVE, self.lid, self.gid, 0, "soft", self.mtu, self.max_msg_size
        )

    def limits(self) -> v.DeviceLimits:
        return self._limits

    def alloc_pd(self) -> SoftPD:
        self._check_open()
        return SoftPD(self)

    def create_cq(self, depth: int) -> SoftCQ:
        self._check_open()
        return SoftCQ(self, depth)

    def _destroy(self) -> None:
        if self._wire is not None:
            self._wire.close()
        with _lock:
            _live["Device"] -= 1


def soft_facts(dev: SoftDevice) -> dict[str, Any]:
    """The soft device described like :func:`gdrdiag.hw.verbs.device_facts` (for reports)."""
    lim = dev.limits()
    return {
        "name": dev.name,
        "provider": "soft",
        "max_qp": lim.max_qp,
        "max_qp_wr": lim.max_qp_wr,
        "max_cqe": lim.max_cqe,
        "max_mr_size": lim.max_mr_size,
        "copy": dev.copy,
        "ports": [
            {
                "port": 1,
                "state": v.PORT_ACTIVE,
                "lid": dev.lid,
                "gids": [{"index": 0, "gid": dev.gid}],
                "active_mtu_bytes": dev.mtu,
            }
        ],
    }
