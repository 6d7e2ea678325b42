"""GPUDirect RDMA prerequisites: GPU attributes, registration paths, BAR1, topology, ports.

A NIC can register GPU memory in two ways (docs/kb/gdr.md; NVIDIA's GPUDirect RDMA guide): the
legacy peer-memory path (``nvidia_peermem`` + an ib_core with peer-memory support) or dma-buf (open
NVIDIA kernel module, ``DMA_BUF_SUPPORTED``, kernel >= 5.12 and rdma-core >= v34). With neither,
GPUDirect RDMA cannot work at all (GDR-NO-REG-PATH).
"""

from __future__ import annotations

from typing import Iterable, Optional

from gdrdiag.diagnose._common import best_pairs, ev, finding, has_gpu_and_nic
from gdrdiag.model.findings import Finding, Severity
from gdrdiag.model.machine import DriverFlavour, GpuInfo, MachineInfo, PathClass


def _attr(g: GpuInfo, name: str) -> Optional[int]:
    v = g.gdr_attributes.get(name)
    return v if isinstance(v, int) else None


def presence(m: MachineInfo) -> Iterable[Finding]:
    """GDR-NO-GPU, GDR-CUDA-UNAVAILABLE, GDR-NO-RDMA: what is missing for a GDR path."""
    if not m.gpus:
        yield finding(
            "GDR-NO-GPU",
            Severity.INFO,
            "no NVIDIA GPU on the PCI bus",
            [ev("machine.gpus", "[]"), ev("machine.unknown.cuda", m.unknown.get("cuda", ""))],
            "GPU checks were skipped.",
            "",
        )
    elif not m.cuda_devices and m.source != "posted":
        # A machine described by a public thread ("posted") was never queried through CUDA: the
        # facts are unknown, not unavailable.
        yield finding(
            "GDR-CUDA-UNAVAILABLE",
            Severity.WARN,
            "NVIDIA GPU(s) on the bus but the CUDA driver answered nothing",
            [
                ev("machine.gpus", ",".join(g.bdf for g in m.gpus)),
                ev("machine.unknown.cuda", m.unknown.get("cuda", "")),
            ],
            "Install or load the NVIDIA driver (and check CUDA_VISIBLE_DEVICES); the GPUDirect "
            "attributes below are unknown until then.",
            "",
        )
    if not m.nics:
        yield finding(
            "GDR-NO-RDMA",
            Severity.INFO,
            "no RDMA device: GPU<->NIC checks skipped",
            [ev("machine.nics", "[]"), ev("machine.unknown.verbs", m.unknown.get("verbs", ""))],
            "Load the RDMA driver (mlx5_ib) or pass a NIC/VF into the VM to test GPUDirect RDMA; "
            "`gdrdiag mr-bench --provider soft` exercises the pipeline without one.",
            "",
        )


# (attribute, bad value, code, severity with a NIC, severity without, title, advice, reference)
ATTRIBUTE_CHECKS = (
    (
        "GPU_DIRECT_RDMA_SUPPORTED",
        0,
        "GDR-RDMA-UNSUPPORTED",
        Severity.FAIL,
        Severity.INFO,
        "GPU_DIRECT_RDMA_SUPPORTED = 0: the nv-p2p (peermem) API is unavailable",
        "iGPU/unified-memory parts lack it. Use dma-buf if DMA_BUF_SUPPORTED = 1, else stage through pinned "
        "host memory registered with ibv_reg_mr.",
        "",
    ),
    (
        "GPU_DIRECT_RDMA_WRITES_ORDERING",
        0,
        "GDR-WRITES-ORDERING",
        Severity.WARN,
        Severity.INFO,
        "GPU_DIRECT_RDMA_WRITES_ORDERING = NONE",
        "A kernel polling a flag may see RDMA payload out of order: call cuFlushGPUDirectRDMAWrites or use "
        "NIC-side flush reads before consuming data.",
        "",
    ),
    (
        "GPU_DIRECT_RDMA_FLUSH_WRITES_OPTIONS",
        0,
        "GDR-FLUSH-NONE",
        Severity.INFO,
        Severity.INFO,
        "no GPUDirect RDMA flush options",
        "Use CPU-side synchronization as in the GPUDirect RDMA guide.",
        "",
    ),
    (
        "GPU_DIRECT_RDMA_WITH_CUDA_VMM_SUPPORTED",
        0,
        "GDR-VMM-UNSUPPORTED",
        Severity.INFO,
        Severity.INFO,
        "cuMemCreate (VMM) memory cannot be GDR-registered",
        "Register cuMemAlloc memory instead; NCCL checks this.",
        "",
    ),
    (
        "HOST_ALLOC_DMA_BUF_SUPPORTED",
        0,
        "GDR-HOST-DMABUF",
        Severity.INFO,
        Severity.INFO,
        "pinned host memory cannot be exported as dma-buf",
        "Register cuMemHostAlloc memory with plain ibv_reg_mr, not through a dma-buf.",
        "",
    ),
)


