"""Compare two Reports: cases side by side, machine differences that matter, and causes.

Both Reports are re-diagnosed with the current rules (stored findings may be from an older
gdrdiag). Machine facts are compared field by field, with GPUs and NICs matched by the role they
played in the measurements (the NIC a result names, the GPU closest to it). For each large delta,
the slower side's cause findings (``CAUSE-*``, ranked by the share of the loss they explain) come
first, then the differing facts that bear on that path; when there are none, "nothing in these
Reports explains it" with the experiment that would.

Pure: a function of two Reports, tested from saved Reports. Cases are matched by their
``CaseId`` (bench, key, the parameters that define the physics, and the provider): run settings
never split a case, status never does, and results of different providers are never paired (a
soft or fixture number is not a hardware number). Ratios are ``b / a``: a ratio below 1 means the
second report is slower.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Iterable, Optional

from gdrdiag.model.case import CaseId, run_settings
from gdrdiag.model.comparison import (
    LARGE_DELTA,
    CaseDelta,
    Comparison,
    Explanation,
    MachineDelta,
    PeerPairDelta,
)
from gdrdiag.model.findings import Finding, Severity
from gdrdiag.model.machine import GpuInfo, GpuPeerPair, MachineInfo, NicInfo, PathClass
from gdrdiag.model.report import Report
from gdrdiag.model.results import BenchResult, Status
from gdrdiag.model.vocabulary import Bench

# ---------------------------------------------------------------------------------------------
# cases
# ---------------------------------------------------------------------------------------------


def _value(r: Optional[BenchResult]) -> Optional[float]:
    return r.value if r is not None and r.status is Status.OK else None


def _settings_that_differ(ra: BenchResult, rb: BenchResult) -> tuple[str, ...]:
    if ra.params == rb.params and ra.settings == rb.settings:
        return ()  # the common case, decided without building both dicts (20,000-result compare)
    sa, sb = run_settings(ra), run_settings(rb)
    return tuple(
        f"{k}: {sa.get(k)} vs {sb.get(k)}" for k in sorted(set(sa) | set(sb)) if sa.get(k) != sb.get(k)
    )


def _delta(
    ident: CaseId, ra: Optional[BenchResult], rb: Optional[BenchResult], note: Optional[str] = None
) -> CaseDelta:
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


def gpu_renumbering(a: Report, b: Report) -> dict[int, int]:
    """B's CUDA ordinal -> A's, for the GPUs both Reports name by the same UUID or PCI address.

    CUDA numbers the GPUs a process sees: the same node measured with ``CUDA_VISIBLE_DEVICES=2,3``
    calls its GPUs 2 and 3 "0" and "1". Matching by ordinal would pair GPU 2's copy with GPU 0's;
    matching by the GPU itself pairs it with GPU 2's. Empty (match by ordinal) when either Report lacks
    machine facts, when a GPU of B is not in A, or when every GPU keeps its ordinal.
    """
    if a.machine is None or b.machine is None:
        return {}
    by_uuid = {g.uuid: g.cuda_ordinal for g in a.machine.gpus if g.uuid and g.cuda_ordinal is not None}
    by_bdf = {g.bdf: g.cuda_ordinal for g in a.machine.gpus if g.cuda_ordinal is not None}
    mapping: dict[int, int] = {}
    for g in b.machine.gpus:
        if g.cuda_ordinal is None:
            continue
        theirs = by_uuid.get(g.uuid) if g.uuid else None
        if theirs is None:
            theirs = by_bdf.get(g.bdf)
        if theirs is None:
            return {}  # another machine: its GPUs are matched by ordinal (their role)
        mapping[g.cuda_ordinal] = theirs
    return {} if all(k == v for k, v in mapping.items()) else mapping


def renumbered(results: Iterable[BenchResult], mapping: dict[int, int]) -> list[BenchResult]:
    """``results`` with every GPU ordinal of their params replaced through ``mapping``.

    The fields are ``gpu``, ``src_gpu``, ``dst_gpu`` and ``peer_gpu``; a copy or gather row that names
    no GPU ran on GPU 0 (the benches' default), so it is renumbered as GPU 0.
    """
    out = []
    for r in results:
        changes = {
            name: mapping[value]
            for name in ("gpu", "src_gpu", "dst_gpu", "peer_gpu")
            if isinstance(value := getattr(r.params, name, None), int) and value in mapping
        }
        if name_of_implied_gpu(r) and 0 in mapping and "gpu" not in changes:
            changes["gpu"] = mapping[0]
        out.append(replace(r, params=replace(r.params, **changes)) if changes else r)  # type: ignore[type-var]
    return out


def name_of_implied_gpu(r: BenchResult) -> bool:
    """True for a copy or gather row that names no GPU (written before rows did: GPU 0, the default).

    An RDMA row with no GPU wrote into host memory: it ran on no GPU, and keeps none.
    """
    return r.bench in (Bench.COPY, Bench.GATHER) and getattr(r.params, "gpu", 0) is None


def _merge_unpaired(rows: list[CaseDelta]) -> list[CaseDelta]:
    """Join one-sided rows that are the same physics under another provider, or a bare WAIVED/ERROR."""
    only_b = {}
    for i, d in enumerate(rows):
        if d.a_status is None:
            only_b.setdefault(d.case.without_provider(), []).append(i)
    bare_b = {
        (d.key, d.case.provider): i for i, d in enumerate(rows) if d.a_status is None and not d.case.physics
    }
    bare_a = {
        (d.key, d.case.provider): i for i, d in enumerate(rows) if d.b_status is None and not d.case.physics
    }
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
                merged.append(
                    replace(
                        d,
                        b_value=other.b_value,
                        b_status=other.b_status,
                        b_reason=other.b_reason,
                        b_provider=other.b_provider,
                        not_comparable=note,
                    )
                )
                continue
            j = bare_b.get((d.key, d.case.provider))
            if j is not None and d.case.physics:
                used.add(j)
                other = rows[j]
                merged.append(
                    replace(d, b_status=other.b_status, b_reason=other.b_reason, b_provider=other.b_provider)
                )
                continue
        if d.a_status is None and d.case.physics and (d.key, d.case.provider) in bare_a:
            other = rows[bare_a[(d.key, d.case.provider)]]
            used.add(bare_a[(d.key, d.case.provider)])
            merged.append(
                replace(d, a_status=other.a_status, a_reason=other.a_reason, a_provider=other.a_provider)
            )
            continue
        merged.append(d)
    # A row that stood in for, or was joined to, another is not shown again on its own.
    absorbed = {id(rows[j]) for j in used}
    return [d for d in merged if id(d) not in absorbed]


# ---------------------------------------------------------------------------------------------
# machine facts, field by field, matched by role
# ---------------------------------------------------------------------------------------------


def _txt(v: object) -> str:
    if v is None:
        return "unknown"
    if isinstance(v, bool):
        return "yes" if v else "no"
    return str(getattr(v, "value", v))


def _role_nic(report: Report) -> Optional[NicInfo]:
    """The NIC the measurements used (a result names its device), else the first RDMA device."""
    m = report.machine
    if m is None or not m.nics:
        return None
    named = {getattr(r.settings, "device_name", None) for r in report.results}
    named |= {getattr(r.params, "device_name", None) for r in report.results}
    return next((n for n in m.nics if n.name in named), m.nics[0])


def _role_gpu(report: Report, nic: Optional[NicInfo]) -> Optional[GpuInfo]:
    """The GPU the measurements used: the one an imported row names, else the GPU closest to the NIC."""
    m = report.machine
    if m is None or not m.gpus:
        return None
    wanted = {getattr(r.params, "gpu", None) for r in report.results} - {None}
    by_ordinal = [g for g in m.gpus if g.cuda_ordinal in wanted]
    if by_ordinal:
        return by_ordinal[0]
    if nic is not None:
        order = ("PIX", "PXB", "PHB", "NODE", "SYS")
        pairs = [p for p in m.topology if p.nic == nic.name and p.path_class is not None]
        if pairs:
            best = min(pairs, key=lambda p: order.index(p.path_class.value))  # type: ignore[union-attr]
            return next((g for g in m.gpus if g.bdf == best.gpu_bdf), m.gpus[0])
    return m.gpus[0]


def _nic_fields(m: MachineInfo, n: NicInfo) -> list[tuple[str, object, str]]:
    # A VF's RlxdOrd bit is RsvdP (reads 0); only the PF's bit says anything, and in a guest the PF
    # is not visible (PCIe Base Spec r5.0 sec. 9.3.5).
    fn = m.function(n.pf_bdf) if n.is_vf else m.function(n.bdf)
    own = m.function(n.bdf)
    rate = next((p.rate_gbps for p in n.ports if p.rate_gbps), None)
    ids = (
        f"{n.vendor_id:04x}:{n.device_id:04x}"
        if n.vendor_id is not None and n.device_id is not None
        else None
    )
    return [
        (
            "function",
            None if n.is_vf is None else ("VF" if n.is_vf else "PF"),
            "a VF's RlxdOrd bit reads 0 and its traffic is the PF's",
        ),
        ("device id", ids, "another NIC model or function"),
        ("firmware", n.fw_ver, "firmware decides ordering policy (PCI_WR_ORDERING) and ATS support"),
        ("port rate Gb/s", rate, "the wire caps every RDMA number"),
        (
            "RlxdOrd (PF)",
            fn.pcie.relaxed_ordering if fn and fn.pcie else None,
            "with RlxdOrd- on the PF the NIC cannot emit RO writes",
        ),
        (
            "ATS enabled",
            (own.ats.enabled if own.ats else False) if own else None,
            "without ATS, VM peer writes are translated and redirected by the host",
        ),
        ("NUMA node", n.numa_node, "the NIC's socket"),
    ]


def _gpu_fields(m: MachineInfo, g: GpuInfo) -> list[tuple[str, object, str]]:
    fn = m.function(g.bdf)
    link = g.link
    cur = f"{link.speed_gts:g} GT/s x{link.width}" if link and link.speed_gts and link.width else None
    cap = (
        f"{link.max_speed_gts:g} GT/s x{link.max_width}"
        if link and link.max_speed_gts and link.max_width
        else None
    )
    return [
        ("model", g.name or None, "another GPU"),
        ("link capable", cap, "a narrower or slower link caps every host<->GPU number"),
        ("link current", cur, "an idle GPU downshifts; under load it should match capable"),
        (
            "MaxPayload",
            fn.pcie.max_payload if fn and fn.pcie else None,
            "MPS sets write/completion efficiency",
        ),
        ("MaxReadReq", fn.pcie.max_read_request if fn and fn.pcie else None, "MRRS bounds read requests"),
        ("NUMA node", g.numa_node, "host buffers should live on this node"),
    ]


def _machine_fields(m: MachineInfo) -> list[tuple[str, object, str]]:
    k = m.kernel
    return [
        (
            "virtualization",
            None if m.virt.is_vm is None else ("VM" if m.virt.is_vm else "bare metal"),
            "in a VM the host IOMMU translates NIC->GPU writes and may route them through the root complex",
        ),
        ("hypervisor", m.virt.hypervisor if m.virt.is_vm else "none", "the hypervisor decides ACS/ATS"),
        ("flat guest PCI tree", m.virt.flat_pci, "a flat tree hides the physical GPU-NIC path"),
        (
            "IOMMU mode",
            m.virt.iommu_mode,
            "a translating IOMMU adds a lookup per DMA page unless ATS caches it",
        ),
        ("kernel", k.release, "mlx5 ignored IBV_ACCESS_RELAXED_ORDERING on VFs before Linux 6.4"),
        ("mlx5 out of tree", k.mlx5_out_of_tree, "OFED/DOCA builds may carry the VF RO backport"),
        (
            "CPU",
            f"{k.cpu_vendor} family {k.cpu_family:#x}" if k.cpu_vendor and k.cpu_family is not None else None,
            "some root complexes need RO for full peer-write bandwidth",
        ),
        ("GPU driver", k.nvidia_driver_version, "device-memory RDMA needs nvidia_peermem or dma-buf"),
        ("nvidia_peermem loaded", k.peermem_loaded, "ibv_reg_mr on GPU memory needs it"),
    ]


def _pair_class(m: MachineInfo, g: Optional[GpuInfo], n: Optional[NicInfo]) -> Optional[str]:
    if g is None or n is None:
        return None
    p = next((p for p in m.topology if p.gpu_bdf == g.bdf and p.nic == n.name), None)
    if p is None or p.path_class is None:
        return None
    return p.path_class.value + ("" if p.reliable else " (synthetic VM tree)")


def machine_deltas(a: Report, b: Report) -> list[MachineDelta]:
    """Machine facts that differ, field by field; GPUs and NICs matched by the role they played."""
    ma, mb = a.machine, b.machine
    if ma is None or mb is None:
        return []
    na, nb = _role_nic(a), _role_nic(b)
    ga, gb = _role_gpu(a, na), _role_gpu(b, nb)
    rows: list[tuple[str, object, object, str]] = []
    for (name, va, why), (_, vb, _) in zip(_machine_fields(ma), _machine_fields(mb), strict=True):
        rows.append((name, va, vb, why))
    if na is not None and nb is not None:
        label = "NIC" if na.name == nb.name else f"NIC ({na.name} vs {nb.name})"
        for (name, va, why), (_, vb, _) in zip(_nic_fields(ma, na), _nic_fields(mb, nb), strict=True):
            rows.append((f"{label} {name}", va, vb, why))
    if ga is not None and gb is not None:
        for (name, va, why), (_, vb, _) in zip(_gpu_fields(ma, ga), _gpu_fields(mb, gb), strict=True):
            rows.append((f"GPU {name}", va, vb, why))
    rows.append(
        (
            "GPU-NIC path class",
            _pair_class(ma, ga, na),
            _pair_class(mb, gb, nb),
            "PIX/PXB keep GPUDirect traffic under one switch; PHB and wider cross the root complex",
        )
    )
    return [MachineDelta(name, _txt(va), _txt(vb), why) for name, va, vb, why in rows if _txt(va) != _txt(vb)]


def _peer_facts(m: Optional[MachineInfo], p: Optional[GpuPeerPair]) -> tuple[str, str, str, str]:
    """(path class, can_access_peer, NVLink count, NVLink GB/s one way) of one side of a pair."""
    if m is None:
        return ("unknown: no machine facts", "unknown", "unknown", "unknown")
    if p is None:
        n = len(m.gpus) if m.gpus else len(m.cuda_devices)
        return (f"no pair: {n} GPU" + ("" if n == 1 else "s"), "-", "-", "-")
    path = p.path_text + ("" if p.reliable or p.path_class is PathClass.NV else " (synthetic VM tree)")
    rate = p.nvlink_gbytes_per_s
    return (path, _txt(p.can_access_peer), _txt(p.nvlinks), "unknown" if rate is None else f"{rate:g}")


def peer_deltas(a: Report, b: Report) -> list[PeerPairDelta]:
    """Every ordered GPU pair of either Report, side by side; empty when neither has a pair."""
    ma, mb = a.machine, b.machine
    pa = {(p.src_ordinal, p.dst_ordinal): p for p in (ma.peers if ma else ())}
    pb = {(p.src_ordinal, p.dst_ordinal): p for p in (mb.peers if mb else ())}
    out = []
    for key in sorted(set(pa) | set(pb)):
        fa, fb = _peer_facts(ma, pa.get(key)), _peer_facts(mb, pb.get(key))
        out.append(
            PeerPairDelta(
                f"GPU{key[0]}->GPU{key[1]}", fa[0], fb[0], fa[1], fb[1], fa[2], fb[2], fa[3], fb[3], fa != fb
            )
        )
    return out


# ---------------------------------------------------------------------------------------------
# explanations: re-diagnosed causes, then the machine facts that differ
# ---------------------------------------------------------------------------------------------

# Cause codes and machine facts that can explain each case family.
_FAMILY_CAUSES = {
    "rdma_write": ("CAUSE-RO-", "CAUSE-P2P-", "CAUSE-GPU-NIC-", "MEASURE-FAILED"),
    "copy": ("CAUSE-LINK-", "CAUSE-IOMMU-", "CAUSE-NUMA-", "MEASURE-FAILED"),
    "gather": ("CAUSE-WORKING-SET", "CAUSE-LINK-", "CAUSE-IOMMU-", "MEASURE-FAILED"),
}
_FAMILY_FACTS = {
    "rdma_write": (
        "virtualization",
        "kernel",
        "mlx5 out of tree",
        "NIC",
        "GPU-NIC path class",
        "CPU",
        "nvidia_peermem",
        "IOMMU",
    ),
    "copy": ("GPU link", "GPU MaxPayload", "GPU MaxReadReq", "GPU NUMA", "IOMMU", "virtualization"),
    "gather": ("GPU link", "GPU MaxPayload", "GPU MaxReadReq", "IOMMU", "virtualization", "GPU NUMA"),
}
_EXPERIMENT = {
    "rdma_write": "gdrdiag mr-bench --matrix (on both machines)",
    "copy": "gdrdiag copy-bench --sizes 256M (on both machines)",
    "gather": "gdrdiag gather-bench --sweep working-set (on both machines)",
}
NOTHING = "nothing in these Reports explains it"


def _family(key: str) -> Optional[str]:
    if key.startswith(("rdma", "mr_", "perftest_")):
        return "rdma_write"
    if key.startswith(("copy", "nvbandwidth_")):
        return "copy"
    if key.startswith("gather"):
        return "gather"
    return None


def explain(
    delta: CaseDelta,
    fa: list[Finding],
    fb: list[Finding],
    facts: list[MachineDelta],
    *,
    with_facts: bool = True,
) -> list[Explanation]:
    """Ranked causes for one large delta: re-diagnosed causes of the slower side, then differing facts.

    ``with_facts=False`` leaves the machine facts out (they were listed under the family's largest
    delta already).
    """
    fam = _family(delta.key)
    if fam is None:
        return []
    slow, fast = (fb, fa) if (delta.ratio or 1) < 1 else (fa, fb)
    causes = [f for f in slow if f.code.startswith(_FAMILY_CAUSES[fam]) and f.severity is not Severity.INFO]
    # Causes about this very case first, then the family's; one line per cause code.
    causes.sort(key=lambda f: f.subject != delta.key)
    seen: set[str] = set()
    causes = [f for f in causes if not (f.code in seen or seen.add(f.code))]  # type: ignore[func-returns-value]
    out: list[Explanation] = []
    for f in causes[:3]:
        other = next((g for g in fast if g.code == f.code), None)
        share = f"{f.explains:.0%} of the loss, {f.basis}" if f.explains is not None else f.severity.value
        ev = f"{f.code} ({share})" + (f"; next: {f.next_step}" if f.next_step else "")
        ea, eb = (other.title if other else "absent"), ev
        if slow is fa:
            ea, eb = eb, ea
        out.append(Explanation(delta.key, len(out) + 1, f.title.split(" (")[0], ea, eb))
    for d in facts if with_facts else ():
        if d.fact.startswith(_FAMILY_FACTS[fam]):
            out.append(Explanation(delta.key, len(out) + 1, f"differs: {d.fact}", d.a, d.b))
    if not out:
        out.append(Explanation(delta.key, 1, NOTHING, "-", f"next: {_EXPERIMENT[fam]}"))
    return out


def _finding_id(f: Finding) -> tuple[str, str]:
    return f.code, f.subject


def _leading_cause(fa: list[Finding], fb: list[Finding]) -> Optional[str]:
    """The second Report's first FAIL/WARN finding that the first does not share (its re-diagnosis)."""
    a_ids = {_finding_id(f) for f in fa}
    return next((f.code for f in fb if f.severity is not Severity.INFO and _finding_id(f) not in a_ids), None)


def compare(
    a: Report,
    b: Report,
    *,
    a_label: str = "a",
    b_label: str = "b",
    findings: Optional[tuple[list[Finding], list[Finding]]] = None,
) -> Comparison:
    """The whole comparison of two Reports, both re-diagnosed with the current rules.

    ``findings``: the two Reports' re-diagnosed findings when the caller has them already.
    """
    from gdrdiag.diagnose import diagnose

    fa, fb = findings if findings is not None else (list(diagnose(a).findings), list(diagnose(b).findings))
    mapping = gpu_renumbering(a, b)
    cases = match_cases(a.results, renumbered(b.results, mapping) if mapping else b.results)
    facts = machine_deltas(a, b)
    a_ids = {_finding_id(f) for f in fa}
    b_ids = {_finding_id(f) for f in fb}
    explanations: list[Explanation] = []
    explained_keys: set[str] = set()
    explained_families: set[str] = set()
    # Each case key with a large delta gets its causes, largest delta first; the machine facts that
    # bear on a family are listed once, under its largest delta, to keep the output short.
    for d in sorted((c for c in cases if c.large), key=lambda c: abs(1 - (c.ratio or 1)), reverse=True):
        if d.key in explained_keys:
            continue
        explained_keys.add(d.key)
        fam = _family(d.key) or d.key
        explanations.extend(explain(d, fa, fb, facts, with_facts=fam not in explained_families))
        explained_families.add(fam)
    return Comparison(
        a_label=a_label,
        b_label=b_label,
        cases=tuple(cases),
        machine=tuple(facts),
        findings_only_a=tuple(f for f in fa if _finding_id(f) not in b_ids),
        findings_only_b=tuple(f for f in fb if _finding_id(f) not in a_ids),
        explanations=tuple(explanations),
        leading_cause=_leading_cause(fa, fb),
        peers=tuple(peer_deltas(a, b)),
    )


__all__ = [
    "LARGE_DELTA",
    "CaseDelta",
    "Comparison",
    "Explanation",
    "MachineDelta",
    "PeerPairDelta",
    "Severity",
    "compare",
    "match_cases",
    "machine_deltas",
    "peer_deltas",
]
