"""Facts about one machine, as ``inspect`` collected them.

This is the snapshot ``diagnose`` reasons about. Each record keeps an ``unknown`` mapping of
field name -> reason for facts that could not be read (no root, no driver, not in a bundle),
so "unknown" is never confused with 0 or False.

Register names follow what ``lspci -vvv`` prints (RlxdOrd, MaxPayload, MaxReadReq, ACSCtl,
ATSCtl) so a reader can cross-check a value against lspci on the same machine
(PCIe Base Spec r5.0 chapter 7).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Optional


@dataclass(frozen=True)
class HostInfo:
    """Identity of the machine a Report was taken on."""

    hostname: str = ""
    kernel: str = ""
    os: str = ""
    cpu_model: str = ""
    unknown: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class CudaDeviceFacts:
    """What the CUDA driver says about one GPU (the fields benches need)."""

    ordinal: int
    name: str
    pci_bus_id: str
    compute_capability: tuple[int, int]
    total_memory: int
    multiprocessor_count: int
    attributes: dict[str, Optional[int]] = field(default_factory=dict)


# --------------------------------------------------------------------------------------------
# PCI functions and their registers
# --------------------------------------------------------------------------------------------


class PortType(str, enum.Enum):
    """PCIe capability Flags[7:4] device/port type (Linux include/uapi/linux/pci_regs.h PCI_EXP_TYPE_*)."""

    ENDPOINT = "endpoint"
    LEGACY_ENDPOINT = "legacy_endpoint"
    ROOT_PORT = "root_port"
    SWITCH_UPSTREAM = "switch_upstream"
    SWITCH_DOWNSTREAM = "switch_downstream"
    PCIE_TO_PCI_BRIDGE = "pcie_to_pci_bridge"
    PCI_TO_PCIE_BRIDGE = "pci_to_pcie_bridge"
    RC_INTEGRATED_ENDPOINT = "rc_integrated_endpoint"
    RC_EVENT_COLLECTOR = "rc_event_collector"
    OTHER = "other"


@dataclass(frozen=True)
class PcieLink:
    """One link as a function sees it: negotiated (LnkSta) against capable (LnkCap).

    ``source`` says where the numbers came from: ``registers`` (config space, root) or
    ``sysfs`` (the ``current_link_speed``/``max_link_width`` text files, any user). The
    ``*_downgraded`` flags are lspci's "(downgraded)" comparison, made once in inspect.
    """

    speed_gts: Optional[float] = None
    width: Optional[int] = None
    max_speed_gts: Optional[float] = None
    max_width: Optional[int] = None
    source: str = ""
    speed_downgraded: Optional[bool] = None
    width_downgraded: Optional[bool] = None
    raw_gbytes_per_s: Optional[float] = None
    max_raw_gbytes_per_s: Optional[float] = None
    unknown: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class CapEntry:
    """One entry of the standard (``extended=False``) or extended capability list."""

    cap_id: int
    offset: int
    name: str
    extended: bool = False
    version: int = 0


@dataclass(frozen=True)
class PcieCap:
    """Decoded PCI Express capability (ID 0x10) registers (PCIe Base Spec r5.0 sec. 7.5.3)."""

    offset: int
    version: int
    port_type: PortType
    # DevCap
    max_payload_supported: int
    ext_tag_supported: bool
    flr: bool
    # DevCtl
    relaxed_ordering: bool  # RlxdOrd
    ext_tag: bool  # ExtTag
    no_snoop: bool  # NoSnoop
    max_payload: int  # MaxPayload, bytes
    max_read_request: int  # MaxReadReq, bytes
    # DevSta
    corr_err: bool = False
    nonfatal_err: bool = False
    fatal_err: bool = False
    unsupp_req: bool = False
    # LnkCtl
    rcb_bytes: Optional[int] = None
    aspm: Optional[str] = None
    # DevCap2 / DevCtl2 (absent on version-1 capabilities)
    no_ro_enabled_pr_pr_passing: Optional[bool] = None  # NROPrPrP
    tag10_completer: Optional[bool] = None
    tag10_requester: Optional[bool] = None
    tag10_requester_enabled: Optional[bool] = None
    atomic_routing: Optional[bool] = None
    atomic32_completer: Optional[bool] = None
    atomic64_completer: Optional[bool] = None
    atomic128_completer: Optional[bool] = None
    atomic_requester_enabled: Optional[bool] = None
    ido_request_enabled: Optional[bool] = None
    ido_completion_enabled: Optional[bool] = None
    supported_speeds_gts: tuple[float, ...] = ()  # LnkCap2 vector
    target_speed_gts: Optional[float] = None  # LnkCtl2


@dataclass(frozen=True)
class AcsCap:
    """ACS extended capability (0x000D): capability and control words with lspci's flag names."""

    offset: int
    cap: int
    ctl: int
    cap_flags: tuple[str, ...] = ()  # e.g. ("SrcValid", "ReqRedir", ...)
    ctl_flags: tuple[str, ...] = ()  # the bits set in ACSCtl


