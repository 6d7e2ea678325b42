"""Virtualization, SR-IOV, IOMMU and ACS/ATS rules (docs/kb/virt.md).

A VM changes what the registers mean: upstream bridges are virtual, MPS/MRRS are virtualized
by vfio (vfio_pci_config.c), ACS/ATS are decided by the host, and the guest's PCI tree says
nothing about the physical path. On bare metal, ACS request/completion redirect on a switch port
between a GPU and a NIC sends every peer TLP up to the root complex (PCIe Base Spec r5.0 sec. 6.12;
NCCL troubleshooting guide).
"""

from __future__ import annotations

from typing import Iterable

from gdrdiag.diagnose._common import (
    ev,
    finding,
    has_gpu_and_nic,
    is_downstream_facing,
    on_bare_metal,
    shown,
)
from gdrdiag.model.findings import Finding, Severity
from gdrdiag.model.machine import AcsCap, MachineInfo, PathClass

REDIRECT_BITS = ("ReqRedir", "CmpltRedir", "EgressCtrl")


def vm(m: MachineInfo) -> Iterable[Finding]:
    """VIRT-VM: this is a VM; say which signals and what that means for the registers."""
    if m.virt.is_vm:
        gpus = ", ".join(g.bdf for g in m.gpus) or "none"
        yield finding(
            "VIRT-VM",
            Severity.INFO,
            f"virtual machine ({m.virt.hypervisor or 'hypervisor unknown'}); passed-through GPUs: {gpus}",
            list(m.virt.signals),
            "Register values seen here are the guest's view: MPS/MRRS and every upstream bridge are virtual, "
            "ACS/ATS are set on the host. Check the physical path on the host (run gdrdiag inspect there).",
            "",
        )


def no_viommu(m: MachineInfo) -> Iterable[Finding]:
    """VIRT-NO-VIOMMU: a guest with no IOMMU groups - no vIOMMU, so no ATS from the guest."""
    if m.virt.is_vm and m.virt.iommu_groups == 0:
        yield finding(
            "VIRT-NO-VIOMMU",
            Severity.INFO,
            "no IOMMU groups in this guest (no vIOMMU)",
            [ev("virt.iommu_groups", 0), ev("virt.iommu_mode", m.virt.iommu_mode)],
            "Device DMA uses guest-physical addresses translated only by the host IOMMU; the NIC cannot use "
            "ATS from inside the guest. GPU<->NIC peer traffic is then routed through the host root complex "
            "unless the host enables ATS on the NIC and ACS DirectTrans on the path.",
            "",
        )


def flat_topology(m: MachineInfo) -> Iterable[Finding]:
    """VIRT-FLAT-TOPOLOGY: endpoints straight on a guest root bus; NCCL sees PHB."""
    if not (m.virt.is_vm and m.virt.flat_pci):
        return
    classes = sorted({p.path_class.value for p in m.topology if p.path_class})
    sev = Severity.WARN if has_gpu_and_nic(m) else Severity.INFO
    yield finding(
        "VIRT-FLAT-TOPOLOGY",
        sev,
        "the guest PCI tree is flat: GPU/NIC path classes computed here do not describe the hardware",
        [ev("virt.flat_pci", True)] + [ev("topology[].path_class (guest view)", ",".join(classes))]
        if classes
        else [ev("virt.flat_pci", True)],
        "NCCL reads this tree, sees PHB and (default NCCL_NET_GDR_LEVEL=PXB) disables GPUDirect RDMA. Give "
        "NCCL an NCCL_TOPO_FILE that mirrors the host PCI tree, or set NCCL_NET_GDR_LEVEL; or build a nested "
        "QEMU topology (pxb-pcie + root ports + switches) matching the host.",
        "",
    )


def host_acs_ats(m: MachineInfo) -> Iterable[Finding]:
    """VIRT-HOST-ACS-ATS: in a VM with a GPU and a NIC, ACS/ATS must be checked on the host."""
    if not (m.virt.is_vm and has_gpu_and_nic(m)):
        return
    ats_seen = [n.name for n in m.nics if (f := m.function(n.bdf)) and f.ats is not None]
    yield finding(
        "VIRT-HOST-ACS-ATS",
        Severity.INFO,
        "ACS and ATS on the physical GPU<->NIC path are not visible from the guest",
        [ev("nics with an ATS capability visible", ",".join(ats_seen) or "none")],
        "A VM keeps ACS on for isolation, so without ATS every NIC->GPU write is redirected through the root "
        "complex and IOMMU. On the host: enable ATS on the NIC (mlxconfig ATS_ENABLED=1, reboot) and ACS "
        "DirectTrans+ on the switch/root ports of the GPU<->NIC path only; keep RO on the MRs as well.",
        "",
    )


