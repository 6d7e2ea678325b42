#!/usr/bin/env python3
"""Build the synthetic machine fixtures under tests/fixtures/machines/ (reproducibly).

Each fixture is an unpacked gdrdiag bundle - ``meta.json``, ``facts/{cuda,nvml,verbs}.json``
and ``fs/`` - holding only the files ``gdrdiag inspect`` reads, laid out exactly as the kernel
exposes them: ``/sys/bus/pci/devices/<BDF>`` symlinks into ``/sys/devices/pciDDDD:BB/...``
chains, 4096-byte ``config`` files (a root capture) with real capability chains and register
values, sysfs text attributes in the kernel's formats (``0x10de``, ``32.0 GT/s PCIe``, 13-line
``resource``), ``/sys/class/infiniband`` links, IOMMU groups, /proc files.

Where the values come from
--------------------------
- Register layouts and bit positions: Linux ``include/uapi/linux/pci_regs.h``, pciutils
  (``lib/header.h``, ``ls-caps.c``, ``ls-ecaps.c``; https://github.com/pciutils/pciutils).
- Capability offsets of H100 and ConnectX-7: as public ``lspci -vvv`` dumps of those parts
  show them (H100: PM 0x60, MSI 0x68, Express 0x78, MSI-X 0xc8; ext 0x100 VC, 0x258 L1SS,
  0x128 PWR, 0x420 AER, 0x600 VSEC, 0x900 SecPCIe, 0xbb0 ReBAR, 0xbcc SR-IOV, 0xc14 ARI ...;
  CX-7: Express 0x60 -> VPD 0x48 -> MSI-X 0x9c -> VNDR 0xc0 -> PM 0x40; ext AER 0x100, ARI 0x150,
  SR-IOV 0x180, SecPCIe 0x1c0, ACS 0x230, ... ATS 0x480). Switch and
  root-port chains are representative of those parts, not copied from one dump.
- H200 microVM values: those seen on the project's H200 Firecracker VM (fixture b_synth, built
  before the capture existed; the real capture from the GPU machine is committed beside it as
  b_gpu_firecracker_h200, and tests/unit/test_virt.py checks both, docs/inspect.md).
- A QEMU guest with devices on pcie.0 sees them as Root-Complex-integrated endpoints with the
  link registers zeroed (QEMU hw/vfio/pci.c vfio_setup_pcie_cap); a VF's DevCtl reads 0
  (RsvdP, PCIe Base Spec r5.0 sec. 9.3.5).

Run: ``python3 scripts/make_fixture_machines.py`` (rewrites the synthetic fixtures only; the
captured ones - a_dev_firecracker and the GPU machine's - are never touched).
"""

from __future__ import annotations

import json
import os
import shutil
import struct
from dataclasses import dataclass, field
from typing import Optional

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "fixtures", "machines")
GEN = {1: 2.5, 2: 5.0, 3: 8.0, 4: 16.0, 5: 32.0}
GiB, MiB = 1 << 30, 1 << 20

# ---------------------------------------------------------------------------------------------
# Config space
# ---------------------------------------------------------------------------------------------

PT_ENDPOINT, PT_ROOT, PT_USP, PT_DSP, PT_RCIEP = 0x0, 0x4, 0x5, 0x6, 0x9


@dataclass
class Exp:
    """PCI Express capability register values (fields: PCIe Base Spec r5.0 sec. 7.5.3, PCI_EXP_*)."""

    port_type: int = PT_ENDPOINT
    mps_sup: int = 512
    ext_tag_sup: bool = True
    flr: bool = True
    ro: bool = True
    ext_tag: bool = True
    no_snoop: bool = False
    mps: int = 256
    mrrs: int = 512
    max_gen: int = 5
    max_width: int = 16
    gen: int = 5
    width: int = 16
    rcb128: bool = False
    nroprprp: bool = False
    tag10: bool = True
    tag10_en: bool = False
    atomics: bool = False
    zero_link: bool = False  # QEMU RCiEP conversion clears LNK* registers (hw/vfio/pci.c)
    vf: bool = False  # VF: DevCtl fields are RsvdP and read 0 (PCIe Base Spec r5.0 sec. 9.3.5)


def _code(nbytes: int) -> int:
    return {128: 0, 256: 1, 512: 2, 1024: 3, 2048: 4, 4096: 5}[nbytes]


