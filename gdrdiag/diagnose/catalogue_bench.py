"""Catalogue entries of the bench-result rules, the cause model and the internal codes.

Written in our own words; see :mod:`gdrdiag.diagnose.catalogue`.
"""

from __future__ import annotations

from gdrdiag.diagnose.catalogue_entry import E
from gdrdiag.diagnose.catalogue_machine import ACS_SEC, ATS_CH, COMMIT, DEVCTL, GDR_DOC, RO_SERIES

CAUSE_SEVERITY = (
    "FAIL when it leads its loss and explains half or more of a loss of half or more; "
    "WARN for a fair share; else INFO"
)
BEST = "https://docs.nvidia.com/cuda/cuda-c-best-practices-guide/index.html"
PCIE_MODEL = "https://github.com/pcie-bench/pcie-model"
ORDERING = "PCIe Base Spec r5.0 sec. 2.4.1 (Transaction Ordering Rules)"
READ_RETURN = "PCIe Base Spec r5.0 sec. 2.3.1.1 (Data Return for Read Requests)"
IBV_REG_MR = "https://github.com/linux-rdma/rdma-core/blob/master/libibverbs/man/ibv_reg_mr.3"
NCCL_1731 = "https://github.com/NVIDIA/nccl/issues/1731"
VM_APPENDIX = (
    "https://docs.nvidia.com/ai-enterprise/planning-resource/optimizing-vm-configuration-ai-inference/"
    "latest/appendix.html"
)