def gpu_attributes(m: MachineInfo) -> Iterable[Finding]:
    """One finding per attribute check, listing every GPU that fails it."""
    nic = bool(m.nics)
    for attr, bad, code, sev_nic, sev_alone, title, advice, ref in ATTRIBUTE_CHECKS:
        hit = [g.bdf for g in m.gpus if _attr(g, attr) == bad]
        if hit:
            yield finding(
                code,
                sev_nic if nic else sev_alone,
                f"{title} (GPU {', '.join(hit)})",
                [ev(f"gpus[{b}].gdr_attributes.{attr}", bad) for b in hit],
                advice,
                ref,
                ",".join(hit),
            )


def registration_path(m: MachineInfo) -> Iterable[Finding]:
    """GDR-NO-REG-PATH (FAIL), GDR-DMABUF-UNAVAILABLE, GDR-PEERMEM-MISSING."""
    if not m.gpus:
        return
    k = m.kernel
    open_driver = k.nvidia_flavour == DriverFlavour.OPEN
    attr = [_attr(g, "DMA_BUF_SUPPORTED") for g in m.gpus]
    probes = [n.dmabuf_probe for n in m.nics if n.dmabuf_probe]
    probe_bad = bool(probes) and all(not p.startswith("supported") for p in probes)
    dmabuf_ok: Optional[bool]
    if any(a == 0 for a in attr) or k.nvidia_flavour == DriverFlavour.PROPRIETARY or probe_bad:
        dmabuf_ok = False
    elif all(a == 1 for a in attr) and open_driver:
        dmabuf_ok = True
    else:
        dmabuf_ok = None
    evidence = [
        ev("kernel.peermem_loaded", k.peermem_loaded),
        ev("kernel.peermem_evidence", k.peermem_evidence),
        ev("kernel.nvidia_flavour", k.nvidia_flavour.value if k.nvidia_flavour else None),
        ev("gpus[].gdr_attributes.DMA_BUF_SUPPORTED", ",".join(str(a) for a in attr)),
    ]
    if probes:
        evidence.append(ev("nics[].dmabuf_probe", "; ".join(probes)))
    if has_gpu_and_nic(m) and k.peermem_loaded is False and dmabuf_ok is False:
        yield finding(
            "GDR-NO-REG-PATH",
            Severity.FAIL,
            "no way to register GPU memory with the NIC: nvidia_peermem is not loaded and dma-buf "
            "is unavailable",
            evidence,
            "Either `modprobe nvidia_peermem` (needs MLNX_OFED/DOCA ib_core with peer memory), or use "
            "the open NVIDIA kernel module with a kernel >= 5.12 and rdma-core >= v34 for dma-buf.",
            "",
        )
        return
    if dmabuf_ok is False:
        # Without an RDMA NIC no GPU memory is registered with one: a fact, not a risk.
        yield finding(
            "GDR-DMABUF-UNAVAILABLE",
            Severity.INFO if k.peermem_loaded or not m.nics else Severity.WARN,
            "dma-buf registration of GPU memory is unavailable",
            evidence,
            'dma-buf needs the open NVIDIA kernel module ("Open Kernel Module" in '
            "/proc/driver/nvidia/version) and DMA_BUF_SUPPORTED = 1.",
            "",
        )
    if k.peermem_loaded is False:
        yield finding(
            "GDR-PEERMEM-MISSING",
            Severity.INFO,
            "nvidia_peermem is not loaded",
            evidence,
            "Fine when dma-buf is used (NCCL and UCX prefer it). Applications that call ibv_reg_mr on "
            "cudaMalloc pointers need `modprobe nvidia_peermem`.",
            "",
        )
    if k.nvidia_flavour == DriverFlavour.VGPU_GUEST:
        yield finding(
            "GDR-VGPU",
            Severity.INFO,
            "vGPU guest driver: GPUDirect RDMA support differs from passthrough",
            [ev("kernel.nvidia_version_line", k.nvidia_version_line)],
            "Check the vGPU release notes for GPUDirect RDMA support on this vGPU type.",
            "",
        )


