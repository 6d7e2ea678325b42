"""The pyverbs provider: rdma-core's Python bindings over libibverbs, i.e. a real HCA.

Imported lazily, so a machine without pyverbs (or without an RDMA device) reports "no RDMA devices"
instead of failing at import. Where pyverbs exposes an enum we resolve it (``pyverbs.libibverbs_enums``
from rdma-core v59, ``pyverbs.enums`` before) and fall back to the ABI value, so both layouts work.
"""

from __future__ import annotations

import errno
import os
import socket
from typing import Any, Optional, Sequence

from gdrdiag.errors import HardwareError, NotSupported, UserInputError
from gdrdiag.hw.verbs import (
    ACCESS_FLAGS,
    ACCESS_LOCAL_WRITE,
    ACCESS_REMOTE_READ,
    ACCESS_REMOTE_WRITE,
    CQ,
    LINK_LAYER,
    MR,
    MTU_BYTES,
    MTU_ENUM,
    PD,
    PORT_ACTIVE,
    QP,
    QP_ATTR_CAP,
    QP_ATTR_STATE,
    QPT_RC,
    RC_RTR_MASK,
    RC_RTS_MASK,
    SEND_SIGNALED,
    WR_RDMA_WRITE,
    WR_RDMA_WRITE_WITH_IMM,
    Completion,
    Device,
    DeviceLimits,
    PortInfo,
    PreparedWrites,
    QpInfo,
    QpState,
    WriteWR,
    access_names,
)


def _pyverbs() -> Any:
    """Import pyverbs lazily; its absence means "no RDMA devices", not a crash."""
    try:
        import pyverbs.device  # noqa: F401
        import pyverbs.pyverbs_error  # noqa: F401
    except ImportError as exc:
        raise NotSupported(
            f"no RDMA devices: pyverbs (rdma-core's python3-pyverbs) is not installed ({exc})"
        ) from None
    import pyverbs

    return pyverbs


def ibv_enum(cls_name: str, member: str, default: int) -> int:
    """An ibverbs enum value from pyverbs (v59+ ``libibverbs_enums`` or older ``enums``)."""
    for mod_name in ("pyverbs.libibverbs_enums", "pyverbs.enums"):
        try:
            mod = __import__(mod_name, fromlist=["_"])
        except ImportError:
            continue
        cls = getattr(mod, cls_name, None)
        value = getattr(cls, member, None) if cls is not None else None
        if value is None:
            value = getattr(mod, member, None)
        if value is not None:
            return int(value)
    return default


def why_no_devices() -> str:
    if not os.path.isdir("/sys/class/infiniband"):
        return (
            "the kernel exposes no /sys/class/infiniband: no RDMA driver is loaded or the "
            "kernel has no InfiniBand/RDMA support"
        )
    try:
        entries = os.listdir("/sys/class/infiniband")
    except OSError as exc:
        return f"/sys/class/infiniband is unreadable ({exc.strerror})"
    if not entries:
        return "/sys/class/infiniband is empty: no RDMA NIC is bound to an RDMA driver"
    if not os.path.isdir("/dev/infiniband"):
        return f"{', '.join(entries)} present but /dev/infiniband is missing (ib_uverbs not loaded?)"
    return f"{', '.join(entries)} present but libibverbs could not open them (missing provider library?)"


def list_device_names() -> list[str]:
    """Names of the RDMA devices libibverbs sees; NotSupported("no RDMA devices: <why>") if none."""
    _pyverbs()
    import pyverbs.device as pd_dev
    from pyverbs.pyverbs_error import PyverbsError

    try:
        devices = pd_dev.get_device_list()
    except PyverbsError as exc:
        raise NotSupported(
            f"no RDMA devices: libibverbs could not list devices ({exc}); {why_no_devices()}"
        ) from None
    names = [d.name.decode() if isinstance(d.name, bytes) else str(d.name) for d in devices]
    if not names:
        raise NotSupported(f"no RDMA devices: libibverbs lists none; {why_no_devices()}")
    return names


