"""PCI config space: the bytes (and how many were readable), the capability walkers, decoders.

Reading: sysfs ``/sys/bus/pci/devices/<BDF>/config`` gives the whole space (256 or 4096
bytes) to root and only the first 64 bytes to anyone else (Linux drivers/pci/pci-sysfs.c).
``ConfigSpace`` keeps the bytes that were read and the size the file reports, so an unreadable
register is "unknown: needs root", never 0 - as lspci's ``present[]`` map does (pciutils lspci.c).

Walking: the standard list starts at the pointer in 0x34 (when Status bit 4 says a list
exists); each entry is ID byte + next byte. The extended list starts at 0x100; each header
is a dword: ID [15:0], version [19:16], next [31:20] (PCIe Base Spec r5.0 sec. 7.6.3; Linux
pci_regs.h). Both walks carry lspci's guards (pciutils ls-caps.c ``show_caps``): a visited set
against loops, and stops on a pointer into the header, an ID of 0xff, or a read past the
readable bytes - each recorded as a problem string rather than raised.

Decoding: table-driven named offsets and masks, citing Linux include/uapi/linux/pci_regs.h and
pciutils lib/header.h / ls-caps.c / ls-ecaps.c (https://github.com/pciutils/pciutils).
Everything here is pure (bytes in, model out), so the fuzz tests can feed it random bytes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from gdrdiag.model.machine import (
    AcsCap,
    AerCap,
    AtsCap,
    CapEntry,
    PcieCap,
    PortType,
    RebarCap,
    SriovCap,
)

UNPRIVILEGED_BYTES = 64  # Linux drivers/pci/pci-sysfs.c: size = 64 without CAP_SYS_ADMIN
MAX_CONFIG_BYTES = 4096

# Standard header (Linux pci_regs.h PCI_STATUS, PCI_HEADER_TYPE, PCI_CAPABILITY_LIST)
PCI_STATUS = 0x06
PCI_STATUS_CAP_LIST = 0x10
PCI_HEADER_TYPE = 0x0E
PCI_CAPABILITY_LIST = 0x34
PCI_CB_CAPABILITY_LIST = 0x14  # header type 2 (CardBus)

# Standard capability IDs (Linux pci_regs.h PCI_CAP_ID_*)
CAP_NAMES = {
    0x01: "PM",
    0x02: "AGP",
    0x03: "VPD",
    0x04: "SlotID",
    0x05: "MSI",
    0x06: "CHSWP",
    0x07: "PCI-X",
    0x08: "HT",
    0x09: "VNDR",
    0x0A: "DBG",
    0x0B: "CCRC",
    0x0C: "SHPC",
    0x0D: "SSVID",
    0x0E: "AGP3",
    0x0F: "SECDEV",
    0x10: "EXP",
    0x11: "MSIX",
    0x12: "SATA",
    0x13: "AF",
    0x14: "EA",
    0x15: "FPB",
}
CAP_ID_EXP = 0x10
CAP_ID_VNDR = 0x09

# Extended capability IDs (Linux pci_regs.h PCI_EXT_CAP_ID_*)
EXT_AER = 0x0001
EXT_ACS = 0x000D
EXT_ATS = 0x000F
EXT_SRIOV = 0x0010
EXT_REBAR = 0x0015
EXT_CAP_NAMES = {
    0x0000: "Null",
    0x0001: "AER",
    0x0002: "VC",
    0x0003: "DSN",
    0x0004: "PWR",
    0x0005: "RCLD",
    0x0006: "RCILC",
    0x0007: "RCEC",
    0x0008: "MFVC",
    0x0009: "VC9",
    0x000A: "RCRB",
    0x000B: "VNDR",
    0x000C: "CAC",
    0x000D: "ACS",
    0x000E: "ARI",
    0x000F: "ATS",
    0x0010: "SRIOV",
    0x0011: "MRIOV",
    0x0012: "MCAST",
    0x0013: "PRI",
    0x0015: "REBAR",
    0x0016: "DPA",
    0x0017: "TPH",
    0x0018: "LTR",
    0x0019: "SECPCI",
    0x001A: "PMUX",
    0x001B: "PASID",
    0x001C: "LNR",
    0x001D: "DPC",
    0x001E: "L1SS",
    0x001F: "PTM",
    0x0020: "MPCIE",
    0x0021: "FRS",
    0x0022: "RTR",
    0x0023: "DVSEC",
    0x0024: "VF_REBAR",
    0x0025: "DLNK",
    0x0026: "16GT",
    0x0027: "LMR",
    0x0028: "HIER_ID",
    0x0029: "NPEM",
    0x002A: "32GT",
    0x002E: "DOE",
    0x0030: "IDE",
    0x0031: "64GT",
}

# PCIe capability register offsets (Linux pci_regs.h PCI_EXP_*; PCIe Base Spec r5.0 sec. 7.5.3)
EXP_FLAGS, EXP_DEVCAP, EXP_DEVCTL, EXP_DEVSTA = 0x02, 0x04, 0x08, 0x0A
EXP_LNKCAP, EXP_LNKCTL, EXP_LNKSTA = 0x0C, 0x10, 0x12
EXP_DEVCAP2, EXP_DEVCTL2, EXP_LNKCAP2, EXP_LNKCTL2 = 0x24, 0x28, 0x2C, 0x30

DEVCTL_RELAX_EN = 0x0010  # RlxdOrd
DEVCTL_PAYLOAD = 0x00E0  # MaxPayload = 128 << n
DEVCTL_EXT_TAG = 0x0100  # ExtTag
DEVCTL_NOSNOOP_EN = 0x0800  # NoSnoop
DEVCTL_READRQ = 0x7000  # MaxReadReq = 128 << n
DEVCAP_PAYLOAD = 0x0007
DEVCAP_EXT_TAG = 0x0020
DEVCAP_FLR = 0x10000000
DEVCAP2_ATOMIC_ROUTE = 0x0040
DEVCAP2_ATOMIC_COMP32 = 0x0080
DEVCAP2_ATOMIC_COMP64 = 0x0100
DEVCAP2_ATOMIC_COMP128 = 0x0200
DEVCAP2_NROPRPRP = 0x0400  # pciutils lib/header.h PCI_EXP_DEVCAP2_NROPRPRP
DEVCAP2_10BIT_TAG_COMP = 0x10000
DEVCAP2_10BIT_TAG_REQ = 0x20000
DEVCTL2_ATOMIC_REQ = 0x0040
DEVCTL2_IDO_REQ_EN = 0x0100
DEVCTL2_IDO_CMP_EN = 0x0200
DEVCTL2_10BIT_TAG_REQ = 0x1000
LNKCTL_RCB = 0x0008  # 0 = 64 B, 1 = 128 B
LNKCTL_ASPM = 0x0003

SPEED_GTS = {1: 2.5, 2: 5.0, 3: 8.0, 4: 16.0, 5: 32.0, 6: 64.0, 7: 128.0}
PORT_TYPES = {
    0x0: PortType.ENDPOINT,
    0x1: PortType.LEGACY_ENDPOINT,
    0x4: PortType.ROOT_PORT,
    0x5: PortType.SWITCH_UPSTREAM,
    0x6: PortType.SWITCH_DOWNSTREAM,
    0x7: PortType.PCIE_TO_PCI_BRIDGE,
    0x8: PortType.PCI_TO_PCIE_BRIDGE,
    0x9: PortType.RC_INTEGRATED_ENDPOINT,
    0xA: PortType.RC_EVENT_COLLECTOR,
}
ASPM_NAMES = {0: "Disabled", 1: "L0s", 2: "L1", 3: "L0s L1"}

# ACS control/capability bits, in lspci's order and words (Linux pci_regs.h PCI_ACS_*; pciutils ls-ecaps.c)
ACS_BITS = (
    (0x01, "SrcValid"),
    (0x02, "TransBlk"),
    (0x04, "ReqRedir"),
    (0x08, "CmpltRedir"),
    (0x10, "UpstreamFwd"),
    (0x20, "EgressCtrl"),
    (0x40, "DirectTrans"),
)
ACS_CAP, ACS_CTRL = 0x04, 0x06
ATS_CAP, ATS_CTRL = 0x04, 0x06
ATS_CTRL_ENABLE = 0x8000
SRIOV_CTRL, SRIOV_INITIAL_VF, SRIOV_TOTAL_VF, SRIOV_NUM_VF = 0x08, 0x0C, 0x0E, 0x10
SRIOV_VF_OFFSET, SRIOV_VF_STRIDE, SRIOV_VF_DID = 0x14, 0x16, 0x1A
SRIOV_CTRL_VFE, SRIOV_CTRL_ARI = 0x01, 0x10
AER_UNCOR_STATUS, AER_COR_STATUS = 0x04, 0x10
REBAR_CAP, REBAR_CTRL = 0x04, 0x08
REBAR_MAX_SIZE_CODE = 43  # 2^43 MiB = 8 EiB, the largest size PCIe r6.0 7.8.6 defines

MAX_STD_CAPS = 48  # (256 - 64) / 4: more entries than that is a loop
MAX_EXT_CAPS = 960  # (4096 - 256) / 4


@dataclass(frozen=True)
class ConfigSpace:
    """Config-space bytes as read, and the size the kernel reports for the file."""

    data: bytes
    size: Optional[int] = None
    problems: tuple[str, ...] = field(default_factory=tuple)

    @property
    def readable(self) -> int:
        """How many leading bytes were readable."""
        return len(self.data)

    @property
    def truncated_by_privilege(self) -> bool:
        """True when only the unprivileged 64 bytes came back from a larger file (Linux pci-sysfs.c)."""
        return len(self.data) <= UNPRIVILEGED_BYTES and (self.size or 0) > UNPRIVILEGED_BYTES

    def has(self, off: int, width: int) -> bool:
        """True when bytes ``off .. off+width`` were read."""
        return 0 <= off and off + width <= len(self.data)

    def byte(self, off: int) -> Optional[int]:
        """One byte, or None when unreadable."""
        return self.data[off] if self.has(off, 1) else None

    def word(self, off: int) -> Optional[int]:
        """Little-endian 16-bit register, or None when unreadable."""
        return int.from_bytes(self.data[off : off + 2], "little") if self.has(off, 2) else None

    def dword(self, off: int) -> Optional[int]:
        """Little-endian 32-bit register, or None when unreadable."""
        return int.from_bytes(self.data[off : off + 4], "little") if self.has(off, 4) else None


def read_config(tree, bdf: str) -> ConfigSpace:
    """Read a function's config space through a ``SysfsTree`` (loud: raises ``SysfsError``)."""
    path = f"/sys/bus/pci/devices/{bdf}/config"
    data = tree.read_bytes(path, limit=MAX_CONFIG_BYTES)
    return ConfigSpace(data=data[:MAX_CONFIG_BYTES], size=tree.file_size(path))


