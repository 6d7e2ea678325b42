"""Build a Report from one public case (tests/cases/*.toml, format in tests/cases/README.md).

The machine is what the thread states (assumptions are listed in the file's ``assumed``); the rows
are the numbers exactly as posted, provider ``posted`` (a person's hardware numbers, not re-checkable)
and the tool the thread named. Nothing here is a gdrdiag measurement.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

import tomllib

from gdrdiag.inspect.collect import check_device_counts
from gdrdiag.inspect.peer import inspect_peers
from gdrdiag.inspect.topology import inspect_topology
from gdrdiag.model.machine import (
    AcsCap,
    CudaDeviceFacts,
    GpuInfo,
    GpuPeerPair,
    KernelInfo,
    MachineInfo,
    NicInfo,
    NicPort,
    PathClass,
    PcieCap,
    PcieLink,
    PciFunction,
    PortType,
    TopologyPair,
    VirtInfo,
)
from gdrdiag.model.params import ImportedMetrics, ImportedParams, RunSettings
from gdrdiag.model.report import Report
from gdrdiag.model.results import BenchResult, SampleStats, Status
from gdrdiag.model.vocabulary import AccessFlags, MemoryKind, Provider
from gdrdiag.units import pcie_raw_gbytes_per_s

CASES = Path(__file__).resolve().parent
_GEN = {2.5: 1, 5.0: 2, 8.0: 3, 16.0: 4, 32.0: 5, 64.0: 6}
_PERFTEST = {"ib_write_bw": "write_bw", "ib_read_bw": "read_bw", "ib_send_bw": "send_bw"}
_TOOLS = {
    "bandwidthTest": Provider.BANDWIDTH_TEST.value,
    "nvbandwidth": Provider.NVBANDWIDTH.value,
    "p2pBandwidthLatencyTest": Provider.P2P_TEST.value,
    "nccl-tests": Provider.NCCL_TESTS.value,
}
BASE_ACCESS = AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE


@dataclass(frozen=True)
class Case:
    """One public thread: where it is, what it concluded, and the Report built from it."""

    name: str
    url: str
    cause: str
    conclusion: str
    report: Report


def _link(text: Optional[str], capable: Optional[str] = None) -> Optional[PcieLink]:
    if not text:
        return None
    speed, width = _speed_width(text)
    max_speed, max_width = _speed_width(capable) if capable else (speed, width)
    raw = pcie_raw_gbytes_per_s(_GEN[speed], width)
    max_raw = pcie_raw_gbytes_per_s(_GEN[max_speed], max_width)
    return PcieLink(
        speed_gts=speed,
        width=width,
        max_speed_gts=max_speed,
        max_width=max_width,
        source="posted",
        speed_downgraded=speed < max_speed,
        width_downgraded=width < max_width,
        raw_gbytes_per_s=raw,
        max_raw_gbytes_per_s=max_raw,
    )


def _speed_width(text: str) -> tuple[float, int]:
    speed, _, width = text.partition("x")
    return float(speed), int(width)


def _pcie(mps: int, mrrs: int, port_type: PortType = PortType.ENDPOINT) -> PcieCap:
    return PcieCap(
        offset=0x68,
        version=2,
        port_type=port_type,
        max_payload_supported=max(256, mps),
        ext_tag_supported=True,
        flr=True,
        relaxed_ordering=True,
        ext_tag=True,
        no_snoop=True,
        max_payload=mps,
        max_read_request=mrrs,
    )


@dataclass
class _Tree:
    """A PCI tree as sysfs would show it, built from a case's ``[[machine.switches]]``.

    Each switch (or chipset) hangs off its own root port on its host bridge; the devices it
    serves sit below its downstream ports; every other device has a root port of its own on host
    bridge 0. Paths are ``/sys/devices/pciDDDD:HB/<root port>/<upstream>/<downstream>/<device>``,
    the shape inspect's topology code reads, so the case's classes (PIX, PHB, NODE, ...), bridges
    and narrowest links come from the same code as a live machine's.
    """

    functions: list[PciFunction]
    gpu_bdfs: list[str]
    nic_bdfs: list[str]
    next_bus: int = 0x10

    def bus(self) -> int:
        self.next_bus += 1
        return self.next_bus


def _bridge(bdf: str, path: str, parent: Optional[str], hb: str, kind: PortType, link, numa, acs: bool):
    return PciFunction(
        bdf=bdf,
        sysfs_path=path,
        parent_bdf=parent,
        host_bridge=hb,
        is_bridge=True,
        numa_node=numa,
        link=link,
        pcie=_pcie(256, 512, kind),
        acs=AcsCap(
            0x200,
            0x5F,
            0x1D,
            ("ReqRedir", "CmpltRedir"),
            ("SrcValid", "ReqRedir", "CmpltRedir", "UpstreamFwd"),
        )
        if acs
        else None,
    )


def _tree(facts: dict[str, Any], gpu_link, gpu_links: list, nic_link, mps: int, mrrs: int) -> _Tree:
    """The case's PCI tree (see :class:`_Tree`)."""
    ngpus, nnics = int(facts.get("gpus", 1)), int(facts.get("nics", 1)) if _has_nics(facts) else 0
    tree = _Tree([], [""] * ngpus, [""] * nnics)
    # (kind, index) -> (sysfs path of the device's parent port, that port's BDF, host bridge, NUMA node,
    # ACS redirect on the port, the port is a root port of its own)
    placed: dict[tuple[str, int], tuple[str, str, str, Any, bool, bool]] = {}
    for si, sw in enumerate(facts["switches"]):
        hb_num = int(sw.get("host_bridge", 0))
        hb, numa = f"pci0000:{hb_num:02x}", sw.get("numa", facts.get("gpu_numa"))
        rp = f"0000:{hb_num:02x}:{si + 1:02x}.1"
        uplink = _link(sw.get("uplink"), sw.get("uplink_capable"))
        up = f"0000:{tree.bus():02x}:00.0"
        acs = bool(sw.get("acs_redirect"))
        rp_path = f"/sys/devices/{hb}/{rp}"
        tree.functions.append(_bridge(rp, rp_path, None, hb, PortType.ROOT_PORT, uplink, numa, acs))
        tree.functions.append(
            _bridge(up, f"{rp_path}/{up}", rp, hb, PortType.SWITCH_UPSTREAM, uplink, numa, False)
        )
        dp_bus = tree.bus()
        members = [("gpu", g) for g in sw.get("gpus", [])] + [("nic", n) for n in sw.get("nics", [])]
        for k, member in enumerate(members):
            dp = f"0000:{dp_bus:02x}:{k:02x}.0"
            placed[member] = (f"{rp_path}/{up}/{dp}", dp, hb, numa, acs, False)
    for kind, count in (("gpu", ngpus), ("nic", nnics)):
        for i in range(count):
            if (kind, i) not in placed:
                rp = f"0000:00:{0x10 + len(placed):02x}.1"
                placed[(kind, i)] = (f"/sys/devices/pci0000:00/{rp}", rp, "pci0000:00", None, False, True)
    for (kind, i), (port_path, port, hb, numa, acs, own_root_port) in sorted(placed.items()):
        link = (
            (gpu_links[i] if i < len(gpu_links) and gpu_links[i] else gpu_link) if kind == "gpu" else nic_link
        )
        numa = numa if numa is not None else facts.get(f"{kind}_numa")
        upstream = None if own_root_port else port_path.rsplit("/", 2)[-2]
        port_type = PortType.ROOT_PORT if own_root_port else PortType.SWITCH_DOWNSTREAM
        tree.functions.append(_bridge(port, port_path, upstream, hb, port_type, link, numa, acs))
        bdf = f"0000:{tree.bus():02x}:00.0"
        tree.functions.append(
            PciFunction(
                bdf=bdf,
                sysfs_path=f"{port_path}/{bdf}",
                parent_bdf=port,
                host_bridge=hb,
                numa_node=numa,
                link=link,
                pcie=_pcie(mps, mrrs) if kind == "gpu" else _pcie(256, 4096),
                is_vf=facts.get("nic_vf") if kind == "nic" else None,
            )
        )
        (tree.gpu_bdfs if kind == "gpu" else tree.nic_bdfs)[i] = bdf
    return tree


