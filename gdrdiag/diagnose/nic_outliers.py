"""PERF-NIC-OUTLIER: the RDMA device of a node that is slower than its siblings at the same mr-bench case.

Pure. A node's NICs (eight ConnectX on an HGX board, one per GPU) are built alike, so mr-bench run on
each (``mr-bench -d mlx5_N``, the Reports merged with ``report --add-results``) should give one
number per case; a NIC well below the others has a narrower or slower PCIe link, a slower port, a
smaller MTU, or was measured with a GPU on the far socket. Judged as the GPUs are
(:func:`gdrdiag.diagnose.node_rules.below_siblings`: beyond the other NICs' noise, at least three NICs,
a minority below, two cases agreeing or one case 30% below). The rows are RDMA WRITE bandwidth rows
of one case (key, memory, registration path, size, QPs, provider), the device read from each row's
``settings.device_name``; the GPU a row used is not part of the case, so a NIC measured with another
GPU than its siblings is compared too, and that GPU's NUMA node is one of the causes looked at.

Software RDMA never counts: a row of the soft provider (gdrdiag's software verbs) or the C loop over a
null device, and a row on a software device (Soft-RoCE ``rxe*``, soft-iWARP ``siw*``) move bytes with
the CPU, so their rates say nothing about a NIC.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterable, Optional

from gdrdiag.diagnose._common import ev, finding
from gdrdiag.diagnose.inventory_rules import busy_reason
from gdrdiag.diagnose.node_rules import (
    MIN_GPUS,
    below_evidence,
    below_siblings,
    case_label,
    comparable,
    corroborated,
    narrower_link,
    typical,
)
from gdrdiag.model.case import CaseId
from gdrdiag.model.findings import Finding, Severity
from gdrdiag.model.imported_path import PathKind
from gdrdiag.model.machine import GpuInfo, MachineInfo, NicInfo, NicPort
from gdrdiag.model.params import ImportedParams, MrParams
from gdrdiag.model.results import BenchResult, is_mr
from gdrdiag.model.vocabulary import MemoryKind, Provider

if TYPE_CHECKING:  # pragma: no cover
    from gdrdiag.diagnose.context import Context
    from gdrdiag.model.report import Report

MIN_NICS = MIN_GPUS  # with two NICs there is no odd one out
# Providers whose numbers are not a NIC's: gdrdiag's software verbs and the C loop over a null device.
NOT_A_NIC = (Provider.SOFT, Provider.NATIVE_NULL)
SOFT_DEVICE_PREFIXES = ("rxe", "siw")  # Soft-RoCE (rdma_rxe) and soft-iWARP device names


@dataclass(frozen=True)
class NicBelow:
    """One case at which one NIC was below the node's other NICs."""

    nic: str
    index: int  # the row in the Report's results
    label: str
    unit: str
    value: float
    siblings_median: float
    tolerance: float

    @property
    def share(self) -> float:
        """The NIC's value over its siblings' median."""
        return self.value / self.siblings_median if self.siblings_median > 0 else 0.0


def _software(name: str, machine: Optional[MachineInfo]) -> bool:
    """True when ``name`` is a software RDMA device, by the machine's facts or by its name."""
    nic = _nics(machine).get(name)
    return name.startswith(SOFT_DEVICE_PREFIXES) or (nic is not None and nic.software is not None)


def nic_of(result: BenchResult) -> Optional[str]:
    """The RDMA device a row measured, None for rows of no NIC.

    mr-bench's ``-d`` (its run settings), or the device an imported perftest output names (its
    ``Device :`` line).
    """
    if is_mr(result):
        return result.settings.device_name
    p = result.params
    if isinstance(p, ImportedParams) and p.path_kind is PathKind.NIC_DMA:
        return p.device_name
    return None


