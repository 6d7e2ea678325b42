"""The GPU's PCIe link as sysfs shows it, for gather-bench's ratio to the link's raw rate.

Reads ``/sys/bus/pci/devices/<bus id>/{current,max}_link_{speed,width}`` (text such as
``32.0 GT/s PCIe`` and ``16``; Linux ``drivers/pci/pci-sysfs.c``) and, when readable, the
PCIe capability's DevCtl/LnkCtl from ``config`` for MPS, MRRS and RCB (diagnostics-kb 0.1).
Anything unreadable is ``None`` with a reason, never 0: config space beyond 64 bytes needs
CAP_SYS_ADMIN (diagnostics-kb 0, [R3]), and in a VM MPS/MRRS are the guest's virtual view
([R22]). GPUs lower their link speed at idle (diagnostics-kb LINK-01), so callers sample the
link while a copy is running.

``root`` lets tests point the reader at a fixture tree shaped like ``/``.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import Optional

from gdrdiag.units import pcie_raw_gbytes_per_s

# GT/s per lane -> PCIe generation (PCIe Base Spec 4.2.1 data rates).
_GEN_BY_GTS = {2.5: 1, 5.0: 2, 8.0: 3, 16.0: 4, 32.0: 5, 64.0: 6}
_SPEED_RE = re.compile(r"^\s*([0-9.]+)\s*GT/s")

PCI_CAP_ID_EXP = 0x10


@dataclass(frozen=True)
class GpuLink:
    """Negotiated link of one GPU; ``raw_gbytes_per_s`` is the encoded line rate per direction."""

    bus_id: str
    generation: Optional[int] = None
    width: Optional[int] = None
    max_generation: Optional[int] = None
    max_width: Optional[int] = None
    raw_gbytes_per_s: Optional[float] = None
    mps: Optional[int] = None
    mrrs: Optional[int] = None
    rcb: Optional[int] = None
    unknown: dict[str, str] = field(default_factory=dict)


def normalize_bus_id(bus_id: str) -> str:
    """CUDA/NVML bus ids (``00000000:06:00.0``) -> the sysfs name (``0000:06:00.0``)."""
    m = re.match(r"^\s*([0-9a-fA-F]+):([0-9a-fA-F]+):([0-9a-fA-F]+)\.([0-7])\s*$", bus_id)
    if not m:
        raise ValueError(f"not a PCI bus id: {bus_id!r}")
    dom, bus, dev, fn = m.groups()
    return f"{int(dom, 16):04x}:{int(bus, 16):02x}:{int(dev, 16):02x}.{fn}"


def parse_speed(text: str) -> Optional[int]:
    """``"32.0 GT/s PCIe"`` -> 5; None for ``Unknown`` or unexpected text."""
    m = _SPEED_RE.match(text)
    if not m:
        return None
    return _GEN_BY_GTS.get(float(m.group(1)))


def _read(path: str) -> tuple[Optional[str], Optional[str]]:
    try:
        with open(path, "r", encoding="ascii", errors="replace") as fh:
            return fh.read(4096).strip(), None
    except OSError as exc:
        return None, f"{path}: {exc.strerror or exc}"


def _devctl_from_config(cfg: bytes) -> tuple[Optional[dict[str, int]], str]:
    """MPS/MRRS/RCB from config bytes via the capability list; None + reason if unreadable."""
    if len(cfg) < 0x40:
        return None, "config space shorter than the 64-byte header"
    if not cfg[0x06] & 0x10:  # Status register: capabilities list present
        return None, "no capability list"
    ptr, seen = cfg[0x34] & 0xFC, set()
    while ptr and ptr not in seen:
        seen.add(ptr)
        if ptr + 0x12 > len(cfg):
            return None, (
                "PCIe capability beyond the readable config bytes "
                f"({len(cfg)} readable; full config space needs root)"
            )
        if cfg[ptr] == PCI_CAP_ID_EXP:
            devctl = int.from_bytes(cfg[ptr + 0x08 : ptr + 0x0A], "little")
            lnkctl = int.from_bytes(cfg[ptr + 0x10 : ptr + 0x12], "little")
            return {
                "mps": 128 << ((devctl >> 5) & 7),
                "mrrs": 128 << ((devctl >> 12) & 7),
                "rcb": 128 if lnkctl & 0x8 else 64,
            }, ""
        ptr = cfg[ptr + 1] & 0xFC
    return None, "no PCI Express capability found"


def read_link(bus_id: str, root: str = "/") -> GpuLink:
    """Read the link of the PCI function ``bus_id``; unreadable facts are None with a reason."""
    bdf = normalize_bus_id(bus_id)
    base = os.path.join(root, "sys/bus/pci/devices", bdf)
    unknown: dict[str, str] = {}
    vals: dict[str, Optional[int]] = {}
    for key, fname, parse in (
        ("generation", "current_link_speed", parse_speed),
        ("max_generation", "max_link_speed", parse_speed),
        ("width", "current_link_width", _parse_width),
        ("max_width", "max_link_width", _parse_width),
    ):
        text, err = _read(os.path.join(base, fname))
        value = parse(text) if text is not None else None
        if value is None:
            unknown[key] = err or f"{fname}: unrecognised value {text!r}"
        vals[key] = value
    raw = None
    if vals["generation"] and vals["width"]:
        raw = pcie_raw_gbytes_per_s(vals["generation"], vals["width"])
    else:
        unknown["raw_gbytes_per_s"] = "link generation or width unknown"
    regs: Optional[dict[str, int]] = None
    try:
        with open(os.path.join(base, "config"), "rb") as fh:
            cfg = fh.read(4096)
        regs, why = _devctl_from_config(cfg)
    except OSError as exc:
        why = f"config: {exc.strerror or exc}"
    if regs is None:
        for k in ("mps", "mrrs", "rcb"):
            unknown[k] = why
        regs = {}
    return GpuLink(
        bus_id=bdf,
        generation=vals["generation"],
        width=vals["width"],
        max_generation=vals["max_generation"],
        max_width=vals["max_width"],
        raw_gbytes_per_s=raw,
        mps=regs.get("mps"),
        mrrs=regs.get("mrrs"),
        rcb=regs.get("rcb"),
        unknown=unknown,
    )


def _parse_width(text: str) -> Optional[int]:
    text = text.strip().lstrip("xX")
    return int(text) if text.isdigit() and int(text) > 0 else None
