"""Catalogue entries of the GPU<->GPU peer rules (:mod:`gdrdiag.diagnose.peer_rules`).

Written in our own words; see :mod:`gdrdiag.diagnose.catalogue`.
"""

from __future__ import annotations

from gdrdiag.diagnose.catalogue_entry import E
from gdrdiag.diagnose.catalogue_machine import ACS_SEC, FABRIC_MANAGER

PEER_ACCESS = "https://docs.nvidia.com/cuda/cuda-c-programming-guide/index.html#peer-to-peer-memory-access"
NCCL_ENV = "https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/env.html#nccl-p2p-disable"
NCCL_TOPO = "https://github.com/NVIDIA/nccl/blob/master/src/graph/topo.h"
NCCL_1264 = "https://github.com/NVIDIA/nccl/issues/1264"
NVSMI = "https://docs.nvidia.com/deploy/nvidia-smi/index.html"

ENTRIES = (
    E(
        "CAUSE-PEER-SLOWER-THAN-STAGED",
        "peer",
        "FAIL when it leads its loss and explains half or more of a loss of half or more; WARN for a "
        "fair share; else INFO",
        "a GPU pair's copy with peer access on runs slower than the same copy staged through host memory "
        "(P2P enabled slower than disabled: p2pBandwidthLatencyTest, nvbandwidth or peer-bench)",
        "A staged copy crosses both GPUs' PCIe links through host memory; a working peer path is never "
        "slower. Something on the peer path throttles it: an IOMMU translating peer traffic, ACS redirect "
        "on a port between the GPUs, a BAR1 too small or unassigned, or a driver that does not offer P2P "
        "for the pair. It is not peer access left off.",
        "Fix the fact the finding names first (iommu=pt, ACS redirect off, Resizable BAR, a P2P-capable "
        "placement); without a bundle, run `gdrdiag collect -o node.tar.gz` on that machine and import "
        "again with --bundle.",
        PEER_ACCESS,
        ACS_SEC,
    ),
    E(
        "PEER-ACCESS-OFF",
        "peer",
        "INFO when both were measured (peer access works here: the off rows are the cost of not "
        "enabling it; one finding for every pair measured, with each pair's ratio); FAIL or WARN when "
        "only staged copies were measured on a pair the driver offers peer access to and the model "
        "gives 2x or more",
        "a GPU->GPU copy of 64 MiB or more with peer access off runs 1.5x or more slower than with it on "
        "(measured), or than the path model with it on",
        "Without peer access cudaMemcpyPeer is staged through host memory: device to host, then host to "
        "device, over both GPUs' PCIe links. On an NVLink pair that is about a tenth of the link.",
        "Enable peer access (cudaDeviceEnablePeerAccess / cuCtxEnablePeerAccess from each GPU); leave "
        "NCCL_P2P_DISABLE unset; make both GPUs visible to the process.",
        PEER_ACCESS,
        NCCL_ENV,
    ),
    E(
        "PEER-P2P-UNSUPPORTED",
        "peer",
        "WARN",
        "cuDeviceCanAccessPeer is 0 for a GPU pair",
        "The driver refuses peer mappings on this path (topology or chipset not supported, or a VM that "
        "does not expose P2P), so copies are staged and kernels cannot touch the peer's memory.",
        "`nvidia-smi topo -p2p rw` names the reason; in a VM ask for a P2P-capable shape; on bare metal "
        "put the GPUs under one switch with ACS redirect off.",
        PEER_ACCESS,
        NVSMI,
    ),
    E(
        "PEER-NVLINK-DOWN",
        "peer",
        "WARN (FAIL when no link is active)",
        "NVML lists NVLinks of a GPU that are not active",
        "Each NVLink carries its share of the pair's bandwidth (26.6 GB/s per direction on H100); a link "
        "down lowers every transfer on it and NCCL's ring and tree bandwidth.",
        "`nvidia-smi nvlink -s` / `-e`; on NVSwitch systems check nvidia-fabricmanager; a link that stays "
        "down after a reset is a hardware case.",
        NVSMI,
    ),
    E(
        "PEER-ACS-REDIRECT",
        "peer",
        "FAIL",
        "bare metal: a GPU<->GPU PCIe path (PIX/PXB) crosses a switch downstream port with ACS request or "
        "completion redirect on",
        "Redirected peer requests go up to the root complex and back instead of across the switch, which "
        "costs bandwidth or blocks P2P entirely.",
        "Disable ACS redirect on those ports (BIOS, pci=disable_acs_redir=, setpci); iommu=pt alone does "
        "not clear it.",
        ACS_SEC,
    ),
    E(
        "PEER-SLOW",
        "peer",
        "WARN (FAIL below 50%)",
        "a copy-engine GPU->GPU copy of 64 MiB or more with peer access on, or a node-wide pattern of 3 "
        "GPUs or more (every other GPU into one, one into every other, all to all in shifted steps), "
        "reaches under 90% of the path model (NVLink: links x per-link rate x 0.83; PCIe: the narrowest "
        "link's copy rate; patterns: the destination's ingress, the source's egress, the steps' times)",
        "Healthy NVLink pairs reach the model within a few percent, and so do healthy NVSwitch nodes with "
        "every GPU sending and receiving at once (4 x H200: 0.96-1.00); below it a link runs slow, "
        "another job shares the GPUs, the switch fabric is degraded, or a PCIe peer path crosses a root "
        "complex.",
        "Check links (`nvidia-smi nvlink -s` on every GPU, `topo -m`), the NVSwitch fabric state "
        "(`nvidia-smi -q`: Fabric State Completed, Status Success) and that the GPUs are idle; place "
        "PCIe peers under one switch.",
        NCCL_1264,
        NCCL_TOPO,
        FABRIC_MANAGER,
    ),
)
