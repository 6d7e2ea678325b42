"""Inventory rules: the node's GPUs on the PCI bus against those CUDA and NVML see, and NVLinks per GPU.

- GPU-NOT-VISIBLE: an NVIDIA display/3D function (vendor 0x10de, class 0x03) on the bus that CUDA does
  not list: hidden by ``CUDA_VISIBLE_DEVICES`` (the CUDA driver enumerates only the GPUs it names,
  https://docs.nvidia.com/cuda/cuda-c-programming-guide/index.html#cuda-environment-variables), not
  passed into a container (its /dev/nvidiaN absent, so NVML misses it too), or lost by the driver.
- NIC-NOT-RDMA: a ConnectX function on the PCI bus that verbs does not list as an RDMA device.
- GPU-IN-USE: a GPU another process was using (NVML's compute processes and SM utilisation).
- GPU-NVLINK-FEWER: a GPU with fewer active NVLinks than the node's other GPUs (NVML's per-link state),
  so every pair through it, and NCCL's rings and trees, run on fewer links.
- GPU-FABRIC-NOT-READY: on an NVSwitch node, a GPU that nvidia-fabricmanager has not registered with the
  fabric (NVML's fabric state not COMPLETED), or whose registration ended in an error: it has no NVLink
  peer path until it is (NVIDIA Fabric Manager user guide,
  https://docs.nvidia.com/datacenter/tesla/fabric-manager-user-guide/index.html).
- GPU-FABRIC-UNHEALTHY: a registered GPU whose NVML fabric health mask reports a degraded or
  unhealthy route, a recovery in progress, or a wrong configuration.
- GPU-FABRIC-SPLIT: registered GPUs of one node in different fabric cliques or clusters, so not every
  pair can reach the other over NVLink.
"""

from __future__ import annotations

from collections import Counter
from typing import Iterable, Optional

from gdrdiag.diagnose._common import ev, finding
from gdrdiag.model.findings import Finding, Severity
from gdrdiag.model.machine import FabricState, GpuFabric, GpuInfo, MachineInfo


def _nvml_sees(m: MachineInfo, g: GpuInfo) -> Optional[bool]:
    """Whether NVML listed this GPU; None when NVML itself was unavailable."""
    if "nvml" in m.unknown:
        return None
    return "nvml" not in g.unknown and "nvml.handle" not in g.unknown


def _hidden_advice(env: Optional[str], nvml: Optional[bool]) -> str:
    if env is not None:
        return (
            f"CUDA_VISIBLE_DEVICES={env!r} names the GPUs this process may use: unset it (or list every "
            "GPU) to measure the whole node; a job scheduler sets it per job, which is expected there."
        )
    if nvml is False:
        return (
            "NVML misses it too: in a container pass every GPU (--gpus all, NVIDIA_VISIBLE_DEVICES=all, "
            "the device plugin's count); on the host check `nvidia-smi -q` and the kernel log for Xid "
            "79 (fallen off the bus) and reset or reseat the GPU."
        )
    return (
        "NVML lists it but CUDA does not: check `nvidia-smi -q` for a pending reset, retired pages or "
        "a compute mode of Prohibited, and the kernel log for Xid errors."
    )


def gpus_not_visible(m: MachineInfo) -> Iterable[Finding]:
    """GPU-NOT-VISIBLE: each GPU on the PCI bus that CUDA does not list.

    Silent when CUDA listed no GPU and ``CUDA_VISIBLE_DEVICES`` is unset: the driver or CUDA is
    missing, which the machine's ``unknown["cuda"]`` and the GDR rules say; with the variable set
    (even to "") every unlisted GPU is named, since the variable alone can hide all of them.
    """
    hidden = [g for g in m.gpus if g.cuda_ordinal is None]
    env = m.cuda_visible_devices
    if not hidden or (not m.cuda_devices and env is None):
        return
    for g in hidden:
        nvml = _nvml_sees(m, g)
        why = f": CUDA_VISIBLE_DEVICES={env!r} hides it" if env is not None else ""
        nvml_word = {True: "listed", False: "not listed", None: "unavailable"}[nvml]
        yield finding(
            "GPU-NOT-VISIBLE",
            Severity.INFO if env is not None else Severity.WARN,
            f"GPU {g.bdf} is on the PCI bus but CUDA does not list it{why}",
            [
                ev("cuda_devices", f"{len(m.cuda_devices)} of {len(m.gpus)} GPUs on the PCI bus"),
                ev("cuda_visible_devices", env if env is not None else "unset"),
                ev(f"gpus[{g.bdf}].nvml", nvml_word),
            ],
            _hidden_advice(env, nvml),
            "",
            g.bdf,
        )


