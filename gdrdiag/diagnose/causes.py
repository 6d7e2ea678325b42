"""The cause model: one rule per candidate cause, weighing machine facts and measurements together.

Each rule looks at one measured loss (a ``GdrGap``, the copy engine against the PCIe model, a
working-set decline) and returns at most one ``Cause``: how strongly the evidence points at it
(0..1), the evidence for and against, the fix for *this* machine, and the one gdrdiag command that
would decide it. The strength turns into ``explains`` (the share of the measured loss this cause
accounts for): a measured share when an A/B isolated it (relaxed ordering on vs off), otherwise the
share no measurement has explained yet, times the strength. Findings are then ranked by severity
and, within it, by that share, so the cause that explains most of the loss leads, whether machine
facts or a bench suggested it. A measurement outranks an inference: when the A/B shows RO working,
the inference "this kernel ignores RO" is contradicted and demoted (:func:`reconcile`).

The machine-rule findings (``diagnose_machine``) are read here as evidence by code, so each fact is
decided once, in its own rule.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Callable, Iterable, Optional

from gdrdiag.diagnose._common import shown
from gdrdiag.diagnose.context import Context
from gdrdiag.diagnose.evidence import GdrGap, WriteRow, gdr_gaps, write_rows
from gdrdiag.diagnose.machine import diagnose_machine, rule_error
from gdrdiag.diagnose.thresholds import GPU_VS_HOST_FAIL, RO_GAIN
from gdrdiag.model.findings import Finding, Severity
from gdrdiag.model.machine import MachineInfo, PathClass
from gdrdiag.model.path import Judgement, Mover, Place
from gdrdiag.pathmodel.judge import judge

if TYPE_CHECKING:  # pragma: no cover
    from gdrdiag.model.report import Report

AB_COMMAND = "gdrdiag mr-bench --memory device,pinned --reg {reg} --ro-ab --size {size} --qp 4"


@dataclass(frozen=True)
class Cause:
    """A candidate cause for one measured loss, weighed."""

    code: str
    title: str
    strength: float  # 0..1: how strongly the evidence points here
    explains: float  # share of the measured loss this cause accounts for (0..1)
    basis: str  # "measured" | "inferred"
    loss: float  # the measured loss (1 - slow/yardstick) it is about
    evidence_for: tuple[str, ...]
    evidence_against: tuple[str, ...]
    fix: str
    next_step: str
    subject: str = ""
    # Set when the loss is built into the measurement (pageable rows beside healthy pinned ones,
    # a rung of a ladder): the cause is named, at INFO, and says why it is no machine problem.
    by_design: str = ""

    def finding(self, lead: bool = True) -> Finding:
        """As a Finding, with a severity from the share it explains.

        FAIL when it leads and explains half or more of a loss of half or more; WARN when it explains
        a fair share (an alternative to the leading cause is at most WARN); INFO otherwise.
        """
        if self.by_design:
            sev = Severity.INFO
        elif lead and self.loss >= 1 - GPU_VS_HOST_FAIL and self.explains >= 0.5:
            sev = Severity.FAIL
        elif self.explains >= 0.2 and self.loss >= 0.1:
            sev = Severity.WARN
        else:
            sev = Severity.INFO
        return Finding(
            code=self.code,
            severity=sev,
            title=(
                f"{self.title} (by design: no loss against its own path)"
                if self.by_design and self.loss < 0.05
                else f"{self.title} (explains {self.explains:.0%} of a {self.loss:.0%} loss, measured)"
                if self.basis == "measured"
                else f"{self.title} (could explain ~{self.explains:.0%} of a {self.loss:.0%} loss, inferred)"
            ),
            evidence=(
                f"strength of the evidence for this cause: {self.strength:.2f} of 1",
                *self.evidence_for,
                *((f"by design: {self.by_design}",) if self.by_design else ()),
            ),
            advice=self.fix,
            subject=self.subject,
            explains=round(self.explains, 3),
            # a loss built into the measurement is no machine problem: its basis says so, so that
            # rankings (diagnose's groups, fleet's leading cause) put it after real causes
            basis="by design" if self.by_design else self.basis,
            against=self.evidence_against,
            next_step=self.next_step,
        )


# Run-to-run spread of one RDMA bandwidth number on a quiet fabric: the floor an A/B with one sample
# per side is judged against (perftest's own BW average over thousands of iterations varies a few %).
SINGLE_SAMPLE_NOISE = 0.05


def single_sample_line(gain: float) -> str:
    """How strong an A/B from one sample per side is: its effect size against the noise floor."""
    effect = abs(gain - 1)
    strength = (
        "strong"
        if effect >= 4 * SINGLE_SAMPLE_NOISE
        else "moderate"
        if effect >= 2 * SINGLE_SAMPLE_NOISE
        else "weak"
    )
    return (
        f"single sample per side: a {effect:.0%} effect against a {SINGLE_SAMPLE_NOISE:.0%} noise floor "
        f"({strength}); more runs per side would tighten it"
    )


def _size_arg(gap: GdrGap) -> str:
    size = gap.baseline.size_bytes or gap.host.size_bytes
    if not size:
        return "1M"
    return f"{size >> 20}M" if size % (1 << 20) == 0 else str(size)


def _ab(gap: GdrGap) -> str:
    return AB_COMMAND.format(reg=gap.baseline.reg_path or "mr", size=_size_arg(gap))


def _platform_line(ctx: Context) -> Optional[str]:
    f = ctx.machine_codes.get("RO-PLATFORM")
    return f"RO-sensitive CPU: {f.title}" if f else None


_enable_pf = (
    "needs its DevCtl Enable Relaxed Ordering bit set: find out why it is off (BIOS, or a root port the "
    "kernel marks NO_RELAXED_ORDERING: dmesg 'Relaxed Ordering disabled'); a VF's own bit is RsvdP, so "
    "its writes follow the PF's (PCIe Base Spec r5.0 7.5.3.4, 9.3.5.4)."
)


def _pf_names(pfs: list[str]) -> str:
    return ("PF " if len(pfs) == 1 else "PFs ") + ", ".join(pfs)


def _pf_line(pfs: list[str]) -> str:
    """The evidence line naming the PFs whose RO enable is off."""
    return (
        f"{_pf_names(pfs)} of the NIC {'has' if len(pfs) == 1 else 'have'} RlxdOrd- in DevCtl: "
        "its writes (and its VFs') are strictly ordered, whatever the MR requests"
    )


def ro_not_requested(ctx: Context, gap: GdrGap) -> Optional[Cause]:
    """GPU MRs registered without IBV_ACCESS_RELAXED_ORDERING, on a path where ordering throttles writes."""
    if gap.off is None or not gap.slow:
        return None
    pro, con = [f"{gap.off.label}: access flags lack IBV_ACCESS_RELAXED_ORDERING (1<<20)"], []
    platform = _platform_line(ctx)
    pfs = ctx.ro_off_pfs()
    if gap.on is not None:
        gain = gap.on.gbps / gap.off.gbps
        if gain < RO_GAIN:
            return None  # the A/B says RO does not help here: another cause owns this loss
        share = gap.ro_recovered or 0.0
        pro += [f"measured A/B: RO on/off = {gain:.2f}x", f"RO recovers {share:.0%} of the loss"]
        if min(gap.off.samples, gap.on.samples) < 2:
            pro.append(single_sample_line(gain))
        basis, strength, explains = "measured", 1.0, share
    else:
        basis, strength = "inferred", 0.5
        if ctx.is_vm:
            strength += 0.2
            pro.append(
                "VM: NIC->GPU writes are routed through the host root complex, where strict "
                "ordering stalls posted writes"
            )
        if ctx.has("RO-ACCESS-FLAG") and not ctx.is_vm:
            strength += 0.1
            pro.append("the closest GPU/NIC pair crosses the root complex")
        if platform:
            strength += 0.2
            pro.append(platform)
        if pfs:
            strength += 0.2
            pro.append(_pf_line(pfs))
        elif ctx.kernel_honours_vf_ro() is True or (ctx.machine and ctx.machine.nics and not ctx.vf_nics()):
            strength += 0.1
            pro.append("requesting RO would take effect here (a PF, or a kernel >= 6.4 for the VF)")
        if ctx.kernel_honours_vf_ro() is False and ctx.vf_nics():
            strength -= 0.3
            con.append("this kernel would ignore RO on the VF even if requested (see CAUSE-RO-NOT-HONOURED)")
        strength = max(0.05, min(0.9, strength))
        explains = strength
        con.append("no RO-on row: the share RO would recover is not measured")
    if platform and basis == "measured":
        pro.append(platform)
    fix = (
        "Register bulk-data MRs with IBV_ACCESS_RELAXED_ORDERING (NCCL and perftest do by default); keep "
        "flag/signal MRs strictly ordered."
    )
    if platform:
        fix += " On this CPU missing RO is a known 2-3x loss even on bare metal (UCX enables it by default)."
    if pfs:
        fix += f" Requesting it takes effect only once {_pf_names(pfs)} {_enable_pf}"
    return Cause(
        "CAUSE-RO-NOT-REQUESTED",
        "GPU MRs registered without IBV_ACCESS_RELAXED_ORDERING",
        strength,
        explains,
        basis,
        gap.loss,
        tuple(pro + gap.evidence()),
        tuple(con),
        fix,
        _ab(gap),
        subject=gap.baseline.key,
    )


def ro_not_honoured(ctx: Context, gap: GdrGap) -> Optional[Cause]:
    """RO requested, but this kernel/VF/PF does not put it on the wire, so the GPU path stays slow."""
    if gap.on is None or gap.on.gbps >= 0.7 * gap.host.gbps:
        return None
    pro, con = [f"{gap.on.label}: RO requested, still {gap.on.gbps / gap.host.gbps:.0%} of host memory"], []
    confirmed = 0.0  # an A/B that shows no effect makes "not applied" likelier; the share stays inferred
    if gap.off is not None:
        gain = gap.on.gbps / gap.off.gbps
        if gain >= RO_GAIN:
            return None  # RO measurably takes effect: it is honoured
        pro.append(f"measured A/B: RO on/off = {gain:.2f}x: requesting RO changes nothing")
        if min(gap.off.samples, gap.on.samples) < 2:
            pro.append(single_sample_line(gain))
        confirmed = 0.05
    honours, vfs, pfs = ctx.kernel_honours_vf_ro(), ctx.vf_nics(), ctx.ro_off_pfs()
    k = ctx.machine.kernel if ctx.machine else None
    if pfs:
        # decisive whatever the kernel: with the PF's RO enable off no function of it emits RO writes
        strength = 0.9
        pro.append(_pf_line(pfs))
        if vfs and honours is False:
            pro.append(
                f"kernel {shown(k.release if k else None)} < 6.4 with the in-tree mlx5 driver also ignores RO"
            )
    elif vfs and honours is False:
        strength = 0.9
        pro.append(
            f"kernel {shown(k.release if k else None)} < 6.4 with the in-tree mlx5 driver: RO is ignored on "
            f"VF {', '.join(vfs)}"
        )
    elif vfs and honours is None:
        strength = 0.3
        pro.append(f"kernel {shown(k.release if k else None)} < 6.4 on VF {', '.join(vfs)}")
        con.append("mlx5 is an out-of-tree (OFED/DOCA) build that may carry the VF RO backport")
    else:
        strength = 0.15
        con.append(
            "kernel >= 6.4 or a PF with RO enabled: RO should reach the wire"
            + ("" if honours else " (kernel version unknown)")
        )
    strength = min(0.95, strength + confirmed)
    explains = strength * gap.remaining
    fix = (
        f"On {'the host' if ctx.is_vm else 'this machine'}: {_pf_names(pfs)} {_enable_pf}"
        if pfs
        else "Upgrade the guest kernel to >= 6.4 (or a stable kernel carrying the mlx5 'relaxed ordering "
        "in VFs and VMs' series), or install MLNX_OFED/DOCA-OFED with it."
    )
    return Cause(
        "CAUSE-RO-NOT-HONOURED",
        "relaxed ordering requested but not applied on this platform",
        strength,
        explains,
        "inferred",
        gap.loss,
        tuple(pro + gap.evidence()),
        tuple(con),
        fix,
        _ab(gap) if gap.off is None else _ab(gap) + "   # again, after the fix above",
        subject=gap.baseline.key,
    )


def p2p_via_root_complex(ctx: Context, gap: GdrGap) -> Optional[Cause]:
    """Peer writes from the NIC reach the GPU through the root complex: VM without ATS, or ACS redirect."""
    if not gap.slow or gap.remaining <= 0.05:
        return None
    pro, con = [], []
    if ctx.is_vm:
        strength = 0.5
        pro.append("VM: the guest cannot enable ATS or ACS Direct Translated P2P; the host decides both")
        if ctx.has("VIRT-NO-VIOMMU"):
            strength += 0.1
            pro.append("no vIOMMU in the guest: no ATS from inside it")
        if not _nic_ats_enabled(ctx.machine):
            strength += 0.1
            pro.append("no enabled ATS capability visible on the NIC")
        pfs = ctx.ro_off_pfs()
        if pfs:
            strength -= 0.2
            con.append(
                f"{_pf_line(pfs)}: strict ordering explains the loss before the route does (CAUSE-RO-*)"
            )
        elif gap.on is not None and ctx.kernel_honours_vf_ro() is not False:
            strength += 0.2
            pro.append(
                "RO was requested and is (probably) applied here, so ordering does not explain what remains"
            )
        fix = (
            "On the host: enable ATS on the NIC (mlxconfig ATS_ENABLED=true), set ACS Direct Translated P2P "
            "on the ports between GPU and NIC, and give the guest a vIOMMU so translated requests can "
            "go peer to peer instead of through the root complex."
        )
        nxt = "gdrdiag inspect   # on the host, to read ACS/ATS on the physical GPU-NIC path"
    elif ctx.has("ACS-REDIRECT"):
        strength = 0.8
        pro.append(ctx.machine_codes["ACS-REDIRECT"].title)
        fix = ctx.machine_codes["ACS-REDIRECT"].advice
        nxt = "gdrdiag inspect"
    else:
        return None
    explains = strength * gap.remaining
    if gap.ro_recovered:
        pro.append(f"RO already recovered {gap.ro_recovered:.0%}; {gap.remaining:.0%} of the loss remains")
    return Cause(
        "CAUSE-P2P-VIA-RC",
        "NIC->GPU peer writes routed through the root complex",
        min(strength, 0.95),
        explains,
        "inferred",
        gap.loss,
        tuple(pro + gap.evidence()),
        tuple(con),
        fix,
        nxt,
        subject=gap.baseline.key,
    )


def gpu_nic_far(ctx: Context, gap: GdrGap) -> Optional[Cause]:
    """Bare metal: the GPU's closest NIC is across the root complex or the socket interconnect."""
    if not gap.slow or ctx.machine is None or ctx.is_vm:
        return None  # in a VM the guest's topology says nothing about the physical path
    far = [
        f"{p.gpu_bdf}<->{p.nic}: {p.path_class.value}"
        for p in ctx.machine.topology
        if p.reliable and p.path_class in (PathClass.PHB, PathClass.NODE, PathClass.SYS)
    ]
    near = [p for p in ctx.machine.topology if p.reliable and p.path_class in (PathClass.PIX, PathClass.PXB)]
    if not far or near:
        return None
    strength = 0.6
    pro = far[:3]
    return Cause(
        "CAUSE-GPU-NIC-FAR",
        "GPU and NIC are not under one PCIe switch",
        strength,
        strength * gap.remaining,
        "inferred",
        gap.loss,
        tuple(pro + gap.evidence()),
        (),
        "Use a NIC under the same PCIe switch as the GPU (nvidia-smi topo -m: PIX/PXB), or move the card.",
        "gdrdiag inspect",
        subject=gap.baseline.key,
    )


