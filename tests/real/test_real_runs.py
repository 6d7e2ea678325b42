"""Every real output in tests/real/ gets the verdict written beside it (corpus.py, README.md).

- healthy: no WARN or FAIL, and every judged row of 1 MiB or more within 0.8-1.15 of its bound;
- fault: the injected cause is the first WARN/FAIL finding;
- partial: the evidence cannot name the cause (no NCCL INFO log): the finding with the hypotheses
  and the command that decides is among the WARN/FAILs;
- slow: a slow row whose cause the evidence does not hold: the symptom leads;
- transient: a healthy machine whose run caught a passing slowdown: no FAIL;
- gap: a healthy run the model still misjudges, kept as an expected failure with its reason.
"""

from __future__ import annotations

import pytest

from gdrdiag.model.findings import Severity
from gdrdiag.model.path import Verdict
from gdrdiag.pathmodel import judge
from tests.real.corpus import RealRun, judged, runs

RUNS = runs()


def _id(run: RealRun) -> str:
    return f"{run.machine}/{run.name}"


def test_the_corpus_is_there_and_every_run_has_an_expected_verdict():
    assert len(RUNS) >= 60
    assert len({r.machine for r in RUNS}) >= 3
    assert [_id(r) for r in RUNS if r.expect is None] == []


@pytest.mark.parametrize("run", RUNS, ids=_id)
def test_real_run_is_judged_as_expected(run: RealRun):
    expect = run.expect
    assert expect is not None
    if expect.verdict == "gap":
        pytest.xfail(expect.why)
    report = judged(run)
    loud = [f for f in report.findings if f.severity in (Severity.WARN, Severity.FAIL)]
    codes = [f.code for f in loud]
    if expect.verdict == "healthy":
        assert codes == [], f"{run.command}: {[f.title for f in loud]}"
        off = [
            (j.label, round(j.ratio, 2))
            for j in judge(report.results, report.machine)
            if j.ratio is not None
            and j.verdict is not Verdict.BASELINE
            and (j.size_bytes or 1 << 20) >= 1 << 20
            and not 0.8 <= j.ratio <= 1.15
        ]
        assert off == []
    elif expect.verdict in ("fault", "slow"):
        assert codes and codes[0] == expect.lead, f"{run.command}: {codes}"
    elif expect.verdict == "transient":
        assert Severity.FAIL not in [f.severity for f in loud], f"{run.command}: {codes}"
    elif expect.verdict == "partial":
        assert expect.lead in codes, f"{run.command}: {codes}"
    else:
        pytest.fail(f"unknown verdict {expect.verdict!r}")


@pytest.mark.parametrize("run", RUNS, ids=_id)
def test_every_numeric_row_is_judged_or_says_why(run: RealRun):
    report = judged(run)
    for j in judge(report.results, report.machine):
        assert j.ratio is not None or j.reason, j.label


@pytest.mark.parametrize("run", [r for r in RUNS if "nccl" in r.name], ids=_id)
def test_no_single_node_collective_is_judged_against_a_nic_or_one_pcie_link(run: RealRun):
    report = judged(run)
    for j in judge(report.results, report.machine):
        if j.bound is not None:
            assert not j.bound_on_nic, j.bound
            assert "PCIe" not in j.bound or "staged" in j.bound or "host memory" in j.bound, j.bound


@pytest.mark.parametrize("run", [r for r in RUNS if r.machine.startswith("lab-")], ids=_id)
def test_a_software_rdma_device_is_never_judged_as_hardware(run: RealRun):
    report = judged(run)
    judgements = judge(report.results, report.machine)
    assert judgements
    for j in judgements:
        assert j.ratio is None and "software RDMA device" in (j.reason or ""), j.label
