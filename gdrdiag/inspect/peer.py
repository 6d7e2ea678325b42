"""GPU<->GPU peer matrix: the driver's P2P facts, the NVLinks between each pair, the path class.

For every ordered pair of CUDA devices (the CUDA facts' ``peers`` list, live or from a bundle):

- P2P facts: ``cuDeviceCanAccessPeer`` and ``cuDeviceGetP2PAttribute`` (performance rank, access
  supported, native atomics, CUDA array access), as ``hw/peer.py`` read them.
- NVLinks: ``src``'s active links (NVML) whose remote PCI address is ``dst``; their count and the
  sum of their one-way rates. A pair with links is class **NV** (``nvidia-smi topo -m``: ``NV18``).
- Otherwise the PCIe class of the two functions, computed as for GPU<->NIC pairs
  (:func:`gdrdiag.inspect.topology.classify`: PIX, PXB, PHB, NODE, SYS), with the narrowest link.

In a VM the guest's PCI tree is synthetic, so a PCIe class is the guest's view only (``reliable``
False); NVLink facts come from the GPU itself and stay reliable.
"""

from __future__ import annotations

from typing import Optional

from gdrdiag.inspect.gpu import normalize_bdf
from gdrdiag.inspect.topology import _narrowest, classify
from gdrdiag.model.machine import (
    CudaDeviceFacts,
    GpuInfo,
    GpuPeerPair,
    NvLink,
    PathClass,
    PciFunction,
    VirtInfo,
)

_BOOL_FACTS = ("can_access_peer", "access_supported", "native_atomics", "array_access")


def _opt_bool(v: object) -> Optional[bool]:
    return v if isinstance(v, bool) else None


def _opt_int(v: object) -> Optional[int]:
    return v if isinstance(v, int) and not isinstance(v, bool) and -(2**31) <= v < 2**31 else None


def inspect_peers(
    cuda_facts: dict,
    devices: tuple[CudaDeviceFacts, ...],
    gpus: tuple[GpuInfo, ...],
    pci: tuple[PciFunction, ...],
    virt: VirtInfo,
    nvml: Optional[dict] = None,
) -> tuple[tuple[GpuPeerPair, ...], dict[str, str]]:
    """(one pair per ordered GPU pair, unknown facts); empty with fewer than two GPUs."""
    unknown: dict[str, str] = {}
    raw = cuda_facts.get("peers") if isinstance(cuda_facts, dict) else None
    if len(devices) < 2:
        return (), unknown
    if not isinstance(raw, list):
        reason = cuda_facts.get("peers_reason") if isinstance(cuda_facts, dict) else None
        reason = reason or "no peer facts (a bundle from before peer facts were collected)"
        unknown["peers"] = str(reason)[:300]
        raw = []
    by_ordinal = {d.ordinal: normalize_bdf(d.pci_bus_id) for d in devices}
    gpu_by_bdf = {g.bdf: g for g in gpus}
    func_by_bdf = {f.bdf: f for f in pci}
    facts = {}
    for item in raw[:4096]:
        if isinstance(item, dict):
            src, dst = _opt_int(item.get("src_ordinal")), _opt_int(item.get("dst_ordinal"))
            if src is not None and dst is not None:
                facts[(src, dst)] = item
    out = []
    for src in sorted(by_ordinal):
        for dst in sorted(by_ordinal):
            if src == dst:
                continue
            p2p = _nvml_p2p(nvml, by_ordinal[src], by_ordinal[dst])
            out.append(_pair(src, dst, by_ordinal, facts.get((src, dst)), gpu_by_bdf, func_by_bdf, virt, p2p))
    return tuple(out), unknown


def _nvml_p2p(nvml: Optional[dict], src_bdf: str, dst_bdf: str) -> dict[str, str]:
    """NVML's P2P status of the ordered pair (``nvidia-smi topo -p2p``), capability -> status name."""
    gpus = nvml.get("gpus") if isinstance(nvml, dict) else None
    entry = gpus.get(src_bdf) if isinstance(gpus, dict) else None
    p2p = entry.get("p2p") if isinstance(entry, dict) else None
    got = p2p.get(dst_bdf) if isinstance(p2p, dict) else None
    if not isinstance(got, dict):
        return {}
    return {k: v[:60] for k, v in got.items() if isinstance(k, str) and isinstance(v, str)}


def _cuda_values(fact: Optional[dict], unknown: dict[str, str]) -> dict:
    """The pair's CUDA P2P facts (bundles are untrusted: wrong types become None)."""
    values: dict = {}
    if fact is None:
        unknown["p2p"] = "no CUDA peer facts for this pair"
        return values
    for k in _BOOL_FACTS:
        values[k] = _opt_bool(fact.get(k))
    values["performance_rank"] = _opt_int(fact.get("performance_rank"))
    given = fact.get("unknown")
    for k, v in given.items() if isinstance(given, dict) else ():
        if isinstance(k, str) and isinstance(v, str):
            unknown[k] = v[:200]
    return values


