"""The path model: any measured row, whoever produced it, judged against what its own path allows.

Pure. For each numeric row of a Report (gdrdiag's benches, perftest, nvbandwidth, bandwidthTest,
p2pBandwidthLatencyTest, nccl-tests, numbers posted in a thread) :func:`judge` works out

- the **path**: source memory and where it lives, destination, and the **mover** (copy engine, SM,
  NIC DMA, a collective);
- the **bounds** on it: each endpoint's PCIe link (as capable, and as trained when it was read under
  load), the NIC port, times the protocol efficiency of that hop (:mod:`gdrdiag.pcie_model` for PCIe
  reads, posted-write TLPs for writes, packet headers for the wire);
- the **expected value at the row's size**: the narrowest bound, lowered by the mover's cost per
  operation (a 4 KiB copy pays the same few microseconds as a 1 GiB one). The per-operation cost is
  fitted from the Report's own sweep of that path when it has two sizes or more, else a documented
  default (:data:`PER_OP_DEFAULTS`);
- ``measured / expected`` and a verdict (:class:`gdrdiag.model.path.Verdict`). A row the model cannot
  judge says why.

Where the machine facts are missing (an imported file without a bundle), a measured yardstick of the
same Report stands in: host-memory RDMA for GPU-memory RDMA, pinned copies for pageable ones.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Optional, Sequence

from gdrdiag.model.machine import GpuInfo, MachineInfo, NicInfo, PcieLink
from gdrdiag.model.params import CopyParams, GatherParams, ImportedParams, MrParams
from gdrdiag.model.path import (
    LOST_BELOW,
    SLOW_BELOW,
    Bound,
    Endpoint,
    Judgement,
    Mover,
    Place,
    Verdict,
)
from gdrdiag.model.results import BenchResult, Status
from gdrdiag.model.vocabulary import MemoryKind, Provider
from gdrdiag.pcie_model import LinkParams, ce_efficiency
from gdrdiag.units import format_size

# Bytes per second of each bandwidth unit a tool prints (GB/s = 1e9 B/s: gdrdiag/units.py).
_BYTES_PER_S = {
    "GB/s": 1e9,
    "Gb/s": 1e9 / 8,
    "MB/s": 1e6,
    "MiB/s": float(1 << 20),
    "GiB/s": float(1 << 30),
    "Mb/s": 1e6 / 8,
}

# Cost per operation of each mover (microseconds), when the Report has no sweep to fit it from.
# Copy engine: copy-bench's 64 KiB and 1 MiB rows on the H100/H200 VM put 2.8-4.0 us on each
# cudaMemcpyAsync beside its bytes (docs/benchmarks.md, the copy sweep); 4 us is the generous end.
# Collectives: 20 us per call, an assumption of the order nccl-tests prints for small sizes; a sweep
# (nccl-tests -b 8 -e 8G) fits its own.
# NIC DMA: one RDMA WRITE per 0.1 us per QP (10 M messages/s per QP with perftest's defaults) is an
# assumption, not a measurement: a Report with a size sweep (ib_write_bw -a) fits its own.
PER_OP_DEFAULTS = {
    Mover.COPY_ENGINE: (
        4.0,
        "default 4 us per copy call (copy-bench's sweep on H100/H200, docs/benchmarks.md)",
    ),
    Mover.SM: (4.0, "default 4 us per kernel launch and drain"),
    Mover.NIC_DMA: (0.1, "default 0.1 us per message per QP (an assumption: 10 M messages/s per QP)"),
    Mover.COLLECTIVE: (
        20.0,
        "default 20 us per collective call (an assumption: NCCL's small-message latency)",
    ),
}

# A sweep fits its own per-operation cost only when its smallest size is at most this: above it the
# per-operation cost is a few % of the time and a fit would only absorb bandwidth losses.
FIT_BELOW_BYTES = 1 << 20

# PCIe peer-to-peer copies between GPUs reach less of the link than host copies: the peer's BAR
# completes the writes and, across a root complex, the host bridge forwards them. Public A6000
# figures on Gen4 x16 (21.8-26.4 GB/s, "good, ~80% of PCIe Gen4": NVIDIA/nvbandwidth#50) and RTX
# PRO 6000 on Gen5 x16 (~56 GB/s, 89% of raw) put it at 0.76-0.98 of the posted-write model.
PCIE_P2P_SHARE = 0.85

# Posted-write TLP: 4-DW header (16 B) + framing, sequence number and LCRC (8 B) + ~2 B of DLLPs
# (PCIe Base Spec r5.0 2.2.1, 3.6; the same 22 B the read model charges a 3-DW completion, plus 4).
_WRITE_TLP_OVERHEAD = 26
# RDMA wire overhead per packet beside the MTU's payload. InfiniBand: LRH 8 + BTH 12 + ICRC 4 + VCRC 2
# (IBTA Vol. 1, 5.2 and 9.2). RoCE v2: Ethernet 14 + FCS 4 + preamble/SFD 8 + gap 12 + IPv4 20 + UDP 8
# + BTH 12 + ICRC 4 (IBTA Annex A17). The port rate is the data rate (after 64b/66b or PAM4 FEC).
_IB_PACKET_OVERHEAD = 26
_ROCE_PACKET_OVERHEAD = 82
IDEAL_MTU = 4096

# nvbandwidth testcase names and what they move (nvbandwidth README, "Test Details").
_NVB_MOVER = {"_ce": Mover.COPY_ENGINE, "_sm": Mover.SM}


@dataclass(frozen=True)
class _Path:
    """The path of one row, before any expectation."""

    source: Endpoint
    destination: Endpoint
    mover: Mover
    size: Optional[int]
    gpu: Optional[int]
    nic: Optional[str]
    family: tuple  # rows of one sweep share it (everything but the size)
    both_directions: bool = False  # a bidirectional row: bytes moved both ways at once
    ops_in_flight: int = 1  # QPs: NIC operations that overlap
    peer_gpu: Optional[int] = None
    peer_access: Optional[bool] = None
    ranks: Optional[int] = None
    baseline: Optional[str] = None  # a rung built to be slow: why it is never a loss
    reference: Optional[str] = None  # a measured yardstick of the same Report (key) when facts are missing


def to_gbytes_per_s(value: float, unit: str) -> Optional[float]:
    """``value`` in GB/s, or None when ``unit`` is not a bandwidth."""
    scale = _BYTES_PER_S.get(unit)
    return value * scale / 1e9 if scale is not None else None


def posted_write_efficiency(mps: int) -> float:
    """Payload share of a long stream of posted writes with this MaxPayload."""
    return mps / (mps + _WRITE_TLP_OVERHEAD)


def wire_efficiency(link_layer: Optional[str], mtu: Optional[int]) -> float:
    """Payload share of an RDMA port at this MTU (RoCE when the link layer is Ethernet)."""
    mtu = mtu or IDEAL_MTU
    overhead = _ROCE_PACKET_OVERHEAD if (link_layer or "").lower() == "ethernet" else _IB_PACKET_OVERHEAD
    return mtu / (mtu + overhead)


# ---------------------------------------------------------------------------------------------
# rows -> paths
# ---------------------------------------------------------------------------------------------

_HOST_KINDS = {MemoryKind.PINNED, MemoryKind.PINNED_WC, MemoryKind.REGISTERED, MemoryKind.PAGEABLE}


def _host(memory: Optional[MemoryKind]) -> Endpoint:
    return Endpoint(Place.HOST, None, memory)


def _gpu(index: Optional[int], memory: Optional[MemoryKind] = MemoryKind.DEVICE) -> Endpoint:
    return Endpoint(Place.GPU, index, memory)


def _copy_path(r: BenchResult, p: CopyParams) -> tuple[Optional[_Path], Optional[str]]:
    direction = p.direction.value if p.direction is not None else None
    key = r.key
    if key.startswith("copy_overlap"):
        return (
            None,
            "overlap pipeline: its bandwidth includes the kernel's time; judged by its speedup metric",
        )
    if key.startswith("copy_pinning_"):
        if key == "copy_pinning_preallocated":
            return _Path(
                _host(MemoryKind.PINNED), _gpu(0), Mover.COPY_ENGINE, p.size_bytes, 0, None, (key,)
            ), None
        return _Path(
            _host(MemoryKind.PAGEABLE),
            _gpu(0),
            Mover.COPY_ENGINE,
            p.size_bytes,
            0,
            None,
            (key,),
            baseline="a rung of the pinning trade-off (pin per transfer, or none): slow by design",
        ), None
    if key.startswith("copy_blocks_"):
        mover = Mover.SM if key.endswith("_kernel") else Mover.COPY_ENGINE
        size = p.block_bytes
        if key.endswith("_coalesced") or key.endswith("_kernel"):
            size = (p.block_bytes or 0) * (p.blocks or 1) or None
        return _Path(_host(MemoryKind.PINNED), _gpu(0), mover, size, 0, None, (key,)), None
    if direction not in ("h2d", "d2h", "bidir"):
        return None, f"copy direction {direction!r} is not a host<->GPU path"
    memory = p.memory
    host = _host(memory)
    src, dst = (host, _gpu(0)) if direction != "d2h" else (_gpu(0), host)
    return _Path(
        src, dst, Mover.COPY_ENGINE, p.size_bytes, 0, None, (key, p.mode), direction == "bidir"
    ), None


def _gather_path(r: BenchResult, p: GatherParams, best: dict) -> tuple[Optional[_Path], Optional[str]]:
    if r.key == "gather_ce_reference":
        return _Path(
            _host(MemoryKind.PINNED), _gpu(0), Mover.COPY_ENGINE, p.copy_bytes, 0, None, (r.key,)
        ), None
    layout = _gather_layout(p)
    baseline = None
    if best.get(layout) is not r:
        baseline = "a rung of the kernel ladder: only the best kernel of a layout is judged against the model"
    if p.sm_limit is not None and p.sms_total is not None and p.sm_limit != p.sms_total:
        baseline = f"SM-limited run ({p.sm_limit} of {p.sms_total} SMs): slower by design"
    return _Path(
        _host(MemoryKind.PINNED), _gpu(0), Mover.SM, p.slots, 0, None, (r.key, layout), baseline=baseline
    ), None


def _gather_layout(p: GatherParams) -> tuple:
    return (p.record_bytes, p.stride_bytes, p.base_offset_bytes, p.pattern, p.slots, r_sweep_free(p))


def r_sweep_free(p: GatherParams) -> Optional[int]:
    """The part of a gather's identity that a kernel ladder shares (the records, not the kernel)."""
    return p.records


