"""The resources an mr-bench case stands on, and the typed params/settings every result records.

Memory regions, the GPU scope, loopback endpoints and their wiring, work requests, payload checks.

Every resource is owned by an ``ExitStack`` in creation order, so QPs and MRs are released before the PD
and before the memory under them, on every exit path (Ctrl-C included).
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
from dataclasses import dataclass
from typing import Any, Callable, Optional, Sequence

from gdrdiag.bench.mr_config import POISON, SOFT_NOTE, MrBenchConfig, landing
from gdrdiag.bench.rdma_loop import Lane, LoopOutcome
from gdrdiag.errors import GdrdiagError, NotSupported, UserInputError
from gdrdiag.hw import verbs as v
from gdrdiag.hw import verbs_dmabuf, verbs_providers
from gdrdiag.hw.memory import GPU_PAGE, Buffer, MemoryKind, first_mismatch, pattern
from gdrdiag.model.params import MrMetrics, MrParams, RunSettings
from gdrdiag.model.results import BenchResult, SampleStats
from gdrdiag.model.vocabulary import RegPath


@dataclass
class Region:
    """A buffer of one kind and its MR; ``addr(off)`` is the address an SGE / the peer uses."""

    buffer: Buffer
    mr: v.MR
    nbytes: int

    def addr(self, off: int = 0) -> int:
        """MR address of byte ``off`` (VA for ibv_reg_mr, IOVA for dma-buf)."""
        return self.mr.addr + off


class GpuScope:
    """Opens one GPU context for the run if any kind needs one; else remembers why not."""

    def __init__(self, ordinal: int, needed: bool):
        self.ctx = None
        self.reason = ""
        if not needed:
            return
        try:
            from gdrdiag.hw import cuda

            self.ctx = cuda.GpuContext(ordinal).__enter__()
        except NotSupported as exc:
            self.reason = exc.reason
        except GdrdiagError as exc:
            self.reason = str(exc)

    def runs(self, kind: MemoryKind) -> bool:
        """Whether ``kind`` can be allocated here (False: its cases are WAIVED)."""
        return not kind.needs_gpu or self.ctx is not None

    def require(self, kind: MemoryKind) -> Any:
        """The context for ``kind`` (None for pageable); NotSupported with the reason otherwise."""
        if not kind.needs_gpu:
            return None
        if self.ctx is None:
            raise NotSupported(f"{kind.value} memory needs a GPU context ({self.reason or 'no GPU'})")
        return self.ctx

    def close(self) -> None:
        """Release the context (idempotent)."""
        ctx, self.ctx = self.ctx, None
        if ctx is not None:
            ctx.close()


def dmabuf_exports(kind: MemoryKind) -> bool:
    """Whether the dma-buf registration path can export ``kind``: device memory (cuMemAlloc) only.

    cuMemGetHandleForAddressRange exports allocations of the CUDA driver's device memory; host and
    managed memory take ibv_reg_mr (CUDA driver API, "cuMemGetHandleForAddressRange").
    """
    return kind is MemoryKind.DEVICE


def allocate_region(
    stack: contextlib.ExitStack,
    pd: v.PD,
    gpus: GpuScope,
    kind: MemoryKind,
    reg_path: str,
    nbytes: int,
    access: int,
    offset: int = 0,
) -> Region:
    """Allocate ``nbytes`` of ``kind`` (64 KiB GPU-page aligned + ``offset``) and register it.

    The buffer is pushed on ``stack`` before the MR, so the MR is released first.
    """
    if reg_path == "dmabuf" and not dmabuf_exports(kind):
        raise NotSupported(f"the dma-buf path exports device memory (cuMemAlloc) only, not {kind.value}")
    gpu = gpus.require(kind)
    # Room to round the range out to whole 64 KiB GPU pages for the dma-buf export.
    alloc = -(-nbytes // GPU_PAGE) * GPU_PAGE + GPU_PAGE
    buf = stack.enter_context(Buffer(kind, alloc, alignment=GPU_PAGE, offset=offset, gpu=gpu))
    if kind is MemoryKind.DEVICE:
        buf.set_sync_memops()
    cuda_mem = kind in (MemoryKind.DEVICE, MemoryKind.MANAGED)
    if reg_path == "mr":
        mr = pd.reg_mr(buf.ptr, nbytes, access, gpu=cuda_mem)
    else:
        exp = verbs_dmabuf.export_cuda_dmabuf(buf.ptr, nbytes, GPU_PAGE)
        try:
            mr = pd.reg_dmabuf_mr(exp.fd, exp.offset, nbytes, access, dmabuf_va=exp.base_va)
        finally:
            os.close(exp.fd)
    stack.callback(mr.close)
    return Region(buf, mr, nbytes)


def loopback_regions(
    stack: contextlib.ExitStack,
    cfg: "MrBenchConfig",
    ep: "Endpoints",
    gpus: "GpuScope",
    kind: MemoryKind,
    reg_path: str,
    nbytes: int,
    access: int,
) -> tuple["Region", "Region"]:
    """Source region on the requester and destination region on the responder.

    The source is ``--src-memory`` when given, else the destination kind; it uses the same
    registration path when it is the same kind, else plain ``mr``.
    """
    src_kind = cfg.src_kind or kind
    src_reg = reg_path if src_kind is kind else "mr"
    src = allocate_region(stack, ep.req_pd, gpus, src_kind, src_reg, nbytes, access, cfg.offset)
    dst = allocate_region(stack, ep.resp_pd, gpus, kind, reg_path, nbytes, access, cfg.offset)
    return src, dst


class Endpoints:
    """Requester and responder devices/PDs for loopback (one port, or two ports/devices)."""

    def __init__(self, cfg: MrBenchConfig, stack: contextlib.ExitStack):
        soft = dict(cfg.soft_options)
        self.req_dev = stack.enter_context(
            verbs_providers.open_device(cfg.provider, cfg.device, cfg.port, cfg.gid_index, **soft)
        )
        if cfg.peer_device is not None or cfg.peer_port != cfg.port:
            self.resp_dev = stack.enter_context(
                verbs_providers.open_device(
                    cfg.provider, cfg.peer_device or cfg.device, cfg.peer_port, cfg.gid_index, **soft
                )
            )
        else:
            self.resp_dev = self.req_dev
        self.provider = self.req_dev.provider
        self.req_pd = stack.enter_context(self.req_dev.alloc_pd())
        self.resp_pd = (
            self.req_pd if self.resp_dev is self.req_dev else stack.enter_context(self.resp_dev.alloc_pd())
        )
        self.check_limits(cfg)

    def check_limits(self, cfg: MrBenchConfig) -> None:
        """Reject -q, -t and sizes the device cannot do, as usage errors naming the limit."""
        lim = self.req_dev.limits()
        qps_needed = cfg.qps * (2 if self.resp_dev is self.req_dev else 1)
        if qps_needed > lim.max_qp:
            raise UserInputError(
                f"-q {cfg.qps}: {self.req_dev.name} allows at most {lim.max_qp} QPs"
                f"{' (loopback on one port uses 2 per lane)' if qps_needed > cfg.qps else ''}"
            )
        if cfg.tx_depth > lim.max_qp_wr:
            raise UserInputError(
                f"-t {cfg.tx_depth}: {self.req_dev.name} allows at most {lim.max_qp_wr} WRs per QP"
            )
        biggest = max(cfg.sizes) * (cfg.blocks or 1)
        max_msg = self.req_dev.port_info().max_msg_size
        check_port_mtu(self.req_dev, cfg.mtu)
        check_port_mtu(self.resp_dev, cfg.mtu)
        if max(cfg.sizes) > max_msg:
            raise UserInputError(f"-s {max(cfg.sizes)}: larger than the port's max message size ({max_msg})")
        if biggest * cfg.qps > lim.max_mr_size:
            raise UserInputError(
                f"{biggest * cfg.qps} bytes exceed the device's max MR size ({lim.max_mr_size})"
            )


def check_port_mtu(dev: v.Device, mtu: Optional[int]) -> None:
    """UserInputError when ``-m`` asks for more than the port's active MTU.

    perftest lowers such a request to the active MTU with a message (set_mtu()); a bandwidth number
    taken at another MTU than asked would mislead, so gdrdiag refuses instead.
    """
    if mtu is None:
        return
    active = dev.port_info().active_mtu
    if mtu > active:
        raise UserInputError(f"-m {mtu}: above the active MTU of {dev.name} port ({active} bytes)")


@dataclass(frozen=True)
class MrSession:
    """What the loopback cases of one run share: the options, both endpoints, the GPU context, the tick."""

    cfg: MrBenchConfig
    ep: Endpoints
    gpus: GpuScope
    tick: Optional[Callable[[], None]] = None


@dataclass
class Wiring:
    """Connected requester/responder QP pairs and their CQs."""

    cq: v.CQ
    rcq: v.CQ
    req: list
    resp: list


def wire_loopback(
    stack: contextlib.ExitStack, ep: Endpoints, cfg: MrBenchConfig, qps: int, tx_depth: int, rx_depth: int = 1
) -> Wiring:
    """Create ``qps`` RC pairs and bring them to RTS (RESET -> INIT -> RTR -> RTS)."""
    cq = stack.enter_context(ep.req_dev.create_cq(qps * tx_depth + 16))
    rcq = stack.enter_context(ep.resp_dev.create_cq(qps * max(rx_depth, 1) + 16))
    req, resp = [], []
    for _ in range(qps):
        a = stack.enter_context(ep.req_pd.create_rc_qp(cq, max_send_wr=tx_depth, max_recv_wr=1))
        b = stack.enter_context(ep.resp_pd.create_rc_qp(rcq, max_send_wr=1, max_recv_wr=max(rx_depth, 1)))
        b.connect(path_mtu_info(a.info(), cfg.mtu), v.ACCESS_LOCAL_WRITE | v.ACCESS_REMOTE_WRITE)
        a.connect(path_mtu_info(b.info(), cfg.mtu), v.ACCESS_LOCAL_WRITE)
        req.append(a)
        resp.append(b)
    return Wiring(cq, rcq, req, resp)


def path_mtu_info(remote: v.QpInfo, mtu: Optional[int]) -> v.QpInfo:
    """The peer's QP information with its MTU lowered to ``mtu`` (perftest's ``-m``), if one is given.

    Every provider sets the QP's path MTU (INIT -> RTR) to the smaller of its port's active MTU and
    the peer's advertised one (``verbs_pyverbs``/``verbs_native`` ``connect``, as perftest's
    ``set_mtu()``), so lowering the peer's figure is how a user's MTU reaches ``IBV_QP_PATH_MTU``.
    """
    if mtu is None or mtu >= remote.mtu:
        return remote
    return dataclasses.replace(remote, mtu=mtu)


def fill_sources(src: Region, lanes: int, slot: int, nbytes: int) -> list[Any]:
    """Write lane ``i``'s pattern (seed differs per lane) at ``i * slot``; return the patterns."""
    pats = []
    for i in range(lanes):
        p = pattern(nbytes, seed=0x5A + 17 * i)
        src.buffer.write(p, i * slot)
        pats.append(p)
    return pats


