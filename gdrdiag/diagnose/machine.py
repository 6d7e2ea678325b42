"""The machine rules: facts about one machine (no measurement) -> ranked findings.

Rules run in the order PCIe, virtualization/isolation, GPUDirect, relaxed ordering, GPU<->GPU,
inventory. A rule that
raises on odd data becomes one ``DIAG-RULE-ERROR`` finding instead of taking inspect down. Every
finding's ``reference`` is set from the catalogue (:mod:`gdrdiag.diagnose.catalogue`).
"""

from __future__ import annotations

from typing import Callable, Iterable

from gdrdiag.diagnose import gdr_rules, inventory_rules, pcie_rules, peer_rules, ro_rules, virt_rules
from gdrdiag.diagnose.catalogue import with_reference
from gdrdiag.diagnose.ranking import rank
from gdrdiag.model.findings import Finding, Severity
from gdrdiag.model.machine import MachineInfo

MachineRule = Callable[[MachineInfo], Iterable[Finding]]

MACHINE_RULES: list[MachineRule] = [
    *pcie_rules.RULES,
    *virt_rules.RULES,
    *gdr_rules.RULES,
    *ro_rules.RULES,
    *peer_rules.MACHINE_RULES,  # GPU<->GPU
    *inventory_rules.RULES,  # GPUs on the bus against those CUDA/NVML see; NVLinks per GPU
]


def rule_error(rule: Callable, exc: Exception) -> Finding:
    """The DIAG-RULE-ERROR finding for a rule (or the path model) that raised on this input."""
    return Finding(
        code="DIAG-RULE-ERROR",
        severity=Severity.WARN,
        title=f"rule {getattr(rule, '__name__', rule)} failed on this input",
        evidence=(f"{type(exc).__name__}: {exc}"[:200],),
        advice="Please report this with the bundle (gdrdiag collect).",
    )


def run_rule(rule: Callable, *args: object) -> list[Finding]:
    """The rule's findings, or one DIAG-RULE-ERROR when it raises (a rule bug must not hide the others)."""
    try:
        return list(rule(*args))
    except Exception as exc:
        return [rule_error(rule, exc)]


def diagnose_machine(machine: MachineInfo) -> list[Finding]:
    """Every machine rule over one machine, ranked."""
    out: list[Finding] = []
    for rule in MACHINE_RULES:
        out.extend(run_rule(rule, machine))
    return rank(with_reference(f) for f in out)
