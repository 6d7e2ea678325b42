"""NVIDIA GPUs: PCI function + CUDA attributes + NVML facts, joined by PCI address.

- BAR1 is the largest 64-bit prefetchable memory region in sysfs ``resource``. It is not
  always ``resource1``: on H100/H200 BAR0 is 64-bit and takes two registers, so the BAR1
  aperture is line 2 (the H200 capture in tests/fixtures/machines/b_gpu_firecracker_h200 has its
  256 GiB BAR1 in ``resource2``).
- The link is read idle: GPUs lower their link speed when idle (nvidia-smi documents that the
  current link generation and width "may be reduced when the GPU is not in use");
  ``link_sampled_idle`` says so, and the rules do not call an idle speed drop a fault.
- CUDA attributes (the GPUDirect ones, https://docs.nvidia.com/cuda/gpudirect-rdma/index.html;
  values in https://docs.nvidia.com/cuda/cuda-driver-api/group__CUDA__TYPES.html) come from
  ``hw.cuda`` live, or from the bundle.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Optional

from gdrdiag.inspect.virt import is_gpu
from gdrdiag.model.machine import (
    CudaDeviceFacts,
    FabricState,
    GpuFabric,
    GpuInfo,
    GpuProcess,
    NvLink,
    PciFunction,
)
from gdrdiag.model.serde import SchemaError, from_jsonable

GDR_ATTRIBUTES = (
    "GPU_DIRECT_RDMA_SUPPORTED",
    "GPU_DIRECT_RDMA_FLUSH_WRITES_OPTIONS",
    "GPU_DIRECT_RDMA_WRITES_ORDERING",
    "GPU_DIRECT_RDMA_WITH_CUDA_VMM_SUPPORTED",
    "DMA_BUF_SUPPORTED",
    "HOST_ALLOC_DMA_BUF_SUPPORTED",
    "CAN_MAP_HOST_MEMORY",
    "HOST_REGISTER_SUPPORTED",
    "PAGEABLE_MEMORY_ACCESS",
)


def normalize_bdf(bus_id: str) -> str:
    """``"00000000:00:06.0"`` (NVML/CUDA) -> ``"0000:00:06.0"`` (sysfs)."""
    s = bus_id.strip().lower()
    dom, sep, rest = s.partition(":")
    if not sep:
        return s
    try:
        return f"{int(dom, 16):04x}:{rest}"
    except ValueError:
        return s


def cuda_devices(cuda: dict) -> tuple[tuple[CudaDeviceFacts, ...], Optional[int], dict[str, str]]:
    """Parse the CUDA facts dict (live or bundle); bad entries become unknown, never raise."""
    unknown: dict[str, str] = {}
    if not isinstance(cuda, dict) or cuda.get("status") != "ok":
        reason = cuda.get("reason") if isinstance(cuda, dict) else None
        unknown["cuda"] = str(reason or "CUDA facts unavailable")
        return (), None, unknown
    devices = []
    raw_devices = cuda.get("devices")
    if not isinstance(raw_devices, list):
        unknown["cuda"] = "CUDA facts hold no device list"
        raw_devices = []
    for i, raw in enumerate(raw_devices[:64]):
        try:
            devices.append(from_jsonable(CudaDeviceFacts, raw, f"cuda.devices[{i}]"))
        except SchemaError as exc:
            unknown[f"cuda.devices[{i}]"] = str(exc)
    version = cuda.get("driver_version")
    if not isinstance(version, int) or isinstance(version, bool) or not 0 <= version < 2**31:
        version = None
    return tuple(devices), version, unknown


# What a bundle's CUDA_VISIBLE_DEVICES may hold: GPU indices, UUIDs (GPU-/MIG-), commas, spaces.
_VISIBLE_DEVICES = re.compile(r"[A-Za-z0-9,:/._ -]{0,4096}")


def visible_devices(cuda: dict) -> tuple[Optional[str], dict[str, str]]:
    """``CUDA_VISIBLE_DEVICES`` from the CUDA facts (None when unset or not recorded), and unknowns.

    A bundle is untrusted: a value that is not GPU indices or UUIDs is dropped, with the reason.
    """
    value = cuda.get("visible_devices") if isinstance(cuda, dict) else None
    if value is None:
        return None, {}
    if not isinstance(value, str) or not _VISIBLE_DEVICES.fullmatch(value):
        return None, {"cuda.visible_devices": "not a list of GPU indices or UUIDs: ignored"}
    return value, {}


def _nint(facts: dict, key: str) -> Optional[int]:
    """An integer NVML fact, or None (bundles are untrusted: no bools, no strings)."""
    v = facts.get(key)
    ok = isinstance(v, int) and not isinstance(v, bool) and -(2**63) <= v < 2**64  # a Report holds 64 bits
    return v if ok else None


# A bundle lists at most this many other processes per GPU (an 8-GPU node rarely has more than a few).
MAX_PROCESSES = 64


def _processes(nv: dict) -> tuple[GpuProcess, ...]:
    """The other compute processes NVML listed (bad entries dropped: bundles are untrusted)."""
    raw = nv.get("compute_processes")
    if not isinstance(raw, list):
        return ()
    out = []
    for p in raw[:MAX_PROCESSES]:
        pid = _nint(p, "pid") if isinstance(p, dict) else None
        if pid is None or pid < 0:
            continue
        name = p.get("name")
        out.append(
            GpuProcess(
                pid=pid,
                name=name[:64] if isinstance(name, str) else None,
                used_memory_bytes=_nint(p, "used_memory_bytes"),
            )
        )
    return tuple(out)


def nvlinks(nv: dict, unknown: dict[str, str]) -> tuple[NvLink, ...]:
    """The GPU's NVLinks from its NVML facts (bad entries become unknown; remote addresses normalised)."""
    raw = nv.get("nvlinks")
    if not isinstance(raw, list):
        return ()
    out = []
    for i, item in enumerate(raw[:64]):
        try:
            link = from_jsonable(NvLink, item, f"nvml.nvlinks[{i}]")
        except SchemaError as exc:
            unknown[f"nvml.nvlinks[{i}]"] = str(exc)[:200]
            continue
        if link.remote_bdf:
            link = replace(link, remote_bdf=normalize_bdf(link.remote_bdf))
        out.append(link)
    return tuple(out)


