"""Cause rules over the path model's losses (:mod:`gdrdiag.pathmodel.judge`): every judged row, any tool.

Each rule takes the Report and the cause Context (which holds every row's ``Judgement``) and
returns :class:`gdrdiag.diagnose.causes.Cause` objects, one per cause per path:

- ``CAUSE-PAGEABLE-MEMORY``: copies from or to pageable (or managed) host memory below their path;
  measured against the same GPU's pinned copy of the same direction and size (when that one is
  healthy the staged row is a rung by design: INFO).
- ``CAUSE-SMALL-COPIES``: a row that is as fast as its size allows, far below its link's peak: the
  per-copy cost, not the path, sets it.
- ``CAUSE-LINK-NARROW``: a healthy row whose bound is a narrow or old PCIe link: the number is that
  link's ceiling (a V100 on Gen3 x16 at 12 GB/s is healthy).
- ``CAUSE-NO-PEER-MEMORY``: NCCL or RDMA without a GPU peer-memory path (no nvidia_peermem, no
  dma-buf) falls back to staging through host memory.
- ``PERF-PATH-SLOW``: a loss that no cause in this Report explains: the symptom, with the row, its
  bound and the command that measures more.
- ``PERF-PATH-UNSTABLE``: such a loss whose best samples reach the path: it came and went during the
  run (other traffic on the link or the host's memory), so the path is not what is slow.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Iterable, Optional

from gdrdiag.diagnose.causes import SINGLE_SAMPLE_NOISE, Cause, Context, single_sample_line
from gdrdiag.model.findings import Finding, Severity
from gdrdiag.model.params import ImportedParams, PeerParams
from gdrdiag.model.path import SLOW_BELOW, Judgement, Mover, Place, Verdict
from gdrdiag.model.vocabulary import MemoryKind
from gdrdiag.pathmodel.bounds import collective_on_one_node
from gdrdiag.pathmodel.rows import path_of, to_gbytes_per_s

if TYPE_CHECKING:  # pragma: no cover
    from gdrdiag.model.machine import MachineInfo
    from gdrdiag.model.report import Report

_STAGED = (MemoryKind.PAGEABLE, MemoryKind.MANAGED)
_NEAR = ("PIX", "PXB")  # a NIC under the GPU's own switch (nvidia-smi topo -m)
# A row whose size leaves it this fraction of its link's peak or less is "small": its per-operation
# cost, not bandwidth, sets it.
SMALL_SHARE = 0.5
# A PCIe bound below Gen4 x16 (16 GT/s x16 ~ 31.5 GB/s raw) is narrow for today's GPUs and NICs.
NARROW_RAW_GBYTES = 25.0


def row_evidence(j: Judgement) -> str:
    """One judged row as evidence: measured, its share of the expectation, and the bound."""
    return (
        f"results[{j.index}] {j.label} = {j.measured_gbytes_per_s:.2f} GB/s = {j.ratio:.0%} of "
        f"{j.expected_gbytes_per_s:.2f} GB/s expected ({j.bound})"
    )


def _ev_any(j: Judgement) -> str:
    """Evidence for a row that may have no expectation (measured, but nothing to judge it by)."""
    if j.ratio is not None:
        return row_evidence(j)
    return f"results[{j.index}] {j.label} = {j.measured_gbytes_per_s:.2f} GB/s ({j.reason})"


def _host_gpu(j: Judgement) -> bool:
    ends = {j.source.place if j.source else None, j.destination.place if j.destination else None}
    return ends == {Place.HOST, Place.GPU} and j.mover in (Mover.COPY_ENGINE, Mover.SM)


def _touches_gpu(j: Judgement) -> bool:
    return any(e is not None and e.place is Place.GPU for e in (j.source, j.destination))


def _host_memory(j: Judgement) -> Optional[MemoryKind]:
    for end in (j.source, j.destination):
        if end is not None and end.place is Place.HOST:
            return end.memory
    return None


def _direction(j: Judgement) -> str:
    return "h2d" if j.source is not None and j.source.place is Place.HOST else "d2h"


def pageable_memory(report: "Report", ctx: Context) -> list[Cause]:
    """CAUSE-PAGEABLE-MEMORY for the worst staged-memory copy loss of each direction."""
    out = []
    for direction in ("h2d", "d2h"):
        staged = [
            j
            for j in ctx.losses
            if j.is_loss
            and _host_gpu(j)
            and _host_memory(j) in _STAGED
            and _direction(j) == direction
            and "bidir" not in j.key
        ]
        if not staged:
            continue
        worst = min(staged, key=lambda j: j.ratio or 0)
        pinned = [
            j
            for j in ctx.judgements
            if _host_gpu(j)
            and j.mover is Mover.COPY_ENGINE
            and _direction(j) == direction
            and j.measured_gbytes_per_s is not None
            and _host_memory(j) not in _STAGED
            and "bidir" not in j.key
        ]
        pro = [
            row_evidence(worst),
            f"{(_host_memory(worst) or MemoryKind.PAGEABLE).value} memory is copied through a "
            "pinned staging buffer by the driver, one chunk at a time",
        ]
        if pinned:
            # The pinned copy of the same direction, GPU and size is the A/B: pageable memory
            # explains the part of the loss beyond its (a slow link or a far node slows both and is
            # another cause's).
            best = _pinned_twin(worst, pinned)
            pinned_ratio = min(1.0, best.ratio if best.ratio is not None else 1.0)
            pro.append(f"pinned copy of the same direction: {_ev_any(best)}")
            basis, strength = "measured", 1.0
            share = min(1.0, max(0.0, (pinned_ratio - (worst.ratio or 0.0)) / max(worst.loss, 1e-9)))
        else:
            basis, strength = "inferred", 0.8
            share = strength
        design = ""
        if pinned and not _is_imported(report, worst):
            design = "gdrdiag measures pageable beside pinned memory to show what pinning buys"
        out.append(
            Cause(
                "CAUSE-PAGEABLE-MEMORY",
                f"{direction.upper()} copies {'from' if direction == 'h2d' else 'into'} "
                f"{(_host_memory(worst) or MemoryKind.PAGEABLE).value} memory run at {worst.ratio:.0%} "
                "of the path",
                strength,
                share,
                basis,
                worst.loss,
                tuple(pro),
                (),
                "Allocate transfer buffers pinned (cudaHostAlloc / cuMemHostAlloc, torch pin_memory=True) or "
                "register them once (cudaHostRegister) and reuse them.",
                "gdrdiag copy-bench --memory pinned,pageable --directions h2d,d2h",
                subject=worst.key,
                by_design=design,
            )
        )
    return out


def _pinned_twin(staged: Judgement, pinned: list[Judgement]) -> Judgement:
    """The pinned row to set beside a staged one: same GPU, nearest size, plain pinned memory, best.

    On a node every GPU has its own link, and a copy's share of it depends on its size: a 64 KiB
    block copy or another GPU's row says nothing about what pinning buys this 64 MiB copy.
    """

    def distance(j: Judgement) -> tuple[bool, float, bool, float]:
        if staged.size_bytes and j.size_bytes:
            apart = abs(math.log2(j.size_bytes / staged.size_bytes))
        else:
            apart = math.inf
        plain = _host_memory(j) is MemoryKind.PINNED  # not write-combined, registered or mapped
        return (_row_gpu(j) != _row_gpu(staged), apart, not plain, -(j.ratio if j.ratio is not None else 1.0))

    return min(pinned, key=distance)


def _is_imported(report: "Report", j: Judgement) -> bool:
    return isinstance(report.results[j.index].params, ImportedParams)


def small_copies(report: "Report", ctx: Context) -> list[Cause]:
    """CAUSE-SMALL-COPIES: the healthy row furthest below its link's peak because of its size."""
    cands = []
    for j in ctx.judgements:
        if j.verdict is not Verdict.OK or j.mover is not Mover.COPY_ENGINE or not j.size_bytes:
            continue
        if _host_memory(j) in _STAGED or not j.peak_gbytes_per_s or not j.expected_gbytes_per_s:
            continue  # a pageable copy's per-call cost is staging: CAUSE-PAGEABLE-MEMORY's
        share = j.expected_gbytes_per_s / j.peak_gbytes_per_s
        if share <= SMALL_SHARE:
            cands.append((share, j, j.peak_gbytes_per_s))
    if not cands:
        return []
    share, j, peak = min(cands, key=lambda c: c[0])
    peer = all(e is not None and e.place is Place.GPU for e in (j.source, j.destination))
    gap = max(1e-9, 1 - (j.measured_gbytes_per_s or 0) / peak)
    explains = min(1.0, (1 - share) / gap)
    basis = "measured" if (j.per_op_source or "").startswith("fitted") else "inferred"
    return [
        Cause(
            "CAUSE-SMALL-COPIES",
            f"{j.size_bytes} B per copy: the per-copy cost ({j.per_op_us:.1f} us) holds it to "
            f"{share:.0%} of the link",
            1.0 if basis == "measured" else 0.7,
            explains,
            basis,
            1 - (j.measured_gbytes_per_s or 0) / peak,
            (
                row_evidence(j),
                f"per-copy cost: {j.per_op_us:.2f} us ({j.per_op_source})",
                f"link peak {peak:.1f} GB/s",
            ),
            (),
            "Coalesce small blocks into one region, batch them (cuMemcpyBatchAsync, CUDA 12.8+), or "
            "gather them "
            + (
                "with a kernel reading the peer GPU's memory through UVA (peer access on)."
                if peer
                else "with a kernel reading mapped pinned memory."
            ),
            "gdrdiag peer-bench peer_blocks" if peer else "gdrdiag copy-bench --parts blocks",
            subject=j.key,
            by_design="the row is as fast as a copy of its size can be: the per-copy cost, not the path",
        )
    ]


