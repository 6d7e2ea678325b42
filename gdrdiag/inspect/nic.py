"""RDMA NICs: /sys/class/infiniband joined with PCI functions, netdevs and pyverbs facts.

- ``/sys/class/infiniband/<dev>/device`` -> PCI function; ``device/net/*`` -> netdevs
- ports: ``ports/<p>/{state,phys_state,rate,link_layer}``, ``gids/<i>`` (NIC-01)
- ``fw_ver``, ``node_guid``, ``hca_type``, ``board_id`` (NIC-02)
- PF/VF from the PCI function; a VF's link is its PF's physical link.
- Functions of one device (dual-port PFs ``.0``/``.1``) and the VFs of one PF share one PCIe
  link: running both ports at once splits that link's bandwidth (a dual-port case:
  https://github.com/NVIDIA/nccl/issues/1731).
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Optional

from gdrdiag.hw.sysfs import SysfsTree
from gdrdiag.model.machine import NicInfo, NicPort, PciFunction

# Mellanox/NVIDIA device ids (mlx5_core_pci_table in Linux drivers/net/ethernet/mellanox/mlx5/core/main.c).
MLX_MODELS = {
    0x1013: "ConnectX-4",
    0x1015: "ConnectX-4 Lx",
    0x1017: "ConnectX-5",
    0x1019: "ConnectX-5 Ex",
    0x101B: "ConnectX-6",
    0x101D: "ConnectX-6 Dx",
    0x101F: "ConnectX-6 Lx",
    0x1021: "ConnectX-7",
    0x1023: "ConnectX-8",
    0x101E: "ConnectX mlx5Gen VF",
    0x1018: "ConnectX-5 VF",
    0x101A: "ConnectX-5 Ex VF",
    0x101C: "ConnectX-6 VF",
    0xA2D6: "BlueField-2",
    0xA2DC: "BlueField-3",
}
BDF_RE = re.compile(r"^[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]$")
RATE_RE = re.compile(r"^\s*([0-9]+(?:\.[0-9]+)?)\s*Gb/sec")
ZERO_GID = "0000:0000:0000:0000:0000:0000:0000:0000"
MAX_GIDS = 4


def _state(text: Optional[str]) -> Optional[str]:
    """``"4: ACTIVE"`` -> ``"ACTIVE"``."""
    if not text:
        return None
    return text.partition(":")[2].strip() or text.strip()


def _port(tree: SysfsTree, base: str, port: int) -> NicPort:
    p = f"{base}/ports/{port}"
    unknown: dict[str, str] = {}
    vals = {}
    for key in ("state", "phys_state", "rate", "link_layer"):
        s = tree.try_text(f"{p}/{key}")
        vals[key] = str(s.value).strip() if s.value is not None else None
        if s.value is None:
            unknown[key] = s.reason or "unreadable"
    m = RATE_RE.match(vals["rate"] or "")
    gids = []
    gid_types = []
    for i in range(MAX_GIDS):
        g = tree.try_text(f"{p}/gids/{i}").value
        if g and str(g).strip() != ZERO_GID:
            gids.append(str(g).strip()[:64])
            # RoCE version of this GID (kernel >= 4.9: ports/<p>/gid_attrs/types/<i>).
            t = tree.try_text(f"{p}/gid_attrs/types/{i}").value
            gid_types.append(str(t).strip()[:20] if t else "?")
    return NicPort(
        port=port,
        state=_state(vals["state"]),
        phys_state=_state(vals["phys_state"]),
        rate=vals["rate"],
        rate_gbps=float(m.group(1)) if m else None,
        link_layer=vals["link_layer"],
        gids=tuple(gids),
        gid_types=tuple(gid_types) if any(t != "?" for t in gid_types) else (),
        unknown=unknown,
    )


def _with_verbs_port(port: NicPort, facts: object) -> NicPort:
    """``port`` with the active MTU pyverbs' query_port reported (sysfs has no MTU file)."""
    if not isinstance(facts, dict) or not isinstance(facts.get("ports"), list):
        return port
    for entry in facts["ports"]:
        if isinstance(entry, dict) and entry.get("port") == port.port:
            mtu = entry.get("active_mtu_bytes")
            if isinstance(mtu, int) and mtu > 0:
                return replace(port, active_mtu=mtu)
    return port


def _soft(tree: SysfsTree, base: str, attr: str, unknown: dict[str, str]) -> Optional[str]:
    """An optional device attribute; a failed read is recorded in ``unknown``."""
    s = tree.try_text(f"{base}/{attr}")
    if s.value is None:
        unknown[attr] = s.reason or "unreadable"
        return None
    return str(s.value).strip()[:80]


def _verbs_text(facts: object) -> dict[str, str]:
    """Top-level scalar facts from hw.verbs, as text (its schema belongs to that adapter)."""
    if not isinstance(facts, dict):
        return {}
    return {
        str(k)[:60]: str(v)[:200]
        for k, v in list(facts.items())[:64]
        if isinstance(v, (str, int, float, bool))
    }


