"""PERF-PAIR-OUTLIER: the ordered GPU pair below the node's other pairs is named, with its path's cause.

Built from a real 4 x H200 Report (tests/fixtures/reports/node, every pair NV18): one pair's peer rows
are lowered as a pair with lost NVLinks would measure, and the machine's facts changed to match.
"""

from __future__ import annotations

import dataclasses
import gzip
from pathlib import Path

from gdrdiag.diagnose import diagnose
from gdrdiag.diagnose.pair_outliers import pair_outlier_findings
from gdrdiag.model.params import PeerParams
from gdrdiag.model.report import Report
from gdrdiag.model.results import SampleStats

NODE = Path(__file__).resolve().parents[1] / "fixtures" / "reports" / "node"


def node() -> Report:
    return Report.from_json(gzip.decompress((NODE / "h200x4-standard-b.json.gz").read_bytes()).decode())


def slowed(report: Report, pair: tuple[int, int], share: float) -> Report:
    rows = []
    for r in report.results:
        p = r.params
        if isinstance(p, PeerParams) and (p.src_gpu, p.dst_gpu) == pair and r.samples and not p.library:
            s = tuple(x * share for x in r.samples)
            r = dataclasses.replace(r, samples=s, stats=SampleStats.of(s))
        rows.append(r)
    return dataclasses.replace(report, results=tuple(rows))


def with_path(report: Report, pair: tuple[int, int], nvlinks: int) -> Report:
    peers = tuple(
        dataclasses.replace(q, nvlinks=nvlinks) if (q.src_ordinal, q.dst_ordinal) == pair else q
        for q in report.machine.peers
    )
    return dataclasses.replace(report, machine=dataclasses.replace(report.machine, peers=peers))


def test_an_idle_node_has_no_pair_below_the_others():
    report = node()
    assert list(pair_outlier_findings(report.results, report.machine)) == []


def test_the_pair_with_fewer_links_is_named_with_its_path():
    report = with_path(slowed(node(), (1, 3), 12 / 18), (1, 3), 12)
    found = [f for f in diagnose(report).findings if f.code == "PERF-PAIR-OUTLIER"]
    assert [f.subject for f in found] == ["gpu1->gpu3"]
    assert "NV12 while the node's other pairs' is NV18" in found[0].title
    assert found[0].title.startswith("GPU 1 -> GPU 3 is slower than the node's other pairs")


def test_a_pair_a_little_slower_is_not_named():
    report = slowed(node(), (2, 0), 0.9)
    assert list(pair_outlier_findings(report.results, report.machine)) == []