@dataclass(frozen=True)
class AtsCap:
    """ATS extended capability (0x000F): ``ATSCtl: Enable+/-, Smallest Translation Unit``."""

    offset: int
    enabled: bool
    stu: int
    invalidate_queue_depth: int


@dataclass(frozen=True)
class SriovCap:
    """SR-IOV extended capability (0x0010) of a PF."""

    offset: int
    vf_enable: bool
    ari_hierarchy: bool
    initial_vfs: int
    total_vfs: int
    num_vfs: int
    first_vf_offset: int
    vf_stride: int
    vf_device_id: int


@dataclass(frozen=True)
class AerCap:
    """AER extended capability (0x0001): raw status registers."""

    offset: int
    uncorrectable_status: int
    correctable_status: int


@dataclass(frozen=True)
class RebarCap:
    """Resizable BAR extended capability (0x0015): per BAR, the current size in bytes."""

    offset: int
    current_sizes: dict[str, int] = field(default_factory=dict)  # BAR index -> bytes
    supported_sizes: dict[str, tuple[int, ...]] = field(default_factory=dict)


@dataclass(frozen=True)
class Bar:
    """One region from sysfs ``resource`` (line index = BAR index; 6 = ROM; 7+ = VF BARs)."""

    index: int
    size: int
    is_io: bool = False
    is_64bit: bool = False
    prefetchable: bool = False


@dataclass(frozen=True)
class PciFunction:
    """One PCI function: identity, place in the tree, link, registers and SR-IOV role.

    ``sysfs_path`` is the device's real path under /sys/devices (``pci0000:00/0000:00:01.0/...``),
    the chain topology is computed from. ``config_bytes`` is how many bytes of config space were
    readable (64 without root, Linux drivers/pci/pci-sysfs.c); register facts beyond that are None
    with a reason.
    """

    bdf: str
    vendor_id: Optional[int] = None
    device_id: Optional[int] = None
    class_code: Optional[int] = None
    subsystem_vendor_id: Optional[int] = None
    subsystem_device_id: Optional[int] = None
    revision: Optional[int] = None
    driver: Optional[str] = None
    sysfs_path: str = ""
    parent_bdf: Optional[str] = None
    host_bridge: str = ""
    is_bridge: bool = False
    numa_node: Optional[int] = None
    local_cpulist: Optional[str] = None
    iommu_group: Optional[int] = None
    iommu_group_type: Optional[str] = None
    iommu_group_size: Optional[int] = None
    # SR-IOV role
    is_vf: Optional[bool] = None
    vf_evidence: str = ""
    physfn: Optional[str] = None
    virtfns: tuple[str, ...] = ()
    sriov_totalvfs: Optional[int] = None
    sriov_numvfs: Optional[int] = None
    # link and registers
    link: Optional[PcieLink] = None
    config_bytes: int = 0
    config_size: Optional[int] = None
    caps: tuple[CapEntry, ...] = ()
    cap_problems: tuple[str, ...] = ()
    pcie: Optional[PcieCap] = None
    acs: Optional[AcsCap] = None
    ats: Optional[AtsCap] = None
    sriov: Optional[SriovCap] = None
    aer: Optional[AerCap] = None
    rebar: Optional[RebarCap] = None
    aer_counters: dict[str, int] = field(default_factory=dict)  # "correctable.BadTLP" -> n
    bars: tuple[Bar, ...] = ()
    unknown: dict[str, str] = field(default_factory=dict)