def _active_nvlinks(m: MachineInfo) -> dict[str, int]:
    """Active NVLinks per GPU whose NVML NVLink facts were read (0 for a GPU NVML lists with none)."""
    return {
        g.bdf: sum(1 for lk in g.nvlinks if lk.active)
        for g in m.gpus
        if _nvml_sees(m, g) and "nvml.nvlinks" not in g.unknown
    }


def nvlinks_fewer(m: MachineInfo) -> Iterable[Finding]:
    """GPU-NVLINK-FEWER: a GPU with fewer active NVLinks than most of the node's other GPUs.

    The yardstick is the commonest count among the other GPUs (ties: the larger), so one odd GPU of
    eight is named and a node whose GPUs all agree is silent. A GPU that PEER-NVLINK-DOWN already
    singles out (its own links listed inactive, every sibling's active) is left to that finding.
    """
    counts = _active_nvlinks(m)
    if len(counts) < 2 or not any(counts.values()):
        return
    by_bdf = {g.bdf: g for g in m.gpus}
    for bdf, mine in counts.items():
        others = [c for b, c in counts.items() if b != bdf]
        typical = max(Counter(others).items(), key=lambda kv: (kv[1], kv[0]))[0]
        if mine >= typical:
            continue
        g = by_bdf[bdf]
        siblings_whole = all(lk.active is not False for b in counts if b != bdf for lk in by_bdf[b].nvlinks)
        if siblings_whole and any(lk.active is False for lk in g.nvlinks):
            continue  # PEER-NVLINK-DOWN names this GPU's inactive links
        yield finding(
            "GPU-NVLINK-FEWER",
            Severity.WARN,
            f"GPU {bdf} has {mine} active NVLinks; the node's other GPUs have {typical}",
            [
                ev(f"gpus[{bdf}].nvlinks.active", mine),
                ev(f"gpus[{bdf}].nvlinks.listed", len(g.nvlinks)),
                ev(
                    "gpus[others].nvlinks.active", ",".join(f"{b}:{c}" for b, c in counts.items() if b != bdf)
                ),
            ],
            "`nvidia-smi nvlink -s -i <GPU>` lists each link's state and rate; links NVML does not list "
            "at all point to the GPU's NVLink being disabled or its baseboard connection; on NVSwitch "
            "systems check nvidia-fabricmanager. A link that stays missing after a GPU reset is a "
            "hardware case.",
            "",
            bdf,
        )


FABRIC_ADVICE = (
    "Start nvidia-fabricmanager (`systemctl enable --now nvidia-fabricmanager`) at the version of the "
    "NVIDIA driver (`nvidia-smi` and `nv-fabricmanager --version` must match), then check "
    "`nvidia-smi -q | grep -A3 Fabric` shows State Completed, Status Success on every GPU; its log "
    "(/var/log/fabricmanager.log) says why a GPU failed to register."
)


def _gpu_name(g: GpuInfo) -> str:
    """``GPU 3 (0000:4c:00.0)``, or ``GPU 0000:4c:00.0`` when CUDA gave it no ordinal."""
    return f"GPU {g.cuda_ordinal} ({g.bdf})" if g.cuda_ordinal is not None else f"GPU {g.bdf}"


def _fabric_status(f: GpuFabric) -> str:
    return f.status_name or (str(f.status) if f.status is not None else "unknown")