def _nic_ats_enabled(m: Optional[MachineInfo]) -> bool:
    if m is None:
        return False
    for n in m.nics:
        f = m.function(n.bdf)
        if f is not None and f.ats is not None and f.ats.enabled:
            return True
    return False


GAP_RULES: tuple[Callable[[Context, GdrGap], Optional[Cause]], ...] = (
    ro_not_requested,
    ro_not_honoured,
    p2p_via_root_complex,
    gpu_nic_far,
)


def context(report: "Report") -> tuple[Context, list[Finding]]:
    """The report rules' input for one Report, built once per diagnose call; and any judging error.

    The machine rules run once here (their findings are both reported and read as evidence), and
    the path model judges every numeric row once (:func:`gdrdiag.pathmodel.judge`). A judging bug
    on odd data becomes one ``DIAG-RULE-ERROR`` finding and a Context without judgements, never
    an exception out of diagnose.
    """
    machine_findings = tuple(diagnose_machine(report.machine)) if report.machine is not None else ()
    codes: dict[str, Finding] = {}
    for f in machine_findings:
        codes.setdefault(f.code, f)
    try:
        judged = judge(report.results, report.machine)
        errors: list[Finding] = []
    except Exception as exc:  # a model bug must not hide every other rule
        judged, errors = (), [rule_error(judge, exc)]
    reference = _model_reference(judged)
    losses = tuple(j for j in judged if j.is_loss)
    rows = tuple(write_rows(report.results))
    ctx = Context(
        report.machine,
        codes,
        tuple(gdr_gaps(rows, reference)),
        judged,
        losses,
        machine_findings,
        {j.index: j for j in judged},
        rows,
    )
    return ctx, errors