def link_narrow(report: "Report", ctx: Context) -> list[Cause]:
    """CAUSE-LINK-NARROW (CAUSE-NIC-LINK when it is the NIC's): healthy rows bound by a narrow PCIe link."""
    narrow = [
        j
        for j in ctx.judgements
        if j.verdict is Verdict.OK
        and j.bound_pcie_raw_gbytes_per_s is not None
        # a narrow link; or a NIC whose own PCIe link, not its port, is the bound (a 400G port on Gen5 x8)
        and (j.bound_pcie_raw_gbytes_per_s < NARROW_RAW_GBYTES or j.bound_on_nic)
    ]
    if not narrow:
        return []
    # the narrowest of them (the link that explains most), the largest transfer on it
    j = min(narrow, key=lambda j: (j.bound_pcie_raw_gbytes_per_s, -(j.size_bytes or 0)))
    narrow_link, nic_link = (
        "CAUSE-LINK-NARROW",
        "CAUSE-NIC-LINK",
    )
    code = nic_link if j.bound_on_nic else narrow_link
    link = (j.bound or "").split(": ")[0]
    return [
        Cause(
            code,
            f"the path's narrowest link is {link}: {j.measured_gbytes_per_s:.1f} GB/s is its ceiling",
            1.0,
            1.0,
            "measured",
            0.0,
            (row_evidence(j),),
            (),
            "Nothing is broken: the number is what this link gives. For more, use a Gen4/Gen5 x16 slot "
            "wired to the CPU (not the chipset), or a card (or NIC attach) that supports it.",
            "gdrdiag inspect",
            subject=j.key,
            by_design="the row reaches what its narrowest link allows",
        )
    ]