def _mr_path(r: BenchResult, p: MrParams) -> tuple[Optional[_Path], Optional[str]]:
    if not r.key.startswith("rdma_write_"):
        return None, "an RDMA registration or loop cost, not a bandwidth: judged by mr-bench's own rules"
    if (p.mode or "bw") != "bw":
        return None, f"mr-bench {p.mode} mode: a latency or per-block cost, not a path bandwidth"
    if p.role == "server":
        return None, "the server side of a two-host run: the client's row carries the bandwidth"
    landing_gpu = p.landing == "gpu" if p.landing else p.memory is MemoryKind.DEVICE
    dst = _gpu(0) if landing_gpu else _host(p.memory)
    src_kind = p.src_memory or p.memory
    src = _gpu(0) if src_kind is MemoryKind.DEVICE else _host(src_kind)
    qps = p.qps or 1
    return _Path(
        src,
        dst,
        Mover.NIC_DMA,
        p.size_bytes,
        0,
        r.settings.device_name,
        (r.key, str(p.reg_path), p.relaxed_ordering, qps, p.post_list),
        ops_in_flight=qps,
    ), None


def _imported_path(r: BenchResult, p: ImportedParams) -> tuple[Optional[_Path], Optional[str]]:
    tool, test = p.tool or "", p.test or ""
    gpu = p.gpu if p.gpu is not None else 0
    if "gdrcopy" in test.lower() or "gdrcopy" in tool.lower():
        return (
            None,
            "CPU stores into GPU memory through its BAR (gdrcopy): the CPU moves the bytes, no DMA path "
            "to model",
        )
    family = (tool, test, p.direction, p.memory, p.gpu, p.peer_gpu, p.peer_access, p.qps, p.access)
    if tool in (Provider.PERFTEST.value, Provider.POSTED.value) and test in (
        "write_bw",
        "read_bw",
        "send_bw",
    ):
        mem = _gpu(gpu) if p.memory is MemoryKind.DEVICE else _host(p.memory or MemoryKind.PINNED)
        remote = Endpoint(Place.REMOTE, None, p.memory)
        src, dst = (remote, mem) if test == "read_bw" else (mem, remote)
        if p.direction in ("nic->gpu", "nic->host"):
            src, dst = remote, mem
        return _Path(
            src, dst, Mover.NIC_DMA, p.size_bytes, gpu, p.device_name, family, ops_in_flight=p.qps or 1
        ), None
    if tool == Provider.NCCL_TESTS.value or test.endswith("_perf") or p.collective:
        return _Path(
            _gpu(gpu),
            Endpoint(Place.REMOTE),
            Mover.COLLECTIVE,
            p.size_bytes,
            gpu,
            p.device_name,
            family,
            ranks=p.ranks,
        ), None
    direction = p.direction or ""
    if direction == "d2d" or test.startswith("device_to_device") or tool == Provider.P2P_TEST.value:
        if p.peer_gpu is None or p.peer_gpu == p.gpu:
            return None, "a copy within one GPU's memory (HBM), not a data path gdrdiag models"
        return _Path(
            _gpu(gpu),
            _gpu(p.peer_gpu),
            Mover.COPY_ENGINE,
            p.size_bytes,
            gpu,
            None,
            family,
            both_directions="bidirectional" in test.lower(),
            peer_gpu=p.peer_gpu,
            peer_access=p.peer_access,
        ), None
    if direction in ("h2d", "d2h", "bidir") or test.startswith(("host_to_device", "device_to_host")):
        if not direction:
            direction = "h2d" if test.startswith("host_to_device") else "d2h"
        mover = next((m for suffix, m in _NVB_MOVER.items() if test.endswith(suffix)), Mover.COPY_ENGINE)
        host = _host(p.memory or MemoryKind.PINNED)
        src, dst = (host, _gpu(gpu)) if direction != "d2h" else (_gpu(gpu), host)
        return _Path(src, dst, mover, p.size_bytes, gpu, None, family, direction == "bidir"), None
    return None, f"{tool} {test}: a measurement this version's path model does not know"


