"""Text rendering of a ``FleetResult``: summary, SKU groups, flagged nodes worst first, details.

Formatting only (fleet.py computed every number). Lines fit the width asked for (100 by
default): long SKU keys and causes are shortened in the table and given in full, wrapped, in
the per-node details.
"""

from __future__ import annotations

import textwrap
from typing import TYPE_CHECKING, Optional

if TYPE_CHECKING:  # pragma: no cover
    from gdrdiag.model.fleet import FleetResult, MetricScore, NodeVerdict

WIDTH = 100


def _cut(text: str, width: Optional[int]) -> str:
    return text if width is None or len(text) <= width else text[: width - 1] + "…"


def _num(v: Optional[float], digits: int = 3) -> str:
    return "-" if v is None else f"{v:.{digits}g}"


def _z(v: Optional[float], missing: bool = False) -> str:
    if missing:
        return "missing"
    return "-" if v is None else f"{v:.1f}"


def summary_line(result: "FleetResult") -> str:
    """One line: nodes, groups, how many to drain/investigate, what was skipped."""
    drain = sum(1 for n in result.nodes if n.level == "drain")
    inv = sum(1 for n in result.nodes if n.level == "investigate")
    total = len(result.nodes)
    rate = 100.0 * (drain + inv) / total if total else 0.0
    line = (
        f"{total} nodes in {len(result.groups)} SKU group(s): {drain} to drain, "
        f"{inv} to investigate ({rate:.1f} % flagged)"
    )
    if result.skipped:
        reasons = ", ".join(f"{r}: {c}" for r, c in sorted(result.skipped_counts().items()))
        line += f"; {len(result.skipped)} record(s) skipped ({reasons})"
    if result.missing_hosts:
        line += f"; {len(result.missing_hosts)} expected node(s) without a record"
    if result.mixed:  # records of several versions or builds: facts one lacks are unknown there
        parts = ", ".join(
            f"{v.nodes} record v{v.record_version} by {v.tool_version or 'unknown build'}"
            for v in result.versions[:4]
        )
        more = f", {len(result.versions) - 4} more" if len(result.versions) > 4 else ""
        line += f"; mixed fleet: {parts}{more}"
    return line


def _flagging_scores(node: "NodeVerdict") -> list["MetricScore"]:
    """Every metric that is a reason the node is flagged, the furthest below its yardstick first.

    A metric with no value (its case failed, or never ran) comes first; the others by the lower
    of their fraction of the group median and of a baseline minimum they miss, so a node's own
    outlier (0.49 of its group) is not hidden behind a minimum its whole group misses (0.80 of it).
    """
    return sorted((s for s in node.scores if s.problem or s.value is None), key=_shortfall)


def _shortfall(score: "MetricScore") -> float:
    """The sort key of :func:`_flagging_scores`: -1 without a value, else the smaller fraction."""
    if score.value is None:
        return -1.0
    fractions = [score.ratio if score.ratio is not None else 1.0]
    if score.problem == "below baseline" and score.minimum:
        fractions.append(score.value / score.minimum)
    return min(fractions)


def _flagging_score(node: "NodeVerdict") -> Optional["MetricScore"]:
    """The metric furthest below its yardstick among those that flag the node (none for SKU drift alone)."""
    scores = _flagging_scores(node)
    return scores[0] if scores else None


def _score_words(score: "MetricScore") -> str:
    """One flagging metric: missing and why, below a baseline minimum, or its ratio to the group and z."""
    if score.value is None:
        return f"{score.metric} {score.problem}"
    if score.problem == "below baseline" and score.minimum is not None:
        return (
            f"{score.metric} {_num(score.value, 4)} below baseline {score.minimum:g} "
            f"({_num(score.value / score.minimum if score.minimum else None, 2)} of it; "
            f"{_num(score.ratio, 2)} of group median)"
        )
    what = f"{score.metric} {_num(score.ratio, 2)} of group median"
    return what + (f" (z {score.z:.1f})" if score.z is not None else "")