ENTRIES = (
    # -- copies ----------------------------------------------------------------------------------
    E(
        "PERF-CE-H2D-LOW",
        "copy",
        "WARN (FAIL below 50%)",
        "a pinned H2D copy of 64 MiB or more reaches less "
        "than 90% of what the PCIe model gives this link with its MaxPayload and MaxReadReq",
        "Healthy hosts reach 94-97% of the model; the model already accounts for a small MaxPayload, so what "
        "remains is a link downgraded under load, IOMMU translation or NUMA placement.",
        "See the CAUSE-* findings for this machine; each names its experiment.",
        READ_RETURN,
        PCIE_MODEL,
    ),
    E(
        "PERF-PAGEABLE-SLOW",
        "copy",
        "INFO",
        "pageable H2D copies run at under half the pinned rate",
        "The driver stages pageable memory through its own pinned buffers, copying twice.",
        "Pin transfer buffers once (cudaHostAlloc / cudaHostRegister) and reuse them.",
        BEST,
    ),
    E(
        "PERF-SMALL-COPIES",
        "copy",
        "INFO",
        "the block size at which one copy call per block reaches half the coalesced bandwidth",
        "Each copy call costs microseconds of launch overhead, which dominates small blocks.",
        "Coalesce blocks, use cuMemcpyBatchAsync (CUDA 12.8+), or gather with a kernel.",
        BEST,
    ),
    # -- gathers ---------------------------------------------------------------------------------
    E(
        "ALIGN-01",
        "gather",
        "WARN",
        "a gather layout loses more than 5% of the link to partial 128-B lines, even read the best SM way",
        "SM loads fetch whole 32-B sectors of 128-B lines; records that straddle "
        "lines pay for bytes nobody asked for.",
        "Pad the stride or align the table base as the evidence says.",
        READ_RETURN,
        BEST,
    ),
    E(
        "ALIGN-02",
        "gather",
        "WARN",
        "records are not 16-byte aligned (stride or base offset)",
        "16-B vector loads need two chunks and a shift per destination chunk when records are misaligned.",
        "Align records to 16 B.",
        BEST,
    ),
    E(
        "ALIGN-03",
        "gather",
        "INFO",
        "runs of consecutive records are long enough that one copy-engine call per run would beat the gather",
        "For long contiguous runs the copy engine's per-call cost is amortised "
        "and it moves full-size requests.",
        "Use the copy engine for long runs.",
        BEST,
    ),
    E(
        "PERF-GATHER-01",
        "gather",
        "WARN",
        "a gather kernel reaches less than 85% of what the PCIe model allows for its layout",
        "The link is not what limits it: too few bytes in flight, split lines, or read tags exhausted.",
        "More bytes in flight per SM, line-aware loads.",
        PCIE_MODEL,
    ),
    E(
        "PERF-GATHER-02",
        "gather",
        "WARN",
        "the copy-engine reference of a gather run is below 90% of what the "
        "PCIe model gives its link (the same threshold as PERF-CE-H2D-LOW)",
        "Every gather ratio is divided by this reference; a weak reference hides the real loss.",
        "Check the link under load, MaxPayload/MaxReadReq, IOMMU mode and NUMA placement first.",
        PCIE_MODEL,
    ),
    E(
        "PERF-GATHER-03",
        "gather",
        "INFO (WARN above 25% of the SMs)",
        "how many SMs the best kernel needs for 95% of its all-SM bandwidth",
        "SMs spent on gathering are not computing; the fewer, the better.",
        "Cap the gather's SMs at the number shown.",
        BEST,
    ),
    # -- RDMA WRITE measurements -----------------------------------------------------------------
    E(
        "RO-AB-SENSITIVE",
        "rdma",
        "WARN (FAIL at 2x or more)",
        "relaxed ordering raises RDMA WRITE bandwidth by 10% or more on a path",
        "Writes without the attribute are throttled by strict PCIe ordering.",
        "Register bulk-data MRs with IBV_ACCESS_RELAXED_ORDERING; keep flag/signal MRs strict.",
        ORDERING,
        IBV_REG_MR,
    ),
    E(
        "RO-AB-IGNORED",
        "rdma",
        "WARN",
        "a GPU-memory path is slow against host memory and relaxed ordering changes nothing",
        "Either ordering is not what limits the path, or the flag never reached the wire.",
        "See CAUSE-RO-NOT-HONOURED and CAUSE-P2P-VIA-RC for this machine.",
        IBV_REG_MR,
        RO_SERIES,
    ),
    E(
        "RO-AB-NO-EFFECT",
        "rdma",
        "INFO",
        "relaxed ordering changes nothing and the path is healthy",
        "Ordering does not limit this path.",
        "Nothing to change.",
        ORDERING,
    ),
    E(
        "GDR-DEVICE-SLOW",
        "rdma",
        "FAIL below 50%, WARN below 70%",
        "RDMA WRITE into GPU memory against host memory of the same run",
        "The NIC->GPU peer path is the bottleneck, not the wire.",
        "The CAUSE-* findings weigh this machine's candidates and give the fix.",
        NCCL_1731,
        GDR_DOC,
    ),
    E(
        "GDR-MANAGED-IS-HOST",
        "rdma",
        "INFO",
        "managed memory registered with ibv_reg_mr was measured",
        "On x86 the registration pins host pages, so the number is a host-memory number.",
        "Do not read it as GPUDirect; compare device memory with a host reference.",
        "https://github.com/linux-rdma/perftest/issues/283",
    ),
    E(
        "GDR-DEVICE-REG-FAILED",
        "rdma",
        "WARN (INFO when waived)",
        "device memory could not be registered on a path",
        "The registration prerequisites for that path are missing.",
        "nvidia-peermem for --reg mr; the open kernel module and a dma-buf capable stack for --reg dmabuf.",
        GDR_DOC,
    ),
    E(
        "GDR-PATHS-DIFFER",
        "rdma",
        "WARN",
        "dma-buf and nvidia-peermem registration of device memory differ by more than 25%",
        "The two paths can map GPU memory differently (BAR1 or a C2C mapping).",
        "Use the faster path; on C2C platforms check the PCIe mapping flag.",
        GDR_DOC,
    ),
    # -- causes ----------------------------------------------------------------------------------
    E(
        "CAUSE-RO-NOT-REQUESTED",
        "causes",
        CAUSE_SEVERITY,
        "GPU-memory rows registered without IBV_ACCESS_RELAXED_ORDERING "
        "trail host memory (measured share with an RO A/B; inferred without)",
        "Strictly ordered posted writes stall where peer traffic crosses a root complex (VMs, far pairs, and "
        "CPUs whose root complex needs relaxed writes); an A/B measures how much the flag recovers.",
        "Request relaxed ordering on bulk-data MRs; the next step runs the A/B.",
        ORDERING,
        IBV_REG_MR,
        "https://github.com/openucx/ucx/pull/10955",
    ),
    E(
        "CAUSE-RO-NOT-HONOURED",
        "causes",
        CAUSE_SEVERITY,
        "RO was requested and the GPU path is "
        "still slow; weighed by the kernel version and driver flavour for VFs and the PF's RO enable bit",
        "A VF under an in-tree mlx5 older than 6.4 drops the flag; an out-of-tree mlx5 may carry the fix; a "
        "PF with RlxdOrd- cannot emit relaxed writes.",
        "Kernel >= 6.4 or OFED with the backport; or fix the PF's enable bit.",
        COMMIT + "ed4b0661cce1",
        COMMIT + "bd4ba605c4a9",
        DEVCTL,
    ),
    E(
        "CAUSE-P2P-VIA-RC",
        "causes",
        CAUSE_SEVERITY,
        "the GPU path is still slow after what "
        "relaxed ordering explains, in a VM (no vIOMMU/ATS visible) or behind an ACS-redirecting switch",
        "Peer writes routed through the root complex are translated and ordered there instead of turning in "
        "the switch.",
        "VM: ATS on the NIC, ACS Direct Translated P2P, a vIOMMU (on the host). Bare metal: "
        "clear ACS redirect on the path.",
        ACS_SEC,
        ATS_CH,
        VM_APPENDIX,
    ),
    E(
        "CAUSE-GPU-NIC-FAR",
        "causes",
        CAUSE_SEVERITY,
        "bare metal, a slow GPU path and no NIC under the GPU's switch",
        "Peer traffic crosses the root complex or the socket interconnect.",
        "Use a NIC under the GPU's switch.",
        GDR_DOC,
    ),
    E(
        "CAUSE-LINK-DEGRADED",
        "causes",
        CAUSE_SEVERITY,
        "a large H2D copy below the model and the "
        "GPU link under load below its capable speed or width (measured share)",
        "The link itself delivers less than the model assumes.",
        "Reseat, check wiring, bifurcation, BIOS speed and retimers.",
        "PCIe Base Spec r5.0 sec. 7.5.3.8 (Link Status)",
    ),
    E(
        "CAUSE-IOMMU-TRANSLATION",
        "causes",
        CAUSE_SEVERITY,
        "a large H2D copy below the model on a host whose GPU/NIC IOMMU groups translate",
        "Each DMA page needs a translation; IOTLB misses cost bandwidth.",
        "iommu=pt on bare metal.",
        GDR_DOC,
    ),
    E(
        "CAUSE-NUMA-PLACEMENT",
        "causes",
        CAUSE_SEVERITY,
        "a large H2D copy below the model and nothing measured rules out a remote NUMA node",
        "Buffers on the other socket cross the socket interconnect. The benches run on the GPU's "
        "node by default (--numa auto) and record the placement; a run bound there makes this cause "
        "weak, a run that could not be bound (one node, numa_node -1 in a VM) leaves it open.",
        "Run bound to the GPU's NUMA node (--numa auto, or --numa N).",
        BEST,
    ),
    E(
        "CAUSE-WORKING-SET",
        "causes",
        CAUSE_SEVERITY,
        "gather-bench --sweep working-set: bandwidth at the largest table below 85% of the smallest",
        "The link and the records are the same at every size, so a decline is "
        "translation reach (IOMMU IOTLB, "
        "device ATC) or NUMA placement.",
        "Huge pages, iommu=pt, NUMA-local tables, or keep the hot set below the knee.",
        ATS_CH,
        "https://github.com/NVIDIA/nvbandwidth",
    ),
    E(
        "CAUSE-REG-PATH-MISSING",
        "causes",
        CAUSE_SEVERITY,
        "every GPU-memory RDMA case failed to register (WAIVED/ERROR) while the machine shows why",
        "Without a registration path (nvidia-peermem for ibv_reg_mr, or dma-buf) a NIC cannot address GPU "
        "memory at all.",
        "modprobe nvidia_peermem, or the open kernel module with a dma-buf capable kernel and rdma-core.",
        GDR_DOC,
    ),
    E(
        "CAUSE-NIC-LINK",
        "causes",
        CAUSE_SEVERITY,
        "host-memory RDMA WRITE below 70% of the port rate and the NIC's PCIe link below its capable "
        "speed or "
        "width (measured share: what the link can carry against the wire)",
        "A NIC whose PCIe link trained narrower or slower than it can cannot feed its port.",
        "Reseat the NIC, check slot wiring, bifurcation and the BIOS link speed.",
        "PCIe Base Spec r5.0 sec. 7.5.3.8 (Link Status)",
    ),
    E(
        "CAUSE-SMALL-MESSAGES",
        "causes",
        CAUSE_SEVERITY,
        "host-memory RDMA WRITE below 70% of the port rate with only messages of 64 KiB or less measured",
        "Each message costs posting, a work request and per-packet headers; small messages are bounded by "
        "the "
        "message rate, not by a path.",
        "Larger messages, post lists, more QPs, fewer signalled completions.",
        IBV_REG_MR,
    ),
    # -- measurement status and internal ---------------------------------------------------------
    E(
        "MEASURE-FAILED",
        "measure",
        "FAIL",
        "a case ran and failed (ERROR, or a failed payload check)",
        "Bytes that arrive wrong void every number of that path; diagnose and report exit 1.",
        "Re-run the case alone; check dmesg for AER and IOMMU faults.",
        "PCIe Base Spec r5.0 sec. 6.2 (Error Signaling and Logging)",
    ),
    E(
        "MEASURE-NEXT",
        "measure",
        "INFO",
        "a GPU and a NIC but the RDMA measurements needed to judge the path "
        "are missing (none, no host reference, or one RO state only)",
        "With partial evidence the cause model can only infer; one command measures what is missing.",
        "Run the command shown and diagnose again.",
        IBV_REG_MR,
    ),
    E(
        "DIAG-RULE-ERROR",
        "measure",
        "WARN",
        "a rule raised on unusual data; the other findings are still reported",
        "A bug in gdrdiag, not in the machine.",
        "Please report it with the bundle (gdrdiag collect).",
    ),
    E(
        "CAUSE-PAGEABLE-MEMORY",
        "causes",
        CAUSE_SEVERITY + "; INFO when gdrdiag measured pageable beside pinned rows of the same direction "
        "(by design; when those lose too, the path's own cause leads)",
        "a host<->GPU copy from or to pageable (or managed) memory below what its path allows, either "
        "direction",
        "The driver copies pageable memory through a pinned staging buffer chunk by chunk, so the copy "
        "engine waits on host memcpy and page pinning.",
        "Allocate transfer buffers pinned (cudaHostAlloc, torch pin_memory=True) or register them once "
        "(cudaHostRegister) and reuse them.",
        "https://docs.nvidia.com/cuda/cuda-c-best-practices-guide/index.html#pinned-memory",
    ),
    E(
        "CAUSE-SMALL-COPIES",
        "causes",
        "INFO, or as CAUSE_SEVERITY when it explains a measured loss",
        "a copy as fast as its size allows but at half its link's peak or less: the per-copy cost "
        "(fitted from the Report's own sweep, else 4 us) sets it",
        "Each copy call costs microseconds besides its bytes; below tens of KiB that cost dominates.",
        "Coalesce blocks, batch them (cuMemcpyBatchAsync), or gather with a kernel over mapped pinned "
        "memory.",
        "https://docs.nvidia.com/cuda/cuda-c-best-practices-guide/index.html#data-transfer-between-host-and-device",
    ),
    E(
        "CAUSE-LINK-NARROW",
        "causes",
        "INFO (the row is healthy: by design of the slot or card)",
        "a healthy row whose narrowest bound is a PCIe link below Gen4 x16 (old generation, x8/x4 slot)",
        "The number is the link's own ceiling; nothing on the path is misconfigured.",
        "Use a Gen4/Gen5 x16 slot wired to the CPU, or a card that supports it.",
        "PCIe Base Spec r5.0 sec. 7.5.3.6 (Link Capabilities)",
    ),
    E(
        "CAUSE-PEER-ACCESS-OFF",
        "causes",
        CAUSE_SEVERITY + "; INFO when the tool measured peer access off beside healthy enabled rows",
        "GPU<->GPU copies without peer access below the peer path's expectation",
        "Without peer access the driver stages a peer copy through host memory: two PCIe crossings, "
        "no NVLink.",
        "cudaDeviceEnablePeerAccess / cuCtxEnablePeerAccess in both directions; check NCCL_P2P_DISABLE.",
        "https://docs.nvidia.com/cuda/cuda-c-programming-guide/index.html#peer-to-peer-memory-access",
    ),
    E(
        "CAUSE-P2P-UNSUPPORTED",
        "causes",
        CAUSE_SEVERITY,
        "GPU<->GPU rows with peer access requested still at staged speed",
        "The platform (chipset, ACS on the switch ports, a hypervisor) does not route peer traffic.",
        "Check cudaDeviceCanAccessPeer and nvidia-smi topo -p2p r; in a VM allow P2P between the "
        "passed-through GPUs; on bare metal check ACS and the BIOS.",
        "https://docs.nvidia.com/cuda/cuda-c-programming-guide/index.html#peer-to-peer-memory-access",
    ),
    E(
        "CAUSE-NO-PEER-MEMORY",
        "causes",
        CAUSE_SEVERITY,
        "an NCCL or GPU-memory RDMA loss on a machine where nvidia_peermem is not loaded",
        "Without a peer-memory path the NIC cannot DMA into GPU memory; NCCL stages through host memory.",
        "modprobe nvidia_peermem, or use dma-buf with the open NVIDIA kernel module.",
        "https://docs.nvidia.com/cuda/gpudirect-rdma/index.html",
    ),
    E(
        "PERF-PATH-SLOW",
        "causes",
        "WARN",
        "a row below 80% of what its path allows (gdrdiag/pathmodel/) that no cause in the Report explains",
        "The symptom with no candidate: the Report lacks the facts or measurements that would name one.",
        "Measure with gdrdiag (or import with --bundle) so the cause model can weigh the candidates.",
    ),
    E(
        "PERF-PATH-UNSTABLE",
        "causes",
        "INFO",
        "a loss no cause explains whose best samples reach 90% of what its path allows",
        "The path carries its rate: something else used the link or host memory for part of the run.",
        "Run it again; if it repeats, watch the GPU's PCIe traffic while measuring (nvidia-smi dmon -s t).",
        "https://docs.nvidia.com/deploy/nvidia-smi/index.html",
    ),
    E(
        "CAUSE-MPS-MRRS",
        "causes",
        CAUSE_SEVERITY,
        "a pinned copy below its path with the GPU's MaxReadReq under 512 B or MaxPayload under 256 B",
        "Small read requests keep few bytes in flight per tag; small payloads cost more headers per byte.",
        "Raise MaxReadReq to 4096 and MaxPayload to what the path allows (BIOS, setpci, pci=pcie_bus_perf).",
        "PCIe Base Spec r5.0 sec. 7.5.3.4 (Device Control)",
    ),
)
