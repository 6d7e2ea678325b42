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

from gdrdiag.model.machine import (
    GpuInfo,
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


def _pcie(mps: int, mrrs: int) -> PcieCap:
    return PcieCap(
        offset=0x68,
        version=2,
        port_type=PortType.ENDPOINT,
        max_payload_supported=max(256, mps),
        ext_tag_supported=True,
        flr=True,
        relaxed_ordering=True,
        ext_tag=True,
        no_snoop=True,
        max_payload=mps,
        max_read_request=mrrs,
    )


def build_machine(facts: dict[str, Any]) -> MachineInfo:
    """A MachineInfo holding only what the thread stated."""
    ngpus = int(facts.get("gpus", 1))
    mps, mrrs = int(facts.get("mps", 256)), int(facts.get("mrrs", 4096))
    gpu_link = _link(facts.get("gpu_link"), facts.get("gpu_link_capable"))
    gpus, pci = [], []
    for i in range(ngpus):
        bdf = f"0000:{0x18 + i:02x}:00.0"
        gpus.append(
            GpuInfo(
                bdf=bdf,
                name=str(facts.get("gpu", "")),
                cuda_ordinal=i,
                link=gpu_link,
                link_sampled_idle=gpu_link is None,
                numa_node=_home(facts, "gpu_numa"),
            )
        )
        pci.append(
            PciFunction(bdf=bdf, pcie=_pcie(mps, mrrs), link=gpu_link, numa_node=facts.get("gpu_numa"))
        )
    nics = []
    if facts.get("nic") or facts.get("nic_port_gbps") or facts.get("path_class"):
        for i in range(int(facts.get("nics", 1))):
            bdf = f"0000:{0x80 + i:02x}:00.0"
            port = NicPort(
                port=1,
                state="ACTIVE",
                rate_gbps=facts.get("nic_port_gbps"),
                link_layer=facts.get("link_layer"),
                active_mtu=facts.get("mtu"),
            )
            link = _link(facts.get("nic_link"))
            nics.append(
                NicInfo(
                    name=f"mlx5_{i}",
                    bdf=bdf,
                    model=str(facts.get("nic", "")),
                    ports=(port,),
                    is_vf=facts.get("nic_vf"),
                    link=link,
                    numa_node=facts.get("nic_numa"),
                )
            )
            pci.append(PciFunction(bdf=bdf, pcie=_pcie(256, 4096), link=link, is_vf=facts.get("nic_vf")))
    topology = ()
    if facts.get("path_class") and gpus and nics:
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
    virt = VirtInfo(is_vm=facts.get("vm"), iommu_mode=facts.get("iommu"))
    return MachineInfo(
        source="posted",
        pci=tuple(pci),
        gpus=tuple(gpus),
        nics=tuple(nics),
        virt=virt,
        kernel=kernel,
        topology=topology,
    )


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


def load(path: Path) -> Case:
    """The case in one TOML file, with its Report."""
    data = tomllib.loads(path.read_text())
    facts = {**data.get("machine", {}), "_rows": data.get("rows", [])}
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
