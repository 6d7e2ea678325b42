"""The one adapter from a Report to what fleet compares: headline metrics, machine facts, SKU.

Fleet analysis (``gdrdiag.fleet``) never reads ``BenchResult.params``/``metrics`` or
``MachineInfo`` fields itself; it works on the flat values this module extracts when a node
record is written, from the typed results of Report schema v2.

- :func:`node_metrics`: Report -> {metric name: value}, every metric *higher is better*, plus
  {metric name: reason} for metrics whose cases ran but produced no number (ERROR/WAIVED).
- :func:`node_facts`: Report -> {fact name: text}: the machine facts that explain a slow node
  (link speed/width, RlxdOrd, MaxReadReq, MaxPayload, ATS, ACSCtl on the GPU<->NIC paths,
  driver/firmware versions, peermem, IOMMU mode, NIC ports: MTU, rate and state; links as
  capable and as trained; GPU ordinals and NIC names per address) and the inventory (GPUs, RDMA
  devices, RDMA-NIC PCI functions), as text so they can be compared by equality.
- :func:`node_sku`: the SKU a node is grouped by: GPU model + NIC model + driver versions +
  bare metal or VM. Firmware is deliberately *not* part of the key: a node on other firmware
  should be compared with its peers and show up as a differing fact.
- :func:`node_pairs`: two-machine RDMA results (client side) as (peer host, metric, value).

Results from the ``soft`` provider are skipped: software numbers never judge hardware.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Callable, Iterable, Optional

from gdrdiag.model.machine import MachineInfo, PciFunction
from gdrdiag.model.report import Report
from gdrdiag.model.results import BenchResult, Status


@dataclass(frozen=True)
class MetricSpec:
    """One fleet metric: name (carrying the unit), what it is, and how it is picked from results."""

    name: str
    unit: str
    description: str
    pick: Callable[[BenchResult], bool]


def _key_is(*keys: str) -> Callable[[BenchResult], bool]:
    return lambda r: r.key in keys


def _rdma(memory: str, reg_path: Optional[str]) -> Callable[[BenchResult], bool]:
    def pick(r: BenchResult) -> bool:
        return (
            r.key.startswith("rdma_write_")
            and r.params.memory == memory
            and (reg_path is None or r.params.reg_path == reg_path)
            and (r.params.topology or "loopback") == "loopback"
            and (r.params.mode or "bw") == "bw"
        )

    return pick


def _gather_kernel(r: BenchResult) -> bool:
    return r.key.startswith("gather_") and r.key != "gather_ce_reference" and r.params.kernel is not None


METRICS: tuple[MetricSpec, ...] = (
    MetricSpec(
        "copy_h2d_pinned_gbs", "GB/s", "pinned host->GPU copy, largest size", _key_is("copy_h2d_pinned")
    ),
    MetricSpec(
        "copy_d2h_pinned_gbs", "GB/s", "GPU->pinned host copy, largest size", _key_is("copy_d2h_pinned")
    ),
    MetricSpec("gather_best_gbs", "GB/s", "best GPU zero-copy gather kernel", _gather_kernel),
    MetricSpec(
        "rdma_device_mr_gbps", "Gb/s", "RDMA WRITE into GPU memory, nvidia-peermem MR", _rdma("device", "mr")
    ),
    MetricSpec(
        "rdma_device_dmabuf_gbps", "Gb/s", "RDMA WRITE into GPU memory, dma-buf MR", _rdma("device", "dmabuf")
    ),
    MetricSpec("rdma_host_gbps", "Gb/s", "RDMA WRITE into pinned host memory", _rdma("pinned", None)),
)
METRIC_NAMES = tuple(m.name for m in METRICS)
SIZE_PICKED = frozenset({"copy_h2d_pinned_gbs", "copy_d2h_pinned_gbs"})


def _usable(r: BenchResult) -> bool:
    return r.provider != "soft"


def node_metrics(report: Report) -> tuple[dict[str, float], dict[str, str]]:
    """(metrics, missing): the best value of each metric, and why a metric whose cases ran has none.

    Copies take the largest size measured (the bandwidth plateau); the other metrics take the best
    case (RO off or on, any kernel), because fleet asks "is this node slower than its peers", and
    the best a node can do is the fairest comparison.
    """
    values: dict[str, float] = {}
    missing: dict[str, str] = {}
    for spec in METRICS:
        picked = [r for r in report.results if _usable(r) and spec.pick(r)]
        ok = [r for r in picked if r.status is Status.OK and r.value is not None]
        if ok:
            if spec.name in SIZE_PICKED:
                best = max(ok, key=lambda r: (_size(r), r.value or 0.0))
            else:
                best = max(ok, key=lambda r: r.value or 0.0)
            values[spec.name] = float(best.value or 0.0)
        elif picked:
            bad = picked[0]
            missing[spec.name] = f"{bad.status.value}: {bad.reason or 'no value'}"[:200]
    return values, missing


def _size(r: BenchResult) -> int:
    size = getattr(r.params, "size_bytes", None)
    return size if isinstance(size, int) else 0


# --------------------------------------------------------------------------------------------
# machine facts
# --------------------------------------------------------------------------------------------


def _link_text(f: PciFunction) -> Optional[str]:
    link = f.link
    if link is None or link.speed_gts is None or link.width is None:
        return None
    return f"{link.speed_gts:g} GT/s x{link.width}"


def _link_cap_text(f: PciFunction) -> Optional[str]:
    link = f.link
    if link is None or link.max_speed_gts is None or link.max_width is None:
        return None
    return f"{link.max_speed_gts:g} GT/s x{link.max_width}"


def _path_functions(m: MachineInfo) -> list[tuple[str, PciFunction]]:
    """(role, function) for GPUs, NICs and the bridges on their GPU<->NIC paths, in a stable order."""
    out: list[tuple[str, PciFunction]] = []
    seen: set[str] = set()

    def add(role: str, bdf: Optional[str]) -> None:
        f = m.function(bdf)
        if f is not None and f.bdf not in seen:
            seen.add(f.bdf)
            out.append((role, f))

    for g in m.gpus:
        add("gpu", g.bdf)
    for n in m.nics:
        add("nic", n.bdf)
    for p in m.topology:
        for b in p.bridges:
            add("bridge", b)
    return out


# PCI vendors of RDMA NICs (NVIDIA/Mellanox, Broadcom): their network-class functions are counted
# whether or not a driver is bound, so "NIC there, RDMA driver not" and "NIC gone" differ.
RDMA_NIC_VENDORS = frozenset({0x15B3, 0x14E4})


def _is_rdma_nic_function(f: PciFunction) -> bool:
    return f.vendor_id in RDMA_NIC_VENDORS and f.class_code is not None and (f.class_code >> 16) == 0x02


def node_facts(report: Report) -> dict[str, str]:
    """Machine facts as ``{name: text}``; a fact that could not be read is absent, not "unknown"."""
    m = report.machine
    if m is None:
        return {}
    facts: dict[str, str] = {}
    k = m.kernel
    if k.nvidia_driver_version:
        facts["nvidia driver"] = k.nvidia_driver_version
    if k.nvidia_flavour is not None:
        facts["nvidia module"] = k.nvidia_flavour.value
    if k.peermem_loaded is not None:
        facts["nvidia_peermem"] = "loaded" if k.peermem_loaded else "not loaded"
    if k.release:
        facts["kernel"] = k.release
    if k.rdma_core_version:
        facts["rdma-core"] = k.rdma_core_version
    if m.virt.iommu_mode:
        facts["iommu mode"] = m.virt.iommu_mode
    # Inventory: what fleet compares with the SKU's (a lost GPU or NIC, an RDMA driver not bound).
    facts["gpus"] = str(len(m.gpus))
    facts["rdma devices"] = str(len(m.nics))
    facts["nic functions"] = str(sum(1 for f in m.pci if _is_rdma_nic_function(f)))
    for g in m.gpus:  # record version 2: which CUDA ordinal each GPU address is (findings name both)
        if g.cuda_ordinal is not None:
            facts[f"ordinal gpu {g.bdf}"] = str(g.cuda_ordinal)
    for n in m.nics:
        if n.bdf:
            facts[f"name nic {n.bdf}"] = n.name
        if n.fw_ver:
            facts[f"firmware {n.name}"] = n.fw_ver
        for p in n.ports:
            if p.active_mtu:
                facts[f"mtu {n.name} port {p.port}"] = str(p.active_mtu)
            # record version 2: every port's rate and state, benchmarked or not (a port that
            # trained at half rate or is down is a node problem even if no bench used it)
            if p.rate_gbps:
                facts[f"port rate {n.name} port {p.port}"] = f"{p.rate_gbps:g}"
            if p.state:
                facts[f"port state {n.name} port {p.port}"] = p.state
    for role, f in _path_functions(m):
        where = f"{role} {f.bdf}"
        link = _link_text(f)
        if link and role != "bridge":
            facts[f"link {where}"] = link
            capable = _link_cap_text(f)
            if capable:  # record version 2: the link as capable beside the link as trained
                facts[f"link cap {where}"] = capable
        if f.pcie is not None and not f.is_vf and role != "bridge":
            facts[f"RlxdOrd {where}"] = "+" if f.pcie.relaxed_ordering else "-"
            facts[f"MaxReadReq {where}"] = str(f.pcie.max_read_request)
            facts[f"MaxPayload {where}"] = str(f.pcie.max_payload)
        if f.ats is not None and role != "bridge":
            facts[f"ATS {where}"] = "on" if f.ats.enabled else "off"
        if f.acs is not None and role == "bridge":
            facts[f"ACSCtl {where}"] = " ".join(sorted(f.acs.ctl_flags)) or "none"
        if role == "bridge" and link:
            facts[f"link {where}"] = link
    return facts


# --------------------------------------------------------------------------------------------
# SKU
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Sku:
    """What a node is, for grouping: nodes of one SKU should measure alike."""

    gpus: str
    nics: str
    driver: str
    platform: str

    @property
    def key(self) -> str:
        """One stable line: ``4x NVIDIA H100 | 4x ConnectX-7 | nvidia 550.90.07 open | bare metal``."""
        return " | ".join((self.gpus, self.nics, self.driver, self.platform))


def _counted(names: Iterable[str]) -> str:
    counts = Counter(n or "unknown" for n in names)
    return ", ".join(f"{c}x {n}" for n, c in sorted(counts.items())) or "none"


def node_sku(report: Report) -> Sku:
    """The SKU of the machine in ``report`` (``unknown`` parts where the Report has no machine)."""
    m = report.machine
    if m is None:
        return Sku("unknown", "unknown", "unknown", "unknown")
    k = m.kernel
    driver = "nvidia " + (k.nvidia_driver_version or "unknown")
    if k.nvidia_flavour is not None:
        driver += f" {k.nvidia_flavour.value}"
    if m.virt.is_vm is None:
        platform = "unknown"
    elif m.virt.is_vm:
        platform = f"VM ({m.virt.hypervisor})" if m.virt.hypervisor else "VM"
    else:
        platform = "bare metal"
    return Sku(
        gpus=_counted(g.name for g in m.gpus),
        nics=_counted(n.model for n in m.nics),
        driver=driver,
        platform=platform,
    )


# --------------------------------------------------------------------------------------------
# pairwise (two-machine) results
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PairValue:
    """One two-machine RDMA result, seen from the client node: the server it wrote to and the value."""

    peer: str
    metric: str
    value: float


def node_pairs(report: Report) -> list[PairValue]:
    """Client-side two-machine RDMA WRITE results as (peer host, metric, value); best value per peer."""
    best: dict[tuple[str, str], float] = {}
    for r in report.results:
        if not _usable(r) or r.status is not Status.OK or r.value is None:
            continue
        if not r.key.startswith("rdma_write_") or r.params.topology != "two_machine":
            continue
        if r.params.role != "client":
            continue
        peer = str(r.settings.peer or "")
        host = peer.rsplit(":", 1)[0] if ":" in peer else peer
        if not host:
            continue
        metric = f"pair_rdma_{r.params.memory or 'unknown'}_gbps"
        best[(host, metric)] = max(best.get((host, metric), 0.0), float(r.value))
    return [PairValue(peer=h, metric=mname, value=v) for (h, mname), v in sorted(best.items())]