def _best_gathers(results: Sequence[BenchResult]) -> dict:
    """The fastest all-SM gather of each layout: the row the model judges."""
    best: dict = {}
    for r in results:
        p = r.params
        if not isinstance(p, GatherParams) or r.key == "gather_ce_reference" or r.status is not Status.OK:
            continue
        if p.sm_limit is not None and p.sms_total is not None and p.sm_limit != p.sms_total:
            continue
        layout = _gather_layout(p)
        if r.value and (layout not in best or r.value > (best[layout].value or 0)):
            best[layout] = r
    return best


def path_of(r: BenchResult, best_gathers: Optional[dict] = None) -> tuple[Optional[_Path], Optional[str]]:
    """The path of one result, or (None, why it has none)."""
    p = r.params
    if isinstance(p, CopyParams):
        if r.key == "copy_blocks_summary":
            return None, "a summary of the block sweep (half-bandwidth block sizes), not a bandwidth"
        return _copy_path(r, p)
    if isinstance(p, GatherParams):
        return _gather_path(r, p, best_gathers if best_gathers is not None else {})
    if isinstance(p, MrParams):
        return _mr_path(r, p)
    if isinstance(p, ImportedParams):
        return _imported_path(r, p)
    return None, "a result kind the path model does not know"


# ---------------------------------------------------------------------------------------------
# machine facts -> bounds
# ---------------------------------------------------------------------------------------------


