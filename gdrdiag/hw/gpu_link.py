"""The GPU's PCIe link as sysfs shows it, for gather-bench's ratio to the link's raw rate.

Reads ``/sys/bus/pci/devices/<bus id>/{current,max}_link_{speed,width}`` (text such as
``32.0 GT/s PCIe`` and ``16``; Linux ``drivers/pci/pci-sysfs.c``) and, when readable, the
PCIe capability's DevCtl/LnkCtl from ``config`` for MPS, MRRS and RCB (PCIe Base Spec r5.0
sec. 7.5.3.4 and 7.5.3.7). Anything unreadable is ``None`` with a reason, never 0: config space
beyond 64 bytes needs CAP_SYS_ADMIN (Linux drivers/pci/pci-sysfs.c), and in a VM MPS/MRRS are the
guest's virtual view (Linux drivers/vfio/pci/vfio_pci_config.c virtualizes them). GPUs lower
their link speed at idle (nvidia-smi: the current link generation and width "may be reduced when
the GPU is not in use"), so callers sample the link while a copy is running.

Every read goes through ``SysfsTree`` and ``pciconfig`` (the same walker and decoder inspect uses),
so ``root`` (or a ``tree``) points the reader at a fixture tree or an unpacked bundle.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

from gdrdiag.hw import pciconfig
from gdrdiag.hw.sysfs import SysfsError, SysfsTree
from gdrdiag.units import pcie_raw_gbytes_per_s

# GT/s per lane -> PCIe generation (PCIe Base Spec 4.2.1 data rates).
_GEN_BY_GTS = {2.5: 1, 5.0: 2, 8.0: 3, 16.0: 4, 32.0: 5, 64.0: 6}
_SPEED_RE = re.compile(r"^\s*([0-9.]+)\s*GT/s")


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


def _registers(tree: SysfsTree, bdf: str) -> tuple[Optional[dict[str, int]], str]:
    """MPS/MRRS/RCB from the PCI Express capability (pciconfig's walker); None + reason if unreadable."""
    try:
        cfg = pciconfig.read_config(tree, bdf)
    except SysfsError as exc:
        return None, f"config: {exc}"
    caps, problems = pciconfig.walk_std_caps(cfg)
    exp = next((c for c in caps if c.cap_id == pciconfig.CAP_ID_EXP), None)
    decoded = pciconfig.decode_pcie(cfg, exp.offset) if exp is not None else None
    if decoded is None or decoded.rcb_bytes is None:
        beyond = any("beyond readable" in p for p in problems)
        if cfg.truncated_by_privilege or beyond or (exp is not None and decoded is None):
            return None, (
                f"PCIe capability beyond the readable config bytes ({cfg.readable} readable; "
                "full config space needs root)"
            )
        return None, "; ".join(problems) or "no PCI Express capability found"
    return {"mps": decoded.max_payload, "mrrs": decoded.max_read_request, "rcb": decoded.rcb_bytes}, ""


def read_link(bus_id: str, root: str = "/", tree: Optional[SysfsTree] = None) -> GpuLink:
    """Read the link of the PCI function ``bus_id``; unreadable facts are None with a reason.

    Every read goes through ``SysfsTree`` (``root`` or an explicit ``tree``), like the rest of inspect.
    """
    tree = tree if tree is not None else SysfsTree(root)
    bdf = normalize_bus_id(bus_id)
    base = f"/sys/bus/pci/devices/{bdf}"
    unknown: dict[str, str] = {}
    vals: dict[str, Optional[int]] = {}
    for key, fname, parse in (
        ("generation", "current_link_speed", parse_speed),
        ("max_generation", "max_link_speed", parse_speed),
        ("width", "current_link_width", _parse_width),
        ("max_width", "max_link_width", _parse_width),
    ):
        text, err = tree.try_text(f"{base}/{fname}")
        value = parse(str(text)) if text is not None else None
        if value is None:
            unknown[key] = f"{fname}: {err}" if err else f"{fname}: unrecognised value {text!r}"
        vals[key] = value
    raw = None
    if vals["generation"] and vals["width"]:
        raw = pcie_raw_gbytes_per_s(vals["generation"], vals["width"])
    else:
        unknown["raw_gbytes_per_s"] = "link generation or width unknown"
    regs, why = _registers(tree, bdf)
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


@dataclass(frozen=True)
class LinkSample:
    """The GPU link read while copies ran: the link (None if unreadable) and one line saying it."""

    link: Optional[GpuLink]
    text: str


def describe(link: GpuLink) -> str:
    """``Gen5 x16 (63.02 GB/s raw, sysfs, sampled during a copy)``, or ``unknown: <reasons>``."""
    if link.raw_gbytes_per_s:
        return (
            f"Gen{link.generation} x{link.width} "
            f"({link.raw_gbytes_per_s:.2f} GB/s raw, sysfs, sampled during a copy)"
        )
    return "unknown: " + "; ".join(f"{k}: {v}" for k, v in link.unknown.items())


def sample_under_load(
    bus_id: str,
    start_load: Callable[[], None],
    end_load: Callable[[], None],
    reader: Callable[[str], GpuLink] = read_link,
) -> LinkSample:
    """Start traffic, read the link while it runs, then wait for the traffic to end.

    GPUs lower their link speed when idle and raise it under load (nvidia-smi's documentation,
    https://docs.nvidia.com/deploy/nvidia-smi/index.html, says so of the current link), so
    a speed read at rest says nothing about the speed a transfer gets; copy-bench and
    gather-bench both read it here, between queuing copies and waiting for them.
    """
    start_load()
    try:
        link = reader(bus_id)
    except ValueError as exc:  # not a PCI bus id
        return LinkSample(None, f"unknown: {exc}")
    finally:
        end_load()
    return LinkSample(link, describe(link))


def sample_during_copies(
    bus_id: str, dst_ptr: int, src_ptr: int, nbytes: int, stream: Any, copies: int = 4
) -> LinkSample:
    """Queue ``copies`` host->device copies of ``nbytes`` on ``stream`` and read the link meanwhile."""
    from gdrdiag.hw import cuda

    def start() -> None:
        for _ in range(copies):
            cuda.call(cuda.driver().cuMemcpyHtoDAsync, dst_ptr, src_ptr, nbytes, stream.handle)

    return sample_under_load(bus_id, start, stream.synchronize)