def _peermem_loaded() -> bool:
    return any(
        os.path.exists(p)
        for p in ("/sys/module/nvidia_peermem", "/sys/kernel/mm/memory_peers/nv_mem/version")
    )


def _memlock_limit() -> str:
    try:
        import resource

        soft, _hard = resource.getrlimit(resource.RLIMIT_MEMLOCK)
        return "unlimited" if soft == resource.RLIM_INFINITY else f"{soft} bytes"
    except Exception:  # pragma: no cover - platform without RLIMIT_MEMLOCK
        return "unknown"


def verbs_error(exc: BaseException, call: str, what: str = "", *, gpu: bool = False) -> Exception:
    """Map a pyverbs exception to gdrdiag's tree, naming what is missing."""
    code = int(getattr(exc, "error_code", -1) or -1)
    name = errno.errorcode.get(code, "EUNKNOWN") if code > 0 else "error"
    ctx = f" ({what})" if what else ""
    if code in (errno.EOPNOTSUPP, errno.EPROTONOSUPPORT, getattr(errno, "ENOTSUP", errno.EOPNOTSUPP)):
        return NotSupported(f"{call}{ctx}: not supported by this device, driver or kernel ({name})")
    if code in (errno.EPERM, errno.EACCES):
        if call.startswith("ibv_reg"):
            hint = (
                f"registration needs locked memory: RLIMIT_MEMLOCK is {_memlock_limit()} "
                f"(raise `ulimit -l`, or run with CAP_IPC_LOCK)"
            )
        else:
            hint = "no permission on /dev/infiniband/uverbs* (add the user to the rdma group or run as root)"
        return HardwareError(call, code, name, hint)
    if gpu and call == "ibv_reg_mr" and code in (errno.EFAULT, errno.EINVAL, errno.ENOENT):
        if not _peermem_loaded():
            return NotSupported(
                f"ibv_reg_mr on GPU memory failed ({name}): nvidia-peermem is not "
                f"loaded (no /sys/module/nvidia_peermem); load it or use --reg dmabuf"
            )
        return HardwareError(
            call,
            code,
            name,
            "ibv_reg_mr on GPU memory failed although nvidia-peermem "
            "is loaded (BAR1 exhausted? try --reg dmabuf)",
        )
    if code == errno.ENOMEM and call.startswith("ibv_reg"):
        return HardwareError(
            call,
            code,
            name,
            f"out of memory or locked-memory limit (RLIMIT_MEMLOCK {_memlock_limit()}) reached",
        )
    if code > 0:
        return HardwareError(call, code, name, f"{os.strerror(code)}{ctx}")
    return HardwareError(call, -1, type(exc).__name__, f"{exc}{ctx}")


class _PyverbsMR(MR):
    provider = "pyverbs"

    def __init__(self, pd: "_PyverbsPD", obj: Any, addr: int, length: int, access: int, reg_path: str):
        super().__init__(pd)
        self._obj = obj
        self.lkey = int(obj.lkey)
        self.rkey = int(obj.rkey)
        self.addr = addr
        self.length = length
        self.access = access
        self.reg_path = reg_path

    def _destroy(self) -> None:
        obj, self._obj = self._obj, None
        if obj is not None:
            obj.close()


class _PyverbsCQ(CQ):
    def __init__(self, dev: "PyverbsDevice", depth: int):
        super().__init__(dev)
        from pyverbs.cq import CQ as PvCQ
        from pyverbs.pyverbs_error import PyverbsError

        try:
            self._obj = PvCQ(dev._ctx, depth, None, None, 0)
        except PyverbsError as exc:
            raise verbs_error(exc, "ibv_create_cq", f"depth {depth}") from None
        self.depth = depth

    def poll(self, max_entries: int = 16) -> list[Completion]:
        n, wcs = self._obj.poll(max_entries)
        out = []
        for wc in wcs[:n] if n >= 0 else []:
            imm = None
            if wc.wc_flags & 2:  # IBV_WC_WITH_IMM
                imm = socket.ntohl(int(wc.imm_data))
            out.append(
                Completion(
                    int(wc.wr_id),
                    int(wc.status),
                    int(wc.opcode),
                    int(wc.byte_len),
                    int(wc.qp_num),
                    imm,
                    int(getattr(wc, "vendor_err", 0) or 0),
                )
            )
        if n < 0:
            raise HardwareError("ibv_poll_cq", n, "EPOLL", "polling the CQ failed")
        return out

    def _destroy(self) -> None:
        obj, self._obj = self._obj, None
        if obj is not None:
            obj.close()