def fabric_not_ready(m: MachineInfo) -> Iterable[Finding]:
    """GPU-FABRIC-NOT-READY: an NVSwitch GPU not registered with the fabric, or registered with an error.

    Only GPUs whose fabric state NVML read and that sit on a fabric (state not NOT_SUPPORTED) count;
    NVML's ``status`` is read only once the state is COMPLETED, as its reference says. IN_PROGRESS is
    named too: registration takes seconds after the service starts, so one still in progress when the
    facts were read is either early or stuck, and a second look settles which.
    """
    for g in m.gpus:
        f = g.fabric
        if f is None or not f.applies or (f.state is FabricState.COMPLETED and not f.failed):
            continue
        if f.failed:
            what = f"registered with the NVSwitch fabric with error {_fabric_status(f)}"
        elif f.state is FabricState.IN_PROGRESS:
            what = "still registering with the NVSwitch fabric (state IN_PROGRESS)"
        else:
            what = "not registered with the NVSwitch fabric (state NOT_STARTED)"
        yield finding(
            "GPU-FABRIC-NOT-READY",
            Severity.WARN,
            f"{_gpu_name(g)} is {what}: it has no NVLink peer path until nvidia-fabricmanager registers it",
            [
                ev(f"gpus[{g.bdf}].fabric.state", f.state.value),
                ev(f"gpus[{g.bdf}].fabric.status", _fabric_status(f)),
                ev("driver", m.kernel.nvidia_driver_version),
            ],
            FABRIC_ADVICE
            + (
                " A state still IN_PROGRESS a minute later is stuck."
                if f.state is FabricState.IN_PROGRESS
                else ""
            ),
            "",
            g.bdf,
        )


def fabric_split(m: MachineInfo) -> Iterable[Finding]:
    """GPU-FABRIC-SPLIT: registered GPUs of one node in different fabric partitions (cluster or clique).

    The GPUs of one HGX board share one NVSwitch fabric: once registered they carry one cluster UUID and
    one clique ID. The yardstick is the commonest (cluster, clique) pair (ties: the one of the lowest
    ordinal, as listed); each GPU outside it is named.
    """
    parts = [
        (g, (f.cluster_uuid, f.clique_id))
        for g in m.gpus
        if (f := g.fabric) is not None and f.state is FabricState.COMPLETED and not f.failed
    ]
    if len({p for _, p in parts}) < 2:
        return
    counts = Counter(p for _, p in parts)
    typical = max(counts, key=lambda p: counts[p])  # first listed wins a tie (Counter keeps order)
    for g, part in parts:
        if part == typical:
            continue
        yield finding(
            "GPU-FABRIC-SPLIT",
            Severity.WARN,
            f"{_gpu_name(g)} is in fabric clique {part[1]} of cluster {part[0]}; the node's other "
            f"{counts[typical]} registered GPU(s) are in clique {typical[1]} of cluster {typical[0]}",
            [
                ev(f"gpus[{g.bdf}].fabric.clique_id", part[1]),
                ev(f"gpus[{g.bdf}].fabric.cluster_uuid", part[0]),
                ev("gpus[others].fabric", ",".join(f"{o.bdf}:{p[1]}" for o, p in parts if o is not g)),
            ],
            "GPUs in different cliques cannot reach each other over NVLink. Check the fabric manager's "
            "partition (`nvidia-smi -q | grep -A6 Fabric` per GPU; in shared NVSwitch virtualization mode "
            "the partition the GPUs were activated in) and restart nvidia-fabricmanager if none was meant.",
            "",
            g.bdf,
        )


def fabric_unhealthy(m: MachineInfo) -> Iterable[Finding]:
    """GPU-FABRIC-UNHEALTHY: a registered GPU whose fabric health mask reports a problem (NVML).

    A GPU can register with the fabric and still have a degraded or unhealthy route to its peers;
    NVML's health mask (``nvmlDeviceGetGpuFabricInfoV``) says which (:meth:`GpuFabric.health_problems`).
    """
    for g in m.gpus:
        f = g.fabric
        if f is None or f.state is not FabricState.COMPLETED:
            continue
        problems = f.health_problems()
        if not problems:
            continue
        yield finding(
            "GPU-FABRIC-UNHEALTHY",
            Severity.WARN,
            f"{_gpu_name(g)} is registered with the NVSwitch fabric but its health mask reports: "
            + ", ".join(problems),
            [
                ev(f"gpus[{g.bdf}].fabric.health_mask", hex(f.health_mask or 0)),
                ev(f"gpus[{g.bdf}].fabric.state", f.state.value),
            ],
            "Its NVLink peer path may run below its links' rate or fail over: check `nvidia-smi -q` "
            "(Fabric: Health) and `nvidia-smi nvlink -s` on this GPU, and the fabric manager's log; a "
            "route that stays unhealthy after the fabric manager recovers it is a hardware case.",
            "",
            g.bdf,
        )


