"""Diagnose: an ordered registry of pure rules from facts to ``Finding``s.

Two kinds of rule, both pure (they never touch hardware, so every rule is tested from saved
machines and Reports):

- *machine rules* ``(MachineInfo) -> Iterable[Finding]``, listed in ``MACHINE_RULES`` in the
  order PCIe, virtualization/isolation, GPUDirect, relaxed ordering;
- *report rules* ``(Report, Context) -> Iterable[Finding]`` in ``RULES``. The first one reports the
  machine rules' findings over ``report.machine``; bench-result rules are added with
  :func:`register` (or by appending a module's ``RULES`` to this list).

The :class:`~gdrdiag.diagnose.context.Context` is built once per call: the machine rules run once,
and the path model (:mod:`gdrdiag.pathmodel`) judges every numeric row once. Every rule reads those
judgements; :func:`diagnose` returns them beside the findings (a
:class:`~gdrdiag.model.diagnosis.Diagnosis`), so a caller that shows the rows table never judges
again, and nothing is remembered between calls.

Findings come back ranked (:mod:`gdrdiag.diagnose.ranking`): a failed measurement first, then the
causes of measured losses, then measured symptoms, then causes of losses built into a measurement,
then machine facts; within each by severity and the share of the loss explained. Before ranking, machine
inferences that a measurement contradicts or a cause finding weighs are demoted
(:func:`gdrdiag.diagnose.causes.reconcile`). Every finding's ``reference`` is set from the
catalogue (:mod:`gdrdiag.diagnose.catalogue`), so it points into docs/kb/ and public sources. A rule
that raises on odd data becomes one ``DIAG-RULE-ERROR`` finding instead of taking inspect down.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Iterable

from gdrdiag.diagnose import (
    causes_host,
    causes_nccl,
    copy_rules,
    gather_rules,
    nic_outliers,
    node_rules,
    pair_outliers,
    peer_rules,
    rdma_rules,
)
from gdrdiag.diagnose.catalogue import with_reference
from gdrdiag.diagnose.causes import context, reconcile
from gdrdiag.diagnose.context import Context
from gdrdiag.diagnose.machine import MACHINE_RULES, diagnose_machine, run_rule
from gdrdiag.diagnose.ranking import rank
from gdrdiag.model.diagnosis import Diagnosis
from gdrdiag.model.findings import Finding, Severity

if TYPE_CHECKING:  # pragma: no cover
    from gdrdiag.model.report import Report

ReportRule = Callable[["Report", Context], Iterable[Finding]]


def _machine_findings(report: "Report", ctx: Context) -> Iterable[Finding]:
    """The machine rules' findings over ``report.machine`` (run once, when the Context was built)."""
    return ctx.machine_findings


# Rules over measured results, owned by each bench's module, then the cause model over all of them.
RULES: list[ReportRule] = [
    _machine_findings,
    *copy_rules.RULES,
    *gather_rules.RULES,
    rdma_rules.report_rule,
    *peer_rules.RULES,
    *node_rules.RULES,  # a GPU slower than its siblings at the same case (--gpus)
    *pair_outliers.RULES,  # an ordered GPU pair slower than the node's other pairs
    *nic_outliers.RULES,  # an RDMA device slower than the node's other NICs at the same mr-bench case
    *causes_host.RULES,
    causes_nccl.log_facts,  # an NCCL INFO log imported alone: its facts, no loss to explain
]


def register(rule: ReportRule) -> ReportRule:
    """Add a report rule (usable as a decorator); it runs after the ones already listed."""
    RULES.append(rule)
    return rule


def diagnose(report: "Report") -> Diagnosis:
    """Every report rule over a Report (machine facts and bench results), and its rows judged.

    The findings come back ranked, with the path model's judgement of every numeric row beside
    them: both from one Context built once for this call.
    """
    ctx, out = context(report)
    for rule in RULES:
        out.extend(run_rule(rule, report, ctx))
    findings = rank(with_reference(f) for f in reconcile(out, report.interrupted))
    return Diagnosis(findings=tuple(findings), judgements=ctx.judgements)


def worst(findings: Iterable[Finding]) -> Severity | None:
    """The most severe finding's severity, or None when there are none."""
    fs = list(findings)
    return min((f.severity for f in fs), key=lambda s: s.rank) if fs else None


__all__ = [
    "MACHINE_RULES",
    "RULES",
    "Context",
    "Diagnosis",
    "context",
    "diagnose",
    "diagnose_machine",
    "rank",
    "register",
    "worst",
]