class _PyverbsPrepared(PreparedWrites):
    """A linked ibv_send_wr chain; keeps every SGE and WR object alive while posted."""

    def __init__(self, wrs: Sequence[WriteWR]):
        from pyverbs.wr import SGE, SendWR

        self.wrs = tuple(wrs)
        self._sges = []
        self._objs = []
        nxt = None
        for wr in reversed(self.wrs):
            sge = SGE(wr.local_addr, wr.length, wr.lkey)
            opcode = WR_RDMA_WRITE if wr.imm is None else WR_RDMA_WRITE_WITH_IMM
            kwargs: dict[str, Any] = dict(
                wr_id=wr.wr_id,
                opcode=opcode,
                num_sge=1,
                sg=[sge],
                send_flags=SEND_SIGNALED if wr.signaled else 0,
            )
            if wr.imm is not None:
                kwargs["imm_data"] = socket.htonl(wr.imm & 0xFFFFFFFF)
            if nxt is not None:
                kwargs["next_wr"] = nxt
            obj = SendWR(**kwargs)
            obj.set_wr_rdma(wr.rkey, wr.remote_addr)
            self._sges.append(sge)
            self._objs.append(obj)
            nxt = obj
        self.head = nxt

    def close(self) -> None:
        """Nothing to free explicitly: pyverbs frees the C structs with the objects."""


