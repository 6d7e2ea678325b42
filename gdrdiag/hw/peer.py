"""GPU<->GPU peer facts and peer-access control (CUDA driver), and NVLink facts (NVML).

- :func:`peer_facts`: for every ordered pair of visible GPUs, ``cuDeviceCanAccessPeer`` and the
  ``cuDeviceGetP2PAttribute`` attributes (performance rank, access supported, native atomics,
  CUDA array access). A plain JSON-able list, stored in a bundle's ``facts/cuda.json`` under
  ``peers`` beside the devices, so ``inspect --bundle`` and diagnose work offline.
- :func:`nvlink_facts`: per NVML link index, state, version, remote PCI address and the link's rate
  (NVML field ``NVML_FI_DEV_NVLINK_SPEED_MBPS_L<n>`` / ``_COMMON`` where readable). Stored per GPU
  in ``facts/nvml.json`` under ``nvlinks``. Where NVML gives no rate, the documented rate of the
  link's NVLink version is used and ``rate_source`` says so.
- :func:`set_peer_access`: enable or disable peer access between two primary contexts
  (``cuCtxEnablePeerAccess``/``cuCtxDisablePeerAccess``); the runtime's
  ``cudaDeviceEnablePeerAccess`` acts on the same primary context, so CuPy and PyTorch see it.

Nothing here raises for a missing fact: unknown is ``None`` plus a reason.
"""

from __future__ import annotations

from typing import Any, Callable, Optional

from gdrdiag.errors import HardwareError
from gdrdiag.hw import cuda

P2P_ATTRIBUTES = {
    "performance_rank": "PERFORMANCE_RANK",
    "access_supported": "ACCESS_SUPPORTED",
    "native_atomics": "NATIVE_ATOMIC_SUPPORTED",
    "array_access": "CUDA_ARRAY_ACCESS_SUPPORTED",
}

# One-way rate of one link per NVLink version, GB/s (1e9 B/s), where NVML gives none. NVLink 2-4
# carry 25 GB/s per direction per link as NVIDIA states it (V100: 6 links, 300 GB/s both ways;
# A100: 12 links, 600 GB/s; H100: 18 links, 900 GB/s); ``nvidia-smi nvlink -s`` prints the
# signalling rate, 26.562 GB/s per link on H100, which is what NVML's speed field gives
# (measured, docs/benchmarks.md). NVLink 5 (B200): 18 links, 1.8 TB/s both ways -> 50 GB/s per direction.
DOCUMENTED_GBYTES_PER_LINK = {2: 25.0, 3: 25.0, 4: 26.5625, 5: 53.125}
# nvmlNvlinkVersion_t (nvml.h) -> the NVLink major version: 1_0, 2_0, 2_2, 3_0, 3_1, 4_0, 5_0, 6_0
_NVLINK_MAJOR = {1: 1, 2: 2, 3: 2, 4: 3, 5: 3, 6: 4, 7: 5, 8: 6}


def _p2p_attribute(drv: Any, name: str, src: Any, dst: Any) -> Optional[int]:
    attr = getattr(drv.CUdevice_P2PAttribute, f"CU_DEVICE_P2P_ATTRIBUTE_{name}", None)
    if attr is None:
        return None
    err, value = drv.cuDeviceGetP2PAttribute(attr, src, dst)
    if int(err) != int(drv.CUresult.CUDA_SUCCESS):
        return None
    return int(value)


def peer_facts() -> list[dict]:
    """One dict per ordered pair of visible GPUs (empty with fewer than two); see the module docstring."""
    cuda.init()
    drv = cuda.driver()
    n = cuda.device_count()
    out = []
    for i in range(n):
        for j in range(n):
            if i == j:
                continue
            src, dst = cuda.get_device(i), cuda.get_device(j)
            fact: dict = {"src_ordinal": i, "dst_ordinal": j, "unknown": {}}
            try:
                fact["can_access_peer"] = bool(cuda.call(cuda.driver().cuDeviceCanAccessPeer, src, dst))
            except HardwareError as exc:
                fact["can_access_peer"] = None
                fact["unknown"]["can_access_peer"] = str(exc)[:200]
            for key, attr in P2P_ATTRIBUTES.items():
                value = _p2p_attribute(drv, attr, src, dst)
                fact[key] = value if key == "performance_rank" or value is None else bool(value)
                if value is None:
                    fact["unknown"][key] = f"cuDeviceGetP2PAttribute({attr}) gave no answer"
            out.append(fact)
    return out


# nvmlValueType_t -> the member of nvmlValue_t that holds the value (nvml.h)
_VALUE_MEMBERS = {0: "d_val", 1: "ui_val", 2: "ul_val", 3: "ull_val", 4: "sll_val", 5: "si_val", 6: "us_val"}