class Config:
    """A 4096-byte config space with standard and extended capability chains."""

    def __init__(
        self,
        vendor: int,
        device: int,
        klass: int,
        rev: int = 0,
        header: int = 0,
        subsys: tuple[int, int] = (0, 0),
        size: int = 4096,
    ):
        self.b = bytearray(size)
        self.w16(0x00, vendor)
        self.w16(0x02, device)
        self.w16(0x04, 0x0546 if header == 0 else 0x0547)  # Mem, BusMaster, Parity, SERR
        self.w16(0x06, 0x0010)  # capability list present
        self.b[0x08] = rev
        self.b[0x09], self.b[0x0A], self.b[0x0B] = klass & 0xFF, (klass >> 8) & 0xFF, klass >> 16
        self.b[0x0E] = header
        if header == 0:
            self.w16(0x2C, subsys[0])
            self.w16(0x2E, subsys[1])

    def w8(self, off: int, v: int) -> None:
        self.b[off] = v & 0xFF

    def w16(self, off: int, v: int) -> None:
        struct.pack_into("<H", self.b, off, v & 0xFFFF)

    def w32(self, off: int, v: int) -> None:
        struct.pack_into("<I", self.b, off, v & 0xFFFFFFFF)

    def bridge_buses(self, primary: int, secondary: int, subordinate: int) -> None:
        self.b[0x18], self.b[0x19], self.b[0x1A] = primary, secondary, subordinate

    def std_caps(self, caps: list[tuple[int, int, Optional[Exp]]]) -> None:
        """caps: (offset, cap id, Exp for ID 0x10) in chain order."""
        self.w8(0x34, caps[0][0] if caps else 0)
        for i, (off, cid, exp) in enumerate(caps):
            nxt = caps[i + 1][0] if i + 1 < len(caps) else 0
            self.w8(off, cid)
            self.w8(off + 1, nxt)
            if cid == 0x01:  # PM v3
                self.w16(off + 2, 0x0003)
                self.w16(off + 4, 0x0008)
            elif cid == 0x05:  # MSI, 64-bit
                self.w16(off + 2, 0x0080)
            elif cid == 0x11:  # MSI-X
                self.w16(off + 2, 0x8000 | 63)
            elif cid == 0x09:
                self.w8(off + 2, 0x14)
            elif cid == 0x10 and exp is not None:
                self._exp(off, exp)

    def _exp(self, base: int, e: Exp) -> None:
        flags = 0x2 | (e.port_type << 4) | (0x100 if e.port_type in (PT_ROOT, PT_DSP) else 0)
        self.w16(base + 0x02, flags)
        devcap = _code(e.mps_sup) | (0x20 if e.ext_tag_sup else 0) | 0x8000 | (0x10000000 if e.flr else 0)
        self.w32(base + 0x04, devcap)
        devctl = (
            0
            if e.vf
            else (
                0x0006
                | (0x10 if e.ro else 0)
                | (_code(e.mps) << 5)
                | (0x100 if e.ext_tag else 0)
                | (0x800 if e.no_snoop else 0)
                | (_code(e.mrrs) << 12)
            )
        )
        self.w16(base + 0x08, devctl)
        if not e.zero_link:
            lnkcap = (
                e.max_gen
                | (e.max_width << 4)
                | (0x3 << 10)
                | (0x00400000 if e.port_type in (PT_ROOT, PT_DSP) else 0)
            )
            self.w32(base + 0x0C, lnkcap)
            self.w16(base + 0x10, 0x0008 if e.rcb128 else 0x0000)
            lnksta = e.gen | (e.width << 4) | 0x1000 | (0x2000 if e.port_type in (PT_ROOT, PT_DSP) else 0)
            self.w16(base + 0x12, lnksta)
            self.w32(base + 0x2C, sum(1 << g for g in range(1, e.max_gen + 1)))  # LnkCap2 speed vector
            self.w16(base + 0x30, e.max_gen)  # LnkCtl2 target speed
        devcap2 = (
            0x1F
            | 0x800
            | (0x400 if e.nroprprp else 0)
            | (0x30000 if e.tag10 else 0)
            | (0x380 if e.atomics else 0)
        )
        self.w32(base + 0x24, devcap2)
        self.w16(base + 0x28, (0x1000 if e.tag10_en and not e.vf else 0) | (0x400 if not e.vf else 0))

    def ext_caps(self, caps: list[tuple[int, int, int, dict]]) -> None:
        """caps: (offset, ext id, version, fields) in chain order; fields = {rel offset: (width, value)}."""
        for i, (off, cid, ver, fields) in enumerate(caps):
            nxt = caps[i + 1][0] if i + 1 < len(caps) else 0
            self.w32(off, cid | (ver << 16) | (nxt << 20))
            for rel, (width, value) in fields.items():
                {1: self.w8, 2: self.w16, 4: self.w32}[width](off + rel, value)


def acs(cap: int, ctl: int) -> dict:
    return {0x04: (2, cap), 0x06: (2, ctl)}


def ats(enabled: bool, stu: int = 0) -> dict:
    return {0x04: (2, 0x0020), 0x06: (2, (0x8000 if enabled else 0) | stu)}


def sriov(total: int, num: int, vf_did: int, offset: int = 1, stride: int = 1) -> dict:
    return {
        0x08: (2, (0x19 if num else 0x10)),
        0x0C: (2, total),
        0x0E: (2, total),
        0x10: (2, num),
        0x14: (2, offset),
        0x16: (2, stride),
        0x1A: (2, vf_did),
        0x1C: (4, 0x553),
        0x20: (4, 1),
    }


def aer() -> dict:
    return {0x0C: (4, 0x00462030), 0x14: (4, 0x00002000)}


def rebar(bar: int, size_log2_mib: int, supported_mask: int) -> dict:
    return {0x04: (4, supported_mask << 4), 0x08: (4, bar | (1 << 5) | (size_log2_mib << 8))}


# ---------------------------------------------------------------------------------------------
# Device templates (capability layouts)
# ---------------------------------------------------------------------------------------------


def h100_config(device: int, exp: Exp, hidden_ids: bool = False, vm_p2p_cap: bool = False) -> Config:
    """H100/H200 layout; ``hidden_ids`` zeroes some ext-cap IDs as the H200 Firecracker VM shows."""
    c = Config(0x10DE, device, 0x030200, rev=0xA1, subsys=(0x10DE, 0x16C1))
    std = [(0x60, 0x01, None), (0x68, 0x05, None), (0x78, 0x10, exp)]
    if vm_p2p_cap:
        std.append((0xB4, 0x09, None))
    std.append((0xC8, 0x11, None))
    c.std_caps(std)
    if hidden_ids:  # as b_gpu_firecracker_h200: LTR, AER, VSEC, PWR, DSN plus several with ID 0
        c.ext_caps(
            [
                (0x100, 0x0000, 1, {}),
                (0x250, 0x0018, 1, {}),
                (0x258, 0x0000, 1, {}),
                (0x128, 0x0004, 1, {}),
                (0x420, 0x0001, 2, aer()),
                (0x600, 0x000B, 1, {}),
                (0x900, 0x0000, 1, {}),
                (0xBB0, 0x0000, 1, {}),
                (0xC1C, 0x0000, 1, {}),
                (0xD00, 0x0000, 1, {}),
                (0xE00, 0x0003, 1, {}),
            ]
        )
    else:
        c.ext_caps(
            [
                (0x100, 0x0002, 1, {}),
                (0x258, 0x001E, 1, {}),
                (0x128, 0x0004, 1, {}),
                (0x420, 0x0001, 2, aer()),
                (0x600, 0x000B, 1, {}),
                (0x900, 0x0019, 1, {}),
                (0xBB0, 0x0015, 1, rebar(1, 17, 0x3FFFF)),
                (0xBCC, 0x0010, 1, sriov(32, 0, device + 1)),
                (0xC14, 0x000E, 1, {}),
                (0xC1C, 0x0026, 1, {}),
                (0xD00, 0x0027, 1, {}),
                (0xE00, 0x0025, 1, {}),
            ]
        )
    return c


def cx7_pf_config(
    exp: Exp, ats_on: bool, total_vfs: int = 16, num_vfs: int = 0, device: int = 0x1021
) -> Config:
    """ConnectX-7 PF layout (ATS at 0x480 as lspci -vvv of a ConnectX-7 shows it)."""
    c = Config(0x15B3, device, 0x020700, rev=0, subsys=(0x15B3, 0x0041))
    c.std_caps(
        [(0x60, 0x10, exp), (0x48, 0x03, None), (0x9C, 0x11, None), (0xC0, 0x09, None), (0x40, 0x01, None)]
    )
    c.ext_caps(
        [
            (0x100, 0x0001, 1, aer()),
            (0x150, 0x000E, 1, {}),
            (0x180, 0x0010, 1, sriov(total_vfs, num_vfs, 0x101E)),
            (0x1C0, 0x0019, 1, {}),
            (0x230, 0x000D, 1, acs(0x005F, 0)),
            (0x320, 0x0027, 1, {}),
            (0x370, 0x0026, 1, {}),
            (0x3B0, 0x002A, 1, {}),
            (0x420, 0x0025, 1, {}),
            (0x480, 0x000F, 1, ats(ats_on)),
        ]
    )
    return c


