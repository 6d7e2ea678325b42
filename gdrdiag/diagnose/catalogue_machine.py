"""Catalogue entries of the machine rules (pcie_rules, virt_rules, gdr_rules, ro_rules).

Written in our own words; the sources are public (PCIe Base Specification sections, Linux source
files and commits, NVIDIA documentation, issue threads). See :mod:`gdrdiag.diagnose.catalogue`.
"""

from __future__ import annotations

from gdrdiag.diagnose.catalogue_entry import E

LINUX = "https://github.com/torvalds/linux/blob/master/"
COMMIT = "https://git.kernel.org/pub/scm/linux/kernel/git/torvalds/linux.git/commit/?id="
GDR_DOC = "https://docs.nvidia.com/cuda/gpudirect-rdma/index.html"
NCCL_TROUBLE = "https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/troubleshooting.html"
KERNEL_PARAMS = "https://www.kernel.org/doc/html/latest/admin-guide/kernel-parameters.html"
DEVCTL = "PCIe Base Spec r5.0 sec. 7.5.3.4 (Device Control)"
ATS_CH = "PCIe Base Spec r5.0 sec. 10 (Address Translation Services)"
ACS_SEC = "PCIe Base Spec r5.0 sec. 6.12 (Access Control Services)"
RO_SERIES = "https://lore.kernel.org/all/cover.1681131553.git.leon@kernel.org/"
CUDA_ATTRS = "https://docs.nvidia.com/cuda/cuda-driver-api/group__CUDA__TYPES.html"
CUDA_ENV = "https://docs.nvidia.com/cuda/cuda-c-programming-guide/index.html#cuda-environment-variables"
CONTAINER_ENV = (
    "https://docs.nvidia.com/datacenter/cloud-native/container-toolkit/latest/docker-specialized.html"
)
NVSMI = "https://docs.nvidia.com/deploy/nvidia-smi/index.html"
FABRIC_MANAGER = "https://docs.nvidia.com/datacenter/tesla/fabric-manager-user-guide/index.html"
NVML_FABRIC = "https://docs.nvidia.com/deploy/nvml-api/group__nvmlFabricDefs.html"