def nic_groups(
    results: "list[BenchResult] | tuple[BenchResult, ...]", machine: Optional[MachineInfo]
) -> dict[tuple, dict[str, int]]:
    """Bandwidth cases measured on several hardware NICs: case -> device name -> row index.

    mr-bench rows and imported perftest rows (``ib_write_bw -d mlx5_N`` outputs imported together).
    A case is the row's identity less its GPU ordinal; a device's first row of a case counts.
    """
    groups: dict[tuple, dict[str, int]] = {}
    for index, r in enumerate(results):
        device = nic_of(r)
        if not device or not comparable(r) or Provider.parse(r.provider) in NOT_A_NIC:
            continue
        if _software(device, machine):
            continue
        case = CaseId.of(r)
        physics = tuple(item for item in case.physics if item[0] != "gpu")
        groups.setdefault((case.key, physics, case.provider, r.unit), {}).setdefault(device, index)
    return {k: v for k, v in groups.items() if len(v) >= 2}


def nics_below(
    results: "list[BenchResult] | tuple[BenchResult, ...]", machine: Optional[MachineInfo]
) -> list[NicBelow]:
    """Every (NIC, case) below the case's other NICs beyond the noise (cases of ``MIN_NICS`` or more)."""
    out = []
    for (key, physics, _provider, unit), members in nic_groups(results, machine).items():
        if len(members) < MIN_NICS:
            continue
        for nic, median, tolerance in below_siblings({n: results[i] for n, i in members.items()}):
            i = members[nic]
            value = float(results[i].value or 0.0)
            out.append(NicBelow(nic, i, case_label(key, physics), unit, value, median, tolerance))
    return out


def _nics(machine: Optional[MachineInfo]) -> dict[str, NicInfo]:
    return {n.name: n for n in machine.nics} if machine else {}


def _port(nic: NicInfo, number: Optional[int]) -> Optional[NicPort]:
    """The port a row used (``-i``, 1 by default, as perftest), else the device's first."""
    wanted = number or 1
    return next((p for p in nic.ports if p.port == wanted), nic.ports[0] if nic.ports else None)


def _link_cause(nic: NicInfo, siblings: list[NicInfo]) -> Optional[str]:
    """The NIC's PCIe link narrower or slower than its siblings' (ConnectX links do not idle down)."""
    link = nic.link
    if link is None:
        return None
    narrow = narrower_link(link, (s.link for s in siblings), "PCIe link")
    if narrow is not None:
        return narrow
    speed = typical(s.link.speed_gts for s in siblings if s.link is not None)
    if link.speed_gts is not None and isinstance(speed, float) and link.speed_gts < speed:
        return f"its PCIe link trained at {link.speed_gts:g} GT/s while its siblings' run at {speed:g} GT/s"
    return None


def _port_cause(port: Optional[NicPort], sibling_ports: list[NicPort]) -> Optional[str]:
    """The port's rate (speed x width) or MTU below its siblings'."""
    if port is None:
        return None
    rate = typical(p.rate_gbps for p in sibling_ports)
    if port.rate_gbps is not None and isinstance(rate, float) and port.rate_gbps < rate:
        text = f" ({port.rate})" if port.rate else ""
        return (
            f"its port {port.port} runs at {port.rate_gbps:g} Gb/s{text} while its siblings' run at "
            f"{rate:g} Gb/s"
        )
    mtu = typical(p.active_mtu for p in sibling_ports)
    if port.active_mtu is not None and isinstance(mtu, int) and port.active_mtu < mtu:
        return f"its port {port.port}'s active MTU is {port.active_mtu} while its siblings' is {mtu}"
    return None


def _gpu_of_row(machine: MachineInfo, result: BenchResult) -> Optional[GpuInfo]:
    """The GPU whose memory the row used (device or managed memory on this side), or None."""
    p = result.params
    if isinstance(p, MrParams):
        if p.gpu is None and MemoryKind.DEVICE not in (p.memory, p.src_memory):
            return None  # host memory on this side: no GPU in the path
    elif not isinstance(p, ImportedParams) or p.memory is not MemoryKind.DEVICE:
        return None  # an imported row into host memory (perftest without --use_cuda)
    ordinal = p.gpu or 0
    return next((g for g in machine.gpus if g.cuda_ordinal == ordinal), None)