def cx7_vf_guest_config() -> Config:
    """A CX-7 VF (15b3:101e) as a QEMU guest sees it on pcie.0: RCiEP, no link, no ACS/ATS."""
    c = Config(0x15B3, 0x101E, 0x020700, rev=0, subsys=(0x15B3, 0x0041))
    c.std_caps(
        [(0x60, 0x10, Exp(port_type=PT_RCIEP, vf=True, zero_link=True, ext_tag_sup=True)), (0x9C, 0x11, None)]
    )
    c.ext_caps([(0x100, 0x0001, 1, aer())])
    return c


def bridge_config(
    vendor: int, device: int, exp: Exp, buses: tuple[int, int, int], acs_ctl: Optional[int]
) -> Config:
    """Root port or switch port: PM, MSI, Express, SSVID; ext AER, (ACS), SecPCIe."""
    c = Config(vendor, device, 0x060400, header=0x01)
    c.bridge_buses(*buses)
    c.std_caps([(0x40, 0x01, None), (0x48, 0x05, None), (0x68, 0x10, exp), (0xA4, 0x0D, None)])
    ext = [(0x100, 0x0001, 2, aer())]
    if acs_ctl is not None:
        ext.append((0x148, 0x000D, 1, acs(0x005F, acs_ctl)))
    ext.append((0x1F8, 0x0019, 1, {}))
    c.ext_caps(ext)
    return c


def plain_config(vendor: int, device: int, klass: int, size: int = 256) -> Config:
    """A conventional device (host bridge, ISA, virtio) with no capabilities."""
    c = Config(vendor, device, klass, size=size)
    c.w16(0x06, 0)
    return c


# ---------------------------------------------------------------------------------------------
# Tree writer
# ---------------------------------------------------------------------------------------------


@dataclass
class Dev:
    bdf: str
    cfg: Config
    parent: Optional[str]  # parent BDF, None = root bus
    host: str  # "pci0000:15"
    driver: Optional[str] = None
    numa: int = 0
    cpus: str = "0-55"
    bars: list = field(default_factory=list)  # (index, size, flags)
    iommu_group: Optional[int] = None
    link_text: Optional[tuple] = None  # (cur speed str, cur width, max speed str, max width)
    extra: dict = field(default_factory=dict)  # file name -> text
    links: dict = field(default_factory=dict)  # link name -> target relative to the device dir
    infiniband: Optional[str] = None
    netdev: Optional[str] = None


class Machine:
    def __init__(self, name: str):
        self.name = name
        self.root = os.path.join(OUT, name)
        self.fs = os.path.join(self.root, "fs")
        self.devs: dict[str, Dev] = {}
        self.group_types: dict[int, str] = {}
        if os.path.exists(self.root):
            shutil.rmtree(self.root)
        os.makedirs(self.fs)

    def path(self, p: str) -> str:
        return os.path.join(self.fs, p.lstrip("/"))

    def file(self, p: str, content) -> None:
        full = self.path(p)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "wb") as fh:
            fh.write(content if isinstance(content, bytes) else content.encode())

    def link(self, p: str, target: str) -> None:
        full = self.path(p)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        if os.path.lexists(full):
            os.unlink(full)
        os.symlink(target, full)

    def add(self, dev: Dev) -> Dev:
        self.devs[dev.bdf] = dev
        return dev

    def devpath(self, bdf: str) -> str:
        chain = []
        cur: Optional[str] = bdf
        while cur:
            chain.append(cur)
            cur = self.devs[cur].parent
        return f"/sys/devices/{self.devs[bdf].host}/" + "/".join(reversed(chain))

    def write(self, cuda: dict, nvml: dict, verbs: dict, files: dict, euid: int = 0) -> None:
        for bdf, d in self.devs.items():
            dp = self.devpath(bdf)
            depth = dp.count("/") - 1  # from dp up to /
            up = "../" * depth
            self.link(f"/sys/bus/pci/devices/{bdf}", f"../../..{dp[len('/sys') :]}")
            c = d.cfg
            self.file(f"{dp}/config", bytes(c.b))
            vendor, device = struct.unpack_from("<HH", c.b, 0)
            klass = c.b[0x0B] << 16 | c.b[0x0A] << 8 | c.b[0x09]
            self.file(f"{dp}/vendor", f"0x{vendor:04x}\n")
            self.file(f"{dp}/device", f"0x{device:04x}\n")
            self.file(f"{dp}/class", f"0x{klass:06x}\n")
            self.file(f"{dp}/revision", f"0x{c.b[8]:02x}\n")
            sv, sd = struct.unpack_from("<HH", c.b, 0x2C) if c.b[0x0E] & 0x7F == 0 else (0, 0)
            self.file(f"{dp}/subsystem_vendor", f"0x{sv:04x}\n")
            self.file(f"{dp}/subsystem_device", f"0x{sd:04x}\n")
            self.file(f"{dp}/numa_node", f"{d.numa}\n")
            self.file(f"{dp}/local_cpulist", f"{d.cpus}\n")
            lines = []
            nlines = 17 if c.b[0x0E] & 0x7F == 1 else 13  # kernel resource_show: bridges show windows
            bars = {i: (s, fl) for i, s, fl in d.bars}
            base = 0x20000000000 + (int(bdf[5:7], 16) << 36)
            for i in range(nlines):
                if i in bars:
                    size, flags = bars[i]
                    lines.append(f"0x{base:016x} 0x{base + size - 1:016x} 0x{flags:016x}")
                    base += max(size, 1 << 24)
                else:
                    lines.append(f"0x{0:016x} 0x{0:016x} 0x{0:016x}")
            self.file(f"{dp}/resource", "\n".join(lines) + "\n")
            if d.link_text:
                cs, cw, ms, mw = d.link_text
                self.file(f"{dp}/current_link_speed", f"{cs}\n")
                self.file(f"{dp}/current_link_width", f"{cw}\n")
                self.file(f"{dp}/max_link_speed", f"{ms}\n")
                self.file(f"{dp}/max_link_width", f"{mw}\n")
            for name, text in d.extra.items():
                self.file(f"{dp}/{name}", text)
            if d.driver:
                self.link(f"{dp}/driver", f"{up}bus/pci/drivers/{d.driver}")
            if d.iommu_group is not None:
                g = d.iommu_group
                self.link(f"{dp}/iommu_group", f"{up}kernel/iommu_groups/{g}")
                self.link(f"/sys/kernel/iommu_groups/{g}/devices/{bdf}", f"../../../..{dp[len('/sys') :]}")
                self.file(f"/sys/kernel/iommu_groups/{g}/type", self.group_types.get(g, "identity") + "\n")
            for name, target in d.links.items():
                self.link(f"{dp}/{name}", target)
            if d.infiniband:
                ib = f"{dp}/infiniband/{d.infiniband}"
                self.link(f"/sys/class/infiniband/{d.infiniband}", f"../..{ib[len('/sys') :]}")
                self.link(f"{ib}/device", "../../../" + bdf)
            if d.netdev:  # git keeps no empty folders; inspect lists net/, never inside it
                self.file(f"{dp}/net/{d.netdev}/.gitkeep", "")
        for p, content in files.items():
            if content is None:  # a folder whose existence is the fact
                self.file(f"{p}/.gitkeep", "")
            else:
                self.file(p, content)
        meta = {
            "format": "gdrdiag-bundle",
            "format_version": 1,
            "created_utc": "2026-01-01T00:00:00Z",
            "euid": euid,
            "sizes": {},
            "failures": {},
            "source": "scripts/make_fixture_machines.py",
            "fixture": self.name,
        }
        with open(os.path.join(self.root, "meta.json"), "w") as fh:
            json.dump(meta, fh, indent=1, sort_keys=True)
        os.makedirs(os.path.join(self.root, "facts"))
        for key, data in (("cuda", cuda), ("nvml", nvml), ("verbs", verbs)):
            with open(os.path.join(self.root, "facts", f"{key}.json"), "w") as fh:
                json.dump(data, fh, indent=1, sort_keys=True)