class _PyverbsQP(QP):
    def __init__(
        self,
        pd: "_PyverbsPD",
        cq: _PyverbsCQ,
        max_send_wr: int,
        max_recv_wr: int,
        recv_cq: Optional[_PyverbsCQ],
    ):
        super().__init__(pd)
        from pyverbs.pyverbs_error import PyverbsError
        from pyverbs.qp import QP as PvQP
        from pyverbs.qp import QPCap, QPInitAttr

        self._dev = pd._dev
        cap = QPCap(max_send_wr=max_send_wr, max_recv_wr=max_recv_wr, max_send_sge=1, max_recv_sge=1)
        init = QPInitAttr(
            qp_type=ibv_enum("ibv_qp_type", "IBV_QPT_RC", QPT_RC),
            scq=cq._obj,
            rcq=(recv_cq or cq)._obj,
            cap=cap,
            sq_sig_all=0,
        )
        try:
            self._obj = PvQP(pd._obj, init)
        except PyverbsError as exc:
            raise verbs_error(exc, "ibv_create_qp", f"RC, max_send_wr {max_send_wr}") from None
        self.qp_num = int(self._obj.qp_num)
        self.psn = int.from_bytes(os.urandom(3), "little")
        self.state = QpState.RESET
        self.max_send_wr = self._granted_send_wr(max_send_wr)
        self._remote: Optional[QpInfo] = None

    def _granted_send_wr(self, requested: int) -> int:
        """The send queue depth the device granted, which may exceed ``requested``.

        ibv_create_qp may round the capabilities up (rxe makes its queues a power of two
        minus one, so 16 becomes 31: kernel drivers/infiniband/sw/rxe/rxe_queue.c); what the
        QP really holds is what ibv_query_qp(IBV_QP_CAP) reports.
        """
        from pyverbs.pyverbs_error import PyverbsError

        try:
            attr, _init = self._obj.query(QP_ATTR_CAP)
            granted = int(attr.cap.max_send_wr)
        except (PyverbsError, AttributeError):
            return requested
        return granted if granted >= requested else requested

    def info(self) -> QpInfo:
        pi = self._dev.port_info()
        return QpInfo(self.qp_num, self.psn, pi.lid, pi.gid, pi.active_mtu)

    def _attr(self) -> Any:
        from pyverbs.qp import QPAttr

        return QPAttr(port_num=self._dev.port)

    def to_init(self, access: int) -> None:
        from pyverbs.pyverbs_error import PyverbsError

        attr = self._attr()
        attr.qp_access_flags = access & (
            ACCESS_LOCAL_WRITE | ACCESS_REMOTE_WRITE | ACCESS_REMOTE_READ | ACCESS_FLAGS["remote_atomic"]
        )
        attr.pkey_index = 0
        try:
            self._obj.to_init(attr)
        except PyverbsError as exc:
            raise verbs_error(exc, "ibv_modify_qp", "RESET->INIT") from None
        self.state = QpState.INIT

    def to_rtr(self, remote: QpInfo) -> None:
        from pyverbs.addr import GID, AHAttr, GlobalRoute
        from pyverbs.pyverbs_error import PyverbsError

        self._remote = remote
        attr = self._attr()
        mtu = min(self._dev.port_info().active_mtu, remote.mtu)
        attr.path_mtu = MTU_ENUM.get(mtu, MTU_ENUM[1024])
        attr.dest_qp_num = remote.qp_num
        attr.rq_psn = remote.psn
        attr.max_dest_rd_atomic = 1
        attr.min_rnr_timer = 12
        is_global = 1 if remote.gid and int(remote.gid.replace(":", "") or "0", 16) else 0
        gr = GlobalRoute(dgid=GID(val=remote.gid), sgid_index=self._dev.gid_index) if is_global else None
        kwargs: dict[str, Any] = dict(port_num=self._dev.port, is_global=is_global, dlid=remote.lid)
        if gr is not None:
            kwargs["gr"] = gr
        attr.ah_attr = AHAttr(**kwargs)
        attr.qp_state = int(QpState.RTR)
        # One ibv_modify_qp with the RTR attributes only. Not pyverbs' QP.to_rtr(): that helper
        # first moves a QP that is not in INIT to INIT itself, reusing this attr (access flags 0)
        # (rdma-core pyverbs/qp.pyx, QP.to_rtr: "if self.qp_state != IBV_QPS_INIT: #assume reset"),
        # so RESET->RTR silently succeeded instead of being refused. The kernel refuses it
        # (EINVAL, ib_modify_qp_is_ok) when asked directly, which is the state machine we model.
        try:
            self._obj.modify(attr, RC_RTR_MASK)
        except PyverbsError as exc:
            raise verbs_error(exc, "ibv_modify_qp", "INIT->RTR") from None
        self.state = QpState.RTR

    def to_rts(self) -> None:
        from pyverbs.pyverbs_error import PyverbsError

        attr = self._attr()
        attr.timeout = 14
        attr.retry_cnt = 7
        attr.rnr_retry = 7
        attr.sq_psn = self.psn
        attr.max_rd_atomic = 1
        attr.qp_state = int(QpState.RTS)
        # Directly, for the same reason as to_rtr: pyverbs' QP.to_rts() walks a QP that is not in
        # RTR through to_rtr()/to_init() first.
        try:
            self._obj.modify(attr, RC_RTS_MASK)
        except PyverbsError as exc:
            raise verbs_error(exc, "ibv_modify_qp", "RTR->RTS") from None
        self.state = QpState.RTS

    def to_error(self) -> None:
        from pyverbs.pyverbs_error import PyverbsError
        from pyverbs.qp import QPAttr

        attr = QPAttr(qp_state=int(QpState.ERR))
        try:
            self._obj.modify(attr, QP_ATTR_STATE)
        except PyverbsError as exc:
            raise verbs_error(exc, "ibv_modify_qp", "->ERR") from None
        self.state = QpState.ERR

    def prepare(self, wrs: Sequence[WriteWR]) -> PreparedWrites:
        if not wrs:
            raise UserInputError("an empty post list")
        return _PyverbsPrepared(wrs)

    def post(self, prepared: PreparedWrites) -> None:
        from pyverbs.pyverbs_error import PyverbsError

        try:
            self._obj.post_send(prepared.head, None)  # type: ignore[attr-defined]
        except PyverbsError as exc:
            code = int(getattr(exc, "error_code", -1) or -1)
            if code == errno.ENOMEM:
                raise HardwareError(
                    "ibv_post_send", code, "ENOMEM", f"send queue full (max_send_wr {self.max_send_wr})"
                ) from None
            raise verbs_error(exc, "ibv_post_send", f"QP {self.qp_num} in {self.state.name}") from None

    def post_recv(self, count: int, mr: MR, wr_id: int = 0) -> None:
        from pyverbs.pyverbs_error import PyverbsError
        from pyverbs.wr import SGE, RecvWR

        sge = SGE(mr.addr, 0, mr.lkey)
        wr = RecvWR(wr_id=wr_id, num_sge=1, sg=[sge])
        try:
            for _ in range(count):
                self._obj.post_recv(wr, None)
        except PyverbsError as exc:
            raise verbs_error(exc, "ibv_post_recv") from None

    def _destroy(self) -> None:
        obj, self._obj = self._obj, None
        if obj is not None:
            obj.close()