# --------------------------------------------------------------------------------------------
# GPUs, NICs, virtualization, kernel, topology
# --------------------------------------------------------------------------------------------


class DriverFlavour(str, enum.Enum):
    """NVIDIA kernel driver flavour from /proc/driver/nvidia/version (docs/inspect.md)."""

    OPEN = "open"
    PROPRIETARY = "proprietary"
    VGPU_GUEST = "vgpu_guest"


class FabricState(str, enum.Enum):
    """A GPU's registration with the NVSwitch fabric (``nvmlGpuFabricState_t``, NVML_GPU_FABRIC_STATE_*).

    On NVSwitch systems (HGX/DGX) nvidia-fabricmanager registers each GPU with the fabric; until it
    has, the GPU has no NVLink peer path (NVIDIA Fabric Manager user guide,
    https://docs.nvidia.com/datacenter/tesla/fabric-manager-user-guide/index.html). NVML's numbers
    0-3 in that order (https://docs.nvidia.com/deploy/nvml-api/group__nvmlFabricDefs.html).
    """

    NOT_SUPPORTED = "not_supported"  # no NVSwitch fabric for this GPU (PCIe or direct NVLink boards)
    NOT_STARTED = "not_started"
    IN_PROGRESS = "in_progress"
    COMPLETED = "completed"


@dataclass(frozen=True)
class GpuFabric:
    """What NVML's ``nvmlDeviceGetGpuFabricInfo(V)`` said about one GPU's place in the NVSwitch fabric.

    ``status`` is an ``nvmlReturn_t`` (0 = success; ``status_name`` its NVML name) and means something
    only once ``state`` is COMPLETED (NVML API reference, nvmlGpuFabricInfo_t). ``cluster_uuid`` and
    ``clique_id`` say which fabric partition the GPU joined: GPUs of one node that can reach each other
    over NVLink share both. ``health_mask`` is the V call's NVML_GPU_FABRIC_HEALTH_MASK_* bits, kept
    raw (None from the older call).
    """

    state: FabricState
    status: Optional[int] = None
    status_name: Optional[str] = None
    cluster_uuid: Optional[str] = None
    clique_id: Optional[int] = None
    health_mask: Optional[int] = None

    @property
    def applies(self) -> bool:
        """True when this GPU sits on an NVSwitch fabric (NVML reports a registration state)."""
        return self.state is not FabricState.NOT_SUPPORTED

    @property
    def failed(self) -> bool:
        """True when registration finished with an error status."""
        return self.state is FabricState.COMPLETED and self.status not in (None, 0)

    def health_problems(self) -> tuple[str, ...]:
        """What ``health_mask`` reports wrong, in words (empty: nothing, or no mask read).

        NVML packs one field per concern (nvml.h, NVML_GPU_FABRIC_HEALTH_MASK_*: shift and width
        each): degraded bandwidth (bits 0-1), route recovery in progress (2-3), route unhealthy
        (4-5) and access-timeout recovery (6-7) read 1 for TRUE, 2 for FALSE, 0 where unsupported;
        incorrect configuration (bits 8-11) reads 1 for none and 2-5 for what is wrong.
        """
        mask = self.health_mask
        if not mask:
            return ()
        out = [
            words
            for shift, words in (
                (0, "bandwidth degraded"),
                (2, "route recovery in progress"),
                (4, "route unhealthy"),
                (6, "access-timeout recovery in progress"),
            )
            if (mask >> shift) & 0x3 == 1
        ]
        config = (mask >> 8) & 0xF
        wrong = {
            2: "incorrect system GUID",
            3: "incorrect chassis serial number",
            4: "no fabric partition",
            5: "insufficient NVLinks",
        }
        if config in wrong:
            out.append(f"configuration: {wrong[config]}")
        return tuple(out)