def no_peer_memory(report: "Report", ctx: Context) -> list[Cause]:
    """CAUSE-NO-PEER-MEMORY: an NCCL or GPU-memory RDMA loss where nvidia_peermem is not loaded."""
    m = ctx.machine
    if m is None or m.kernel.peermem_loaded is not False or not m.nics:
        return []  # no RDMA NIC: there is no NIC for a peer-memory path to serve
    # A GPU-memory RDMA row that was measured was registered, so a peer-memory path existed for it:
    # only NCCL, which falls back to host staging silently, can show this loss (across nodes only:
    # within one host NCCL never touches a NIC).
    rows = [j for j in _across_nodes(report, ctx, ctx.losses) if j.is_loss and j.mover is Mover.COLLECTIVE]
    if not rows:
        return []
    worst = min(rows, key=lambda j: j.ratio or 0)
    return [
        Cause(
            "CAUSE-NO-PEER-MEMORY",
            "no GPU peer-memory path: the NIC cannot reach GPU memory, transfers stage through host",
            0.8,
            0.8,
            "inferred",
            worst.loss,
            (
                row_evidence(worst),
                f"kernel.peermem_loaded = False ({m.kernel.peermem_evidence or 'nvidia_peermem not loaded'})",
            ),
            (),
            "modprobe nvidia_peermem (MLNX_OFED/DOCA) or use dma-buf (open NVIDIA kernel module, "
            "kernel >= 5.12); then NCCL_DEBUG=INFO shows 'GPU Direct RDMA Enabled'.",
            "gdrdiag inspect",
            subject=worst.key,
        )
    ]