def acs_redirect(m: MachineInfo) -> Iterable[Finding]:
    """ACS-REDIRECT: bare-metal GPU<->NIC path whose switch ports redirect peer requests (ACS-01).

    One finding per GPU<->NIC path, naming every redirecting bridge on it: one cause per path, so
    that duplicates do not push the cause of a measured loss down the ranking.
    """
    if m.virt.is_vm:
        return
    for p in m.topology:
        if p.path_class not in (PathClass.PIX, PathClass.PXB):
            continue  # PHB and beyond cross the root complex anyway (GDR-PATH-CLASS)
        nic = m.function(p.nic_bdf)
        ats_on = bool(nic and nic.ats and nic.ats.enabled)
        redirecting: list[tuple[str, list[str], AcsCap]] = []
        for b in p.bridges:
            f = m.function(b)
            if f is None or f.acs is None or not is_downstream_facing(f):
                continue
            on = [x for x in REDIRECT_BITS if x in f.acs.ctl_flags]
            if not on:
                continue
            if ats_on and "DirectTrans" in f.acs.ctl_flags:
                continue  # translated requests route peer-to-peer (ATS-02)
            redirecting.append((b, on, f.acs))
        if not redirecting:
            continue
        bridges = ", ".join(f"{b} ({'/'.join(on)})" for b, on, _ in redirecting)
        evidence = [
            ev(f"pci[{b}].acs.ctl", f"0x{acs.ctl:04x} {' '.join(acs.ctl_flags)}") for b, _, acs in redirecting
        ]
        evidence += [
            ev(f"topology[{p.gpu_bdf},{p.nic}].path_class", p.path_class.value if p.path_class else None),
            ev(f"pci[{p.nic_bdf}].ats.enabled", nic.ats.enabled if nic and nic.ats else None),
        ]
        setpci = "; ".join(f"setpci -s {b} ECAP_ACS+0x6.w=0000" for b, _, _ in redirecting)
        yield finding(
            "ACS-REDIRECT",
            Severity.FAIL,
            f"ACS redirect on {bridges} sends {p.gpu_bdf} <-> {p.nic} peer traffic to the root complex",
            evidence,
            f"Bare metal: disable ACS redirect on the GPU/NIC switch ports - BIOS 'ACS disable' or VT-d off, "
            f"kernel pci=disable_acs_redir={';'.join(b for b, _, _ in redirecting)}, or `{setpci}` (until "
            "reboot). The kernel sets SV|RR|CR|UF when an IOMMU is active; iommu=pt alone does not "
            "clear them.",
            "",
            f"{p.gpu_bdf}<->{p.nic}",
        )


def iommu_translated(m: MachineInfo) -> Iterable[Finding]:
    """IOMMU-TRANSLATED: bare-metal GPU/NIC in DMA-translated IOMMU groups."""
    if not on_bare_metal(m):
        return
    devs = [(g.bdf, m.function(g.bdf)) for g in m.gpus] + [(n.name, m.function(n.bdf)) for n in m.nics]
    bad = [(name, f) for name, f in devs if f and f.iommu_group_type in ("DMA", "DMA-FQ")]
    if bad:
        yield finding(
            "IOMMU-TRANSLATED",
            Severity.WARN,
            "GPU/NIC IOMMU groups translate DMA (not identity/passthrough)",
            [ev(f"pci[{f.bdf}].iommu_group_type", f.iommu_group_type) for _, f in bad[:6]]
            + [ev("kernel.cmdline_iommu", m.kernel.cmdline_iommu or "{}")],
            "NVIDIA supports GPUDirect RDMA peer mappings only with the IOMMU off or in "
            "1:1/pass-through mode: "
            "boot with iommu=pt (intel_iommu=on iommu=pt / amd_iommu=on iommu=pt) or disable it.",
            "",
        )


def sriov_roles(m: MachineInfo) -> Iterable[Finding]:
    """SRIOV-VF and SRIOV-SHARED-LINK: what a VF or a shared PF link means for measurements."""
    for n in m.nics:
        if n.is_vf:
            f = m.function(n.bdf)
            yield finding(
                "SRIOV-VF",
                Severity.INFO,
                f"{n.name} is an SR-IOV virtual function ({n.model or 'VF'})",
                [
                    ev(f"pci[{shown(n.bdf)}].vf_evidence", f.vf_evidence if f else None),
                    ev(f"nics[{n.name}].pf_bdf", n.pf_bdf),
                ],
                "A VF's link is its PF's physical link (shared with the PF's other VFs); "
                "its RO/ExtTag/MPS/MRRS "
                "bits are RsvdP and read 0, and PCIe counters exist only on the PF (host).",
                "",
                n.name,
            )
        if n.shares_pcie_link_with:
            yield finding(
                "SRIOV-SHARED-LINK",
                Severity.INFO,
                f"{n.name} shares one PCIe link with {', '.join(n.shares_pcie_link_with)}",
                [
                    ev(f"nics[{n.name}].shares_pcie_link_with", ",".join(n.shares_pcie_link_with)),
                    ev(
                        f"nics[{n.name}].link.max_raw_gbytes_per_s",
                        n.link.max_raw_gbytes_per_s if n.link else None,
                    ),
                ],
                "Running both ports (or several VFs) at once splits this link's bandwidth; "
                "account for it when "
                "comparing per-port numbers against line rate.",
                "",
                n.name,
            )


RULES = [vm, no_viommu, flat_topology, host_acs_ats, acs_redirect, iommu_translated, sriov_roles]