def _gpu_info(m: Optional[MachineInfo], ordinal: Optional[int]) -> Optional[GpuInfo]:
    if m is None or not m.gpus:
        return None
    for g in m.gpus:
        if g.cuda_ordinal is not None and g.cuda_ordinal == ordinal:
            return g
    return m.gpus[ordinal] if ordinal is not None and 0 <= ordinal < len(m.gpus) else m.gpus[0]


def _link_params(m: MachineInfo, bdf: Optional[str]) -> LinkParams:
    f = m.function(bdf)
    if f is None or f.pcie is None:
        return LinkParams()
    try:
        return LinkParams(mps=f.pcie.max_payload, mrrs=f.pcie.max_read_request)
    except ValueError:
        return LinkParams()


def _pcie_bound(
    name: str, link: Optional[PcieLink], params: LinkParams, reads: bool, trained: bool
) -> Optional[Bound]:
    """The payload rate of one PCIe link: capable (trained=False) or as trained under load."""
    if link is None:
        return None
    raw = link.raw_gbytes_per_s if trained else (link.max_raw_gbytes_per_s or link.raw_gbytes_per_s)
    if not raw:
        return None
    speed = link.speed_gts if trained else (link.max_speed_gts or link.speed_gts)
    width = link.width if trained else (link.max_width or link.width)
    eff = ce_efficiency(params) if reads else posted_write_efficiency(params.mps)
    what = "reads (completions)" if reads else "posted writes"
    return Bound(
        f"{name} PCIe {speed:g} GT/s x{width} ({'as trained' if trained else 'capable'})",
        raw * eff,
        f"{raw:.2f} GB/s raw x {eff:.3f} for {what} at MPS {params.mps}",
    )


