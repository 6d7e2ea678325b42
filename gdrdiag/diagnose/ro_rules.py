"""Relaxed-ordering rules (docs/kb/ro.md).

What to judge depends on the function:
- a PF (host, or passed through whole): its DevCtl RlxdOrd bit - vfio passes it through (vfio_pci_config.c);
- a VF: its RlxdOrd bit is RsvdP and always reads 0 (Linux probe.c), so never flag it. On the
  host, judge the PF's bit; everywhere, judge the kernel: before Linux 6.4 mlx5 gated RO write
  and read on the function's own DevCtl bit, so IBV_ACCESS_RELAXED_ORDERING silently did
  nothing on VFs and in VMs (Avihai Horon's series, Linux commits ed4b0661cce1, bd4ba605c4a9).
"""

from __future__ import annotations

from typing import Iterable

from gdrdiag.diagnose._common import (
    best_pairs,
    ev,
    finding,
    gpu_functions,
    has_gpu_and_nic,
    nic_functions,
    shown,
)
from gdrdiag.model.findings import Finding, Severity
from gdrdiag.model.machine import MachineInfo, PathClass

RO_FIX_KERNEL = (6, 4)
# CPUs where UCX turns RO on by default because missing RO costs 2-3x even on bare metal
# (openucx/ucx src/ucs/arch/cpu.h, PR #10955):
# AMD family 0x17 (Naples/Rome) and 0x19 (Milan+), Intel Emerald Rapids (family 6, model 0xCF).
RO_PLATFORMS: dict[tuple[object, ...], str] = {
    ("AuthenticAMD", 0x17): "AMD Zen/Zen2 (Naples/Rome)",
    ("AuthenticAMD", 0x19): "AMD Zen3/Zen4",
    ("GenuineIntel", 6, 0xCF): "Intel Emerald Rapids",
}


def pf_bit(m: MachineInfo) -> Iterable[Finding]:
    """RO-PF-DISABLED (PF bit 0), RO-VF-BIT (a VF's 0 is not a fault), RO-PF-OF-VF (host: the PF's bit)."""
    for n, f in nic_functions(m):
        if f.is_vf:
            if f.pcie is not None and not f.pcie.relaxed_ordering:
                yield finding(
                    "RO-VF-BIT",
                    Severity.INFO,
                    f"{n.name} is a VF: its RlxdOrd- is RsvdP, not a setting",
                    [ev(f"pci[{f.bdf}].pcie.relaxed_ordering", False), ev(f"pci[{f.bdf}].is_vf", True)],
                    "Not a fault. Whether RO reaches the wire depends on the PF's bit (host) and on the "
                    "kernel honouring IBV_ACCESS_RELAXED_ORDERING for VFs (>= 6.4).",
                    "",
                    n.name,
                )
            # the host's physfn link, or the PF address recorded with a VF passed into a guest
            pf_bdf = f.physfn or n.pf_bdf
            pf = m.function(pf_bdf) if pf_bdf else None
            if pf is not None and pf.pcie is not None and not pf.pcie.relaxed_ordering:
                yield finding(
                    "RO-PF-OF-VF",
                    Severity.WARN,
                    f"the PF {pf.bdf} of {n.name} has RlxdOrd-: none of its VFs can emit RO TLPs",
                    [ev(f"pci[{pf.bdf}].pcie.relaxed_ordering", False)],
                    "Find out why the PF's RO enable is off: BIOS, or a root port the kernel marks "
                    "NO_RELAXED_ORDERING (dmesg 'Relaxed Ordering disabled').",
                    "",
                    pf.bdf,
                )
            continue
        if f.pcie is not None and not f.pcie.relaxed_ordering:
            yield finding(
                "RO-PF-DISABLED",
                Severity.WARN,
                f"{n.name} ({f.bdf}) has RlxdOrd-: the NIC cannot set the RO attribute on its writes",
                [ev(f"pci[{f.bdf}].pcie.relaxed_ordering", False), ev(f"pci[{f.bdf}].is_vf", False)],
                "Check dmesg for 'Relaxed Ordering disabled because the Root Port didn't support it' "
                "(then it is intentional) and the BIOS; with RO off, peer writes that cross the root "
                "complex stay strictly ordered.",
                "",
                n.name,
            )


