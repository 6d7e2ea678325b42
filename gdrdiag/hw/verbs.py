"""The RDMA provider interface the benches use, and its pyverbs implementation.

Two providers implement one interface (``Device`` -> ``PD`` / ``CQ`` -> ``MR`` / ``QP``):

- ``pyverbs``: rdma-core's Python bindings over libibverbs, i.e. a real HCA. Imported lazily,
  so a machine without pyverbs (or without an RDMA device) reports "no RDMA devices" instead
  of failing at import.
- ``soft`` (:mod:`gdrdiag.hw.verbs_soft`): the same interface in software, moving real bytes
  and enforcing keys, access flags, bounds and QP states; see that module.

Numeric values of flags, opcodes, states and completion statuses are libibverbs' ABI
(``infiniband/verbs.h``); they are the same in every rdma-core release. Where pyverbs exposes
an enum we resolve it (``pyverbs.libibverbs_enums`` from rdma-core v59, ``pyverbs.enums``
before) and fall back to the ABI value, so both layouts work.

Lifetime: every object is a context manager with an idempotent ``close()``. A parent keeps
its children and closes them first (QPs and MRs before the PD, the PD and CQs before the
device), so any exit path, Ctrl-C included, releases everything in the right order. An MR is
always closed before the memory under it (the caller's ``Buffer``) is freed.
"""

from __future__ import annotations

import enum
import errno
import os
import socket
import weakref
from dataclasses import dataclass
from typing import Any, Iterable, Optional, Sequence

from gdrdiag.errors import GdrdiagError, HardwareError, NotSupported, UserInputError

PROVIDERS = ("auto", "pyverbs", "native", "soft")

# -- libibverbs ABI values ---------------------------------------------------------------------

#: ``ibv_access_flags`` by the names users type (``--access``).
ACCESS_FLAGS: dict[str, int] = {
    "local_write": 1 << 0,
    "remote_write": 1 << 1,
    "remote_read": 1 << 2,
    "remote_atomic": 1 << 3,
    "mw_bind": 1 << 4,
    "zero_based": 1 << 5,
    "on_demand": 1 << 6,
    "hugetlb": 1 << 7,
    "flush_global": 1 << 8,
    "flush_persistent": 1 << 9,
    "relaxed_ordering": 1 << 20,  # IBV_ACCESS_OPTIONAL_FIRST
}
ACCESS_LOCAL_WRITE = ACCESS_FLAGS["local_write"]
ACCESS_REMOTE_WRITE = ACCESS_FLAGS["remote_write"]
ACCESS_REMOTE_READ = ACCESS_FLAGS["remote_read"]
ACCESS_RELAXED_ORDERING = ACCESS_FLAGS["relaxed_ordering"]
#: Optional access flags (bits 20..29): libibverbs drops them silently where the kernel lacks
#: optional-MR-access support, and registration still succeeds (diagnostics-kb RO-04).
ACCESS_OPTIONAL_RANGE = ((1 << 10) - 1) << 20

WR_RDMA_WRITE = 0
WR_RDMA_WRITE_WITH_IMM = 1
SEND_SIGNALED = 1 << 1
QPT_RC = 2
PORT_ACTIVE = 4
LINK_LAYER = {0: "unspecified", 1: "InfiniBand", 2: "Ethernet"}
MTU_ENUM = {256: 1, 512: 2, 1024: 3, 2048: 4, 4096: 5}
MTU_BYTES = {v: k for k, v in MTU_ENUM.items()}
QP_ATTR_STATE = 1  # IBV_QP_STATE in ibv_qp_attr_mask


class QpState(enum.IntEnum):
    """``ibv_qp_state``."""

    RESET = 0
    INIT = 1
    RTR = 2
    RTS = 3
    SQD = 4
    SQE = 5
    ERR = 6


