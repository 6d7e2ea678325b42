"""Cause rules for GPU<->GPU losses that the machine's peer facts explain (inspect's ``machine.peers``).

- ``CAUSE-P2P-VIA-RC``: two GPUs under one PCIe switch (PIX/PXB) whose switch ports have ACS
  redirect on. Every peer request and completion is then forwarded up to the root complex and back
  down (PCIe Base Spec r5.0 sec. 6.12.1.2, "ACS P2P Request Redirect" / "ACS P2P Completion
  Redirect") instead of across the switch, where the root complex's peer-to-peer forwarding, not
  the links, sets the rate. Measured when a row of the same pair reaches its path (ACS off, or
  another run); inferred otherwise.

- ``CAUSE-PEER-SLOWER-THAN-STAGED``: a GPU pair's copy with peer access on runs slower than the same
  copy staged through host memory (P2P enabled slower than disabled, same file or peer-bench run).
  Staging crosses both GPUs' PCIe links twice, so a working peer path is never slower: something on
  the peer path itself throttles it. The candidates are machine facts, ranked by what the bundle
  shows: an IOMMU translating the peer traffic (every peer TLP takes an IOMMU lookup; DMA or DMA-FQ
  group type, Documentation/ABI/testing/sysfs-kernel-iommu_groups), ACS redirect on a port between
  the GPUs (PCIe Base Spec r5.0 sec. 6.12), a BAR1 too small or unassigned (the peer maps the
  destination's memory through its BAR1), and the driver not offering P2P for the pair
  (cuDeviceCanAccessPeer = 0, ``nvidia-smi topo -p2p``). Never "P2P not in effect": it is in effect,
  and slow. Without a bundle the cause lists the hypotheses and the command that decides.

- ``CAUSE-PEER-ACCESS-OFF`` / ``CAUSE-P2P-UNSUPPORTED`` (:func:`peer_paths`): GPU<->GPU losses without
  inspect's peer facts (an imported tool's output): staged copies, or P2P refused (a VM).

Machine facts without a loss stay with :mod:`gdrdiag.diagnose.peer_rules` (``PEER-ACS-REDIRECT``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Optional

from gdrdiag.diagnose.causes import Cause, Context
from gdrdiag.diagnose.causes_path import row_evidence
from gdrdiag.diagnose.peer_rules import imported_peer_rows, redirecting_bridges
from gdrdiag.diagnose.virt_rules import REDIRECT_BITS
from gdrdiag.model.machine import GpuPeerPair, MachineInfo, PathClass
from gdrdiag.model.params import PeerParams
from gdrdiag.model.path import Judgement, Mover, Place, Verdict
from gdrdiag.model.results import BenchResult, Status
from gdrdiag.pathmodel.peer import pair_of
from gdrdiag.pathmodel.rows import to_gbytes_per_s

_STAGED_THROUGH_HOST = "peer access off: the copy is staged through host memory (two PCIe crossings)"


if TYPE_CHECKING:  # pragma: no cover
    from gdrdiag.model.report import Report


def _gpu_pair(j: Judgement) -> Optional[tuple[int, int]]:
    """The row's (source GPU, destination GPU) when it moves bytes between two GPUs by copy engine or SM."""
    if j.source is None or j.destination is None or j.mover not in (Mover.COPY_ENGINE, Mover.SM):
        return None
    if j.source.place is not Place.GPU or j.destination.place is not Place.GPU:
        return None
    if j.source.index is None or j.destination.index is None:
        return None
    return j.source.index, j.destination.index


