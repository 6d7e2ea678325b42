"""Diagnose: an ordered registry of pure rules from facts to ``Finding``s.

Two kinds of rule, both pure (they never touch hardware, so every rule is tested from saved
machines and Reports):

- *machine rules* ``(MachineInfo) -> Iterable[Finding]``, listed in ``MACHINE_RULES`` in the
  order PCIe, virtualization/isolation, GPUDirect, relaxed ordering;
- *report rules* ``(Report) -> Iterable[Finding]`` in ``RULES``. The first one runs the
  machine rules over ``report.machine``; bench-result rules are added with
  :func:`register` (or by appending a module's ``RULES`` to this list).

Findings come back ranked: a failed measurement first, then FAIL, WARN, INFO; within a severity
the cause findings (``CAUSE-*``, :mod:`gdrdiag.diagnose.causes`) by the share of the measured loss
they explain, measured before inferred, then the rest in rule order. Before ranking, machine
inferences that a measurement contradicts or a cause finding weighs are demoted
(:func:`gdrdiag.diagnose.causes.reconcile`). Every finding's ``reference`` is set from the
catalogue (:mod:`gdrdiag.diagnose.catalogue`), so it points into docs/kb/ and public sources. A rule
that raises on odd data becomes one ``DIAG-RULE-ERROR`` finding instead of taking inspect down.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Iterable

from gdrdiag.diagnose import gdr_rules, pcie_rules, peer_rules, ro_rules, virt_rules
from gdrdiag.model.findings import Finding, Severity
from gdrdiag.model.machine import MachineInfo

if TYPE_CHECKING:  # pragma: no cover
    from gdrdiag.model.report import Report

MachineRule = Callable[[MachineInfo], Iterable[Finding]]
ReportRule = Callable[["Report"], Iterable[Finding]]

MACHINE_RULES: list[MachineRule] = [*pcie_rules.RULES, *virt_rules.RULES, *gdr_rules.RULES, *ro_rules.RULES]
MACHINE_RULES += peer_rules.MACHINE_RULES  # GPU<->GPU (issue 21)


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


def _order(f: Finding) -> tuple:
    """Failed measurements first; then severity; then the share of a measured loss explained."""
    return (
        0 if f.code == "MEASURE-FAILED" else 1,
        f.severity.rank,
        -(f.explains if f.explains is not None else -1.0),
        0 if f.basis == "measured" else 1,
    )


def rank(findings: Iterable[Finding]) -> list[Finding]:
    """Ranked as the module says; stable otherwise; exact duplicates dropped."""
    seen: set = set()
    unique = []
    for f in findings:
        key = (f.code, f.subject, f.title)
        if key not in seen:
            seen.add(key)
            unique.append(f)
    return sorted(unique, key=_order)


def diagnose_machine(machine: MachineInfo) -> list[Finding]:
    """Every machine rule over one machine, ranked."""
    out: list[Finding] = []
    for rule in MACHINE_RULES:
        out.extend(_run(rule, machine))
    from gdrdiag.diagnose.catalogue import with_reference

    return rank(with_reference(f) for f in out)


def _machine_findings(report: "Report") -> Iterable[Finding]:
    return diagnose_machine(report.machine) if report.machine is not None else []


def _bench_rules() -> list[ReportRule]:
    # Rules over measured results, owned by each bench's module; imported here so that one
    # ``diagnose(report)`` runs everything.
    from gdrdiag.diagnose import causes_host, copy_rules, gather_rules, rdma_rules

    return [
        *copy_rules.RULES,
        *gather_rules.RULES,
        rdma_rules.report_rule,
        *causes_host.RULES,
        *peer_rules.RULES,
    ]


RULES: list[ReportRule] = [_machine_findings, *_bench_rules()]


def register(rule: ReportRule) -> ReportRule:
    """Add a report rule (usable as a decorator); it runs after the ones already listed."""
    RULES.append(rule)
    return rule


def diagnose(report: "Report") -> list[Finding]:
    """Every report rule over a Report (machine facts and bench results), ranked."""
    from gdrdiag.diagnose.catalogue import with_reference
    from gdrdiag.diagnose.causes import reconcile

    out: list[Finding] = []
    for rule in RULES:
        out.extend(_run(rule, report))
    return rank(with_reference(f) for f in reconcile(out))


def worst(findings: Iterable[Finding]) -> Severity | None:
    """The most severe finding's severity, or None when there are none."""
    fs = list(findings)
    return min((f.severity for f in fs), key=lambda s: s.rank) if fs else None