def _field_values(nvml: Any, handle: Any, field_ids: list[int]) -> list[Optional[int]]:
    """NVML field values for ``field_ids``; None where NVML did not fill one."""
    values = nvml.FieldValue(len(field_ids))
    for k, fid in enumerate(field_ids):
        values[k].field_id = fid
    nvml.device_get_field_values(handle, values)
    out: list[Optional[int]] = []
    for k in range(len(field_ids)):
        v = values[k]
        if int(v.nvml_return) != 0:
            out.append(None)
            continue
        member = _VALUE_MEMBERS.get(int(v.value_type), "ull_val")
        out.append(int(v.value[member][0]))
    return out


def _try(fn: Callable[..., Any], unknown: dict, key: str) -> Any:
    try:
        return fn()
    except Exception as exc:  # NVML NotSupported, NoPermission, InvalidArgument -> unknown
        unknown[key] = f"NVML: {type(exc).__name__}: {exc}"[:200]
        return None


def nvlink_facts(nvml: Any, handle: Any) -> list[dict]:
    """Every NVLink index NVML answers for on one GPU (an empty list on a GPU without NVLink)."""
    max_links = int(getattr(nvml, "NVLINK_MAX_LINKS", 18))
    speeds: list[Optional[int]] = [None] * max_links
    speed_reason = ""
    try:
        fid = nvml.FieldId
        ids = [int(getattr(fid, f"DEV_NVLINK_SPEED_MBPS_L{k}")) for k in range(12)]
        ids.append(int(fid.DEV_NVLINK_SPEED_MBPS_COMMON))
        got = _field_values(nvml, handle, ids)
        common = got[-1]
        speeds = [got[k] if k < 12 and got[k] else common for k in range(max_links)]
    except Exception as exc:
        speed_reason = f"NVML speed fields: {type(exc).__name__}: {exc}"[:200]
    links = []
    for k in range(max_links):
        unknown: dict = {}
        state = _try(lambda k=k: nvml.device_get_nvlink_state(handle, k), unknown, "active")
        if state is None:
            if k == 0 and "NotSupported" in unknown.get("active", ""):
                return []  # a GPU without NVLink
            continue
        active = int(state) == 1
        code = _try(lambda k=k: nvml.device_get_nvlink_version(handle, k), unknown, "version")
        version = _NVLINK_MAJOR.get(int(code)) if code is not None else None
        remote = None
        if active:
            info = _try(
                lambda k=k: nvml.device_get_nvlink_remote_pci_info_v2(handle, k), unknown, "remote_bdf"
            )
            if info is not None:
                bus = getattr(info, "bus_id", None) or getattr(info, "busId", None)
                remote = bus.decode() if isinstance(bus, bytes) else (str(bus) if bus else None)
        mbps = speeds[k] if k < len(speeds) else None
        if mbps:
            rate, source = mbps * 1e6 / 1e9, "nvml"  # NVML gives MB/s (1e6 B/s)
        else:
            rate = DOCUMENTED_GBYTES_PER_LINK.get(int(version)) if version is not None else None
            source = f"documented: NVLink {version} per-link rate" if rate else ""
            if speed_reason:
                unknown.setdefault("gbytes_per_s_nvml", speed_reason)
        links.append(
            {
                "link": k,
                "active": active,
                "version": int(version) if version is not None else None,
                "remote_bdf": remote,
                "gbytes_per_s": rate,
                "rate_source": source,
                "unknown": unknown,
            }
        )
    return links


# --------------------------------------------------------------------------------------------
# peer access (used by bench/peer.py)
# --------------------------------------------------------------------------------------------


def set_peer_access(ctx: "cuda.GpuContext", peer: "cuda.GpuContext", enabled: bool) -> None:
    """Make ``ctx`` able (or unable) to reach ``peer``'s memory; already-in-that-state is fine.

    Leaves ``ctx`` current.
    """
    drv = cuda.driver()
    cuda.call(cuda.driver().cuCtxSetCurrent, ctx.handle)
    if enabled:
        err = drv.cuCtxEnablePeerAccess(peer.handle, 0)[0]
        ok = (drv.CUresult.CUDA_SUCCESS, drv.CUresult.CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED)
        name = "cuCtxEnablePeerAccess"
    else:
        err = drv.cuCtxDisablePeerAccess(peer.handle)[0]
        ok = (drv.CUresult.CUDA_SUCCESS, drv.CUresult.CUDA_ERROR_PEER_ACCESS_NOT_ENABLED)
        name = "cuCtxDisablePeerAccess"
    if int(err) not in {int(x) for x in ok}:
        cuda.check((err,), name)


def make_current(ctx: "cuda.GpuContext") -> None:
    """Make ``ctx`` the calling thread's current context."""
    cuda.call(cuda.driver().cuCtxSetCurrent, ctx.handle)


def can_access_peer(src_ordinal: int, dst_ordinal: int) -> bool:
    """Whether ``src`` can map ``dst``'s memory (``cuDeviceCanAccessPeer``)."""
    src, dst = cuda.get_device(src_ordinal), cuda.get_device(dst_ordinal)
    return bool(cuda.call(cuda.driver().cuDeviceCanAccessPeer, src, dst))
