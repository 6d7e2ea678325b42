"""CUDA samples' p2pBandwidthLatencyTest judged right: P2P=Disabled is a by-design baseline, latencies are
never bandwidth, staged copies are judged against the trip through host memory, and a peer path slower
than its staged one is a loss with machine-fact causes (never "P2P not in effect").

The real runs under tests/real/<machine>/ are the sample's output and ``gdrdiag collect`` bundle of the
same machine (2 x H200 NV18, Firecracker VM); tests/fixtures/imported/p2pBandwidthLatencyTest_h100x2_nv18.txt
is written from the sample's printf formats with numbers of a 2 x H100 NV18 machine.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gdrdiag.cli import app
from gdrdiag.cli.reporting import results_report
from gdrdiag.diagnose import diagnose
from gdrdiag.diagnose.causes_peer import COLLECT, HYPOTHESES
from gdrdiag.importers import import_text
from gdrdiag.model.findings import Severity
from gdrdiag.model.path import Verdict
from gdrdiag.model.report import Report
from gdrdiag.pathmodel import judge
from gdrdiag.pathmodel.peer import STAGED_SHARE, expect
from tests.conftest import FIXTURES

ROOT = Path(__file__).resolve().parents[2]
REAL = ROOT / "tests" / "real"
SAMPLE = FIXTURES / "imported" / "p2pBandwidthLatencyTest_h100x2_nv18.txt"
H100X2 = FIXTURES / "reports" / "peer_h100x2.json"
REAL_RUNS = sorted(REAL.glob("*/runs/*p2p-sample*/output.txt"))


@pytest.fixture(scope="module")
def machine():
    return Report.from_json(H100X2.read_text()).machine


def _report(text: str, machine, name: str = "out.txt") -> Report:
    return results_report("import", import_text(text, name), machine=machine)


def _bad(findings) -> list:
    return [f for f in findings if f.severity in (Severity.WARN, Severity.FAIL)]


@pytest.mark.parametrize("with_machine", [True, False])
def test_a_healthy_sample_has_no_warn_or_fail(machine, with_machine):
    rep = _report(SAMPLE.read_text(), machine if with_machine else None)
    findings = diagnose(rep).findings
    assert _bad(findings) == []
    assert not any("not in effect" in f.title for f in findings)
    (info,) = [f for f in findings if f.code == "PEER-ACCESS-OFF"]
    assert info.severity is Severity.INFO and info.basis == "by design"
    assert any("by design" in e for e in info.evidence)


def test_disabled_rows_are_baselines_and_latencies_are_not_bandwidth(machine):
    rep = _report(SAMPLE.read_text(), machine)
    js = judge(rep.results, machine)
    for r, j in zip(rep.results, js, strict=True):
        p = r.params
        if r.unit == "us" and p.peer_gpu != p.gpu:
            assert j.verdict is Verdict.UNJUDGED and "latency" in (j.reason or "")
        elif p.peer_gpu != p.gpu and p.peer_access is False:
            assert j.verdict is Verdict.BASELINE and "by design" in (j.reason or "")
    staged = [
        j for r, j in zip(rep.results, js, strict=True) if r.key == "p2p_unidirectional_disabled" and j.ratio
    ]
    assert len(staged) == 2 and all(0.8 <= j.ratio <= 1.15 for j in staged)
    assert all("host memory" in (j.bound or "") for j in staged)


def test_staged_expectation_is_the_trip_through_host_memory(machine):
    pair = machine.peers[0]
    one = expect(machine, pair, mover="ce", peer_access=False)
    both = expect(machine, pair, mover="ce", peer_access=False, bidirectional=True)
    nvlink = expect(machine, pair, mover="ce", peer_access=True)
    assert one.gbytes_per_s == pytest.approx(58.0 * STAGED_SHARE, rel=0.01)
    assert both.gbytes_per_s == pytest.approx(one.gbytes_per_s * 2 * STAGED_SHARE)
    assert both.gbytes_per_s < 2 * one.gbytes_per_s and "NV" not in one.text.split(":")[0]
    assert nvlink.gbytes_per_s > 5 * one.gbytes_per_s
    # peer-bench on the x2 machine (docs/benchmarks.md): staged 38.55 GB/s one way, 64.37 both ways
    assert 0.8 <= 38.55 / one.gbytes_per_s <= 1.15 and 0.8 <= 64.37 / both.gbytes_per_s <= 1.15


def _slower(text: str) -> str:
    """The sample with GPU 0 -> 1's P2P=Enabled copy slower than its staged one."""
    return text.replace("     0 2503.77 391.62", "     0 2503.77  20.15")


