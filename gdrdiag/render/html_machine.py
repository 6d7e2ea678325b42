"""The machine section of the HTML pages: host, virtualization, IOMMU/ACS/ATS, GPUs, NICs, NUMA.

Formatting only: every fact was read by inspect and stored in the Report's ``MachineInfo``. The
facts are first laid out as a flat list of :class:`MachineFact` (section, name, text), so the
report page can show one machine and the compare page can put two side by side, row by row, and
mark the rows that differ. GPUs and NICs are numbered in the order the Report lists them, so
"GPU 0" of one Report faces "GPU 0" of the other.

Reports are untrusted: every text goes through ``sanitize.one_line`` and ``html.escape``.
"""

from __future__ import annotations

import html
from dataclasses import dataclass
from typing import Optional

from gdrdiag.model.machine import GpuInfo, MachineInfo, NicInfo, PcieLink, PciFunction
from gdrdiag.render.chart_data import human_bytes
from gdrdiag.render.machine_table import fmt_devctl, fmt_link
from gdrdiag.render.sanitize import one_line

UNKNOWN = "unknown"
PATHS = "GPU ↔ NIC paths"  # the section of the path facts
_REDIRECT_FLAGS = ("ReqRedir", "CmpltRedir")


@dataclass(frozen=True)
class MachineFact:
    """One fact as the page shows it: the section it belongs to, its name, its value as text."""

    section: str
    name: str
    value: str


def _text(value: object, unknown_reason: Optional[str] = None) -> str:
    if value is None or value == "":
        return UNKNOWN + (f" ({unknown_reason})" if unknown_reason else "")
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(getattr(value, "value", value))


def _virtualization(m: MachineInfo) -> str:
    v = m.virt
    if v.is_vm is None:
        return UNKNOWN
    return f"VM ({v.hypervisor or 'hypervisor unknown'})" if v.is_vm else "bare metal"


def _acs_redirect(m: MachineInfo) -> str:
    """Bridges whose ACS control redirects peer requests or completions up to the root complex."""
    bridges = [f for f in m.pci if f.is_bridge]
    redirecting = [f.bdf for f in bridges if f.acs and set(f.acs.ctl_flags) & set(_REDIRECT_FLAGS)]
    if redirecting:
        return f"on at {len(redirecting)} bridge(s): " + ", ".join(redirecting)
    if not bridges:
        return "no bridges visible"
    if m.privileged is False:
        return "unknown (config space needs root)"
    return "off on every bridge"


def _host_facts(m: MachineInfo) -> list[MachineFact]:
    h, k, v = m.host, m.kernel, m.virt
    iommu_options = " ".join(f"{n}={val}" for n, val in sorted(k.cmdline_iommu.items())) or "none"
    rows = [
        ("Host", "host name", _text(h.hostname)),
        ("Host", "OS", _text(h.os)),
        ("Host", "kernel", _text(k.release or h.kernel)),
        ("Host", "CPU", _text(h.cpu_model)),
        ("Host", "facts from", _text(m.source)),
        ("Host", "read as root", _text(m.privileged)),
        ("Virtualization and IOMMU", "virtualization", _virtualization(m)),
        ("Virtualization and IOMMU", "flat guest PCI tree", _text(v.flat_pci)),
        ("Virtualization and IOMMU", "IOMMU mode", _text(v.iommu_mode)),
        ("Virtualization and IOMMU", "IOMMU groups", _text(v.iommu_groups)),
        ("Virtualization and IOMMU", "kernel IOMMU options", iommu_options),
        ("Virtualization and IOMMU", "ACS redirect", _acs_redirect(m)),
        ("Drivers", "NVIDIA driver", _driver(m)),
        ("Drivers", "CUDA driver API", _cuda_version(m.cuda_driver_version)),
        ("Drivers", "nvidia_peermem loaded", _text(k.peermem_loaded)),
        ("Drivers", "mlx5 out of tree (OFED/DOCA)", _text(k.mlx5_out_of_tree)),
        ("Drivers", "rdma-core", _text(k.rdma_core_version)),
    ]
    return [MachineFact(*r) for r in rows]


def _driver(m: MachineInfo) -> str:
    k = m.kernel
    if k.nvidia_version_line is None and k.nvidia_driver_version is None:
        return "not loaded"
    flavour = f" ({k.nvidia_flavour.value})" if k.nvidia_flavour else ""
    return _text(k.nvidia_driver_version) + flavour


def _cuda_version(v: Optional[int]) -> str:
    return UNKNOWN if v is None else f"{v // 1000}.{v % 1000 // 10}"


def _registers(f: Optional[PciFunction]) -> str:
    return fmt_devctl(f)


