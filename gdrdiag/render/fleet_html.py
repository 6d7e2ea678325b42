"""A self-contained HTML page for a ``FleetResult``: sorted node table plus per-metric strip plots.

Formatting only. Each strip plot shows every node of every SKU group as its metric over the
group median (x) against its group (y, jittered), outliers marked by level; missing metrics are
drawn at x = 0. Without matplotlib (the optional extra ``plot``) the page has the tables and says
how to get the plots.
"""

from __future__ import annotations

import html
import io
import random
from typing import TYPE_CHECKING, Optional

from gdrdiag.render.html import _img, _page, _table

if TYPE_CHECKING:  # pragma: no cover
    from gdrdiag.model.fleet import FleetResult

COLOURS = {"ok": "#9aa5b1", "investigate": "#e69f00", "drain": "#c0392b"}
# SKU groups drawn per strip plot: each is a 0.7-inch row, and a fleet of thousands of one-node
# SKUs would make a figure of gigabytes; the rest are in the groups table.
MAX_PLOT_GROUPS = 40


def plotted_groups(result: "FleetResult") -> list[tuple[int, str]]:
    """(number in the groups table, SKU) of the groups the strip plots draw, in table order.

    At most :data:`MAX_PLOT_GROUPS`: those with the most flagged nodes (then the larger).
    """
    numbered = list(enumerate((g.sku for g in result.groups), 1))
    if len(numbered) <= MAX_PLOT_GROUPS:
        return numbered
    flagged = {g.sku: g.flagged for g in result.groups}
    worst = sorted(numbered, key=lambda ng: (-flagged[ng[1]], ng[0]))[:MAX_PLOT_GROUPS]
    return sorted(worst)


def strip_plot(
    result: "FleetResult", metric: str, groups: Optional[list[tuple[int, str]]] = None
) -> Optional[bytes]:
    """PNG of one metric: each node's ratio to its group median, one row per group drawn.

    ``groups`` defaults to :func:`plotted_groups`; None when there is nothing to draw.
    """
    from gdrdiag.render.plot import _pyplot

    plt = _pyplot()
    drawn = plotted_groups(result) if groups is None else groups
    row = {sku: i for i, (_, sku) in enumerate(drawn)}
    rng = random.Random(0)
    points: dict[str, tuple[list[float], list[float]]] = {lvl: ([], []) for lvl in COLOURS}
    for node in result.nodes:
        score = next((s for s in node.scores if s.metric == metric), None)
        if score is None or node.sku not in row:
            continue
        x = score.ratio if score.value is not None and score.ratio is not None else 0.0
        level = node.level if (score.problem or score.value is None) else "ok"
        y = row[node.sku] + rng.uniform(-0.3, 0.3)
        points[level][0].append(x)
        points[level][1].append(y)
    if not any(xs for xs, _ in points.values()):
        return None
    fig, ax = plt.subplots(figsize=(9, 0.9 + 0.7 * len(drawn)))
    for level in ("ok", "investigate", "drain"):
        xs, ys = points[level]
        if xs:
            ax.scatter(
                xs,
                ys,
                s=6 if level == "ok" else 22,
                c=COLOURS[level],
                label=f"{level} ({len(xs)})",
                alpha=0.5 if level == "ok" else 0.9,
                linewidths=0,
            )
    ax.axvline(1.0, color="#444", lw=0.8)
    ax.set_yticks(range(len(drawn)))
    ax.set_yticklabels([str(number) for number, _ in drawn], fontsize=7)
    ax.set_ylabel("SKU group (numbered as in the table)", fontsize=7)
    ax.set_xlabel(f"{metric} / SKU-group median (0 = missing)")
    ax.legend(fontsize=7, loc="lower left")
    ax.set_title(metric, fontsize=9)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100, bbox_inches="tight")
    plt.close(fig)
    return buf.getvalue()


