"""The input every report rule reads: one Context per diagnose call (built by ``causes.context``).

A leaf of ``diagnose/`` (it imports the model and the evidence rows only), so that bench rules and
cause rules alike can take it without an import cycle.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from gdrdiag.diagnose.evidence import GdrGap, WriteRow
from gdrdiag.model.findings import Finding
from gdrdiag.model.machine import MachineInfo
from gdrdiag.model.path import Judgement

RO_FIX_KERNEL = (6, 4)  # mlx5 honours IBV_ACCESS_RELAXED_ORDERING on VFs from Linux 6.4


@dataclass(frozen=True)
class Context:
    """What every report rule may read, built once per diagnose call.

    The machine, its rule findings (``machine_findings``, ranked; ``machine_codes`` the first of each
    code), the Report's RDMA bandwidth rows (``write_rows``) and the measured NIC->GPU gaps made of
    them, and the path model's judgement of every numeric row: the one yardstick, so no rule divides
    by a figure of its own and nothing is derived twice.
    """

    machine: Optional[MachineInfo]
    machine_codes: dict[str, Finding]
    gaps: tuple[GdrGap, ...]
    judgements: tuple[Judgement, ...] = ()  # every numeric row against its path (gdrdiag.pathmodel.judge)
    losses: tuple[Judgement, ...] = ()  # the judgements that are losses (most rules look at these only)
    machine_findings: tuple[Finding, ...] = ()  # every machine rule's finding, ranked
    by_index: dict[int, Judgement] = field(default_factory=dict, compare=False)  # judgements by row index
    write_rows: tuple[WriteRow, ...] = ()  # every OK RDMA bandwidth row (evidence.write_rows)

    def judgement(self, index: int) -> Optional[Judgement]:
        """The judgement of ``report.results[index]`` (None: not a numeric row)."""
        return self.by_index.get(index)

    def has(self, code: str) -> bool:
        """True when a machine rule emitted ``code``."""
        return code in self.machine_codes

    @property
    def is_vm(self) -> Optional[bool]:
        """The machine's VM verdict (None when unknown or no machine)."""
        return self.machine.virt.is_vm if self.machine else None

    def vf_nics(self) -> list[str]:
        """Names of RDMA devices that are SR-IOV VFs."""
        return [n.name for n in self.machine.nics if n.is_vf] if self.machine else []

    def ro_off_pfs(self) -> list[str]:
        """Addresses of the NICs' PFs whose DevCtl Enable Relaxed Ordering bit is off.

        A VF's own bit is RsvdP (PCIe Base Spec r5.0 9.3.5.4), so a VF emits RO writes only when its
        PF's bit is set: the PF of a VF NIC (its physfn link on the host, the NIC's recorded PF
        address otherwise) is judged, and a PF NIC by its own bit.
        """
        m = self.machine
        if m is None:
            return []
        out: list[str] = []
        for n in m.nics:
            f = m.function(n.bdf) if n.bdf else None
            is_vf = f.is_vf if f is not None and f.is_vf is not None else n.is_vf
            bdf = ((f.physfn if f else None) or n.pf_bdf) if is_vf else n.bdf
            pf = m.function(bdf) if bdf else None
            if pf is not None and pf.pcie is not None and not pf.pcie.relaxed_ordering and pf.bdf not in out:
                out.append(pf.bdf)
        return out

    def kernel_honours_vf_ro(self) -> Optional[bool]:
        """Whether the kernel passes IBV_ACCESS_RELAXED_ORDERING on to a VF's writes (None: unknown).

        mlx5 gated RO on the function's own DevCtl bit before Linux 6.4, and that bit is RsvdP
        (reads 0) on a VF (PCIe Base Spec r5.0 9.3.5.4); out-of-tree mlx5 (MLNX_OFED/DOCA) may
        carry the backport, so it is "unknown" rather than "no".
        """
        if self.machine is None:
            return None
        k = self.machine.kernel
        if not k.version_tuple:
            return None
        if tuple(k.version_tuple[:2]) >= RO_FIX_KERNEL:
            return True
        return None if k.mlx5_out_of_tree else False
