"""Helpers shared by the machine rules: selecting devices and writing evidence."""

from __future__ import annotations

import re
from typing import Iterator, Optional

from gdrdiag.model.findings import Finding, Severity
from gdrdiag.model.machine import MachineInfo, NicInfo, PciFunction, PortType, TopologyPair

# "<call> failed: <errno> ..." as HardwareError words it (gdrdiag/errors.py), for a verbs call that
# is not a memory registration (ibv_reg_mr, ibv_reg_dmabuf_mr): ibv_create_qp's ENOMEM means the
# device's queue resources ran out (ibv_create_qp(3): "ENOMEM Not enough resources to complete this
# operation"), which says nothing about whether GPU memory can be registered.
_OTHER_VERBS_CALL = re.compile(r"\b(ibv_(?!reg_)\w+) failed")


def failed_call_not_registration(reason: Optional[str]) -> Optional[str]:
    """The verbs call a failed row names when that call is not a registration, else None."""
    m = _OTHER_VERBS_CALL.search(reason or "")
    return m.group(1) if m else None


def finding(
    code: str,
    severity: Severity,
    title: str,
    evidence: list[str] | tuple[str, ...],
    advice: str,
    reference: str,
    subject: str = "",
) -> Finding:
    """A Finding with evidence as a tuple (the model's type)."""
    return Finding(
        code=code,
        severity=severity,
        title=title,
        evidence=tuple(evidence),
        advice=advice,
        reference=reference,
        subject=subject,
    )


def ev(path: str, value: object) -> str:
    """One evidence line: ``path = value``; a value the Report does not hold (None) reads ``unknown``."""
    return f"{path} = {shown(value, UNKNOWN)}"


UNKNOWN = "unknown"


def shown(value: object, unknown: str = "?") -> str:
    """``value`` as user text; None (a fact not read, a parameter not recorded) as ``unknown``.

    Optional fields are None where a fact is unknown (docs/architecture.md: unknown = null plus a
    reason); formatting them straight into a title or evidence line printed the word ``None``.
    """
    return unknown if value is None else str(value)


def gpu_functions(m: MachineInfo) -> Iterator[PciFunction]:
    """PCI functions of the GPUs inspect found."""
    for g in m.gpus:
        f = m.function(g.bdf)
        if f is not None:
            yield f


def nic_functions(m: MachineInfo) -> Iterator[tuple[NicInfo, PciFunction]]:
    """(NIC, its PCI function) for RDMA devices with a function in sysfs."""
    for n in m.nics:
        f = m.function(n.bdf)
        if f is not None:
            yield n, f


def endpoints(m: MachineInfo) -> list[tuple[str, PciFunction]]:
    """(role, function) for every GPU and RDMA NIC function, each once."""
    out: list[tuple[str, PciFunction]] = [("GPU", f) for f in gpu_functions(m)]
    seen = {f.bdf for _, f in out}
    for n, f in nic_functions(m):
        if f.bdf not in seen:
            seen.add(f.bdf)
            out.append((f"NIC {n.name}", f))
    return out


def upstream_chain(m: MachineInfo, f: PciFunction) -> list[PciFunction]:
    """``f`` and every bridge above it that sysfs shows, endpoint first."""
    out = [f]
    cur: Optional[PciFunction] = f
    for _ in range(32):
        cur = m.function(cur.parent_bdf) if cur and cur.parent_bdf else None
        if cur is None:
            break
        out.append(cur)
    return out


def is_downstream_facing(f: PciFunction) -> bool:
    """Root ports and switch downstream ports: where ACS redirect applies (PCIe Base Spec r5.0 sec. 6.12)."""
    return f.pcie is not None and f.pcie.port_type in (PortType.ROOT_PORT, PortType.SWITCH_DOWNSTREAM)


def on_bare_metal(m: MachineInfo) -> bool:
    """True unless the machine is, or may be, a VM."""
    return m.virt.is_vm is False


def has_gpu_and_nic(m: MachineInfo) -> bool:
    """A GPUDirect RDMA path exists to judge."""
    return bool(m.gpus) and bool(m.nics)


_CLASS_RANK = {"PIX": 0, "PXB": 1, "PHB": 2, "NODE": 3, "SYS": 4}


def best_pairs(m: MachineInfo) -> list[TopologyPair]:
    """For each GPU, its closest NIC pair(s): what NCCL would pair it with.

    A server has far GPU<->NIC pairs by design (across sockets); only a GPU whose *closest*
    NIC is far is a finding.
    """
    by_gpu: dict[str, list[tuple[TopologyPair, int]]] = {}
    for p in m.topology:
        ranked = by_gpu.setdefault(p.gpu_bdf, [])  # GPUs in the order the topology lists them
        if p.path_class is not None:
            ranked.append((p, _CLASS_RANK[p.path_class.value]))
    out: list[TopologyPair] = []
    for ranked in by_gpu.values():
        if not ranked:
            continue
        best = min(rank for _, rank in ranked)
        out.extend(p for p, rank in ranked if rank == best)
    return out