def test_peer_slower_than_staged_is_a_loss_with_machine_causes(machine):
    findings = diagnose(_report(_slower(SAMPLE.read_text()), machine)).findings
    assert not any("not in effect" in f.title for f in findings)
    (c,) = [f for f in findings if f.code == "CAUSE-PEER-SLOWER-THAN-STAGED"]
    assert c.severity in (Severity.WARN, Severity.FAIL)
    assert "20.1 GB/s with peer access on" in " ".join(c.evidence)
    assert any("staged through host memory" in e for e in c.evidence)
    assert c.next_step  # the command that decides
    # a bundle with the driver refusing P2P for the pair: that fact leads, as evidence
    pairs = tuple(dataclasses.replace(p, can_access_peer=False) for p in machine.peers)
    refused = dataclasses.replace(machine, peers=pairs)
    (c2,) = [f for f in diagnose(_report(_slower(SAMPLE.read_text()), refused)).findings if f.code == c.code]
    assert "P2P not supported by the driver" in c2.title and c2.evidence[1].startswith("P2P not supported")


def test_peer_slower_than_staged_without_a_bundle_lists_hypotheses(machine):
    findings = diagnose(_report(_slower(SAMPLE.read_text()), None)).findings
    (c,) = [f for f in findings if f.code == "CAUSE-PEER-SLOWER-THAN-STAGED"]
    assert all(h in c.title for h in HYPOTHESES) and c.next_step == COLLECT


def test_peer_slower_than_staged_without_a_bundle_is_not_p2p_not_in_effect():
    findings = diagnose(_report(_slower(SAMPLE.read_text()), None)).findings
    assert not any("not in effect" in f.title for f in findings)


def test_cannot_pairs_are_facts_without_a_bundle():
    rows = import_text(SAMPLE.read_text().replace("Device=0 CAN Access", "Device=0 CANNOT Access"), "x")
    on = [
        r
        for r in rows
        if r.key == "p2p_unidirectional_enabled" and r.params.gpu == 0 and r.params.peer_gpu == 1
    ]
    assert on[0].params.can_access_peer is False and on[0].params.peer_access is False
    assert on[0].params.baseline is None  # a CANNOT pair is not a by-design baseline


@pytest.mark.skipif(not REAL_RUNS, reason="no real p2pBandwidthLatencyTest runs in tests/real")
@pytest.mark.parametrize("run", REAL_RUNS, ids=lambda p: f"{p.parents[2].name}/{p.parent.name}")
def test_real_runs_with_their_bundle(run):
    bundle = run.parents[2] / "bundle.tar.gz"
    res = CliRunner().invoke(app, ["import", str(run), "--bundle", str(bundle), "--json"])
    assert res.exit_code == 0, res.output
    assert "not the machine" not in res.output
    rep = Report.from_json(res.stdout[res.stdout.index("{") :])
    findings = diagnose(rep).findings
    assert not any("not in effect" in f.title for f in findings)
    assert not [f for f in findings if f.code.startswith("PEER-") and f.severity is not Severity.INFO]
    busy = "busy" in run.parent.name
    if not busy:
        assert _bad(findings) == []
    js = judge(rep.results, rep.machine)
    staged = [
        j for r, j in zip(rep.results, js, strict=True) if r.key == "p2p_unidirectional_disabled" and j.ratio
    ]
    assert staged and all(0.8 <= j.ratio <= 1.15 for j in staged)


def test_import_says_in_one_line_when_the_gpus_differ(tmp_path):
    bundles = sorted(REAL.glob("*/bundle.tar.gz"))
    if not bundles:
        pytest.skip("no real bundle in tests/real")
    res = CliRunner().invoke(
        app,
        [
            "import",
            str(FIXTURES / "imported" / "p2pBandwidthLatencyTest_4gpu.txt"),
            "--bundle",
            str(bundles[0]),
        ],
    )
    lines = [ln for ln in res.output.splitlines() if "not the machine the tool ran on" in ln]
    assert len(lines) == 1 and "4 GPU(s)" in lines[0]
