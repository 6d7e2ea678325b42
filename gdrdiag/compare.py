"""Compare two Reports: cases side by side, machine differences that matter, and causes.

For each large delta, a ranked explanation with evidence from both sides.

Pure: a function of two Reports, tested from saved Reports. Cases are matched by their
``CaseId`` (bench, key, the parameters that define the physics, and the provider): run settings
never split a case, status never does, and results of different providers are never paired (a
soft or fixture number is not a hardware number). Ratios are ``b / a``: a ratio below 1 means the
second report is slower.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Callable, Iterable, Optional

from gdrdiag.model.case import CaseId, Scalar, run_settings
from gdrdiag.model.findings import Finding, Severity
from gdrdiag.model.machine import MachineInfo, PciFunction
from gdrdiag.model.report import Report
from gdrdiag.model.results import BenchResult, Status

# A delta is "large" when b/a leaves [1 - LARGE, 1 + LARGE].
LARGE_DELTA = 0.10


@dataclass(frozen=True)
class CaseDelta:
    """One case and its outcome in each report (a side that lacks it is None).

    ``ratio`` is b/a and exists only when both sides measured the case with the same provider.
    ``not_comparable`` says why a row has no ratio although both sides have numbers (another
    provider); ``settings`` lists run settings that differ (shown, never used to split cases).
    """

    case: CaseId
    unit: str
    a_value: Optional[float]
    b_value: Optional[float]
    a_status: Optional[str]
    b_status: Optional[str]
    ratio: Optional[float]
    a_reason: Optional[str] = None
    b_reason: Optional[str] = None
    a_provider: Optional[str] = None
    b_provider: Optional[str] = None
    not_comparable: Optional[str] = None
    settings: tuple[str, ...] = ()

    @property
    def key(self) -> str:
        """The case key (``rdma_write_device_mr``)."""
        return self.case.key

    @property
    def params(self) -> dict[str, Scalar]:
        """The physics parameters of the case."""
        return dict(self.case.physics)

    @property
    def hardware(self) -> bool:
        """False when either side's number came from the soft provider or a fixture."""
        return self.case.provider is not None and self.case.provider.is_hardware

    @property
    def large(self) -> bool:
        """True when the second side differs from the first by more than LARGE_DELTA."""
        return self.ratio is not None and abs(self.ratio - 1.0) > LARGE_DELTA


@dataclass(frozen=True)
class MachineDelta:
    """One machine fact that differs, and why it matters for the data paths."""

    fact: str
    a: str
    b: str
    why: str


@dataclass(frozen=True)
class Explanation:
    """A ranked cause for one large delta, with the evidence on each side."""

    case: str
    rank: int
    cause: str
    evidence_a: str
    evidence_b: str


@dataclass(frozen=True)
class Comparison:
    """Everything ``gdrdiag compare`` shows."""

    a_label: str
    b_label: str
    cases: tuple[CaseDelta, ...]
    machine: tuple[MachineDelta, ...]
    findings_only_a: tuple[Finding, ...]
    findings_only_b: tuple[Finding, ...]
    explanations: tuple[Explanation, ...]


# ---------------------------------------------------------------------------------------------
# cases
# ---------------------------------------------------------------------------------------------

def _value(r: Optional[BenchResult]) -> Optional[float]:
    return r.value if r is not None and r.status is Status.OK else None


def _settings_that_differ(ra: BenchResult, rb: BenchResult) -> tuple[str, ...]:
    sa, sb = run_settings(ra), run_settings(rb)
    return tuple(f"{k}: {sa.get(k)} vs {sb.get(k)}" for k in sorted(set(sa) | set(sb)) if sa.get(k) != sb.get(k))


def _delta(ident: CaseId, ra: Optional[BenchResult], rb: Optional[BenchResult], note: Optional[str] = None) -> CaseDelta:
    ref = ra or rb
    assert ref is not None
    va, vb = _value(ra), _value(rb)
    return CaseDelta(
        case=ident,
        unit=ref.unit,
        a_value=va,
        b_value=vb,
        a_status=ra.status.value if ra else None,
        b_status=rb.status.value if rb else None,
        ratio=(vb / va) if note is None and va and vb is not None else None,
        a_reason=ra.reason if ra else None,
        b_reason=rb.reason if rb else None,
        a_provider=ra.provider if ra else None,
        b_provider=rb.provider if rb else None,
        not_comparable=note,
        settings=_settings_that_differ(ra, rb) if ra and rb else (),
    )