# ---- walkers --------------------------------------------------------------------------------


def walk_std_caps(cfg: ConfigSpace) -> tuple[list[CapEntry], list[str]]:
    """Standard capability list: entries and problems (loop, broken chain, unreadable)."""
    caps: list[CapEntry] = []
    problems: list[str] = []
    status = cfg.word(PCI_STATUS)
    if status is None:
        return caps, ["status register unreadable"]
    if not status & PCI_STATUS_CAP_LIST:
        return caps, problems
    htype = cfg.byte(PCI_HEADER_TYPE)
    start = PCI_CB_CAPABILITY_LIST if htype is not None and (htype & 0x7F) == 2 else PCI_CAPABILITY_LIST
    ptr = cfg.byte(start)
    if ptr is None:
        return caps, ["capability pointer unreadable"]
    ptr &= 0xFC
    seen: set[int] = set()
    while ptr:
        if ptr < 0x40:
            problems.append(f"<chain broken> pointer 0x{ptr:02x} into the header")
            break
        if ptr in seen or len(caps) >= MAX_STD_CAPS:
            problems.append(f"<chain looped> at 0x{ptr:02x}")
            break
        seen.add(ptr)
        if not cfg.has(ptr, 2):
            problems.append(f"<access denied> capability at 0x{ptr:02x} beyond readable bytes")
            break
        cap_id, nxt = cfg.data[ptr], cfg.data[ptr + 1]
        if cap_id == 0xFF:
            problems.append(f"<chain broken> ID 0xff at 0x{ptr:02x}")
            break
        caps.append(CapEntry(cap_id, ptr, CAP_NAMES.get(cap_id, f"0x{cap_id:02x}"), False))
        ptr = nxt & 0xFC
    return caps, problems