def _gpu_bounds(m: MachineInfo, ordinal: Optional[int], reads: bool, trained: bool) -> list[Bound]:
    g = _gpu_info(m, ordinal)
    if g is None:
        return []
    if trained and (g.link_sampled_idle or g.link is None or g.link.raw_gbytes_per_s is None):
        return []
    b = _pcie_bound(f"GPU {g.bdf}", g.link, _link_params(m, g.bdf), reads, trained)
    return [b] if b else []


def _nic_info(m: MachineInfo, name: Optional[str]) -> Optional[NicInfo]:
    if not m.nics:
        return None
    return next((n for n in m.nics if n.name == name), m.nics[0])


def _nic_bounds(m: MachineInfo, name: Optional[str], mtu_as_configured: bool) -> list[Bound]:
    n = _nic_info(m, name)
    if n is None:
        return []
    out = []
    ports = [p for p in n.ports if p.rate_gbps]
    if ports:
        port = max(ports, key=lambda p: p.rate_gbps or 0)
        mtu = port.active_mtu if mtu_as_configured else IDEAL_MTU
        eff = wire_efficiency(port.link_layer, mtu)
        out.append(
            Bound(
                f"NIC {n.name} port {port.rate_gbps:g} Gb/s ({port.link_layer or 'link layer ?'}, MTU {mtu})",
                port.rate_gbps / 8 * eff,  # type: ignore[operator]
                f"{port.rate_gbps:g} Gb/s x {eff:.3f} payload per packet at MTU {mtu}",
            )
        )
    b = _pcie_bound(f"NIC {n.name}", n.link, _link_params(m, n.bdf), reads=False, trained=False)
    if b:
        out.append(b)
    return out


def _bounds(m: Optional[MachineInfo], path: _Path, as_configured: bool) -> list[Bound]:
    """Every bound on the path: capable links (as_configured=False) or links as trained and MTU as set."""
    if m is None:
        return []
    out: list[Bound] = []
    for end, reads in ((path.source, True), (path.destination, False)):
        if end.place is Place.GPU:
            out += _gpu_bounds(
                m, end.index, reads=reads and path.mover is not Mover.NIC_DMA or reads, trained=as_configured
            )
    if path.mover is Mover.NIC_DMA:
        out += _nic_bounds(m, path.nic, mtu_as_configured=as_configured)
    if path.mover is Mover.COLLECTIVE:
        out += _collective_bounds(m, path)
    if (
        path.source.place is Place.GPU
        and path.destination.place is Place.GPU
        and path.mover is not Mover.NIC_DMA
    ):
        out = [
            Bound(
                b.name + " (PCIe peer-to-peer)",
                b.gbytes_per_s * PCIE_P2P_SHARE,
                b.source + f" x {PCIE_P2P_SHARE} peer-to-peer",
            )
            for b in out
        ]
    return out


def _collective_bounds(m: MachineInfo, path: _Path) -> list[Bound]:
    """NCCL across nodes: the node's NIC ports together bound its bus bandwidth.

    nccl-tests defines busbw so that it compares with the hardware's peak (doc/PERFORMANCE.md).
    """
    ports = [(n, p) for n in m.nics for p in n.ports if p.rate_gbps]
    if not ports or (path.ranks is not None and path.ranks <= max(1, len(m.gpus))):
        return []  # within one node NCCL rides NVLink / PCIe peer paths, not the NICs
    total = sum(p.rate_gbps / 8 * wire_efficiency(p.link_layer, IDEAL_MTU) for _, p in ports)  # type: ignore[operator]
    return [
        Bound(
            f"the node's {len(ports)} NIC port(s) together",
            total,
            f"sum of the port payload rates: {total:.1f} GB/s (a ring or tree across nodes crosses them all)",
        )
    ]