def fleet_html(result: "FleetResult", top: int = 0) -> str:
    """The HTML text: every flagged node (or the first ``top`` when ``top`` > 0), then the rest up to 500."""
    from gdrdiag.errors import NotSupported
    from gdrdiag.render.fleet_table import summary_line

    body = f"<p>{html.escape(summary_line(result))}</p>"
    if result.missing_hosts:
        body += (
            f"<h2>Missing: {len(result.missing_hosts)} expected node(s) without a usable record</h2><p>"
            + html.escape(", ".join(result.missing_hosts))
            + "</p>"
        )
    body += "<h2>SKU groups</h2>" + _groups_table(result) + _nodes_table(result, top)
    metrics = sorted({s.metric for g in result.groups for s in g.stats})
    body += "<h2>Strip plots</h2>"
    drawn = plotted_groups(result)
    if len(drawn) < len(result.groups):
        body += (
            f"<p>{len(result.groups) - len(drawn)} of {len(result.groups)} SKU groups are not drawn: "
            f"the plots show the {len(drawn)} with the most flagged nodes (every group is in the "
            "table above).</p>"
        )
    try:
        plots = "".join(_img(strip_plot(result, m, drawn), m) for m in metrics)
        body += plots or "<p>No metrics to plot.</p>"
    except NotSupported as exc:
        body += f"<p>{html.escape(exc.reason)}</p>"
    if result.pair_suspects:
        body += "<h2>Pairwise: nodes common to failing pairs</h2>" + _table(
            ["host", "failing pairs", "pairs", "peers"],
            [[s.host, str(s.failing_pairs), str(s.pairs), ", ".join(s.peers)] for s in result.pair_suspects],
        )
    if result.skipped:
        body += f"<h2>Skipped records ({len(result.skipped)})</h2>" + _table(
            ["source", "reason"], [[s.source, s.reason] for s in result.skipped[:1000]]
        )
    return _page("gdrdiag fleet", body)


def _groups_table(result: "FleetResult") -> str:
    """SKU groups, numbered as in the strip plots, with their full keys."""
    return _table(
        ["#", "nodes", "flagged", "SKU (full key)", "medians (MAD; flagged)", "note"],
        [
            [
                str(i),
                str(g.nodes),
                str(g.flagged),
                g.sku,
                ", ".join(f"{s.metric} {s.median:.4g} (MAD {s.mad:.3g}; {s.flagged})" for s in g.stats),
                g.note
                + (f" {g.folded} node(s) of another own SKU judged against this one" if g.folded else ""),
            ]
            for i, g in enumerate(result.groups, 1)
        ],
    )


def _nodes_table(result: "FleetResult", top: int) -> str:
    """Every flagged node (or the first ``top``), then healthy ones up to 500 rows in all."""
    from gdrdiag.render.fleet_table import _z

    flagged = result.flagged
    shown = flagged[:top] if top > 0 else flagged
    healthy = [n for n in result.nodes if n.level == "ok"][: max(0, 500 - len(shown))] if top <= 0 else []
    rows = []
    for i, n in enumerate((*shown, *healthy), 1):
        worst = next((s for s in n.scores if s.metric == n.worst_metric), None)
        rows.append(
            [
                str(i),
                n.host,
                n.level,
                n.worst_metric or "-",
                "-" if worst is None or worst.ratio is None else f"{worst.ratio:.2f}",
                _z(n.worst_z, worst is not None and worst.value is None),
                n.why or "-",
                "; ".join(n.reasons[:6]),
                "; ".join(
                    f"{d.name} = {d.value if d.value is not None else 'absent'} (group: {d.majority})"
                    for d in n.differing[:6]
                ),
            ]
        )
    title = (
        f"<h2>Nodes, worst first: {len(shown)} of {len(flagged)} flagged"
        + (f", then {len(healthy)} of {len(result.nodes) - len(flagged)} ok" if healthy else "")
        + "</h2>"
    )
    header = ["#", "host", "level", "worst metric", "x median", "z", "leading cause (or why no cause)"]
    return title + _table([*header, "reasons (baseline, SKU, z)", "differs from its SKU"], rows)
