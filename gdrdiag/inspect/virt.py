"""Virtual machine or not, which hypervisor, and how the IOMMU is set up.

No single signal is reliable (systemd's src/basic/virt.c combines several,
https://github.com/systemd/systemd), so each one seen is recorded with a short label and the
verdict is made from *strong* signals:

- cpu flag:  ``hypervisor`` in /proc/cpuinfo flags (CPUID.1:ECX[31])              strong
- DMI:       DMI vendor strings of a hypervisor (QEMU, KVM, VMware, ...)            strong
             DMI of a cloud vendor, or no DMI at all (Firecracker has none)         hint
- hypervisor: /sys/hypervisor/type, /proc/device-tree/hypervisor/compatible          strong
- PCI bus:   QEMU bridge ids (1b36:0008/000b/000c), virtio (1af4:*)                strong
             GPU/NIC endpoints straight on a root bus with no root port            strong
- NVML:      NVML virtualization mode PASSTHROUGH / VGPU (NVML API reference)       strong
- SR-IOV:    a VF with no physfn link: the VF was assigned to this guest           strong

IOMMU: group count, each group's ``type`` (kernel >= 5.11, Linux
Documentation/ABI/testing/sysfs-kernel-iommu_groups), and the mode of the groups holding GPUs
and NICs.

The H200 Firecracker capture (tests/fixtures/machines/b_gpu_firecracker_h200) shows the
Firecracker cases: no DMI tables, and the GPU straight on bus 0 with no root port.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from gdrdiag.hw.sysfs import SysfsTree
from gdrdiag.model.machine import KernelInfo, PciFunction, VirtInfo

DMI_FILES = ("sys_vendor", "product_name", "board_vendor", "bios_vendor")
VM_DMI = {
    "QEMU": "QEMU/KVM",
    "KVM": "KVM",
    "VMware": "VMware",
    "VMW": "VMware",
    "Xen": "Xen",
    "Bochs": "Bochs",
    "innotek": "VirtualBox",
    "Parallels": "Parallels",
    "BHYVE": "bhyve",
    "Firecracker": "Firecracker",
}
CLOUD_DMI = ("Amazon EC2", "Google", "Microsoft Corporation", "OpenStack", "Alibaba Cloud")
QEMU_BRIDGES = {
    0x0008: "QEMU PCIe host bridge",
    0x000B: "QEMU PCIe expander bridge",
    0x000C: "QEMU PCIe root port",
}
VENDOR_NVIDIA, VENDOR_MELLANOX, VENDOR_VIRTIO, VENDOR_QEMU = 0x10DE, 0x15B3, 0x1AF4, 0x1B36


def is_gpu(f: PciFunction) -> bool:
    """An NVIDIA display/3D controller (class 0x03xxxx)."""
    return f.vendor_id == VENDOR_NVIDIA and f.class_code is not None and (f.class_code >> 16) == 0x03


def is_nic(f: PciFunction) -> bool:
    """A network (0x02xxxx) endpoint from a vendor whose NICs do RDMA, or any InfiniBand one."""
    if f.class_code is None:
        return False
    return ((f.class_code >> 16) == 0x02 and f.vendor_id == VENDOR_MELLANOX) or (f.class_code >> 8) == 0x0207


@dataclass
class _Signals:
    """What the checks found: strong signals (any one means a VM), hints, hypervisor names, unknowns."""

    strong: list[str] = field(default_factory=list)
    hints: list[str] = field(default_factory=list)
    names: list[str] = field(default_factory=list)
    unknown: dict[str, str] = field(default_factory=dict)


def inspect_virt(
    tree: SysfsTree, pci: tuple[PciFunction, ...], kernel: KernelInfo, nvml_modes: dict[str, Optional[str]]
) -> VirtInfo:
    """Collect every signal; ``is_vm`` is True on any strong one, False on real DMI and none."""
    sig = _Signals()
    _cpu_signal(tree, sig)
    dmi_present, dmi_text = _dmi_signals(tree, sig)
    _hypervisor_signals(tree, sig)
    endpoints = [f for f in pci if is_gpu(f) or is_nic(f)]
    flat_pci = _pci_signals(pci, endpoints, nvml_modes, sig)
    cmdline = kernel.cmdline or ""
    if "firecracker" in cmdline.lower():
        sig.names.insert(0, "Firecracker")
        sig.hints.append("kernel command line mentions firecracker")
    if not sig.names and any(f.vendor_id == VENDOR_VIRTIO for f in pci):
        sig.names.append("KVM-based (virtio devices)")
    if sig.strong:
        is_vm: Optional[bool] = True
    elif dmi_present and dmi_text:
        is_vm = False
    else:
        is_vm = None
        sig.unknown["is_vm"] = "no strong signal either way (no DMI and no hypervisor flag)"
    groups = tree.listdir("/sys/kernel/iommu_groups")
    group_types: dict[str, str] = {}
    for g in groups[:4096]:
        t = tree.try_text(f"/sys/kernel/iommu_groups/{g}/type").value
        if t:
            group_types[g] = str(t).strip()[:20]
    return VirtInfo(
        is_vm=is_vm,
        hypervisor=sig.names[0] if (sig.names and is_vm) else None,
        signals=tuple(sig.strong + sig.hints),
        flat_pci=flat_pci,
        dmi_present=dmi_present,
        iommu_groups=len(groups),
        iommu_units=tuple(tree.listdir("/sys/class/iommu")[:64]),
        iommu_mode=iommu_mode(endpoints, len(groups), kernel, tuple(group_types.values())),
        group_types=group_types,
        unknown=sig.unknown,
    )


def _cpu_signal(tree: SysfsTree, sig: _Signals) -> None:
    """The CPU's 'hypervisor' flag in /proc/cpuinfo."""
    cpuinfo = tree.try_text("/proc/cpuinfo")
    if cpuinfo.value is None:
        sig.unknown["cpuinfo"] = cpuinfo.reason or "unreadable"
        return
    flags = next((ln for ln in str(cpuinfo.value).splitlines() if ln.startswith("flags")), "")
    if " hypervisor" in f" {flags.partition(':')[2]} ":
        sig.strong.append("cpu flag: /proc/cpuinfo flags include 'hypervisor'")


