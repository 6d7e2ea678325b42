"""Two machines: ``mr-bench --server`` (the target) and ``--connect HOST`` (the writer).

QP information crosses the TCP exchange of bench/exchange.py. The server verifies every byte after each
client run; bandwidth is measured by the client.
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
from dataclasses import dataclass, replace
from typing import Any, Callable, Optional

from gdrdiag.bench import rdma_math
from gdrdiag.bench.mr_config import DEFAULT_ACCESS, POISON, MrBenchConfig, ProgressFn, case_key, landing
from gdrdiag.bench.mr_setup import (
    GpuScope,
    Region,
    allocate_region,
    base_params,
    bw_method,
    bw_result,
    check_port_mtu,
    describe,
    ok_status,
    path_mtu_info,
    run_settings_of,
    uses_local_gpu,
    verify,
)
from gdrdiag.bench.rdma_loop import LoopOutcome, build_lanes, run_bw
from gdrdiag.bench.runner import on_gpu, with_placement
from gdrdiag.errors import GdrdiagError, UserInputError
from gdrdiag.hw import placement, verbs_providers
from gdrdiag.hw import verbs as v
from gdrdiag.hw.memory import MemoryKind, pattern
from gdrdiag.model.params import MrMetrics, MrParams, NumaPlacement
from gdrdiag.model.results import BenchResult
from gdrdiag.model.vocabulary import AccessFlags, RegPath, RelaxedOrdering
from gdrdiag.model.words import WordError, parse_memory_kind


def session_device(cfg: MrBenchConfig, stack: contextlib.ExitStack) -> tuple[v.Device, v.PD, NumaPlacement]:
    """The device and PD of one side, and the placement near the device (applied until the stack closes)."""
    dev = stack.enter_context(
        verbs_providers.open_device(
            cfg.provider, cfg.device, cfg.port, cfg.gid_index, **dict(cfg.soft_options)
        )
    )
    pd = stack.enter_context(dev.alloc_pd())
    check_device_limits(dev, cfg.qps, cfg.tx_depth)
    where = stack.enter_context(placement.applied(placement.plan_for_rdma(cfg.numa, dev.name)))
    return dev, pd, where


def check_device_limits(dev: v.Device, qps: int, tx_depth: int) -> None:
    """UserInputError when ``dev`` cannot hold ``qps`` QPs of ``tx_depth`` send WRs."""
    lim = dev.limits()
    if qps > lim.max_qp:
        raise UserInputError(f"-q {qps}: {dev.name} allows at most {lim.max_qp} QPs")
    if tx_depth > lim.max_qp_wr:
        raise UserInputError(f"-t {tx_depth}: {dev.name} allows at most {lim.max_qp_wr} WRs per QP")


# The server's own limits rule what a client may ask for (a peer must not pick the server's memory
# or timeouts): at most this many QPs, and QPs x slot no larger than --mr-size or, without it, 1 GiB.
SERVER_MAX_QPS = 64
SERVER_DEFAULT_MAX_MR = 1 << 30
SEED_LIMIT = 1 << 32  # a region's pattern seed (the client sends small ones)


@dataclass(frozen=True)
class _Asked:
    """A client's hello, checked against the server's own limits (nothing allocated yet)."""

    qps: int
    slot: int
    ro: RelaxedOrdering
    remote: tuple
    run_timeout: float


@dataclass
class _Served:
    """What the server set up for its client: device, destination region, its QPs, and the agreed shape."""

    dev: Any
    dst: Region
    qps: int
    slot: int
    access: AccessFlags  # what the destination MR was registered with (RO bit included when on)
    run_timeout: float
    mine: list  # the server's QPs, connected to the client's
    where: NumaPlacement  # the CPU/NUMA placement the server ran with


def serve(
    cfg: MrBenchConfig,
    *,
    port: int = 18515,
    bind: str = "127.0.0.1",
    accept_timeout_s: float = 60.0,
    listener: Any = None,
    progress: ProgressFn = None,
    secret: Optional[bytes] = None,
) -> list[BenchResult]:
    """Server side: one client, its destination buffer, byte-exact verification after every run.

    Listens on ``bind`` (loopback unless the user names an address). With a ``secret`` the client
    must prove it holds the same one first (exchange.admit_client). The client's QP count, slot
    size and timeouts are checked against the server's own limits before anything is allocated;
    a connection that stalls, fails the handshake or asks past those limits is told why and closed,
    and the server goes on waiting for a client it can serve (exchange.Listener.admit).
    """
    from gdrdiag.bench import exchange as x

    cfg.validate()
    if cfg.ro is RelaxedOrdering.AB:
        raise UserInputError("two-machine mode runs one RO setting: no --ro-ab or --matrix on --server")
    kind, reg_path = cfg.kinds[0], cfg.reg_paths[0]
    key = case_key("rdma_write", kind, reg_path)
    with contextlib.ExitStack() as stack:
        # Open the RDMA device before listening: a host without one fails now, not after a client came.
        device = session_device(replace(cfg, qps=1, tx_depth=1), stack)
        check_port_mtu(device[0], cfg.mtu)
        lst = listener or stack.enter_context(x.Listener(port, bind))
        if progress:
            progress(f"waiting for a client on {bind}:{lst.port}")
        ch, asked = lst.admit(
            accept_timeout_s, cfg.timeout_s, secret, lambda hello: check_hello(hello, cfg), note=progress
        )
        stack.enter_context(ch)
        try:
            served = _accept_client(stack, cfg, device, asked, kind, reg_path)
        except GdrdiagError as exc:
            ch.send("error", message=str(exc))
            raise
        where, words = landing(kind, reg_path, served.dev.provider)
        ch.send(
            "welcome",
            qps=[q.info().to_json() for q in served.mine],
            mr={"addr": served.dst.mr.addr, "rkey": served.dst.mr.rkey, "length": served.dst.nbytes},
            memory=kind.value,
            reg_path=reg_path,
            landing=where,
            lands_in=words,
            provider=served.dev.provider,
            access="|".join(v.access_names(served.dst.mr.access)),
        )
        runs, verified_runs, failure = _serve_runs(ch, served)
    params = MrParams(
        memory=kind,
        reg_path=RegPath(reg_path),
        landing=where,
        lands_in=words,
        topology="two_machine",
        role="server",
        qps=served.qps,
        slot_bytes=served.slot,
        access=served.access,
    )
    fields = dict(
        description=describe(kind, reg_path, served.dev.provider, "RDMA WRITE target (server side)"),
        params=params,
        metrics=MrMetrics(runs=float(runs), verified_runs=float(verified_runs)),
        method="server side: destination poisoned before and every byte checked after each client run; "
        "bandwidth is measured by the client",
        provider=served.dev.provider,
    )
    if failure:
        done = BenchResult.error(key, failure, verified=False, **fields)
    else:
        done = BenchResult(key=key, status=ok_status(), verified=runs > 0, **fields)
    return with_placement(on_gpu([done], cfg.gpu, uses_local_gpu), served.where)


def _int(value: Any) -> Optional[int]:
    """``value`` when it is a JSON integer (not a bool, a float or text); else None."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def check_hello(hello: dict, cfg: MrBenchConfig) -> _Asked:
    """The client's hello against the server's own limits, before anything is allocated (PeerError)."""
    from gdrdiag.bench import exchange as x

    if hello.get("protocol") != x.PROTOCOL:
        raise x.PeerError(f"client speaks {str(hello.get('protocol'))[:40]!r}, we speak {x.PROTOCOL!r}")
    p = hello.get("params")
    raw_qps = hello.get("qps")
    if not isinstance(p, dict) or not isinstance(raw_qps, list):
        raise x.PeerError("client sent a malformed hello (no params or qps)")
    qps, slot = _int(p.get("qps")), _int(p.get("slot"))
    if qps is None or slot is None:
        raise x.PeerError("client sent a malformed hello (qps and slot must be integers)")
    max_mr = cfg.mr_size or SERVER_DEFAULT_MAX_MR
    if len(raw_qps) != qps or not 1 <= qps <= SERVER_MAX_QPS:
        raise x.PeerError(
            f"client asked for {qps} QPs ({len(raw_qps)} sent); this server takes 1..{SERVER_MAX_QPS}"
        )
    if not 0 < slot <= max_mr:
        raise x.PeerError(
            f"client asked for {slot}-byte slots; this server allows up to {max_mr} (--mr-size)"
        )
    if qps * slot > max_mr:
        raise x.PeerError(
            f"client asked for {qps} QPs x {slot}-byte slots = {qps * slot} bytes; this server "
            f"registers at most {max_mr} (--mr-size)"
        )
    try:
        remote = tuple(v.QpInfo.from_json(q) for q in raw_qps)
    except ValueError as exc:
        raise x.PeerError(f"client sent a malformed hello: {exc}") from None
    # The hello's ``ro`` is a bool on the wire (kept so older peers interoperate): the client asks for
    # RO on; the server's own --relaxed-ordering turns it on whatever the client says.
    ro = RelaxedOrdering.ON if p.get("ro") is True or cfg.ro is RelaxedOrdering.ON else RelaxedOrdering.OFF
    run_timeout = server_run_timeout(p.get("run_timeout_s"), cfg.timeout_s, cfg.duration)
    return _Asked(qps, slot, ro, remote, run_timeout)