def _across_nodes(report: "Report", ctx: Context, judgements: Iterable[Judgement]) -> list[Judgement]:
    """The rows that may touch a NIC: all but NCCL collectives whose ranks sat on one host."""
    out = []
    for j in judgements:
        if j.mover is Mover.COLLECTIVE and collective_on_one_node(
            ctx.machine, path_of(report.results[j.index])[0]
        ):
            continue  # one host: NVLink / PCIe peer paths or host memory (gdrdiag/diagnose/causes_nccl.py)
        out.append(j)
    return out


def _row_gpu(j: Judgement) -> Optional[int]:
    """The GPU (CUDA ordinal) a row reads or writes (None for collectives and host-only rows)."""
    for end in (j.source, j.destination):
        if end is not None and end.place is Place.GPU:
            return end.index
    return None


def _gpu_nic_classes(m: "MachineInfo", gpu: Optional[int]) -> list[str]:
    """The path classes between GPU ``gpu`` (CUDA ordinal) and each NIC, from inspect's topology."""
    bdf = next((g.bdf for g in m.gpus if g.cuda_ordinal == gpu), None) if gpu is not None else None
    return [p.path_class.value for p in m.topology if p.gpu_bdf == bdf and p.path_class is not None]


def collective_far(report: "Report", ctx: Context) -> list[Cause]:
    """CAUSE-GPU-NIC-FAR for an NCCL or GPU-memory RDMA loss whose GPU has no NIC under its own switch.

    A row that names its GPU is judged on that GPU's classes, and a healthy row from a GPU with a
    NIC under its switch makes the share measured (the ps-lite case: the same test on the NIC's
    own GPUs). A collective names no GPU: then no GPU of the machine may have a near NIC.
    """
    m = ctx.machine
    rows = [
        j
        for j in _across_nodes(report, ctx, ctx.losses)
        if j.is_loss and (j.mover is Mover.COLLECTIVE or (j.mover is Mover.NIC_DMA and _touches_gpu(j)))
    ]
    if not rows or m is None or not m.topology or m.virt.is_vm or not any(p.reliable for p in m.topology):
        return []
    worst = min(rows, key=lambda j: j.ratio or 0)
    gpu = _row_gpu(worst)
    classes = _gpu_nic_classes(m, gpu)
    if not classes:
        classes = [p.path_class.value for p in m.topology if p.path_class is not None]
    if not classes or any(c in _NEAR for c in classes):
        return []
    near_healthy = [
        j
        for j in ctx.judgements
        if j.mover is worst.mover
        and j.ratio is not None
        and not j.is_loss
        and any(c in _NEAR for c in _gpu_nic_classes(m, _row_gpu(j)))
    ]
    pro = [
        row_evidence(worst),
        f"GPU {gpu if gpu is not None else '*'} to its NICs: {', '.join(sorted(set(classes)))}",
    ]
    if near_healthy:
        best = max(near_healthy, key=lambda j: j.ratio or 0)
        pro.append(f"from a GPU under the NIC's switch the same path is healthy: {_ev_any(best)}")
    share = 1.0 if near_healthy else 0.6
    return [
        Cause(
            "CAUSE-GPU-NIC-FAR",
            "the GPU has no NIC under its own PCIe switch: its GPU<->NIC traffic crosses the CPU",
            share,
            share,
            "measured" if near_healthy else "inferred",
            worst.loss,
            tuple(pro),
            (),
            "Pair each GPU with a NIC under the same PCIe switch (nvidia-smi topo -m: PIX/PXB), or raise "
            "NCCL_NET_GDR_LEVEL only where the platform supports peer traffic across the root complex.",
            # the collective and RDMA forms of one cause: one finding per path
            "gdrdiag inspect",
            subject=worst.key,
        )
    ]


