"""One row, one yardstick: every judged number's expectation comes from the one path model.

Over every saved Report of tests/fixtures/reports/: ``diagnose`` returns the path model's own
judgements (:func:`gdrdiag.pathmodel.judge`, nothing else), every ratio is measured / expected, and
no finding's evidence quotes an expected GB/s that is not one of those judgements' expected values.
Diagnosing twice gives equal results, computed afresh (nothing remembered between calls).
"""

from __future__ import annotations

import dataclasses
import importlib
import re
from pathlib import Path

import pytest

from gdrdiag.diagnose import diagnose
from gdrdiag.model.diagnosis import Diagnosis
from gdrdiag.model.report import Report
from gdrdiag.pathmodel import judge

judge_module = importlib.import_module("gdrdiag.pathmodel.judge")

REPORTS = Path(__file__).resolve().parents[1] / "fixtures" / "reports"
SAVED = sorted(REPORTS.rglob("*.json"))

# "expected 57.80 GB/s" and "57.80 GB/s expected": how evidence quotes a row's expectation.
_QUOTED = re.compile(r"expected (\d+(?:\.\d+)?) GB/s|(\d+(?:\.\d+)?) GB/s expected")


def quoted_expectations(diagnosis: Diagnosis) -> list[tuple[str, str]]:
    """(finding code, number as printed) of every expected GB/s a finding's evidence quotes."""
    out = []
    for f in diagnosis.findings:
        for line in f.evidence:
            for m in _QUOTED.finditer(line):
                out.append((f.code, m.group(1) or m.group(2)))
    return out


def assert_one_yardstick(report: Report) -> Diagnosis:
    """The checks of this module over one Report; its Diagnosis for further checks."""
    d = diagnose(report)
    assert d.judgements == judge(report.results, report.machine)
    for j in d.judgements:
        if j.ratio is not None:
            assert j.measured_gbytes_per_s is not None and j.expected_gbytes_per_s
            assert j.ratio == pytest.approx(j.measured_gbytes_per_s / j.expected_gbytes_per_s), j.label
    expected = [j.expected_gbytes_per_s for j in d.judgements if j.expected_gbytes_per_s]
    for code, shown in quoted_expectations(d):
        decimals = len(shown.partition(".")[2])
        assert any(f"{e:.{decimals}f}" == shown for e in expected), (code, shown)
    return d


@pytest.mark.parametrize("path", SAVED, ids=lambda p: str(p.relative_to(REPORTS)))
def test_every_judged_number_comes_from_the_one_path_model(path):
    assert_one_yardstick(Report.from_json(path.read_text()))


def test_the_saved_reports_quote_expectations_at_all():
    """The evidence check above is not vacuous: the saved Reports quote judged expectations."""
    quoted = [q for path in SAVED for q in quoted_expectations(diagnose(Report.from_json(path.read_text())))]
    assert quoted


@pytest.mark.parametrize("name", ["gpu_machine_h200.json", "peer_h100x2.json", "baremetal_hgx.json"])
def test_diagnosing_twice_gives_equal_results_computed_afresh(name):
    text = (REPORTS / name).read_text()
    report = Report.from_json(text)
    first, again = diagnose(report), diagnose(report)
    assert first == again and isinstance(first.findings, tuple)
    assert diagnose(Report.from_json(text)) == first  # an equal Report read again: the same answer
    # nothing remembered: each call judges afresh (equal judgements, never the very same tuple)
    assert first.judgements is not again.judgements
    assert judge(report.results, report.machine) is not judge(report.results, report.machine)


def test_the_judgement_keeps_no_module_level_memo():
    """No mutable container at module level in the path model's judge (constants only)."""
    mutable = {
        name
        for name, value in vars(judge_module).items()
        if isinstance(value, (list, set)) and not name.startswith("__")
    }
    assert mutable == set()


def test_a_stale_model_number_in_saved_metrics_changes_no_judgement():
    """A model expectation a bench saved in a row's metrics is information, never the yardstick."""
    report = Report.from_json((REPORTS / "peer_h100x2.json").read_text())

    def stale(r):
        m = r.metrics
        if not any(
            f.name in ("expected_gbytes_per_s", "measured_over_expected") for f in dataclasses.fields(m)
        ):
            return r
        return dataclasses.replace(
            r, metrics=dataclasses.replace(m, expected_gbytes_per_s=1.0, measured_over_expected=0.01)
        )

    old = dataclasses.replace(report, results=tuple(stale(r) for r in report.results))
    assert old.results != report.results
    assert diagnose(old) == diagnose(report)
