r"""MR registration cost and RDMA WRITE loops: memory kind x registration path x access flags.

Cases (keys; ``<kind>`` uses ``_`` for ``-``, ``<reg>`` is ``mr`` or ``dmabuf``):

- ``rdma_write_<kind>_<reg>``        bandwidth loop (size, QPs, RO ... in params); unit Gb/s
- ``rdma_write_lat_<kind>_<reg>``    one WRITE at a time, post -> completion; unit us
- ``rdma_write_blocks_<kind>_<reg>`` 10,000 blocks as one WR each, as post lists, as one WR
- ``mr_reg_<kind>_<reg>``            register / deregister time per size; unit us
- ``mr_reuse_<kind>_<reg>``          per-transfer time: register once vs register per transfer
- ``mr_loop_cost``                   the loop's own cost: soft provider, no bytes moved; unit WR/s

Every WRITE result states where the bytes land (``landing``: gpu or host, ``lands_in`` in words),
the provider, and whether the payload was verified: the destination is poisoned before each
measured run and every byte compared with the source pattern after it (device memory included).
Resources are owned by ``ExitStack``\\ s in creation order, so QPs and MRs are released before
the PD and before the memory under them, on every exit path (Ctrl-C included).
"""

from __future__ import annotations

import contextlib
import os
import time
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Optional, Sequence

from gdrdiag.bench import rdma_math
from gdrdiag.bench.rdma_loop import Lane, LoopOutcome, build_lanes, run_bw, run_latency
from gdrdiag.bench.runner import run_case
from gdrdiag.errors import GdrdiagError, NotSupported, UserInputError
from gdrdiag.hw import verbs as v
from gdrdiag.hw.memory import GPU_PAGE, Buffer, MemoryKind, first_mismatch, pattern
from gdrdiag.model.results import BenchResult, SampleStats
from gdrdiag.units import GiB, KiB, MiB, format_size

REG_PATHS = ("mr", "dmabuf")
SWEEP_SIZES = tuple(1 << i for i in range(1, 24))  # 2 B .. 8 MiB, as ib_write_bw -a
REG_COST_SIZES = (4 * KiB, 64 * KiB, 1 * MiB, 16 * MiB, 256 * MiB, 1 * GiB)
POISON = 0xE7
SOFT_NOTE = (
    "soft provider: bytes moved in software (memcpy / cuMemcpy), not by an RDMA NIC; NOT a hardware number"
)
DEFAULT_ACCESS = v.ACCESS_LOCAL_WRITE | v.ACCESS_REMOTE_WRITE

ProgressFn = Optional[Callable[[str], None]]


@dataclass(frozen=True)
class MrBenchConfig:
    """Everything one ``gdrdiag mr-bench`` invocation asks for (validated by :meth:`validate`)."""

    provider: str = "auto"
    device: Optional[str] = None
    port: int = 1
    gid_index: Optional[int] = None
    peer_device: Optional[str] = None
    peer_port: int = 1
    kinds: tuple[MemoryKind, ...] = (MemoryKind.DEVICE,)
    reg_paths: tuple[str, ...] = ("mr",)
    src_kind: Optional[MemoryKind] = None  # None: same as the destination kind
    access: int = DEFAULT_ACCESS
    relaxed_ordering: bool = False
    ro_ab: bool = False
    sizes: tuple[int, ...] = (65536,)
    qps: int = 1
    tx_depth: int = 128
    post_list: int = 1
    cq_mod: Optional[int] = None
    iterations: Optional[int] = 5000
    duration: Optional[float] = None
    repeats: int = 3
    latency: bool = False
    write_with_imm: bool = False
    blocks: Optional[int] = None
    offset: int = 0
    mr_size: Optional[int] = None
    gpu: int = 0
    timeout_s: float = 10.0
    reg_sizes: tuple[int, ...] = REG_COST_SIZES
    reg_iterations: int = 10
    soft_options: dict = field(default_factory=dict)  # provider options (soft: copy; native: inline...)
    provider_note: str = ""  # why this provider (``--provider auto``'s choice), written into methods

    @property
    def access_mask(self) -> int:
        """Access flags for the destination MR (and the source MR) of a plain run."""
        return self.access | (v.ACCESS_RELAXED_ORDERING if self.relaxed_ordering else 0)

    def validate(self) -> "MrBenchConfig":
        """Reject impossible combinations before touching hardware (UserInputError)."""
        v.resolve_provider(self.provider)
        for reg in self.reg_paths:
            if reg not in REG_PATHS:
                raise UserInputError(
                    f"unknown registration path {reg!r} (choose from: {', '.join(REG_PATHS)})"
                )
        if not self.kinds:
            raise UserInputError("no memory kind selected")
        if not self.sizes or any(s <= 0 for s in self.sizes):
            raise UserInputError("message size must be greater than 0")
        if self.qps < 1:
            raise UserInputError(f"-q {self.qps}: need at least one QP")
        if self.tx_depth < 1:
            raise UserInputError(f"-t {self.tx_depth}: TX depth must be at least 1")
        if self.post_list < 1 or self.post_list > self.tx_depth:
            raise UserInputError(
                f"--post-list {self.post_list} must be between 1 and the TX depth ({self.tx_depth})"
            )
        if (self.iterations is None) == (self.duration is None):
            raise UserInputError("give either iterations (-n) or a duration (-D), not both")
        if self.iterations is not None and self.iterations < self.post_list:
            raise UserInputError(f"-n {self.iterations} must be at least the post list ({self.post_list})")
        if self.duration is not None and not 0 < self.duration <= 3600:
            raise UserInputError(f"-D {self.duration}: duration must be in (0, 3600] seconds")
        if self.repeats < 1:
            raise UserInputError("--repeats must be at least 1")
        if self.offset < 0 or self.offset >= GPU_PAGE:
            raise UserInputError(f"--offset {self.offset} must be in 0..{GPU_PAGE - 1}")
        if self.blocks is not None and self.blocks < 1:
            raise UserInputError("--blocks must be at least 1")
        if self.timeout_s <= 0:
            raise UserInputError("--timeout must be > 0")
        if self.ro_ab and self.relaxed_ordering:
            raise UserInputError("--ro-ab runs RO off and on itself; drop --relaxed-ordering")
        if self.access & v.ACCESS_RELAXED_ORDERING and self.ro_ab:
            raise UserInputError("--ro-ab runs RO off and on itself; drop relaxed_ordering from --access")
        if self.mr_size is not None:
            need = self.qps * max(self.sizes) * (self.blocks or 1)
            if need > self.mr_size:
                raise UserInputError(
                    f"message size {format_size(max(self.sizes))} x {self.qps} QP(s)"
                    f"{' x ' + str(self.blocks) + ' blocks' if self.blocks else ''} = "
                    f"{need} bytes is larger than the MR (--mr-size {self.mr_size})"
                )
        return self