def _placement(tree: SysfsTree, base: str) -> tuple[Optional[str], tuple[str, ...]]:
    """The PCI function (BDF) and netdevs of one RDMA device.

    A hardware HCA has a ``device`` link to its PCI function, whose ``net/`` lists its netdevs.
    A software RDMA device (Soft-RoCE ``rxe``, ``siw``) has no ``device`` link: it names the
    netdev it runs on in ``parent`` (Linux drivers/infiniband/core/sysfs.c, ``parent`` attribute
    of software devices), and that netdev's own ``device`` link gives the PCI function.
    """
    real = tree.realpath(f"{base}/device")
    if real:
        return real.rstrip("/").rpartition("/")[2], tuple(tree.listdir(f"{base}/device/net")[:16])
    parent = tree.try_text(f"{base}/parent").value
    parent = str(parent).strip() if parent else ""
    if not parent or "/" in parent:
        return None, ()
    real = tree.realpath(f"/sys/class/net/{parent}/device")
    # A virtio NIC's ``device`` is the virtio device (``.../0000:00:03.0/virtio0``): the PCI
    # function is the nearest BDF above it.
    bdfs = [part for part in (real or "").split("/") if BDF_RE.match(part)]
    return (bdfs[-1] if bdfs else None), (parent,)


def link_key(f: PciFunction) -> str:
    """Functions with the same key share one physical PCIe link (same device, or VFs of one PF)."""
    bdf = f.physfn or f.bdf
    return bdf.rpartition(".")[0]


def rdma_device_names(tree: SysfsTree, verbs: dict) -> list[str]:
    """The RDMA devices sysfs lists, then those only the verbs facts name."""
    vdev = verbs.get("devices") if isinstance(verbs, dict) and isinstance(verbs.get("devices"), dict) else {}
    names = tree.listdir("/sys/class/infiniband")
    known = set(names)
    for extra in sorted(vdev):
        if extra not in known:
            names.append(str(extra))
            known.add(extra)
    return names


def inspect_nics(tree: SysfsTree, pci: tuple[PciFunction, ...], verbs: dict) -> tuple[NicInfo, ...]:
    """One ``NicInfo`` per RDMA device."""
    by_bdf = {f.bdf: f for f in pci}
    vdev = verbs.get("devices") if isinstance(verbs, dict) and isinstance(verbs.get("devices"), dict) else {}
    probes = (
        verbs.get("dmabuf_probe")
        if isinstance(verbs, dict) and isinstance(verbs.get("dmabuf_probe"), dict)
        else {}
    )
    names = rdma_device_names(tree, verbs)
    nics = []
    for name in names[:256]:
        base = f"/sys/class/infiniband/{name}"
        unknown: dict[str, str] = {}
        bdf, netdevs = _placement(tree, base)
        f = by_bdf.get(bdf) if bdf else None
        if f is None:
            unknown["pci"] = f"no PCI function for {name} in sysfs"
        ports = []
        for p in tree.listdir(f"{base}/ports")[:16]:
            if p.isdigit() and len(p) < 4:
                ports.append(_with_verbs_port(_port(tree, base, int(p)), vdev.get(name)))

        pf = by_bdf.get(f.physfn) if f and f.physfn else None
        probe = probes.get(name)
        if probe is None:
            unknown["dmabuf_probe"] = str(verbs.get("reason") or "dma-buf probe not available in hw.verbs")[
                :200
            ]
        nics.append(
            NicInfo(
                name=name,
                bdf=bdf if f else None,
                vendor_id=f.vendor_id if f else None,
                device_id=f.device_id if f else None,
                model=MLX_MODELS.get(f.device_id or -1, "") if f and f.vendor_id == 0x15B3 else "",
                fw_ver=_soft(tree, base, "fw_ver", unknown),
                node_guid=_soft(tree, base, "node_guid", unknown),
                hca_type=_soft(tree, base, "hca_type", unknown),
                board_id=_soft(tree, base, "board_id", unknown),
                netdevs=netdevs,
                ports=tuple(ports),
                is_vf=f.is_vf if f else None,
                pf_bdf=f.physfn if f else None,
                link=(pf.link if pf and pf.link else (f.link if f else None)),
                numa_node=f.numa_node if f else None,
                dmabuf_probe=str(probe)[:200] if probe is not None else None,
                verbs=_verbs_text(vdev.get(name)),
                unknown=unknown,
            )
        )
    # Which RDMA devices share one PCIe link (dual-port PFs, VFs of one PF).
    keys = {n.name: link_key(by_bdf[n.bdf]) for n in nics if n.bdf in by_bdf}
    out = []
    for n in nics:
        k = keys.get(n.name)
        peers = tuple(sorted(m for m, mk in keys.items() if mk == k and m != n.name)) if k else ()
        out.append(replace(n, shares_pcie_link_with=peers))
    return tuple(out)