def verify(dst: Region, expected: Sequence[Any], slot: int) -> Optional[str]:
    """None when lane ``i``'s slot of ``dst`` equals ``expected[i]``; else where it differs."""
    for i, exp in enumerate(expected):
        got = dst.buffer.read_array(len(exp), i * slot)
        bad = first_mismatch(got, exp)
        if bad is not None:
            never = " (still the poison value: never written)" if got[bad] == POISON else ""
            return (
                f"payload mismatch in QP {i}'s region at byte {bad}: got 0x{int(got[bad]):02x}, "
                f"expected 0x{int(exp[bad]):02x}{never}"
            )
    return None


def write_wrs(
    src: Region, dst: Region, lane: int, slot: int, size: int, count: int, imm: bool = False
) -> list[v.WriteWR]:
    return [
        v.WriteWR(
            wr_id=lane,
            local_addr=src.addr(lane * slot),
            length=size,
            lkey=src.mr.lkey,
            remote_addr=dst.addr(lane * slot),
            rkey=dst.mr.rkey,
            signaled=False,
            imm=(lane << 16 | k) if imm else None,
        )
        for k in range(count)
    ]


def base_params(
    cfg: MrBenchConfig, kind: MemoryKind, reg_path: str, provider: str, topology: str
) -> MrParams:
    where, words = landing(kind, reg_path, provider)
    return MrParams(
        memory=kind,
        src_memory=cfg.src_kind or kind,
        reg_path=RegPath(reg_path),
        access=cfg.single_access,
        landing=where,
        lands_in=words,
        topology=topology,
        qps=cfg.qps,
        tx_depth=cfg.tx_depth,
        post_list=cfg.post_list,
        offset_bytes=cfg.offset,
    )