# -- where the bytes land ----------------------------------------------------------------------------


def landing(kind: MemoryKind, reg_path: str, provider: str) -> tuple[str, str]:
    """(``gpu`` | ``host``, words) for an RDMA WRITE into ``kind`` registered via ``reg_path``.

    Managed memory registered with ibv_reg_mr is pinned on the host (x86): the NIC writes host
    DRAM, so the number is a host-memory number (perftest #283; diagnostics-kb sec. 9/11).
    """
    if kind is MemoryKind.DEVICE:
        where = (
            "gpu",
            "GPU memory (peer-to-peer through BAR1)"
            + (" via dma-buf" if reg_path == "dmabuf" else " via nvidia-peermem"),
        )
    elif kind is MemoryKind.MANAGED:
        where = (
            "host",
            "host DRAM: ibv_reg_mr pins managed pages on the host (x86), so this is a "
            "host-memory number, not GPUDirect",
        )
    else:
        where = ("host", kind.location)
    if provider == "soft":
        return where[0], where[1] + "; " + SOFT_NOTE
    return where


def case_key(prefix: str, kind: MemoryKind, reg_path: str) -> str:
    """``rdma_write_pinned_wc_mr`` style keys."""
    return f"{prefix}_{kind.value.replace('-', '_')}_{reg_path}"


# -- memory + registration -------------------------------------------------------------------------------


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
    if reg_path == "dmabuf" and kind is not MemoryKind.DEVICE:
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
        exp = v.export_cuda_dmabuf(buf.ptr, nbytes, GPU_PAGE)
        try:
            mr = pd.reg_dmabuf_mr(exp.fd, exp.offset, nbytes, access, dmabuf_va=exp.base_va)
        finally:
            os.close(exp.fd)
    stack.callback(mr.close)
    return Region(buf, mr, nbytes)


