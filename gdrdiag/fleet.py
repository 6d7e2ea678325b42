"""Many nodes' records -> groups by SKU, robust outliers, and the leading cause per flagged node.

Pure: works on :class:`~gdrdiag.node_record.NodeRecordHead` values (metrics, facts and findings
extracted by :mod:`gdrdiag.fleet_metrics` when each record was written); touches no hardware.

Method, per SKU group and per metric (every metric is higher-is-better):

- ``median`` and ``MAD`` (median absolute deviation) of the group's values;
- robust z = 0.6745 * (x - median) / MAD (Iglewicz & Hoaglin's modified z-score);
- MAD = 0 (half or more of the nodes measure the same) is handled by a *spread floor*: the scale
  used is ``max(MAD, rel_floor * |median|)`` (``rel_floor`` 1 % by default), so nodes within
  measurement noise of the median are never outliers and a node off a perfectly flat group is
  still scored, not divided by zero;
- a node is ``investigate`` at z <= -2 and ``drain`` at z <= -3 (both configurable), ``drain``
  when a metric the group majority has is missing on it (its case failed), and ``drain`` when it
  is below a baseline minimum (``--baseline``); groups smaller than ``min_group`` are judged
  by baselines and missing metrics only;
- a node whose machine has a FAIL/WARN finding the group majority does not have is at least
  ``investigate`` (configuration drift, even before it shows in a number).

Nodes are ranked worst first (drain, investigate, ok; then by lowest z). For each flagged node
the *leading cause* is the most severe finding it has that the group majority does not, machine
findings (causes) before bench-result findings (symptoms); the *differing facts* are the machine
facts whose value differs from the group's majority value.

Pairwise: two-machine results between node pairs are scored the same way over all pairs; a node
in at least two failing pairs and in most of its own pairs is named as the common node.
"""

from __future__ import annotations

import fnmatch
import math
import statistics
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Iterator, Optional, Union

from gdrdiag.fleet_metrics import METRIC_NAMES
from gdrdiag.node_record import NodeFinding, NodeRecordHead, Skipped, load_records

Z_CONSTANT = 0.6745
_SEVERITY_RANK = {"FAIL": 0, "WARN": 1, "INFO": 2}
LEVELS = ("drain", "investigate", "ok")


# --------------------------------------------------------------------------------------------
# options and baseline
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class BaselineRule:
    """Minimum values for the SKUs whose key matches ``sku`` (an exact key or a glob)."""

    sku: str
    minimum: dict[str, float]


@dataclass(frozen=True)
class FleetOptions:
    """Thresholds; the defaults are the issue's (investigate below z -2, drain below -3)."""

    investigate_z: float = -2.0
    drain_z: float = -3.0
    rel_floor: float = 0.01
    min_group: int = 3
    baseline: tuple[BaselineRule, ...] = ()

    def minimums(self, sku: str) -> dict[str, float]:
        """Baseline minimums for one SKU key (later rules override earlier ones)."""
        out: dict[str, float] = {}
        for rule in self.baseline:
            if rule.sku == sku or fnmatch.fnmatchcase(sku, rule.sku):
                out.update(rule.minimum)
        return out


def parse_baseline(text: str) -> tuple[BaselineRule, ...]:
    """Parse a baseline TOML document; ValueError with a one-line reason when it is malformed.

    Format::

        [[sku]]
        match = "*H100* | *ConnectX-7* | * | bare metal"   # exact SKU key or a glob
        rdma_device_mr_gbps = 360.0                           # minimum per metric
        copy_h2d_pinned_gbs = 50.0
    """
    try:
        import tomllib  # type: ignore[import-not-found]
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib  # type: ignore[no-redef]
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(f"not valid TOML: {exc}") from None
    entries = doc.get("sku")
    if not isinstance(entries, list) or not entries:
        raise ValueError("expected one or more [[sku]] tables")
    rules = []
    for i, entry in enumerate(entries):
        if not isinstance(entry, dict) or not isinstance(entry.get("match"), str):
            raise ValueError(f'[[sku]] #{i + 1}: needs match = "SKU key or glob"')
        minimum: dict[str, float] = {}
        for name, value in entry.items():
            if name == "match":
                continue
            if name not in METRIC_NAMES:
                raise ValueError(
                    f"[[sku]] #{i + 1}: unknown metric {name!r} (known: {', '.join(METRIC_NAMES)})"
                )
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
                raise ValueError(f"[[sku]] #{i + 1}: {name} must be a number")
            minimum[name] = float(value)
        rules.append(BaselineRule(sku=entry["match"], minimum=minimum))
    return tuple(rules)


