"""CPU and memory placement of a bench on one NUMA node (``--numa auto|none|N``).

A host buffer on the far socket crosses the socket interconnect on every DMA, and a submitting
thread on the far socket adds latency to every doorbell; so a bench runs, by default, on the NUMA
node of the device it measures (the GPU for copy/gather-bench, the RDMA NIC for mr-bench).

- The device's node is ``/sys/bus/pci/devices/<bdf>/numa_node`` (-1 when the platform gives no
  affinity, as in most VMs; Linux ``Documentation/ABI/testing/sysfs-bus-pci``); a node's CPUs are
  ``/sys/devices/system/node/nodeN/cpulist`` (``Documentation/ABI/stable/sysfs-devices-node``).
  Every read goes through ``SysfsTree``, so tests point it at a fixture tree.
- CPU affinity: ``os.sched_setaffinity(0, cpus)`` (sched_setaffinity(2); pid 0 is the calling
  thread). Memory: ``set_mempolicy(MPOL_PREFERRED, {node})`` (set_mempolicy(2): later page
  allocations of the calling thread come from that node while it has free memory, else from
  others). glibc has no wrapper, so the raw syscall is made through ctypes. Both are per thread and
  inherited by threads created afterwards; both are restored when the bench ends.
- With one node, or a node of -1, ``auto`` changes nothing and records why ("unknown because ...").
  A node that does not exist is a usage error (exit 2). A kernel or container that refuses the
  change (a cpuset without the node, seccomp without CAP_SYS_NICE) is recorded, never fatal.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import platform
import re
from dataclasses import replace
from typing import Iterator, Optional

from gdrdiag.errors import UserInputError
from gdrdiag.hw.sysfs import SysfsTree
from gdrdiag.model.params import NumaPlacement
from gdrdiag.model.words import AUTO, NUMA_HELP, NumaRequest, parse_numa  # noqa: F401 - the old home

# include/uapi/linux/mempolicy.h
MPOL_DEFAULT = 0
MPOL_PREFERRED = 1
_MPOL_MODE_MASK = 0xFF  # get_mempolicy(2) returns the mode with its MPOL_F_* flags OR-ed in
# Syscall numbers (set_mempolicy, get_mempolicy): arch/x86/entry/syscalls/syscall_64.tbl and
# include/uapi/asm-generic/unistd.h (arm64).
_SYSCALLS = {"x86_64": (238, 239), "aarch64": (237, 236)}
_MASK_WORDS = 16  # 1024 nodes; the kernel's MAX_NUMNODES is at most 1 << 10
# The kernel reads maxnode - 1 bits (mm/mempolicy.c get_nodes(); libnuma passes size + 1 too).
_MAXNODE = _MASK_WORDS * 64 + 1
_NODE_DIR = "/sys/devices/system/node"
_CPULIST_RE = re.compile(r"^\s*(\d+(-\d+)?)(,\d+(-\d+)?)*\s*$")


def online_nodes(tree: SysfsTree) -> list[int]:
    """The NUMA nodes sysfs lists (``nodeN`` folders); [] when the kernel has no NUMA support."""
    return sorted(int(n[4:]) for n in tree.listdir(_NODE_DIR) if n.startswith("node") and n[4:].isdigit())


def check_request(request: NumaRequest, tree: Optional[SysfsTree] = None) -> None:
    """Refuse ``--numa N`` for a node this machine does not have (before anything runs)."""
    if request.mode != "node":
        return
    nodes = online_nodes(tree or SysfsTree("/"))
    if request.node not in nodes:
        have = ", ".join(map(str, nodes)) or "none (no NUMA support in this kernel)"
        raise UserInputError(f"--numa {request.node}: no such NUMA node here (nodes: {have})")


def parse_cpulist(text: str) -> Optional[frozenset[int]]:
    """``0-3,8,10-11`` -> the CPUs (the kernel's cpulist format, lib/bitmap.c); None if malformed."""
    if not _CPULIST_RE.match(text):
        return None
    cpus: set[int] = set()
    for part in text.strip().split(","):
        lo, _, hi = part.partition("-")
        cpus.update(range(int(lo), int(hi or lo) + 1))
    return frozenset(cpus)


def format_cpulist(cpus: frozenset[int]) -> str:
    """The CPUs in cpulist syntax (runs as ``a-b``)."""
    if not cpus:
        return ""
    out, ordered = [], sorted(cpus)
    start = prev = ordered[0] if ordered else None
    for cpu in ordered[1:] + [None]:  # type: ignore[list-item]
        if cpu is not None and cpu == prev + 1:  # type: ignore[operator]
            prev = cpu
            continue
        out.append(f"{start}" if start == prev else f"{start}-{prev}")
        start = prev = cpu
    return ",".join(out)


def device_node(tree: SysfsTree, bdf: str) -> tuple[Optional[int], str]:
    """The PCI function's NUMA node, or None and why (-1: the platform gives no affinity)."""
    value, err = tree.try_int(f"/sys/bus/pci/devices/{bdf}/numa_node", 10)
    if value is None:
        return None, f"numa_node of {bdf} is unreadable ({err})"
    if value < 0:
        return None, f"numa_node of {bdf} is {value} (no NUMA affinity: one node, or a VM)"
    return int(value), ""


def rdma_device_bdf(tree: SysfsTree, name: str) -> Optional[str]:
    """The PCI function behind RDMA device ``name`` (``/sys/class/infiniband/<name>/device``)."""
    target = tree.realpath(f"/sys/class/infiniband/{name}/device")
    bdf = os.path.basename(target) if target else ""
    return bdf if re.match(r"^[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]$", bdf) else None


def plan(
    request: NumaRequest,
    bdf: Optional[str],
    what: str,
    tree: Optional[SysfsTree] = None,
    no_device: str = "",
) -> NumaPlacement:
    """Decide where a bench measuring ``what`` (PCI function ``bdf``) runs; nothing is applied yet.

    ``no_device`` says why there is no ``bdf`` (no GPU, a software provider).
    """
    tree = tree or SysfsTree("/")
    if request.mode == "none":
        return NumaPlacement("none", reason="--numa none: placement left to the OS")
    if request.mode == "node":
        check_request(request, tree)
        return _with_cpus(tree, NumaPlacement(request.text, request.node, reason=f"--numa {request.node}"))
    if bdf is None:
        return NumaPlacement("auto", reason=f"unknown because {no_device or 'no ' + what + ' was found'}")
    node, why = device_node(tree, bdf)
    if node is None:
        return NumaPlacement("auto", reason=f"unknown because {why}")
    nodes = online_nodes(tree)
    if len(nodes) <= 1:
        return NumaPlacement(
            "auto", reason=f"unknown because this machine has one NUMA node ({what} {bdf} is on node {node})"
        )
    return _with_cpus(tree, NumaPlacement("auto", node, reason=f"numa_node of {what} {bdf}"))


def not_run(request: NumaRequest, why: str) -> NumaPlacement:
    """The placement of a bench that did not run (no GPU, no RDMA device): nothing was applied."""
    return NumaPlacement(request.text, reason=f"{why}; nothing ran")


def _with_cpus(tree: SysfsTree, placement: NumaPlacement) -> NumaPlacement:
    text, err = tree.try_text(f"{_NODE_DIR}/node{placement.node}/cpulist")
    cpus = parse_cpulist(str(text)) if text is not None else None
    if not cpus:
        why = err or f"cpulist {str(text).strip()!r} names no CPU (a memory-only node)"
        return replace(placement, node=None, reason=f"node {placement.node} not applied: {why}")
    return replace(placement, cpus=format_cpulist(cpus))


@contextlib.contextmanager
def applied(placement: NumaPlacement) -> Iterator[NumaPlacement]:
    """Bind the calling thread's CPUs and memory policy to ``placement.node``; restore on exit.

    Yields what was really applied: the CPUs the kernel granted, or node None and the reason when
    the kernel refused (the old affinity and policy are then already back).
    """
    if placement.node is None or placement.cpus is None:
        yield placement
        return
    old_cpus = os.sched_getaffinity(0)
    old_policy = None
    try:
        os.sched_setaffinity(0, parse_cpulist(placement.cpus) or ())
        old_policy = _get_mempolicy()
        _set_mempolicy(MPOL_PREFERRED, 1 << placement.node)
        granted = format_cpulist(frozenset(os.sched_getaffinity(0)))
    except OSError as exc:
        os.sched_setaffinity(0, old_cpus)
        yield replace(
            placement,
            node=None,
            cpus=None,
            reason=f"node {placement.node} not applied: {exc.strerror or exc} ({placement.reason})",
        )
        return
    try:
        yield replace(placement, cpus=granted)
    finally:
        _set_mempolicy(*old_policy)
        os.sched_setaffinity(0, old_cpus)


def _syscall(index: int, *args: object) -> None:
    numbers = _SYSCALLS.get(platform.machine())
    if numbers is None:
        raise OSError(0, f"set_mempolicy: syscall number unknown on {platform.machine()}")
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.syscall(ctypes.c_long(numbers[index]), *args) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{('set_mempolicy', 'get_mempolicy')[index]}: {os.strerror(err)}")


def _get_mempolicy() -> tuple[int, int]:
    """The calling thread's (mode with flags, node mask), from get_mempolicy(2) with flags 0."""
    mode, mask = ctypes.c_int(), (ctypes.c_ulong * _MASK_WORDS)()
    _syscall(1, ctypes.byref(mode), mask, ctypes.c_ulong(_MAXNODE), None, ctypes.c_ulong(0))
    return mode.value, sum(word << (64 * i) for i, word in enumerate(mask))


def _set_mempolicy(mode: int, nodes: int) -> None:
    """set_mempolicy(2); MPOL_DEFAULT takes no node mask (EINVAL otherwise)."""
    if mode & _MPOL_MODE_MASK == MPOL_DEFAULT:
        _syscall(0, ctypes.c_int(mode), None, ctypes.c_ulong(0))
        return
    mask = (ctypes.c_ulong * _MASK_WORDS)(*((nodes >> (64 * i)) & (2**64 - 1) for i in range(_MASK_WORDS)))
    _syscall(0, ctypes.c_int(mode), mask, ctypes.c_ulong(_MAXNODE))


def plan_for_gpu(request: NumaRequest, ordinal: int) -> NumaPlacement:
    """:func:`plan` for CUDA device ``ordinal`` (its PCI function from the driver)."""
    from gdrdiag.errors import GdrdiagError
    from gdrdiag.hw import cuda, gpu_link

    what = f"GPU {ordinal}"
    if request.mode != "auto":
        return plan(request, None, what)
    try:
        bdf = gpu_link.normalize_bus_id(cuda.device_facts(ordinal).pci_bus_id)
    except (GdrdiagError, ValueError) as exc:
        return plan(request, None, what, no_device=f"the PCI address of {what} is unknown ({exc})")
    return plan(request, bdf, what)


def plan_for_rdma(request: NumaRequest, device_name: str, tree: Optional[SysfsTree] = None) -> NumaPlacement:
    """:func:`plan` for the RDMA device ``device_name`` (its PCI function through sysfs)."""
    tree = tree or SysfsTree("/")
    what = f"RDMA device {device_name}"
    bdf = rdma_device_bdf(tree, device_name) if request.mode == "auto" else None
    no_device = f"{what} has no PCI function in /sys/class/infiniband (a software provider)"
    return plan(request, bdf, what, tree, no_device=no_device)