def ib_files(
    m: Machine,
    name: str,
    fw: str,
    guid: str,
    rate: str,
    layer: str = "InfiniBand",
    state: str = "4: ACTIVE",
    gid: str = "fe80:0000:0000:0000:0a00:0000:0000:0001",
) -> None:
    dev = next(d for d in m.devs.values() if d.infiniband == name)
    ib = f"{m.devpath(dev.bdf)}/infiniband/{name}"
    m.file(f"{ib}/fw_ver", fw + "\n")
    m.file(f"{ib}/node_guid", guid + "\n")
    m.file(f"{ib}/hca_type", "MT4129\n")
    m.file(f"{ib}/board_id", "MT_0000000838\n")
    p = f"{ib}/ports/1"
    m.file(f"{p}/state", state + "\n")
    m.file(f"{p}/phys_state", "5: LinkUp\n")
    m.file(f"{p}/rate", rate + "\n")
    m.file(f"{p}/link_layer", layer + "\n")
    m.file(f"{p}/gids/0", gid + "\n")
    m.file(f"{p}/gids/1", "0000:0000:0000:0000:0000:0000:0000:0000\n")


# ---------------------------------------------------------------------------------------------
# Shared facts
# ---------------------------------------------------------------------------------------------

# IORESOURCE flags as the kernel prints them: MEM 0x200, PREFETCH 0x2000, MEM_64 0x100000, SIZEALIGN 0x40000
MEM32 = 0x00040200
MEM64 = 0x00140204
MEM64_PREF = 0x0014220C


def cuda_facts(gpus: list[tuple[int, str, str, int]], driver: int, host_dmabuf: int = 0) -> dict:
    """gpus: (ordinal, name, bdf, total_memory); attribute values as observed on H100/H200.

    The H200 capture's ``b_gpu_firecracker_h200/facts/cuda.json`` holds the same values.
    """
    devs = []
    for ordinal, name, bdf, mem in gpus:
        attrs = {
            "GPU_DIRECT_RDMA_SUPPORTED": 1,
            "GPU_DIRECT_RDMA_FLUSH_WRITES_OPTIONS": 1,
            "GPU_DIRECT_RDMA_WRITES_ORDERING": 100,
            "GPU_DIRECT_RDMA_WITH_CUDA_VMM_SUPPORTED": 1,
            "DMA_BUF_SUPPORTED": 1,
            "HOST_ALLOC_DMA_BUF_SUPPORTED": host_dmabuf,
            "CAN_MAP_HOST_MEMORY": 1,
            "HOST_REGISTER_SUPPORTED": 1,
            "PAGEABLE_MEMORY_ACCESS": 0,
            "UNIFIED_ADDRESSING": 1,
            "CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM": 1,
            "PCI_DOMAIN_ID": int(bdf[:4], 16),
            "PCI_BUS_ID": int(bdf[5:7], 16),
            "PCI_DEVICE_ID": int(bdf[8:10], 16),
            "MULTIPROCESSOR_COUNT": 132,
        }
        devs.append(
            {
                "ordinal": ordinal,
                "name": name,
                "pci_bus_id": bdf,
                "compute_capability": [9, 0],
                "total_memory": mem,
                "multiprocessor_count": 132,
                "attributes": attrs,
            }
        )
    return {"status": "ok", "reason": None, "driver_version": driver, "devices": devs}


def nvml_facts(bdfs: list[str], mode: str, bar1_mib: int, gen: int = 5, width: int = 16) -> dict:
    return {
        "status": "ok",
        "reason": None,
        "driver_version": "550.90.07",
        "gpus": {
            b: {
                "virtualization_mode": mode,
                "link_gen": gen,
                "link_gen_max": 5,
                "link_width": width,
                "link_width_max": 16,
                "replay_counter": 0,
                "bar1_total": bar1_mib,
                "unknown": {},
            }
            for b in bdfs
        },
    }


def verbs_facts(names: list[str], fw: str) -> dict:
    return {
        "status": "ok",
        "reason": None,
        "rdma_core_version": "50.0",
        "device_errors": {},
        "devices": {
            n: {"fw_ver": fw, "vendor_id": 0x02C9, "vendor_part_id": 4129, "phys_port_cnt": 1} for n in names
        },
        "dmabuf_probe": {n: "supported (ibv_reg_dmabuf_mr fd=-1 -> EBADF)" for n in names},
    }


NO_VERBS = {
    "status": "none",
    "reason": "no RDMA devices: /sys/class/infiniband is empty",
    "rdma_core_version": "50.0",
    "devices": {},
    "dmabuf_probe": {},
    "device_errors": {},
}