# --------------------------------------------------------------------------------------------
# analysis results
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class MetricStats:
    """One metric over one SKU group."""

    metric: str
    n: int
    median: float
    mad: float
    scale: float  # the spread used for z: max(MAD, rel_floor * |median|)


@dataclass(frozen=True)
class MetricScore:
    """One node's standing on one metric: value, robust z, ratio to the group median, and why it is bad."""

    metric: str
    value: Optional[float]
    z: Optional[float] = None
    ratio: Optional[float] = None
    minimum: Optional[float] = None
    problem: str = ""  # "" | "low" | "below baseline" | "missing: <reason>"


# The leading diagnosed cause of a flagged node is one of its own findings (one the group majority lacks).
Cause = NodeFinding


@dataclass(frozen=True)
class FactDiff:
    """A machine fact where this node differs from its group's majority."""

    name: str
    value: Optional[str]
    majority: str
    share: float  # fraction of the group holding the majority value


@dataclass(frozen=True)
class NodeVerdict:
    """One node: its level, worst score, scores per metric, leading cause and differing facts."""

    host: str
    sku: str
    level: str  # drain | investigate | ok
    worst_metric: Optional[str]
    worst_z: Optional[float]
    worst_ratio: Optional[float]
    scores: tuple[MetricScore, ...]
    cause: Optional[Cause] = None
    differing: tuple[FactDiff, ...] = ()
    reasons: tuple[str, ...] = ()
    exit_code: int = 0


@dataclass(frozen=True)
class GroupSummary:
    """One SKU group: size and per-metric statistics."""

    sku: str
    nodes: int
    stats: tuple[MetricStats, ...]
    note: str = ""


@dataclass(frozen=True)
class PairSuspect:
    """A node common to failing pairwise results."""

    host: str
    failing_pairs: int
    pairs: int
    peers: tuple[str, ...]


@dataclass(frozen=True)
class FleetResult:
    """Everything ``gdrdiag fleet`` reports: groups, nodes worst first, pair suspects, what was skipped."""

    groups: tuple[GroupSummary, ...]
    nodes: tuple[NodeVerdict, ...]
    pair_suspects: tuple[PairSuspect, ...] = ()
    skipped: tuple[Skipped, ...] = ()
    options: FleetOptions = field(default_factory=FleetOptions)

    @property
    def flagged(self) -> tuple[NodeVerdict, ...]:
        """Nodes at drain or investigate, worst first."""
        return tuple(n for n in self.nodes if n.level != "ok")

    def skipped_counts(self) -> dict[str, int]:
        """Skipped records counted by reason (reasons with numbers folded to their first words)."""
        return dict(Counter(_reason_class(s.reason) for s in self.skipped))


def _reason_class(reason: str) -> str:
    return reason.split(":")[0].split("(")[0].strip()[:60]


# --------------------------------------------------------------------------------------------
# analysis
# --------------------------------------------------------------------------------------------


def robust_stats(metric: str, values: list[float], rel_floor: float) -> MetricStats:
    """Median, MAD and the scale used for robust z (see the module docstring for MAD = 0)."""
    med = statistics.median(values)
    mad = statistics.median([abs(v - med) for v in values])
    scale = max(mad, rel_floor * abs(med))
    return MetricStats(metric=metric, n=len(values), median=med, mad=mad, scale=scale)


def robust_z(value: float, stats: MetricStats) -> float:
    """0.6745 * (x - median) / scale; 0 when the scale is 0 and x is the median."""
    if stats.scale == 0:
        return 0.0 if value == stats.median else math.copysign(1e9, value - stats.median)
    return Z_CONSTANT * (value - stats.median) / stats.scale