def match_cases(a: Iterable[BenchResult], b: Iterable[BenchResult]) -> list[CaseDelta]:
    """Pair results by CaseId; order follows the first report, then cases only in the second.

    Linear in the number of results. A result whose physics was measured on the other side by
    another provider becomes one "not comparable" row. A WAIVED or ERROR result that carries no
    physics parameters (the bench gave up before choosing any) stands for every result of its key
    and provider on the other side, so "OK here, WAIVED there" is one row with the reason.
    """
    a_map = {CaseId.of(r): r for r in a}
    b_map = {CaseId.of(r): r for r in b}
    out = [_delta(i, r, b_map.get(i)) for i, r in a_map.items()]
    out += [_delta(i, None, r) for i, r in b_map.items() if i not in a_map]
    return _merge_unpaired(out)


def _merge_unpaired(rows: list[CaseDelta]) -> list[CaseDelta]:
    """Join one-sided rows that are the same physics under another provider, or a bare WAIVED/ERROR."""
    only_b = {}
    for i, d in enumerate(rows):
        if d.a_status is None:
            only_b.setdefault(d.case.without_provider(), []).append(i)
    bare_b = {(d.key, d.case.provider): i for i, d in enumerate(rows) if d.a_status is None and not d.case.physics}
    bare_a = {(d.key, d.case.provider): i for i, d in enumerate(rows) if d.b_status is None and not d.case.physics}
    used: set[int] = set()
    merged: list[CaseDelta] = []
    for i, d in enumerate(rows):
        if i in used:
            continue
        if d.b_status is None and d.a_status is not None:
            twins = [j for j in only_b.get(d.case.without_provider(), []) if j not in used]
            if twins:
                other = rows[twins[0]]
                used.update((i, twins[0]))
                note = f"not comparable: provider {d.a_provider or '?'} vs {other.b_provider or '?'}"
                merged.append(replace(d, b_value=other.b_value, b_status=other.b_status, b_reason=other.b_reason,
                                      b_provider=other.b_provider, not_comparable=note))
                continue
            j = bare_b.get((d.key, d.case.provider))
            if j is not None and d.case.physics:
                used.add(j)
                other = rows[j]
                merged.append(replace(d, b_status=other.b_status, b_reason=other.b_reason, b_provider=other.b_provider))
                continue
        if d.a_status is None and d.case.physics and (d.key, d.case.provider) in bare_a:
            other = rows[bare_a[(d.key, d.case.provider)]]
            used.add(bare_a[(d.key, d.case.provider)])
            merged.append(replace(d, a_status=other.a_status, a_reason=other.a_reason, a_provider=other.a_provider))
            continue
        merged.append(d)
    # A row that stood in for, or was joined to, another is not shown again on its own.
    absorbed = {id(rows[j]) for j in used}
    return [d for d in merged if id(d) not in absorbed]


# ---------------------------------------------------------------------------------------------
# machine facts that matter
# ---------------------------------------------------------------------------------------------

def _yes_no(v: Optional[bool]) -> str:
    return "unknown" if v is None else ("yes" if v else "no")


def _virt(m: MachineInfo) -> str:
    if m.virt.is_vm is None:
        return "unknown"
    return f"VM ({m.virt.hypervisor or 'hypervisor unknown'})" if m.virt.is_vm else "bare metal"


def _nic_functions(m: MachineInfo) -> str:
    if not m.nics:
        return "no RDMA devices"
    parts = []
    for n in m.nics:
        role = "VF" if n.is_vf else ("PF" if n.is_vf is False else "PF/VF unknown")
        ids = f"{n.vendor_id:04x}:{n.device_id:04x}" if n.vendor_id is not None and n.device_id is not None else "?"
        parts.append(f"{n.name} {role} {ids}")
    return ", ".join(parts)


def _nic_function(m: MachineInfo) -> list[tuple[str, Optional[PciFunction]]]:
    return [(n.name, m.function(n.pf_bdf or n.bdf)) for n in m.nics]


def _nic_ro(m: MachineInfo) -> str:
    out = []
    for name, fn in _nic_function(m):
        if fn is None or fn.pcie is None:
            out.append(f"{name}: unknown")
        else:
            out.append(f"{name}: RlxdOrd{'+' if fn.pcie.relaxed_ordering else '-'}"
                       f"{' (PF)' if fn.sriov else ''}")
    return ", ".join(out) or "no RDMA devices"


def _nic_ats(m: MachineInfo) -> str:
    out = []
    for n in m.nics:
        fn = m.function(n.bdf)
        if fn is None:
            out.append(f"{n.name}: unknown")
        elif fn.ats is None:
            out.append(f"{n.name}: no ATS capability visible")
        else:
            out.append(f"{n.name}: ATSCtl Enable{'+' if fn.ats.enabled else '-'}")
    return ", ".join(out) or "no RDMA devices"