def cpuinfo(vendor: str, family: int, model: int, name: str, hypervisor: bool, ncpu: int = 2) -> str:
    flags = (
        "fpu vme de pse tsc msr pae mce cx8 apic sep mtrr pge mca cmov pat pse36 clflush mmx fxsr sse sse2 ht"
    )
    flags += " syscall nx pdpe1gb rdtscp lm constant_tsc rep_good nopl xtopology cpuid pni pclmulqdq"
    flags += " ssse3 fma cx16"
    flags += " pcid sse4_1 sse4_2 x2apic movbe popcnt aes xsave avx f16c rdrand" + (
        " hypervisor" if hypervisor else ""
    )
    flags += " lahf_lm abm avx2 avx512f"
    out = []
    for i in range(ncpu):
        out.append(
            f"processor\t: {i}\nvendor_id\t: {vendor}\ncpu family\t: {family}\nmodel\t\t: {model}\n"
            f"model name\t: {name}\nstepping\t: 8\ncpu MHz\t\t: 2000.000\ncache size\t: 107520 KB\n"
            f"physical id\t: 0\nsiblings\t: {ncpu}\ncore id\t\t: {i}\ncpu cores\t: {ncpu}\n"
            f"flags\t\t: {flags}\n"
        )
    return "\n".join(out) + "\n"


def proc_files(
    release: str,
    cmdline: str,
    cpu: str,
    hostname: str,
    nvidia: Optional[str],
    modules: Optional[list],
    os_name: str = "Ubuntu 22.04.4 LTS",
    ro_mode: str = "0",
) -> dict:
    files = {
        "/proc/sys/kernel/osrelease": release + "\n",
        "/proc/cmdline": cmdline + "\n",
        "/proc/cpuinfo": cpu,
        "/proc/sys/kernel/hostname": hostname + "\n",
        "/etc/os-release": f'PRETTY_NAME="{os_name}"\nNAME="Linux"\n',
    }
    if nvidia:
        files["/proc/driver/nvidia/version"] = nvidia + "\nGCC version:  gcc version 12.3.0\n"
        files["/proc/driver/nvidia/params"] = (
            f"ResmanDebugLevel: 4294967295\nEnablePCIERelaxedOrderingMode: {ro_mode}\n"
            "EnableResizableBar: 0\nEnableGpuFirmware: 18\n"
        )
    if modules is not None:
        files["/proc/modules"] = "".join(f"{m} 16384 0 - Live 0x0000000000000000\n" for m in modules)
    return files


OPEN_550 = (
    "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  550.90.07  Release Build  "
    "(dvs-builder@U16-I3-B03-4-3)  Fri May 31 09:35:42 UTC 2024"
)
BARE_MODULES = ["nvidia_peermem", "nvidia_uvm", "nvidia", "mlx5_ib", "ib_uverbs", "ib_core", "mlx5_core"]
SPR = ("GenuineIntel", 6, 143, "Intel(R) Xeon(R) Platinum 8480C")


def dmi(vendor: str, product: str, board: str, bios: str) -> dict:
    return {
        "/sys/class/dmi/id/sys_vendor": vendor + "\n",
        "/sys/class/dmi/id/product_name": product + "\n",
        "/sys/class/dmi/id/board_vendor": board + "\n",
        "/sys/class/dmi/id/bios_vendor": bios + "\n",
    }


def link_text(gen: int, width: int, max_gen: int, max_width: int) -> tuple:
    return (f"{GEN[gen]:.1f} GT/s PCIe", width, f"{GEN[max_gen]:.1f} GT/s PCIe", max_width)


def switch_tree(
    m: Machine,
    host: str,
    rp: str,
    usp: str,
    dsps: list[str],
    numa: int,
    cpus: str,
    acs_ctl: int,
    group0: int,
    rp_acs_ctl: int = 0x001D,
    gen: int = 5,
    switch_id: tuple[int, int] = (0x1000, 0xC030),
) -> int:
    """Root port -> switch upstream port -> downstream ports; returns the next free IOMMU group."""
    bus = lambda b: int(b[5:7], 16)  # noqa: E731
    g = group0
    m.add(
        Dev(
            rp,
            bridge_config(
                0x8086,
                0x352A,
                Exp(port_type=PT_ROOT, max_gen=gen, gen=gen, flr=False),
                (bus(rp), bus(usp), bus(dsps[0]) + len(dsps)),
                rp_acs_ctl,
            ),
            None,
            host,
            "pcieport",
            numa,
            cpus,
            iommu_group=g,
            link_text=link_text(gen, 16, gen, 16),
        )
    )
    g += 1
    m.add(
        Dev(
            usp,
            bridge_config(
                *switch_id,
                Exp(port_type=PT_USP, max_gen=gen, gen=gen, flr=False),
                (bus(usp), bus(dsps[0]), bus(dsps[0]) + len(dsps)),
                None,
            ),
            rp,
            host,
            "pcieport",
            numa,
            cpus,
            iommu_group=g,
            link_text=link_text(gen, 16, gen, 16),
        )
    )
    g += 1
    for dsp in dsps:
        child = bus(dsp) + 1 + int(dsp[8:10], 16)
        m.add(
            Dev(
                dsp,
                bridge_config(
                    *switch_id,
                    Exp(port_type=PT_DSP, max_gen=gen, gen=gen, flr=False),
                    (bus(dsp), child, child),
                    acs_ctl,
                ),
                usp,
                host,
                "pcieport",
                numa,
                cpus,
                iommu_group=g,
                link_text=link_text(gen, 16, gen, 16),
            )
        )
        g += 1
    return g


def child_bdf(dsp: str) -> str:
    return f"{dsp[:5]}{int(dsp[5:7], 16) + 1 + int(dsp[8:10], 16):02x}:00.0"


# ---------------------------------------------------------------------------------------------
# The fixtures
# ---------------------------------------------------------------------------------------------


