"""The RDMA provider interface the benches use: ``Device`` -> ``PD`` / ``CQ`` -> ``MR`` / ``QP``.

Implementations, one module each (``verbs_providers.open_device`` picks one by name):

- ``pyverbs`` (:mod:`gdrdiag.hw.verbs_pyverbs`): rdma-core's Python bindings over libibverbs, i.e.
  a real HCA, imported lazily so a machine without it reports "no RDMA devices".
- ``soft`` (:mod:`gdrdiag.hw.verbs_soft`): the same interface in software, moving real bytes
  and enforcing keys, access flags, bounds and QP states; see that module.

Beside them: ``verbs_facts`` (what inspect reports per device) and ``verbs_dmabuf`` (CUDA memory as a
dma-buf fd for ``ibv_reg_dmabuf_mr``). This module imports none of them.

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
import weakref
from dataclasses import dataclass
from typing import Any, Optional, Sequence

from gdrdiag.errors import GdrdiagError
from gdrdiag.model.vocabulary import AccessFlags

PROVIDERS = ("auto", "pyverbs", "native", "soft")

# -- libibverbs ABI values ---------------------------------------------------------------------

#: ``ibv_access_flags`` bits by name (the typed values are model.AccessFlags; users' ``--access``
#: words are parsed in model/words.py): what the providers pass to libibverbs and name in messages.
ACCESS_FLAGS: dict[str, int] = {flag.name.lower(): int(flag) for flag in AccessFlags}  # type: ignore[union-attr]
ACCESS_LOCAL_WRITE = ACCESS_FLAGS["local_write"]
ACCESS_REMOTE_WRITE = ACCESS_FLAGS["remote_write"]
ACCESS_REMOTE_READ = ACCESS_FLAGS["remote_read"]
ACCESS_RELAXED_ORDERING = ACCESS_FLAGS["relaxed_ordering"]
#: Optional access flags (bits 20..29): libibverbs drops them silently where the kernel lacks
#: optional-MR-access support, and registration still succeeds (rdma-core libibverbs/verbs.c
#: ``ibv_reg_mr_iova2`` masks IBV_ACCESS_OPTIONAL_RANGE; https://github.com/linux-rdma/rdma-core).
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
# ``ibv_qp_attr_mask`` bits for the RC INIT->RTR and RTR->RTS transitions (infiniband/verbs.h).
QP_ATTR_AV = 1 << 7
QP_ATTR_PATH_MTU = 1 << 8
QP_ATTR_TIMEOUT = 1 << 9
QP_ATTR_RETRY_CNT = 1 << 10
QP_ATTR_RNR_RETRY = 1 << 11
QP_ATTR_RQ_PSN = 1 << 12
QP_ATTR_MAX_QP_RD_ATOMIC = 1 << 13
QP_ATTR_MIN_RNR_TIMER = 1 << 15
QP_ATTR_SQ_PSN = 1 << 16
QP_ATTR_MAX_DEST_RD_ATOMIC = 1 << 17
QP_ATTR_CAP = 1 << 19
QP_ATTR_DEST_QPN = 1 << 20
#: The attributes the kernel requires for RC INIT->RTR (IB spec table 91; ib_modify_qp_is_ok()).
RC_RTR_MASK = (
    QP_ATTR_STATE
    | QP_ATTR_AV
    | QP_ATTR_PATH_MTU
    | QP_ATTR_DEST_QPN
    | QP_ATTR_RQ_PSN
    | QP_ATTR_MAX_DEST_RD_ATOMIC
    | QP_ATTR_MIN_RNR_TIMER
)
#: ... and for RC RTR->RTS.
RC_RTS_MASK = (
    QP_ATTR_STATE
    | QP_ATTR_TIMEOUT
    | QP_ATTR_RETRY_CNT
    | QP_ATTR_RNR_RETRY
    | QP_ATTR_SQ_PSN
    | QP_ATTR_MAX_QP_RD_ATOMIC
)


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
    # Soft-RoCE completes a WQE it cannot turn into a packet with LOC_QP_OP_ERR (rxe_req.c): a
    # local lkey that names no MR (HCAs say LOC_PROT_ERR), or no route to the peer (rxe routes
    # in the initial network namespace only on Linux 6.1, rxe_net.c). Both seen in the QEMU lab.
    WcStatus.LOC_QP_OP_ERR: "the local QP could not execute the work request: a bad opcode or state; "
    "on Soft-RoCE (rxe) also a local lkey that names no MR of this PD, or no route to the peer "
    "(rxe's netdev outside the initial network namespace)",
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
        except (KeyError, TypeError, ValueError, OverflowError) as exc:
            raise ValueError(f"bad QP info {d!r:.120}: {exc}") from None
        if not (
            0 < info.qp_num < 1 << 24
            and 0 <= info.psn < 1 << 24
            and 0 <= info.lid < 1 << 16
            and len(info.gid) <= 64
            and info.mtu in MTU_ENUM
        ):
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


# -- pyverbs -----------------------------------------------------------------------------------------


# -- CUDA dma-buf export (the `dmabuf` registration path) ----------------------------------------