def _has_nics(facts: dict[str, Any]) -> bool:
    stated_in_a_switch = any(sw.get("nics") for sw in facts.get("switches", []))
    return bool(
        facts.get("nic") or facts.get("nic_port_gbps") or facts.get("path_class") or stated_in_a_switch
    )


def build_machine(facts: dict[str, Any]) -> MachineInfo:
    """A MachineInfo holding only what the thread stated."""
    ngpus = int(facts.get("gpus", 1))
    mps, mrrs = int(facts.get("mps", 256)), int(facts.get("mrrs", 4096))
    gpu_link = _link(facts.get("gpu_link"), facts.get("gpu_link_capable"))
    nic_link = _link(facts.get("nic_link"))
    gpu_links = [_link(text) if text else None for text in facts.get("gpu_links", [])]
    tree = _tree(facts, gpu_link, gpu_links, nic_link, mps, mrrs) if facts.get("switches") else None
    gpus, pci = [], list(tree.functions) if tree else []
    for i in range(ngpus):
        bdf = tree.gpu_bdfs[i] if tree else f"0000:{0x18 + i:02x}:00.0"
        link = gpu_links[i] if i < len(gpu_links) and gpu_links[i] else gpu_link
        gpus.append(
            GpuInfo(
                bdf=bdf,
                name=str(facts.get("gpu", "")),
                cuda_ordinal=i,
                link=link,
                link_sampled_idle=link is None,
                numa_node=_home(facts, "gpu_numa"),
            )
        )
        if not tree:
            pci.append(
                PciFunction(bdf=bdf, pcie=_pcie(mps, mrrs), link=link, numa_node=facts.get("gpu_numa"))
            )
    nics = []
    if _has_nics(facts):
        for i in range(int(facts.get("nics", 1))):
            bdf = tree.nic_bdfs[i] if tree else f"0000:{0x80 + i:02x}:00.0"
            port = NicPort(
                port=1,
                state="ACTIVE",
                rate_gbps=facts.get("nic_port_gbps"),
                link_layer=facts.get("link_layer"),
                active_mtu=facts.get("mtu"),
            )
            nics.append(
                NicInfo(
                    name=f"mlx5_{i}",
                    bdf=bdf,
                    model=str(facts.get("nic", "")),
                    ports=(port,),
                    is_vf=facts.get("nic_vf"),
                    link=nic_link,
                    numa_node=facts.get("nic_numa"),
                )
            )
            if not tree:
                pci.append(
                    PciFunction(bdf=bdf, pcie=_pcie(256, 4096), link=nic_link, is_vf=facts.get("nic_vf"))
                )
    virt = VirtInfo(is_vm=facts.get("vm"), iommu_mode=facts.get("iommu"))
    topology: tuple[TopologyPair, ...] = ()
    peers: tuple[GpuPeerPair, ...] = ()
    if tree:
        # the classes, bridges and narrowest links come from inspect's own code over the stated tree
        topology = inspect_topology(tuple(pci), tuple(gpus), tuple(nics), virt)
        peers = _peers(facts, tuple(gpus), tuple(pci), virt)
    elif facts.get("path_class") and gpus and nics:
        topology = tuple(
            TopologyPair(
                gpu_bdf=g.bdf,
                nic=nics[0].name,
                nic_bdf=nics[0].bdf or "",
                path_class=PathClass(facts["path_class"]),
                reliable=not facts.get("vm"),
                gpu_numa=facts.get("gpu_numa"),
                nic_numa=facts.get("nic_numa"),
            )
            for g in gpus
        )
    release = facts.get("kernel")
    version = tuple(int(x) for x in release.split("-")[0].split(".")[:3] if x.isdigit()) if release else ()
    kernel = KernelInfo(
        release=release,
        version_tuple=version,
        mlx5_out_of_tree=facts.get("mlx5_out_of_tree"),
        peermem_loaded=facts.get("peermem"),
    )
    return MachineInfo(
        source="posted",
        pci=tuple(pci),
        gpus=tuple(gpus),
        nics=tuple(nics),
        virt=virt,
        kernel=kernel,
        topology=topology,
        peers=peers,
    )