def _accept_client(
    stack,
    cfg: MrBenchConfig,
    device: tuple[v.Device, v.PD, NumaPlacement],
    asked: _Asked,
    kind: MemoryKind,
    reg_path: str,
) -> _Served:
    """Make the region for a checked hello and connect the QPs."""
    dev, pd, where = device
    check_device_limits(dev, asked.qps, 1)
    gpus = GpuScope(cfg.gpu, kind.needs_gpu)
    stack.callback(gpus.close)
    (access,) = asked.ro.access(cfg.access | DEFAULT_ACCESS)
    dst = allocate_region(stack, pd, gpus, kind, reg_path, asked.qps * asked.slot, access, cfg.offset)
    cq = stack.enter_context(dev.create_cq(asked.qps + 16))
    mine = []
    for r in asked.remote:
        qp = stack.enter_context(pd.create_rc_qp(cq, max_send_wr=1, max_recv_wr=1))
        qp.connect(path_mtu_info(r, cfg.mtu), v.ACCESS_LOCAL_WRITE | v.ACCESS_REMOTE_WRITE)
        mine.append(qp)
    return _Served(dev, dst, asked.qps, asked.slot, access, asked.run_timeout, mine, where)


def server_run_timeout(asked: Any, own_timeout_s: float, own_duration_s: Optional[float] = None) -> float:
    """How long the server waits for one client run: its own figure, never the client's.

    The server waits its --timeout plus its -D plus 5 s. A client whose runs may take longer (its
    -D or --timeout) is refused with the figures, so both sides can be given the same ones; a
    missing, non-numeric, NaN or negative figure from the client is ignored.
    """
    from gdrdiag.bench import exchange as x

    own = own_timeout_s + (own_duration_s or 0.0) + 5.0
    try:
        value = float(asked)
    except (TypeError, ValueError, OverflowError):
        return own
    if not math.isfinite(value) or value <= 0 or value <= own:
        return own
    raise x.PeerError(
        f"the client's runs may take {value:.0f} s; this server waits at most {own:g} s per run "
        "(give the server the client's -D and --timeout)"
    )