# -- the loopback / two-machine plumbing --------------------------------------------------------------------



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
            v.open_device(cfg.provider, cfg.device, cfg.port, cfg.gid_index, **soft)
        )
        if cfg.peer_device is not None or cfg.peer_port != cfg.port:
            self.resp_dev = stack.enter_context(
                v.open_device(
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
        if max(cfg.sizes) > max_msg:
            raise UserInputError(f"-s {max(cfg.sizes)}: larger than the port's max message size ({max_msg})")
        if biggest * cfg.qps > lim.max_mr_size:
            raise UserInputError(
                f"{biggest * cfg.qps} bytes exceed the device's max MR size ({lim.max_mr_size})"
            )


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
        b.connect(a.info(), v.ACCESS_LOCAL_WRITE | v.ACCESS_REMOTE_WRITE)
        a.connect(b.info(), v.ACCESS_LOCAL_WRITE)
        req.append(a)
        resp.append(b)
    return Wiring(cq, rcq, req, resp)


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


def _wrs(
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


def _base_params(cfg: MrBenchConfig, kind: MemoryKind, reg_path: str, provider: str, topology: str) -> dict:
    where, words = landing(kind, reg_path, provider)
    src = cfg.src_kind or kind
    return {
        "memory": kind.value,
        "src_memory": src.value,
        "reg_path": reg_path,
        "landing": where,
        "lands_in": words,
        "topology": topology,
        "qps": cfg.qps,
        "tx_depth": cfg.tx_depth,
        "post_list": cfg.post_list,
        "offset": cfg.offset,
        "device": cfg.device or "",
        "port": cfg.port,
    }


def _checked_result(key: str, failure: Optional[str], fields: dict) -> BenchResult:
    """OK and verified, or ERROR with the payload/run failure: one place decides."""
    if failure:
        return BenchResult.error(key, failure, verified=False, **fields)
    return BenchResult(key=key, status=_ok(), verified=True, **fields)


def _describe(kind: MemoryKind, reg_path: str, provider: str, what: str) -> str:
    d = f"{what} into {kind.value} memory registered via {'ibv_reg_mr' if reg_path == 'mr' else 'dma-buf'}"
    return f"{d} ({SOFT_NOTE})" if provider == "soft" else d


# -- bandwidth (plain, sweep, RO A/B, matrix) -------------------------------------------------------------


def _bw_method(cfg: MrBenchConfig, signal_every: int, provider: str) -> str:
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
    if cfg.write_with_imm:
        m += "; RDMA WRITE_WITH_IMM (the responder consumes a receive per message)"
    if cfg.provider_note:
        m += f"; provider: {cfg.provider_note}"
    return f"{m}; {SOFT_NOTE}" if provider == "soft" else m


def _bw_case(
    cfg: MrBenchConfig,
    ep: Endpoints,
    gpus: GpuScope,
    kind: MemoryKind,
    reg_path: str,
    progress: ProgressFn,
    tick: Optional[Callable[[], None]],
) -> list[BenchResult]:
    """One (kind, reg path): buffers and QPs set up once; every size (and RO setting) measured."""
    provider = ep.provider
    key = case_key("rdma_write", kind, reg_path)
    slot = max(cfg.sizes)
    nbytes = slot * cfg.qps
    ro_settings = (
        (False, True)
        if cfg.ro_ab
        else (cfg.relaxed_ordering or bool(cfg.access & v.ACCESS_RELAXED_ORDERING),)
    )
    rx = cfg.tx_depth if cfg.write_with_imm else 1
    signal_every = rdma_math.signal_interval(cfg.tx_depth, cfg.post_list, cfg.cq_mod)
    results: list[BenchResult] = []
    with contextlib.ExitStack() as stack:
        src_kind = cfg.src_kind or kind
        src_reg = reg_path if src_kind is kind else "mr"
        base_access = cfg.access & ~v.ACCESS_RELAXED_ORDERING
        regions = {}
        for ro in ro_settings:
            access = base_access | (v.ACCESS_RELAXED_ORDERING if ro else 0)
            if not regions:
                src, dst = loopback_regions(stack, cfg, ep, gpus, kind, reg_path, nbytes, access)
            else:  # same buffers, registered again with the other access flags
                first_src, first_dst = next(iter(regions.values()))
                src = _reregister(stack, ep.req_pd, first_src, src_reg, access)
                dst = _reregister(stack, ep.resp_pd, first_dst, reg_path, access)
            regions[ro] = (src, dst)
        wiring = wire_loopback(stack, ep, cfg, cfg.qps, cfg.tx_depth, rx)
        if cfg.write_with_imm:
            for qp in wiring.resp:
                qp.post_recv(rx, regions[ro_settings[0]][1].mr)
        for size in cfg.sizes:
            if progress:
                progress(f"{key} size {format_size(size)}")
            lanes = {}
            expected = None
            for ro, (src, dst) in regions.items():
                expected = fill_sources(src, cfg.qps, slot, size)
                lanes[ro] = build_lanes(
                    wiring.req,
                    [
                        _wrs(src, dst, i, slot, size, cfg.post_list, cfg.write_with_imm)
                        for i in range(cfg.qps)
                    ],
                )
            recv = (wiring.rcq, wiring.resp, regions[ro_settings[0]][1].mr) if cfg.write_with_imm else None
            # Warm-up (not measured): a few signalled rounds through every MR.
            for ro in ro_settings:
                warm = max(cfg.post_list, min(cfg.iterations or 256, signal_every * cfg.post_list * 2))
                run_bw(
                    lanes[ro],
                    wiring.cq,
                    tx_depth=cfg.tx_depth,
                    signal_every=signal_every,
                    lists_total=warm // cfg.post_list,
                    timeout_s=cfg.timeout_s,
                    recv=recv,
                    tick=tick,
                )
            outcomes: dict[bool, list[LoopOutcome]] = {ro: [] for ro in ro_settings}
            failure = None
            for _ in range(cfg.repeats):
                # Interleave RO off/on runs so drift hits both equally.
                for ro in ro_settings:
                    dst = regions[ro][1]
                    dst.buffer.fill(POISON, dst.nbytes)
                    out = run_bw(
                        lanes[ro],
                        wiring.cq,
                        tx_depth=cfg.tx_depth,
                        signal_every=signal_every,
                        lists_total=(cfg.iterations // cfg.post_list) if cfg.iterations else None,
                        duration=cfg.duration,
                        timeout_s=cfg.timeout_s,
                        recv=recv,
                        tick=tick,
                    )
                    bad = verify(dst, expected, slot)  # type: ignore[arg-type]
                    if bad and failure is None:
                        failure = bad
                    outcomes[ro].append(out)
            for ro in ro_settings:
                params = _base_params(cfg, kind, reg_path, provider, "loopback")
                params.update(
                    size=size,
                    ro=ro,
                    access="|".join(v.access_names(regions[ro][1].mr.access)),
                    mode="bw",
                    ro_ab=cfg.ro_ab,
                    write_with_imm=cfg.write_with_imm,
                    iterations=cfg.iterations,
                    duration_s=cfg.duration,
                )
                results.append(
                    _bw_result(
                        key,
                        params,
                        outcomes[ro],
                        failure,
                        provider,
                        _describe(kind, reg_path, provider, "RDMA WRITE loopback"),
                        _bw_method(cfg, signal_every, provider),
                    )
                )
    return results


def _reregister(stack: contextlib.ExitStack, pd: v.PD, first: Region, reg_path: str, access: int) -> Region:
    buf = first.buffer
    if reg_path == "mr":
        mr = pd.reg_mr(buf.ptr, first.nbytes, access, gpu=buf.kind in (MemoryKind.DEVICE, MemoryKind.MANAGED))
    else:
        exp = v.export_cuda_dmabuf(buf.ptr, first.nbytes, GPU_PAGE)
        try:
            mr = pd.reg_dmabuf_mr(exp.fd, exp.offset, first.nbytes, access, dmabuf_va=exp.base_va)
        finally:
            os.close(exp.fd)
    stack.callback(mr.close)
    return Region(buf, mr, first.nbytes)


def _bw_result(
    key: str,
    params: dict,
    outs: list[LoopOutcome],
    failure: Optional[str],
    provider: str,
    description: str,
    method: str,
) -> BenchResult:
    samples = tuple(o.gbps for o in outs)
    rates = sorted(o.msgs_per_s for o in outs)
    cpu = sorted(o.cpu_seconds / o.messages * 1e6 for o in outs if o.messages)
    metrics = {
        "msgs_per_s": rates[len(rates) // 2],
        "cpu_us_per_msg": cpu[len(cpu) // 2] if cpu else None,
        "messages_per_run": float(outs[0].messages),
    }
    for name in ("post_ns_per_wr", "poll_ns_per_wr", "loop_ns_per_wr"):  # native --time-calls only
        vals = sorted(o.native[name] for o in outs if o.native and name in o.native)
        if vals:
            metrics[name] = vals[len(vals) // 2]
    fields = dict(
        description=description,
        params=params,
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
    return BenchResult(key=key, status=_ok(), verified=True, **fields)


def _ok():
    from gdrdiag.model.results import Status

    return Status.OK


# -- latency ------------------------------------------------------------------------------------------------


def _lat_case(
    cfg: MrBenchConfig,
    ep: Endpoints,
    gpus: GpuScope,
    kind: MemoryKind,
    reg_path: str,
    progress: ProgressFn,
    tick: Optional[Callable[[], None]],
) -> list[BenchResult]:
    provider = ep.provider
    key = case_key("rdma_write_lat", kind, reg_path)
    iterations = cfg.iterations or 1000
    results = []
    slot = max(cfg.sizes)
    with contextlib.ExitStack() as stack:
        src, dst = loopback_regions(stack, cfg, ep, gpus, kind, reg_path, slot, cfg.access_mask)
        wiring = wire_loopback(stack, ep, cfg, 1, max(cfg.tx_depth, 1))
        for size in cfg.sizes:
            if progress:
                progress(f"{key} size {format_size(size)}")
            expected = fill_sources(src, 1, slot, size)
            dst.buffer.fill(POISON, dst.nbytes)
            wr = _wrs(src, dst, 0, slot, size, 1)[0]
            run_latency(
                wiring.req[0], wiring.cq, wr, iterations=min(100, iterations), timeout_s=cfg.timeout_s
            )
            samples, out = run_latency(
                wiring.req[0], wiring.cq, wr, iterations=iterations, timeout_s=cfg.timeout_s, tick=tick
            )
            bad = verify(dst, expected, slot)
            us = tuple(s * 1e6 for s in samples)
            params = _base_params(cfg, kind, reg_path, provider, "loopback")
            params.update(
                size=size,
                qps=1,
                ro=bool(cfg.access_mask & v.ACCESS_RELAXED_ORDERING),
                access="|".join(v.access_names(dst.mr.access)),
                mode="latency",
                iterations=iterations,
            )
            metrics: dict[str, Optional[float]] = dict(rdma_math.latency_summary_us(samples))
            metrics["cpu_us_per_msg"] = out.cpu_seconds / out.messages * 1e6
            method = (
                f"one signalled RDMA WRITE outstanding at a time; each sample is ibv_post_send -> its "
                f"completion polled ({'CLOCK_MONOTONIC in C' if provider == 'native' else 'perf_counter'}), "
                f"not ib_write_lat's half round trip; {iterations} "
                f"samples after 100 warm-up, all kept; payload checked after the run"
            )
            fields = dict(
                description=_describe(kind, reg_path, provider, "RDMA WRITE completion latency"),
                params=params,
                unit="us",
                samples=us,
                stats=SampleStats.of(us),
                metrics=metrics,
                method=f"{method}; {SOFT_NOTE}" if provider == "soft" else method,
                provider=provider,
            )
            results.append(_checked_result(key, bad, fields))
    return results


# -- block mode --------------------------------------------------------------------------------


def _blocks_case(
    cfg: MrBenchConfig,
    ep: Endpoints,
    gpus: GpuScope,
    kind: MemoryKind,
    reg_path: str,
    progress: ProgressFn,
    tick: Optional[Callable[[], None]],
) -> list[BenchResult]:
    """N blocks of one size moved three ways: one WR each, posted lists, one coalesced WR."""
    provider = ep.provider
    key = case_key("rdma_write_blocks", kind, reg_path)
    nblocks = cfg.blocks or 10000
    size = cfg.sizes[0]
    total = nblocks * size
    plist = cfg.post_list if cfg.post_list > 1 else min(32, cfg.tx_depth)
    results = []
    with contextlib.ExitStack() as stack:
        src, dst = loopback_regions(stack, cfg, ep, gpus, kind, reg_path, total, cfg.access_mask)
        wiring = wire_loopback(stack, ep, cfg, 1, cfg.tx_depth)
        expected = fill_sources(src, 1, total, total)
        blocks = [
            v.WriteWR(0, src.addr(i * size), size, src.mr.lkey, dst.addr(i * size), dst.mr.rkey, False)
            for i in range(nblocks)
        ]
        if total > ep.req_dev.port_info().max_msg_size:
            coalesced = None
        else:
            coalesced = [v.WriteWR(0, src.addr(0), total, src.mr.lkey, dst.addr(0), dst.mr.rkey, False)]
        variants = [
            ("wr_per_block", 1, [blocks[i : i + 1] for i in range(nblocks)]),
            ("post_list", plist, [blocks[i : i + plist] for i in range(0, nblocks, plist)]),
        ]
        if coalesced:
            variants.append(("coalesced", 1, [coalesced]))
        for variant, pl, lists in variants:
            if progress:
                progress(f"{key} {variant}")
            signal_every = rdma_math.signal_interval(cfg.tx_depth, min(pl, cfg.tx_depth), cfg.cq_mod)
            lane = _lane_of_lists(wiring.req[0], lists)
            outs = []
            failure = None
            for _ in range(cfg.repeats):
                dst.buffer.fill(POISON, dst.nbytes)
                outs.append(
                    run_bw(
                        [lane],
                        wiring.cq,
                        tx_depth=cfg.tx_depth,
                        signal_every=signal_every,
                        lists_total=len(lists),
                        timeout_s=cfg.timeout_s,
                        tick=tick,
                    )
                )
                failure = failure or verify(dst, expected, total)
            params = _base_params(cfg, kind, reg_path, provider, "loopback")
            params.update(
                size=size,
                blocks=nblocks,
                variant=variant,
                qps=1,
                post_list=pl,
                mode="blocks",
                ro=bool(cfg.access_mask & v.ACCESS_RELAXED_ORDERING),
            )
            samples = tuple(o.seconds / nblocks * 1e6 for o in outs)
            gb = sorted(o.gbps for o in outs)
            metrics = {
                "gbps": gb[len(gb) // 2],
                "wrs_per_set": float(sum(len(x) for x in lists)),
                "total_us": sorted(o.seconds * 1e6 for o in outs)[len(outs) // 2],
                "cpu_us_per_block": sorted(o.cpu_seconds / nblocks * 1e6 for o in outs)[len(outs) // 2],
            }
            method = (
                f"{nblocks} blocks of {size} B moved as {variant.replace('_', ' ')} (TX depth "
                f"{cfg.tx_depth}); "
                f"time per block = first post to last completion / blocks; {cfg.repeats} run(s), median; "
                f"every byte checked"
            )
            fields = dict(
                description=_describe(kind, reg_path, provider, f"RDMA WRITE of {nblocks} blocks"),
                params=params,
                unit="us/block",
                samples=samples,
                stats=SampleStats.of(samples),
                metrics=metrics,
                method=f"{method}; {SOFT_NOTE}" if provider == "soft" else method,
                provider=provider,
            )
            results.append(_checked_result(key, failure, fields))
    return results


def _lane_of_lists(qp: v.QP, lists: Sequence[Sequence[v.WriteWR]]) -> Lane:
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


# -- registration cost --------------------------------------------------------------------------------------


def _reg_case(
    cfg: MrBenchConfig, ep: Endpoints, gpus: GpuScope, kind: MemoryKind, reg_path: str, progress: ProgressFn
) -> list[BenchResult]:
    provider = ep.provider
    results = []
    for size in cfg.reg_sizes:
        if progress:
            progress(f"{case_key('mr_reg', kind, reg_path)} {format_size(size)}")
        results.extend(
            run_case(
                case_key("mr_reg", kind, reg_path),
                lambda s=size: _reg_one(cfg, ep, gpus, kind, reg_path, s, provider),
                params={"memory": kind.value, "reg_path": reg_path, "size": size},
                provider=provider,
            )
        )
        results.extend(
            run_case(
                case_key("mr_reuse", kind, reg_path),
                lambda s=size: _reuse_one(cfg, ep, gpus, kind, reg_path, s, provider),
                params={"memory": kind.value, "reg_path": reg_path, "size": size},
                provider=provider,
            )
        )
    return results


def _alloc_for_sweep(stack: contextlib.ExitStack, gpus: GpuScope, kind: MemoryKind, nbytes: int) -> Buffer:
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


def _register(pd: v.PD, buf: Buffer, reg_path: str, nbytes: int, access: int) -> v.MR:
    if reg_path == "dmabuf":
        if buf.kind is not MemoryKind.DEVICE:
            raise NotSupported(
                f"the dma-buf path exports device memory (cuMemAlloc) only, not {buf.kind.value}"
            )
        exp = v.export_cuda_dmabuf(buf.ptr, nbytes, GPU_PAGE)
        try:
            return pd.reg_dmabuf_mr(exp.fd, exp.offset, nbytes, access, dmabuf_va=exp.base_va)
        finally:
            os.close(exp.fd)
    return pd.reg_mr(buf.ptr, nbytes, access, gpu=buf.kind in (MemoryKind.DEVICE, MemoryKind.MANAGED))


def _reg_one(
    cfg: MrBenchConfig,
    ep: Endpoints,
    gpus: GpuScope,
    kind: MemoryKind,
    reg_path: str,
    size: int,
    provider: str,
) -> BenchResult:
    key = case_key("mr_reg", kind, reg_path)
    with contextlib.ExitStack() as stack:
        buf = _alloc_for_sweep(stack, gpus, kind, size)
        reg_us, dereg_us = [], []
        for i in range(cfg.reg_iterations + 1):
            t0 = time.perf_counter()
            mr = _register(ep.req_pd, buf, reg_path, size, cfg.access_mask)
            t1 = time.perf_counter()
            mr.close()
            t2 = time.perf_counter()
            if i:  # the first registration of a range also faults its pages in: warm-up
                reg_us.append((t1 - t0) * 1e6)
                dereg_us.append((t2 - t1) * 1e6)
    dereg_sorted = sorted(dereg_us)
    method = (
        "wall clock around "
        f"ibv_reg_mr{'/cuMemGetHandleForAddressRange+ibv_reg_dmabuf_mr' if reg_path == 'dmabuf' else ''} "
        f"and ibv_dereg_mr on one buffer; 1 warm-up, {cfg.reg_iterations} samples, median"
    )
    return BenchResult(
        key=key,
        status=_ok(),
        description=_describe(kind, reg_path, provider, f"MR registration of {format_size(size)}"),
        params={
            "memory": kind.value,
            "reg_path": reg_path,
            "size": size,
            "access": "|".join(v.access_names(cfg.access_mask)),
        },
        unit="us",
        samples=tuple(reg_us),
        stats=SampleStats.of(reg_us),
        metrics={
            "dereg_us": dereg_sorted[len(dereg_sorted) // 2],
            "reg_us_per_gib": SampleStats.of(reg_us).median * GiB / size,
        },
        method=f"{method}; {SOFT_NOTE}" if provider == "soft" else method,
        provider=provider,
    )


def _reuse_one(
    cfg: MrBenchConfig,
    ep: Endpoints,
    gpus: GpuScope,
    kind: MemoryKind,
    reg_path: str,
    size: int,
    provider: str,
) -> BenchResult:
    """Per-transfer time of one WRITE: MRs registered once vs registered and released per transfer."""
    key = case_key("mr_reuse", kind, reg_path)
    n = cfg.reg_iterations
    with contextlib.ExitStack() as stack:
        src_buf = _alloc_for_sweep(stack, gpus, kind, size)
        dst_buf = _alloc_for_sweep(stack, gpus, kind, size)
        wiring = wire_loopback(stack, ep, cfg, 1, 4)
        qp, cq = wiring.req[0], wiring.cq
        src_buf.write(pattern(size, 0x33))

        def transfer(src_mr: v.MR, dst_mr: v.MR) -> None:
            qp.post_writes([v.WriteWR(0, src_mr.addr, size, src_mr.lkey, dst_mr.addr, dst_mr.rkey, True)])
            deadline = time.perf_counter() + cfg.timeout_s
            while True:
                wcs = cq.poll(1)
                if wcs:
                    if not wcs[0].ok:
                        raise v.CompletionError(wcs[0])
                    return
                if time.perf_counter() > deadline:
                    raise GdrdiagError(f"no completion within {cfg.timeout_s:g} s")

        src_mr = _register(ep.req_pd, src_buf, reg_path, size, cfg.access_mask)
        stack.callback(src_mr.close)
        dst_mr = _register(ep.resp_pd, dst_buf, reg_path, size, cfg.access_mask)
        stack.callback(dst_mr.close)
        transfer(src_mr, dst_mr)
        reuse = []
        for _ in range(n):
            t0 = time.perf_counter()
            transfer(src_mr, dst_mr)
            reuse.append((time.perf_counter() - t0) * 1e6)
        each = []
        for _ in range(n):
            t0 = time.perf_counter()
            a = _register(ep.req_pd, src_buf, reg_path, size, cfg.access_mask)
            try:
                b = _register(ep.resp_pd, dst_buf, reg_path, size, cfg.access_mask)
                try:
                    transfer(a, b)
                finally:
                    b.close()
            finally:
                a.close()
            each.append((time.perf_counter() - t0) * 1e6)
        dst_buf.fill(POISON, size)
        transfer(src_mr, dst_mr)
        bad = first_mismatch(dst_buf.read_array(size), pattern(size, 0x33))
    r = SampleStats.of(reuse).median
    e = SampleStats.of(each).median
    method = (
        f"one signalled {format_size(size)} WRITE per transfer, wall clock; reuse: MRs registered once; "
        f"register-each: source and destination MRs registered and released around every transfer; "
        f"{n} samples each, median; samples are the register-each times"
    )
    fields = dict(
        description=_describe(kind, reg_path, provider, "register once vs per transfer"),
        params={"memory": kind.value, "reg_path": reg_path, "size": size},
        unit="us",
        samples=tuple(each),
        stats=SampleStats.of(each),
        metrics={"reuse_us": r, "register_each_us": e, "register_each_over_reuse": e / r if r > 0 else None},
        method=f"{method}; {SOFT_NOTE}" if provider == "soft" else method,
        provider=provider,
    )
    if bad is not None:
        return _checked_result(key, f"payload mismatch at byte {bad}", fields)
    return _checked_result(key, None, fields)


# -- the loop's own cost -----------------------------------------------------------------------------------

LOOP_COST_POST_LISTS = (1, 4, 16, 64)


def loop_cost(
    *,
    duration: float = 1.0,
    tx_depth: int = 128,
    size: int = 64,
    repeats: int = 3,
    post_lists: Sequence[int] = LOOP_COST_POST_LISTS,
    link_gbps: float = 400.0,
    progress: ProgressFn = None,
) -> list[BenchResult]:
    """How many WRs per second the loop posts when the provider moves no bytes (soft, no-copy)."""
    results = []
    cfg = MrBenchConfig(
        provider="soft",
        kinds=(MemoryKind.PAGEABLE,),
        sizes=(size,),
        tx_depth=tx_depth,
        iterations=None,
        duration=duration,
        soft_options={"copy": False},
    )
    with contextlib.ExitStack() as stack:
        ep = Endpoints(cfg, stack)
        gpus = GpuScope(0, False)
        src = allocate_region(stack, ep.req_pd, gpus, MemoryKind.PAGEABLE, "mr", size, DEFAULT_ACCESS)
        dst = allocate_region(stack, ep.resp_pd, gpus, MemoryKind.PAGEABLE, "mr", size, DEFAULT_ACCESS)
        wiring = wire_loopback(stack, ep, cfg, 1, tx_depth)
        for pl in post_lists:
            if pl > tx_depth:
                continue
            if progress:
                progress(f"mr_loop_cost post list {pl}")
            lanes = build_lanes(wiring.req, [_wrs(src, dst, 0, size, size, pl)])
            se = rdma_math.signal_interval(tx_depth, pl, None)
            run_bw(lanes, wiring.cq, tx_depth=tx_depth, signal_every=se, duration=min(0.1, duration))
            outs = [
                run_bw(lanes, wiring.cq, tx_depth=tx_depth, signal_every=se, duration=duration)
                for _ in range(repeats)
            ]
            rates = tuple(o.messages / o.seconds for o in outs)
            med = SampleStats.of(rates).median
            metrics: dict[str, Optional[float]] = {
                "posts_per_s": sorted(o.posts / o.seconds for o in outs)[len(outs) // 2],
                "cpu_us_per_wr": sorted(o.cpu_seconds / o.messages * 1e6 for o in outs)[len(outs) // 2],
            }
            for g in rdma_math.LINK_RATES_GBPS:
                metrics[f"min_msg_bytes_{int(g)}g"] = rdma_math.min_message_for_rate(med, g)
            results.append(
                BenchResult(
                    key="mr_loop_cost",
                    status=_ok(),
                    provider="soft",
                    description=(
                        "WRs per second the mr-bench loop itself posts and retires (soft provider in no-copy "
                        "mode: every key/state check, no bytes moved); bounds the smallest message that can "
                        "keep a link busy"
                    ),
                    params={
                        "post_list": pl,
                        "tx_depth": tx_depth,
                        "signal_every_wrs": se * pl,
                        "size": size,
                        "link_gbps": link_gbps,
                    },
                    unit="WR/s",
                    samples=rates,
                    stats=SampleStats.of(rates),
                    metrics=metrics,
                    method=(
                        f"run_bw on one soft QP, no copies, {duration:g} s per run after 0.1 s warm-up, "
                        f"{repeats} runs, median; min message = link rate / 8 / WR rate; {SOFT_NOTE}"
                    ),
                )
            )
    if len({r.params["post_list"] for r in results}) >= 2:
        fixed, per_wr = rdma_math.fit_post_cost(
            [(int(r.params["post_list"]), 1.0 / float(r.metrics["posts_per_s"] or 1)) for r in results]
        )
        for r in results:
            r.metrics["loop_us_per_post"] = fixed * 1e6
            r.metrics["provider_us_per_wr"] = per_wr * 1e6
    return results


# -- the command's entry point -------------------------------------------------------------------------


def _needs_gpu(cfg: MrBenchConfig) -> bool:
    return any(k.needs_gpu for k in cfg.kinds) or bool(cfg.src_kind and cfg.src_kind.needs_gpu)


def run(
    cfg: MrBenchConfig,
    *,
    mode: str = "bw",
    progress: ProgressFn = None,
    tick: Optional[Callable[[], None]] = None,
) -> list[BenchResult]:
    """Run every (kind, registration path) case of ``mode`` (bw | latency | blocks | reg).

    Device problems (no RDMA device) raise NotSupported before any case; a case that cannot
    run here becomes WAIVED with the reason, a failing one ERROR; bad input raises UserInputError.
    """
    cfg.validate()
    results: list[BenchResult] = []
    with contextlib.ExitStack() as stack:
        ep = Endpoints(cfg, stack)
        gpus = GpuScope(cfg.gpu, _needs_gpu(cfg))
        stack.callback(gpus.close)
        for kind in cfg.kinds:
            for reg in cfg.reg_paths:
                if mode == "reg":
                    results.extend(_reg_case(cfg, ep, gpus, kind, reg, progress))
                    continue
                key_prefix = {"bw": "rdma_write", "latency": "rdma_write_lat", "blocks": "rdma_write_blocks"}[
                    mode
                ]
                fn = {"bw": _bw_case, "latency": _lat_case, "blocks": _blocks_case}[mode]
                params = {"memory": kind.value, "reg_path": reg, "topology": "loopback"}
                params.update({"landing": landing(kind, reg, ep.provider)[0]})
                results.extend(
                    run_case(
                        case_key(key_prefix, kind, reg),
                        lambda k=kind, r=reg, f=fn: f(cfg, ep, gpus, k, r, progress, tick),
                        params=params,
                        provider=ep.provider,
                    )
                )
    return results


def matrix_config(cfg: MrBenchConfig) -> MrBenchConfig:
    """The matrix: every memory kind x both registration paths x RO off/on."""
    return replace(
        cfg,
        kinds=tuple(MemoryKind),
        reg_paths=REG_PATHS,
        ro_ab=True,
        relaxed_ordering=False,
        access=cfg.access & ~v.ACCESS_RELAXED_ORDERING,
    )


# -- two machines -------------------------------------------------------------------------------------------


def _session_device(cfg: MrBenchConfig, stack: contextlib.ExitStack) -> tuple[v.Device, v.PD]:
    dev = stack.enter_context(
        v.open_device(cfg.provider, cfg.device, cfg.port, cfg.gid_index, **dict(cfg.soft_options))
    )
    pd = stack.enter_context(dev.alloc_pd())
    lim = dev.limits()
    if cfg.qps > lim.max_qp:
        raise UserInputError(f"-q {cfg.qps}: {dev.name} allows at most {lim.max_qp} QPs")
    if cfg.tx_depth > lim.max_qp_wr:
        raise UserInputError(f"-t {cfg.tx_depth}: {dev.name} allows at most {lim.max_qp_wr} WRs per QP")
    return dev, pd


def serve(
    cfg: MrBenchConfig,
    *,
    port: int = 18515,
    bind: str = "0.0.0.0",
    accept_timeout_s: float = 60.0,
    listener: Any = None,
    progress: ProgressFn = None,
) -> list[BenchResult]:
    """Server side: one client, its destination buffer, byte-exact verification after every run."""
    from gdrdiag.bench import exchange as x

    cfg.validate()
    kind, reg_path = cfg.kinds[0], cfg.reg_paths[0]
    key = case_key("rdma_write", kind, reg_path)
    with contextlib.ExitStack() as stack:
        lst = listener or stack.enter_context(x.Listener(port, bind))
        if progress:
            progress(f"waiting for a client on port {lst.port}")
        ch = stack.enter_context(lst.accept(accept_timeout_s, cfg.timeout_s))
        hello = ch.recv("hello")
        try:
            if hello.get("protocol") != x.PROTOCOL:
                raise x.PeerError(f"client speaks {hello.get('protocol')!r}, we speak {x.PROTOCOL!r}")
            p = hello.get("params") or {}
            qps, slot = int(p["qps"]), int(p["slot"])
            ro = bool(p.get("ro"))
            run_timeout = float(p.get("run_timeout_s", cfg.timeout_s))
            remote = [v.QpInfo.from_json(q) for q in hello.get("qps", [])]
            if len(remote) != qps or not 1 <= qps <= 4096 or not 0 < slot <= 1 << 34:
                raise x.PeerError("client sent inconsistent QP parameters")
            dev, pd = _session_device(replace(cfg, qps=qps), stack)
            gpus = GpuScope(cfg.gpu, kind.needs_gpu)
            stack.callback(gpus.close)
            access = (cfg.access & ~v.ACCESS_RELAXED_ORDERING) | v.ACCESS_REMOTE_WRITE | v.ACCESS_LOCAL_WRITE
            if ro or cfg.relaxed_ordering:
                access |= v.ACCESS_RELAXED_ORDERING
            dst = allocate_region(stack, pd, gpus, kind, reg_path, qps * slot, access, cfg.offset)
            cq = stack.enter_context(dev.create_cq(qps + 16))
            mine = []
            for r in remote:
                qp = stack.enter_context(pd.create_rc_qp(cq, max_send_wr=1, max_recv_wr=1))
                qp.connect(r, v.ACCESS_LOCAL_WRITE | v.ACCESS_REMOTE_WRITE)
                mine.append(qp)
        except (GdrdiagError, KeyError, ValueError, TypeError) as exc:
            ch.send("error", message=str(exc) if isinstance(exc, GdrdiagError) else f"bad hello: {exc}")
            raise
        where, words = landing(kind, reg_path, dev.provider)
        ch.send(
            "welcome",
            qps=[q.info().to_json() for q in mine],
            mr={"addr": dst.mr.addr, "rkey": dst.mr.rkey, "length": dst.nbytes},
            memory=kind.value,
            reg_path=reg_path,
            landing=where,
            lands_in=words,
            provider=dev.provider,
            access="|".join(v.access_names(dst.mr.access)),
        )
        runs = verified_runs = 0
        failure = None
        while True:
            msg = ch.recv(("run", "bye"), timeout_s=run_timeout)
            if msg["type"] == "bye":
                break
            dst.buffer.fill(POISON, dst.nbytes)
            ch.send("ready")
            done = ch.recv("done", timeout_s=run_timeout)
            bad = _verify_regions(dst, done.get("regions", []), slot)
            runs += 1
            if bad:
                failure = failure or bad
            else:
                verified_runs += 1
            ch.send("verified", ok=bad is None, detail=bad or "")
    params = {
        "memory": kind.value,
        "reg_path": reg_path,
        "landing": where,
        "lands_in": words,
        "topology": "two_machine",
        "role": "server",
        "qps": qps,
        "slot": slot,
        "ro": ro,
    }
    fields = dict(
        description=_describe(kind, reg_path, dev.provider, "RDMA WRITE target (server side)"),
        params=params,
        metrics={"runs": float(runs), "verified_runs": float(verified_runs)},
        method="server side: destination poisoned before and every byte checked after each client run; "
        "bandwidth is measured by the client",
        provider=dev.provider,
    )
    if failure:
        return [BenchResult.error(key, failure, verified=False, **fields)]
    return [BenchResult(key=key, status=_ok(), verified=runs > 0, **fields)]


def _verify_regions(dst: Region, regions: Sequence[dict], slot: int) -> Optional[str]:
    try:
        expected = []
        for i, r in enumerate(regions):
            if int(r["offset"]) != i * slot:
                return f"client announced region {i} at offset {r['offset']}, expected {i * slot}"
            expected.append(pattern(int(r["length"]), seed=int(r["seed"])))
    except (KeyError, TypeError, ValueError):
        return "client announced malformed regions"
    if not expected:
        return "client announced no regions"
    return verify(dst, expected, slot)


def run_client(
    cfg: MrBenchConfig,
    host: str,
    *,
    port: int = 18515,
    connect_timeout_s: float = 10.0,
    retry_s: float = 0.0,
    progress: ProgressFn = None,
    tick: Optional[Callable[[], None]] = None,
) -> list[BenchResult]:
    """Client side: writes into the server's MR; bandwidth measured here, bytes verified there."""
    from gdrdiag.bench import exchange as x

    cfg.validate()
    if len(cfg.sizes) != 1 or cfg.ro_ab or cfg.write_with_imm or cfg.latency or cfg.blocks:
        raise UserInputError(
            "two-machine mode runs one size and one RO setting in bandwidth mode "
            "(no -a, --ro-ab, --matrix, --latency, --blocks, --write-with-imm)"
        )
    kind = cfg.src_kind or cfg.kinds[0]
    size = cfg.sizes[0]
    signal_every = rdma_math.signal_interval(cfg.tx_depth, cfg.post_list, cfg.cq_mod)
    run_timeout = cfg.timeout_s + (cfg.duration or 0) + 5.0
    ro = bool(cfg.access_mask & v.ACCESS_RELAXED_ORDERING)
    outs: list[LoopOutcome] = []
    failure = None
    with contextlib.ExitStack() as stack:
        dev, pd = _session_device(cfg, stack)
        gpus = GpuScope(cfg.gpu, kind.needs_gpu)
        stack.callback(gpus.close)
        src = allocate_region(
            stack,
            pd,
            gpus,
            kind,
            cfg.reg_paths[0] if kind is MemoryKind.DEVICE else "mr",
            cfg.qps * size,
            cfg.access_mask,
            cfg.offset,
        )
        cq = stack.enter_context(dev.create_cq(cfg.qps * cfg.tx_depth + 16))
        qps = [
            stack.enter_context(pd.create_rc_qp(cq, max_send_wr=cfg.tx_depth, max_recv_wr=1))
            for _ in range(cfg.qps)
        ]
        for qp in qps:
            qp.to_init(v.ACCESS_LOCAL_WRITE)
        ch = stack.enter_context(
            x.connect(host, port, timeout_s=connect_timeout_s, io_timeout_s=run_timeout, retry_s=retry_s)
        )
        ch.send(
            "hello",
            protocol=x.PROTOCOL,
            qps=[q.info().to_json() for q in qps],
            params={"qps": cfg.qps, "slot": size, "ro": ro, "run_timeout_s": run_timeout},
        )
        welcome = ch.recv("welcome")
        try:
            remote = [v.QpInfo.from_json(q) for q in welcome["qps"]]
            mr = welcome["mr"]
            raddr, rkey, rlen = int(mr["addr"]), int(mr["rkey"]), int(mr["length"])
        except (KeyError, TypeError, ValueError) as exc:
            raise x.PeerError(f"server sent a malformed welcome: {exc}") from None
        if len(remote) != cfg.qps or rlen < cfg.qps * size:
            raise x.PeerError(
                f"server offered {len(remote)} QPs and {rlen} bytes; need {cfg.qps} and {cfg.qps * size}"
            )
        for qp, r in zip(qps, remote, strict=True):
            qp.to_rtr(r)
            qp.to_rts()
        dst_kind = MemoryKind.parse(str(welcome.get("memory", "pageable")))
        dst_reg = str(welcome.get("reg_path", "mr"))
        seeds = [0x5A + 17 * i for i in range(cfg.qps)]
        for i, s in enumerate(seeds):
            src.buffer.write(pattern(size, seed=s), i * size)
        lanes = build_lanes(
            qps,
            [
                [
                    v.WriteWR(i, src.addr(i * size), size, src.mr.lkey, raddr + i * size, rkey, False)
                    for _ in range(cfg.post_list)
                ]
                for i in range(cfg.qps)
            ],
        )
        regions = [{"offset": i * size, "length": size, "seed": s} for i, s in enumerate(seeds)]
        for r in range(cfg.repeats):
            if progress:
                progress(f"run {r + 1}/{cfg.repeats} to {host}")
            ch.send("run", index=r)
            ch.recv("ready")
            outs.append(
                run_bw(
                    lanes,
                    cq,
                    tx_depth=cfg.tx_depth,
                    signal_every=signal_every,
                    lists_total=(cfg.iterations // cfg.post_list) if cfg.iterations else None,
                    duration=cfg.duration,
                    timeout_s=cfg.timeout_s,
                    tick=tick,
                )
            )
            ch.send("done", regions=regions)
            ver = ch.recv("verified", timeout_s=run_timeout)
            if not ver.get("ok") and failure is None:
                failure = f"server reports: {ver.get('detail') or 'payload mismatch'}"
        ch.send("bye")
    params = _base_params(cfg, dst_kind, dst_reg, dev.provider, "two_machine")
    params.update(
        size=size,
        ro=ro,
        src_memory=kind.value,
        role="client",
        peer=f"{host}:{port}",
        mode="bw",
        lands_in=str(welcome.get("lands_in", "")),
        landing=str(welcome.get("landing", "")),
        access="|".join(v.access_names(cfg.access_mask)),
        iterations=cfg.iterations,
        duration_s=cfg.duration,
    )
    return [
        _bw_result(
            case_key("rdma_write", dst_kind, dst_reg),
            params,
            outs,
            failure,
            dev.provider,
            _describe(dst_kind, dst_reg, dev.provider, f"RDMA WRITE to {host}"),
            _bw_method(cfg, signal_every, dev.provider) + "; bytes verified by the server",
        )
    ]
