"""Kernel, command line, CPU identity, NVIDIA driver flavour, peer-memory module, rdma-core.

Sources:
- ``/proc/sys/kernel/osrelease``, ``/proc/cmdline``, ``/proc/cpuinfo``
- ``/proc/driver/nvidia/version``: "NVIDIA UNIX Open Kernel Module" = open flavour (as the H200
  capture in tests/fixtures/machines/b_gpu_firecracker_h200 reads); "(VirtualGPU)" = vGPU guest
  driver; otherwise the proprietary module, which has no DMA-BUF path (NCCL troubleshooting,
  https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/troubleshooting.html)
- ``/proc/driver/nvidia/params``: ``EnablePCIERelaxedOrderingMode``, ``EnableResizableBar``
  (kernel-open/nvidia/nv-reg.h in https://github.com/NVIDIA/open-gpu-kernel-modules)
- nvidia_peermem: ``/proc/modules``, else ``/sys/module/nvidia_peermem/version`` or the legacy
  ``/sys/kernel/mm/memory_peers/nv_mem/version`` - NCCL's exact test (src/transport/net_ib/gdr.cc
  in https://github.com/NVIDIA/nccl)
- ``/sys/module/mlx5_core/version`` exists only for out-of-tree (MLNX_OFED/DOCA) mlx5 builds;
  those carry the RO-in-VF fix independently of the kernel version (upstream it is Linux 6.4's
  "Allow relaxed ordering read in VFs and VMs" series,
  https://lore.kernel.org/all/cover.1681131553.git.leon@kernel.org/).
"""

from __future__ import annotations

import re
from typing import Optional

from gdrdiag.hw.sysfs import SysfsTree
from gdrdiag.model.machine import DriverFlavour, HostInfo, KernelInfo

NVIDIA_VERSION_RE = re.compile(r"\b(\d{3}\.\d+(?:\.\d+)?)\b")
IOMMU_KEYS = ("iommu", "intel_iommu", "amd_iommu", "iommu.passthrough", "iommu.strict")


def version_tuple(release: Optional[str]) -> tuple[int, ...]:
    """``"6.1.0-18-amd64"`` -> (6, 1, 0); garbage -> ()."""
    m = re.match(r"^(\d+)\.(\d+)(?:\.(\d+))?", release or "")
    if not m:
        return ()
    return tuple(int(x) for x in m.groups() if x is not None and len(x) < 6)


def parse_cmdline(cmdline: str) -> tuple[dict[str, str], tuple[str, ...]]:
    """IOMMU options and ``pci=`` options from the kernel command line (before a ``--``)."""
    iommu: dict[str, str] = {}
    pci: list[str] = []
    for tok in cmdline.split():
        if tok == "--":
            break  # the rest belongs to init
        key, _, value = tok.partition("=")
        if key in IOMMU_KEYS:
            iommu[key] = value
        elif key == "pci" and value:
            pci.extend(v for v in value.split(",") if v)
    return iommu, tuple(pci)


def flavour_of(version_line: str) -> Optional[DriverFlavour]:
    """Driver flavour from the first line of /proc/driver/nvidia/version."""
    if "VirtualGPU" in version_line:
        return DriverFlavour.VGPU_GUEST
    if "Open Kernel Module" in version_line:
        return DriverFlavour.OPEN
    if "Kernel Module" in version_line:
        return DriverFlavour.PROPRIETARY
    return None


def _cpuinfo_field(text: str, name: str) -> Optional[str]:
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        if sep and key.strip() == name:
            return value.strip()
    return None


def _int(text: Optional[str]) -> Optional[int]:
    try:
        return int(text, 0) if text is not None and len(text) < 12 else None
    except ValueError:
        return None


def kernel_release(tree: SysfsTree, unknown: dict[str, str]) -> Optional[str]:
    """``/proc/sys/kernel/osrelease``, else the third word of ``/proc/version``.

    Some sandboxes refuse the sysctl file but serve /proc/version.
    """
    rel = tree.try_text("/proc/sys/kernel/osrelease")
    if rel.value is not None and str(rel.value).strip():
        return str(rel.value).strip()[:120]
    ver = tree.try_text("/proc/version")
    words = str(ver.value or "").split()
    if len(words) >= 3 and words[0] == "Linux" and words[1] == "version":
        return words[2][:120]
    unknown["release"] = rel.reason or "unreadable"
    return None