@dataclass(frozen=True)
class GpuInfo:
    """One NVIDIA GPU: PCI place, link, BAR1, and the CUDA/NVML facts GPUDirect depends on.

    ``link_sampled_idle`` is True when the link was read with no traffic running: GPUs lower
    their link speed at idle for power saving (nvidia-smi documents that the current link generation
    and width "may be reduced when the GPU is not in use",
    https://docs.nvidia.com/deploy/nvidia-smi/index.html), so a slow idle reading is not a fault.
    """

    bdf: str
    name: str = ""
    cuda_ordinal: Optional[int] = None
    total_memory: Optional[int] = None
    compute_capability: Optional[tuple[int, ...]] = None
    link: Optional[PcieLink] = None
    link_sampled_idle: bool = True
    bar1_bytes: Optional[int] = None
    bar1_index: Optional[int] = None
    gdr_attributes: dict[str, Optional[int]] = field(default_factory=dict)
    nvml_virtualization_mode: Optional[str] = None
    nvml_bar1_total: Optional[int] = None
    nvml_link_gen: Optional[int] = None
    nvml_link_gen_max: Optional[int] = None
    nvml_link_width: Optional[int] = None
    nvml_link_width_max: Optional[int] = None
    nvml_replay_counter: Optional[int] = None
    nvlinks: tuple[NvLink, ...] = ()  # NVML, every link the GPU has (active or not)
    # NVML when the facts were read: the SMs' busy share over the last sample period, and the other
    # processes with a context on this GPU (gdrdiag's own process left out): who else was using it
    utilization_pct: Optional[int] = None
    other_processes: tuple[GpuProcess, ...] = ()
    uuid: Optional[str] = None  # NVML's GPU UUID (``GPU-...``), as nvidia-smi -L prints it
    numa_node: Optional[int] = None
    has_p2p_clique_cap: Optional[bool] = None
    # NVML's NVSwitch fabric registration; None when not readable (older driver or binding, no NVML,
    # a Report or bundle written before the field): the reason is in ``unknown["nvml.fabric"]``
    fabric: Optional[GpuFabric] = None
    unknown: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class NicPort:
    """One RDMA port: sysfs ``ports/<n>/*`` merged with pyverbs ``query_port`` where known."""

    port: int
    state: Optional[str] = None  # "ACTIVE", "DOWN", ...
    phys_state: Optional[str] = None
    rate: Optional[str] = None  # "400 Gb/sec (4X NDR)"
    rate_gbps: Optional[float] = None
    link_layer: Optional[str] = None  # "InfiniBand" | "Ethernet"
    active_mtu: Optional[int] = None  # bytes, from pyverbs query_port
    gids: tuple[str, ...] = ()
    gid_types: tuple[str, ...] = ()  # per entry of ``gids``: "RoCE v2", "IB/RoCE v1" (sysfs gid_attrs)
    unknown: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class NicInfo:
    """One RDMA device (``mlx5_0``): its PCI function, netdevs, ports, firmware, PF/VF role."""

    name: str
    bdf: Optional[str] = None
    vendor_id: Optional[int] = None
    device_id: Optional[int] = None
    model: str = ""
    fw_ver: Optional[str] = None
    node_guid: Optional[str] = None
    hca_type: Optional[str] = None
    board_id: Optional[str] = None
    netdevs: tuple[str, ...] = ()
    ports: tuple[NicPort, ...] = ()
    is_vf: Optional[bool] = None
    pf_bdf: Optional[str] = None
    link: Optional[PcieLink] = None
    shares_pcie_link_with: tuple[str, ...] = ()
    numa_node: Optional[int] = None
    dmabuf_probe: Optional[str] = None  # "supported" | "unsupported: ..."
    verbs: dict[str, str] = field(default_factory=dict)  # extra pyverbs facts, as text
    unknown: dict[str, str] = field(default_factory=dict)

    @property
    def software(self) -> Optional[str]:
        """The software RDMA provider this device is, or None for a hardware NIC.

        Soft-RoCE (the kernel's rdma_rxe) reports vendor id 0xFFFFFF (drivers/infiniband/sw/rxe,
        RXE_VENDOR_ID) and soft-iWARP (siw) names its devices ``siw*``: both move bytes with the CPU,
        so a port rate is the netdev's, not a bound the device can reach.
        """
        if self.verbs.get("vendor_id") == str(0xFFFFFF) or self.name.startswith("rxe"):
            return "Soft-RoCE (rdma_rxe)"
        if self.name.startswith("siw"):
            return "soft-iWARP (siw)"
        return None


