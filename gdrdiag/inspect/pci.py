"""Scan the PCI functions under /sys/bus/pci/devices into ``PciFunction`` records.

For each function: identity (vendor/device/class), its real place in the tree (the realpath
chain topology is computed from, as NCCL's src/graph/xml.cc does), NUMA node, IOMMU group,
SR-IOV role, BARs, AER counters, the link, and - where config space is readable - the decoded
registers.

Without root only the first 64 config bytes are readable (Linux drivers/pci/pci-sysfs.c), so
the link falls back to the sysfs text attributes (``current_link_speed`` ...), and every register
fact is None with the reason "needs root" in ``unknown`` (docs/inspect.md, PCIE-NEEDS-ROOT).
"""

from __future__ import annotations

import re
from typing import Optional

from gdrdiag.hw import pciconfig
from gdrdiag.hw.sysfs import SysfsError, SysfsTree
from gdrdiag.model.machine import Bar, PcieLink, PciFunction
from gdrdiag.units import pcie_raw_gbytes_per_s

BDF_RE = re.compile(r"^[0-9a-f]{4,8}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]$")
HOST_BRIDGE_RE = re.compile(r"^pci[0-9a-f]{4,8}:[0-9a-f]{2}$")
SPEED_RE = re.compile(r"([0-9]+(?:\.[0-9]+)?)\s*GT/s")
GEN_OF_SPEED = {2.5: 1, 5.0: 2, 8.0: 3, 16.0: 4, 32.0: 5, 64.0: 6}
NEEDS_ROOT = (
    "needs root: config space beyond 64 bytes is readable only with CAP_SYS_ADMIN "
    "(Linux drivers/pci/pci-sysfs.c)"
)

# SR-IOV virtual functions recognisable by ID inside a guest, where no physfn link exists
# (mlx5_core_pci_table in Linux drivers/net/ethernet/mellanox/mlx5/core/main.c).
VF_DEVICE_IDS = {
    (0x15B3, 0x1016): "ConnectX-4 Lx VF",
    (0x15B3, 0x1018): "ConnectX-5 VF",
    (0x15B3, 0x101A): "ConnectX-5 Ex VF",
    (0x15B3, 0x101C): "ConnectX-6 VF",
    (0x15B3, 0x101E): "ConnectX Family mlx5Gen Virtual Function",
    (0x15B3, 0xA2D3): "BlueField VF",
}

# IORESOURCE_* flags in the third column of sysfs ``resource`` (include/linux/ioport.h).
IORESOURCE_IO, IORESOURCE_MEM, IORESOURCE_PREFETCH, IORESOURCE_MEM_64 = 0x100, 0x200, 0x2000, 0x100000


def parse_speed(text: Optional[str]) -> Optional[float]:
    """``"32.0 GT/s PCIe"`` -> 32.0; ``"Unknown"`` or garbage -> None."""
    m = SPEED_RE.search(text or "")
    if not m:
        return None
    try:
        value = float(m.group(1))
    except ValueError:
        return None
    return value if value in GEN_OF_SPEED else None


def raw_gbps(speed: Optional[float], width: Optional[int]) -> Optional[float]:
    """Encoded line rate in GB/s per direction for a speed/width pair (units.py decides)."""
    if speed is None or not width or speed not in GEN_OF_SPEED:
        return None
    return round(pcie_raw_gbytes_per_s(GEN_OF_SPEED[speed], width), 2)


def make_link(speed, width, max_speed, max_width, source: str, unknown: Optional[dict] = None) -> PcieLink:
    """A ``PcieLink`` with lspci's "(downgraded)" comparison made once, here."""
    width = width or None
    max_width = max_width or None
    return PcieLink(
        speed_gts=speed,
        width=width,
        max_speed_gts=max_speed,
        max_width=max_width,
        source=source,
        speed_downgraded=None if speed is None or max_speed is None else speed < max_speed,
        width_downgraded=None if width is None or max_width is None else width < max_width,
        raw_gbytes_per_s=raw_gbps(speed, width),
        max_raw_gbytes_per_s=raw_gbps(max_speed, max_width),
        unknown=dict(unknown or {}),
    )


def _sysfs_link(tree: SysfsTree, dev: str) -> Optional[PcieLink]:
    """Link from the text attributes every user may read (the fallback when config space is unreadable)."""
    cur = tree.try_text(f"{dev}/current_link_speed")
    if cur.value is None and not tree.exists(f"{dev}/max_link_speed"):
        return None
    width = tree.try_int(f"{dev}/current_link_width", 10)
    mspeed = tree.try_text(f"{dev}/max_link_speed")
    mwidth = tree.try_int(f"{dev}/max_link_width", 10)
    unknown = {
        k: s.reason
        for k, s in (("speed", cur), ("width", width), ("max_speed", mspeed), ("max_width", mwidth))
        if s.value is None and s.reason
    }
    return make_link(
        parse_speed(cur.value), width.value, parse_speed(mspeed.value), mwidth.value, "sysfs", unknown
    )