# SM utilisation at or above this, with no process of gdrdiag's running, is someone else's work.
BUSY_UTILIZATION_PCT = 50


def busy_reason(gpu: GpuInfo) -> Optional[str]:
    """What shows another user of this GPU, or None."""
    if gpu.other_processes:
        procs = ", ".join(
            f"pid {p.pid}" + (f" ({p.name})" if p.name else "") for p in gpu.other_processes[:4]
        )
        util = f", {gpu.utilization_pct}% SM utilisation" if gpu.utilization_pct is not None else ""
        return f"{len(gpu.other_processes)} other process(es) with a context on it: {procs}{util}"
    if gpu.utilization_pct is not None and gpu.utilization_pct >= BUSY_UTILIZATION_PCT:
        return f"{gpu.utilization_pct}% SM utilisation with no gdrdiag work running"
    return None


def gpus_in_use(m: MachineInfo) -> Iterable[Finding]:
    """GPU-IN-USE: a GPU another process was using when the facts were read (NVML).

    Said whether or not a measurement was slower: a bench on that GPU shares it by time-slicing, so its
    numbers are the share it got, and an operator checking a node wants to know who else is on it.
    """
    for g in m.gpus:
        why = busy_reason(g)
        if why is None:
            continue
        name = f"GPU {g.cuda_ordinal} ({g.bdf})" if g.cuda_ordinal is not None else f"GPU {g.bdf}"
        yield finding(
            "GPU-IN-USE",
            Severity.INFO,
            f"{name} was in use by another process when the facts were read: {why}",
            [
                ev(f"gpus[{g.bdf}].other_processes", len(g.other_processes)),
                ev(f"gpus[{g.bdf}].utilization_pct", g.utilization_pct),
            ],
            "Measurements on this GPU get the share the other work leaves; run when it is idle "
            "(`nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv` lists who is "
            "on it).",
            "",
            g.bdf,
        )


MELLANOX = 0x15B3  # NVIDIA networking (Mellanox) PCI vendor ID (PCI-SIG vendor list)


def nics_not_rdma(m: MachineInfo) -> Iterable[Finding]:
    """NIC-NOT-RDMA: a ConnectX function bound to mlx5_core that verbs does not list as an RDMA device.

    mlx5_core drives the Ethernet/IB function; the RDMA device (``/sys/class/infiniband/mlx5_N``) comes
    from mlx5_ib (docs.kernel.org/networking/device_drivers/ethernet/mellanox/mlx5). WARN when the
    node's other NICs have theirs (one of eight missing is a fault), INFO when none has (the module is
    not loaded, which GDR-NO-RDMA also says). Functions bound to vfio-pci (passed to a VM) or to no
    driver are not this host's NICs and are left out.
    """
    listed = {n.bdf for n in m.nics if n.bdf}
    missing = [
        f
        for f in m.pci
        if f.vendor_id == MELLANOX
        and f.class_code is not None
        and f.class_code >> 16 == 0x02
        and f.driver == "mlx5_core"
        and f.bdf not in listed
    ]
    for f in missing:
        some_listed = bool(listed)
        yield finding(
            "NIC-NOT-RDMA",
            Severity.WARN if some_listed else Severity.INFO,
            f"NIC {f.bdf} is bound to mlx5_core but verbs lists no RDMA device for it"
            + (f" ({len(listed)} other NIC(s) have theirs)" if some_listed else ""),
            [
                ev(f"pci[{f.bdf}].driver", f.driver),
                ev("nics", ",".join(sorted(n.name for n in m.nics)) or "none"),
            ],
            "Load mlx5_ib (`modprobe mlx5_ib`); if the others have theirs, check `dmesg` for this "
            "function's mlx5 errors and `devlink dev info pci/" + f.bdf + "` for its firmware state.",
            "",
            f.bdf,
        )


RULES = [
    gpus_not_visible,
    nvlinks_fewer,
    fabric_not_ready,
    fabric_split,
    fabric_unhealthy,
    gpus_in_use,
    nics_not_rdma,
]