def make_c() -> None:
    """Fixture (c).

    (c) bare-metal HGX H100 with ConnectX-7 PFs: GPU and NIC under one Gen5 switch, ACS off on
    the switch ports, IOMMU pass-through. Reduced from 8 GPUs to 4 GPUs + 4 NICs on two sockets
    with the real RP -> switch USP -> DSP hierarchy. Expected: nothing worse than INFO.
    """
    m = Machine("c_baremetal_hgx_h100_cx7")
    gpus, nics = [], []
    g = 10
    for _sock, (host, rp, usp, numa, cpus) in enumerate(
        (
            ("pci0000:15", "0000:15:01.0", "0000:16:00.0", 0, "0-55,112-167"),
            ("pci0000:9a", "0000:9a:01.0", "0000:9b:00.0", 1, "56-111,168-223"),
        )
    ):
        sb = int(usp[5:7], 16) + 1
        dsps = [f"0000:{sb:02x}:{i:02x}.0" for i in range(4)]
        g = switch_tree(m, host, rp, usp, dsps, numa, cpus, acs_ctl=0x0000, group0=g)
        for i, dsp in enumerate(dsps):
            bdf = child_bdf(dsp)
            if i % 2 == 0:
                m.add(
                    Dev(
                        bdf,
                        h100_config(0x2330, Exp(mrrs=512)),
                        dsp,
                        host,
                        "nvidia",
                        numa,
                        cpus,
                        bars=[(0, 16 * MiB, MEM32), (1, 128 * GiB, MEM64_PREF), (3, 32 * MiB, MEM64_PREF)],
                        iommu_group=g,
                        link_text=link_text(5, 16, 5, 16),
                    )
                )
                gpus.append(bdf)
            else:
                name = f"mlx5_{len(nics)}"
                m.add(
                    Dev(
                        bdf,
                        cx7_pf_config(Exp(mrrs=4096, atomics=True), ats_on=False),
                        dsp,
                        host,
                        "mlx5_core",
                        numa,
                        cpus,
                        bars=[(0, 32 * MiB, MEM64_PREF)],
                        iommu_group=g,
                        link_text=link_text(5, 16, 5, 16),
                        infiniband=name,
                        netdev=f"ibp{int(bdf[5:7], 16)}s0",
                        extra={
                            "sriov_totalvfs": "16\n",
                            "sriov_numvfs": "0\n",
                            "aer_dev_correctable": "RxErr 0\nBadTLP 0\nBadDLLP 0\nRollover 0\nTimeout 0\n"
                            "NonFatalErr 0\nCorrIntErr 0\nHeaderOF 0\nTOTAL_ERR_COR 0\n",
                        },
                    )
                )
                nics.append((name, bdf))
            g += 1
    for i, (name, _) in enumerate(nics):
        ib_files(m, name, "28.39.1002", f"a088:c203:00{i:02x}:1a2b", "400 Gb/sec (4X NDR)")
    files = proc_files(
        "5.15.0-119-generic",
        "BOOT_IMAGE=/vmlinuz-5.15.0-119-generic root=UUID=1 ro intel_iommu=on iommu=pt pci=realloc=off",
        cpuinfo(*SPR, hypervisor=False),
        "hgx-node-01",
        OPEN_550,
        BARE_MODULES,
    )
    files.update(dmi("NVIDIA", "DGXH100", "NVIDIA", "American Megatrends International, LLC."))
    files["/sys/class/iommu/dmar0/.gitkeep"] = ""
    files["/sys/module/mlx5_core/version"] = "24.04-0.6.6\n"  # DOCA-OFED build
    m.write(
        cuda_facts([(i, "NVIDIA H100 80GB HBM3", b, 85520809984) for i, b in enumerate(gpus)], 12040),
        nvml_facts(gpus, "NONE", 131072),
        verbs_facts([n for n, _ in nics], "28.39.1002"),
        files,
    )


def make_d() -> None:
    """Fixture (d).

    (d) KVM/QEMU q35 guest: H100 and a ConnectX-7 VF (15b3:101e) passed through onto pcie.0
    (flat bus, RCiEPs with zeroed link registers), no vIOMMU, no ACS/ATS visible, guest kernel
    5.15 (< 6.4, inbox mlx5). Expected: RO-KERNEL-VF FAIL, VIRT-FLAT-TOPOLOGY WARN, VM infos.
    """
    m = Machine("d_kvm_h100_cx7_vf")
    host = "pci0000:00"
    m.add(Dev("0000:00:00.0", plain_config(0x8086, 0x29C0, 0x060000), None, host, None, -1, "0-31"))
    m.add(
        Dev(
            "0000:00:01.0",
            plain_config(0x1234, 0x1111, 0x030000),
            None,
            host,
            "bochs-drm",
            -1,
            "0-31",
            bars=[(0, 16 * MiB, 0x42208)],
        )
    )
    m.add(
        Dev(
            "0000:00:02.0",
            plain_config(0x1AF4, 0x1041, 0x020000),
            None,
            host,
            "virtio-pci",
            -1,
            "0-31",
            bars=[(4, 16 * 1024, MEM64_PREF)],
        )
    )
    gpu_exp = Exp(port_type=PT_RCIEP, zero_link=True, mps=128, mrrs=512)
    m.add(
        Dev(
            "0000:00:05.0",
            h100_config(0x2330, gpu_exp),
            None,
            host,
            "nvidia",
            -1,
            "0-31",
            bars=[(0, 16 * MiB, MEM32), (1, 128 * GiB, MEM64_PREF), (3, 32 * MiB, MEM64_PREF)],
            link_text=("Unknown", 0, "Unknown", 0),
        )
    )
    m.add(
        Dev(
            "0000:00:06.0",
            cx7_vf_guest_config(),
            None,
            host,
            "mlx5_core",
            -1,
            "0-31",
            bars=[(0, 2 * MiB, MEM64_PREF)],
            link_text=("Unknown", 0, "Unknown", 0),
            infiniband="mlx5_0",
            netdev="ibp0s6",
        )
    )
    for bdf, did, klass in (
        ("0000:00:1f.0", 0x2918, 0x060100),
        ("0000:00:1f.2", 0x2922, 0x010601),
        ("0000:00:1f.3", 0x2930, 0x0C0500),
    ):
        m.add(Dev(bdf, plain_config(0x8086, did, klass), None, host, None, -1, "0-31"))
    ib_files(m, "mlx5_0", "28.39.1002", "0015:5dff:fe33:ff0a", "400 Gb/sec (4X NDR)")
    files = proc_files(
        "5.15.0-105-generic",
        "BOOT_IMAGE=/vmlinuz-5.15.0-105-generic root=LABEL=cloudimg-rootfs ro console=ttyS0",
        cpuinfo(*SPR, hypervisor=True),
        "gpu-vm-0",
        OPEN_550,
        ["nvidia_uvm", "nvidia", "mlx5_ib", "ib_uverbs", "ib_core", "mlx5_core", "virtio_net"],
    )
    files.update(dmi("QEMU", "Standard PC (Q35 + ICH9, 2009)", "", "SeaBIOS"))
    files["/sys/module/mlx5_core/parameters"] = None  # inbox mlx5_core: no version file
    m.write(
        cuda_facts([(0, "NVIDIA H100 80GB HBM3", "0000:00:05.0", 85520809984)], 12040),
        nvml_facts(["0000:00:05.0"], "PASSTHROUGH", 131072),
        verbs_facts(["mlx5_0"], "28.39.1002"),
        files,
    )