def _hypervisor_signals(tree: SysfsTree, sig: _Signals) -> None:
    """/sys/hypervisor/type and a device-tree hypervisor node."""
    hv = tree.try_text("/sys/hypervisor/type").value
    if hv:
        sig.strong.append(f"hypervisor: /sys/hypervisor/type = {str(hv).strip()[:40]}")
        sig.names.append(str(hv).strip()[:40])
    dt = tree.try_text("/proc/device-tree/hypervisor/compatible").value
    if dt:
        sig.strong.append(f"hypervisor: device-tree hypervisor node {str(dt).strip(chr(0))[:40]!r}")


def _dmi_signals(tree: SysfsTree, sig: _Signals) -> tuple[bool, str]:
    """DMI vendor strings (a VM's, or a cloud's, which bare metal shows too); (present, text)."""
    dmi = {k: tree.try_text(f"/sys/class/dmi/id/{k}").value for k in DMI_FILES}
    dmi_present = any(v is not None for v in dmi.values()) or tree.is_dir("/sys/class/dmi/id")
    dmi_text = " ".join(str(v).strip() for v in dmi.values() if v)
    if not dmi_present:
        sig.hints.append(
            "DMI: no DMI tables at all (/sys/class/dmi/id missing; a microVM such as Firecracker)"
        )
        return dmi_present, dmi_text
    for key, name in VM_DMI.items():
        if key in dmi_text:
            sig.strong.append(f"DMI: says {dmi_text[:80]!r}")
            sig.names.append(name)
            return dmi_present, dmi_text
    for key in CLOUD_DMI:
        if key in dmi_text:
            sig.hints.append(f"DMI: cloud vendor {dmi_text[:80]!r} (cloud bare metal shows it too)")
            break
    return dmi_present, dmi_text


def _pci_signals(pci, endpoints, nvml_modes: dict[str, Optional[str]], sig: _Signals) -> Optional[bool]:
    """QEMU bridges, virtio and a flat bus; NVML's virtualization mode; a guest VF; and flat_pci."""
    qemu = sorted(
        {QEMU_BRIDGES[f.device_id] for f in pci if f.vendor_id == VENDOR_QEMU and f.device_id in QEMU_BRIDGES}
    )
    if qemu:
        sig.strong.append(f"PCI bus: {', '.join(qemu)} on the PCI bus")
        sig.names.append("QEMU/KVM")
    virtio = [f.bdf for f in pci if f.vendor_id == VENDOR_VIRTIO]
    if virtio:
        sig.strong.append(f"PCI bus: {len(virtio)} virtio device(s) (1af4:*), e.g. {virtio[0]}")
    flat = [f.bdf for f in endpoints if f.parent_bdf is None and f.sysfs_path]
    if flat:
        sig.strong.append(
            f"PCI bus: GPU/NIC endpoint(s) {', '.join(flat[:4])} sit directly on a root bus (no root port)"
        )
    for bdf, mode in sorted(nvml_modes.items()):
        if mode in ("PASSTHROUGH", "VGPU"):
            sig.strong.append(f"NVML: virtualization mode of {bdf} is {mode}")
            break
    guest_vfs = [f.bdf for f in pci if f.is_vf and not f.physfn]
    if guest_vfs:
        sig.strong.append(f"SR-IOV: VF {guest_vfs[0]} has no physfn link: a VF assigned to this guest")
    return bool(flat) if endpoints else None


def iommu_mode(
    endpoints: list[PciFunction], ngroups: int, kernel: KernelInfo, all_types: tuple[str, ...] = ()
) -> Optional[str]:
    """Off / passthrough / translated / mixed for the GPU and NIC groups.

    Judged from the GPU and NIC groups when they say; otherwise (no GPU or NIC on the PCI bus,
    e.g. a Soft-RoCE guest) from every group's ``type``, which is the kernel's default domain
    type for the whole IOMMU when no group was changed on its own (a vIOMMU in DMA mode made
    the header say ``IOMMU ?`` before).
    """
    if ngroups == 0:
        return "off"
    types = {f.iommu_group_type for f in endpoints if f.iommu_group_type}
    if not types:
        types = {t for t in all_types if t}
    mapped = {"identity": "passthrough", "DMA": "translated", "DMA-FQ": "translated"}
    modes = {mapped.get(t, t) for t in types}
    if len(modes) == 1:
        return modes.pop()
    if len(modes) > 1:
        return "mixed"
    opts = kernel.cmdline_iommu
    if opts.get("iommu") == "pt" or opts.get("iommu.passthrough") in ("1", "on", "y"):
        return "passthrough"
    return None