def _serve_runs(ch, served: _Served) -> tuple[int, int, Optional[str]]:
    """Poison, let the client write, verify every byte; until it says bye. (runs, verified, failure)."""
    runs = verified_runs = 0
    failure = None
    dst = served.dst
    while True:
        msg = ch.recv(("run", "bye"), timeout_s=served.run_timeout)
        if msg["type"] == "bye":
            break
        dst.buffer.fill(POISON, dst.nbytes)
        ch.send("ready")
        done = ch.recv("done", timeout_s=served.run_timeout)
        bad = verify_regions(dst, done.get("regions"), served.slot, served.qps)
        runs += 1
        if bad:
            failure = failure or bad
        else:
            verified_runs += 1
        ch.send("verified", ok=bad is None, detail=bad or "")
    return runs, verified_runs, failure


def verify_regions(dst: Region, regions: Any, slot: int, qps: Optional[int] = None) -> Optional[str]:
    """None when every announced region holds its pattern; else why not.

    Every region is bounded by the server's own shape before any pattern is built: one per QP at
    its slot's offset, a length of 1..slot bytes and a seed in 0..2^32-1 (the client chooses none
    of the server's memory).
    """
    if not isinstance(regions, list) or not regions:
        return "client announced no regions"
    if len(regions) > (qps if qps is not None else len(regions)):
        return f"client announced {len(regions)} regions for {qps} QPs"
    shape = []
    for i, r in enumerate(regions):
        if not isinstance(r, dict):
            return "client announced malformed regions"
        offset, length, seed = _int(r.get("offset")), _int(r.get("length")), _int(r.get("seed"))
        if offset is None or length is None or seed is None:
            return "client announced malformed regions"
        if offset != i * slot:
            return f"client announced region {i} at offset {offset}, expected {i * slot}"
        if not 0 < length <= slot:
            return f"client announced region {i} of {length} bytes; a region is 1..{slot} bytes"
        if not 0 <= seed < SEED_LIMIT:
            return f"client announced region {i} with seed {seed}; a seed is 0..{SEED_LIMIT - 1}"
        shape.append((length, seed))
    return verify(dst, [pattern(length, seed=seed) for length, seed in shape], slot)