def peer_acs_redirect(report: "Report", ctx: Context) -> list[Cause]:
    """CAUSE-P2P-VIA-RC for the worst GPU<->GPU loss under one switch with ACS redirect on its path."""
    m = ctx.machine
    if m is None or not m.peers or m.virt.is_vm:
        return []  # in a VM the guest's tree is synthetic: virt_rules speak for the host's ACS
    by_pair = {(p.src_ordinal, p.dst_ordinal): p for p in m.peers}
    candidates: list[tuple[Judgement, GpuPeerPair, list]] = []
    for j in ctx.losses:
        ends = _gpu_pair(j)
        pair = by_pair.get(ends) if ends and j.is_loss else None
        if pair is None or pair.path_class not in (PathClass.PIX, PathClass.PXB):
            continue
        bridges = redirecting_bridges(m, pair)
        if bridges:
            candidates.append((j, pair, bridges))
    if not candidates:
        return []
    worst, pair, bridges = min(candidates, key=lambda c: c[0].ratio or 0)
    unordered = {(pair.src_ordinal, pair.dst_ordinal), (pair.dst_ordinal, pair.src_ordinal)}
    healthy = [
        j for j in ctx.judgements if _gpu_pair(j) in unordered and j.ratio is not None and not j.is_loss
    ]
    pro = [
        row_evidence(worst),
        f"GPU {pair.src_ordinal} and GPU {pair.dst_ordinal} are {pair.path_text}: one switch joins them",
        *(f"pci[{b}].acs.ctl_flags has {'/'.join(bits)}" for b, bits in bridges),
    ]
    if healthy:
        best = max(healthy, key=lambda j: j.ratio or 0)
        pro.append(f"the same pair reaches its path in another run: {row_evidence(best)}")
    share = 1.0 if healthy else 0.8
    names = ", ".join(b for b, _ in bridges)
    return [
        Cause(
            "CAUSE-P2P-VIA-RC",
            f"ACS redirect on {names} sends GPU {pair.src_ordinal} <-> GPU {pair.dst_ordinal} peer "
            "traffic up to the root complex instead of across their switch",
            share,
            share,
            "measured" if healthy else "inferred",
            worst.loss,
            tuple(pro),
            (),
            "Disable ACS redirect on the switch ports between the GPUs (BIOS 'ACS disable', kernel "
            f"pci=disable_acs_redir={names.replace(', ', ';')}, or setpci ECAP_ACS+0x6.w=0000 until "
            "reboot); an active IOMMU driver makes the kernel enable redirect (pci_request_acs in "
            "drivers/pci/pci.c), and iommu=pt alone does not clear it.",
            "gdrdiag inspect",
            subject=worst.key,
        )
    ]


COLLECT = "gdrdiag collect -o node.tar.gz"
HYPOTHESES = (
    "an IOMMU translating peer traffic",
    "ACS redirect on a port between the GPUs",
    "a BAR1 too small or unassigned",
    "P2P not supported by the driver for this pair",
)


def _gbs(r: BenchResult) -> float:
    return to_gbytes_per_s(float(r.value or 0), r.unit) or 0.0


def _ab_pairs(results: tuple[BenchResult, ...]) -> list[tuple[BenchResult, BenchResult, int, int]]:
    """(peer-access-on row, its staged row, source GPU, destination GPU) for every measured A/B.

    Imported: the same file, test and data flow (a read row pulls the column's memory); peer-bench:
    ``peer_ce_on`` beside ``peer_ce_off`` (and both ways) at the same size.
    """
    out: list[tuple[BenchResult, BenchResult, int, int]] = []
    off: dict[tuple, BenchResult] = {}
    for r in imported_peer_rows(results, False):
        p = r.params
        off[(p.tool, p.source_file, p.test, p.gpu, p.peer_gpu)] = r
    for r in imported_peer_rows(results, True):
        p = r.params
        test = p.test or ""
        src, dst = (p.peer_gpu, p.gpu) if test.endswith("_read") else (p.gpu, p.peer_gpu)
        staged = off.get((p.tool, p.source_file, test.removesuffix("_read"), src, dst))
        if staged is not None and src is not None and dst is not None:
            out.append((r, staged, src, dst))
    bench: dict[tuple, BenchResult] = {}
    for row in results:
        q = row.params
        if (
            isinstance(q, PeerParams)
            and row.status is Status.OK
            and row.value
            and row.key.startswith("peer_ce_")
        ):
            bench[(row.key, q.src_gpu, q.dst_gpu, q.size_bytes)] = row
    for (key, src, dst, size), row in bench.items():
        staged = (
            bench.get((key.removesuffix("_on") + "_off", src, dst, size)) if key.endswith("_on") else None
        )
        if staged is not None and src is not None and dst is not None:
            out.append((row, staged, src, dst))
    return out