def gdr_ab(report: "Report", ctx: Context) -> list[Cause]:
    """The cause of an NCCL GPUDirect RDMA A/B: the same collective at the same size, GDR off vs on.

    One run per side is the usual thread (NCCL_NET_GDR_LEVEL toggled once); its verdict comes from
    the effect against the single-sample noise floor. GDR off is NCCL's choice when the NIC is far
    from the GPU (CAUSE-GPU-NIC-FAR) or when no peer-memory path exists (CAUSE-NO-PEER-MEMORY).
    """
    m = ctx.machine
    if m is None or not m.nics:
        return []  # GPUDirect RDMA needs an RDMA NIC
    runs: dict[tuple, dict[bool, tuple[Judgement, float]]] = {}
    for j in _across_nodes(report, ctx, ctx.judgements):
        p = report.results[j.index].params
        measured = j.measured_gbytes_per_s
        if j.mover is not Mover.COLLECTIVE or measured is None or not isinstance(p, ImportedParams):
            continue
        if p.gpu_direct_rdma is not None:
            runs.setdefault((p.collective, p.size_bytes, p.ranks), {})[p.gpu_direct_rdma] = (j, measured)
    pairs = [(ab[False], ab[True]) for ab in runs.values() if False in ab and True in ab]
    effects = [(off, on, 1 - off[1] / on[1]) for off, on in pairs]
    effects = [e for e in effects if e[2] >= SINGLE_SAMPLE_NOISE]
    if not effects or m is None:
        return []
    (off, off_gbps), (on, on_gbps), effect = max(effects, key=lambda e: e[2])
    classes = [(p, p.path_class.value) for p in m.topology if p.path_class is not None]
    far = [(p, name) for p, name in classes if name not in _NEAR]
    if far and not any(name in _NEAR for _, name in classes):
        code, why = (
            "CAUSE-GPU-NIC-FAR",
            ", ".join(sorted({f"GPU<->{p.nic} {name}" for p, name in far})),
        )
        title = "NCCL leaves GPUDirect RDMA off because the NIC is far from the GPU: it stages through host"
        fix = (
            "Where the platform carries peer traffic across the CPU well (measure it: this A/B), set "
            "NCCL_NET_GDR_LEVEL=SYS (or PHB) so NCCL uses GPUDirect RDMA; else pair GPUs with NICs under "
            "one PCIe switch."
        )
    elif m.kernel.peermem_loaded is False:
        code, why = "CAUSE-NO-PEER-MEMORY", "kernel.peermem_loaded = False"
        title = "no GPU peer-memory path: NCCL stages through host memory"
        fix = "modprobe nvidia_peermem, or use dma-buf (open NVIDIA kernel module, kernel >= 5.12)."
    else:
        return []
    return [
        Cause(
            code,
            title,
            1.0,
            1.0,
            "measured",
            effect,
            (
                f"{_label(off)} = {off_gbps:.2f} GB/s with GPUDirect RDMA off, "
                f"{on_gbps:.2f} GB/s with it on ({effect:.0%} lost)",
                single_sample_line(on_gbps / off_gbps),
                why,
            ),
            (),
            fix,
            "NCCL_DEBUG=INFO (look for 'GDRDMA' in the 'via NET' lines)",
            subject=off.key,
        )
    ]


def _label(j: Judgement) -> str:
    return f"results[{j.index}] {j.label}"


