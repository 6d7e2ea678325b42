"""What one diagnose call concludes about a Report: ranked findings and every row's judgement.

Both come from one pass (``gdrdiag.diagnose.diagnose``): the path model judges the Report's rows
once, the rules read those judgements, and the caller that shows the rows table reads the same
ones. Nothing of it is stored in a saved Report beyond the findings: re-diagnosing an old Report
uses today's rules and model.
"""

from __future__ import annotations

from dataclasses import dataclass

from gdrdiag.model.findings import Finding
from gdrdiag.model.path import Judgement


@dataclass(frozen=True)
class Diagnosis:
    """The findings, ranked (cause of a measured loss first), and one Judgement per numeric row.

    ``judgements`` are in the order of ``report.results`` (each names its row by ``index``);
    a row the model cannot judge is there too, with its reason.
    """

    findings: tuple[Finding, ...] = ()
    judgements: tuple[Judgement, ...] = ()