def _facts(m: MachineInfo, pair: Optional[GpuPeerPair]) -> tuple[list[str], list[str], list[str]]:
    """(facts that fit, facts checked and clear, hypotheses the machine facts leave open) for a pair."""
    fit: list[str] = []
    clear: list[str] = []
    open_: list[str] = []
    bdfs = [b for b in ((pair.src_bdf, pair.dst_bdf) if pair else ()) if b]
    types = {b: (f.iommu_group_type if (f := m.function(b)) else None) for b in bdfs}
    translated = [b for b, t in types.items() if t in ("DMA", "DMA-FQ")]
    if translated:
        fit.append(
            "IOMMU translating peer traffic: "
            + ", ".join(f"pci[{b}].iommu_group_type = {types[b]}" for b in translated)
        )
    elif m.virt.iommu_mode == "translated":
        fit.append("IOMMU translating peer traffic: virt.iommu_mode = translated")
    elif m.virt.iommu_mode in ("off", "passthrough") or any(types.values()):
        clear.append(f"no IOMMU translation (virt.iommu_mode = {m.virt.iommu_mode})")
    else:
        open_.append(HYPOTHESES[0])
    ports = [
        (b, tuple(x for x in REDIRECT_BITS if x in f.acs.ctl_flags))
        for b in (pair.bridges if pair else ())
        if (f := m.function(b)) is not None and f.acs is not None
    ]
    redirect = [(b, bits) for b, bits in ports if bits]
    if redirect:
        fit.append(
            "ACS redirect between the GPUs: "
            + ", ".join(f"pci[{b}].acs.ctl_flags has {'/'.join(x)}" for b, x in redirect)
        )
    elif ports:
        clear.append(f"no ACS redirect on the {len(ports)} port(s) between the GPUs")
    else:
        open_.append(HYPOTHESES[1] + (" (a VM's guest sees no host ports)" if m.virt.is_vm else ""))
    gpus = [g for g in m.gpus if g.bdf in bdfs]
    bar = []
    for g in gpus:
        size = g.nvml_bar1_total * 1024 * 1024 if g.nvml_bar1_total else g.bar1_bytes
        if size == 0:
            bar.append(f"gpus[{g.bdf}].bar1_bytes = 0 (BAR1 unassigned)")
        elif size and g.total_memory and size < g.total_memory:
            bar.append(f"gpus[{g.bdf}] BAR1 {size >> 20} MiB < memory {g.total_memory >> 20} MiB")
    if bar:
        fit.append("BAR1 too small or unassigned: " + "; ".join(bar))
    elif gpus and all((g.nvml_bar1_total or g.bar1_bytes) for g in gpus):
        clear.append("BAR1 covers each GPU's memory")
    else:
        open_.append(HYPOTHESES[2])
    if pair is None or pair.can_access_peer is None:
        open_.append(HYPOTHESES[3])
    elif pair.can_access_peer is False or pair.access_supported is False:
        where = f"machine.peers[{pair.src_ordinal}->{pair.dst_ordinal}]"
        fit.append(f"P2P not supported by the driver: {where}.can_access_peer = {pair.can_access_peer}")
    else:
        bad = {k: v for k, v in pair.nvml_p2p.items() if v != "OK"}
        if bad:
            fit.append(f"P2P refused by the driver for this pair: nvidia-smi topo -p2p {bad}")
        else:
            clear.append("the driver offers P2P for this pair (cuDeviceCanAccessPeer = 1)")
    return fit, clear, open_