ENTRIES = (
    # -- PCIe links and registers ----------------------------------------------------------------
    E(
        "PCIE-NEEDS-ROOT",
        "pcie",
        "INFO",
        "configuration space beyond the first 64 bytes was not readable",
        "Linux returns only the standard header of configuration space to a "
        "process without CAP_SYS_ADMIN, so "
        "the PCIe capability (payload size, relaxed ordering, ACS, ATS) is "
        "invisible; link facts then come from "
        "sysfs text files.",
        "Run gdrdiag inspect as root for the register checks.",
        LINUX + "drivers/pci/pci-sysfs.c",
    ),
    E(
        "PCIE-LINK-WIDTH",
        "pcie",
        "WARN",
        "a GPU/NIC endpoint negotiated fewer lanes than it is capable of",
        "Bandwidth scales with lanes: x8 instead of x16 halves every transfer. "
        "A width below capable is a slot, "
        "riser, bifurcation or seating problem, not a power-saving state.",
        "Reseat the card, check the slot wiring and the BIOS bifurcation setting.",
        "PCIe Base Spec r5.0 sec. 7.5.3.8 (Link Status)",
    ),
    E(
        "PCIE-LINK-SPEED",
        "pcie",
        "WARN",
        "a NIC (or a GPU read under load) runs below its capable speed",
        "Each generation doubles the per-lane rate; a Gen5 device trained at Gen4 loses half its bandwidth. "
        "Causes are BIOS speed limits, retimers, risers and signal integrity.",
        "Check the BIOS link-speed setting, retimers and risers; update firmware.",
        "PCIe Base Spec r5.0 sec. 7.5.3.8 (Link Status)",
    ),
    E(
        "PCIE-LINK-SPEED-IDLE",
        "pcie",
        "INFO",
        "a GPU's speed is below capable, read while the GPU was idle",
        "GPUs lower their link speed when idle to save power, so a low speed at rest is expected; only a low "
        "speed under load is a fault.",
        "Re-check under load: copy-bench and gather-bench sample the link while copying.",
        "PCIe Base Spec r5.0 sec. 7.5.3.8 (Link Status)",
    ),
    E(
        "PCIE-PATH-NARROW",
        "pcie",
        "WARN",
        "a bridge on a GPU's closest-NIC path is slower or narrower than both endpoints",
        "A Gen4 switch or a Gen3 root port between two Gen5 devices caps the whole path.",
        "Move the devices to a faster path or fix the bridge's link.",
        "https://github.com/NVIDIA/nccl/blob/master/src/graph/paths.cc",
    ),
    E(
        "PCIE-MPS-MISMATCH",
        "pcie",
        "WARN",
        "MaxPayload differs between an endpoint and the bridges above it (bare metal)",
        "Every device on a path must use a payload no larger than what its neighbours accept; "
        "a mismatch risks malformed TLPs or forces the smallest size.",
        "Let the kernel pick consistent sizes (pci=pcie_bus_perf) or fix the BIOS setting.",
        DEVCTL,
        KERNEL_PARAMS,
    ),
    E(
        "PCIE-MPS-SMALL",
        "pcie",
        "INFO",
        "MaxPayload is 128 B on a device that supports more (bare metal)",
        "Each TLP carries ~20-24 B of header and framing; at 128 B of payload "
        "that is ~15% of the wire against "
        "~8% at 256 B. Usually the root complex limits it, and gdrdiag's thresholds already expect the lower "
        "rate (docs/diagnosis.md).",
        "Raise MPS in the BIOS where the root complex supports it.",
        DEVCTL,
        "PCIe Base Spec r5.0 sec. 2.2.2 (TLPs with Data Payloads)",
    ),
    E(
        "PCIE-MRRS-SMALL",
        "pcie",
        "WARN (INFO in a VM)",
        "MaxReadReq below 512 B on a GPU/NIC function",
        "Reads are split into requests of at most MRRS bytes; small requests mean more requests, more read "
        "tags in flight and lower read throughput (RDMA READ, GPU copy engines).",
        "Raise MRRS to 512-4096 (BIOS, or setpci on the Device Control register as root).",
        DEVCTL,
    ),
    E(
        "PCIE-EXTTAG-OFF",
        "pcie",
        "WARN",
        "Extended Tag capable but disabled on a GPU/NIC function",
        "Without extended tags a requester has 32 outstanding reads instead of 256, which limits read "
        "bandwidth over long-latency paths.",
        "Check host-bridge quirks in dmesg and the BIOS.",
        DEVCTL,
        LINUX + "drivers/pci/probe.c",
    ),
    E(
        "PCIE-AER-ERRORS",
        "pcie",
        "WARN",
        "non-zero AER counters on a GPU/NIC or a bridge above it",
        "Correctable errors (bad TLPs, replays) are retried silently and cost "
        "bandwidth; growing counts point "
        "at signal integrity.",
        "Reseat or replace the riser, update firmware; compare counters before and after a load.",
        "PCIe Base Spec r5.0 sec. 6.2 (Error Signaling and Logging)",
        LINUX + "Documentation/ABI/testing/sysfs-bus-pci-devices-aer_stats",
    ),
    E(
        "PCIE-CAP-CHAIN",
        "pcie",
        "WARN (INFO in a VM)",
        "the capability list of a GPU/NIC loops or is broken",
        "A corrupt capability list means a failing device or a hypervisor that rewrote configuration space; "
        "register facts past the break are unknown.",
        "Check the device on the host; in a VM this is often the hypervisor's doing.",
        "PCIe Base Spec r5.0 sec. 7.6 (PCI Express Extended Capabilities)",
    ),
    # -- virtualization, SR-IOV, IOMMU, ACS/ATS ------------------------------------------------
    E(
        "VIRT-VM",
        "virt",
        "INFO",
        "any strong sign of a virtual machine (hypervisor CPU flag, DMI, "
        "/sys/hypervisor, virtual device ids, endpoints on a root bus)",
        "In a guest, payload/request sizes and upstream bridges are virtual and ACS/ATS are set by the host, "
        "so register findings describe the guest's view.",
        "Run gdrdiag inspect on the host for the physical path.",
        LINUX + "drivers/vfio/pci/vfio_pci_config.c",
    ),
    E(
        "VIRT-NO-VIOMMU",
        "virt",
        "INFO",
        "a VM with no IOMMU groups (no virtual IOMMU)",
        "Without a vIOMMU the guest cannot use ATS, so the NIC's peer writes "
        "carry untranslated guest-physical "
        "addresses that the host IOMMU must translate at the root complex.",
        "On the host: enable ATS on the NIC and ACS Direct Translated P2P on the path, or give the guest a "
        "vIOMMU.",
        ATS_CH,
        "https://docs.nvidia.com/ai-enterprise/planning-resource/"
        "optimizing-vm-configuration-ai-inference/latest/appendix.html",
    ),
    E(
        "VIRT-FLAT-TOPOLOGY",
        "virt",
        "WARN with GPU and NIC, else INFO",
        "GPU/NIC endpoints sit directly on a guest root bus",
        "NCCL reads this synthetic tree, classifies the pair as PHB and, with its default "
        "GDR level, does not use GPUDirect RDMA.",
        "Give NCCL a topology file that mirrors the host "
        "(NCCL_TOPO_FILE), set NCCL_NET_GDR_LEVEL, or build a nested guest topology.",
        "https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/env.html",
        "https://github.com/NVIDIA/nccl/issues/1843",
    ),
    E(
        "VIRT-HOST-ACS-ATS",
        "virt",
        "INFO",
        "a VM with a GPU and a NIC",
        "A guest keeps ACS on for isolation; without ATS every NIC->GPU write is redirected through the root "
        "complex. Neither can be checked or changed from inside the guest.",
        "On the host: NIC ATS enabled, ACS Direct Translated P2P on the ports of the path.",
        ACS_SEC,
        ATS_CH,
    ),
    E(
        "ACS-REDIRECT",
        "virt",
        "FAIL",
        "bare metal, a PIX/PXB GPU-NIC pair, and a switch or root port on the "
        "path redirects peer requests (ReqRedir/CmpltRedir/EgressCtrl) without ATS + Direct Translated P2P",
        "Redirected peer TLPs travel up to the root complex and back instead of turning inside the switch: "
        "a large slowdown or a hang.",
        "pci=disable_acs_redir=<bdf> on the kernel command line, the BIOS "
        "setting, or setpci -s <bridge> ECAP_ACS+0x6.w=0000 (until reboot).",
        ACS_SEC,
        NCCL_TROUBLE,
        KERNEL_PARAMS,
    ),
    E(
        "IOMMU-TRANSLATED",
        "virt",
        "WARN",
        "bare metal, GPU/NIC IOMMU groups of type DMA or DMA-FQ",
        "A translating IOMMU maps device addresses page by page; NVIDIA documents GPUDirect RDMA peer "
        "addressing only with the IOMMU off or in pass-through.",
        "Boot with iommu=pt (or disable the IOMMU).",
        GDR_DOC,
        LINUX + "Documentation/ABI/testing/sysfs-kernel-iommu_groups",
    ),
    E(
        "SRIOV-VF",
        "virt",
        "INFO",
        "the RDMA device is an SR-IOV virtual function",
        "A VF shares its PF's PCIe link; several Device Control bits are "
        "reserved in a VF and read 0, so they "
        "are not settings.",
        "Judge the PF (on the host) and the kernel's handling of VFs.",
        "PCIe Base Spec r5.0 sec. 9.3.5 (PCI Express Capability in VFs)",
        LINUX + "drivers/net/ethernet/mellanox/mlx5/core/main.c",
    ),
    E(
        "SRIOV-SHARED-LINK",
        "virt",
        "INFO",
        "two RDMA devices share one PCIe link (functions of one card, or VFs of one PF)",
        "Running both at once splits the link's bandwidth.",
        "Account for the split when both ports or VFs carry traffic.",
        "PCIe Base Spec r5.0 sec. 9.3.5 (PCI Express Capability in VFs)",
    ),
    # -- GPUDirect RDMA prerequisites ------------------------------------------------------------
    E(
        "GDR-NO-GPU",
        "gdr",
        "INFO",
        "no NVIDIA GPU on the bus",
        "The GPU checks have nothing to judge.",
        "Nothing to do, or pass a GPU into the guest.",
        GDR_DOC,
    ),
    E(
        "GDR-CUDA-UNAVAILABLE",
        "gdr",
        "WARN",
        "an NVIDIA GPU is on the bus but CUDA answered nothing",
        "Without the driver no GPU facts or measurements are possible.",
        "Install or load the NVIDIA driver.",
        GDR_DOC,
    ),
    E(
        "GDR-NO-RDMA",
        "gdr",
        "INFO",
        "no RDMA device (with the verbs library's reason)",
        "The NIC checks have nothing to judge.",
        "Load mlx5_ib or pass a NIC into the guest.",
        "https://github.com/linux-rdma/rdma-core",
    ),
    E(
        "GDR-RDMA-UNSUPPORTED",
        "gdr",
        "FAIL with a NIC, else INFO",
        "the GPU reports GPU_DIRECT_RDMA_SUPPORTED = 0",
        "The GPU does not support a NIC writing into its memory.",
        "Use dma-buf where supported, or stage through pinned host memory.",
        CUDA_ATTRS,
        GDR_DOC,
    ),
    E(
        "GDR-WRITES-ORDERING",
        "gdr",
        "WARN with a NIC, else INFO",
        "GPU_DIRECT_RDMA_WRITES_ORDERING = 0 (none)",
        "The GPU does not order remote writes against its own reads, so a consumer can see data before it "
        "has all landed.",
        "Flush (cuFlushGPUDirectRDMAWrites) before consuming.",
        CUDA_ATTRS,
        GDR_DOC,
    ),
    E(
        "GDR-FLUSH-NONE",
        "gdr",
        "INFO",
        "GPU_DIRECT_RDMA_FLUSH_WRITES_OPTIONS = 0",
        "No flush option is offered; synchronisation must come from the CPU side.",
        "Synchronise on the host before launching consumers.",
        CUDA_ATTRS,
    ),
    E(
        "GDR-VMM-UNSUPPORTED",
        "gdr",
        "INFO",
        "GPU_DIRECT_RDMA_WITH_CUDA_VMM_SUPPORTED = 0",
        "Memory from the CUDA virtual memory APIs cannot be registered for GPUDirect RDMA.",
        "Register cuMemAlloc memory instead.",
        CUDA_ATTRS,
    ),
    E(
        "GDR-HOST-DMABUF",
        "gdr",
        "INFO",
        "HOST_ALLOC_DMA_BUF_SUPPORTED = 0",
        "Pinned host memory from cuMemHostAlloc cannot be exported as a dma-buf.",
        "Register host memory with plain ibv_reg_mr.",
        CUDA_ATTRS,
    ),
    E(
        "GDR-NO-REG-PATH",
        "gdr",
        "FAIL",
        "a GPU and a NIC, nvidia_peermem not loaded, and dma-buf unusable",
        "Neither registration path for GPU memory exists, so GPUDirect RDMA cannot work at all.",
        "modprobe nvidia_peermem, or use the open kernel module with a dma-buf capable kernel (>= 5.12) and "
        "rdma-core (>= v34).",
        GDR_DOC,
        NCCL_TROUBLE,
    ),
    E(
        "GDR-DMABUF-UNAVAILABLE",
        "gdr",
        "WARN (INFO with peermem)",
        "dma-buf registration is unusable here",
        "dma-buf is the upstream path for GPU memory registration and the one that works without "
        "nvidia-peermem.",
        "Use the open NVIDIA kernel module and check DMA_BUF_SUPPORTED = 1.",
        GDR_DOC,
        CUDA_ATTRS,
    ),
    E(
        "GDR-PEERMEM-MISSING",
        "gdr",
        "INFO",
        "nvidia_peermem is not loaded (dma-buf may still work)",
        "ibv_reg_mr on GPU memory needs nvidia-peermem; dma-buf registration does not.",
        "Fine for dma-buf users; otherwise modprobe nvidia_peermem.",
        GDR_DOC,
    ),
    E(
        "GDR-VGPU",
        "gdr",
        "INFO",
        "a vGPU guest driver",
        "GPUDirect RDMA support differs under vGPU.",
        "Check the vGPU release notes for GPUDirect support.",
        GDR_DOC,
    ),
    E(
        "GDR-BAR1-SMALL",
        "gdr",
        "WARN",
        "the GPU's BAR1 aperture is smaller than its memory",
        "A NIC reaches GPU memory through BAR1; a small aperture limits how much can be registered at once.",
        "Enable Resizable BAR / large BAR1 in the BIOS.",
        GDR_DOC,
        "PCIe Base Spec r5.0 sec. 7.8.6 (Resizable BAR)",
    ),
    E(
        "GDR-PATH-CLASS",
        "gdr",
        "WARN",
        "bare metal: a GPU's closest NIC is PHB, NODE or SYS away",
        "Peer traffic then crosses the root complex or the socket interconnect instead of one PCIe switch.",
        "Pair each GPU with a NIC under its own switch (nvidia-smi topo -m: PIX/PXB).",
        GDR_DOC,
        "https://github.com/NVIDIA/nccl/blob/master/src/graph/paths.cc",
    ),
    E(
        "GDR-NUMA-MISMATCH",
        "gdr",
        "WARN",
        "bare metal: a GPU's closest NIC is on another NUMA node",
        "Traffic crosses the socket interconnect.",
        "Use a GPU and NIC of one socket.",
        GDR_DOC,
    ),
    E(
        "GDR-PORT-DOWN",
        "gdr",
        "WARN",
        "an RDMA port is not ACTIVE",
        "No traffic can flow on that port.",
        "Check cabling, the switch and the subnet manager.",
        "https://github.com/linux-rdma/rdma-core",
    ),
    # -- relaxed ordering ------------------------------------------------------------------------
    E(
        "RO-PF-DISABLED",
        "ro",
        "WARN",
        "a NIC physical function shows RlxdOrd- in Device Control",
        "With the enable bit clear the NIC cannot set the Relaxed Ordering "
        "attribute on any write. The kernel "
        "clears it on purpose below root ports known to mishandle relaxed writes.",
        "Check dmesg for 'Relaxed Ordering disabled' (then it is intentional) and the BIOS.",
        DEVCTL,
        LINUX + "drivers/pci/probe.c",
        LINUX + "drivers/pci/quirks.c",
    ),
    E(
        "RO-VF-BIT",
        "ro",
        "INFO",
        "a VF shows RlxdOrd-",
        "The bit is reserved in a VF and always reads 0: not a fault.",
        "Judge the PF's bit (host) and whether the kernel honours relaxed ordering for VFs.",
        "PCIe Base Spec r5.0 sec. 9.3.5 (PCI Express Capability in VFs)",
        LINUX + "drivers/pci/probe.c",
    ),
    E(
        "RO-PF-OF-VF",
        "ro",
        "WARN",
        "host view: the PF behind a VF NIC shows RlxdOrd-",
        "None of its VFs can emit relaxed writes.",
        "As RO-PF-DISABLED, on the PF.",
        DEVCTL,
        LINUX + "drivers/pci/probe.c",
    ),
    E(
        "RO-KERNEL-VF",
        "ro",
        "FAIL with a GPU, WARN without; INFO with an out-of-tree mlx5; INFO when a "
        "measurement contradicts it or a cause finding weighs it",
        "a VF NIC under a kernel older than 6.4",
        "Before Linux 6.4 mlx5 enabled relaxed writes only when the function's "
        "own RO bit was set, which a VF "
        "never has, so IBV_ACCESS_RELAXED_ORDERING was silently ignored in VMs.",
        "Kernel >= 6.4 (or a stable kernel with the series), or MLNX_OFED/DOCA-OFED with the backport.",
        COMMIT + "ed4b0661cce1",
        COMMIT + "bd4ba605c4a9",
        RO_SERIES,
    ),
    E(
        "RO-KERNEL-UNKNOWN",
        "ro",
        "INFO",
        "a VF NIC and the kernel version is unknown",
        "Whether relaxed ordering works on the VF depends on the kernel version.",
        "Check uname -r.",
        RO_SERIES,
    ),
    E(
        "RO-ACCESS-FLAG",
        "ro",
        "INFO",
        "a GPU and a NIC whose closest path may cross the root complex (VM, or PHB/NODE/SYS)",
        "Where peer writes cross a root complex, strictly ordered writes can stall; the "
        "application must ask for relaxed ordering per memory region.",
        "Register bulk-data MRs with IBV_ACCESS_RELAXED_ORDERING; verify with gdrdiag mr-bench --ro-ab.",
        "https://github.com/linux-rdma/rdma-core/blob/master/libibverbs/man/ibv_reg_mr.3",
        "https://github.com/NVIDIA/nccl/issues/1205",
    ),
    E(
        "RO-PLATFORM",
        "ro",
        "INFO (weighed by CAUSE-RO-NOT-REQUESTED when a loss is measured)",
        "a CPU where missing relaxed ordering costs 2-3x even on bare metal "
        "(AMD family 17h/19h, Intel Emerald "
        "Rapids)",
        "UCX turns relaxed ordering on by default on these CPUs because strict writes are much slower there.",
        "Make sure bulk MRs request relaxed ordering.",
        "https://github.com/openucx/ucx/pull/10955",
        "https://github.com/openucx/ucx/blob/master/src/ucs/arch/cpu.h",
    ),
    E(
        "RO-GPU-FORCED",
        "ro",
        "INFO",
        "EnablePCIERelaxedOrderingMode: 1 in /proc/driver/nvidia/params",
        "The driver sets relaxed ordering on every GPU outbound write; a "
        "tuning knob for GPU->host writes, not "
        "needed for NIC->GPU writes.",
        "Nothing to change for RDMA.",
        "https://github.com/NVIDIA/open-gpu-kernel-modules/blob/main/kernel-open/nvidia/nv-reg.h",
    ),
    E(
        "RO-NROPRPRP",
        "ro",
        "INFO",
        "a GPU sets No RO-enabled PR-PR Passing in Device Capabilities 2",
        "The completer will not let relaxed posted writes pass other posted writes, which limits what "
        "relaxed ordering can gain there.",
        "Informational.",
        "PCIe Base Spec r5.0 sec. 7.5.3.15 (Device Capabilities 2)",
    ),
    # -- inventory: the node's GPUs ------------------------------------------------------------------
    E(
        "GPU-NOT-VISIBLE",
        "inventory",
        "INFO when CUDA_VISIBLE_DEVICES is set (the process was told to hide it), else WARN",
        "an NVIDIA GPU (vendor 0x10de, display/3D class) is on the PCI bus but CUDA does not list it",
        "CUDA enumerates only the GPUs CUDA_VISIBLE_DEVICES names, in its order, so a hidden GPU is never "
        "measured and ordinals differ from the PCI order; NVML ignores the variable and still lists it. "
        "A container given 7 of 8 GPUs has no device node for the eighth, so NVML misses it too; a GPU "
        "the driver lost (Xid 79, fallen off the bus) stays on the bus but answers neither.",
        "Unset CUDA_VISIBLE_DEVICES (or list every GPU) to check the whole node; give the container every "
        "GPU (NVIDIA_VISIBLE_DEVICES=all, --gpus all); check the kernel log for Xid errors and reset or "
        "reseat a lost GPU.",
        CUDA_ENV,
        CONTAINER_ENV,
    ),
    E(
        "GPU-IN-USE",
        "inventory",
        "INFO",
        "NVML lists another process with a context on a GPU, or its SMs busy with no gdrdiag work running",
        "Processes on one GPU share it by time-slicing: a bench on it measures the share the other work "
        "leaves, and an operator checking a node wants to know who else is on it.",
        "Run when the GPU is idle or move the other job; `nvidia-smi --query-compute-apps` lists the "
        "processes.",
        NVSMI,
    ),
    E(
        "PERF-GPU-OUTLIER",
        "inventory",
        "WARN",
        "a GPU measured slower than the median of the node's other GPUs at the same case (three or more "
        "GPUs measured with --gpus), by more than the run's own noise",
        "The GPUs of one board are built alike: one well below its siblings has a link trained down, "
        "host memory on the far socket, or another process on it; the path model, which judges each GPU "
        "against its own link, calls a GPU on a narrowed link healthy for that link.",
        "The finding names the cause the machine facts show (link, NUMA placement, another process); "
        "otherwise compare the GPU's `lspci -vv` link, NUMA node and `nvidia-smi` processes with its "
        "siblings'.",
        NVSMI,
    ),
    E(
        "PERF-NIC-OUTLIER",
        "inventory",
        "WARN",
        "an RDMA device measured slower than the median of the node's other NICs at the same mr-bench "
        "RDMA WRITE case, or the same imported perftest test (one output per NIC, imported together), "
        "with three or more NICs, hardware only, by more than the run's own noise",
        "The NICs of one node are built and cabled alike: one well below its siblings has a PCIe link "
        "trained down, a port at a lower rate or MTU, or was measured with a GPU on the other socket, so "
        "every write crosses the inter-socket link. Soft-RoCE and the soft provider are never compared.",
        "The finding names the cause the machine facts show (PCIe link, port rate or MTU, NUMA node of the "
        "GPU it wrote into); otherwise compare the NIC's `lspci -vv` link, `ibv_devinfo -v` port and "
        "firmware with its siblings'.",
        GDR_DOC,
        "https://github.com/linux-rdma/rdma-core",
    ),
    E(
        "PERF-PAIR-OUTLIER",
        "inventory",
        "WARN",
        "an ordered GPU pair measured slower than the median of the node's other pairs at the same peer "
        "case (three or more pairs), by more than the run's own noise",
        "The GPUs of one board are joined alike: one pair well below the others has lost NVLinks, crosses "
        "another path, or has a busy GPU at one end; each pair's own path model may still call it healthy "
        "for the links it has.",
        "The finding names the cause the machine facts show (the pair's path against the others', a busy "
        "GPU); otherwise `nvidia-smi topo -m` and `nvidia-smi nvlink -s` on both GPUs.",
        NVSMI,
    ),
    E(
        "NIC-NOT-RDMA",
        "inventory",
        "WARN (INFO when no NIC has an RDMA device)",
        "a ConnectX function bound to mlx5_core for which verbs lists no RDMA device",
        "mlx5_core drives the Ethernet/InfiniBand function; the RDMA device every GPUDirect path needs comes "
        "from mlx5_ib. One NIC of eight without it halves nothing on a benchmark of another NIC, but every "
        "job placed on its GPUs loses GPUDirect RDMA.",
        "`modprobe mlx5_ib`; where the node's other NICs have theirs, `dmesg` for this function's mlx5 "
        "errors and `devlink dev info` for its firmware state.",
        "https://docs.kernel.org/networking/device_drivers/ethernet/mellanox/mlx5/index.html",
    ),
    E(
        "GPU-NVLINK-FEWER",
        "inventory",
        "WARN",
        "NVML lists fewer active NVLinks for a GPU than for most of the node's other GPUs",
        "The GPUs of one HGX/DGX board are built alike, so one with fewer active links has lost some: every "
        "peer copy through it and NCCL's rings and trees run at its links' share.",
        "`nvidia-smi nvlink -s` per GPU and `nvidia-smi nvlink -e` for error counters; on NVSwitch systems "
        "check nvidia-fabricmanager; a link that stays missing after a GPU reset is a hardware case.",
        NVSMI,
    ),
    E(
        "GPU-FABRIC-NOT-READY",
        "inventory",
        "WARN",
        "on an NVSwitch node, NVML says a GPU's fabric registration has not started, is still in "
        "progress, or completed with an error status",
        "On HGX/DGX boards with NVSwitch, nvidia-fabricmanager configures the switches and registers each "
        "GPU with the fabric; until it has, the GPU has no NVLink path to its peers, so peer copies are "
        "staged through host memory and NCCL falls back to PCIe or fails.",
        "Start nvidia-fabricmanager at the same version as the NVIDIA driver, then check that "
        "`nvidia-smi -q` lists Fabric State Completed, Status Success for every GPU; the fabric manager's "
        "log says why a GPU did not register.",
        FABRIC_MANAGER,
        NVML_FABRIC,
    ),
    E(
        "GPU-FABRIC-UNHEALTHY",
        "inventory",
        "WARN",
        "a GPU registered with the NVSwitch fabric whose NVML fabric health mask reports degraded "
        "bandwidth, an unhealthy route, a route or access-timeout recovery in progress, or an incorrect "
        "configuration",
        "Registration completing says the GPU joined the fabric, not that every route to its peers is "
        "whole: NVML's health mask says when bandwidth is degraded or a route is being recovered, and "
        "peer copies and NCCL over NVLink then run below the links' rate or stall.",
        "Check the GPU's Fabric Health in `nvidia-smi -q`, its links with `nvidia-smi nvlink -s`, and the "
        "fabric manager's log; a route that stays unhealthy after recovery is a hardware case.",
        FABRIC_MANAGER,
        NVML_FABRIC,
    ),
    E(
        "GPU-FABRIC-SPLIT",
        "inventory",
        "WARN",
        "registered GPUs of one node report different fabric clique IDs or cluster UUIDs (NVML)",
        "The GPUs of one NVSwitch board share one fabric partition; a GPU in another clique or cluster "
        "cannot reach the others over NVLink.",
        "Check each GPU's Fabric section in `nvidia-smi -q` and the fabric manager's partition set-up; "
        "restart nvidia-fabricmanager if no partitioning was meant.",
        FABRIC_MANAGER,
        NVML_FABRIC,
    ),
)