def kernel_honours_ro(m: MachineInfo) -> Iterable[Finding]:
    """RO-KERNEL-VF: a VF NIC under a kernel older than 6.4 ignores the RO access flag."""
    vfs = [n for n in m.nics if n.is_vf]
    if not vfs:
        return
    k = m.kernel
    names = ", ".join(n.name for n in vfs)
    where = "guest" if m.virt.is_vm else "host"
    evidence = [
        ev("kernel.release", k.release),
        ev("nics[].is_vf", f"{names}: True"),
        ev("virt.is_vm", m.virt.is_vm),
        ev("kernel.mlx5_out_of_tree", k.mlx5_out_of_tree),
    ]
    if not k.version_tuple:
        yield finding(
            "RO-KERNEL-UNKNOWN",
            Severity.INFO,
            "kernel version unknown: cannot tell whether RO works on VFs",
            evidence,
            "RO on VFs needs Linux >= 6.4 or a vendor OFED with the backport.",
            "",
        )
        return
    if tuple(k.version_tuple[:2]) >= RO_FIX_KERNEL:
        return
    if k.mlx5_out_of_tree:
        yield finding(
            "RO-KERNEL-VF",
            Severity.INFO,
            f"{where} kernel {shown(k.release)} is older than 6.4 "
            "but mlx5 is an out-of-tree (OFED/DOCA) build",
            evidence,
            "Verify that this OFED carries 'Allow relaxed ordering read in VFs and VMs'; "
            "measure with `gdrdiag mr-bench --ro-ab`.",
            "",
        )
        return
    yield finding(
        "RO-KERNEL-VF",
        Severity.FAIL if m.gpus else Severity.WARN,
        f"{where} kernel {shown(k.release)} < 6.4 silently ignores IBV_ACCESS_RELAXED_ORDERING on VF {names}",
        evidence,
        "Before 6.4, mlx5 enabled RO only when the function's DevCtl RO bit was set - always 0 on a VF - so "
        "NIC->GPU writes stay strictly ordered through the root complex (the upstream series reports "
        "~60% more VF throughput with the fix). Upgrade the "
        f"{where} kernel to >= 6.4 (or a stable kernel with commits ed4b0661cce1/bd4ba605c4a9), or use "
        "MLNX_OFED/DOCA-OFED.",
        "",
    )


def ro_on_mrs(m: MachineInfo) -> Iterable[Finding]:
    """RO-ACCESS-FLAG: where RO decides GDR throughput, say to request it on bulk MRs."""
    if not has_gpu_and_nic(m):
        return
    crosses_rc = any(
        p.path_class in (PathClass.PHB, PathClass.NODE, PathClass.SYS) or not p.reliable
        for p in best_pairs(m)
    )
    if m.virt.is_vm or crosses_rc:
        yield finding(
            "RO-ACCESS-FLAG",
            Severity.INFO,
            "GPU<->NIC traffic here may cross the root complex: request relaxed ordering on bulk MRs",
            [
                ev("virt.is_vm", m.virt.is_vm),
                ev(
                    "closest pairs' path_class",
                    ",".join(sorted({p.path_class.value for p in best_pairs(m) if p.path_class})),
                ),
            ],
            "Register bulk-data MRs with IBV_ACCESS_RELAXED_ORDERING (1<<20; NCCL and UCX do) and keep "
            "flag/signal MRs strictly ordered; verify with `gdrdiag mr-bench --ro-ab`.",
            "",
        )


def platform(m: MachineInfo) -> Iterable[Finding]:
    """RO-PLATFORM: CPUs where missing RO is a known 2-3x loss even on bare metal."""
    if not m.nics:
        return
    k = m.kernel
    name = RO_PLATFORMS.get((k.cpu_vendor, k.cpu_family)) or RO_PLATFORMS.get(
        (k.cpu_vendor, k.cpu_family, k.cpu_model_number)
    )
    if name:
        yield finding(
            "RO-PLATFORM",
            Severity.INFO,
            f"{name}: relaxed ordering matters on this CPU",
            [
                ev("kernel.cpu_vendor", k.cpu_vendor),
                ev("kernel.cpu_family", k.cpu_family),
                ev("kernel.cpu_model_number", k.cpu_model_number),
            ],
            "UCX enables RO by default on this platform; make sure your MRs request it.",
            "",
        )


def gpu_side(m: MachineInfo) -> Iterable[Finding]:
    """RO-GPU-FORCED (driver forces RO on GPU writes) and RO-NROPRPRP (completer limits RO)."""
    if m.kernel.nvidia_params.get("EnablePCIERelaxedOrderingMode", "").strip() == "1":
        yield finding(
            "RO-GPU-FORCED",
            Severity.INFO,
            "the NVIDIA driver forces RO on every GPU outbound write",
            [ev("kernel.nvidia_params.EnablePCIERelaxedOrderingMode", 1)],
            "A tuning knob for GPU->host writes; not needed for NIC->GPU RDMA writes.",
            "",
        )
    for f in gpu_functions(m):
        if f.pcie is not None and f.pcie.no_ro_enabled_pr_pr_passing:
            yield finding(
                "RO-NROPRPRP",
                Severity.INFO,
                f"GPU {f.bdf} sets NROPrPrP: RO posted writes will not pass posted writes there",
                [ev(f"pci[{f.bdf}].pcie.no_ro_enabled_pr_pr_passing", True)],
                "Informational: the RO benefit is limited on this completer.",
                "",
                f.bdf,
            )


RULES = [pf_bit, kernel_honours_ro, ro_on_mrs, platform, gpu_side]
