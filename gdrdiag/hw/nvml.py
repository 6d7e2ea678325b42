"""Optional NVML facts through ``cuda.bindings.nvml``: virtualization, PCIe link, BAR1, NVLink, fabric.

NVML is optional: when the module or ``libnvidia-ml`` is missing, or a query is unsupported,
the fact is None and the reason is recorded (the ``nvmlQuery`` pattern of nvitop's
nvitop/api/libnvml.py, https://github.com/XuehaiPan/nvitop).
The result is a plain JSON-able dict so it can be written into a bundle and replayed.
"""

from __future__ import annotations

import os
import uuid
from typing import Any, Callable, Optional

from gdrdiag.errors import reraise_interrupt

# nvmlGpuVirtualizationMode_t (NVML API reference, https://docs.nvidia.com/deploy/nvml-api/;
# verified with cuda-bindings 13.5.0)
VIRTUALIZATION_MODES = {0: "NONE", 1: "PASSTHROUGH", 2: "VGPU", 3: "HOST_VGPU", 4: "HOST_VSGA"}


def _q(
    fn: Callable[[Any], Any],
    handle: Any,
    facts: dict,
    unknown: dict,
    key: str,
    conv: Callable[[Any], Any] = int,
) -> None:
    try:
        facts[key] = conv(fn(handle))
    except Exception as exc:  # any NVML error (NotSupported, NoPermission, ...) -> unknown
        facts[key] = None
        unknown[key] = f"NVML: {type(exc).__name__}: {exc}"[:200]


def _text(value: Any) -> str:
    """A string NVML returns, as text (some binding releases return bytes)."""
    return value.decode(errors="replace") if isinstance(value, bytes) else str(value)


# nvmlGpuP2PCapsIndex_t and nvmlGpuP2PStatus_t (nvml.h), as numbers: the enum classes' member names
# differ between cuda-bindings releases (13.3 on the x2 machine, 13.5 here).
P2P_CAPS = {"read": 0, "write": 1, "nvlink": 2, "atomics": 3}
P2P_STATUS = {
    0: "OK",
    1: "CHIPSET_NOT_SUPPORTED",
    2: "GPU_NOT_SUPPORTED",
    3: "IOH_TOPOLOGY_NOT_SUPPORTED",
    4: "DISABLED_BY_REGKEY",
    5: "NOT_SUPPORTED",
    6: "UNKNOWN",
}


def _p2p_status(nvml, h1, h2) -> dict:
    """``nvidia-smi topo -p2p``'s answers for one ordered pair: capability -> status name (OK, ...)."""
    fn = getattr(nvml, "device_get_p2p_status", None)
    out = {}
    for cap, index in P2P_CAPS.items():
        if fn is None:
            out[cap] = "unknown: NVML binding has no nvmlDeviceGetP2PStatus"
            continue
        try:
            code = int(fn(h1, h2, index))
            out[cap] = P2P_STATUS.get(code, f"status {code}")
        except Exception as exc:
            out[cap] = f"unknown: {type(exc).__name__}: {exc}"[:80]
    return out


def _busy_facts(nvml: Any, handle: Any, facts: dict, unknown: dict) -> None:
    """Who else uses this GPU now: SM utilisation and the compute processes (not this one).

    ``nvmlDeviceGetUtilizationRates`` gives the percent of the last sample period (1/6 s to 1 s) in
    which a kernel ran; ``nvmlDeviceGetComputeRunningProcesses`` the processes with a compute context
    (NVML API reference, https://docs.nvidia.com/deploy/nvml-api/group__nvmlDeviceQueries.html).
    """
    _q(lambda h: nvml.device_get_utilization_rates(h).gpu, handle, facts, unknown, "utilization_pct")
    try:
        procs = nvml.device_get_compute_running_processes_v3(handle)
        me = os.getpid()
        facts["compute_processes"] = [
            {"pid": int(p.pid), "used_memory_bytes": _used_memory(p), "name": _comm(int(p.pid))}
            for p in list(procs)[:64]
            if int(p.pid) != me
        ]
    except Exception as exc:
        reraise_interrupt(exc)
        facts["compute_processes"] = None
        unknown["compute_processes"] = f"NVML: {type(exc).__name__}: {exc}"[:200]


def _used_memory(proc: Any) -> Any:
    try:
        used = int(proc.used_gpu_memory)
    except Exception:
        return None
    return used if 0 <= used < 1 << 62 else None  # NVML_VALUE_NOT_AVAILABLE is all ones


def _comm(pid: int) -> Any:
    try:
        with open(f"/proc/{pid}/comm", encoding="utf-8", errors="replace") as f:
            return f.read(64).strip() or None
    except OSError:
        return None  # another PID namespace (a container, a VM's host): the PID alone is the fact


def _return_name(nvml: Any, code: int) -> Optional[str]:
    """The ``nvmlReturn_t`` name of ``code`` (``ERROR_NOT_READY``), or None when the binding has none."""
    try:
        return str(nvml.Return(code).name)
    except Exception:
        return None


def _uuid_text(raw: Any) -> Optional[str]:
    """A 16-byte cluster UUID (a uint8 array, bytes or a string, by binding release) as text."""
    if isinstance(raw, str):
        return raw[:64]
    try:
        data = bytes(int(b) & 0xFF for b in list(raw)[:16])
    except Exception:
        return None
    return str(uuid.UUID(bytes=data)) if len(data) == 16 else None