def walk_ext_caps(cfg: ConfigSpace) -> tuple[list[CapEntry], list[str]]:
    """Extended capability list from 0x100: entries and problems."""
    caps: list[CapEntry] = []
    problems: list[str] = []
    if (cfg.size or len(cfg.data)) <= 0x100:
        return caps, problems  # conventional PCI or PCI-X mode 1: no extended space
    if not cfg.has(0x100, 4):
        return caps, ["<access denied> extended space not readable (needs root)"]
    off = 0x100
    seen: set[int] = set()
    while off:
        if off < 0x100 or off & 3:
            problems.append(f"<chain broken> next pointer 0x{off:03x}")
            break
        if off in seen or len(caps) >= MAX_EXT_CAPS:
            problems.append(f"<chain looped> at 0x{off:03x}")
            break
        seen.add(off)
        header = cfg.dword(off)
        if header is None:
            problems.append(f"<chain broken> header at 0x{off:03x} beyond readable bytes")
            break
        if header == 0xFFFFFFFF:
            problems.append(f"<chain broken> all-ones header at 0x{off:03x}")
            break
        if header == 0 and off == 0x100:
            break  # empty list
        cap_id, ver, nxt = header & 0xFFFF, (header >> 16) & 0xF, (header >> 20) & 0xFFF
        # A zero ID with a valid next pointer is a capability a hypervisor hid (the ID is
        # replaced with 0 and the chain kept: QEMU hw/vfio/pci.c vfio_add_ext_cap skips such
        # entries as "kernel masked"; the H200 Firecracker capture in tests/fixtures/machines/
        # b_gpu_firecracker_h200 has four); keep it so the chain stays faithful.
        caps.append(CapEntry(cap_id, off, EXT_CAP_NAMES.get(cap_id, f"0x{cap_id:04x}"), True, ver))
        off = nxt
    return caps, problems