def peer_slower_than_staged(report: "Report", ctx: Context) -> list[Cause]:
    """CAUSE-PEER-SLOWER-THAN-STAGED: peer access on slower than staged through host, per worst pair."""
    slow = [(on, off, s, d) for on, off, s, d in _ab_pairs(report.results) if _gbs(on) < _gbs(off)]
    if not slow:
        return []
    on, off, src, dst = min(slow, key=lambda x: _gbs(x[0]) / _gbs(x[1]))
    m = ctx.machine
    judged = {j.index: j for j in ctx.judgements}
    index = next((i for i, r in enumerate(report.results) if r is on), None)
    j = judged.get(index) if index is not None else None
    loss = j.loss if j is not None and j.loss else 1 - _gbs(on) / _gbs(off)
    pro = [
        f"results[{on.key} {src}->{dst}] = {_gbs(on):.1f} GB/s with peer access on",
        f"results[{off.key} {src}->{dst}] = {_gbs(off):.1f} GB/s staged through host memory",
        f"{len(slow)} row(s) where peer access on is slower than staged",
    ]
    if j is not None and j.ratio is not None:
        pro.append(row_evidence(j))
    what = f"GPU {src} -> {dst}: copies with peer access on run slower than staged through host memory"
    if m is None or not m.gpus:
        return [
            Cause(
                "CAUSE-PEER-SLOWER-THAN-STAGED",
                f"{what}; the peer path itself is throttled (hypotheses: {'; '.join(HYPOTHESES)})",
                0.5,
                0.5,
                "inferred",
                loss,
                (*pro, "no machine facts: run the next step on that machine to tell the hypotheses apart"),
                (),
                "Collect the machine's facts where the test ran and import again with --bundle: the IOMMU "
                "mode, the ACS bits of every port between the GPUs, each GPU's BAR1 and the driver's P2P "
                "verdict decide which one it is.",
                COLLECT,
                subject=on.key,
            )
        ]
    fit, clear, open_ = _facts(m, pair_of(m, src, dst))
    share = 0.9 if fit else 0.5
    lead = fit[0].split(":")[0] if fit else "a fact this bundle does not show"
    return [
        Cause(
            "CAUSE-PEER-SLOWER-THAN-STAGED",
            f"{what}: {lead}",
            share,
            share,
            "measured" if fit else "inferred",
            loss,
            (*fit, *pro, *(f"not ruled out (no fact in the bundle): {h}" for h in open_)),
            tuple(clear),
            "Fix the fact named first: IOMMU translating peer traffic -> iommu=pt (or the IOMMU off) on "
            "the host; ACS redirect -> disable it on the ports between the GPUs (BIOS, "
            "pci=disable_acs_redir=); BAR1 -> enable Resizable BAR / large BAR1 in the BIOS; P2P "
            "unsupported -> `nvidia-smi topo -p2p rw` names the reason. Until then, leave peer access "
            "off for this pair (NCCL_P2P_LEVEL) so copies take the faster staged path.",
            "gdrdiag inspect" if fit or not open_ else COLLECT,
            subject=on.key,
        )
    ]


def _staged_faster(report: "Report", peer: list[Judgement], worst: Judgement) -> bool:
    """True when a staged (peer access off) row of the same GPU pair moved more than ``worst``."""
    pair = {worst.source.index, worst.destination.index}  # type: ignore[union-attr]
    return any(
        getattr(report.results[j.index].params, "peer_access", None) is False
        and {j.source.index, j.destination.index} == pair  # type: ignore[union-attr]
        and (j.measured_gbytes_per_s or 0.0) > (worst.measured_gbytes_per_s or 0.0)
        for j in peer
    )