def inspect_host(tree: SysfsTree) -> HostInfo:
    """Hostname, kernel, OS and CPU model (soft)."""
    unknown: dict[str, str] = {}

    def soft(path: str, key: str) -> str:
        s = tree.try_text(path)
        if s.value is None:
            unknown[key] = s.reason or "unreadable"
            return ""
        return str(s.value).strip()

    osrel = tree.try_text("/etc/os-release").value or ""
    m = re.search(r'^PRETTY_NAME="?([^"\n]*)"?', str(osrel), re.M)
    cpu = _cpuinfo_field(str(tree.try_text("/proc/cpuinfo").value or ""), "model name") or ""
    hostname = soft("/proc/sys/kernel/hostname", "hostname")
    if not hostname:
        alt = tree.try_text("/etc/hostname").value
        if alt:
            hostname = str(alt).strip()[:120]
            unknown.pop("hostname", None)
    return HostInfo(
        hostname=hostname,
        kernel=kernel_release(tree, unknown) or "",
        os=m.group(1) if m else "",
        cpu_model=cpu,
        unknown=unknown,
    )


def inspect_kernel(tree: SysfsTree, verbs_facts: dict) -> KernelInfo:
    """Kernel and driver facts; each unreadable one is None with a reason."""
    unknown: dict[str, str] = {}
    release = kernel_release(tree, unknown)
    cmd = tree.try_text("/proc/cmdline")
    cmdline = str(cmd.value).strip() if cmd.value is not None else None
    if cmdline is None:
        unknown["cmdline"] = cmd.reason or "unreadable"
    iommu, pci = parse_cmdline(cmdline or "")

    nv = tree.try_text("/proc/driver/nvidia/version")
    nv_line = flavour = nv_version = None
    if nv.value is not None:
        nv_line = str(nv.value).splitlines()[0].strip() if str(nv.value).strip() else ""
        flavour = flavour_of(nv_line)
        m = NVIDIA_VERSION_RE.search(nv_line)
        nv_version = m.group(1) if m else None
    else:
        unknown["nvidia_driver"] = "no /proc/driver/nvidia/version: NVIDIA kernel driver not loaded"
    params: dict[str, str] = {}
    for line in str(tree.try_text("/proc/driver/nvidia/params").value or "").splitlines()[:400]:
        key, sep, value = line.partition(":")
        if sep and key.strip():
            params[key.strip()[:80]] = value.strip()[:200]

    # nvidia_peermem: /proc/modules is authoritative when the kernel has modules.
    modules = tree.try_text("/proc/modules")
    if modules.value is not None:
        names = {ln.split()[0] for ln in str(modules.value).splitlines() if ln.split()}
        peermem = "nvidia_peermem" in names
        evidence = "/proc/modules " + ("lists" if peermem else "does not list") + " nvidia_peermem"
        if not peermem and tree.exists("/sys/kernel/mm/memory_peers/nv_mem/version"):
            peermem, evidence = True, "legacy nv_peer_mem: /sys/kernel/mm/memory_peers/nv_mem/version"
    else:
        for path in (
            "/sys/module/nvidia_peermem/version",
            "/sys/module/nvidia_peermem",
            "/sys/kernel/mm/memory_peers/nv_mem/version",
        ):
            if tree.exists(path):
                peermem, evidence = True, f"{path} exists"
                break
        else:
            peermem = False
            evidence = "no /proc/modules (kernel without module support) and no /sys/module/nvidia_peermem"
    mlx5_oot: Optional[bool] = None
    if tree.exists("/sys/module/mlx5_core/version"):
        mlx5_oot = True
    elif tree.exists("/sys/module/mlx5_core"):
        mlx5_oot = False

    cpuinfo = str(tree.try_text("/proc/cpuinfo").value or "")
    rdma_core = verbs_facts.get("rdma_core_version") if isinstance(verbs_facts, dict) else None
    if not isinstance(rdma_core, str):
        rdma_core = None
        unknown["rdma_core_version"] = "libibverbs not found"
    return KernelInfo(
        release=release,
        version_tuple=version_tuple(release),
        cmdline=cmdline,
        cmdline_iommu=iommu,
        cmdline_pci=pci,
        nvidia_version_line=nv_line,
        nvidia_driver_version=nv_version,
        nvidia_flavour=flavour,
        nvidia_params=params,
        peermem_loaded=peermem,
        peermem_evidence=evidence,
        mlx5_out_of_tree=mlx5_oot,
        rdma_core_version=rdma_core,
        cpu_vendor=_cpuinfo_field(cpuinfo, "vendor_id"),
        cpu_family=_int(_cpuinfo_field(cpuinfo, "cpu family")),
        cpu_model_number=_int(_cpuinfo_field(cpuinfo, "model")),
        unknown=unknown,
    )