def detail(node: "NodeVerdict", width: Optional[int] = WIDTH) -> str:
    """node: every flagging metric, worst first; cause: ...; differs: ... (wrapped)."""
    parts = [_score_words(s) for s in _flagging_scores(node)]
    if node.own_sku:
        parts.append(f"own SKU: {node.own_sku}")
    if node.cause is not None:
        c = node.cause
        where = f" [{c.subject}]" if c.subject and c.subject not in c.title else ""
        parts.append(f"cause: {c.code} {c.title}{where}")
    else:
        parts.append(f"cause: {node.why or 'no cause found'}")
    others = [f"{f.code} {f.title}" for f in node.drift if f != node.cause]
    if others:
        parts.append("also differs from its SKU: " + "; ".join(others[:4]))
    if node.differing:
        diffs = [
            f"{d.name} = {d.value if d.value is not None else 'absent'} (group: {d.majority})"
            for d in node.differing[:6]
        ]
        more = f" and {len(node.differing) - 6} more" if len(node.differing) > 6 else ""
        parts.append("differs: " + "; ".join(diffs) + more)
    text = f"{node.host} [{node.level}]: " + "; ".join(parts)
    if width is None:
        return text
    return textwrap.fill(text, width, subsequent_indent="    ", break_on_hyphens=False)


def render_fleet(result: "FleetResult", top: int = 50, width: Optional[int] = WIDTH) -> str:
    """The full text report, fitted to ``width`` columns (None: nothing shortened or wrapped)."""
    from gdrdiag.render.layout import wrap_lines

    out = [wrap_lines(summary_line(result), width), "", "SKU groups"]
    for i, g in enumerate(result.groups, 1):
        key = f" ({g.key})" if g.key and g.key != g.sku else ""  # an inventory name: its machines too
        out.append(_cut(f"  {i:>2}. {g.nodes:>6} nodes  {g.sku}{key}", width))
        if g.note:
            out.append(f"      {g.note}")
        medians = ", ".join(f"{s.metric} {_num(s.median, 4)}" for s in g.stats)
        if medians:
            out.append(wrap_lines("      medians: " + medians, width))
    if result.missing_hosts:
        out += [
            "",
            f"MISSING: {len(result.missing_hosts)} expected node(s) wrote no usable record "
            "(hung, down, or failed)",
        ]
        out.append("  " + ", ".join(result.missing_hosts))
    flagged = result.flagged
    if not flagged:
        out += ["", "no node is below its group (nothing to drain or investigate)"]
    else:
        shown = flagged[:top]
        out += ["", f"flagged nodes, worst first ({len(shown)} of {len(flagged)})"]
        header = f"{'#':>4} {'host':<18} {'level':<11} {'metric':<24} {'x median':>8} {'z':>8}  cause"
        out.append(header)
        for i, n in enumerate(shown, 1):
            worst = _flagging_score(n)
            ratio = "-" if worst is None or worst.ratio is None else f"{worst.ratio:.2f}"
            missing = worst is not None and worst.value is None
            cause = n.cause.code if n.cause else "no cause found"
            metric = worst.metric if worst is not None else "-"
            row = (
                f"{i:>4} {_cut(n.host, 18):<18} {n.level:<11} {_cut(metric, 24):<24} "
                f"{ratio:>8} {_z(worst.z if worst else None, missing):>8}  {cause}"
            )
            out.append(_cut(row, width))
        out += ["", "details"]
        out.extend(detail(n, width) for n in shown)
    if result.pair_suspects:
        out += ["", "pairwise: nodes common to the failing pairs"]
        for s in result.pair_suspects:
            out.append(
                wrap_lines(
                    f"  {s.host}: in {s.failing_pairs} of its {s.pairs} pairs that fail "
                    f"(with {', '.join(s.peers)})",
                    width,
                )
            )
    if result.skipped:
        out += ["", f"skipped records ({len(result.skipped)})"]
        for s in result.skipped[:20]:
            out.append(_cut(f"  {s.source}: {s.reason}", width))
        if len(result.skipped) > 20:
            out.append(f"  ... and {len(result.skipped) - 20} more (--json lists all)")
    return wrap_lines("\n".join(out), width)