def analyse(
    records: Iterable[NodeRecordHead], options: FleetOptions = FleetOptions(), skipped: Iterable[Skipped] = ()
) -> FleetResult:
    """Group, score, flag and rank; pure."""
    groups: dict[str, list[NodeRecordHead]] = defaultdict(list)
    for r in records:
        groups[r.sku].append(r)
    summaries = []
    verdicts: list[NodeVerdict] = []
    for sku in sorted(groups, key=lambda s: (-len(groups[s]), s)):
        members = groups[sku]
        summary, nodes = _analyse_group(sku, members, options)
        summaries.append(summary)
        verdicts.extend(nodes)
    verdicts.sort(key=_rank_key)
    all_records = [r for g in groups.values() for r in g]
    return FleetResult(
        groups=tuple(summaries),
        nodes=tuple(verdicts),
        pair_suspects=tuple(_pair_suspects(all_records, options)),
        skipped=tuple(skipped),
        options=options,
    )


def _rank_key(v: NodeVerdict) -> tuple:
    worst = next((s for s in v.scores if s.metric == v.worst_metric), None)
    if worst is not None and worst.value is None:
        z = -math.inf  # a missing metric ranks below any measured value
    else:
        z = v.worst_z if v.worst_z is not None else 0.0
    return (LEVELS.index(v.level), z, v.host)


@dataclass(frozen=True)
class _Group:
    """What a node is judged against: its SKU group's statistics, majority findings and facts."""

    sku: str
    n: int
    scored: bool
    metric_names: list[str]
    stats: dict[str, MetricStats]
    present: dict[str, int]
    finding_counts: Counter
    majority_facts: dict[str, tuple[str, float]]
    minimums: dict[str, float]


def _group(sku: str, members: list[NodeRecordHead], options: FleetOptions) -> _Group:
    """Robust statistics per metric, how many nodes measured it, majority findings and facts."""
    n = len(members)
    metric_names = sorted({m for r in members for m in r.metrics} | {m for r in members for m in r.missing})
    stats: dict[str, MetricStats] = {}
    present: dict[str, int] = {}
    for metric in metric_names:
        values = [r.metrics[metric] for r in members if metric in r.metrics]
        present[metric] = len(values)
        if values:
            stats[metric] = robust_stats(metric, values, options.rel_floor)
    finding_counts: Counter = Counter()
    for r in members:
        finding_counts.update({(f.code, f.subject) for f in r.findings})
    fact_counts: dict[str, Counter] = defaultdict(Counter)
    for r in members:
        for name, value in r.facts.items():
            fact_counts[name][value] += 1
    majority_facts = {}
    for name, counts in fact_counts.items():
        value, count = counts.most_common(1)[0]
        majority_facts[name] = (value, count / n)
    return _Group(
        sku,
        n,
        n >= options.min_group,
        metric_names,
        stats,
        present,
        finding_counts,
        majority_facts,
        options.minimums(sku),
    )


def _analyse_group(sku: str, members: list[NodeRecordHead], options: FleetOptions):
    """Each member scored against its group; the group's summary."""
    g = _group(sku, members, options)
    nodes = [_verdict(r, g, options) for r in members]
    note = (
        ""
        if g.scored
        else f"fewer than {options.min_group} nodes: no z-scores (baseline and missing metrics only)"
    )
    summary = GroupSummary(
        sku=sku, nodes=g.n, stats=tuple(g.stats[m] for m in g.metric_names if m in g.stats), note=note
    )
    return summary, nodes


def _scores(r: NodeRecordHead, g: _Group, options: FleetOptions) -> tuple[list[MetricScore], list[str], str]:
    """(scores, reasons, level) of one node's metrics: missing, below baseline, or a low robust z."""
    scores, reasons, level = [], [], "ok"
    for metric in g.metric_names:
        st = g.stats.get(metric)
        value = r.metrics.get(metric)
        minimum = g.minimums.get(metric)
        if value is None:
            if g.present[metric] * 2 > g.n:  # the majority measured it, this node did not
                why = r.missing.get(metric, "not measured")
                scores.append(MetricScore(metric, None, minimum=minimum, problem=f"missing: {why}"))
                reasons.append(f"{metric} missing ({why})")
                level = _worse(level, "drain")
            continue
        z = robust_z(value, st) if (st is not None and g.scored) else None
        ratio = value / st.median if st is not None and st.median else None
        problem = ""
        if minimum is not None and value < minimum:
            problem = "below baseline"
            reasons.append(f"{metric} {value:.4g} below baseline {minimum:.4g}")
            level = _worse(level, "drain")
        if z is not None and z <= options.investigate_z:
            problem = problem or "low"
            reasons.append(f"{metric} z {z:.1f}")
            level = _worse(level, "drain" if z <= options.drain_z else "investigate")
        scores.append(MetricScore(metric, value, z=z, ratio=ratio, minimum=minimum, problem=problem))
    return scores, reasons, level