def bar1(m: MachineInfo) -> Iterable[Finding]:
    """GDR-BAR1-SMALL: BAR1 smaller than GPU memory limits what can be pinned for GDR."""
    for g in m.gpus:
        size = g.nvml_bar1_total * 1024 * 1024 if g.nvml_bar1_total else g.bar1_bytes
        if size and g.total_memory and size < g.total_memory:
            yield finding(
                "GDR-BAR1-SMALL",
                Severity.WARN,
                f"GPU {g.bdf} BAR1 {size >> 20} MiB is smaller than its {g.total_memory >> 20} MiB memory",
                [
                    ev(f"gpus[{g.bdf}].bar1_bytes", g.bar1_bytes),
                    ev(f"gpus[{g.bdf}].bar1_index", g.bar1_index),
                    ev(f"gpus[{g.bdf}].total_memory", g.total_memory),
                ],
                "Enable Resizable BAR / large BAR1 in the BIOS (and EnableResizableBar in the driver) so "
                "GDR registrations do not run out of BAR1.",
                "",
                g.bdf,
            )


def path_class(m: MachineInfo) -> Iterable[Finding]:
    """GDR-PATH-CLASS and GDR-NUMA-MISMATCH for each GPU's closest NIC."""
    for p in best_pairs(m):
        key = f"topology[{p.gpu_bdf},{p.nic}]"
        if p.reliable and p.path_class in (PathClass.PHB, PathClass.NODE, PathClass.SYS):
            yield finding(
                "GDR-PATH-CLASS",
                Severity.WARN,
                f"the closest NIC to GPU {p.gpu_bdf} ({p.nic}) is {p.path_class.value}: "
                f"traffic crosses the root complex",
                [ev(f"{key}.path_class", p.path_class.value), ev(f"{key}.bridges", ",".join(p.bridges))],
                "Peer writes through the CPU root complex are slow and need relaxed ordering; NCCL's "
                "default NCCL_NET_GDR_LEVEL=PXB disables GDR for this pair. Pair each GPU with a NIC "
                "under the same PCIe switch.",
                "",
                f"{p.gpu_bdf}/{p.nic}",
            )
        if p.reliable and p.gpu_numa is not None and p.nic_numa is not None and p.gpu_numa != p.nic_numa:
            yield finding(
                "GDR-NUMA-MISMATCH",
                Severity.WARN,
                f"GPU {p.gpu_bdf} (NUMA {p.gpu_numa}) and its closest NIC {p.nic} (NUMA {p.nic_numa}) differ",
                [ev(f"{key}.gpu_numa", p.gpu_numa), ev(f"{key}.nic_numa", p.nic_numa)],
                "Use a GPU and NIC on the same socket; host-staged traffic crosses the CPU interconnect.",
                "",
                f"{p.gpu_bdf}/{p.nic}",
            )


def ports(m: MachineInfo) -> Iterable[Finding]:
    """GDR-PORT-DOWN: an RDMA port that is not ACTIVE (NIC-01)."""
    for n in m.nics:
        for p in n.ports:
            if p.state is not None and p.state.upper() != "ACTIVE":
                yield finding(
                    "GDR-PORT-DOWN",
                    Severity.WARN,
                    f"{n.name} port {p.port} is {p.state}",
                    [
                        ev(f"nics[{n.name}].ports[{p.port}].state", p.state),
                        ev(f"nics[{n.name}].ports[{p.port}].phys_state", p.phys_state),
                    ],
                    "Check cabling, the switch port and the subnet manager (InfiniBand).",
                    "",
                    n.name,
                )


RULES = [presence, gpu_attributes, registration_path, bar1, path_class, ports]