def _peers(
    facts: dict[str, Any], gpus: tuple[GpuInfo, ...], pci: tuple[PciFunction, ...], virt: VirtInfo
) -> tuple[GpuPeerPair, ...]:
    """Every ordered GPU pair over the stated tree; CUDA's peer answer only where the thread gives it."""
    devices = tuple(CudaDeviceFacts(g.cuda_ordinal or 0, g.name, g.bdf, (0, 0), 0, 0) for g in gpus)
    stated = facts.get("peer_access")
    pairs = [
        {"src_ordinal": a.ordinal, "dst_ordinal": b.ordinal, "can_access_peer": stated}
        for a in devices
        for b in devices
        if a is not b and stated is not None
    ]
    peers, _ = inspect_peers({"peers": pairs}, devices, gpus, pci, virt)
    return peers


def _home(facts: dict[str, Any], key: str) -> Optional[int]:
    """The stated NUMA node, or 0 when rows name their buffers only as local/far to it."""
    if key in facts:
        return facts[key]
    rows = facts.get("_rows", [])
    return 0 if any(r.get("numa") in ("local", "far") for r in rows) else None


def _row(row: dict[str, Any], facts: dict[str, Any], i: int) -> BenchResult:
    tool_name = str(row.get("tool", "other"))
    test = row.get("test")
    direction = row.get("direction")
    if tool_name in _PERFTEST:
        tool, test = Provider.PERFTEST.value, _PERFTEST[tool_name]
    else:
        tool = _TOOLS.get(tool_name, Provider.POSTED.value)
    if tool == Provider.POSTED.value and direction in ("gpu->nic", "host->nic", "nic->gpu", "nic->host"):
        test = test if test in ("write_bw", "read_bw", "send_bw") else "write_bw"
    if tool == Provider.NCCL_TESTS.value:
        test = test or "all_reduce_perf"
    if direction in ("h2d", "d2h", "bidir") and tool == Provider.POSTED.value and not test:
        test = f"cudaMemcpy {direction}"
    memory = MemoryKind(row["memory"]) if row.get("memory") else None
    access = None
    if "relaxed_ordering" in row:
        access = BASE_ACCESS | AccessFlags.RELAXED_ORDERING if row["relaxed_ordering"] else BASE_ACCESS
    params = ImportedParams(
        tool=tool,
        test=str(test) if test else tool_name,
        size_bytes=row.get("size_bytes"),
        direction=direction,
        memory=memory,
        access=access,
        gpu=row.get("gpu"),
        peer_gpu=row.get("peer_gpu"),
        peer_access=row.get("peer_access"),
        collective=str(test) if tool == Provider.NCCL_TESTS.value else None,
        ranks=row.get("ranks"),
        gpu_direct_rdma=row.get("gdr"),
        source_file=row.get("label"),
    )
    value = float(row["value"])
    metrics = ImportedMetrics(busbw_gbytes_per_s=value if row.get("busbw") else None)
    node = facts.get("buffer_numa")
    if row.get("numa") in ("local", "far"):
        home = facts.get("gpu_numa", facts.get("nic_numa", 0)) or 0
        node = home if row["numa"] == "local" else home + 1
    settings = RunSettings(numa_node=node, numa="posted" if node is not None else None)
    return BenchResult(
        key=f"posted_{tool_name.replace('-', '_').lower()}_{i}",
        status=Status.OK,
        description=str(row.get("label", "")),
        params=params,
        unit=str(row["unit"]),
        samples=(value,),
        stats=SampleStats.of([value]),
        metrics=metrics,
        settings=settings,
        method="posted in a public thread (one number per run, as posted)",
        provider=Provider.POSTED.value,
    )