def _verdict(r: NodeRecordHead, g: _Group, options: FleetOptions) -> NodeVerdict:
    """One node: its level, worst metric, and for a flagged node the leading cause and differing facts."""
    scores, reasons, level = _scores(r, g, options)
    own = [f for f in r.findings if g.finding_counts[(f.code, f.subject)] * 2 <= g.n or g.n == 1]
    drift = [f for f in own if f.origin == "machine" and f.severity in ("FAIL", "WARN")] if g.n > 1 else []
    if drift and level == "ok":
        level = "investigate"
        reasons.append(f"{drift[0].code} not seen on the group majority")
    cause = None
    differing: tuple[FactDiff, ...] = ()
    if level != "ok":
        own.sort(key=lambda f: (f.origin != "machine", _SEVERITY_RANK.get(f.severity, 3)))
        if own:
            f = own[0]
            cause = f
        differing = tuple(_differing(r, g.majority_facts))
    worst = _worst(scores)
    return NodeVerdict(
        host=r.host,
        sku=g.sku,
        level=level,
        worst_metric=worst.metric if worst else None,
        worst_z=_worst_z(worst),
        worst_ratio=worst.ratio if worst else None,
        scores=tuple(scores),
        cause=cause,
        differing=differing,
        reasons=tuple(reasons),
        exit_code=r.exit_code,
    )


def _worse(a: str, b: str) -> str:
    return a if LEVELS.index(a) <= LEVELS.index(b) else b


def _worst(scores: list[MetricScore]) -> Optional[MetricScore]:
    missing = [s for s in scores if s.value is None]
    if missing:
        return missing[0]
    with_z = [s for s in scores if s.z is not None]
    if with_z:
        return min(with_z, key=lambda s: s.z if s.z is not None else 0.0)
    below = [s for s in scores if s.problem]
    return below[0] if below else None


def _worst_z(s: Optional[MetricScore]) -> Optional[float]:
    return None if s is None else s.z


def _differing(r: NodeRecordHead, majority: dict[str, tuple[str, float]]) -> Iterator[FactDiff]:
    for name, (value, share) in majority.items():
        if share <= 0.5:
            continue
        mine = r.facts.get(name)
        if mine != value:
            yield FactDiff(name=name, value=mine, majority=value, share=share)


def _pair_suspects(records: list[NodeRecordHead], options: FleetOptions) -> list[PairSuspect]:
    by_metric: dict[str, list[tuple[str, str, float]]] = defaultdict(list)
    for r in records:
        for p in r.pairs:
            by_metric[p.metric].append((r.host, p.peer, p.value))
    involved: Counter = Counter()
    failing: Counter = Counter()
    failing_peers: dict[str, set] = defaultdict(set)
    for metric, rows in by_metric.items():
        if len(rows) < options.min_group:
            continue
        st = robust_stats(metric, [v for _, _, v in rows], options.rel_floor)
        for a, b, v in rows:
            involved.update((a, b))
            if robust_z(v, st) <= options.investigate_z:
                failing.update((a, b))
                failing_peers[a].add(b)
                failing_peers[b].add(a)
    out = [
        PairSuspect(
            host=h, failing_pairs=failing[h], pairs=involved[h], peers=tuple(sorted(failing_peers[h]))
        )
        for h in failing
        if failing[h] >= 2 and failing[h] * 2 > involved[h]
    ]
    out.sort(key=lambda s: (-s.failing_pairs, s.host))
    return out


def load_and_analyse(path: Union[str, Path], options: FleetOptions = FleetOptions()) -> FleetResult:
    """Convenience: :func:`gdrdiag.node_record.load_records` then :func:`analyse`."""
    loaded = load_records(Path(path))
    return analyse(loaded.records, options, skipped=loaded.skipped)