def _bars(text: Optional[str]) -> tuple[Bar, ...]:
    bars = []
    for i, line in enumerate((text or "").splitlines()[:13]):
        parts = line.split()
        if len(parts) != 3 or any(len(p) > 18 for p in parts):  # 0x + 16 hex digits: 64-bit addresses
            continue
        try:
            start, end, flags = (int(p, 16) for p in parts)
        except ValueError:
            continue
        if end <= start or end == 0:
            continue
        bars.append(
            Bar(
                index=i,
                size=end - start + 1,
                is_io=bool(flags & IORESOURCE_IO),
                is_64bit=bool(flags & IORESOURCE_MEM_64),
                prefetchable=bool(flags & IORESOURCE_PREFETCH),
            )
        )
    return tuple(bars)


def _aer_counters(tree: SysfsTree, dev: str) -> dict[str, int]:
    """``aer_dev_correctable`` etc.: ``"correctable.BadTLP" -> n``.

    Kernel >= 4.19 (Linux Documentation/ABI/testing/sysfs-bus-pci-devices-aer_stats).
    """
    out: dict[str, int] = {}
    for kind in ("correctable", "nonfatal", "fatal"):
        text = tree.try_text(f"{dev}/aer_dev_{kind}").value
        for line in (text or "").splitlines():
            parts = line.split()
            if len(parts) == 2 and parts[1].isdigit() and len(parts[1]) < 19:
                out[f"{kind}.{parts[0]}"] = int(parts[1])
    return out


def _chain(real: Optional[str]) -> tuple[str, Optional[str], str]:
    """(host bridge, parent BDF, sysfs path) from ``/sys/devices/pci0000:00/0000:00:01.0/...``."""
    if not real:
        return "", None, ""
    parts = real.strip("/").split("/")
    host = next((p for p in parts if HOST_BRIDGE_RE.match(p)), "")
    bdfs = [p for p in parts if BDF_RE.match(p)]
    parent = bdfs[-2] if len(bdfs) >= 2 else None
    return host, parent, real


def read_function(tree: SysfsTree, bdf: str) -> PciFunction:
    """Everything about one function; optional facts that fail become ``unknown`` entries."""
    dev = f"/sys/bus/pci/devices/{bdf}"
    unknown: dict[str, str] = {}

    def soft_int(name: str, base: int = 0) -> Optional[int]:
        s = tree.try_int(f"{dev}/{name}", base)
        if s.value is None:
            unknown[name] = s.reason or "unreadable"
        return s.value  # type: ignore[return-value]

    vendor, device, klass = soft_int("vendor", 16), soft_int("device", 16), soft_int("class", 16)
    host, parent, real = _chain(tree.realpath(dev))
    numa = soft_int("numa_node", 10)
    if numa is not None and numa < 0:
        unknown["numa_node"] = f"kernel reports {numa}: no NUMA affinity (one node, or a VM)"
        numa = None

    group_n, group_type, group_size = _iommu_group(tree, dev, unknown)

    physfn, total_vfs, num_vfs, virtfns, is_vf, evidence = _sriov_role(tree, dev, vendor, device)

    regs, cfg_bytes, cfg_size, link = _registers_and_link(tree, bdf, dev, unknown)

    klass_ok = klass if klass is not None else 0
    return PciFunction(
        bdf=bdf,
        vendor_id=vendor,
        device_id=device,
        class_code=klass,
        subsystem_vendor_id=tree.try_int(f"{dev}/subsystem_vendor", 16).value,  # type: ignore[arg-type]
        subsystem_device_id=tree.try_int(f"{dev}/subsystem_device", 16).value,  # type: ignore[arg-type]
        revision=tree.try_int(f"{dev}/revision", 16).value,  # type: ignore[arg-type]
        driver=tree.link_name(f"{dev}/driver"),
        sysfs_path=real,
        parent_bdf=parent,
        host_bridge=host,
        is_bridge=(klass_ok >> 8) == 0x0604,
        numa_node=numa,
        local_cpulist=tree.try_text(f"{dev}/local_cpulist").value,  # type: ignore[arg-type]
        iommu_group=group_n,
        iommu_group_type=group_type,
        iommu_group_size=group_size,
        is_vf=is_vf,
        vf_evidence=evidence,
        physfn=physfn,
        virtfns=virtfns,
        sriov_totalvfs=total_vfs,
        sriov_numvfs=num_vfs,  # type: ignore[arg-type]
        link=link,
        config_bytes=cfg_bytes,
        config_size=cfg_size,
        caps=regs.get("caps", ()),
        cap_problems=regs.get("problems", ()),
        pcie=regs.get("pcie"),
        acs=regs.get("acs"),
        ats=regs.get("ats"),
        sriov=regs.get("sriov"),
        aer=regs.get("aer"),
        rebar=regs.get("rebar"),
        aer_counters=_aer_counters(tree, dev),
        bars=_bars(tree.try_text(f"{dev}/resource").value),  # type: ignore[arg-type]
        unknown=unknown,
    )