def _link(link: Optional[PcieLink], reason: Optional[str]) -> str:
    """The negotiated link against the capable one, or unknown with the reason inspect gave."""
    if link is None or (link.speed_gts is None and link.width is None):
        why = reason or (next(iter(link.unknown.values()), None) if link else None)
        return _text(None, why)
    return fmt_link(link)


def _gpu_facts(m: MachineInfo, i: int, g: GpuInfo) -> list[MachineFact]:
    section = f"GPU {i}"
    link = _link(g.link, g.unknown.get("link"))
    if g.link and g.link.speed_gts is not None and g.link_sampled_idle:
        link += " (read idle: GPUs slow their link when idle)"
    bar1 = human_bytes(g.bar1_bytes) if g.bar1_bytes is not None else _text(None, g.unknown.get("bar1_bytes"))
    gdr = g.gdr_attributes
    rdma = {k: gdr.get(k) for k in ("GPU_DIRECT_RDMA_SUPPORTED", "DMA_BUF_SUPPORTED")}
    rows = [
        ("model", _text(g.name)),
        ("PCI address", g.bdf),
        ("memory", human_bytes(g.total_memory) if g.total_memory else UNKNOWN),
        ("PCIe link", link),
        ("BAR1", bar1),
        ("DevCtl", _registers(m.function(g.bdf))),
        (
            "GPUDirect RDMA / dma-buf",
            " / ".join(_text(None if v is None else bool(v)) for v in rdma.values()),
        ),
        ("NUMA node", _text(g.numa_node)),
    ]
    return [MachineFact(section, name, value) for name, value in rows]


def _ats(f: Optional[PciFunction]) -> str:
    if f is None or f.config_bytes <= 64:
        return "unknown (config space needs root)"
    return "no ATS capability" if f.ats is None else ("enabled" if f.ats.enabled else "disabled")


def _nic_facts(m: MachineInfo, i: int, n: NicInfo) -> list[MachineFact]:
    section = f"RDMA NIC {i}"
    role = (
        UNKNOWN if n.is_vf is None else ("VF" + (f" of {n.pf_bdf}" if n.pf_bdf else "") if n.is_vf else "PF")
    )
    ports = "; ".join(
        f"port {p.port}: {_text(p.state)}, {_text(p.rate)}, {_text(p.link_layer)}" for p in n.ports
    )
    rows = [
        ("device", n.name),
        ("model", _text(n.model)),
        ("PCI address", _text(n.bdf)),
        ("function", role),
        ("firmware", _text(n.fw_ver)),
        ("ports", ports or UNKNOWN),
        ("PCIe link", _link(n.link, n.unknown.get("link"))),
        ("DevCtl", _registers(m.function(n.bdf))),
        ("ATS", _ats(m.function(n.bdf))),
        ("dma-buf registration", _text(n.dmabuf_probe)),
        ("NUMA node", _text(n.numa_node)),
    ]
    return [MachineFact(section, name, value) for name, value in rows]


def _path_facts(m: MachineInfo) -> list[MachineFact]:
    gpu_number = {g.bdf: i for i, g in enumerate(m.gpus)}
    out = []
    for p in m.topology:
        cls = _text(p.path_class) + ("" if p.reliable else " (guest view; the host's path is hidden)")
        hop = p.narrowest_capable
        narrowest = f", narrowest {hop.speed_gts:g} GT/s x{hop.width}" if hop else ""
        numa = f", NUMA {_text(p.gpu_numa)}/{_text(p.nic_numa)}"
        name = f"GPU {gpu_number.get(p.gpu_bdf, p.gpu_bdf)} ↔ {p.nic}"
        out.append(MachineFact(PATHS, name, cls + narrowest + numa))
    return out


def machine_facts(m: MachineInfo) -> list[MachineFact]:
    """Every fact the machine section shows, in page order."""
    facts = _host_facts(m)
    for i, g in enumerate(m.gpus):
        facts += _gpu_facts(m, i, g)
    if not m.gpus:
        facts.append(MachineFact("GPUs", "GPUs", "none found"))
    for i, n in enumerate(m.nics):
        facts += _nic_facts(m, i, n)
    if not m.nics:
        facts.append(MachineFact("RDMA NICs", "RDMA NICs", "none found" + _reason(m.unknown.get("verbs"))))
    return facts + _path_facts(m)


def _reason(text: Optional[str]) -> str:
    return f" ({text})" if text else ""


def _esc(text: str) -> str:
    return html.escape(one_line(text, limit=300))