class _PyverbsPD(PD):
    def __init__(self, dev: "PyverbsDevice"):
        super().__init__(dev)
        from pyverbs.pd import PD as PvPD
        from pyverbs.pyverbs_error import PyverbsError

        self._dev = dev
        try:
            self._obj = PvPD(dev._ctx)
        except PyverbsError as exc:
            raise verbs_error(exc, "ibv_alloc_pd") from None

    def reg_mr(self, addr: int, length: int, access: int, *, gpu: bool = False) -> MR:
        from pyverbs.mr import MR as PvMR
        from pyverbs.pyverbs_error import PyverbsError

        if not addr:
            raise UserInputError("cannot register address 0")
        try:
            obj = PvMR(self._obj, length, access, address=addr)
        except PyverbsError as exc:
            raise verbs_error(
                exc, "ibv_reg_mr", f"{length} bytes, access {'|'.join(access_names(access))}", gpu=gpu
            ) from None
        return _PyverbsMR(self, obj, addr, length, access, "mr")

    def reg_dmabuf_mr(
        self, fd: int, offset: int, length: int, access: int, *, dmabuf_va: int, gpu: bool = True
    ) -> MR:
        from pyverbs.pyverbs_error import PyverbsError

        try:
            from pyverbs.mr import DmaBufMR
        except ImportError:
            raise NotSupported("this pyverbs has no DmaBufMR (rdma-core < v34)") from None
        try:
            obj = DmaBufMR(self._obj, length, access, dmabuf=fd, offset=offset)
        except TypeError:
            # rdma-core before v44 only accepted its own DmaBuf object, not a CUDA fd.
            raise NotSupported(
                "this pyverbs' DmaBufMR cannot take a CUDA dma-buf fd (needs rdma-core >= v44)"
            ) from None
        except PyverbsError as exc:
            raise verbs_error(
                exc, "ibv_reg_dmabuf_mr", f"{length} bytes at dma-buf offset {offset}", gpu=True
            ) from None
        # ibv_reg_dmabuf_mr was called with iova == offset: the MR is addressed from `offset`.
        return _PyverbsMR(self, obj, offset, length, access, "dmabuf")

    def create_rc_qp(
        self, cq: CQ, *, max_send_wr: int, max_recv_wr: int = 1, recv_cq: Optional[CQ] = None
    ) -> QP:
        return _PyverbsQP(self, cq, max_send_wr, max_recv_wr, recv_cq)  # type: ignore[arg-type]

    def _destroy(self) -> None:
        obj, self._obj = self._obj, None
        if obj is not None:
            obj.close()