def make_e() -> None:
    """Fixture (e).

    (e) bare-metal host, A100 PCIe + ConnectX-6 Dx under one Gen4 switch whose downstream ports
    have ACS SrcValid+ ReqRedir+ CmpltRedir+ UpstreamFwd+ (what the kernel sets with an active
    IOMMU, Linux drivers/pci/pci.c pci_std_enable_acs); IOMMU in DMA translation mode.
    Expected: ACS-REDIRECT FAIL, IOMMU-TRANSLATED.
    """
    m = Machine("e_baremetal_acs_redirect")
    host, rp, usp = "pci0000:30", "0000:30:02.0", "0000:31:00.0"
    dsps = ["0000:32:00.0", "0000:32:01.0"]
    g = switch_tree(
        m, host, rp, usp, dsps, 0, "0-31,64-95", acs_ctl=0x001D, group0=20, gen=4, switch_id=(0x1000, 0xC010)
    )
    gpu, nic = child_bdf(dsps[0]), child_bdf(dsps[1])
    m.group_types = {i: "DMA" for i in range(20, 40)}
    m.add(
        Dev(
            gpu,
            h100_config(0x20B5, Exp(max_gen=4, gen=4, mrrs=512)),
            dsps[0],
            host,
            "nvidia",
            0,
            "0-31,64-95",
            bars=[(0, 16 * MiB, MEM32), (1, 64 * GiB, MEM64_PREF), (3, 32 * MiB, MEM64_PREF)],
            iommu_group=g,
            link_text=link_text(4, 16, 4, 16),
        )
    )
    m.add(
        Dev(
            nic,
            cx7_pf_config(Exp(max_gen=4, gen=4, mrrs=4096), ats_on=False, device=0x101D),
            dsps[1],
            host,
            "mlx5_core",
            0,
            "0-31,64-95",
            bars=[(0, 32 * MiB, MEM64_PREF)],
            iommu_group=g + 1,
            link_text=link_text(4, 16, 4, 16),
            infiniband="mlx5_0",
            netdev="ens3f0np0",
            extra={"sriov_totalvfs": "8\n", "sriov_numvfs": "0\n"},
        )
    )
    ib_files(
        m,
        "mlx5_0",
        "22.39.1002",
        "b83f:d203:00a1:2b3c",
        "100 Gb/sec (4X EDR)",
        layer="Ethernet",
        gid="fe80:0000:0000:0000:ba3f:d2ff:fea1:2b3c",
    )
    files = proc_files(
        "6.1.0-18-amd64",
        "BOOT_IMAGE=/boot/vmlinuz-6.1.0-18-amd64 root=/dev/sda2 ro intel_iommu=on quiet",
        cpuinfo("GenuineIntel", 6, 106, "Intel(R) Xeon(R) Gold 6338 CPU @ 2.00GHz", False),
        "a100-node-07",
        OPEN_550,
        BARE_MODULES,
        os_name="Debian GNU/Linux 12 (bookworm)",
    )
    files.update(dmi("Supermicro", "SYS-420GP-TNR", "Supermicro", "American Megatrends International, LLC."))
    files["/sys/class/iommu/dmar0/.gitkeep"] = ""
    m.write(
        cuda_facts([(0, "NVIDIA A100-PCIE-40GB", gpu, 42298834944)], 12040),
        nvml_facts([gpu], "NONE", 65536, gen=4),
        verbs_facts(["mlx5_0"], "22.39.1002"),
        files,
    )


def make_f() -> None:
    """Fixture (f).

    (f) bare metal, Gen5 switch: H100 PCIe trained x8 of x16 and ConnectX-7 trained Gen4 of
    Gen5. Expected: PCIE-LINK-WIDTH and PCIE-LINK-SPEED (WARN).
    """
    m = Machine("f_link_downtrained")
    host, rp, usp = "pci0000:4a", "0000:4a:01.0", "0000:4b:00.0"
    dsps = ["0000:4c:00.0", "0000:4c:01.0"]
    g = switch_tree(m, host, rp, usp, dsps, 0, "0-47", acs_ctl=0x0000, group0=5)
    gpu, nic = child_bdf(dsps[0]), child_bdf(dsps[1])
    m.add(
        Dev(
            gpu,
            h100_config(0x2331, Exp(width=8, mrrs=512)),
            dsps[0],
            host,
            "nvidia",
            0,
            "0-47",
            bars=[(0, 16 * MiB, MEM32), (1, 128 * GiB, MEM64_PREF), (3, 32 * MiB, MEM64_PREF)],
            iommu_group=g,
            link_text=link_text(5, 8, 5, 16),
        )
    )
    m.add(
        Dev(
            nic,
            cx7_pf_config(Exp(gen=4, mrrs=4096), ats_on=False),
            dsps[1],
            host,
            "mlx5_core",
            0,
            "0-47",
            bars=[(0, 32 * MiB, MEM64_PREF)],
            iommu_group=g + 1,
            link_text=link_text(4, 16, 5, 16),
            infiniband="mlx5_0",
            netdev="ibp77s0",
            extra={"sriov_totalvfs": "16\n", "sriov_numvfs": "0\n"},
        )
    )
    ib_files(m, "mlx5_0", "28.39.1002", "a088:c203:0077:1a2b", "400 Gb/sec (4X NDR)")
    files = proc_files(
        "6.8.0-45-generic",
        "BOOT_IMAGE=/vmlinuz-6.8.0-45-generic root=UUID=2 ro iommu=pt",
        cpuinfo(*SPR, hypervisor=False),
        "h100-pcie-03",
        OPEN_550,
        BARE_MODULES,
        os_name="Ubuntu 24.04.1 LTS",
    )
    files.update(dmi("Dell Inc.", "PowerEdge R760xa", "Dell Inc.", "Dell Inc."))
    m.write(
        cuda_facts([(0, "NVIDIA H100 PCIe", gpu, 85520809984)], 12040),
        nvml_facts([gpu], "NONE", 131072, width=8),
        verbs_facts(["mlx5_0"], "28.39.1002"),
        files,
    )


