"""Catalogue entries of the NCCL cause rules (:mod:`gdrdiag.diagnose.causes_nccl`).

Written in our own words; see :mod:`gdrdiag.diagnose.catalogue`.
"""

from __future__ import annotations

from gdrdiag.diagnose.catalogue_entry import E

NCCL_ENV = "https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/env.html"
NCCL_TROUBLE = "https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/troubleshooting.html"
NCCL_TESTS_PERF = "https://github.com/NVIDIA/nccl-tests/blob/master/doc/PERFORMANCE.md"

NVML_QUERIES = "https://docs.nvidia.com/deploy/nvml-api/group__nvmlDeviceQueries.html"
CUDA_COMPUTE_MODES = "https://docs.nvidia.com/cuda/cuda-c-programming-guide/index.html#compute-modes"

ENTRIES = (
    E(
        "CAUSE-GPU-BUSY",
        "causes",
        "as CAUSE-NCCL-NO-P2P",
        "a row on a GPU is below its path and, when the machine facts were read, another process held a "
        "compute context on that GPU (NVML's compute processes) or its SMs were busy (NVML utilisation "
        "of 50% or more with nothing of gdrdiag's running)",
        "Processes on one GPU share it by time-slicing unless MPS or MIG splits it: a kernel-driven "
        "transfer (NCCL, SM copies, zero-copy gathers) gets only its share of the SMs' time. Copy-engine "
        "copies are hit less. The facts are a snapshot: collect the bundle while the slow run happens.",
        "Run when the GPU is idle, or move the other job (`nvidia-smi --query-compute-apps=pid,"
        "process_name,used_memory --format=csv` lists it); for shared GPUs consider exclusive-process "
        "compute mode or MPS.",
        NVML_QUERIES,
        CUDA_COMPUTE_MODES,
    ),
    E(
        "CAUSE-NCCL-NO-P2P",
        "causes",
        "FAIL when it leads its loss and explains half or more of a loss of half or more; WARN for a "
        "fair share; else INFO",
        "an NCCL collective whose ranks all sit on one host reaches below 80% of its GPUs' peer path "
        "(NVLink, or PCIe peer-to-peer) and NCCL moved its bytes through host memory: NCCL's log shows "
        "channels via SHM (or the run set NCCL_P2P_DISABLE=1 or NCCL_P2P_LEVEL=LOC)",
        "With its P2P transport off NCCL copies every chunk into shared host memory and out again, over "
        "each GPU's PCIe link in both directions at once; on an NVLink pair that is about a tenth of the "
        "links. The variable that turned P2P off is the cause; when none did, the driver refused peer "
        "access (cudaDeviceCanAccessPeer 0: a VM, ACS redirect, IOMMU).",
        "Unset the variable the finding names (NCCL_P2P_DISABLE, NCCL_P2P_LEVEL=LOC); when none is set, "
        "check `nvidia-smi topo -p2p r` and fix what refuses peer access.",
        NCCL_ENV + "#nccl-p2p-disable",
        NCCL_TESTS_PERF,
    ),
    E(
        "CAUSE-NCCL-SOCKET-LOCAL",
        "causes",
        "as CAUSE-NCCL-NO-P2P",
        "an NCCL collective within one host went through the network transport (NCCL's log: via "
        "NET/Socket or NET/IB) instead of GPU peer paths or shared memory",
        "With P2P and SHM both off (NCCL_P2P_DISABLE=1 and NCCL_SHM_DISABLE=1) NCCL connects ranks of "
        "one host through its network plugin: TCP sockets through the kernel, a few GB/s.",
        "Unset NCCL_P2P_DISABLE and NCCL_SHM_DISABLE (and NCCL_NET / NCCL_IB_DISABLE overrides meant "
        "for other jobs).",
        NCCL_ENV + "#nccl-shm-disable",
    ),
    E(
        "CAUSE-NCCL-SETTING",
        "causes",
        "as CAUSE-NCCL-NO-P2P",
        "an NCCL collective within one host below its peer path ran with a knob that limits it: one "
        "channel (NCCL_MAX_NCHANNELS=1, or '1 coll channels' in the log) or a forced protocol or "
        "algorithm (NCCL_PROTO=LL, NCCL_ALGO)",
        "Each channel is one block of SMs driving one share of the links: one channel cannot fill "
        "NVLink. The LL protocol carries 4 bytes of data per 8-byte store (flags beside the data), so "
        "at most half the link; a forced algorithm skips NCCL's own choice by size.",
        "Unset the variable the finding names and let NCCL tune; keep it only where a test needs it.",
        NCCL_ENV + "#nccl-max-nchannels",
        NCCL_ENV + "#nccl-proto",
    ),
    E(
        "NCCL-LOG-NO-P2P",
        "causes",
        "WARN (no loss measured: the log holds no bandwidth)",
        "an NCCL INFO log imported alone (no nccl-tests table) of a run whose ranks all sit on one host "
        "shows P2P off between its GPUs: channels via SHM, or NCCL_P2P_DISABLE=1 or NCCL_P2P_LEVEL=LOC "
        "set by environment",
        "With its P2P transport off NCCL copies every chunk into shared host memory and out again; on "
        "GPUs with NVLink or PCIe peer-to-peer that is a fraction of their peer path. The log says what "
        "NCCL did, not how fast: the finding states the setting, and a measurement (nccl-tests with the "
        "same environment) says what it costs.",
        "Unset the variable the finding names (NCCL_P2P_DISABLE, NCCL_P2P_LEVEL=LOC); when none is set, "
        "check `nvidia-smi topo -p2p r` and fix what refuses peer access.",
        NCCL_ENV + "#nccl-p2p-disable",
        NCCL_ENV + "#nccl-p2p-level",
    ),
    E(
        "NCCL-LOG-SOCKET-LOCAL",
        "causes",
        "WARN (no loss measured: the log holds no bandwidth)",
        "an NCCL INFO log imported alone of a run whose ranks all sit on one host shows its GPUs "
        "connected through the network transport (via NET/Socket or NET/IB), none via P2P or SHM",
        "With P2P and SHM both off (NCCL_P2P_DISABLE=1 and NCCL_SHM_DISABLE=1) NCCL connects ranks of "
        "one host through its network plugin: TCP sockets through the kernel, a few GB/s.",
        "Unset NCCL_P2P_DISABLE and NCCL_SHM_DISABLE (and NCCL_NET / NCCL_IB_DISABLE overrides meant "
        "for other jobs).",
        NCCL_ENV + "#nccl-shm-disable",
    ),
    E(
        "NCCL-LOG-SETTING",
        "causes",
        "WARN (no loss measured: the log holds no bandwidth)",
        "an NCCL INFO log imported alone of a run whose ranks all sit on one host shows a knob that "
        "limits collectives: one channel (NCCL_MAX_NCHANNELS=1, or '1 coll channels') or a forced "
        "protocol or algorithm (NCCL_PROTO, NCCL_ALGO)",
        "Each channel is one block of SMs driving one share of the links: one channel cannot fill "
        "NVLink. The LL protocol carries 4 bytes of data per 8-byte store, so at most half the link; a "
        "forced algorithm skips NCCL's own choice by size. The log shows the knob, not its cost.",
        "Unset the variable the finding names and let NCCL tune; keep it only where a test needs it.",
        NCCL_ENV + "#nccl-max-nchannels",
        NCCL_ENV + "#nccl-proto",
    ),
    E(
        "MEASURE-NCCL-LOG",
        "measure",
        "WARN",
        "an NCCL collective within one host is below its GPUs' peer path and its output has no NCCL "
        "INFO log to say which transport and settings it ran with",
        "nccl-tests' table says how fast, not why: P2P off, SHM or sockets, one channel, a forced "
        "protocol and another process on a GPU all look the same in it. NCCL's INFO lines decide.",
        "Run it again with NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,GRAPH,ENV and import that output.",
        NCCL_TROUBLE,
    ),
)