@dataclass(frozen=True)
class VirtInfo:
    """Is this a VM, which signals say so, and how the IOMMU is set up (docs/inspect.md)."""

    is_vm: Optional[bool] = None
    hypervisor: Optional[str] = None
    signals: tuple[str, ...] = ()  # each "VIRT-0n: what was seen"
    flat_pci: Optional[bool] = None  # GPU/NIC endpoints straight on a root bus
    dmi_present: Optional[bool] = None
    iommu_groups: Optional[int] = None
    iommu_units: tuple[str, ...] = ()
    iommu_mode: Optional[str] = None  # "off" | "passthrough" | "translated" | "mixed"
    group_types: dict[str, str] = field(default_factory=dict)  # group -> type
    unknown: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class KernelInfo:
    """Kernel, command line, NVIDIA driver flavour and modules, rdma-core."""

    release: Optional[str] = None
    version_tuple: tuple[int, ...] = ()
    cmdline: Optional[str] = None
    cmdline_iommu: dict[str, str] = field(default_factory=dict)  # iommu=, intel_iommu=, ...
    cmdline_pci: tuple[str, ...] = ()  # pci=... options split on ','
    nvidia_version_line: Optional[str] = None
    nvidia_driver_version: Optional[str] = None
    nvidia_flavour: Optional[DriverFlavour] = None
    nvidia_params: dict[str, str] = field(default_factory=dict)
    peermem_loaded: Optional[bool] = None
    peermem_evidence: str = ""
    mlx5_out_of_tree: Optional[bool] = None  # MLNX_OFED/DOCA mlx5_core has a version file
    rdma_core_version: Optional[str] = None
    cpu_vendor: Optional[str] = None
    cpu_family: Optional[int] = None
    cpu_model_number: Optional[int] = None
    unknown: dict[str, str] = field(default_factory=dict)


class PathClass(str, enum.Enum):
    """GPU<->NIC and GPU<->GPU path class as nvidia-smi ``topo -m`` and NCCL define them.

    NCCL's definitions are the ``PATH_*`` comments in src/graph/topo.h and the walk in
    src/graph/paths.cc (https://github.com/NVIDIA/nccl); ``topo -m`` prints the same legend.

    ``NV`` is GPU<->GPU only: the pair is joined by NVLink (``topo -m`` prints ``NV#`` with the link
    count, which :class:`GpuPeerPair` keeps in ``nvlinks``).
    """

    NV = "NV"
    PIX = "PIX"
    PXB = "PXB"
    PHB = "PHB"
    NODE = "NODE"
    SYS = "SYS"


@dataclass(frozen=True)
class LinkHop:
    """The narrowest link on a path: which function reports it and its raw rate."""

    bdf: str
    speed_gts: float
    width: int
    raw_gbytes_per_s: float


@dataclass(frozen=True)
class TopologyPair:
    """One GPU<->NIC pair: path class, bridges crossed, narrowest link, NUMA nodes.

    ``reliable`` is False when the class is computed from a synthetic tree (a VM's flat PCI
    bus): the physical path then depends on the host, which the guest cannot see.
    """

    gpu_bdf: str
    nic: str
    nic_bdf: str
    path_class: Optional[PathClass] = None
    reliable: bool = True
    note: str = ""
    bridges: tuple[str, ...] = ()
    narrowest_capable: Optional[LinkHop] = None
    narrowest_current: Optional[LinkHop] = None
    gpu_numa: Optional[int] = None
    nic_numa: Optional[int] = None
    unknown: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class GpuProcess:
    """Another process holding a context on a GPU when the facts were read (NVML compute processes)."""

    pid: int
    name: Optional[str] = None  # /proc/<pid>/comm where readable (a VM or container may not see it)
    used_memory_bytes: Optional[int] = None