class WcStatus(enum.IntEnum):
    """``ibv_wc_status`` (the ones an RC RDMA WRITE can produce, plus the rest by number)."""

    SUCCESS = 0
    LOC_LEN_ERR = 1
    LOC_QP_OP_ERR = 2
    LOC_EEC_OP_ERR = 3
    LOC_PROT_ERR = 4
    WR_FLUSH_ERR = 5
    MW_BIND_ERR = 6
    BAD_RESP_ERR = 7
    LOC_ACCESS_ERR = 8
    REM_INV_REQ_ERR = 9
    REM_ACCESS_ERR = 10
    REM_OP_ERR = 11
    RETRY_EXC_ERR = 12
    RNR_RETRY_EXC_ERR = 13
    LOC_RDD_VIOL_ERR = 14
    REM_INV_RD_REQ_ERR = 15
    REM_ABORT_ERR = 16
    INV_EECN_ERR = 17
    INV_EEC_STATE_ERR = 18
    FATAL_ERR = 19
    RESP_TIMEOUT_ERR = 20
    GENERAL_ERR = 21


class WcOpcode(enum.IntEnum):
    """``ibv_wc_opcode`` values the benches see."""

    RDMA_WRITE = 1
    RECV_RDMA_WITH_IMM = 129


#: What each error status means for an RDMA WRITE, in words a user can act on.
WC_STATUS_ADVICE: dict[int, str] = {
    WcStatus.LOC_LEN_ERR: "the local scatter/gather length is invalid (longer than the port's "
    "max message size, or than the receive buffer)",
    WcStatus.LOC_QP_OP_ERR: "the local QP could not execute the work request (bad opcode or state)",
    WcStatus.LOC_PROT_ERR: "the local buffer is not covered by a valid MR of this PD (wrong lkey, "
    "or the address range falls outside the MR)",
    WcStatus.WR_FLUSH_ERR: "the QP was already in the ERROR state; this work request was flushed, "
    "look at the first failed completion for the cause",
    WcStatus.LOC_ACCESS_ERR: "the local MR does not allow this access",
    WcStatus.REM_INV_REQ_ERR: "the peer rejected the request as invalid (length or opcode)",
    WcStatus.REM_ACCESS_ERR: "the remote MR does not allow this access: it was registered without "
    "remote_write, the rkey is wrong, or the address range falls outside it",
    WcStatus.REM_OP_ERR: "the peer failed to execute the operation",
    WcStatus.RETRY_EXC_ERR: "transport retry counter exceeded: the peer did not answer (peer process "
    "gone, link down, wrong GID/LID or QP number)",
    WcStatus.RNR_RETRY_EXC_ERR: "receiver not ready: the peer had no receive posted for a WRITE_WITH_IMM",
    WcStatus.FATAL_ERR: "fatal device error",
    WcStatus.GENERAL_ERR: "general device error",
}


def status_name(status: int) -> str:
    """``IBV_WC_REM_ACCESS_ERR`` style name of a completion status."""
    try:
        return f"IBV_WC_{WcStatus(status).name}"
    except ValueError:
        return f"IBV_WC_STATUS_{status}"


# -- access flag names --------------------------------------------------------------------------


def parse_access(names: Iterable[str] | str) -> int:
    """Turn flag names (``"local_write,remote_write"`` or a list) into an access mask.

    Accepts ``ibv_access_flags`` names with or without the ``IBV_ACCESS_`` prefix, any case,
    ``-`` or ``_``. Unknown names raise :class:`UserInputError` listing the known ones.
    """
    if isinstance(names, str):
        names = [n for n in names.split(",")]
    mask = 0
    for raw in names:
        name = raw.strip().lower().replace("-", "_")
        if name.startswith("ibv_access_"):
            name = name[len("ibv_access_") :]
        if not name:
            continue
        if name not in ACCESS_FLAGS:
            allowed = ", ".join(ACCESS_FLAGS)
            raise UserInputError(f"unknown access flag {raw.strip()!r} (known: {allowed})")
        mask |= ACCESS_FLAGS[name]
    return mask


def access_names(mask: int) -> list[str]:
    """The names of the flags set in ``mask`` (unknown bits as hex)."""
    out = [name for name, bit in ACCESS_FLAGS.items() if mask & bit]
    rest = mask & ~sum(ACCESS_FLAGS.values())
    if rest:
        out.append(hex(rest))
    return out


