"""Real whole-node Reports (tests/fixtures/reports/node, 4 x H200): healthy runs name nothing, a busy GPU
is named first and alone.

These are the measurements the node rules were tuned on and must keep passing: an idle node's GPUs
differ by run-to-run noise only (no WARN or FAIL at all), and with a second process on GPU 2 every
WARN/FAIL finding is about GPU 2, led by the cause.
"""

from __future__ import annotations

import gzip
import re
from pathlib import Path

import pytest

from gdrdiag.diagnose import diagnose
from gdrdiag.model.findings import Severity
from gdrdiag.model.report import Report

NODE = Path(__file__).resolve().parents[1] / "fixtures" / "reports" / "node"
IDLE = ["h200x4-standard-a", "h200x4-standard-b", "h200x4-quick-a", "h200x4-quick-b"]


def load(name: str) -> Report:
    return Report.from_json(gzip.decompress((NODE / f"{name}.json.gz").read_bytes()).decode())


def serious(report: Report):
    return [f for f in diagnose(report).findings if f.severity is not Severity.INFO]


@pytest.mark.parametrize("name", IDLE)
def test_an_idle_node_has_no_warn_or_fail_and_every_gpu_is_judged(name):
    report = load(name)
    assert serious(report) == []
    judged = diagnose(report).judgements
    per_gpu = {getattr(report.results[j.index].params, "gpu", None) or 0 for j in judged if j.ratio}
    assert per_gpu == {0, 1, 2, 3}
    pairs = {
        (report.results[j.index].params.src_gpu, report.results[j.index].params.dst_gpu)
        for j in judged
        if j.ratio and j.key.startswith("peer_ce_")
    }
    assert pairs == {(a, b) for a in range(4) for b in range(4) if a != b}  # every ordered pair judged
    # every per-GPU row names its GPU by address as the machine facts do
    addresses = {g.cuda_ordinal: g.bdf for g in report.machine.gpus}
    for r in report.results:
        if r.settings.gpu_bdf is not None:
            assert r.settings.gpu_bdf == addresses[getattr(r.params, "gpu", None) or 0]


def test_the_busy_gpu_is_named_first_and_no_other_gpu_is():
    report = load("h200x4-quick-busy-gpu2")
    busy = next(g for g in report.machine.gpus if g.cuda_ordinal == 2)
    assert busy.other_processes, "the facts show the other process"
    findings = serious(report)
    assert findings[0].code == "CAUSE-GPU-BUSY" and findings[0].title.startswith(f"GPU 2 ({busy.bdf})")
    others = [g.bdf for g in report.machine.gpus if g.bdf != busy.bdf]
    for f in findings:
        assert not any(b in f.title or b == f.subject for b in others), f.title
        assert "gpu2" in " ".join(f.evidence) or busy.bdf in f.title or f.subject == busy.bdf, f.title
    outlier = next(f for f in findings if f.code == "PERF-GPU-OUTLIER")
    assert outlier.subject == busy.bdf and "in use" in outlier.title


def test_peer_rows_of_a_node_print_as_source_by_destination_matrices():
    from gdrdiag.render.peer_table import render_peer_results

    text = render_peer_results(list(load("h200x4-standard-b").results), 100)
    titles = [ln for ln in text.splitlines() if "a row is the source" in ln]
    assert [t.split(" (")[0] for t in titles] == [
        "CE copy, peer access off, 256 MiB",
        "CE copy, peer access on, 256 MiB",
        "SM read, peer access on, 256 MiB",
    ]
    on = text.split(titles[1], 1)[1].splitlines()[3:7]  # the four GPU rows under the header
    for i, line in enumerate(on):
        cells = line.split()
        assert cells[:2] == ["GPU", str(i)] and cells[2 + i] == "-"
        assert all(float(c) > 300 for j, c in enumerate(cells[2:]) if j != i)  # NV18, peer access on


@pytest.mark.parametrize("name", ["h200x4-standard-a", "h200x4-standard-b"])
def test_peer_access_off_measured_by_design_is_one_finding_for_the_node(name):
    """The 12 ordered pairs' staged copies are one INFO with each pair's on/off, not 12 near-copies."""
    report = load(name)
    found = [f for f in diagnose(report).findings if f.code == "PEER-ACCESS-OFF"]
    (f,) = found
    assert f.severity is Severity.INFO and f.basis == "by design" and f.subject == "gpu-pairs"
    assert f.title.startswith("12 ordered GPU pairs (NV18)")
    pairs = f.evidence[-1].removeprefix("on / off per pair: ").split(", ")
    assert {p.split()[0] for p in pairs} == {f"{a}->{b}" for a in range(4) for b in range(4) if a != b}


def test_pageable_rows_are_set_beside_the_pinned_copy_of_their_own_gpu_and_size():
    """The A/B of CAUSE-PAGEABLE-MEMORY is the same GPU's pinned copy of the same size and direction.

    In `-a` every GPU ran the whole copy profile and the worst D2H staged row is GPU 3's managed one;
    it used to be set beside whichever pinned row scored best (another GPU's, or a 64 KiB copy).
    """
    report = load("h200x4-standard-a")
    causes = [f for f in diagnose(report).findings if f.code == "CAUSE-PAGEABLE-MEMORY"]
    assert {f.title.split()[0] for f in causes} == {"H2D", "D2H"}
    for f in causes:
        staged = next(e for e in f.evidence if e.startswith("results["))
        twin = next(e for e in f.evidence if e.startswith("pinned copy of the same direction: "))
        gpu, size = re.search(r"(gpu\d+)\(device\).* (\d+ [KMG]iB) =", staged).groups()
        assert f"{gpu}(device)" in twin and f" {size} = " in twin and "(pinned)" in twin, (staged, twin)
    d2h = next(f for f in causes if f.title.startswith("D2H"))
    assert d2h.title.startswith("D2H copies into managed memory") and "gpu3(device)" in d2h.evidence[1]
