"""Cause rules for host<->GPU paths, failed measurements, and what to measure next; the report rule.

- ``CAUSE-LINK-DEGRADED`` / ``CAUSE-IOMMU-TRANSLATION`` / ``CAUSE-NUMA-PLACEMENT``: a large pinned
  H2D copy below what the path model expects of it (this link with this MPS/MRRS, at its size:
  the row's :class:`~gdrdiag.model.path.Judgement`), weighed against the machine facts.
- ``CAUSE-WORKING-SET``: zero-copy gather bandwidth falling as the table grows (gather-bench
  ``--sweep working-set``); the link is the same at every size, so the decline is translation reach
  (IOMMU IOTLB / device ATC) or NUMA placement.
- ``MEASURE-FAILED``: a case that ran and failed (ERROR, payload mismatch): FAIL, exit 1.
- ``MEASURE-NEXT``: with one bench only, what this Report can and cannot say, and what to run.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Iterable, Optional

from gdrdiag.diagnose import causes_busy, causes_nccl, causes_path, causes_peer, causes_rdma, causes_ucx
from gdrdiag.diagnose._common import ev
from gdrdiag.diagnose.causes import Cause, Context, gap_causes, reconcile
from gdrdiag.diagnose.causes_path import SMALL_SHARE, TRANSIENT_BEST, sample_shares
from gdrdiag.diagnose.copy_rules import expected_line, pcie_judgement
from gdrdiag.diagnose.evidence import gpu_rows_without_host
from gdrdiag.diagnose.thresholds import (
    CE_OF_MODEL_HEALTHY,
    LARGE_COPY_BYTES,
    WORKING_SET_KEEPS,
)
from gdrdiag.model.findings import Finding, Severity
from gdrdiag.model.imported_path import Flow
from gdrdiag.model.params import CopyParams, GatherParams, ImportedParams
from gdrdiag.model.path import Judgement, Mover, Place
from gdrdiag.model.results import BenchResult, Status, is_mr
from gdrdiag.model.vocabulary import MemoryKind
from gdrdiag.units import MiB, format_size, pcie_raw_gbytes_per_s

if TYPE_CHECKING:  # pragma: no cover
    from gdrdiag.model.report import Report

LARGE_COPY = LARGE_COPY_BYTES


def link_under_load(report: "Report", r: BenchResult) -> Optional[tuple[float, float, str]]:
    """(raw GB/s under load, capable raw GB/s, evidence) of the GPU link, or None if not read under load.

    copy-bench reads the link while its own copies run and records it in the copy's params; that
    sample is used first. Else the machine's link, but only when it was not read idle (GPUs lower
    an idle link's speed to save power, so an idle reading says nothing about a copy).
    """
    p = r.params
    if isinstance(p, CopyParams) and p.link_generation and p.link_width:
        if p.link_max_generation and p.link_max_width:
            return (
                pcie_raw_gbytes_per_s(p.link_generation, p.link_width),
                pcie_raw_gbytes_per_s(p.link_max_generation, p.link_max_width),
                f"link sampled by copy-bench during a copy: Gen{p.link_generation} x{p.link_width} "
                f"of Gen{p.link_max_generation} x{p.link_max_width}",
            )
    gpu = report.machine.gpu(getattr(p, "gpu", None)) if report.machine else None
    link = gpu.link if gpu is not None else None
    if link and link.max_raw_gbytes_per_s and link.raw_gbytes_per_s and not gpu.link_sampled_idle:  # type: ignore[union-attr]
        return (
            link.raw_gbytes_per_s,
            link.max_raw_gbytes_per_s,
            f"link under load {link.speed_gts:g} GT/s x{link.width} of "
            f"{link.max_speed_gts:g} GT/s x{link.max_width}",
        )
    return None


def _numa_evidence(r: BenchResult, report: "Report") -> tuple[float, tuple[str, ...], tuple[str, ...]]:
    """(strength, evidence for, evidence against) of CAUSE-NUMA-PLACEMENT from the copy's placement.

    A run bound to the GPU's own node (``--numa auto`` applied) allocated its buffers there
    (MPOL_PREFERRED: unless that node was out of memory), so a remote node is unlikely; a run bound
    to another node than the GPU's is evidence *for* the cause.
    """
    s = r.settings
    gpu = report.machine.gpu(getattr(r.params, "gpu", None)) if report.machine else None
    gpu_node = gpu.numa_node if gpu is not None and gpu.numa_node is not None and gpu.numa_node >= 0 else None
    if s.numa is None:
        unknown = "this Report does not record which node the buffers were allocated on"
        if gpu_node is None:
            # the GPU shows no NUMA affinity (numa_node -1: one node, or a VM that cannot see the
            # host's): nothing points at a far node, so the cause stays a weak candidate, below WARN
            return 0.1, (), (unknown, "the GPU reports no NUMA node (numa_node -1)")
        return 0.3, (), (unknown,)
    why = f"--numa {s.numa}: {s.numa_reason}" if s.numa_reason else f"--numa {s.numa}"
    if s.numa_node is None:
        # No NUMA affinity (numa_node -1: one node, or a VM that cannot see the host's) is no
        # evidence for a far node either: the cause stays a weak candidate, below WARN.
        weak = 0.3 if gpu_node is not None else 0.1
        return weak, (), (f"the run was not bound to a node ({why})",)
    cpus = f", CPUs {s.numa_cpus}" if s.numa_cpus else ""
    bound = f"the run was bound to node {s.numa_node}{cpus} ({why})"
    if gpu_node is not None and s.numa_node != gpu_node:
        return 0.9, (f"{bound}; the GPU is on node {gpu_node}",), ()
    return (0.1 if s.numa == "auto" or s.numa_node == gpu_node else 0.3), (), (bound,)


def _worst_pinned_copy_loss(ctx: Context) -> Optional[Judgement]:
    """The worst loss of a copy-engine row between pinned host memory and a GPU."""
    rows = [
        j
        for j in ctx.losses
        if j.is_loss
        and j.mover is Mover.COPY_ENGINE
        and {e.place for e in (j.source, j.destination) if e is not None} == {Place.HOST, Place.GPU}
        and all(
            e.memory not in (MemoryKind.PAGEABLE, MemoryKind.MANAGED) for e in (j.source, j.destination) if e
        )
        # a row its per-copy cost holds far below the link (one call per 8 KiB block) measures the
        # call, not the path: its shortfall is call-cost jitter, which no machine cause explains
        and not (
            j.expected_gbytes_per_s
            and j.peak_gbytes_per_s
            and j.expected_gbytes_per_s < SMALL_SHARE * j.peak_gbytes_per_s
        )
    ]
    return min(rows, key=lambda j: j.ratio or 0.0) if rows else None


def _copy_loss(report: "Report", ctx: Context) -> Optional[tuple[BenchResult, float, list[str]]]:
    """(row, measured / expected, the model's evidence) of the pinned copy loss the causes weigh."""
    large = pcie_judgement(report, ctx, "copy_h2d_pinned")
    if large is not None and large.ratio is not None and large.ratio < CE_OF_MODEL_HEALTHY:
        return report.results[large.index], large.ratio, [expected_line(large)]
    worst = _worst_pinned_copy_loss(ctx)
    if worst is None:
        return None
    why = f"expected {worst.expected_gbytes_per_s:.2f} GB/s here ({worst.bound}; {worst.per_op_source})"
    return report.results[worst.index], worst.ratio or 0.0, [why]


# A copy engine keeps too few reads in flight below this MaxReadReq to fill a x16 link: each
# request carries at most MRRS bytes and the device has a fixed number of tags (PCIe Base Spec
# r5.0 2.2.6.2); 512 B and up are what platforms ship.
SMALL_MRRS = 512


def _mps_mrrs(report: "Report", r: BenchResult, loss: float, measured: list[str]) -> list[Cause]:
    """CAUSE-MPS-MRRS: the copy's GPU has MaxReadReq (or MaxPayload) set below what the platform allows."""
    m = report.machine
    gpu = m.gpu(getattr(r.params, "gpu", None)) if m else None
    fn = m.function(gpu.bdf) if m and gpu else None
    if fn is None or fn.pcie is None:
        return []
    mrrs, mps, mps_cap = fn.pcie.max_read_request, fn.pcie.max_payload, fn.pcie.max_payload_supported
    pro = []
    if mrrs < SMALL_MRRS:
        pro.append(
            f"pci[{fn.bdf}].pcie.max_read_request = {mrrs} (< {SMALL_MRRS}): few bytes per read in flight"
        )
    if mps < min(256, mps_cap):
        pro.append(f"pci[{fn.bdf}].pcie.max_payload = {mps} of {mps_cap} supported")
    if not pro:
        return []
    strength = 0.7
    return [
        Cause(
            "CAUSE-MPS-MRRS",
            "the GPU's MaxReadReq / MaxPayload are set small",
            strength,
            strength,
            "inferred",
            loss,
            tuple(measured + pro),
            (),
            "Raise MaxReadReq to 4096 (setpci -s BDF CAP_EXP+8.w, bits 14:12; or the BIOS/firmware setting) "
            "and MaxPayload to what the whole path supports; pci=pcie_bus_perf lets the kernel pick them.",
            "lspci -vvv -s BDF | grep -E 'MaxPayload|MaxReadReq'",
            r.key,
        )
    ]


def _came_and_went(report: "Report", ctx: Context, r: BenchResult) -> bool:
    """True when the copy row's best samples reach its path: the loss is a tail of some samples."""
    index = next((i for i, row in enumerate(report.results) if row is r), None)
    j = ctx.judgement(index) if index is not None else None
    shares = sample_shares(report, j) if j is not None else []
    return bool(shares) and max(shares) >= TRANSIENT_BEST


def copy_causes(report: "Report", ctx: Context) -> list[Cause]:
    """Causes for a pinned host<->GPU copy below what its path allows, at any size, either direction.

    The large pinned H2D copy is judged against the PCIe model as before (the 0.90 threshold); every
    other pinned copy row (smaller sizes, D2H, imported bandwidthTest/nvbandwidth) through the path
    model's judgement of it (:mod:`gdrdiag.pathmodel.judge`), worst first.
    """
    found = _copy_loss(report, ctx)
    if found is None:
        return []
    r, frac, model_ev = found
    loss = 1 - frac
    size = getattr(r.params, "size_bytes", None)
    measured = [
        f"results[{r.key} size={format_size(size) if size else '?'}] = {r.value:.2f} {r.unit} "
        f"= {frac:.0%} of the model"
    ] + model_ev
    out: list[Cause] = []
    loaded = link_under_load(report, r)
    if loaded is not None:
        raw_now, raw_capable, link_ev = loaded
        share = min(1.0, max(0.0, (1 - raw_now / raw_capable) / loss))
        if share > 0.05:
            out.append(
                Cause(
                    "CAUSE-LINK-DEGRADED",
                    "the GPU link runs below its capable speed/width under load",
                    1.0,
                    share,
                    "measured",
                    loss,
                    tuple(measured + [link_ev]),
                    (),
                    "Reseat the card or riser, check the slot's wiring and bifurcation, the BIOS link "
                    "speed setting and retimers.",
                    "gdrdiag copy-bench --sizes 256M",
                    r.key,
                )
            )
    out += _mps_mrrs(report, r, loss, measured)
    explained = sum(c.explains for c in out)
    rest = max(0.0, 1.0 - explained)
    if ctx.has("IOMMU-TRANSLATED"):
        out.append(
            Cause(
                "CAUSE-IOMMU-TRANSLATION",
                "the IOMMU translates every DMA page of the copy",
                0.5,
                0.5 * rest,
                "inferred",
                loss,
                tuple(measured + [ctx.machine_codes["IOMMU-TRANSLATED"].title]),
                (),
                "Boot with iommu=pt (or intel_iommu=on iommu=pt) so trusted devices bypass translation.",
                "gdrdiag gather-bench --sweep working-set",
                r.key,
            )
        )
    if _came_and_went(report, ctx, r):
        # A machine fact (NUMA node, IOMMU mode, MPS/MRRS) is the same in every sample: it cannot
        # explain a loss the row's best samples do not have (PERF-PATH-UNSTABLE names that one).
        return [c for c in out if c.basis == "measured"]
    strength, numa_for, against = _numa_evidence(r, report)
    out.append(
        Cause(
            "CAUSE-NUMA-PLACEMENT",
            "host buffers may live on a NUMA node far from the GPU",
            strength,
            strength * rest,
            "inferred",
            loss,
            tuple(measured) + numa_for,
            against,
            "Run on the GPU's NUMA node: gdrdiag copy-bench --numa auto (the default) or --numa N "
            "(N = the GPU's numa_node in gdrdiag inspect).",
            "gdrdiag copy-bench --sizes 256M --numa auto",
            r.key,
        )
    )
    return out


def _working_set_rows(results: Iterable[BenchResult]) -> list[tuple[int, BenchResult]]:
    """(working-set bytes, result) rows of a working-set sweep, smallest first.

    gather-bench ``--sweep working-set`` rows, or else imported rows of GPU 0's SMs reading host
    memory at several buffer sizes (nvbandwidth's host_to_device_memcpy_sm with -b), by the path
    fields their importer filled.
    """
    gather, nvb = [], []
    for r in results:
        p = r.params
        if r.status is not Status.OK or not r.value:
            continue
        if isinstance(p, GatherParams) and r.settings.sweep == "working-set" and p.slots and p.stride_bytes:
            gather.append((p.slots * p.stride_bytes, r))
        elif (
            isinstance(p, ImportedParams)
            and p.flow is Flow.H2D
            and p.mover is Mover.SM
            and not p.reverse_load
            and p.size_bytes
            and (p.gpu or 0) == 0
        ):
            nvb.append((p.size_bytes, r))
    return sorted(gather or nvb, key=lambda t: t[0])


def _mib(nbytes: int) -> str:
    return f"{nbytes / MiB:.0f} MiB"


def working_set_cause(report: "Report", ctx: Context) -> list[Cause]:
    """CAUSE-WORKING-SET: gather bandwidth at the largest table below WORKING_SET_KEEPS of the smallest."""
    rows = _working_set_rows(report.results)
    if len(rows) < 3:
        return []
    (_, small), (big_ws, big) = rows[0], rows[-1]
    ratio = big.value / small.value  # type: ignore[operator]
    if ratio >= WORKING_SET_KEEPS:
        return []
    loss = 1 - ratio
    knee = next((ws for ws, r in rows if r.value < WORKING_SET_KEEPS * small.value), big_ws)  # type: ignore[operator]
    pro = [f"{_mib(ws)} table: {r.value:.1f} GB/s" for ws, r in rows]
    pro.append(
        f"falls below {WORKING_SET_KEEPS:.0%} of the smallest table from {_mib(knee)} on; "
        "the PCIe model predicts the same rate at every size (same records, same link)"
    )
    con = []
    strength = 0.7
    if ctx.has("IOMMU-TRANSLATED") or (ctx.machine and ctx.machine.virt.is_vm):
        strength = 0.9
        pro.append(
            f"mechanism (strength {strength:.1f}): DMA is translated here (IOMMU groups of type DMA, "
            "or a VM): every page the GPU touches needs an IOTLB/ATC entry, and a larger table misses more"
        )
    else:
        con.append("no translating IOMMU recorded; NUMA placement or host TLB reach are the other candidates")
    fix = (
        "Back the table with huge pages (fewer translations), use iommu=pt on bare metal, keep the table on "
        "the GPU's NUMA node, or keep the hot working set below the knee."
    )
    kernel = getattr(big.params, "kernel", None)
    nxt = "gdrdiag gather-bench --sweep working-set" + (f" --kernels {kernel}" if kernel else "")
    # The decline is measured and, with the same records on the same link at every size, wholly a
    # working-set effect (explains 1.0); which mechanism (translation reach or NUMA) is the inference.
    return [
        Cause(
            "CAUSE-WORKING-SET",
            "zero-copy read bandwidth falls as the working set grows",
            strength,
            1.0,
            "measured",
            loss,
            tuple(pro),
            tuple(con),
            fix,
            nxt,
            "gather working set",
        )
    ]


def _rerun(r: BenchResult) -> str:
    """The gdrdiag command that runs a failed case again on its own."""
    p = r.params
    size = getattr(p, "size_bytes", None)
    size_arg = f" --size {size}" if size else ""
    if is_mr(r) and r.key.startswith("rdma_write_") and r.params.memory:
        reg = f" --reg {r.params.reg_path}" if r.params.reg_path else ""
        return f"gdrdiag mr-bench --memory {r.params.memory}{reg}{size_arg}"
    if r.key.startswith("copy"):
        return "gdrdiag copy-bench"
    if r.key.startswith("gather"):
        return "gdrdiag gather-bench"
    return "gdrdiag report -o again.json"


def failed_measurements(report: "Report") -> list[Finding]:
    """MEASURE-FAILED (FAIL) for each case that ran and failed; a failed check makes its numbers void."""
    out = []
    for r in report.results:
        if r.status is Status.ERROR or (r.status is Status.OK and r.verified is False):
            out.append(
                Finding(
                    code="MEASURE-FAILED",
                    severity=Severity.FAIL,
                    title=f"{r.key}: the measurement failed ({(r.reason or 'payload check failed')[:120]})",
                    evidence=(
                        ev(f"results[{r.key}].status", r.status.value),
                        ev(f"results[{r.key}].verified", r.verified),
                        ev(f"results[{r.key}].reason", r.reason),
                    ),
                    advice="A failed payload check means bytes arrived wrong: treat every number of this "
                    "path as void until it passes. Re-run the case alone; check dmesg for AER/IOMMU faults.",
                    subject=r.key,
                    basis="measured",
                    next_step=_rerun(r),
                )
            )
    return out


def next_measurements(report: "Report", ctx: Context) -> list[Finding]:
    """MEASURE-NEXT: what is missing to judge the GPU<->NIC path, and the command that measures it."""
    m = report.machine
    rows = ctx.write_rows
    if rows and not any(r.on_gpu for r in rows):
        # host-memory RDMA rows only: the GPU side is what is missing, whether or not a GPU was seen
        cmd = "gdrdiag mr-bench --memory device,pinned --ro-ab --size 1M --qp 4"
        return [
            Finding(
                code="MEASURE-NEXT",
                severity=Severity.INFO,
                title="this Report has host-memory RDMA rows only: the GPU-memory path is not measured",
                evidence=(f"{len(rows)} RDMA bandwidth rows, none into GPU memory",),
                advice=f"Run `{cmd}` on a machine with a GPU (or import ib_write_bw --use_cuda output) and "
                "diagnose again.",
                next_step=cmd,
            )
        ]
    if m is None or not m.gpus or not m.nics:
        return []
    lonely = gpu_rows_without_host(rows)
    if rows and not lonely and any(r.on_gpu for r in rows):
        if any(g.off and g.on for g in ctx.gaps) or not any(g.slow for g in ctx.gaps):
            return []
        missing = "one RO state only: the share relaxed ordering recovers is not measured"
        cmd = "gdrdiag mr-bench --memory device,pinned --ro-ab --size 1M --qp 4"
    elif lonely:
        missing = "GPU-memory rows without a host-memory row of the same run: no yardstick for them"
        cmd = "gdrdiag mr-bench --memory device,pinned --ro-ab --size 1M --qp 4"
    elif any(j.mover is Mover.COLLECTIVE for j in ctx.judgements):
        missing = (
            "NCCL rows but no RDMA WRITE rows: they judge the GPU<->NIC path as a whole, not which part "
            "of it (NIC->GPU writes, relaxed ordering, the registration path) is slow"
        )
        cmd = "gdrdiag mr-bench --matrix"
    else:
        missing = "no RDMA WRITE measurement: the GPU<->NIC path is judged from machine facts only"
        cmd = "gdrdiag mr-bench --matrix"
    return [
        Finding(
            code="MEASURE-NEXT",
            severity=Severity.INFO,
            title=f"this Report has {missing}",
            evidence=(f"{len(rows)} RDMA bandwidth rows ({sum(r.on_gpu for r in rows)} into GPU memory)",),
            advice=f"Run `{cmd}` and diagnose again (or gdrdiag import perftest output with --bundle).",
            next_step=cmd,
        )
    ]


def cause_findings(report: "Report", ctx: Context) -> list[Finding]:
    """The report rule: every cause over every measured loss, failed measurements, what to run next."""
    by_rule = [gap_causes(ctx), _leads(copy_causes(report, ctx)), _leads(working_set_cause(report, ctx))]
    for rule in (
        causes_rdma.RULES
        + causes_path.RULES
        + causes_peer.RULES
        + causes_nccl.RULES
        + causes_ucx.RULES
        + causes_busy.RULES
    ):
        by_rule.append(_leads(rule(report, ctx)))
    causes = [c for found in by_rule for c in found]
    return (
        failed_measurements(report)
        + [c.finding(lead) for c, lead in _one_per_cause(by_rule)]
        + causes_path.unexplained_losses(report, ctx, [c for c, _ in causes])
        + next_measurements(report, ctx)
        + causes_nccl.log_needed(report, ctx)
        + causes_ucx.proto_info_needed(report, ctx)
    )


def _one_per_cause(by_rule: list[list[tuple[Cause, bool]]]) -> list[tuple[Cause, bool]]:
    """One finding per cause: where two rules name the same cause, the stronger one carries both.

    A rule may name one cause on several paths (pageable H2D and D2H): those stay apart. When a
    later rule names a cause an earlier one did (the NCCL GDR A/B and the far-NIC rule), the
    measured, larger-share one stays and carries the other's evidence.
    """
    kept: list[tuple[Cause, bool, int]] = []
    for i, found in enumerate(by_rule):
        for c, lead in found:
            same = [k for k, (d, _, j) in enumerate(kept) if d.code == c.code and j != i]
            if not same:
                kept.append((c, lead, i))
                continue
            k = max(same, key=lambda k: _strength(kept[k][0]))
            d, d_lead, j = kept[k]
            strong, weak = (c, d) if _strength(c) > _strength(d) else (d, c)
            more = tuple(e for e in weak.evidence_for if e not in strong.evidence_for)
            kept[k] = (
                dataclasses.replace(strong, evidence_for=strong.evidence_for + more),
                lead or d_lead,
                j,
            )
    return [(c, lead) for c, lead, _ in kept]


def _strength(c: Cause) -> tuple:
    return (c.basis == "measured", c.explains, c.loss)


def _leads(causes: list[Cause]) -> list[tuple[Cause, bool]]:
    ordered = sorted(causes, key=lambda c: -c.explains)
    return [(c, i == 0) for i, c in enumerate(ordered)]


RULES = [cause_findings]

__all__ = ["RULES", "cause_findings", "reconcile"]