# nvmlGpuFabricState_t in NVML's order (NVML_GPU_FABRIC_STATE_NOT_SUPPORTED = 0 ... COMPLETED = 3;
# https://docs.nvidia.com/deploy/nvml-api/group__nvmlFabricDefs.html)
FABRIC_STATES = (
    FabricState.NOT_SUPPORTED,
    FabricState.NOT_STARTED,
    FabricState.IN_PROGRESS,
    FabricState.COMPLETED,
)
_UUID_TEXT = re.compile(r"[0-9A-Fa-f-]{1,64}")
_RETURN_NAME = re.compile(r"[A-Z0-9_]{1,64}")


def fabric(nv: dict, unknown: dict[str, str]) -> Optional[GpuFabric]:
    """The GPU's NVSwitch fabric registration from its NVML facts, or None (the reason in ``unknown``).

    A bundle is untrusted: a state outside NVML's four, or a field of the wrong type, makes the whole
    record unknown rather than half-read.
    """
    raw = nv.get("fabric")
    if raw is None:
        unknown.setdefault("nvml.fabric", "not recorded (a bundle older than the fact, or no NVML)")
        return None
    state = _nint(raw, "state") if isinstance(raw, dict) else None
    if state is None or not 0 <= state < len(FABRIC_STATES):
        unknown["nvml.fabric"] = "not an NVML fabric record: ignored"
        return None
    status = _nint(raw, "status")
    name = raw.get("status_name")
    cluster = raw.get("cluster_uuid")
    return GpuFabric(
        state=FABRIC_STATES[state],
        status=status,
        status_name=name if isinstance(name, str) and _RETURN_NAME.fullmatch(name) else None,
        cluster_uuid=cluster if isinstance(cluster, str) and _UUID_TEXT.fullmatch(cluster) else None,
        clique_id=_nint(raw, "clique_id"),
        health_mask=_nint(raw, "health_mask"),
    )


