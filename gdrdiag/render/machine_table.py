"""Text view of ``inspect``: a short machine summary, then findings ranked by severity.

Formatting only: every number and verdict shown was decided upstream (inspect computed the
"(downgraded)" flags and raw rates, diagnose ranked the findings). Unknown values print as
``?`` here and stay ``null`` in JSON. Register names follow lspci (pciutils ls-caps.c,
https://github.com/pciutils/pciutils).
"""

from __future__ import annotations

from typing import Iterable, Optional

from gdrdiag.model.findings import Finding
from gdrdiag.model.machine import GpuInfo, MachineInfo, NicInfo, NicPort, PcieLink, PciFunction
from gdrdiag.render.layout import DEFAULT_WIDTH, fit_table, wrap_lines


def _q(v: object) -> str:
    return "?" if v is None else str(v)


def _size(n: Optional[int]) -> str:
    if n is None:
        return "?"
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if n >= 1 << shift and n % (1 << shift) == 0:
            return f"{n >> shift} {unit}"
    return f"{n} B"


def fmt_link(link: Optional[PcieLink]) -> str:
    """``32 GT/s x16 (max 32 GT/s x16)``, with lspci's "(downgraded)" markers."""
    if link is None:
        return "?"
    sp = f"{link.speed_gts:g} GT/s" if link.speed_gts is not None else "? GT/s"
    w = f"x{link.width}" if link.width is not None else "x?"
    if link.speed_downgraded:
        sp += " (downgraded)"
    if link.width_downgraded:
        w += " (downgraded)"
    max_speed = _q(link.max_speed_gts if link.max_speed_gts is None else f"{link.max_speed_gts:g}")
    mx = f"{max_speed} GT/s x{_q(link.max_width)}"
    return f"{sp} {w}, max {mx}"


def fmt_devctl(f: Optional[PciFunction]) -> str:
    """lspci-style DevCtl summary: ``RlxdOrd+ ExtTag+ NoSnoop- MaxPayload 256 MaxReadReq 4096``."""
    if f is None or f.pcie is None:
        return "? (needs root)" if f is not None and "registers" in f.unknown else "?"
    p = f.pcie

    def pm(b: bool) -> str:
        return "+" if b else "-"

    return (
        f"RlxdOrd{pm(p.relaxed_ordering)} ExtTag{pm(p.ext_tag)} NoSnoop{pm(p.no_snoop)} "
        f"MaxPayload {p.max_payload} MaxReadReq {p.max_read_request}"
    )


def _gpu_row(m: MachineInfo, g: GpuInfo) -> list[str]:
    a = g.gdr_attributes
    attrs = (
        " ".join(
            f"{short}={_q(a.get(k))}"
            for k, short in (
                ("GPU_DIRECT_RDMA_SUPPORTED", "rdma"),
                ("DMA_BUF_SUPPORTED", "dmabuf"),
                ("GPU_DIRECT_RDMA_WRITES_ORDERING", "ordering"),
                ("GPU_DIRECT_RDMA_FLUSH_WRITES_OPTIONS", "flush"),
                ("GPU_DIRECT_RDMA_WITH_CUDA_VMM_SUPPORTED", "vmm"),
                ("HOST_ALLOC_DMA_BUF_SUPPORTED", "host_dmabuf"),
            )
        )
        if a
        else "? (no CUDA facts)"
    )
    link = fmt_link(g.link) + (" [read idle]" if g.link_sampled_idle else "")
    bar = f"{_size(g.bar1_bytes)} (resource{g.bar1_index})" if g.bar1_index is not None else "?"
    return [g.bdf, g.name or "?", link, bar, fmt_devctl(m.function(g.bdf)), attrs]


def _narrowest(link) -> str:
    """``0000:17:00.0 16 GT/s x16`` for the narrowest capable link of a path, or ``?``."""
    if not link:
        return "?"
    return f"{link.bdf} {link.speed_gts:g} GT/s x{link.width}"