def fabric_facts(nvml: Any, handle: Any) -> dict:
    """The GPU's NVSwitch fabric registration: ``nvmlDeviceGetGpuFabricInfoV``, else the older call.

    ``{"state": 0-3, "status": nvmlReturn_t, "status_name", "cluster_uuid", "clique_id",
    "health_mask"}`` (NVML API reference, nvmlGpuFabricInfo_v2_t/v3_t,
    https://docs.nvidia.com/deploy/nvml-api/group__nvmlDeviceQueries.html; cuda-bindings 13.5 names the
    V call ``device_get_gpu_fabric_info_v``). Raises when neither call exists or both fail: the caller
    records the reason as unknown.
    """
    names = ("device_get_gpu_fabric_info_v", "device_get_gpu_fabric_info")
    calls: list[Callable[[Any], Any]] = [c for c in (getattr(nvml, n, None) for n in names) if c is not None]
    if not calls:
        raise LookupError("the NVML binding has no nvmlDeviceGetGpuFabricInfo")
    failure: Optional[Exception] = None
    for call in calls:
        try:
            info = call(handle)
        except Exception as exc:
            reraise_interrupt(exc)
            failure = failure or exc
            continue
        status = int(info.status)
        mask = getattr(info, "health_mask", None)
        return {
            "state": int(info.state),
            "status": status,
            "status_name": _return_name(nvml, status),
            "cluster_uuid": _uuid_text(info.cluster_uuid),
            "clique_id": int(info.clique_id),
            "health_mask": int(mask) if mask is not None else None,
        }
    raise failure or LookupError("nvmlDeviceGetGpuFabricInfo failed")


def gpu_facts(pci_bus_ids: list[str]) -> dict:
    """NVML facts per GPU, keyed by PCI bus id (``0000:00:06.0``).

    Returns ``{"status": "ok"|"unavailable", "reason": str|None, "driver_version": str|None,
    "gpus": {bdf: {facts..., "unknown": {...}}}}``. Never raises.
    """
    try:
        from cuda.bindings import nvml  # lazy: heavy, and only present with cuda-bindings >= 13
    except Exception as exc:
        reraise_interrupt(exc)  # a Ctrl-C during the import is not "NVML unavailable"
        return {"status": "unavailable", "reason": f"cuda.bindings.nvml not importable: {exc}", "gpus": {}}
    try:
        nvml.init_v2()
    except Exception as exc:
        reraise_interrupt(exc)
        return {"status": "unavailable", "reason": f"NVML init failed: {exc}"[:300], "gpus": {}}
    out: dict = {"status": "ok", "reason": None, "gpus": {}}
    try:
        try:
            out["driver_version"] = str(nvml.system_get_driver_version())
        except Exception as exc:
            out["driver_version"] = None
            out["driver_version_reason"] = str(exc)[:200]
        handles: dict = {}
        for bdf in pci_bus_ids:
            facts: dict = {}
            unknown: dict = {}
            try:
                h = nvml.device_get_handle_by_pci_bus_id_v2(bdf)
                handles[bdf] = h
            except Exception as exc:
                out["gpus"][bdf] = {"unknown": {"handle": f"NVML: no handle for {bdf}: {exc}"[:200]}}
                continue
            _q(
                nvml.device_get_virtualization_mode,
                h,
                facts,
                unknown,
                "virtualization_mode",
                lambda v: VIRTUALIZATION_MODES.get(int(v), str(int(v))),
            )
            # the GPU's UUID (GPU-xxxxxxxx-...): what nvidia-smi -L and CUDA_VISIBLE_DEVICES name it by
            _q(nvml.device_get_uuid, h, facts, unknown, "uuid", _text)
            _q(nvml.device_get_curr_pcie_link_generation, h, facts, unknown, "link_gen")
            _q(nvml.device_get_max_pcie_link_generation, h, facts, unknown, "link_gen_max")
            _q(nvml.device_get_curr_pcie_link_width, h, facts, unknown, "link_width")
            _q(nvml.device_get_max_pcie_link_width, h, facts, unknown, "link_width_max")
            _q(nvml.device_get_pcie_replay_counter, h, facts, unknown, "replay_counter")
            _q(lambda hh: nvml.device_get_bar1_memory_info(hh).bar1_total, h, facts, unknown, "bar1_total")
            try:
                from gdrdiag.hw.peer import nvlink_facts

                facts["nvlinks"] = nvlink_facts(nvml, h)
            except Exception as exc:  # NVLink facts are optional like the rest
                reraise_interrupt(exc)
                unknown["nvlinks"] = f"NVML: {type(exc).__name__}: {exc}"[:200]
            _q(lambda hh: fabric_facts(nvml, hh), h, facts, unknown, "fabric", dict)
            _busy_facts(nvml, h, facts, unknown)
            facts["unknown"] = unknown
            out["gpus"][bdf] = facts
        for bdf, h in handles.items():
            p2p = {}
            for other, h2 in handles.items():
                if other != bdf:
                    p2p[other] = _p2p_status(nvml, h, h2)
            out["gpus"][bdf]["p2p"] = p2p
    finally:
        try:
            nvml.shutdown()
        except Exception:
            pass
    return out
