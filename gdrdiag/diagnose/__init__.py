"""Diagnose: an ordered registry of pure rules from facts to ``Finding``s.

Two kinds of rule, both pure (they never touch hardware, so every rule is tested from saved
machines and Reports):

- *machine rules* ``(MachineInfo) -> Iterable[Finding]``, listed in ``MACHINE_RULES`` in the
  order PCIe, virtualization/isolation, GPUDirect, relaxed ordering;
- *report rules* ``(Report) -> Iterable[Finding]`` in ``RULES``. The first one runs the
  machine rules over ``report.machine``; bench-result rules are added with
  :func:`register` (or by appending a module's ``RULES`` to this list).

Findings come back ranked FAIL, WARN, INFO, then in rule order. A rule that raises on odd
data becomes one ``DIAG-RULE-ERROR`` finding instead of taking inspect down.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Iterable

from gdrdiag.diagnose import gdr_rules, pcie_rules, ro_rules, virt_rules
from gdrdiag.model.findings import Finding, Severity
from gdrdiag.model.machine import MachineInfo

if TYPE_CHECKING:  # pragma: no cover
    from gdrdiag.model.report import Report

MachineRule = Callable[[MachineInfo], Iterable[Finding]]
ReportRule = Callable[["Report"], Iterable[Finding]]

MACHINE_RULES: list[MachineRule] = [*pcie_rules.RULES, *virt_rules.RULES, *gdr_rules.RULES, *ro_rules.RULES]


def _run(rule: Callable, arg: object) -> list[Finding]:
    try:
        return list(rule(arg))
    except Exception as exc:  # a rule bug must not hide the other findings
        return [
            Finding(
                code="DIAG-RULE-ERROR",
                severity=Severity.WARN,
                title=f"rule {getattr(rule, '__name__', rule)} failed on this input",
                evidence=(f"{type(exc).__name__}: {exc}"[:200],),
                advice="Please report this with the bundle (gdrdiag collect).",
            )
        ]


def rank(findings: Iterable[Finding]) -> list[Finding]:
    """FAIL first, then WARN, then INFO; stable within a severity; exact duplicates dropped."""
    seen: set = set()
    unique = []
    for f in findings:
        key = (f.code, f.subject, f.title)
        if key not in seen:
            seen.add(key)
            unique.append(f)
    return sorted(unique, key=lambda f: f.severity.rank)


def diagnose_machine(machine: MachineInfo) -> list[Finding]:
    """Every machine rule over one machine, ranked."""
    out: list[Finding] = []
    for rule in MACHINE_RULES:
        out.extend(_run(rule, machine))
    return rank(out)


def _machine_findings(report: "Report") -> Iterable[Finding]:
    return diagnose_machine(report.machine) if report.machine is not None else []


def _bench_rules() -> list[ReportRule]:
    # Rules over measured results, owned by each bench's module; imported here so that one
    # ``diagnose(report)`` runs everything.
    from gdrdiag.diagnose import copy_rules, gather_rules, rdma_rules

    return [*copy_rules.RULES, *gather_rules.RULES, rdma_rules.report_rule]


RULES: list[ReportRule] = [_machine_findings, *_bench_rules()]


def register(rule: ReportRule) -> ReportRule:
    """Add a report rule (usable as a decorator); it runs after the ones already listed."""
    RULES.append(rule)
    return rule


def diagnose(report: "Report") -> list[Finding]:
    """Every report rule over a Report (machine facts and bench results), ranked."""
    out: list[Finding] = []
    for rule in RULES:
        out.extend(_run(rule, report))
    return rank(out)


def worst(findings: Iterable[Finding]) -> Severity | None:
    """The most severe finding's severity, or None when there are none."""
    fs = list(findings)
    return min((f.severity for f in fs), key=lambda s: s.rank) if fs else None