def run_client(
    cfg: MrBenchConfig,
    host: str,
    *,
    port: int = 18515,
    connect_timeout_s: float = 10.0,
    retry_s: float = 0.0,
    progress: ProgressFn = None,
    tick: Optional[Callable[[], None]] = None,
    secret: Optional[bytes] = None,
) -> list[BenchResult]:
    """Client side: writes into the server's MR; bandwidth measured here, bytes verified there."""
    from gdrdiag.bench import exchange as x

    cfg.validate()
    if len(cfg.sizes) != 1 or cfg.ro is RelaxedOrdering.AB or cfg.write_with_imm or cfg.latency or cfg.blocks:
        raise UserInputError(
            "two-machine mode runs one size and one RO setting in bandwidth mode "
            "(no -a, --ro-ab, --matrix, --latency, --blocks, --write-with-imm)"
        )
    kind = cfg.src_kind or cfg.kinds[0]
    size = cfg.sizes[0]
    signal_every = rdma_math.signal_interval(cfg.tx_depth, cfg.post_list, cfg.cq_mod)
    run_timeout = cfg.timeout_s + (cfg.duration or 0) + 5.0
    outs: list[LoopOutcome] = []
    failure = None
    with contextlib.ExitStack() as stack:
        dev, src, cq, qps, where = _client_resources(stack, cfg, kind, size)
        ch = stack.enter_context(
            x.connect(host, port, timeout_s=connect_timeout_s, io_timeout_s=run_timeout, retry_s=retry_s)
        )
        x.prove_to_server(ch, secret)
        ch.send(
            "hello",
            protocol=x.PROTOCOL,
            qps=[q.info().to_json() for q in qps],
            params={
                "qps": cfg.qps,
                "slot": size,
                "ro": cfg.ro is RelaxedOrdering.ON,
                "run_timeout_s": run_timeout,
            },
        )
        welcome = ch.recv("welcome")
        raddr, rkey = _connect_to_welcome(welcome, cfg, qps, size)
        dst_kind = _welcome_kind(welcome)
        dst_reg = str(welcome.get("reg_path", "mr"))
        seeds = [0x5A + 17 * i for i in range(cfg.qps)]
        for i, s in enumerate(seeds):
            src.buffer.write(pattern(size, seed=s), i * size)
        wrs = [
            [v.WriteWR(i, src.addr(i * size), size, src.mr.lkey, raddr + i * size, rkey, False)]
            * cfg.post_list
            for i in range(cfg.qps)
        ]
        lanes = build_lanes(qps, wrs)
        regions = [{"offset": i * size, "length": size, "seed": s} for i, s in enumerate(seeds)]
        for r in range(cfg.repeats):
            if progress:
                progress(f"run {r + 1}/{cfg.repeats} to {host}")
            out, bad = _client_run(ch, cfg, lanes, cq, signal_every, regions, run_timeout, r, tick)
            outs.append(out)
            failure = failure or bad
        ch.send("bye")
    params = dataclasses.replace(
        base_params(cfg, dst_kind, dst_reg, dev.provider, "two_machine"),
        size_bytes=size,
        src_memory=kind,
        role="client",
        mode="bw",
        lands_in=str(welcome.get("lands_in", "")),
        landing=str(welcome.get("landing", "")),
        access=cfg.single_access,
    )
    settings = run_settings_of(cfg, peer=f"{host}:{port}", iterations=cfg.iterations, duration_s=cfg.duration)
    done = bw_result(
        case_key("rdma_write", dst_kind, dst_reg),
        params,
        settings,
        outs,
        failure,
        dev.provider,
        describe(dst_kind, dst_reg, dev.provider, f"RDMA WRITE to {host}"),
        bw_method(cfg, signal_every, dev.provider) + "; bytes verified by the server",
    )
    return with_placement(on_gpu([done], cfg.gpu, uses_local_gpu), where)