def _model_reference(judged: Iterable[Judgement]) -> Optional[WriteRow]:
    """What the path model allows the largest GPU-memory RDMA row, as a stand-in host-memory row.

    Used only when a Report has no host-memory RDMA row: the GPU rows are then judged against their
    own path (the NIC port and both PCIe links), never left without a yardstick.
    """
    rows = [
        j
        for j in judged
        if j.mover is Mover.NIC_DMA
        and j.expected_gbytes_per_s
        and Place.GPU
        in (j.source.place if j.source else None, j.destination.place if j.destination else None)
    ]
    if not rows:
        return None
    j = max(rows, key=lambda j: j.size_bytes or 0)
    return WriteRow(
        f"path model ({j.bound})",
        False,
        None,
        j.size_bytes,
        (j.expected_gbytes_per_s or 0) * 8,
        None,
        "model",
    )


def gap_causes(ctx: Context) -> list[tuple[Cause, bool]]:
    """(cause, leads its gap) for every GDR cause rule over every measured GPU/host gap that is slow."""
    best: dict[str, tuple[Cause, bool]] = {}
    also: dict[str, list[str]] = {}
    for gap in ctx.gaps:
        if not gap.slow:
            continue
        found = [c for rule in GAP_RULES if (c := rule(ctx, gap)) is not None and c.explains > 0.01]
        found.sort(key=lambda c: (-c.explains, c.basis != "measured"))
        for i, c in enumerate(found):
            # One finding per cause on the NIC->GPU path: each registration path (mr, dma-buf) is
            # another measurement of the same path, named in the evidence of the strongest one.
            kept = best.get(c.code)
            if kept is None or (c.explains, i == 0) > (kept[0].explains, kept[1]):
                if kept is not None:
                    also.setdefault(c.code, []).append(kept[0].subject)
                best[c.code] = (c, i == 0)
            else:
                also.setdefault(c.code, []).append(c.subject)
    out = []
    for code, (c, lead) in best.items():
        if also.get(code):
            # The subject is the path's first registration path in a fixed order, not the strongest
            # one: two near-equal rows trade places with run-to-run noise, and a subject that flips
            # with them would make one finding look like two (fleet groups by code and subject).
            # (the first key: rdma_write_device_dmabuf before rdma_write_device_mr)
            others = sorted(set(also[code]) - {c.subject})
            subject = min([c.subject, *others])
            strongest = "" if subject == c.subject else f"strongest on {c.subject}; "
            c = replace(
                c,
                evidence_for=c.evidence_for
                + ((f"{strongest}the same on {', '.join(others)}",) if others else ()),
                subject=subject,
            )
        out.append((c, lead))
    return out