def bar1(f: PciFunction) -> tuple[Optional[int], Optional[int]]:
    """(size, index) of the largest 64-bit prefetchable memory BAR."""
    cands = [b for b in f.bars if b.index <= 5 and not b.is_io and b.is_64bit and b.prefetchable]
    if not cands:
        return None, None
    best = max(cands, key=lambda b: b.size)
    return best.size, best.index


def inspect_gpus(
    pci: tuple[PciFunction, ...], cuda: tuple[CudaDeviceFacts, ...], cuda_unknown: dict[str, str], nvml: dict
) -> tuple[GpuInfo, ...]:
    """One ``GpuInfo`` per NVIDIA GPU function on the bus."""
    by_bdf = {normalize_bdf(d.pci_bus_id): d for d in cuda}
    nvml_gpus = nvml.get("gpus") if isinstance(nvml, dict) and isinstance(nvml.get("gpus"), dict) else {}
    out = []
    for f in pci:
        if not is_gpu(f):
            continue
        unknown: dict[str, str] = {}
        d = by_bdf.get(f.bdf)
        if d is None:
            unknown["cuda"] = (
                cuda_unknown.get("cuda") or "CUDA does not list this GPU (CUDA_VISIBLE_DEVICES?)"
            )
        size, index = bar1(f)
        if size is None:
            unknown["bar1"] = "no 64-bit prefetchable BAR in sysfs resource"
        nv = nvml_gpus.get(f.bdf) if isinstance(nvml_gpus.get(f.bdf), dict) else None
        if nv is None:
            unknown["nvml"] = str((nvml or {}).get("reason") or "NVML has no entry for this GPU")[:300]
            nv = {}
        nv_unknown = nv.get("unknown")
        for k, v in nv_unknown.items() if isinstance(nv_unknown, dict) else ():
            if isinstance(k, str) and isinstance(v, str):
                unknown[f"nvml.{k}"] = v

        mode = nv.get("virtualization_mode")
        attrs = {k: (d.attributes.get(k) if d else None) for k in GDR_ATTRIBUTES}
        out.append(
            GpuInfo(
                bdf=f.bdf,
                name=d.name if d else "",
                cuda_ordinal=d.ordinal if d else None,
                total_memory=d.total_memory if d else None,
                compute_capability=tuple(d.compute_capability) if d else None,
                link=f.link,
                link_sampled_idle=True,
                bar1_bytes=size,
                bar1_index=index,
                gdr_attributes=attrs if d else {},
                nvml_virtualization_mode=mode if isinstance(mode, str) else None,
                nvml_bar1_total=_nint(nv, "bar1_total"),
                nvml_link_gen=_nint(nv, "link_gen"),
                nvml_link_gen_max=_nint(nv, "link_gen_max"),
                nvml_link_width=_nint(nv, "link_width"),
                nvml_link_width_max=_nint(nv, "link_width_max"),
                nvml_replay_counter=_nint(nv, "replay_counter"),
                nvlinks=nvlinks(nv, unknown),
                utilization_pct=_nint(nv, "utilization_pct"),
                uuid=nv.get("uuid") if isinstance(nv.get("uuid"), str) else None,
                other_processes=_processes(nv),
                numa_node=f.numa_node,
                has_p2p_clique_cap=(
                    any(c.cap_id == 0x09 and not c.extended for c in f.caps) if f.caps else None
                ),
                fabric=fabric(nv, unknown) if nv else None,
                unknown=unknown,
            )
        )
    return tuple(out)