# ---- decoders ---------------------------------------------------------------------------------


def _payload(code: int) -> int:
    return 128 << (code & 0x7)


def _bit(value: Optional[int], mask: int) -> Optional[bool]:
    return None if value is None else bool(value & mask)


def decode_link(cfg: ConfigSpace, base: int) -> Optional[dict]:
    """LnkCap/LnkSta speed and width, or None when unreadable."""
    lnkcap, lnksta = cfg.dword(base + EXP_LNKCAP), cfg.word(base + EXP_LNKSTA)
    if lnkcap is None or lnksta is None:
        return None
    return {
        "speed_gts": SPEED_GTS.get(lnksta & 0xF),
        "width": (lnksta >> 4) & 0x3F,
        "max_speed_gts": SPEED_GTS.get(lnkcap & 0xF),
        "max_width": (lnkcap >> 4) & 0x3F,
    }


def decode_pcie(cfg: ConfigSpace, base: int) -> Optional[PcieCap]:
    """Decode the PCI Express capability at ``base`` (None when its core is unreadable)."""
    flags, devcap, devctl = (
        cfg.word(base + EXP_FLAGS),
        cfg.dword(base + EXP_DEVCAP),
        cfg.word(base + EXP_DEVCTL),
    )
    if flags is None or devcap is None or devctl is None:
        return None
    version = flags & 0xF
    devsta = cfg.word(base + EXP_DEVSTA)
    lnkctl = cfg.word(base + EXP_LNKCTL)
    v2 = version >= 2
    devcap2 = cfg.dword(base + EXP_DEVCAP2) if v2 else None
    devctl2 = cfg.word(base + EXP_DEVCTL2) if v2 else None
    lnkcap2 = cfg.dword(base + EXP_LNKCAP2) if v2 else None
    lnkctl2 = cfg.word(base + EXP_LNKCTL2) if v2 else None
    speeds = tuple(SPEED_GTS[i] for i in range(1, 8) if lnkcap2 and lnkcap2 & (1 << i) and i in SPEED_GTS)
    return PcieCap(
        offset=base,
        version=version,
        port_type=PORT_TYPES.get((flags >> 4) & 0xF, PortType.OTHER),
        max_payload_supported=_payload(devcap & DEVCAP_PAYLOAD),
        ext_tag_supported=bool(devcap & DEVCAP_EXT_TAG),
        flr=bool(devcap & DEVCAP_FLR),
        relaxed_ordering=bool(devctl & DEVCTL_RELAX_EN),
        ext_tag=bool(devctl & DEVCTL_EXT_TAG),
        no_snoop=bool(devctl & DEVCTL_NOSNOOP_EN),
        max_payload=_payload((devctl & DEVCTL_PAYLOAD) >> 5),
        max_read_request=_payload((devctl & DEVCTL_READRQ) >> 12),
        corr_err=bool(devsta and devsta & 0x1),
        nonfatal_err=bool(devsta and devsta & 0x2),
        fatal_err=bool(devsta and devsta & 0x4),
        unsupp_req=bool(devsta and devsta & 0x8),
        rcb_bytes=None if lnkctl is None else (128 if lnkctl & LNKCTL_RCB else 64),
        aspm=None if lnkctl is None else ASPM_NAMES[lnkctl & LNKCTL_ASPM],
        no_ro_enabled_pr_pr_passing=_bit(devcap2, DEVCAP2_NROPRPRP),
        tag10_completer=_bit(devcap2, DEVCAP2_10BIT_TAG_COMP),
        tag10_requester=_bit(devcap2, DEVCAP2_10BIT_TAG_REQ),
        tag10_requester_enabled=_bit(devctl2, DEVCTL2_10BIT_TAG_REQ),
        atomic_routing=_bit(devcap2, DEVCAP2_ATOMIC_ROUTE),
        atomic32_completer=_bit(devcap2, DEVCAP2_ATOMIC_COMP32),
        atomic64_completer=_bit(devcap2, DEVCAP2_ATOMIC_COMP64),
        atomic128_completer=_bit(devcap2, DEVCAP2_ATOMIC_COMP128),
        atomic_requester_enabled=_bit(devctl2, DEVCTL2_ATOMIC_REQ),
        ido_request_enabled=_bit(devctl2, DEVCTL2_IDO_REQ_EN),
        ido_completion_enabled=_bit(devctl2, DEVCTL2_IDO_CMP_EN),
        supported_speeds_gts=speeds,
        target_speed_gts=_target_speed(lnkctl2),
    )