class PyverbsDevice(Device):
    """A real device through pyverbs: ``Context`` + one port + one GID index."""

    provider = "pyverbs"

    def __init__(self, name: Optional[str] = None, *, port: int = 1, gid_index: Optional[int] = None):
        super().__init__(None)
        names = list_device_names()
        from pyverbs.device import Context
        from pyverbs.pyverbs_error import PyverbsError

        if name is None:
            name = self._first_active(names, port)
        elif name not in names:
            raise UserInputError(f"RDMA device {name!r} not found (devices: {', '.join(names)})")
        self.name = name
        self.port = port
        try:
            self._ctx = Context(name=name)
        except PyverbsError as exc:
            raise verbs_error(exc, "ibv_open_device", name) from None
        try:
            dev_attr = self._ctx.query_device()
            nports = int(dev_attr.phys_port_cnt)
            if not 1 <= port <= nports:
                raise UserInputError(f"{name} has no port {port} (ports 1..{nports})")
            self._port_attr = self._ctx.query_port(port)
            if int(self._port_attr.state) != PORT_ACTIVE:
                raise NotSupported(
                    f"port {port} of {name} is not ACTIVE "
                    f"(state {int(self._port_attr.state)}); check the cable/link"
                )
            self._dev_attr = dev_attr
            self.gid_index = self._pick_gid(gid_index)
            self._gid = str(self._ctx.query_gid(port, self.gid_index))
        except BaseException as exc:
            self._ctx.close()
            if isinstance(exc, PyverbsError):
                raise verbs_error(exc, "ibv_query_port", f"{name} port {port}") from None
            raise

    @staticmethod
    def _first_active(names: Sequence[str], port: int) -> str:
        from pyverbs.device import Context
        from pyverbs.pyverbs_error import PyverbsError

        for n in names:
            try:
                with Context(name=n) as ctx:
                    if int(ctx.query_port(port).state) == PORT_ACTIVE:
                        return n
            except PyverbsError:
                continue
        raise NotSupported(f"no RDMA device has port {port} ACTIVE (devices: {', '.join(names)})")

    def _pick_gid(self, requested: Optional[int]) -> int:
        tbl = int(self._port_attr.gid_tbl_len)
        if requested is not None:
            if not 0 <= requested < max(tbl, 1):
                raise UserInputError(f"GID index {requested} out of range (port table has {tbl})")
            return requested
        if int(self._port_attr.link_layer) != 2:  # InfiniBand: GID 0 is the port GID
            return 0
        # RoCE: prefer a RoCE v2 GID with an IPv4-mapped address, then any non-zero GID.
        best = None
        for idx in range(tbl):
            try:
                gid = str(self._ctx.query_gid(self.port, idx))
            except Exception:
                continue
            if not int(gid.replace(":", "") or "0", 16):
                continue
            try:
                v2 = int(self._ctx.query_gid_type(self.port, idx)) == ibv_enum(
                    "ibv_gid_type_sysfs", "IBV_GID_TYPE_SYSFS_ROCE_V2", 1
                )
            except Exception:
                v2 = False
            if v2 and gid.startswith("0000:0000:0000:0000:0000:ffff"):
                return idx
            if best is None:
                best = idx
        if best is None:
            raise NotSupported(
                f"port {self.port} of {self.name} has no usable GID (no IP address on the RoCE netdev?)"
            )
        return best

    def port_info(self) -> PortInfo:
        a = self._port_attr
        return PortInfo(
            self.name,
            self.port,
            int(a.state),
            int(a.lid),
            self._gid,
            self.gid_index,
            LINK_LAYER.get(int(a.link_layer), str(int(a.link_layer))),
            MTU_BYTES.get(int(a.active_mtu), 1024),
            int(a.max_msg_sz),
        )

    def limits(self) -> DeviceLimits:
        a = self._dev_attr
        return DeviceLimits(
            int(a.max_qp), int(a.max_qp_wr), int(a.max_cqe), int(a.max_mr_size), int(a.max_sge)
        )

    def alloc_pd(self) -> PD:
        self._check_open()
        return _PyverbsPD(self)

    def create_cq(self, depth: int) -> CQ:
        self._check_open()
        return _PyverbsCQ(self, depth)

    def _destroy(self) -> None:
        ctx, self._ctx = self._ctx, None
        if ctx is not None:
            ctx.close()