def _check_counts(facts: dict[str, Any], where: str) -> None:
    """Refuse (UserInputError) a case stating, or a switch listing, more devices than a node has."""
    counts = {"gpus": int(facts.get("gpus", 1)), "nics": int(facts.get("nics", 1))}
    for sw in facts.get("switches", []):
        for kind in counts:
            listed = [i for i in sw.get(kind, []) if isinstance(i, int)]
            counts[kind] = max(counts[kind], max(listed, default=-1) + 1, len(listed))
    check_device_counts(counts["gpus"], counts["nics"], where)


def load(path: Path) -> Case:
    """The case in one TOML file, with its Report."""
    data = tomllib.loads(path.read_text())
    facts = {**data.get("machine", {}), "_rows": data.get("rows", [])}
    _check_counts(facts, f"case {path.name}")
    rows = tuple(_row(r, facts, i) for i, r in enumerate(data.get("rows", [])))
    report = Report(
        tool_version="case",
        created_utc="2026-11-26T00:00:00Z",
        command=f"case {path.stem}",
        machine=build_machine(facts),
        results=rows,
        notes=(data["url"],),
    )
    return Case(path.stem, data["url"], data["cause"], data.get("conclusion", ""), report)


def all_cases() -> list[Case]:
    """Every case file, by name."""
    return [load(p) for p in sorted(CASES.glob("*.toml"))]