# -- plain data the providers exchange ------------------------------------------------------------


@dataclass(frozen=True)
class PortInfo:
    """One port as the benches need it."""

    device: str
    port: int
    state: int
    lid: int
    gid: str
    gid_index: int
    link_layer: str
    active_mtu: int  # bytes
    max_msg_size: int


@dataclass(frozen=True)
class DeviceLimits:
    """The device limits mr-bench checks user input against."""

    max_qp: int
    max_qp_wr: int
    max_cqe: int
    max_mr_size: int
    max_sge: int


@dataclass(frozen=True)
class QpInfo:
    """What a peer needs to connect an RC QP to ours (exchanged over TCP in two-machine mode)."""

    qp_num: int
    psn: int
    lid: int
    gid: str
    mtu: int  # bytes

    def to_json(self) -> dict:
        """JSON-able dict."""
        return {"qp_num": self.qp_num, "psn": self.psn, "lid": self.lid, "gid": self.gid, "mtu": self.mtu}

    @classmethod
    def from_json(cls, d: dict) -> "QpInfo":
        """Parse what :meth:`to_json` wrote; raises ``ValueError`` on bad input."""
        try:
            info = cls(int(d["qp_num"]), int(d["psn"]), int(d["lid"]), str(d["gid"]), int(d["mtu"]))
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"bad QP info {d!r:.120}: {exc}") from None
        if not (0 < info.qp_num < 1 << 24 and 0 <= info.psn < 1 << 24 and info.mtu in MTU_ENUM):
            raise ValueError(f"bad QP info {d!r:.120}")
        return info


@dataclass(frozen=True)
class WriteWR:
    """One RDMA WRITE (with immediate when ``imm`` is not None), one scatter/gather entry."""

    wr_id: int
    local_addr: int
    length: int
    lkey: int
    remote_addr: int
    rkey: int
    signaled: bool = True
    imm: Optional[int] = None


@dataclass(frozen=True)
class Completion:
    """A work completion."""

    wr_id: int
    status: int
    opcode: int
    byte_len: int
    qp_num: int
    imm: Optional[int] = None
    vendor_err: int = 0

    @property
    def ok(self) -> bool:
        """True for IBV_WC_SUCCESS."""
        return self.status == WcStatus.SUCCESS

    @property
    def status_name(self) -> str:
        """Symbolic status name."""
        return status_name(self.status)


class CompletionError(GdrdiagError):
    """A work request completed with an error status; the message says what it means."""

    def __init__(self, completion: Completion, what: str = "RDMA WRITE"):
        self.completion = completion
        advice = WC_STATUS_ADVICE.get(completion.status, "")
        detail = f": {advice}" if advice else ""
        vendor = f", vendor_err 0x{completion.vendor_err:x}" if completion.vendor_err else ""
        super().__init__(
            f"{what} on QP {completion.qp_num} completed with {completion.status_name}{vendor}{detail}"
        )


# -- the interface ---------------------------------------------------------------------------------


class Resource:
    """Base of every verbs object: context manager, idempotent close, children closed first."""

    def __init__(self, parent: Optional["Resource"] = None):
        self._children: list[weakref.ref] = []
        self._closed = False
        self.parent = parent
        if parent is not None:
            parent._children.append(weakref.ref(self))

    def close(self) -> None:
        """Release this object and, first, everything created from it (idempotent)."""
        if self._closed:
            return
        self._closed = True
        first_error: Optional[BaseException] = None
        for ref in reversed(self._children):
            child = ref()
            if child is not None:
                try:
                    child.close()
                except Exception as exc:  # keep closing the rest; report the first failure
                    first_error = first_error or exc
        self._children.clear()
        try:
            self._destroy()
        finally:
            if first_error is not None:
                raise first_error

    def _destroy(self) -> None:
        """Free the underlying object (called once)."""

    @property
    def closed(self) -> bool:
        """True once closed."""
        return self._closed

    def _check_open(self) -> None:
        if self._closed:
            raise GdrdiagError(f"{type(self).__name__} is closed")

    def __enter__(self):
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