def run_settings_of(cfg: MrBenchConfig, **more: object) -> RunSettings:
    """How this run was made (device, port, iterations...): recorded, never part of a case's identity."""
    return RunSettings(device_name=cfg.device or None, port=cfg.port, repeats=cfg.repeats, **more)  # type: ignore[arg-type]


def checked_result(key: str, failure: Optional[str], fields: dict) -> BenchResult:
    """OK and verified, or ERROR with the payload/run failure: one place decides."""
    if failure:
        return BenchResult.error(key, failure, verified=False, **fields)
    return BenchResult(key=key, status=ok_status(), verified=True, **fields)


def describe(kind: MemoryKind, reg_path: str, provider: str, what: str) -> str:
    d = f"{what} into {kind.value} memory registered via {'ibv_reg_mr' if reg_path == 'mr' else 'dma-buf'}"
    return f"{d} ({SOFT_NOTE})" if provider == "soft" else d


def bw_method(cfg: MrBenchConfig, signal_every: int, provider: str) -> str:
    amount = f"{cfg.iterations} WRs per QP" if cfg.iterations is not None else f"{cfg.duration:g} s per run"
    clock = (
        "(CLOCK_MONOTONIC in the C loop, native/verbs_loop.c)" if provider == "native" else "(perf_counter)"
    )
    m = (
        f"ib_write_bw-style loop: {cfg.qps} RC QP(s), TX depth {cfg.tx_depth}, post lists of "
        f"{cfg.post_list}, "
        f"one signalled completion every {signal_every * cfg.post_list} WRs; {amount}; clock "
        f"{clock} from "
        f"the first post to the last completion; {cfg.repeats} run(s), median reported; destination poisoned "
        f"before and every byte checked after each run"
    )
    if cfg.mtu is not None:
        m += f"; path MTU {cfg.mtu} bytes (-m)"
    if cfg.write_with_imm:
        m += "; RDMA WRITE_WITH_IMM (the responder consumes a receive per message)"
    if cfg.provider_note:
        m += f"; provider: {cfg.provider_note}"
    return f"{m}; {SOFT_NOTE}" if provider == "soft" else m


