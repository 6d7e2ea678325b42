"""Every public case leads with the cause its thread concluded (issue 20).

A case is one real thread (tests/cases/*.toml: URL, numbers as posted, machine as stated); the Report
built from it is diagnosed as `gdrdiag diagnose` would. ``HEALTHY`` cases must have no WARN or FAIL.
Cases the path model does not yet get right are listed in ``NOT_YET`` with what is missing; they
are strict xfails, so a case that starts passing must be moved out of the list.
"""

from __future__ import annotations

import pytest

from gdrdiag.diagnose import diagnose
from gdrdiag.model.findings import Severity
from gdrdiag.paths import judge
from tests.cases.casefile import all_cases

CASES = {c.name: c for c in all_cases()}

NOT_YET = {
    "club3090-pr895-chipset-slot-x4": "the chipset card's x4 effective link is not a per-GPU fact",
    "gh-aikitoria-20-rtx5090-no-gdr": "the posted busbw exceeds the stated one-port bound (2-node tree)",
    "gh-nccl-1579-gh200-gdr-off": "a 17% gap (79.7 vs 96.1 GB/s) is inside the 0.8 healthy band",
    "gh-pslite-46-gpu-nic-other-switch": "the fast row ran on other GPUs (near the NIC): not a case fact",
    "gh-torchcomms-pr3054-gb300-cx8-cpu-buffer-pcie": "the CX-8's internal PCIe link is not a case fact",
    "rtx6kpro-esc8000a-acs-pix-p2p": "ACS on GPU<->GPU switch ports is not modelled for peer paths yet",
    "rtx6kpro-wrx90-uplink-gen2": "the switch uplink's trained speed is not a fact the case format carries",
}


def _check(name: str) -> None:
    case = CASES[name]
    findings = diagnose(case.report)
    if case.cause == "HEALTHY":
        loud = [(f.code, f.title) for f in findings if f.severity in (Severity.FAIL, Severity.WARN)]
        assert not loud, (case.url, loud)
    else:
        assert findings and findings[0].code == case.cause, (
            case.url,
            [(f.code, f.severity.value, f.title[:80]) for f in findings[:3]],
        )


@pytest.mark.parametrize("name", sorted(n for n in CASES if n not in NOT_YET))
def test_the_threads_cause_leads(name):
    _check(name)


@pytest.mark.parametrize("name", sorted(NOT_YET))
def test_cases_the_model_does_not_yet_lead(name):
    pytest.xfail(NOT_YET[name]) if _fails(name) else pytest.fail(f"{name} now leads: move it out of NOT_YET")


def _fails(name: str) -> bool:
    try:
        _check(name)
    except AssertionError:
        return True
    return False


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
