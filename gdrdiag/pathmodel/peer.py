"""What a GPU<->GPU transfer should reach on its path (pure; bench and diagnose both use it).

The path of an ordered pair is read by inspect (:class:`gdrdiag.model.machine.GpuPeerPair`):

- **NVLink** (class NV, peer access on): ``links x per-link one-way rate x efficiency``. The
  per-link rate is NVML's (``nvidia-smi nvlink -s``: 26.562 GB/s on H100) or the documented rate
  of the link's version. The efficiency is the share of the signalling rate that reaches payload:

  - copy engine: :data:`CE_NVLINK_EFFICIENCY`. The copy engines write 256-byte payloads; public
    CE measurements of 18-link H100 pairs are 380 GB/s with p2pBandwidthLatencyTest through
    NVSwitch (NVIDIA/nccl#1264: 0.79 of 18 x 26.5625) and 395.5 GB/s with
    cudaMemcpyPeerAsync on a directly linked pair (0.83); the constant is this
    direct-pair figure, re-measured by peer-bench on the x2 machine (docs/benchmarks.md).
  - SM loads/stores: :data:`SM_NVLINK_EFFICIENCY`. SMs move at most 128-byte payloads, which NVIDIA
    puts at ~20 GB/s of a 25 GB/s NVLink 3 line rate (NVIDIA/nccl-tests#149) and NCCL models as
    20.6 GB/s per Hopper link (NVIDIA/nccl ``src/graph/topo.h``, ``SM90_NVLINK_BW``), i.e.
    20.6 / 26.5625 = 0.776 of NVML's rate. This is why an SM copy over NVLink is expected to stay
    below the copy engine (0.776 / CE efficiency of it).

  Both directions at once: twice the one-way figure (links are full duplex).
- **PCIe peer-to-peer** (PIX/PXB/PHB/NODE/SYS, peer access on): the narrowest PCIe link on the path
  at the copy-engine efficiency of :func:`gdrdiag.pathmodel.pcie.ce_efficiency` (MPS 256, MRRS 4096
  unless known). Paths through a root complex (PHB, NODE, SYS) often fall far short: that shortfall
  is what diagnose explains (ACS redirection, inter-socket links), not a different model.
- **Peer access off** (staged): the driver copies through pinned host memory (device -> host ->
  device, pipelined in chunks), so the bytes take the trip through host memory over both GPUs' PCIe
  links, never NVLink. While one chunk goes up from the source another comes down to the
  destination: the host carries a read and a write stream at once, which is what a host<->GPU copy
  both ways at once does, and that reaches :data:`STAGED_SHARE` of the link's one-way copy rate per
  stream (0.69-0.71 of the sum on public A100 hosts: https://github.com/NVIDIA/nvbandwidth/issues/11,
  https://github.com/NVIDIA/nvbandwidth/issues/53). So one way: the slower GPU link's copy rate x
  0.7 (40.6 GB/s on PCIe Gen5 x16; measured 36.9-38.6 by peer-bench on 2 x H100 and ~37 by
  p2pBandwidthLatencyTest on HGX H100, https://github.com/NVIDIA/nccl/issues/1264). Both ways at
  once the two copies share those two links (each carries one copy's device->host and the other's
  host->device) and reach :data:`STAGED_SHARE` of twice the one-way figure, not the links' full rate
  both ways (peer-bench on 2 x H100: 59.6-64.4 GB/s against 56.8). The staging loss against peer
  access shows as ``on_over_off`` in the bench's rows.
- **All to one** (every other GPU's copy engine into one GPU at once, peer access on): the sum of
  each source's pair expectation, capped by what the destination can take in: its active NVLinks
  (links x per-link rate x the CE efficiency) for the NVLink sources, its own PCIe link at the
  copy-engine efficiency for the PCIe ones (:func:`expect_all_to_one`). With two GPUs there is one
  source and the cap equals that pair's expectation.
- **All to all** (every GPU's copy engine into every other GPU, peer access on): peer-bench issues
  the copies in n-1 shifted steps (:func:`all_to_all_schedule`: in step k the GPU at position i
  copies into the one at i+k, mod n), one copy at a time per GPU, and the model is every copy's
  bytes over the steps' summed times, a step lasting as long as its slowest pair's copy
  (:func:`expect_all_to_all`). Why steps and not every copy at once: given several peer copies at
  once, a GPU's copy engine ran them one after another (4 x H200 behind NVSwitch, docs/benchmarks.md:
  three copies out of one GPU each ran at a lone copy's 391 GB/s and 387 GB/s together), so with
  every copy issued at once the order is the driver's, two sources that pick the same destination
  share its links while another destination idles, and the node reached half its links' rate,
  varying x1.7 between samples. On an NVSwitch node every pair shows NV<n> (each GPU's n links go
  to the switches, which reach every peer) and those links are the GPU's whole NVLink budget:
  NVSwitch gives "all-to-all GPU communication at the total NVLink speed" (NVIDIA Fabric Manager
  User Guide, https://docs.nvidia.com/datacenter/tesla/fabric-manager-user-guide), 18 links and
  900 GB/s both ways per H100/H200 GPU in HGX/DGX servers
  (https://developer.nvidia.com/blog/upgrading-multi-gpu-interconnectivity-with-the-third-generation-nvidia-nvswitch/),
  so each step loads every GPU's links out and in at once (full duplex): n x the pair. On an
  NVLink mesh without a switch a step uses one pair's links per GPU (NV2 on a 4-GPU mesh of 6-link
  GPUs), so the row shows those pairs, not the GPU's whole NVLink budget; PCIe-only nodes: each
  step's pairs on their narrowest links (shared switch uplinks are not modelled here: a slower row
  is diagnose's to explain).
- **One to all** (one GPU's copy engines into every other GPU at once): the sum of that GPU's pair
  paths, capped by its egress (:func:`expect_one_to_all`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Optional, Sequence

from gdrdiag.model.machine import GpuInfo, GpuPeerPair, MachineInfo, PathClass
from gdrdiag.pathmodel.pcie import LinkParams, ce_efficiency

CE_NVLINK_EFFICIENCY = 0.83
# A staged (peer access off) copy: the share of a GPU link's one-way copy rate each stream through
# host memory reaches while the host carries a read and a write at once (the module docstring).
STAGED_SHARE = 0.7
SM_NVLINK_EFFICIENCY = 20.6 / 26.5625
# What a node-wide row (all to one, one to all, all to all) pays once per sample beside its bytes: the
# fork and join events across the GPUs' streams, and a copy engine's cost per copy for each copy a GPU
# runs after another (all to all: its n-1 steps; one to all: one per destination; all to one: one).
# Measured beside the bytes at 16 and 64 MiB (docs/benchmarks.md): all to one 17.5-25 us per sample
# on 2 x H200; on 4 x H200 about 22 us (all to one), 30 us (one to all, 3 copies in turn) and 40 us
# (all to all, 3 steps).
PATTERN_FORK_JOIN_US = 20.0
PATTERN_PER_COPY_IN_TURN_US = 4.0
NVLINK_SOURCES = (
    "NVIDIA/nccl src/graph/topo.h SM90_NVLINK_BW (20.6 GB/s per Hopper link, SM traffic)",
    "https://github.com/NVIDIA/nccl-tests/issues/149 (25 GB/s line rate -> ~20 GB/s with 128-B SM payloads)",
    "https://github.com/NVIDIA/nccl/issues/1264 (H100 p2pBandwidthLatencyTest: 380 GB/s one way)",
)


@dataclass(frozen=True)
class Expectation:
    """Expected GB/s (None when the path's facts are unknown) and how it was reached, in words."""

    gbytes_per_s: Optional[float]
    text: str
    pcie_raw_gbytes_per_s: Optional[float] = None  # a PCIe path's narrowest link, raw (None: NVLink/unknown)
    link: str = ""  # that link in words: "0000:03:00.0 PCIe 16 GT/s x4"


def _gpu_link_rate(machine: MachineInfo, bdf: str) -> Optional[float]:
    g = next((g for g in machine.gpus if g.bdf == bdf), None)
    if g is None or g.link is None:
        return None
    return g.link.max_raw_gbytes_per_s or g.link.raw_gbytes_per_s


def pair_of(machine: Optional[MachineInfo], src: Optional[int], dst: Optional[int]) -> Optional[GpuPeerPair]:
    """The machine's facts for the ordered pair ``src -> dst``, or None."""
    if machine is None:
        return None
    return next((p for p in machine.peers if p.src_ordinal == src and p.dst_ordinal == dst), None)


def paths_text(machine: Optional[MachineInfo], copies: Iterable[tuple[int, int]]) -> Optional[str]:
    """The distinct paths of many copies' (src, dst) pairs, joined (``NV18``, ``NV18/SYS``; None: unknown)."""
    paths = sorted({p.path_text for s, d in copies if (p := pair_of(machine, s, d)) is not None})
    return "/".join(paths) or None


def expect(
    machine: Optional[MachineInfo],
    pair: Optional[GpuPeerPair],
    *,
    mover: str,
    peer_access: bool,
    bidirectional: bool = False,
    trained: bool = False,
) -> Expectation:
    """What ``mover`` (``ce``/``sm``) should reach on ``pair``'s path; see the module docstring.

    ``trained``: a PCIe path's links as trained (LnkSta) instead of as capable (LnkCap), so a
    caller can tell a link that trained low from a path that is simply narrow.
    """
    if pair is None or machine is None:
        return Expectation(None, "unknown: no peer facts for this pair (run inspect on this machine)")
    factor = 2.0 if bidirectional else 1.0
    both = " x 2 (both directions)" if bidirectional else ""
    if not peer_access:
        rates = [_gpu_link_rate(machine, b) for b in (pair.src_bdf, pair.dst_bdf)]
        if any(r is None for r in rates):
            return Expectation(None, "staged through host memory; a GPU's PCIe link rate is unknown")
        return _staged(rates, bidirectional)
    if pair.path_class is PathClass.NV:
        if pair.nvlink_gbytes_per_s is None:
            return Expectation(None, f"{pair.path_text}: the links' rate is unknown")
        eff = CE_NVLINK_EFFICIENCY if mover == "ce" else SM_NVLINK_EFFICIENCY
        what = "copy engine" if mover == "ce" else "SM loads/stores (128-B payloads)"
        return Expectation(
            pair.nvlink_gbytes_per_s * eff * factor,
            f"{pair.path_text}: {'' if pair.nvlinks is None else f'{pair.nvlinks} links, '}"
            f"{pair.nvlink_gbytes_per_s:.1f} GB/s one way x "
            f"{eff:.3f} ({what}){both}",
        )
    hop = (pair.narrowest_current or pair.narrowest_capable) if trained else pair.narrowest_capable
    raw = hop.raw_gbytes_per_s if hop else None
    if raw is None:
        rates = [_gpu_link_rate(machine, b) for b in (pair.src_bdf, pair.dst_bdf)]
        raw = min((r for r in rates if r is not None), default=None)
    if raw is None:
        return Expectation(None, f"PCIe peer path {pair.path_text}: link rates unknown")
    eff = ce_efficiency(LinkParams())
    link = f"{hop.bdf} PCIe {hop.speed_gts:g} GT/s x{hop.width}" if hop else ""
    return Expectation(
        raw * eff * factor,
        f"PCIe peer-to-peer ({pair.path_text}{'' if pair.reliable else ', guest view'}): narrowest link"
        f"{' ' + link if link else ''} {raw:.1f} GB/s raw x {eff:.3f}{both}",
        raw,
        link,
    )


def _staged(rates: Sequence[Optional[float]], bidirectional: bool) -> Expectation:
    """A copy with peer access off: the trip through host memory over both GPUs' PCIe links.

    Not NVLink, and not the links' full rate both ways at once: see the module docstring.
    """
    eff = ce_efficiency(LinkParams())
    raw = min(r for r in rates if r is not None)
    one_way = raw * eff * STAGED_SHARE
    text = (
        f"peer access off: staged through host memory over both GPUs' PCIe links, the slower "
        f"{raw:.1f} GB/s raw x {eff:.3f} x {STAGED_SHARE:g} (a read and a write through the host at once)"
    )
    if not bidirectional:
        return Expectation(one_way, text)
    return Expectation(
        one_way * 2 * STAGED_SHARE,
        text + f"; both ways at once the two copies share both links: x 2 x {STAGED_SHARE:g}",
    )


def _gpu_by_bdf(machine: MachineInfo, bdf: str) -> Optional[GpuInfo]:
    return next((g for g in machine.gpus if g.bdf == bdf), None)


def _ingress(
    machine: MachineInfo, dst_bdf: str, nvlink: bool, way: str = "into", whose: str = "destination"
) -> tuple[Optional[float], str]:
    """What one GPU can take in from its peers, or send to them: its active NVLinks, or its PCIe link.

    ``way`` "out of": the GPU's egress; links are full duplex, so it is the same one-way figure.
    """
    g = _gpu_by_bdf(machine, dst_bdf)
    if nvlink:
        links = [lk for lk in (g.nvlinks if g else ()) if lk.active and lk.gbytes_per_s]
        if not links:
            return None, f"the {whose}'s NVLinks are unknown"
        rate = sum(lk.gbytes_per_s or 0.0 for lk in links)
        return rate * CE_NVLINK_EFFICIENCY, (
            f"{len(links)} active NVLinks {way} GPU {dst_bdf}, {rate:.1f} GB/s x {CE_NVLINK_EFFICIENCY:.3f}"
        )
    raw = _gpu_link_rate(machine, dst_bdf)
    if raw is None:
        return None, f"the {whose}'s PCIe link rate is unknown"
    eff = ce_efficiency(LinkParams())
    return raw * eff, f"GPU {dst_bdf}'s PCIe link {raw:.1f} GB/s raw x {eff:.3f}"


def _pairs_at(
    machine: MachineInfo, gpu: int, others: Optional[Sequence[int]], *, into: bool
) -> list[GpuPeerPair]:
    """The peer pairs into ``gpu`` (``into``) or out of it, from ``others`` (None: every other GPU)."""
    out = []
    for p in machine.peers:
        here, there = (p.dst_ordinal, p.src_ordinal) if into else (p.src_ordinal, p.dst_ordinal)
        if here == gpu and there != gpu and (others is None or there in others):
            out.append(p)
    return out


def expect_all_to_one(
    machine: Optional[MachineInfo], dst: int, sources: Optional[Sequence[int]] = None
) -> Expectation:
    """Every source's copy engine into ``dst`` at once, peer access on (see the module docstring).

    ``sources`` None: every other GPU of the machine.
    """
    if machine is None:
        return Expectation(None, "unknown: no peer facts (run inspect on this machine)")
    pairs = _pairs_at(machine, dst, sources, into=True)
    if not pairs:
        return Expectation(None, f"unknown: no peer facts for pairs into GPU {dst}")
    total = 0.0
    parts = []
    for nvlink in (True, False):
        group = [p for p in pairs if (p.path_class is PathClass.NV) is nvlink]
        if not group:
            continue
        each = [expect(machine, p, mover="ce", peer_access=True).gbytes_per_s for p in group]
        if any(e is None for e in each):
            return Expectation(None, f"all to GPU {dst}: a source pair's path rate is unknown")
        summed = sum(e for e in each if e is not None)
        cap, how = _ingress(machine, group[0].dst_bdf, nvlink)
        kind = "NVLink" if nvlink else "PCIe"
        if cap is not None and cap < summed:
            total += cap
            parts.append(
                f"{kind} ingress {cap:.1f} GB/s ({how}), below the {len(group)} sources' sum {summed:.1f}"
            )
        else:
            total += summed
            cap_text = f"; ingress {cap:.1f} GB/s ({how})" if cap is not None else f"; {how}"
            parts.append(f"{len(group)} {kind} source(s) {summed:.1f} GB/s{cap_text}")
    n = len(pairs)
    lone = " (one source: the same path as that pair's copy)" if n == 1 else ""
    return Expectation(total, f"all {n} other GPU(s) into GPU {dst}{lone}: " + "; ".join(parts))


def _egress(machine: MachineInfo, src: int, pairs: Sequence[GpuPeerPair]) -> tuple[Optional[float], str]:
    """What GPU ``src`` sends into ``pairs``' destinations at once.

    Per kind of path (NVLink, PCIe): the sum of the pairs' expectations capped by the GPU's own links
    of that kind.
    """
    total = 0.0
    parts = []
    for nvlink in (True, False):
        group = [p for p in pairs if (p.path_class is PathClass.NV) is nvlink]
        if not group:
            continue
        each = [expect(machine, p, mover="ce", peer_access=True).gbytes_per_s for p in group]
        if any(e is None for e in each):
            return None, f"GPU {src}: a pair's path rate is unknown"
        summed = sum(e for e in each if e is not None)
        cap, how = _ingress(machine, group[0].src_bdf, nvlink, way="out of", whose="source")
        kind = "NVLink" if nvlink else "PCIe"
        if cap is not None and cap < summed:
            total += cap
            parts.append(f"{kind} egress {cap:.1f} ({how}), below its {len(group)} pairs' sum {summed:.1f}")
        else:
            total += summed
            cap_text = f", egress {cap:.1f} ({how})" if cap is not None else f"; {how}"
            parts.append(f"{len(group)} {kind} pair(s) {summed:.1f}{cap_text}")
    return total, "; ".join(parts)


def pattern_cost_us(copies_in_turn: int) -> float:
    """A node-wide row's cost per sample beside its bytes (us), ``copies_in_turn`` copies run in turn."""
    return PATTERN_FORK_JOIN_US + PATTERN_PER_COPY_IN_TURN_US * max(1, copies_in_turn)


def all_to_all_schedule(gpus: Sequence[int]) -> tuple[tuple[tuple[int, int], ...], ...]:
    """The order peer-bench's all-to-all issues its copies in: ``len(gpus) - 1`` shifted steps.

    In step ``k`` (1 .. n-1) the GPU at position ``i`` of ``gpus`` copies into the one at position
    ``(i + k) mod n``: every GPU sends one copy and receives one, so no destination takes two
    sources at once. NCCL pairs its point-to-point rounds the same way (NVIDIA/nccl src/init.cc,
    ``p2pSchedule``: in each round a rank sends to rank + delta and receives from rank - delta, delta
    taking every offset once).
    """
    members = list(gpus)
    n = len(members)
    return tuple(tuple((members[i], members[(i + k) % n]) for i in range(n)) for k in range(1, n))


def expect_all_to_all(machine: Optional[MachineInfo], gpus: Optional[Sequence[int]] = None) -> Expectation:
    """Every GPU of ``gpus`` (None: the machine's) into every other, in :func:`all_to_all_schedule`'s steps.

    Each GPU's copy engine runs its copies one after another (see the module docstring), so a step
    moves one copy per GPU and lasts as long as its slowest pair's copy: the expected rate is every
    copy's bytes over the steps' summed times. On an NVSwitch node every pair's path is the GPU's
    whole NVLink budget, so each step carries every GPU's links out and in at once (n x the pair).
    """
    if machine is None:
        return Expectation(None, "unknown: no peer facts (run inspect on this machine)")
    members = sorted(
        set(gpus)
        if gpus is not None
        else {p.src_ordinal for p in machine.peers} | {p.dst_ordinal for p in machine.peers}
    )
    if len(members) < 2:
        return Expectation(None, "unknown: all to all needs peer facts for two or more GPUs")
    steps = []  # per step: (its slowest pair's rate, that pair's path)
    for step in all_to_all_schedule(members):
        rates = []
        for s, d in step:
            pair = pair_of(machine, s, d)
            rate = expect(machine, pair, mover="ce", peer_access=True).gbytes_per_s
            if pair is None or rate is None:
                return Expectation(None, f"unknown: no peer facts or rate for GPU {s} -> {d}")
            rates.append((rate, f"GPU {s} -> {d} {pair.path_text}"))
        steps.append(min(rates))
    n = len(members)
    total = n * (n - 1) / sum(1.0 / rate for rate, _ in steps)
    pair_text = " (two GPUs: the pair both ways at once)" if n == 2 else ""
    head = f"all to all among {n} GPUs{pair_text}"
    head += f" in {n - 1} step(s) of one copy per GPU (step k: GPU i -> i+k)"
    if len({round(rate, 6) for rate, _ in steps}) == 1:
        rate, where = steps[0]
        how = f"every step {n} x {rate:.1f} GB/s ({where}, the slowest pair)"
    else:
        how = "each step as fast as its slowest pair: " + "; ".join(
            f"step {k} {n} x {rate:.1f} ({where})" for k, (rate, where) in enumerate(steps, start=1)
        )
    return Expectation(total, f"{head}: {how}")


def expect_one_to_all(
    machine: Optional[MachineInfo], src: int, destinations: Optional[Sequence[int]] = None
) -> Expectation:
    """GPU ``src``'s copy engines into every destination at once, peer access on: its egress.

    ``destinations`` None: every other GPU of the machine.
    """
    if machine is None:
        return Expectation(None, "unknown: no peer facts (run inspect on this machine)")
    pairs = _pairs_at(machine, src, destinations, into=False)
    if not pairs:
        return Expectation(None, f"unknown: no peer facts for pairs out of GPU {src}")
    rate, how = _egress(machine, src, pairs)
    if rate is None:
        return Expectation(None, f"GPU {src} to all: {how}")
    n = len(pairs)
    lone = " (one destination: the same path as that pair's copy)" if n == 1 else ""
    return Expectation(rate, f"GPU {src} into all {n} other GPU(s){lone}: {how}")