def _target_speed(lnkctl2: Optional[int]) -> Optional[float]:
    """LnkCtl2 Target Link Speed in GT/s.

    PCIe Base spec, Link Control 2: components that support only 2.5 GT/s may hardwire the field
    to 0000b, so 0000b means 2.5 GT/s (lspci prints "Target Link Speed: 2.5GT/s" for it, even
    where LnkCap's speed field reads 0). The QEMU lab's x3130 switch ports, NVMe and virtio
    functions do exactly that; 0 was decoded as unknown before.
    """
    if lnkctl2 is None:
        return None
    code = lnkctl2 & 0xF
    return SPEED_GTS[1] if code == 0 else SPEED_GTS.get(code)


def acs_flags(value: int) -> tuple[str, ...]:
    """Lspci's names of the ACS bits set in ``value`` (SrcValid, ReqRedir, ...)."""
    return tuple(name for mask, name in ACS_BITS if value & mask)


def decode_acs(cfg: ConfigSpace, base: int) -> Optional[AcsCap]:
    """ACS capability (+0x04) and control (+0x06) words."""
    cap, ctl = cfg.word(base + ACS_CAP), cfg.word(base + ACS_CTRL)
    if cap is None or ctl is None:
        return None
    return AcsCap(offset=base, cap=cap, ctl=ctl, cap_flags=acs_flags(cap), ctl_flags=acs_flags(ctl))


def decode_ats(cfg: ConfigSpace, base: int) -> Optional[AtsCap]:
    """ATS capability: ``ATSCtl: Enable+`` is bit 15 of +0x06; STU is [4:0]."""
    cap, ctl = cfg.word(base + ATS_CAP), cfg.word(base + ATS_CTRL)
    if cap is None or ctl is None:
        return None
    depth = cap & 0x1F
    return AtsCap(
        offset=base, enabled=bool(ctl & ATS_CTRL_ENABLE), stu=ctl & 0x1F, invalidate_queue_depth=depth or 32
    )  # 0 encodes 32 (Linux drivers/pci/ats.c pci_ats_queue_depth; PCIe Base Spec r5.0 sec. 10.5.1)