def _welcome_kind(welcome: dict) -> MemoryKind:
    """The memory kind the server's welcome names (PeerError for one that names none)."""
    from gdrdiag.bench import exchange as x

    try:
        return parse_memory_kind(str(welcome.get("memory", "pageable")))
    except WordError as exc:
        raise x.PeerError(f"server sent a malformed welcome: {exc}") from None


def _connect_to_welcome(welcome: dict, cfg: MrBenchConfig, qps: list, size: int) -> tuple[int, int]:
    """Check the server's offer, bring our QPs to RTS against its QPs; (remote address, rkey)."""
    from gdrdiag.bench import exchange as x

    try:
        remote = [v.QpInfo.from_json(q) for q in welcome["qps"]]
        mr = welcome["mr"]
        raddr, rkey, rlen = int(mr["addr"]), int(mr["rkey"]), int(mr["length"])
    except (KeyError, TypeError, ValueError, OverflowError) as exc:
        raise x.PeerError(f"server sent a malformed welcome: {exc}") from None
    if len(remote) != cfg.qps or rlen < cfg.qps * size:
        raise x.PeerError(
            f"server offered {len(remote)} QPs and {rlen} bytes; need {cfg.qps} and {cfg.qps * size}"
        )
    for qp, r in zip(qps, remote, strict=True):
        qp.to_rtr(path_mtu_info(r, cfg.mtu))
        qp.to_rts()
    return raddr, rkey


def _client_resources(stack, cfg: MrBenchConfig, kind: MemoryKind, size: int):
    """(device, source region, CQ, QPs in INIT) of the writing side."""
    dev, pd, where = session_device(cfg, stack)
    check_port_mtu(dev, cfg.mtu)
    gpus = GpuScope(cfg.gpu, kind.needs_gpu)
    stack.callback(gpus.close)
    reg = cfg.reg_paths[0] if kind is MemoryKind.DEVICE else "mr"
    src = allocate_region(stack, pd, gpus, kind, reg, cfg.qps * size, cfg.single_access, cfg.offset)
    cq = stack.enter_context(dev.create_cq(cfg.qps * cfg.tx_depth + 16))
    qps = [
        stack.enter_context(pd.create_rc_qp(cq, max_send_wr=cfg.tx_depth, max_recv_wr=1))
        for _ in range(cfg.qps)
    ]
    for qp in qps:
        qp.to_init(v.ACCESS_LOCAL_WRITE)
    return dev, src, cq, qps, where


def _client_run(
    ch, cfg: MrBenchConfig, lanes, cq, signal_every: int, regions: list, run_timeout: float, index: int, tick
) -> tuple[LoopOutcome, Optional[str]]:
    """One measured run: the server poisons, we write, the server verifies. (outcome, failure or None)."""
    ch.send("run", index=index)
    ch.recv("ready")
    out = run_bw(
        lanes,
        cq,
        tx_depth=cfg.tx_depth,
        signal_every=signal_every,
        lists_total=(cfg.iterations // cfg.post_list) if cfg.iterations else None,
        duration=cfg.duration,
        timeout_s=cfg.timeout_s,
        tick=tick,
    )
    ch.send("done", regions=regions)
    ver = ch.recv("verified", timeout_s=run_timeout)
    return out, None if ver.get("ok") else f"server reports: {ver.get('detail') or 'payload mismatch'}"