def _port_text(p: NicPort) -> str:
    """``1:ACTIVE 100 Gb/sec (4X EDR) Ethernet MTU 1024 RoCE v2`` (MTU/RoCE only where known)."""
    text = f"{p.port}:{_q(p.state)} {_q(p.rate)} {_q(p.link_layer)}"
    if p.active_mtu:
        text += f" MTU {p.active_mtu}"
    roce = sorted({t for t in p.gid_types if t.startswith("RoCE")})
    if roce:
        text += " " + "/".join(roce)
    return text


def _nic_row(m: MachineInfo, n: NicInfo) -> list[str]:
    role = "?" if n.is_vf is None else ("VF" + (f" of {n.pf_bdf}" if n.pf_bdf else "") if n.is_vf else "PF")
    ports = "; ".join(_port_text(p) for p in n.ports) or "?"
    return [
        n.name,
        _q(n.bdf),
        n.model or "?",
        role,
        _q(n.fw_ver),
        fmt_link(n.link),
        ports,
        fmt_devctl(m.function(n.bdf)),
        ",".join(n.netdevs) or "-",
    ]


def render_machine(m: MachineInfo, width: Optional[int] = DEFAULT_WIDTH) -> str:
    """The machine summary: host, virtualization, GPUs, NICs, GPU<->NIC paths, fitted to ``width``.

    Narrow tables wrap their text columns (link, DevCtl, ports, GPUDirect attributes); the
    NIC table leaves out firmware and netdevs first. ``width=None`` prints them unwrapped.
    """
    k, v = m.kernel, m.virt
    lines = [
        f"host: {m.host.hostname or '?'}  kernel {k.release or '?'}  {m.host.os or ''}  ({m.source})".rstrip()
    ]
    if v.is_vm:
        virt = f"VM ({v.hypervisor or 'hypervisor unknown'})"
    else:
        virt = "bare metal" if v.is_vm is False else "unknown"
    lines.append(
        f"virtualization: {virt}; IOMMU {_q(v.iommu_mode)} ({_q(v.iommu_groups)} groups)"
        + ("; flat PCI tree" if v.flat_pci else "")
    )
    drv = (
        f"{k.nvidia_driver_version or '?'} ({k.nvidia_flavour.value if k.nvidia_flavour else 'flavour ?'})"
        if k.nvidia_version_line is not None
        else "not loaded"
    )
    lines.append(
        f"nvidia driver: {drv}"
        + f"; nvidia_peermem {'loaded' if k.peermem_loaded else 'not loaded'}"
        + f"; rdma-core {_q(k.rdma_core_version)}"
    )
    if m.privileged is False:
        lines.append("registers: not root - register facts unknown (links from sysfs text)")
    out = wrap_lines("\n".join(lines), width)
    if m.gpus:
        out += "\n\nGPUs\n" + fit_table(
            [_gpu_row(m, g) for g in m.gpus],
            [
                "PCI",
                "name",
                "link",
                "BAR1",
                "DevCtl",
                "GPUDirect (rdma, dmabuf, ordering, flush, vmm, host_dmabuf)",
            ],
            width,
            wrap=(5, 4, 2, 1, 3),
        )
    else:
        out += "\n\nGPUs: none"
    if m.nics:
        out += "\n\nRDMA NICs\n" + fit_table(
            [_nic_row(m, n) for n in m.nics],
            ["device", "PCI", "model", "role", "firmware", "PCIe link", "ports", "DevCtl", "netdevs"],
            width,
            wrap=(7, 6, 5, 2),
            drop=(8, 4),
        )
    else:
        reason = m.unknown.get("verbs")
        out += "\n\n" + wrap_lines("RDMA NICs: none" + (f" ({reason})" if reason else ""), width)
    if m.topology:
        rows = [
            [
                p.gpu_bdf,
                p.nic,
                _q(p.path_class.value if p.path_class else None) + ("" if p.reliable else " (guest view)"),
                _narrowest(p.narrowest_capable),
                f"{_q(p.gpu_numa)}/{_q(p.nic_numa)}",
            ]
            for p in m.topology
        ]
        out += "\n\nGPU <-> NIC paths\n" + fit_table(
            rows, ["GPU", "NIC", "class", "narrowest link", "NUMA gpu/nic"], width, wrap=(3, 2)
        )
    if m.peers:
        out += "\n\n" + render_peer_matrix(m, width)
    return out