# ---------------------------------------------------------------------------------------------
# judging
# ---------------------------------------------------------------------------------------------


def _expected_at(peak: float, size: Optional[int], per_op_us: float, ops: int) -> float:
    if not size or per_op_us <= 0:
        return peak
    seconds = size / (peak * 1e9) + per_op_us * 1e-6 / max(1, ops)
    return size / seconds / 1e9


def _fit_per_op(rows: Iterable[tuple[int, float]], peak: float) -> Optional[float]:
    """The per-operation time (us) a sweep's smallest size shows: (size, GB/s) pairs of one path.

    The smallest size is where the per-operation cost dominates, so it defines the cost (and is
    judged healthy by construction); every larger size is then judged by bandwidth. A batched or
    pipelined mover hides its cost at large sizes, which only makes those rows look better.
    """
    pts = [(s, v) for s, v in rows if s and v > 0]
    if len({s for s, _ in pts}) < 2 or min(pts)[0] > FIT_BELOW_BYTES:
        return None
    size, value = min(pts)
    return max(0.0, size / (value * 1e3) - size / (peak * 1e3))


def _verdict(ratio: float) -> Verdict:
    if ratio < LOST_BELOW:
        return Verdict.LOST
    if ratio < SLOW_BELOW:
        return Verdict.SLOW
    return Verdict.OK


def _unjudged(i: int, r: BenchResult, reason: str, path: Optional[_Path] = None) -> Judgement:
    return Judgement(
        index=i,
        key=r.key,
        label=_label(r, path),
        verdict=Verdict.UNJUDGED,
        measured_gbytes_per_s=None,
        reason=reason,
        size_bytes=path.size if path else None,
        source=path.source if path else None,
        destination=path.destination if path else None,
        mover=path.mover if path else None,
    )


def _label(r: BenchResult, path: Optional[_Path]) -> str:
    size = f" {format_size(path.size)}" if path and path.size else ""
    route = f" {path.source.label}->{path.destination.label}" if path else ""
    return f"{r.key}{route}{size}"


def _reference_row(
    rows: Sequence[tuple[int, BenchResult, _Path, float]], path: _Path
) -> Optional[tuple[BenchResult, float]]:
    """A measured yardstick for a row whose path has no facts: same mover, host memory, nearest size."""
    if path.mover is Mover.NIC_DMA and Place.GPU in (path.source.place, path.destination.place):
        cands = [
            (r, v, q)
            for _, r, q, v in rows
            if q.mover is Mover.NIC_DMA and Place.GPU not in (q.source.place, q.destination.place)
        ]
    elif path.mover is Mover.COPY_ENGINE and MemoryKind.PAGEABLE in (
        path.source.memory,
        path.destination.memory,
    ):
        cands = [
            (r, v, q)
            for _, r, q, v in rows
            if q.mover is Mover.COPY_ENGINE
            and q.source.place != q.destination.place
            and MemoryKind.PINNED in (q.source.memory, q.destination.memory)
            and q.source.place == path.source.place
        ]
    elif path.source.place is Place.GPU and path.destination.place is Place.GPU and path.peer_access is False:
        cands = [
            (r, v, q)
            for _, r, q, v in rows
            if q.source.place is Place.GPU
            and q.destination.place is Place.GPU
            and q.peer_access
            and {q.source.index, q.destination.index} == {path.source.index, path.destination.index}
            and q.both_directions == path.both_directions
        ]
    else:
        cands = []
    if not cands:
        return _fastest_comparable(rows, path)
    size = path.size or 0
    r, v, _ = min(cands, key=lambda c: (abs((c[2].size or 0) - size), -(c[2].size or 0)))
    return r, v


def _comparable(q: _Path, path: _Path) -> bool:
    """Two rows of the same kind of path: same mover, same places at each end, same tool and test."""
    same_pair = (
        path.source.place is not Place.GPU
        or path.destination.place is not Place.GPU
        or ({q.source.index, q.destination.index} == {path.source.index, path.destination.index})
    )
    return (
        q.mover is path.mover
        and (q.source.place, q.destination.place) == (path.source.place, path.destination.place)
        and q.family[:2] == path.family[:2]
        and q.both_directions == path.both_directions
        and same_pair
    )