def _path_acs(m: MachineInfo) -> str:
    flags = set()
    seen_any = False
    # Judge each GPU's closest NIC(s): that is the path GPUDirect traffic should take.
    order = ("PIX", "PXB", "PHB", "NODE", "SYS")
    best: dict[str, int] = {}
    for pair in m.topology:
        rank = order.index(pair.path_class.value) if pair.path_class else len(order)
        best[pair.gpu_bdf] = min(best.get(pair.gpu_bdf, rank), rank)
    for pair in m.topology:
        if (order.index(pair.path_class.value) if pair.path_class else len(order)) != best[pair.gpu_bdf]:
            continue
        for bdf in pair.bridges:
            fn = m.function(bdf)
            if fn is not None and fn.acs is not None:
                seen_any = True
                flags.update(f for f in fn.acs.ctl_flags if f in ("ReqRedir", "CmpltRedir", "DirectTrans"))
    if not seen_any:
        return "no ACS capability visible on the GPU-NIC path"
    return "ACSCtl " + (" ".join(sorted(flags)) if flags else "redirects off")


def _gpu_link(m: MachineInfo) -> str:
    out = []
    for g in m.gpus:
        link = g.link
        if link is None or link.speed_gts is None:
            out.append(f"{g.bdf}: unknown")
        else:
            out.append(f"{g.bdf}: {link.speed_gts:g} GT/s x{link.width} (max {link.max_speed_gts:g} GT/s "
                       f"x{link.max_width})" if link.max_speed_gts else f"{g.bdf}: {link.speed_gts:g} GT/s x{link.width}")
    return ", ".join(out) or "no GPU"


def _path_class(m: MachineInfo) -> str:
    if not m.topology:
        return "no GPU-NIC pair"
    return ", ".join(f"{p.gpu_bdf}<->{p.nic}: {p.path_class.value if p.path_class else '?'}"
                     f"{'' if p.reliable else ' (synthetic VM tree)'}" for p in m.topology)


def _driver(m: MachineInfo) -> str:
    k = m.kernel
    flavour = k.nvidia_flavour.value if k.nvidia_flavour else "unknown flavour"
    return f"{k.nvidia_driver_version or 'unknown'} ({flavour}), nvidia_peermem {_yes_no(k.peermem_loaded)}"


MachineFact = tuple[str, Callable[[MachineInfo], str], str]

MACHINE_FACTS: tuple[MachineFact, ...] = (
    ("virtualization", _virt, "in a VM, NIC->GPU writes are translated by the host IOMMU and may be "
     "redirected through the root complex; relaxed ordering and ATS matter there"),
    ("flat guest PCI tree", lambda m: _yes_no(m.virt.flat_pci), "a flat tree hides the physical GPU-NIC "
     "path: the path class seen in the guest is synthetic"),
    ("IOMMU", lambda m: f"{m.virt.iommu_mode or 'unknown'} ({m.virt.iommu_groups} groups)",
     "a translating IOMMU adds a lookup per DMA page unless ATS caches it"),
    ("kernel", lambda m: m.kernel.release or "unknown", "the mlx5 driver ignored IBV_ACCESS_RELAXED_ORDERING "
     "on VFs before Linux 6.4"),
    ("NIC functions", _nic_functions, "a VF's RlxdOrd bit always reads 0 and its PCIe link is the PF's"),
    ("NIC relaxed ordering enable", _nic_ro, "with RlxdOrd- on the PF the NIC cannot emit RO writes at all"),
    ("NIC ATS", _nic_ats, "without ATS, VM GPUDirect writes are translated and redirected by the host"),
    ("ACS on the GPU-NIC path", _path_acs, "ACS request redirect sends peer-to-peer TLPs up to the root "
     "complex"),
    ("GPU link", _gpu_link, "a narrower or slower link caps every host<->GPU number"),
    ("GPU-NIC path class", _path_class, "PIX/PXB paths keep GPUDirect traffic under one switch; PHB and "
     "wider cross the root complex"),
    ("GPU driver", _driver, "device-memory RDMA needs nvidia_peermem or dma-buf (open driver)"),
)


def machine_deltas(a: Optional[MachineInfo], b: Optional[MachineInfo]) -> list[MachineDelta]:
    """The listed facts whose rendering differs between the two machines."""
    if a is None or b is None:
        return []
    out = []
    for name, fact, why in MACHINE_FACTS:
        va, vb = _safe(fact, a), _safe(fact, b)
        if va != vb:
            out.append(MachineDelta(name, va, vb, why))
    return out