def make_b_synth() -> None:
    """Fixture (b).

    (b, synthetic) the H200 Firecracker microVM as it was known before its capture existed:
    GPUs at 00:06.0/00:07.0 on the root bus, numa -1, no DMI, zero IOMMU groups, Gen5 x16, BAR1 =
    resource2 (256 GiB), hidden ext-cap IDs, open driver 580.159.04, NVML Pass-Through, no
    nvidia_peermem, no RDMA device. Replaced by the real capture once the lead commits it.
    """
    m = Machine("b_synth_firecracker_h200")
    host = "pci0000:00"
    m.add(
        Dev("0000:00:00.0", plain_config(0x8086, 0x0D57, 0x060000, size=4096), None, host, None, -1, "0-63")
    )
    for i, dev in enumerate(("0000:00:01.0", "0000:00:02.0")):
        m.add(
            Dev(
                dev,
                plain_config(0x1AF4, 0x1042 - i, 0x018000 if i == 0 else 0x020000),
                None,
                host,
                "virtio-pci",
                -1,
                "0-63",
                bars=[(0, 512 * 1024, MEM64)],
            )
        )
    gpus = ["0000:00:06.0", "0000:00:07.0"]
    for bdf in gpus:
        exp = Exp(ro=True, no_snoop=False, mps=256, mrrs=4096, ext_tag=True)
        m.add(
            Dev(
                bdf,
                h100_config(0x2335, exp, hidden_ids=True),
                None,
                host,
                "nvidia",
                -1,
                "0-63",
                bars=[(0, 16 * MiB, MEM64), (2, 256 * GiB, MEM64_PREF), (4, 32 * MiB, MEM64_PREF)],
                link_text=link_text(5, 16, 5, 16),
            )
        )
    files = proc_files(
        "6.8.0-fc",
        "console=ttyS0 reboot=k panic=1 pci=on -- --firecracker-init",
        cpuinfo("AuthenticAMD", 25, 17, "AMD EPYC", hypervisor=True),
        "vm",
        "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.159.04  Release Build  "
        "(dvs-builder@U22-I3-AE18-23-3)  Tue Oct 21 2025",
        None,
        os_name="Debian GNU/Linux 12 (bookworm)",
    )
    cuda = cuda_facts([(i, "NVIDIA H200", b, 150754820096) for i, b in enumerate(gpus)], 13000)
    nvml = nvml_facts(gpus, "PASSTHROUGH", 262144)
    nvml["driver_version"] = "580.159.04"
    m.write(cuda, nvml, NO_VERBS, files)


def make_g() -> None:
    """Fixture (g).

    (g) bare-metal 8 x H100 + 8 x ConnectX-7 node, one Gen5 switch per GPU and NIC pair (as DGX H100
    pairs them), with two odd GPUs for the whole-node rules: GPU 5's link trained at x8 of x16, and
    GPU 6 on NUMA node 1 while its seven siblings hang off node 0's root complexes (a slot wired to the
    second CPU, as 2-socket PCIe servers have). Expected from the machine: PCIE-LINK-WIDTH on GPU 5;
    from a Report measured per GPU with no NUMA binding, PERF-GPU-OUTLIER on GPU 5 (its link) and
    GPU 6 (the far node).
    """
    m = Machine("g_8gpu_8nic_two_odd")
    gpus, nics = [], []
    g = 10
    sockets = (("0-55,112-167", 0), ("56-111,168-223", 1))
    # one switch tree per GPU + NIC pair; bus numbers rise with the GPU ordinal (CUDA's PCI order)
    for pair, rc_bus in enumerate((0x18, 0x2A, 0x3A, 0x4A, 0x9A, 0xAB, 0xBA, 0xDB)):
        cpus, numa = sockets[1 if pair == 6 else 0]  # GPU 6: the slot wired to the second CPU
        host, rp, usp = f"pci0000:{rc_bus:02x}", f"0000:{rc_bus:02x}:01.0", f"0000:{rc_bus + 1:02x}:00.0"
        dsps = [f"0000:{rc_bus + 2:02x}:00.0", f"0000:{rc_bus + 2:02x}:01.0"]
        g = switch_tree(m, host, rp, usp, dsps, numa, cpus, acs_ctl=0x0000, group0=g)
        gpu, nic = child_bdf(dsps[0]), child_bdf(dsps[1])
        width = 8 if pair == 5 else 16
        m.add(
            Dev(
                gpu,
                h100_config(0x2330, Exp(width=width, mrrs=512)),
                dsps[0],
                host,
                "nvidia",
                numa,
                cpus,
                bars=[(0, 16 * MiB, MEM32), (1, 128 * GiB, MEM64_PREF), (3, 32 * MiB, MEM64_PREF)],
                iommu_group=g,
                link_text=link_text(5, width, 5, 16),
            )
        )
        name = f"mlx5_{pair}"
        m.add(
            Dev(
                nic,
                cx7_pf_config(Exp(mrrs=4096, atomics=True), ats_on=False),
                dsps[1],
                host,
                "mlx5_core",
                numa,
                cpus,
                bars=[(0, 32 * MiB, MEM64_PREF)],
                iommu_group=g + 1,
                link_text=link_text(5, 16, 5, 16),
                infiniband=name,
                netdev=f"ibp{int(nic[5:7], 16)}s0",
                extra={"sriov_totalvfs": "16\n", "sriov_numvfs": "0\n"},
            )
        )
        gpus.append(gpu)
        nics.append((name, nic))
        g += 2
    for i, (name, _) in enumerate(nics):
        ib_files(m, name, "28.39.1002", f"a088:c203:01{i:02x}:1a2b", "400 Gb/sec (4X NDR)")
    files = proc_files(
        "5.15.0-119-generic",
        "BOOT_IMAGE=/vmlinuz-5.15.0-119-generic root=UUID=1 ro intel_iommu=on iommu=pt",
        cpuinfo(*SPR, hypervisor=False),
        "hgx-node-08",
        OPEN_550,
        BARE_MODULES,
    )
    files.update(dmi("NVIDIA", "DGXH100", "NVIDIA", "American Megatrends International, LLC."))
    files["/sys/class/iommu/dmar0/.gitkeep"] = ""
    nvml = nvml_facts(gpus, "NONE", 131072)
    nvml["gpus"][gpus[5]]["link_width"] = 8
    m.write(
        cuda_facts([(i, "NVIDIA H100 80GB HBM3", b, 85520809984) for i, b in enumerate(gpus)], 12040),
        nvml,
        verbs_facts([n for n, _ in nics], "28.39.1002"),
        files,
    )


def main() -> None:
    os.makedirs(OUT, exist_ok=True)
    for make in (make_b_synth, make_c, make_d, make_e, make_f, make_g):
        make()
    print(f"wrote fixtures under {os.path.normpath(OUT)}")


if __name__ == "__main__":
    main()