def _yn(v: Optional[bool]) -> str:
    return "?" if v is None else ("yes" if v else "no")


def _nvlink_text(m: MachineInfo, bdf: str) -> str:
    g = next((g for g in m.gpus if g.bdf == bdf), None)
    if g is None or not g.nvlinks:
        return "none" if g is not None and "nvml" not in g.unknown else "?"
    active = [lk for lk in g.nvlinks if lk.active]
    versions = sorted({lk.version for lk in active if lk.version is not None})
    rates = sorted({round(lk.gbytes_per_s, 3) for lk in active if lk.gbytes_per_s is not None})
    return (
        f"{len(active)}/{len(g.nvlinks)} active"
        + (f", NVLink {'/'.join(map(str, versions))}" if versions else "")
        + (f", {'/'.join(f'{r:g}' for r in rates)} GB/s per link" if rates else "")
    )


def _fabric_text(m: MachineInfo, bdf: str) -> str:
    """``; NVSwitch fabric: completed, clique 7`` where NVML read a fabric the GPU is on, else ""."""
    g = next((g for g in m.gpus if g.bdf == bdf), None)
    f = g.fabric if g is not None else None
    if f is None or not f.applies:
        return ""
    status = f", status {f.status_name or f.status}" if f.failed else ""
    clique = f", clique {f.clique_id}" if f.clique_id is not None else ""
    return f"; NVSwitch fabric: {f.state.value.replace('_', ' ')}{status}{clique}"


def render_peer_matrix(m: MachineInfo, width: Optional[int] = DEFAULT_WIDTH) -> str:
    """GPU <-> GPU: one row per ordered pair (path class, P2P facts, NVLinks), then each GPU's links."""
    rows = [
        [
            f"{p.src_ordinal} -> {p.dst_ordinal}",
            p.path_text + ("" if p.reliable else " (guest view)"),
            _yn(p.can_access_peer),
            _q(p.performance_rank),
            _yn(p.native_atomics),
            _yn(p.array_access),
            _q(p.nvlinks),
            f"{p.nvlink_gbytes_per_s:.1f}" if p.nvlink_gbytes_per_s is not None else "-",
        ]
        for p in m.peers
    ]
    text = "GPU <-> GPU peers\n" + fit_table(
        rows,
        ["GPUs", "path", "P2P", "rank", "atomics", "arrays", "NVLinks", "NVLink GB/s one way"],
        width,
        wrap=(1,),
    )
    gpus = sorted({(p.src_ordinal, p.src_bdf) for p in m.peers})
    lines = [f"GPU {o} ({bdf}) NVLinks: {_nvlink_text(m, bdf)}{_fabric_text(m, bdf)}" for o, bdf in gpus]
    lines += [f"note: {n}" for n in sorted({p.note for p in m.peers if p.note})]
    return text + "\n" + wrap_lines("\n".join(lines), width)


def render_findings(
    findings: Iterable[Finding], verbose: bool = True, width: Optional[int] = DEFAULT_WIDTH
) -> str:
    """Findings table (severity first), then each finding's evidence and advice, fitted to ``width``."""
    fs = list(findings)
    if not fs:
        return "Findings: none"
    table = fit_table(
        [[f.severity.value, f.code, f.subject or "-", f.title] for f in fs],
        ["severity", "code", "subject", "finding"],
        width,
        wrap=(3, 2),
    )
    if not verbose:
        return "Findings\n" + table
    details = []
    for f in fs:
        block = [f"[{f.severity.value}] {f.code}: {f.title}"]
        block += [f"    evidence: {e}" for e in f.evidence]
        if f.advice:
            block.append(f"    fix: {f.advice}")
        if f.reference:
            block.append(f"    ref: {f.reference}")
        details.append("\n".join(block))
    return "Findings\n" + table + "\n\n" + wrap_lines("\n\n".join(details), width)


def render_inspect(
    m: MachineInfo, findings: Iterable[Finding], verbose: bool = True, width: Optional[int] = DEFAULT_WIDTH
) -> str:
    """Machine summary then ranked findings, fitted to ``width`` (None: unwrapped)."""
    return render_machine(m, width) + "\n\n" + render_findings(findings, verbose, width)