def _fastest_comparable(
    rows: Sequence[tuple[int, BenchResult, _Path, float]], path: _Path
) -> Optional[tuple[BenchResult, float]]:
    """The fastest row of the same kind of path in this Report (another placement, NIC, setting).

    What this machine showed the path can do, used when no link facts bound it.
    """
    cands = [(r, v) for _, r, q, v in rows if q is not path and _comparable(q, path)]
    return max(cands, key=lambda c: c[1]) if cands else None


@dataclass(frozen=True)
class _Row:
    """A numeric row with its path and its value in GB/s: what the judging steps share."""

    index: int
    result: BenchResult
    path: _Path
    value: float


@dataclass(frozen=True)
class _Peak:
    """What the path allows at large sizes, which bound set it, and the same with links as trained."""

    gbytes_per_s: float
    bound: str
    trained_gbytes_per_s: Optional[float] = None


def _numeric_row(i: int, r: BenchResult, best: dict) -> "_Row | Judgement":
    """The row ready to judge, or its Judgement when there is nothing to judge it by."""
    path, why = path_of(r, best)
    if path is None:
        return _unjudged(i, r, why or "no path")
    if r.provider == Provider.SOFT.value:
        return _unjudged(i, r, "soft provider: bytes copied in software, no hardware path to judge", path)
    value = to_gbytes_per_s(float(r.value), r.unit)  # type: ignore[arg-type]
    if value is None:
        return _unjudged(i, r, f"unit {r.unit or '?'} is not a bandwidth", path)
    if value <= 0:
        return _unjudged(i, r, "the tool printed 0 at this size (below its print precision)", path)
    return _Row(i, r, path, value)


def _peak_from_facts(machine: Optional[MachineInfo], path: _Path) -> Optional[_Peak]:
    """The narrowest bound the machine facts put on the path (None without facts)."""
    bounds = _bounds(machine, path, as_configured=False)
    if not bounds:
        return None
    narrow = min(bounds, key=lambda b: b.gbytes_per_s)
    factor = 2.0 if path.both_directions else 1.0
    trained = min((b.gbytes_per_s for b in _bounds(machine, path, as_configured=True)), default=None)
    return _Peak(
        narrow.gbytes_per_s * factor, f"{narrow.name}: {narrow.source}", trained and trained * factor
    )


def _peak_from_rows(rows: Sequence[_Row], row: _Row) -> Optional[_Peak]:
    """A measured yardstick of the same Report when the facts give none (never the row itself)."""
    ref = _reference_row([(q.index, q.result, q.path, q.value) for q in rows], row.path)
    if ref is None or ref[0] is row.result:
        return None
    ref_r, ref_v = ref
    return _Peak(
        ref_v, f"the same Report's {_label(ref_r, None)} ({ref_v:.2f} GB/s): no link facts for this path"
    )


def _judge_row(row: _Row, peak: _Peak, family: list[tuple[int, float]]) -> Judgement:
    """Measured / expected at the row's size, with the verdict."""
    path = row.path
    per_op, per_op_source = _per_op(path, family, peak.gbytes_per_s)
    expected = _expected_at(peak.gbytes_per_s, path.size, per_op, path.ops_in_flight)
    ratio = row.value / expected if expected > 0 else None
    trained = peak.trained_gbytes_per_s
    if ratio is None:
        verdict = Verdict.UNJUDGED
    else:
        verdict = Verdict.BASELINE if path.baseline else _verdict(ratio)
    return Judgement(
        index=row.index,
        key=row.result.key,
        label=_label(row.result, path),
        verdict=verdict,
        measured_gbytes_per_s=row.value,
        expected_gbytes_per_s=expected,
        ratio=ratio,
        bound=peak.bound,
        per_op_us=per_op,
        per_op_source=per_op_source,
        trained_gbytes_per_s=(
            _expected_at(trained, path.size, per_op, path.ops_in_flight)
            if trained and trained < peak.gbytes_per_s * 0.98
            else None
        ),
        source=path.source,
        destination=path.destination,
        mover=path.mover,
        size_bytes=path.size,
        reason=path.baseline,
    )