def _same_output(report: "Report", params: object, rows: list[Judgement]) -> bool:
    """True when ``rows`` come from the output ``params``' row came from.

    An imported output that measured peer access off beside on (p2pBandwidthLatencyTest's
    P2P=Disabled matrices) holds both: its own enabled rows show the path healthy.
    """
    source = getattr(params, "source_file", None)
    return source is not None and any(
        getattr(report.results[j.index].params, "source_file", None) == source for j in rows
    )


def peer_paths(report: "Report", ctx: Context) -> list[Cause]:
    """CAUSE-PEER-ACCESS-OFF / CAUSE-P2P-UNSUPPORTED for GPU<->GPU losses."""
    if ctx.machine is not None and ctx.machine.peers:
        return []  # with inspect's peer facts, diagnose/peer_rules.py owns GPU<->GPU findings
    peer = [
        j
        for j in ctx.judgements
        if j.source
        and j.destination
        and j.source.place is Place.GPU
        and j.destination.place is Place.GPU
        and j.ratio is not None
        and j.mover in (Mover.COPY_ENGINE, Mover.SM)
    ]
    losses = [j for j in peer if j.is_loss]
    if not losses:
        return []
    worst = min(losses, key=lambda j: j.ratio or 0)
    p = report.results[worst.index].params
    access = getattr(p, "peer_access", None)
    healthy_on = [
        j for j in peer if not j.is_loss and getattr(report.results[j.index].params, "peer_access", None)
    ]
    if access and _staged_faster(report, peer, worst):
        return []  # peer access was in effect and lost to staging: CAUSE-PEER-SLOWER-THAN-STAGED owns it
    m = ctx.machine
    vm = bool(m and m.virt.is_vm)
    if access is False and not vm:
        design = (
            "the tool measures peer access off beside on; the enabled rows are healthy"
            if _same_output(report, p, healthy_on)
            else ""
        )
        pro = [row_evidence(worst), _STAGED_THROUGH_HOST]
        if healthy_on:
            pro.append(f"with peer access on: {row_evidence(max(healthy_on, key=lambda j: j.ratio or 0))}")
        share = 1.0 if healthy_on else 0.8
        return [
            Cause(
                "CAUSE-PEER-ACCESS-OFF",
                "GPU<->GPU copies run without peer access (staged through host memory)",
                share,
                share,
                "measured" if healthy_on else "inferred",
                worst.loss,
                tuple(pro),
                (),
                "Enable peer access (cudaDeviceEnablePeerAccess / cuCtxEnablePeerAccess both ways) "
                "before the copies; "
                "in frameworks check NCCL_P2P_DISABLE / NCCL_P2P_LEVEL and the framework's P2P setting.",
                "gdrdiag peer-bench",
                subject=worst.key,
                by_design=design,
            )
        ]
    if not vm and worst.verdict is not Verdict.LOST:
        return []  # slow but not staged-slow: a narrower or busier path, not P2P refused
    pro = [row_evidence(worst)]
    if vm:
        pro.append("VM: the hypervisor decides whether passed-through GPUs may reach each other peer to peer")
    if healthy_on:
        pro.append(f"where P2P was allowed: {row_evidence(max(healthy_on, key=lambda j: j.ratio or 0))}")
    share = 1.0 if healthy_on else (0.7 if vm else 0.6)
    return [
        Cause(
            "CAUSE-P2P-UNSUPPORTED",
            "GPU<->GPU peer copies run at staged speed: P2P is not in effect on this platform",
            share,
            share,
            "measured" if healthy_on else "inferred",
            worst.loss,
            tuple(pro),
            (),
            "Check cudaDeviceCanAccessPeer / nvidia-smi topo -p2p r; in a VM pass the GPUs with P2P allowed "
            "(e.g. QEMU x-nv-gpudirect-clique, or one IOMMU group / ACS off on the host); on bare metal "
            "check ACS on the switch ports and the BIOS.",
            "nvidia-smi topo -p2p r",
            subject=worst.key,
        )
    ]


RULES = (peer_paths, peer_acs_redirect, peer_slower_than_staged)