def _iommu_group(tree: SysfsTree, dev: str, unknown: dict[str, str]) -> tuple:
    """(group number, type, size) of a function's IOMMU group; None with a reason in ``unknown``."""
    group = tree.link_name(f"{dev}/iommu_group")
    group_n = int(group) if group and group.isdigit() else None
    group_type = group_size = None
    if group_n is not None:
        gt = tree.try_text(f"/sys/kernel/iommu_groups/{group_n}/type")
        group_type = gt.value.strip() if gt.value else None  # type: ignore[union-attr]
        if group_type is None:
            # kernel < 5.11 has no type (Linux Documentation/ABI/testing/sysfs-kernel-iommu_groups)
            unknown["iommu_group_type"] = gt.reason or "unreadable"
        group_size = len(tree.listdir(f"/sys/kernel/iommu_groups/{group_n}/devices")) or None
    else:
        unknown["iommu_group"] = "no iommu_group link: IOMMU off, or no vIOMMU in a VM"
    return group_n, group_type, group_size


def _sriov_role(tree: SysfsTree, dev: str, vendor: Optional[int], device: Optional[int]) -> tuple:
    """(physfn, totalvfs, numvfs, virtfns, is_vf, evidence): the SR-IOV role (physfn link or VF device id)."""
    physfn = tree.link_name(f"{dev}/physfn")
    total_vfs = tree.try_int(f"{dev}/sriov_totalvfs", 10).value
    num_vfs = tree.try_int(f"{dev}/sriov_numvfs", 10).value
    virtfns = tuple(
        v for v in (tree.link_name(f"{dev}/virtfn{i}") for i in range(min(int(num_vfs or 0), 256))) if v
    )
    if physfn:
        is_vf, evidence = True, f"physfn -> {physfn}"
    elif vendor is not None and (vendor, device) in VF_DEVICE_IDS:
        is_vf, evidence = True, f"device id {vendor:04x}:{device:04x} is a {VF_DEVICE_IDS[(vendor, device)]}"
    elif total_vfs is not None:
        is_vf, evidence = False, f"PF: sriov_totalvfs = {total_vfs}"
    else:
        is_vf, evidence = False, "no physfn link and not a known VF device id"
    return physfn, total_vfs, num_vfs, virtfns, is_vf, evidence


def _registers_and_link(tree: SysfsTree, bdf: str, dev: str, unknown: dict[str, str]) -> tuple:
    """(decoded registers, readable bytes, file size, link): link from LnkSta/LnkCap, else sysfs."""
    regs: dict = {}
    cfg_bytes, cfg_size = 0, None
    try:
        cfg = pciconfig.read_config(tree, bdf)
        cfg_bytes, cfg_size = cfg.readable, cfg.size
        regs = pciconfig.decode_all(cfg)
        if cfg.truncated_by_privilege:
            unknown["registers"] = NEEDS_ROOT
    except SysfsError as exc:
        unknown["registers"] = str(exc)
    link = None
    reg_link = regs.get("link")
    if reg_link is not None:
        link = make_link(
            reg_link["speed_gts"],
            reg_link["width"],
            reg_link["max_speed_gts"],
            reg_link["max_width"],
            "registers",
        )
    if link is None:
        link = _sysfs_link(tree, dev)
    if link is None:
        unknown["link"] = "no PCIe link attributes (conventional PCI, or a virtual device)"
    return regs, cfg_bytes, cfg_size, link


def scan(tree: SysfsTree) -> tuple[tuple[PciFunction, ...], dict[str, str]]:
    """Every function under /sys/bus/pci/devices (required: raises if sysfs is not there)."""
    root = "/sys/bus/pci/devices"
    if not tree.is_dir(root):
        raise SysfsError(f"{root} is missing: is sysfs mounted (or is this a gdrdiag bundle)?")
    unknown: dict[str, str] = {}
    out = []
    for name in tree.listdir(root):
        if not BDF_RE.match(name):
            unknown[f"pci.{name[:40]}"] = "not a PCI address; skipped"
            continue
        out.append(read_function(tree, name))
    return tuple(out), unknown