def judge(report_results: Sequence[BenchResult], machine: Optional[MachineInfo]) -> tuple[Judgement, ...]:
    """One Judgement per numeric (OK, valued) row of the results, in their order."""
    best = _best_gathers(report_results)
    out: dict[int, Judgement] = {}
    rows: list[_Row] = []
    for i, r in enumerate(report_results):
        if r.status is Status.OK and r.value is not None:
            got = _numeric_row(i, r, best)
            if isinstance(got, _Row):
                rows.append(got)
            else:
                out[i] = got
    families: dict[tuple, list[tuple[int, float]]] = {}
    for row in rows:
        families.setdefault((row.path.mover, row.path.family), []).append((row.path.size or 0, row.value))
    for row in rows:
        r, path = row.result, row.path
        if isinstance(r.params, GatherParams) and r.key != "gather_ce_reference":
            gather = _gather_model(r)
            why = "no PCIe-model ceiling recorded with this gather (a Report before gdrdiag 0.2)"
            out[row.index] = (
                _judge_gather(row.index, r, path, row.value, gather)
                if gather is not None
                else _unjudged(row.index, r, why, path)
            )
            continue
        peak = _peak_from_facts(machine, path) or _peak_from_rows(rows, row)
        out[row.index] = (
            _judge_row(row, peak, families[(path.mover, path.family)])
            if peak is not None
            else _unjudged(row.index, r, _why_no_bound(machine, path), path)
        )
    return tuple(out[i] for i in sorted(out))


def _gather_model(r: BenchResult) -> Optional[tuple[float, float]]:
    """(model GB/s, ratio to CE) of a gather kernel: the same-run CE times the PCIe model's ceiling."""
    m = r.metrics
    if not isinstance(r.params, GatherParams) or r.key == "gather_ce_reference":
        return None
    ratio = getattr(m, "ceiling_ratio_to_ce", None) or getattr(m, "model_ratio_to_ce", None)
    ce = getattr(m, "ce_gbytes_per_s", None)
    if not ratio or not ce:
        return None
    return ce * ratio, ratio


def _judge_gather(i: int, r: BenchResult, path: _Path, value: float, model: tuple[float, float]) -> Judgement:
    expected, ratio_to_ce = model
    ratio = value / expected
    return Judgement(
        index=i,
        key=r.key,
        label=_label(r, path),
        verdict=Verdict.BASELINE if path.baseline else _verdict(ratio),
        measured_gbytes_per_s=value,
        expected_gbytes_per_s=expected,
        ratio=ratio,
        bound=f"the PCIe model for this layout: {ratio_to_ce:.3f} of the same run's copy engine "
        "(gdrdiag/pcie_model.py)",
        per_op_us=0.0,
        per_op_source="measured over many records: no per-call cost",
        source=path.source,
        destination=path.destination,
        mover=path.mover,
        size_bytes=None,
        reason=path.baseline,
    )


def _per_op(path: _Path, family: list[tuple[int, float]], peak: float) -> tuple[float, str]:
    fitted = _fit_per_op(family, peak)
    if fitted is not None:
        return fitted, f"fitted from this Report's own sweep of the path ({len(family)} sizes)"
    us, source = PER_OP_DEFAULTS.get(path.mover, (0.0, "no per-operation cost"))
    return us, source


def _why_no_bound(m: Optional[MachineInfo], path: _Path) -> str:
    if m is None:
        return "no machine facts in this Report (import with --bundle) and no measured yardstick beside it"
    if path.mover is Mover.COLLECTIVE:
        return "NCCL within one node rides NVLink or PCIe peer paths: this Report has no facts for them"
    if path.mover is Mover.NIC_DMA and not m.nics:
        return "no RDMA NIC in the machine facts (port rate unknown) and no host-memory row beside it"
    if Place.GPU in (path.source.place, path.destination.place) and not m.gpus:
        return "no GPU in the machine facts (link unknown)"
    return "the links on this path are unknown (no PCIe link or port rate was read)"


def losses(judgements: Iterable[Judgement]) -> list[Judgement]:
    """The rows below their path's expectation, worst first."""
    return sorted((j for j in judgements if j.is_loss), key=lambda j: j.ratio or 0.0)