class MR(Resource):
    """A registered memory region.

    ``addr`` is the address this MR's bytes are named by in SGEs and by the peer: the virtual
    address for ``ibv_reg_mr``, the IOVA (= dma-buf offset) for a dma-buf MR. ``access`` is
    what was requested; optional flags may have been dropped by the stack without notice.
    """

    provider = ""
    lkey: int
    rkey: int
    addr: int
    length: int
    access: int
    reg_path: str  # "mr" or "dmabuf"


class CQ(Resource):
    """A completion queue."""

    depth: int

    def poll(self, max_entries: int = 16) -> list[Completion]:
        """Up to ``max_entries`` completions, without blocking."""
        raise NotImplementedError


class PreparedWrites:
    """A list of work requests built once and posted many times (like perftest's WR lists)."""

    wrs: tuple[WriteWR, ...]

    def __len__(self) -> int:
        return len(self.wrs)


class QP(Resource):
    """An RC queue pair."""

    qp_num: int
    psn: int
    state: QpState
    max_send_wr: int

    def info(self) -> QpInfo:
        """What the peer needs to connect to this QP."""
        raise NotImplementedError

    def to_init(self, access: int) -> None:
        """RESET -> INIT, allowing ``access`` (remote_write ...) on incoming requests."""
        raise NotImplementedError

    def to_rtr(self, remote: QpInfo) -> None:
        """INIT -> RTR, connected to ``remote``."""
        raise NotImplementedError

    def to_rts(self) -> None:
        """RTR -> RTS."""
        raise NotImplementedError

    def to_error(self) -> None:
        """Move to ERROR: outstanding and later work requests complete with WR_FLUSH_ERR."""
        raise NotImplementedError

    def connect(self, remote: QpInfo, access: int) -> None:
        """RESET -> INIT -> RTR -> RTS in one call."""
        self.to_init(access)
        self.to_rtr(remote)
        self.to_rts()

    def prepare(self, wrs: Sequence[WriteWR]) -> PreparedWrites:
        """Build a post list once; post it with :meth:`post` as often as needed."""
        raise NotImplementedError

    def post(self, prepared: PreparedWrites) -> None:
        """Post a prepared list (one ``ibv_post_send``)."""
        raise NotImplementedError

    def post_writes(self, wrs: Sequence[WriteWR]) -> None:
        """Prepare and post a list once."""
        p = self.prepare(wrs)
        try:
            self.post(p)
        finally:
            close = getattr(p, "close", None)
            if close:
                close()

    def post_recv(self, count: int, mr: MR, wr_id: int = 0) -> None:
        """Post ``count`` zero-length receives (consumed by incoming WRITE_WITH_IMM)."""
        raise NotImplementedError


class PD(Resource):
    """A protection domain: MRs and QPs live in one."""

    def reg_mr(self, addr: int, length: int, access: int, *, gpu: bool = False) -> MR:
        """Register ``length`` bytes at ``addr`` (``ibv_reg_mr``). ``gpu``: the range is CUDA memory."""
        raise NotImplementedError

    def reg_dmabuf_mr(
        self, fd: int, offset: int, length: int, access: int, *, dmabuf_va: int, gpu: bool = True
    ) -> MR:
        """Register ``length`` bytes at ``offset`` of dma-buf ``fd``; the MR's IOVA is ``offset``.

        ``dmabuf_va`` is the CUDA virtual address where the dma-buf starts and ``gpu`` says it is
        CUDA memory; libibverbs needs neither, the soft provider uses them to find the bytes.
        """
        raise NotImplementedError

    def create_rc_qp(
        self, cq: CQ, *, max_send_wr: int, max_recv_wr: int = 1, recv_cq: Optional[CQ] = None
    ) -> QP:
        """Create an RC QP in RESET."""
        raise NotImplementedError


