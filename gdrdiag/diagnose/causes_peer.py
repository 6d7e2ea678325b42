"""Cause rules for GPU<->GPU losses that the machine's peer facts explain (inspect's ``machine.peers``).

- ``CAUSE-P2P-VIA-RC``: two GPUs under one PCIe switch (PIX/PXB) whose switch ports have ACS
  redirect on. Every peer request and completion is then forwarded up to the root complex and back
  down (PCIe Base Spec r5.0 sec. 6.12.1.2, "ACS P2P Request Redirect" / "ACS P2P Completion
  Redirect") instead of across the switch, where the root complex's peer-to-peer forwarding, not
  the links, sets the rate. Measured when a row of the same pair reaches its path (ACS off, or
  another run); inferred otherwise.

Machine facts without a loss stay with :mod:`gdrdiag.diagnose.peer_rules` (``PEER-ACS-REDIRECT``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Optional

from gdrdiag.diagnose.causes import Cause, Context
from gdrdiag.diagnose.causes_path import row_evidence
from gdrdiag.diagnose.peer_rules import redirecting_bridges
from gdrdiag.model.machine import GpuPeerPair, PathClass
from gdrdiag.model.path import Judgement, Mover, Place

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


RULES = (peer_acs_redirect,)