# Machine inferences that a measurement can contradict: code -> (cause codes that contradict it).
CONTRADICTED_BY = {"RO-KERNEL-VF": "RO-AB-SENSITIVE"}
# Machine inferences a cause finding weighs (and so re-states with the measurement): shown as INFO.
WEIGHED_BY = {"RO-KERNEL-VF": "CAUSE-RO-NOT-HONOURED", "RO-PLATFORM": "CAUSE-RO-NOT-REQUESTED"}


# Machine inferences that the rows of a full run would weigh (WEIGHED_BY, CONTRADICTED_BY): in an
# interrupted Report those rows are missing because the run stopped, not because of the machine.
UNTESTED_WHEN_INTERRUPTED = frozenset(WEIGHED_BY) | frozenset(CONTRADICTED_BY)


def reconcile(findings: list[Finding], interrupted: bool = False) -> list[Finding]:
    """Demote machine inferences a measurement contradicts, or a cause finding already weighs.

    In an ``interrupted`` Report an inference the missing rows would have weighed is shown as INFO:
    the run stopped before it measured them, so the inference is not the finding that explains
    this Report (the note that says it is partial does).
    """
    codes = {f.code for f in findings}
    out = []
    for f in findings:
        if CONTRADICTED_BY.get(f.code) in codes:
            f = replace(
                f,
                severity=Severity.INFO,
                title=f"{f.title} - contradicted by measurement: "
                f"{CONTRADICTED_BY[f.code]} shows RO taking effect",
            )
        elif WEIGHED_BY.get(f.code) in codes and f.severity is not Severity.INFO:
            f = replace(f, severity=Severity.INFO, title=f"{f.title} (weighed in {WEIGHED_BY[f.code]})")
        elif interrupted and f.code in UNTESTED_WHEN_INTERRUPTED and f.severity is not Severity.INFO:
            f = replace(
                f,
                severity=Severity.INFO,
                title=f"{f.title} (not tested: the run was interrupted before the rows that weigh it)",
            )
        out.append(f)
    return out