def _path_matrix(m: MachineInfo) -> str:
    """GPU <-> NIC paths as ``nvidia-smi topo -m`` shows them: a GPU per row, a NIC per column."""
    if not m.topology:
        return ""
    nics = list(dict.fromkeys(p.nic for p in m.topology))
    gpus = list(dict.fromkeys(p.gpu_bdf for p in m.topology))
    by_pair = {(f.name.split(" ↔ ")[0], f.name.split(" ↔ ")[1]): f.value for f in _path_facts(m)}
    number = {g.bdf: i for i, g in enumerate(m.gpus)}
    head = "<tr><th>GPU</th>" + "".join(f"<th>{_esc(n)}</th>" for n in nics) + "</tr>"
    rows = []
    for bdf in gpus:
        name = f"GPU {number.get(bdf, bdf)}"
        cells = "".join(f"<td>{_esc(by_pair.get((name, n), '—'))}</td>" for n in nics)
        rows.append(f"<tr><th>{_esc(name)} ({_esc(bdf)})</th>{cells}</tr>")
    return (
        '<table class="paths"><caption>GPU ↔ NIC paths: class (PIX best, SYS worst), narrowest link on '
        f"the path, NUMA node of GPU/NIC</caption>{head}{''.join(rows)}</table>"
    )


def machine_section(m: Optional[MachineInfo]) -> str:
    """The machine of one Report: a small two-column table per section in a grid, then the paths."""
    if m is None:
        return "<p>This Report has no machine facts (it was written without inspect).</p>"
    sections: dict[str, list[MachineFact]] = {}
    for f in machine_facts(m):
        if f.section != PATHS:  # drawn as a matrix below the grid
            sections.setdefault(f.section, []).append(f)
    tables = [
        f'<table class="facts"><caption>{_esc(name)}</caption>'
        + "".join(f"<tr><th>{_esc(f.name)}</th><td>{_esc(f.value)}</td></tr>" for f in facts)
        + "</table>"
        for name, facts in sections.items()
    ]
    return '<div class="machine">' + "".join(tables) + "</div>" + _path_matrix(m)


def _one_sided_row(facts: list[MachineFact], present_in_a: bool) -> str:
    """A section only one Report has, as one row.

    A device is named by its first two facts (model and address, or name and model); anything
    else (paths, "none found") fact by fact.
    """
    device = facts[0].section.startswith(("GPU ", "RDMA NIC ")) and facts[0].section[-1].isdigit()
    if device:
        summary = _esc(", ".join(f.value for f in facts[:2]))
    else:
        summary = _esc("; ".join(f"{f.name}: {f.value.split(',')[0]}" for f in facts))
    cells = (summary, "not in this Report") if present_in_a else ("not in this Report", summary)
    return f'<tr class="differs"><th>≠ present</th><td>{cells[0]}</td><td>{cells[1]}</td></tr>'


def machine_side_by_side(
    a: Optional[MachineInfo], b: Optional[MachineInfo], a_label: str, b_label: str
) -> str:
    """Both machines in one table, fact by fact; rows whose values differ are marked ``differs``."""
    if a is None or b is None:
        missing = a_label if a is None else b_label
        return f"<p>{_esc(missing)} has no machine facts; nothing to put side by side.</p>"
    facts_a, facts_b = machine_facts(a), machine_facts(b)
    fa = {(f.section, f.name): f.value for f in facts_a}
    fb = {(f.section, f.name): f.value for f in facts_b}
    sections_a, sections_b = {f.section for f in facts_a}, {f.section for f in facts_b}
    absent = "—"
    rows, section, differing, shown = [], None, 0, 0
    for key in dict.fromkeys([*fa, *fb]):
        one_sided = key[0] not in sections_a or key[0] not in sections_b
        if key[0] != section:
            section = key[0]
            rows.append(f'<tr class="section"><th colspan="3">{_esc(section)}</th></tr>')
            if one_sided:
                side = facts_a if section in sections_a else facts_b
                rows.append(_one_sided_row([f for f in side if f.section == section], section in sections_a))
                differing, shown = differing + 1, shown + 1
        if one_sided:
            continue
        va, vb = fa.get(key, absent), fb.get(key, absent)
        differs = va != vb
        differing, shown = differing + differs, shown + 1
        mark, sign = (' class="differs"', "≠ ") if differs else ("", "")
        rows.append(f"<tr{mark}><th>{sign}{_esc(key[1])}</th><td>{_esc(va)}</td><td>{_esc(vb)}</td></tr>")
    head = f"<tr><th>fact</th><th>{_esc(a_label)}</th><th>{_esc(b_label)}</th></tr>"
    note = (
        f"<p>{differing} of {shown} rows differ (marked ≠ and highlighted). GPUs and NICs are paired "
        "in the order each Report lists them; a device only one Report has is one row.</p>"
    )
    return note + f'<table class="side-by-side">{head}{"".join(rows)}</table>'
