"""Every public case leads with the cause its thread concluded (issue 20).

A case is one real thread (tests/cases/*.toml: URL, numbers as posted, machine as stated); the Report
built from it is diagnosed as `gdrdiag diagnose` would. ``HEALTHY`` cases must have no WARN or FAIL.
Every case must lead: there is no list of known misses.
"""

from __future__ import annotations

import pytest

from gdrdiag.diagnose import diagnose
from gdrdiag.model.findings import Severity
from gdrdiag.pathmodel.judge import judge
from tests.cases.casefile import all_cases

CASES = {c.name: c for c in all_cases()}


def _check(name: str) -> None:
    case = CASES[name]
    findings = diagnose(case.report).findings
    if case.cause == "HEALTHY":
        loud = [(f.code, f.title) for f in findings if f.severity in (Severity.FAIL, Severity.WARN)]
        assert not loud, (case.url, loud)
    else:
        assert findings and findings[0].code == case.cause, (
            case.url,
            [(f.code, f.severity.value, f.title[:80]) for f in findings[:3]],
        )


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_threads_cause_leads(name):
    _check(name)


def test_the_corpus_is_large_and_covers_the_causes():
    causes = {c.cause for c in CASES.values()}
    assert len(CASES) >= 40
    assert {"HEALTHY", "CAUSE-PAGEABLE-MEMORY", "CAUSE-NO-PEER-MEMORY", "CAUSE-LINK-DEGRADED"} <= causes


@pytest.mark.parametrize("name", sorted(CASES))
def test_every_numeric_row_is_judged_or_says_why(name):
    case = CASES[name]
    judged = judge(case.report.results, case.report.machine)
    assert len(judged) == len([r for r in case.report.results if r.value is not None])
    for j in judged:
        assert j.ratio is not None or j.reason, (case.url, j.label)


def test_docs_list_every_case_with_its_verdict():
    from pathlib import Path

    from tests.cases.corpus_doc import updated

    doc = Path(__file__).resolve().parents[2] / "docs" / "diagnosis.md"
    text = doc.read_text()
    assert updated(text) == text, "docs/diagnosis.md is stale: run python scripts/make_docs.py"