def link_degraded(report: "Report", ctx: Context) -> list[Cause]:
    """CAUSE-LINK-DEGRADED for the worst loss whose path, with every link as trained, explains it.

    Host<->GPU copies of gdrdiag's own copy-bench are weighed by ``copy_causes`` (it reads the link
    sampled during the copy); this rule covers every other row: imported, posted, GPU<->GPU.
    """
    rows = [
        (j, trained / expected)  # what the path allows as trained, over what it allows as capable
        for j in ctx.losses
        if j.is_loss
        and (trained := j.trained_gbytes_per_s)
        and (expected := j.expected_gbytes_per_s)
        and not (j.key.startswith("copy_") and _host_gpu(j))
    ]
    if not rows:
        return []
    worst, trained_over_expected = min(rows, key=lambda row: row[0].ratio or 0)
    share = min(1.0, max(0.0, (1 - trained_over_expected) / max(worst.loss, 1e-9)))
    if share < 0.2:
        return []
    return [
        Cause(
            "CAUSE-LINK-DEGRADED",
            "a PCIe link on the path trained below its capable speed or width",
            1.0,
            share,
            "measured",
            worst.loss,
            (
                row_evidence(worst),
                f"with every link as trained the path allows {worst.trained_gbytes_per_s:.2f} GB/s",
            ),
            (),
            "Reseat the card, riser or cable; check the slot's wiring and bifurcation, the BIOS link speed "
            "setting and retimers; lspci -vv LnkSta against LnkCap shows the link.",
            "gdrdiag inspect",
            subject=worst.key,
        )
    ]


def numa_placement(report: "Report", ctx: Context) -> list[Cause]:
    """CAUSE-NUMA-PLACEMENT for the worst loss whose host buffers sat on a node other than the device's.

    The node comes from the row's run settings (``--numa`` applied, or as posted); the device's node
    from the machine (the GPU's, or the NIC's for host-memory RDMA). A healthy row of the same kind on
    the device's own node makes the share measured.
    """
    m = ctx.machine
    if m is None:
        return []

    def home(j: Judgement) -> Optional[int]:
        """The NUMA node of the device this row ran on: its own NIC or GPU, not the machine's first."""
        if j.mover is Mover.NIC_DMA and m.nics:
            path = path_of(report.results[j.index])[0]
            name = path.nic if path is not None else None
            return next((n for n in m.nics if n.name == name), m.nics[0]).numa_node
        gpu = m.gpu(_row_gpu(j))
        return gpu.numa_node if gpu is not None else None

    def node(j: Judgement) -> Optional[int]:
        return report.results[j.index].settings.numa_node

    far = [
        j
        for j in ctx.losses
        if j.is_loss and node(j) is not None and home(j) is not None and node(j) != home(j)
    ]
    if not far:
        return []
    worst = min(far, key=lambda j: j.ratio or 0)
    local = [
        j
        for j in ctx.judgements
        if j.mover is worst.mover and j.verdict is Verdict.OK and node(j) is not None and node(j) == home(j)
    ]
    pro = [row_evidence(worst), f"host buffers on node {node(worst)}; the device is on node {home(worst)}"]
    if local:
        # the same device's row first: on a node of several GPUs another GPU's link is another path
        best_local = max(local, key=lambda j: (_row_gpu(j) == _row_gpu(worst), j.measured_gbytes_per_s or 0))
        pro.append(f"on the device's own node: {row_evidence(best_local)}")
    share = 1.0 if local else 0.7
    return [
        Cause(
            "CAUSE-NUMA-PLACEMENT",
            "host buffers on a NUMA node far from the device: every transfer crosses the socket link",
            share,
            share,
            "measured" if local else "inferred",
            worst.loss,
            tuple(pro),
            (),
            "Allocate and run on the device's NUMA node (numactl --cpunodebind=N --membind=N, torch "
            "numa binding, "
            "gdrdiag --numa auto); with several NICs, post host buffers only to NICs on their own node.",
            "gdrdiag copy-bench --numa auto",
            subject=worst.key,
        )
    ]


RULES = (
    gdr_ab,
    numa_placement,
    link_degraded,
    pageable_memory,
    small_copies,
    link_narrow,
    no_peer_memory,
    collective_far,
)


