"""GPU<->NIC path class, bridges crossed, narrowest link and NUMA nodes.

Classification follows NCCL's reading of sysfs (src/graph/xml.cc and src/graph/paths.cc,
https://github.com/NVIDIA/nccl) so the class matches what NCCL and ``nvidia-smi topo -m`` (its
printed legend) report:

- Each device's realpath is ``/sys/devices/pciDDDD:BB/<bridge>/.../<device>``. NCCL walks up
  *two* path components at a time, so a switch's downstream + upstream port (and a root port
  with the switch above it) collapse into one PCI node. For a bridge chain ``c0..cn-1`` above
  a device the PCI nodes are ``c[n-2], c[n-4], ...``.
- Same host bridge: no shared PCI node -> **PHB**; shared nodes -> the path crosses
  ``len(a) + len(b) - 2*shared + 1`` PCI nodes: 1 -> **PIX**, more -> **PXB**.
- Different host bridges: same NUMA node -> **NODE**, different -> **SYS**.

In a VM the guest's PCI tree is synthetic (flat bus 0, or QEMU root ports), so the class says
nothing about the physical path; ``reliable`` is False and ``note`` says why.

The narrowest link is the minimum over every function on the path below the meeting
point - each of them reports a link the traffic crosses - by capable rate (what NCCL uses) and
by current rate.
"""

from __future__ import annotations

from typing import Optional

from gdrdiag.model.machine import GpuInfo, LinkHop, NicInfo, PathClass, PciFunction, TopologyPair, VirtInfo


def bridge_chain(f: PciFunction) -> list[str]:
    """BDFs of the bridges above ``f``, top first, from its sysfs realpath."""
    from gdrdiag.inspect.pci import BDF_RE

    parts = [p for p in f.sysfs_path.strip("/").split("/") if BDF_RE.match(p)]
    return parts[:-1] if parts and parts[-1] == f.bdf else parts


def pci_nodes(chain: list[str]) -> list[str]:
    """NCCL's collapsed PCI nodes above a device, top first (two components per step)."""
    return list(reversed(chain[-2::-2])) if len(chain) >= 2 else []


def classify(a: PciFunction, b: PciFunction) -> tuple[Optional[PathClass], list[str], str]:
    """(class, bridge BDFs crossed, note) for the path between two functions."""
    if not a.host_bridge or not b.host_bridge:
        return None, [], "sysfs path unknown"
    ca, cb = bridge_chain(a), bridge_chain(b)
    if a.host_bridge != b.host_bridge:
        if a.numa_node is None or b.numa_node is None:
            return None, ca + cb, "different host bridges and NUMA node unknown: NODE or SYS"
        cls = PathClass.NODE if a.numa_node == b.numa_node else PathClass.SYS
        return cls, ca + cb, ""
    na, nb = pci_nodes(ca), pci_nodes(cb)
    shared = 0
    while shared < min(len(na), len(nb)) and na[shared] == nb[shared]:
        shared += 1
    if shared == 0:
        crossed = ca + cb
        return PathClass.PHB, crossed, ""
    hops = len(na) + len(nb) - 2 * shared + 1
    top = na[shared - 1]
    # bridges below the meeting node on each side (the meeting switch's ports included)
    crossed = ca[ca.index(top) + 1 :] + cb[cb.index(top) + 1 :]
    return (PathClass.PIX if hops == 1 else PathClass.PXB), crossed, ""


def _narrowest(funcs: list[PciFunction], capable: bool) -> Optional[LinkHop]:
    best: Optional[LinkHop] = None
    for f in funcs:
        link = f.link
        if link is None:
            continue
        speed, width = (link.max_speed_gts, link.max_width) if capable else (link.speed_gts, link.width)
        rate = link.max_raw_gbytes_per_s if capable else link.raw_gbytes_per_s
        if speed is None or width is None or rate is None:
            continue
        if best is None or rate < best.raw_gbytes_per_s:
            best = LinkHop(bdf=f.bdf, speed_gts=speed, width=width, raw_gbytes_per_s=rate)
    return best


def inspect_topology(
    pci: tuple[PciFunction, ...], gpus: tuple[GpuInfo, ...], nics: tuple[NicInfo, ...], virt: VirtInfo
) -> tuple[TopologyPair, ...]:
    """One ``TopologyPair`` per GPU x RDMA device."""
    by_bdf = {f.bdf: f for f in pci}
    out = []
    for g in gpus:
        gf = by_bdf.get(g.bdf)
        for n in nics:
            nf = by_bdf.get(n.bdf or "")
            if gf is None or nf is None:
                out.append(
                    TopologyPair(
                        gpu_bdf=g.bdf,
                        nic=n.name,
                        nic_bdf=n.bdf or "",
                        unknown={"path_class": "NIC or GPU has no PCI function in sysfs"},
                    )
                )
                continue
            cls, crossed, note = classify(gf, nf)
            funcs = [gf, nf] + [by_bdf[b] for b in crossed if b in by_bdf]
            reliable = not virt.is_vm
            if virt.is_vm:
                note = (
                    "VM: the guest PCI tree is synthetic"
                    + (" (endpoints straight on the root bus)" if virt.flat_pci else "")
                    + "; the physical path and its class depend on the host"
                )
            unknown = {"path_class": note} if cls is None else {}
            out.append(
                TopologyPair(
                    gpu_bdf=g.bdf,
                    nic=n.name,
                    nic_bdf=nf.bdf,
                    path_class=cls,
                    reliable=reliable,
                    note=note,
                    bridges=tuple(crossed),
                    narrowest_capable=_narrowest(funcs, True),
                    narrowest_current=_narrowest(funcs, False),
                    gpu_numa=gf.numa_node,
                    nic_numa=nf.numa_node,
                    unknown=unknown,
                )
            )
    return tuple(out)