def reregister(stack: contextlib.ExitStack, pd: v.PD, first: Region, reg_path: str, access: int) -> Region:
    buf = first.buffer
    if reg_path == "mr":
        mr = pd.reg_mr(buf.ptr, first.nbytes, access, gpu=buf.kind in (MemoryKind.DEVICE, MemoryKind.MANAGED))
    else:
        exp = verbs_dmabuf.export_cuda_dmabuf(buf.ptr, first.nbytes, GPU_PAGE)
        try:
            mr = pd.reg_dmabuf_mr(exp.fd, exp.offset, first.nbytes, access, dmabuf_va=exp.base_va)
        finally:
            os.close(exp.fd)
    stack.callback(mr.close)
    return Region(buf, mr, first.nbytes)


def bw_result(
    key: str,
    params: MrParams,
    settings: RunSettings,
    outs: list[LoopOutcome],
    failure: Optional[str],
    provider: str,
    description: str,
    method: str,
) -> BenchResult:
    samples = tuple(o.gbps for o in outs)
    rates = sorted(o.msgs_per_s for o in outs)
    cpu = sorted(o.cpu_seconds / o.messages * 1e6 for o in outs if o.messages)
    split = {}  # the C loop's own cost per WR (native provider with --time-calls only)
    for name in ("post_ns_per_wr", "poll_ns_per_wr", "loop_ns_per_wr"):
        vals = sorted(o.native[name] for o in outs if o.native and name in o.native)
        if vals:
            split[name] = vals[len(vals) // 2]
    metrics = MrMetrics(
        msgs_per_s=rates[len(rates) // 2],
        cpu_us_per_msg=cpu[len(cpu) // 2] if cpu else None,
        messages_per_run=float(outs[0].messages),
        **split,
    )
    fields = dict(
        description=description,
        params=params,
        settings=settings,
        unit="Gb/s",
        samples=samples,
        stats=SampleStats.of(samples),
        metrics=metrics,
        method=method,
        provider=provider,
    )
    if failure:
        return BenchResult.error(
            key, f"{failure} (a fast wrong answer is a failure)", verified=False, **fields
        )
    return BenchResult(key=key, status=ok_status(), verified=True, **fields)


def ok_status():
    from gdrdiag.model.results import Status

    return Status.OK


def lane_of_lists(qp: v.QP, lists: Sequence[Sequence[v.WriteWR]]) -> Lane:
    plain, sig = [], []
    for wrs in lists:
        p = [v.WriteWR(0, w.local_addr, w.length, w.lkey, w.remote_addr, w.rkey, False, w.imm) for w in wrs]
        s = p[:-1] + [
            v.WriteWR(
                0, p[-1].local_addr, p[-1].length, p[-1].lkey, p[-1].remote_addr, p[-1].rkey, True, p[-1].imm
            )
        ]
        plain.append(qp.prepare(p))
        sig.append(qp.prepare(s))
    return Lane(qp=qp, plain=plain, signaled=sig, index=0)


def alloc_for_sweep(stack: contextlib.ExitStack, gpus: GpuScope, kind: MemoryKind, nbytes: int) -> Buffer:
    gpu = gpus.require(kind)
    try:
        buf = stack.enter_context(
            Buffer(kind, -(-nbytes // GPU_PAGE) * GPU_PAGE + GPU_PAGE, alignment=GPU_PAGE, gpu=gpu)
        )
    except UserInputError as exc:  # too big for this machine: not applicable here, not a usage error
        raise NotSupported(str(exc)) from None
    if kind is MemoryKind.DEVICE:
        buf.set_sync_memops()
    return buf


def register_region(pd: v.PD, buf: Buffer, reg_path: str, nbytes: int, access: int) -> v.MR:
    if reg_path == "dmabuf":
        if not dmabuf_exports(buf.kind):
            raise NotSupported(
                f"the dma-buf path exports device memory (cuMemAlloc) only, not {buf.kind.value}"
            )
        exp = verbs_dmabuf.export_cuda_dmabuf(buf.ptr, nbytes, GPU_PAGE)
        try:
            return pd.reg_dmabuf_mr(exp.fd, exp.offset, nbytes, access, dmabuf_va=exp.base_va)
        finally:
            os.close(exp.fd)
    return pd.reg_mr(buf.ptr, nbytes, access, gpu=buf.kind in (MemoryKind.DEVICE, MemoryKind.MANAGED))


def needs_gpu(cfg: MrBenchConfig) -> bool:
    return any(k.needs_gpu for k in cfg.kinds) or bool(cfg.src_kind and cfg.src_kind.needs_gpu)


# Memory kinds whose bytes (may) live in a GPU's memory: their rows record that GPU's ordinal.
_GPU_MEMORY = (MemoryKind.DEVICE, MemoryKind.MANAGED)


def uses_local_gpu(result: BenchResult) -> bool:
    """True when ``result``'s bytes on this side were in a GPU's memory (device or managed).

    A two-host client's ``memory`` is the server's and a server's ``src_memory`` the client's, so
    each side counts only its own; pinned host memory needs a CUDA context but no GPU's link.
    """
    p = result.params
    if not isinstance(p, MrParams):
        return False
    mine = {"client": (p.src_memory,), "server": (p.memory,)}.get(p.role or "", (p.memory, p.src_memory))
    return any(k in _GPU_MEMORY for k in mine)