# A loss whose best samples reach this share of what the path allows came and went during the run:
# the path can carry it (measured: a 256 MiB D2H copy on the H100 VM, samples 55.2, 55.2, 54.8, 51.3,
# then 33.1, 26.7, 32.4, 37.1, 41.3, 44.2 GB/s against 57.2 expected; docs/benchmarks.md).
TRANSIENT_BEST = 0.9
TRANSIENT_MIN_SAMPLES = 3


def sample_shares(report: "Report", j: Judgement) -> list[float]:
    """Each sample of the judged row as a share of its expected value (empty when not comparable)."""
    r = report.results[j.index]
    if not j.expected_gbytes_per_s or len(r.samples) < TRANSIENT_MIN_SAMPLES or not r.unit:
        return []
    values = (to_gbytes_per_s(float(v), r.unit) for v in r.samples)
    return [v / j.expected_gbytes_per_s for v in values if v is not None]


def _unstable(j: Judgement, shares: list[float]) -> Finding:
    below = sum(x < SLOW_BELOW for x in shares)
    return Finding(
        code="PERF-PATH-UNSTABLE",
        severity=Severity.INFO,
        title=f"{j.label} reaches {j.ratio:.0%} of what its path allows at the median, but "
        f"{max(shares):.0%} in its best samples: the loss came and went during the run",
        evidence=(
            row_evidence(j),
            f"samples: best {max(shares):.0%}, worst {min(shares):.0%} of the expected "
            f"{j.expected_gbytes_per_s or 0:.2f} GB/s; {below} of {len(shares)} below {SLOW_BELOW:.0%}",
        ),
        advice="The path carries its full rate: something else used the link or the host's memory for "
        "part of the run (another process or tenant, a checkpoint, page reclaim). Run it again; if it "
        "repeats, watch the GPU's PCIe traffic while it runs (nvidia-smi dmon -s t).",
        subject=j.key,
        basis="measured",
        next_step="gdrdiag copy-bench --iters 50" if j.mover is Mover.COPY_ENGINE else "",
    )


def _slow(j: Judgement) -> Finding:
    return Finding(
        code="PERF-PATH-SLOW",
        severity=Severity.WARN,
        title=f"{j.label} reaches {j.ratio:.0%} of what its path allows; no cause in this Report explains it",
        evidence=(row_evidence(j), f"per-operation cost: {j.per_op_us or 0:.2f} us ({j.per_op_source})"),
        advice="Measure the path with gdrdiag (or attach the machine: gdrdiag import ... --bundle) so the "
        "cause model can weigh the link, NUMA, IOMMU and memory-kind candidates.",
        subject=j.key,
        basis="measured",
        next_step="gdrdiag report -o node.json",
    )


def unexplained_losses(report: "Report", ctx: Context, causes: Iterable[Cause]) -> list[Finding]:
    """PERF-PATH-SLOW for the worst loss of each mover that no cause explains (a symptom: after causes).

    PERF-PATH-UNSTABLE instead when that row's best samples reach the path.
    """
    causes = list(causes)
    explained = {c.subject for c in causes if c.explains >= 0.2}
    pageable_named = any(c.code == "CAUSE-PAGEABLE-MEMORY" for c in causes)
    out = []
    by_mover: dict[Mover, Judgement] = {}
    for j in ctx.losses:
        if pageable_named and _host_memory(j) in _STAGED:
            continue
        if isinstance(report.results[j.index].params, PeerParams):
            continue  # peer-bench rows: diagnose/peer_rules.py (PEER-SLOW) judges them
        if (
            j.is_loss
            and j.mover is not None
            and (j.mover not in by_mover or (j.ratio or 0) < (by_mover[j.mover].ratio or 0))
        ):
            by_mover[j.mover] = j
    for j in by_mover.values():
        same_key = any(s == j.key or s.startswith(j.key) for s in explained)
        if same_key or (j.mover is Mover.NIC_DMA and any(g.slow for g in ctx.gaps)):
            continue
        shares = sample_shares(report, j)
        out.append(_unstable(j, shares) if shares and max(shares) >= TRANSIENT_BEST else _slow(j))
    return out