class Device(Resource):
    """An opened device and port."""

    provider = ""
    name: str
    port: int
    gid_index: int

    def port_info(self) -> PortInfo:
        """The port's state, addresses and MTU."""
        raise NotImplementedError

    def limits(self) -> DeviceLimits:
        """Device limits (max QPs, WRs, CQEs, MR size)."""
        raise NotImplementedError

    def alloc_pd(self) -> PD:
        """Allocate a protection domain."""
        raise NotImplementedError

    def create_cq(self, depth: int) -> CQ:
        """Create a completion queue of ``depth`` entries."""
        raise NotImplementedError


def provider_choice(name: str) -> tuple[str, str]:
    """(provider, why the provider was chosen, in words).

    ``auto`` -> ``native`` where its C library built and a device exists, else ``pyverbs``;
    anything not in PROVIDERS is a UserInputError.
    """
    n = (name or "auto").strip().lower()
    if n not in PROVIDERS:
        raise UserInputError(f"unknown provider {name!r} (choose from: {', '.join(PROVIDERS)})")
    if n != "auto":
        return n, f"--provider {n}"
    from gdrdiag.hw import verbs_native

    return verbs_native.auto_choice()


def resolve_provider(name: str) -> str:
    """The provider ``name`` means here (see :func:`provider_choice`)."""
    return provider_choice(name)[0]


def open_device(
    provider: str,
    name: Optional[str] = None,
    port: int = 1,
    gid_index: Optional[int] = None,
    **soft_options: Any,
) -> Device:
    """Open ``name`` (first device with an active ``port`` when None) through ``provider``."""
    p = resolve_provider(provider)
    if p == "soft":
        from gdrdiag.hw import verbs_soft

        return verbs_soft.SoftDevice(name or "soft0", port=port, gid_index=gid_index or 0, **soft_options)
    if p == "native":
        from gdrdiag.hw import verbs_native

        return verbs_native.NativeDevice(name, port=port, gid_index=gid_index, **soft_options)
    return PyverbsDevice(name, port=port, gid_index=gid_index)


# -- pyverbs -----------------------------------------------------------------------------------------


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


def _enum(cls_name: str, member: str, default: int) -> int:
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


def _why_no_devices() -> str:
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
            f"no RDMA devices: libibverbs could not list devices ({exc}); {_why_no_devices()}"
        ) from None
    names = [d.name.decode() if isinstance(d.name, bytes) else str(d.name) for d in devices]
    if not names:
        raise NotSupported(f"no RDMA devices: libibverbs lists none; {_why_no_devices()}")
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