def _numa_cause(nic: NicInfo, gpu: Optional[GpuInfo]) -> Optional[str]:
    """The NIC on another NUMA node than the GPU it wrote into: the bytes cross the inter-socket link."""
    if gpu is None or nic.numa_node is None or gpu.numa_node is None or min(nic.numa_node, gpu.numa_node) < 0:
        return None
    if nic.numa_node == gpu.numa_node:
        return None
    return (
        f"it is on NUMA node {nic.numa_node} and was measured with GPU {gpu.cuda_ordinal} ({gpu.bdf}) on "
        f"node {gpu.numa_node}: every write crosses the inter-socket link"
    )


def explain(machine: Optional[MachineInfo], nic_name: str, result: BenchResult) -> tuple[str, str]:
    """(what the machine facts say made this NIC slower, or "", the advice for it)."""
    nics = _nics(machine)
    nic = nics.get(nic_name)
    if machine is None or nic is None:
        return "", COMPARE_ADVICE
    siblings = [n for name, n in nics.items() if name != nic_name and n.software is None]
    link = _link_cause(nic, siblings)
    if link:
        return link, (
            f"Reseat the NIC or check its slot's lane wiring; `lspci -vv -s {nic.bdf}` shows LnkSta "
            "against LnkCap (PCIe Base Spec r5.0 7.5.3.6-7.5.3.8)."
        )
    sibling_ports = [p for s in siblings if (p := _port(s, result.settings.port)) is not None]
    port = _port_cause(_port(nic, result.settings.port), sibling_ports)
    if port:
        return port, (
            f"`ibstat {nic_name}` (or `ethtool` on its netdev) shows the port's rate and `ibv_devinfo -d "
            f"{nic_name}` its active MTU; check the cable, the switch port's speed and the fabric's MTU."
        )
    gpu = _gpu_of_row(machine, result)
    numa = _numa_cause(nic, gpu)
    if numa:
        return numa, "Measure each NIC with a GPU on its own NUMA node (`nvidia-smi topo -m` pairs them)."
    busy = busy_reason(gpu) if gpu is not None else None
    if gpu is not None and busy:
        return f"GPU {gpu.cuda_ordinal}, which it was measured with, was in use: {busy}", (
            "Run when the GPU is idle, or move the other job."
        )
    return "", COMPARE_ADVICE


COMPARE_ADVICE = (
    "Compare the NIC's PCIe link (`lspci -vv`), port rate and MTU (`ibv_devinfo -v`), firmware and NUMA "
    "node with its siblings'."
)


def nic_outlier_findings(
    results: "list[BenchResult] | tuple[BenchResult, ...]", machine: Optional[MachineInfo]
) -> Iterable[Finding]:
    """PERF-NIC-OUTLIER: one finding per NIC slower than its siblings, its worst case first."""
    nics = _nics(machine)
    for name, cases in corroborated(nics_below(results, machine), lambda b: b.nic):
        worst = cases[0]
        nic = nics.get(name)
        where = f"NIC {name}" + (f" ({nic.bdf})" if nic is not None and nic.bdf else "")
        cause, advice = explain(machine, name, results[worst.index])
        evidence = below_evidence(cases, "the other NICs'")
        if cause:
            evidence.append(ev(f"nics[{name}]", cause))
        yield finding(
            "PERF-NIC-OUTLIER",
            Severity.WARN,
            f"{where} is slower than the node's other NICs: {worst.label.split()[0]} at {worst.share:.2f} of "
            "their median" + (f"; {cause}" if cause else ""),
            evidence,
            advice,
            "",
            name,
        )


def nic_outliers(report: "Report", ctx: "Context") -> Iterable[Finding]:
    """PERF-NIC-OUTLIER over a Report (the report rule)."""
    return nic_outlier_findings(report.results, ctx.machine)


RULES = (nic_outliers,)
