"""fleet's text names every metric that flags a node, as JSON and HTML do, the furthest below first."""

from __future__ import annotations

from gdrdiag.fleet import analyse, parse_baseline
from gdrdiag.model.fleet import FleetOptions, NodeRecordHead
from gdrdiag.render.fleet_table import detail, render_fleet


def _fleet() -> list[NodeRecordHead]:
    """Ten nodes whose copies all miss a baseline minimum; node ``bad``'s RDMA is also half its group's."""
    heads = []
    for i in range(10):
        rdma = 190.0 if i == 3 else 388.0 + i % 4
        heads.append(
            NodeRecordHead(
                host="bad" if i == 3 else f"n{i}",
                sku="A",
                exit_code=0,
                metrics={"copy_h2d_pinned_gbs": 20.0 + (i % 3) * 0.01, "rdma_host_gbps": rdma},
            )
        )
    return heads


def test_a_baseline_miss_does_not_hide_the_nodes_own_outlier():
    rules = parse_baseline('[[sku]]\nmatch = "A"\ncopy_h2d_pinned_gbs = 25\n')
    result = analyse(_fleet(), FleetOptions(baseline=rules))
    bad = next(n for n in result.nodes if n.host == "bad")
    assert {s.metric for s in bad.scores if s.problem} == {"copy_h2d_pinned_gbs", "rdma_host_gbps"}
    line = detail(bad, width=None)
    assert "copy_h2d_pinned_gbs 20 below baseline 25" in line, line
    assert "rdma_host_gbps 0.49 of group median (z " in line, line
    # the furthest below its yardstick first: 0.49 of the group before 0.80 of the baseline
    assert line.index("rdma_host_gbps") < line.index("copy_h2d_pinned_gbs"), line
    text = render_fleet(result, width=None)
    assert "rdma_host_gbps 0.49 of group median" in text
    # a node flagged by the baseline alone lists that one metric
    other = detail(next(n for n in result.nodes if n.host == "n1"), width=None)
    assert "copy_h2d_pinned_gbs" in other and "rdma_host_gbps" not in other