@dataclass(frozen=True)
class NvLink:
    """One NVLink of a GPU as NVML reports it (``nvidia-smi nvlink -s`` / ``-R``).

    ``gbytes_per_s`` is the link's rate in one direction; ``rate_source`` says whether NVML gave it
    (``nvml``) or it is the documented rate of the link's NVLink version (``documented: ...``).
    """

    link: int
    active: Optional[bool] = None
    version: Optional[int] = None
    remote_bdf: Optional[str] = None
    gbytes_per_s: Optional[float] = None
    rate_source: str = ""
    unknown: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class GpuPeerPair:
    """One ordered GPU pair: can ``src`` reach ``dst``'s memory, and over what path.

    The P2P facts are the CUDA driver's (``cuDeviceCanAccessPeer``, ``cuDeviceGetP2PAttribute``).
    ``nvlinks`` counts ``src``'s active NVLinks whose remote end is ``dst``; ``nvlink_gbytes_per_s``
    sums their one-way rates. ``path_class`` is NV when NVLinks join the pair, else the PCIe class
    of the two functions. ``reliable`` is False in a VM: the guest's PCI tree is synthetic, so a
    PCIe class says nothing about the physical path (NVLink facts come from the GPU and hold).
    """

    src_ordinal: int
    dst_ordinal: int
    src_bdf: str = ""
    dst_bdf: str = ""
    can_access_peer: Optional[bool] = None
    access_supported: Optional[bool] = None
    performance_rank: Optional[int] = None
    native_atomics: Optional[bool] = None
    array_access: Optional[bool] = None
    nvlinks: Optional[int] = None
    nvlink_gbytes_per_s: Optional[float] = None
    nvml_p2p: dict[str, str] = field(
        default_factory=dict
    )  # nvidia-smi topo -p2p: read/write/nvlink -> OK, ...
    path_class: Optional[PathClass] = None
    reliable: bool = True
    note: str = ""
    bridges: tuple[str, ...] = ()
    narrowest_capable: Optional[LinkHop] = None
    narrowest_current: Optional[LinkHop] = None  # the same path's narrowest link as trained (LnkSta)
    unknown: dict[str, str] = field(default_factory=dict)

    @property
    def path_text(self) -> str:
        """``NV18``, ``PIX``, ... as ``nvidia-smi topo -m`` prints it; ``?`` when unknown."""
        if self.path_class is PathClass.NV:
            return f"NV{self.nvlinks or '?'}"
        return self.path_class.value if self.path_class else "?"


@dataclass(frozen=True)
class MachineInfo:
    """Everything inspect knows about a machine.

    ``source`` is ``live`` or ``bundle:<name>``; ``privileged`` says whether config space could
    be read in full (root). ``cuda_devices``/``cuda_driver_version`` are the raw CUDA facts;
    ``cuda_visible_devices`` is ``CUDA_VISIBLE_DEVICES`` as the reading process had it (None: unset,
    or a bundle older than the field), which decides which GPUs CUDA lists.
    ``gpus``/``nics``/``topology``/``peers`` are the joined, per-device views diagnose reasons about.
    """

    host: HostInfo = field(default_factory=HostInfo)
    cuda_driver_version: Optional[int] = None
    cuda_devices: tuple[CudaDeviceFacts, ...] = ()
    cuda_visible_devices: Optional[str] = None
    source: str = ""
    privileged: Optional[bool] = None
    pci: tuple[PciFunction, ...] = ()
    gpus: tuple[GpuInfo, ...] = ()
    nics: tuple[NicInfo, ...] = ()
    virt: VirtInfo = field(default_factory=VirtInfo)
    kernel: KernelInfo = field(default_factory=KernelInfo)
    topology: tuple[TopologyPair, ...] = ()
    peers: tuple[GpuPeerPair, ...] = ()  # every ordered GPU pair (inspect/peer.py)
    unknown: dict[str, str] = field(default_factory=dict)

    def function(self, bdf: Optional[str]) -> Optional[PciFunction]:
        """The PCI function with this address, or None."""
        for f in self.pci:
            if f.bdf == bdf:
                return f
        return None

    def gpu(self, ordinal: Optional[int]) -> Optional[GpuInfo]:
        """The GPU a result ran on, by its CUDA ordinal (None: GPU 0, as one-GPU Reports record none).

        Matched on ``cuda_ordinal``; facts without ordinals (older bundles) fall back to the list's
        position, then the first GPU. None when the machine lists no GPU.
        """
        if not self.gpus:
            return None
        wanted = ordinal or 0
        for g in self.gpus:
            if g.cuda_ordinal is not None and g.cuda_ordinal == wanted:
                return g
        return self.gpus[wanted] if 0 <= wanted < len(self.gpus) else self.gpus[0]
