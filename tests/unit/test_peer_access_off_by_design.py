"""CAUSE-PEER-ACCESS-OFF is "by design" when one output measured peer access off beside on.

A tool that measures both (p2pBandwidthLatencyTest's P2P=Disabled matrices) shows the enabled path
healthy in the same output; two outputs (one slow run without peer access, one healthy run with it)
are a program that forgot to enable it. Told apart by the rows' output file, not by the tool's name.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from gdrdiag.diagnose import diagnose
from gdrdiag.model.findings import Severity
from tests.cases.casefile import load

CASE = Path(__file__).resolve().parents[1] / "cases" / "ilgpu-660-a100-nvlink-peer-access-off.toml"


def _with_sources(off_source: str, on_source: str):
    report = load(CASE).report

    def source(params) -> str:
        return on_source if params.peer_access else off_source

    rows = tuple(
        dataclasses.replace(r, params=dataclasses.replace(r.params, source_file=source(r.params)))
        for r in report.results
    )
    return dataclasses.replace(report, results=rows)


def _peer_access_off(report):
    return next(f for f in diagnose(report).findings if f.code == "CAUSE-PEER-ACCESS-OFF")


def test_off_beside_on_in_one_output_is_by_design():
    finding = _peer_access_off(_with_sources("p2p.txt", "p2p.txt"))
    assert finding.severity is Severity.INFO and finding.basis == "by design"


def test_off_and_on_from_two_outputs_is_the_loss():
    finding = _peer_access_off(_with_sources("slow-run.txt", "fixed-run.txt"))
    assert finding.severity in (Severity.WARN, Severity.FAIL) and finding.basis != "by design"