def decode_sriov(cfg: ConfigSpace, base: int) -> Optional[SriovCap]:
    """SR-IOV capability of a PF (offsets: Linux pci_regs.h PCI_SRIOV_*; PCIe Base Spec r5.0 sec. 9.3.3)."""
    words = [
        cfg.word(base + o)
        for o in (
            SRIOV_CTRL,
            SRIOV_INITIAL_VF,
            SRIOV_TOTAL_VF,
            SRIOV_NUM_VF,
            SRIOV_VF_OFFSET,
            SRIOV_VF_STRIDE,
            SRIOV_VF_DID,
        )
    ]
    if any(w is None for w in words):
        return None
    ctrl, initial, total, num, first, stride, did = words  # type: ignore[misc]
    return SriovCap(
        offset=base,
        vf_enable=bool(ctrl & SRIOV_CTRL_VFE),
        ari_hierarchy=bool(ctrl & SRIOV_CTRL_ARI),
        initial_vfs=initial,
        total_vfs=total,
        num_vfs=num,
        first_vf_offset=first,
        vf_stride=stride,
        vf_device_id=did,
    )


def decode_aer(cfg: ConfigSpace, base: int) -> Optional[AerCap]:
    """AER uncorrectable (+0x04) and correctable (+0x10) status registers."""
    unc, cor = cfg.dword(base + AER_UNCOR_STATUS), cfg.dword(base + AER_COR_STATUS)
    if unc is None or cor is None:
        return None
    return AerCap(offset=base, uncorrectable_status=unc, correctable_status=cor)


def decode_rebar(cfg: ConfigSpace, base: int) -> Optional[RebarCap]:
    """Resizable BAR: one (cap, ctrl) pair per resizable BAR; ctrl[2:0] = index, [5:7]... count.

    Layout per PCIe r5.0 7.8.6 / pci_regs.h PCI_REBAR_*: ctrl bits [2:0] BAR index, [7:5]
    number of resizable BARs (first entry only), [13:8] current size (2^n MiB); cap bits
    [31:4] supported sizes (bit n+4 = 2^n MiB).
    """
    ctrl0 = cfg.dword(base + REBAR_CTRL)
    if ctrl0 is None:
        return None
    count = max(1, min(6, (ctrl0 >> 5) & 0x7))
    current: dict[str, int] = {}
    supported: dict[str, tuple[int, ...]] = {}
    for i in range(count):
        cap, ctrl = cfg.dword(base + REBAR_CAP + 8 * i), cfg.dword(base + REBAR_CTRL + 8 * i)
        if cap is None or ctrl is None:
            break
        idx = str(ctrl & 0x7)
        code = (ctrl >> 8) & 0x3F
        if code <= REBAR_MAX_SIZE_CODE:  # larger codes are reserved, not sizes (and beyond int64)
            current[idx] = (1 << 20) << code
        supported[idx] = tuple((1 << 20) << n for n in range(28) if cap & (1 << (n + 4)))
    return RebarCap(offset=base, current_sizes=current, supported_sizes=supported)


EXT_DECODERS = {
    EXT_ACS: ("acs", decode_acs),
    EXT_ATS: ("ats", decode_ats),
    EXT_SRIOV: ("sriov", decode_sriov),
    EXT_AER: ("aer", decode_aer),
    EXT_REBAR: ("rebar", decode_rebar),
}


def decode_all(cfg: ConfigSpace) -> dict:
    """Walk both lists and decode every capability gdrdiag knows; never raises on bad bytes.

    Returns a dict with ``caps`` (all entries), ``problems``, ``pcie``, ``link`` (dict or
    None) and ``acs``/``ats``/``sriov``/``aer``/``rebar`` (model objects or None).
    """
    std, p1 = walk_std_caps(cfg)
    ext, p2 = walk_ext_caps(cfg)
    out: dict = {
        "caps": tuple(std + ext),
        "problems": tuple(p1 + p2),
        "pcie": None,
        "link": None,
        "acs": None,
        "ats": None,
        "sriov": None,
        "aer": None,
        "rebar": None,
    }
    exp = next((c for c in std if c.cap_id == CAP_ID_EXP), None)
    if exp is not None:
        out["pcie"] = decode_pcie(cfg, exp.offset)
        out["link"] = decode_link(cfg, exp.offset)
    for c in ext:
        if c.cap_id in EXT_DECODERS:
            key, fn = EXT_DECODERS[c.cap_id]
            if out[key] is None:
                out[key] = fn(cfg, c.offset)
    return out