def _safe(fact: Callable[[MachineInfo], str], m: MachineInfo) -> str:
    try:
        return fact(m)
    except Exception as exc:  # odd data must not stop a comparison
        return f"unreadable ({type(exc).__name__})"


# ---------------------------------------------------------------------------------------------
# explanations
# ---------------------------------------------------------------------------------------------

# Which finding-code prefixes and machine facts can explain which case families, most likely first.
_CAUSES: dict[str, tuple[tuple[str, str], ...]] = {
    "rdma_write": (("RO-", "relaxed ordering not requested or not honoured"),
                   ("fact:NIC functions", "SR-IOV virtual function instead of a physical function"),
                   ("fact:virtualization", "virtualized NIC->GPU path"),
                   ("fact:NIC ATS", "ATS off: VM P2P writes translated and redirected"),
                   ("fact:ACS on the GPU-NIC path", "ACS redirect on the GPU-NIC path"),
                   ("GDR-", "GPUDirect prerequisite missing"),
                   ("fact:GPU-NIC path class", "GPU and NIC further apart")),
    "gather": (("fact:GPU link", "GPU link narrower or slower"), ("PCIE-", "PCIe link or register problem"),
               ("LINK-", "PCIe link problem"), ("fact:IOMMU", "IOMMU translation"),
               ("fact:virtualization", "virtualized host memory path")),
    "copy": (("fact:GPU link", "GPU link narrower or slower"), ("PCIE-", "PCIe link or register problem"),
             ("LINK-", "PCIe link problem"), ("fact:IOMMU", "IOMMU translation of DMA"),
             ("fact:virtualization", "virtualized host memory path")),
}


def _family(key: str) -> Optional[str]:
    for fam in ("rdma_write", "gather", "copy"):
        if key.startswith(fam):
            return fam
    if key.startswith("mr_") or key.startswith("rdma"):
        return "rdma_write"
    return None


def _finding_text(findings: Iterable[Finding], prefix: str) -> str:
    hits = [f for f in findings if f.code.startswith(prefix)]
    if not hits:
        return "none"
    return "; ".join(f"{f.code} ({f.severity.value}): {f.title}" for f in hits[:3])


def explain(delta: CaseDelta, a: Report, b: Report, facts: list[MachineDelta]) -> list[Explanation]:
    """Ranked causes for one large delta: evidence that differs between the two sides counts."""
    fam = _family(delta.key)
    if fam is None:
        return []
    fact_map = {f.fact: f for f in facts}
    out: list[Explanation] = []
    for source, cause in _CAUSES[fam]:
        if source.startswith("fact:"):
            fd = fact_map.get(source[5:])
            if fd is not None:
                out.append(Explanation(delta.key, len(out) + 1, cause, fd.a, fd.b))
        else:
            ea, eb = _finding_text(a.findings, source), _finding_text(b.findings, source)
            if ea != eb:
                out.append(Explanation(delta.key, len(out) + 1, cause, ea, eb))
    return out


def _finding_id(f: Finding) -> tuple[str, str]:
    return f.code, f.subject


def compare(a: Report, b: Report, *, a_label: str = "a", b_label: str = "b") -> Comparison:
    """The whole comparison of two Reports."""
    cases = match_cases(a.results, b.results)
    facts = machine_deltas(a.machine, b.machine)
    a_ids = {_finding_id(f) for f in a.findings}
    b_ids = {_finding_id(f) for f in b.findings}
    explanations: list[Explanation] = []
    explained_families: set[str] = set()
    # One explanation list per case family, attached to its largest delta, keeps the output short.
    for d in sorted((c for c in cases if c.large), key=lambda c: abs(1 - (c.ratio or 1)), reverse=True):
        fam = _family(d.key) or d.key
        if fam in explained_families:
            continue
        explained_families.add(fam)
        explanations.extend(explain(d, a, b, facts))
    worst_first = sorted(b.findings, key=lambda f: f.severity.rank)
    return Comparison(
        a_label=a_label,
        b_label=b_label,
        cases=tuple(cases),
        machine=tuple(facts),
        findings_only_a=tuple(f for f in sorted(a.findings, key=lambda f: f.severity.rank)
                              if _finding_id(f) not in b_ids),
        findings_only_b=tuple(f for f in worst_first if _finding_id(f) not in a_ids),
        explanations=tuple(explanations),
    )


__all__ = ["CaseDelta", "Comparison", "Explanation", "MachineDelta", "Severity", "compare", "match_cases",
           "machine_deltas"]