def _links(
    g: Optional[GpuInfo], peer_gpu: Optional[GpuInfo], dst_bdf: str, gpu_by_bdf: dict, p2p: dict, can: object
) -> tuple[list[NvLink], str]:
    """``g``'s active links that join it to ``dst_bdf``, and a note when they were inferred."""
    links = [lk for lk in (g.nvlinks if g else ()) if lk.active and lk.remote_bdf == dst_bdf]
    nvml_nvlink = p2p.get("nvlink")
    if links or g is None or not (nvml_nvlink == "OK" or nvml_nvlink is None or "unknown" in nvml_nvlink):
        return links, ""
    # No link names dst as its remote end: the remote is an NVSwitch, or unknown (a VM reports
    # ffffffff:ff:ff.0). Count the active links whose remote is not another GPU, as nvidia-smi
    # topo -m does (NV18 for an HGX H100 pair and for the x2 VM): on NVML's word when it gives
    # one, else when both GPUs have such links and CUDA offers peer access.
    unnamed = [lk for lk in g.nvlinks if lk.active and lk.remote_bdf not in gpu_by_bdf]
    peer_active = [lk for lk in (peer_gpu.nvlinks if peer_gpu else ()) if lk.active]
    if not unnamed or not (nvml_nvlink == "OK" or (peer_active and can)):
        return [], ""
    why = (
        "NVML NVLink P2P status OK"
        if nvml_nvlink == "OK"
        else "NVML gave no NVLink P2P status; both GPUs have active NVLinks and CUDA offers peer access"
    )
    return unnamed, (
        f"{why}; the links' remote end is not a GPU ({unnamed[0].remote_bdf or '?'}): all active "
        "links counted (NVSwitch, or remote unknown in a VM)"
    )


def _pcie(
    sf: Optional[PciFunction], df: Optional[PciFunction], func_by_bdf: dict, virt: VirtInfo, unknown: dict
) -> dict:
    """The PCIe class of a pair without NVLink, its bridges and narrowest link, and the VM caveat."""
    if sf is None or df is None:
        unknown["path_class"] = "a GPU of the pair has no PCI function in sysfs"
        return {"path_class": None, "reliable": not virt.is_vm}
    cls, crossed, note = classify(sf, df)
    on_path = [sf, df] + [func_by_bdf[b] for b in crossed if b in func_by_bdf]
    narrow = _narrowest(on_path, True)
    if virt.is_vm:
        note = (
            "VM: the guest PCI tree is synthetic"
            + (" (GPUs straight on the root bus)" if virt.flat_pci else "")
            + "; the physical PCIe path between the GPUs and its ACS routing depend on the host"
        )
    if cls is None:
        unknown["path_class"] = note
    return {
        "path_class": cls,
        "reliable": not virt.is_vm,
        "note": note,
        "bridges": tuple(crossed),
        "narrowest_capable": narrow,
        "narrowest_current": _narrowest(on_path, False),
    }


def _pair(
    src: int,
    dst: int,
    by_ordinal: dict[int, str],
    fact: Optional[dict],
    gpu_by_bdf: dict[str, GpuInfo],
    func_by_bdf: dict[str, PciFunction],
    virt: VirtInfo,
    p2p: dict[str, str],
) -> GpuPeerPair:
    src_bdf, dst_bdf = by_ordinal[src], by_ordinal[dst]
    unknown: dict[str, str] = {}
    values = _cuda_values(fact, unknown)
    g = gpu_by_bdf.get(src_bdf)
    links, link_note = _links(
        g, gpu_by_bdf.get(dst_bdf), dst_bdf, gpu_by_bdf, p2p, values.get("can_access_peer")
    )
    nvlinks: Optional[int] = len(links)
    rate: Optional[float] = None
    if g is None or not g.nvlinks:
        # No NVLink facts: NVML absent, or a GPU without NVLink (then 0 links is the truth).
        nvml_reason = (
            (g.unknown.get("nvml") or g.unknown.get("nvml.nvlinks")) if g else "GPU not on the PCI bus"
        )
        if nvml_reason:
            nvlinks = None
            unknown["nvlinks"] = nvml_reason[:200]
    if links:
        rates = [lk.gbytes_per_s for lk in links]
        rate = sum(r for r in rates if r is not None) if all(r is not None for r in rates) else None
        if rate is None:
            unknown["nvlink_gbytes_per_s"] = "a link's rate is unknown"
        path: dict = {"path_class": PathClass.NV, "reliable": True, "note": link_note}
    else:
        path = _pcie(func_by_bdf.get(src_bdf), func_by_bdf.get(dst_bdf), func_by_bdf, virt, unknown)
    return GpuPeerPair(
        src_ordinal=src,
        dst_ordinal=dst,
        src_bdf=src_bdf,
        dst_bdf=dst_bdf,
        nvlinks=nvlinks,
        nvlink_gbytes_per_s=rate,
        nvml_p2p=p2p,
        unknown=unknown,
        **path,
        **values,
    )