def _verbs_error(exc: BaseException, call: str, what: str = "", *, gpu: bool = False) -> Exception:
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
            raise _verbs_error(exc, "ibv_create_cq", f"depth {depth}") from None
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
            qp_type=_enum("ibv_qp_type", "IBV_QPT_RC", QPT_RC),
            scq=cq._obj,
            rcq=(recv_cq or cq)._obj,
            cap=cap,
            sq_sig_all=0,
        )
        try:
            self._obj = PvQP(pd._obj, init)
        except PyverbsError as exc:
            raise _verbs_error(exc, "ibv_create_qp", f"RC, max_send_wr {max_send_wr}") from None
        self.qp_num = int(self._obj.qp_num)
        self.psn = int.from_bytes(os.urandom(3), "little")
        self.state = QpState.RESET
        self.max_send_wr = max_send_wr
        self._remote: Optional[QpInfo] = None

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
            raise _verbs_error(exc, "ibv_modify_qp", "RESET->INIT") from None
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
        try:
            self._obj.to_rtr(attr)
        except PyverbsError as exc:
            raise _verbs_error(exc, "ibv_modify_qp", "INIT->RTR") from None
        self.state = QpState.RTR

    def to_rts(self) -> None:
        from pyverbs.pyverbs_error import PyverbsError

        attr = self._attr()
        attr.timeout = 14
        attr.retry_cnt = 7
        attr.rnr_retry = 7
        attr.sq_psn = self.psn
        attr.max_rd_atomic = 1
        try:
            self._obj.to_rts(attr)
        except PyverbsError as exc:
            raise _verbs_error(exc, "ibv_modify_qp", "RTR->RTS") from None
        self.state = QpState.RTS

    def to_error(self) -> None:
        from pyverbs.pyverbs_error import PyverbsError
        from pyverbs.qp import QPAttr

        attr = QPAttr(qp_state=int(QpState.ERR))
        try:
            self._obj.modify(attr, QP_ATTR_STATE)
        except PyverbsError as exc:
            raise _verbs_error(exc, "ibv_modify_qp", "->ERR") from None
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
            raise _verbs_error(exc, "ibv_post_send", f"QP {self.qp_num} in {self.state.name}") from None

    def post_recv(self, count: int, mr: MR, wr_id: int = 0) -> None:
        from pyverbs.pyverbs_error import PyverbsError
        from pyverbs.wr import SGE, RecvWR

        sge = SGE(mr.addr, 0, mr.lkey)
        wr = RecvWR(wr_id=wr_id, num_sge=1, sg=[sge])
        try:
            for _ in range(count):
                self._obj.post_recv(wr, None)
        except PyverbsError as exc:
            raise _verbs_error(exc, "ibv_post_recv") from None

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
            raise _verbs_error(exc, "ibv_alloc_pd") from None

    def reg_mr(self, addr: int, length: int, access: int, *, gpu: bool = False) -> MR:
        from pyverbs.mr import MR as PvMR
        from pyverbs.pyverbs_error import PyverbsError

        if not addr:
            raise UserInputError("cannot register address 0")
        try:
            obj = PvMR(self._obj, length, access, address=addr)
        except PyverbsError as exc:
            raise _verbs_error(
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
            raise _verbs_error(
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
            raise _verbs_error(exc, "ibv_open_device", name) from None
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
                raise _verbs_error(exc, "ibv_query_port", f"{name} port {port}") from None
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
                v2 = int(self._ctx.query_gid_type(self.port, idx)) == _enum(
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


def device_facts(name: str) -> dict:
    """Plain JSON-able facts about one device and its ports (for ``inspect``).

    Raises NotSupported when pyverbs or the device is missing. Values are ints/strings; a
    field the device would not report is absent, never 0.
    """
    names = list_device_names()
    if name not in names:
        raise NotSupported(f"RDMA device {name!r} not found (devices: {', '.join(names)})")
    from pyverbs.device import Context
    from pyverbs.pyverbs_error import PyverbsError

    facts: dict[str, Any] = {"name": name}
    try:
        ctx = Context(name=name)
    except PyverbsError as exc:
        raise _verbs_error(exc, "ibv_open_device", name) from None
    with ctx:
        a = ctx.query_device()
        for field in (
            "fw_version",
            "node_guid",
            "sys_image_guid",
            "vendor_id",
            "vendor_part_id",
            "hw_ver",
            "max_qp",
            "max_qp_wr",
            "max_cq",
            "max_cqe",
            "max_mr",
            "max_mr_size",
            "max_pd",
            "max_sge",
            "phys_port_cnt",
            "device_cap_flags",
        ):
            value = getattr(a, field, None)
            if value is None:
                continue
            if isinstance(value, bytes):
                value = value.decode(errors="replace").rstrip("\0")
            facts[field] = value if isinstance(value, str) else int(value)
        ports = []
        for p in range(1, int(a.phys_port_cnt) + 1):
            pa = ctx.query_port(p)
            port: dict[str, Any] = {"port": p}
            for field in (
                "state",
                "phys_state",
                "max_mtu",
                "active_mtu",
                "lid",
                "sm_lid",
                "link_layer",
                "active_width",
                "active_speed",
                "gid_tbl_len",
                "max_msg_sz",
                "port_cap_flags",
            ):
                value = getattr(pa, field, None)
                if value is not None:
                    port[field] = int(value)
            port["link_layer_name"] = LINK_LAYER.get(port.get("link_layer", 0), "unknown")
            for k in ("max_mtu", "active_mtu"):
                if k in port:
                    port[f"{k}_bytes"] = MTU_BYTES.get(port[k])
            gids = []
            for idx in range(int(pa.gid_tbl_len)):
                try:
                    gid = str(ctx.query_gid(p, idx))
                except Exception:
                    continue
                if not int(gid.replace(":", "") or "0", 16):
                    continue
                entry: dict[str, Any] = {"index": idx, "gid": gid}
                try:
                    entry["type"] = int(ctx.query_gid_type(p, idx))
                except Exception:
                    pass
                gids.append(entry)
            port["gids"] = gids
            ports.append(port)
        facts["ports"] = ports
    return facts


def dmabuf_probe(name: str) -> str:
    """Whether this device can register dma-buf MRs (diagnostics-kb GPU-12, the NCCL/UCX probe).

    Calls ``ibv_reg_dmabuf_mr`` with fd -1: EOPNOTSUPP/EPROTONOSUPPORT mean the kernel or provider
    lacks dma-buf MRs (raised as NotSupported); any other error (EBADF is typical) means the path
    exists and only the fd was bad. Returns a one-line description of the outcome.
    """
    names = list_device_names()
    if name not in names:
        raise NotSupported(f"RDMA device {name!r} not found (devices: {', '.join(names)})")
    from pyverbs.device import Context
    from pyverbs.pd import PD as PvPD
    from pyverbs.pyverbs_error import PyverbsError

    try:
        from pyverbs.mr import DmaBufMR
    except ImportError:
        raise NotSupported("this pyverbs has no DmaBufMR (rdma-core < v34)") from None
    try:
        ctx = Context(name=name)
    except PyverbsError as exc:
        raise _verbs_error(exc, "ibv_open_device", name) from None
    with ctx, PvPD(ctx) as pd:
        try:
            mr = DmaBufMR(pd, 0, 0, dmabuf=-1, offset=0)
        except TypeError:
            too_old = "this pyverbs' DmaBufMR cannot take an fd (needs rdma-core >= v44)"
            raise NotSupported(too_old) from None
        except PyverbsError as exc:
            code = int(getattr(exc, "error_code", -1) or -1)
            if code in (errno.EOPNOTSUPP, errno.EPROTONOSUPPORT):
                why = f"ibv_reg_dmabuf_mr: {errno.errorcode[code]}: the kernel or provider has no dma-buf MRs"
                raise NotSupported(f"{why} (kernel >= 5.12 and rdma-core >= v34 needed)") from None
            return (f"supported: ibv_reg_dmabuf_mr(fd=-1) failed with "
                    f"{errno.errorcode.get(code, str(code))}, i.e. only the fd was rejected")
        mr.close()
        return "supported: ibv_reg_dmabuf_mr(fd=-1) unexpectedly succeeded"


# -- CUDA dma-buf export (the `dmabuf` registration path) ----------------------------------------


@dataclass(frozen=True)
class DmabufExport:
    """A dma-buf fd covering ``[base_va, base_va + span)``; the buffer starts ``offset`` bytes in."""

    fd: int
    base_va: int
    span: int
    offset: int


def export_cuda_dmabuf(ptr: int, nbytes: int, page: int = 64 * 1024) -> DmabufExport:
    """Export the GPU pages under ``[ptr, ptr + nbytes)`` as a dma-buf fd.

    ``cuMemGetHandleForAddressRange`` needs a host-page aligned range; we round out to the
    64 KiB GPU page that GPUDirect pins, so the caller's allocation must extend that far.
    The caller closes ``fd`` (after registering: the MR keeps its own reference).
    """
    from gdrdiag.hw import cuda

    drv = cuda.driver()
    base = ptr - ptr % page
    end = -(-(ptr + nbytes) // page) * page
    try:
        fd = cuda.call(
            "cuMemGetHandleForAddressRange",
            base,
            end - base,
            drv.CUmemRangeHandleType.CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD,
            0,
        )
    except HardwareError as exc:
        if exc.name in ("CUDA_ERROR_NOT_SUPPORTED", "CUDA_ERROR_INVALID_VALUE"):
            raise NotSupported(
                f"CUDA cannot export this range as a dma-buf ({exc.name}): needs "
                f"DMA_BUF_SUPPORTED, the open NVIDIA kernel module and a CUDA >= 11.7 "
                f"driver"
            ) from None
        raise
    return DmabufExport(int(fd), base, end - base, ptr - base)
