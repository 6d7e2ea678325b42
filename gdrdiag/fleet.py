"""Many nodes' records -> each node against its SKU's intended configuration and the fleet's numbers.

Pure: works on :class:`~gdrdiag.model.fleet.NodeRecordHead` values (metrics, facts and findings
extracted by :mod:`gdrdiag.fleet_metrics` when each record was written); touches no hardware.
The result types live in :mod:`gdrdiag.model.fleet`.

**The SKU is what a node should be**, not what it has: the ``--inventory`` names it, else its
own machine's key is folded into the nearest SKU it could be (:mod:`gdrdiag.fleet_sku`): a node
that lost a GPU, a NIC or its RDMA driver, or runs another driver, is judged against the SKU it
should be, never a larger one it cannot be. Records of several versions or builds are compared
like with like: a fact a record's version does not carry is unknown, never zero
(:mod:`gdrdiag.fleet_drift`). The intended value
of each fact is the group majority (over half the group), or the value declared for the SKU in
the ``--baseline`` file. Every difference from it is a ``FLEET-*`` finding with its own
severity, whether or not a bench used that device:

=========================  ========  ============================================================
code                       severity  when
=========================  ========  ============================================================
FLEET-GPU-MISSING          FAIL      fewer GPUs than the SKU
FLEET-NIC-MISSING          FAIL      fewer RDMA NICs than the SKU, and their PCI functions gone too
FLEET-RDMA-DRIVER-MISSING  FAIL      the NIC PCI functions are there, RDMA devices are not
FLEET-LINK-BELOW-SKU       FAIL      a GPU/NIC link narrower than the SKU's (WARN: slower only)
FLEET-DRIVER-DRIFT         WARN      another NVIDIA driver version
FLEET-FIRMWARE-DRIFT       WARN      another NIC firmware version
FLEET-MTU-DRIFT            WARN      another RDMA port MTU
FLEET-PORT-RATE            FAIL      an RDMA port at half the SKU's rate or less (WARN: slower)
FLEET-PORT-STATE           FAIL      an RDMA port not in the SKU's state (DOWN where it is ACTIVE)
FLEET-KERNEL-DRIFT         WARN      another kernel release
FLEET-IOMMU-DRIFT          WARN      another IOMMU mode (e.g. translated where the SKU passes through)
=========================  ========  ============================================================

**Numbers**, per group and metric (every metric is higher-is-better; only the known metrics of
:data:`gdrdiag.fleet_metrics.METRIC_NAMES` are scored): ``median`` and ``MAD``; robust z =
0.6745 * (x - median) / scale with scale = ``max(MAD, rel_floor * |median|)`` (the noise
estimated from the fleet itself; the floor handles MAD = 0). A node is ``investigate`` at
z <= -3.5 and ``drain`` at z <= -5, and only when the drop is also at least ``min_drop`` (5 %)
of the median, so run-to-run noise of 1-3 % flags well under 0.5 % of healthy nodes. A metric
the group majority has and the node's case failed on is ``drain``; one the node never ran
(an interrupted or partial record) is ``investigate``. Below a ``--baseline`` minimum is
``drain``. A FAIL ``FLEET-*`` finding is ``drain``, a WARN one ``investigate``; a machine
FAIL/WARN finding the group majority lacks is at least ``investigate``.

**The leading cause** of a flagged node is one of its own findings (one the group majority does
not have with the same code, subject and severity), ranked: causes before symptoms (a symptom is
a bench finding that explains no share of a loss), then severity (kept as diagnose gave it),
then a lost device or driver (every loss on it follows from that), then a measured loss's
cause (diagnose's ``explains`` with basis ``measured``), then machine evidence (a register, a
module, a fact that differs from the SKU), then inferred causes, larger share first;
diagnose's findings before fleet's at the same rank. With none, the node says "no cause
found" with its metric and z.

Pairwise: two-machine results between node pairs are scored the same way over all pairs; a node
in at least two failing pairs and in most of its own pairs is named as the common node.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import statistics
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Optional, Union

from gdrdiag.fleet_drift import (
    DECLARED_DEVICE_FACTS,
    DEVICE_FACTS,
    INVENTORY_LOST,
    Intent,
    own_counts,
    sku_drift,
)
from gdrdiag.fleet_metrics import METRIC_NAMES
from gdrdiag.fleet_sku import intended_groups, intended_skus, parse_inventory
from gdrdiag.model.fleet import (
    LEVELS,
    BaselineRule,
    Cause,
    FactDiff,
    FleetOptions,
    FleetResult,
    GroupSummary,
    InventoryRule,
    MetricScore,
    MetricStats,
    NodeFinding,
    NodeVerdict,
    PairSuspect,
    VersionCount,
    fact_since,
)
from gdrdiag.node_record import NodeRecordHead, Skipped, load_records

__all__ = [
    "LEVELS",
    "BaselineRule",
    "Cause",
    "FactDiff",
    "FleetOptions",
    "FleetResult",
    "GroupSummary",
    "InventoryRule",
    "MetricScore",
    "MetricStats",
    "NodeVerdict",
    "PairSuspect",
    "analyse",
    "intended_skus",
    "load_and_analyse",
    "parse_baseline",
    "parse_inventory",
    "sku_drift",
    "robust_stats",
    "robust_z",
]

Z_CONSTANT = 0.6745
_SEVERITY_RANK = {"FAIL": 0, "WARN": 1, "INFO": 2}
_KNOWN = frozenset(METRIC_NAMES)

# Declared facts in the baseline file: key -> (type, fact names it sets: exact, or a prefix + "*").
EXPECT_KEYS: dict[str, tuple[type, str]] = {
    "gpus": (int, "gpus"),
    "nics": (int, "rdma devices"),
    "nvidia_driver": (str, "nvidia driver"),
    "kernel": (str, "kernel"),
    "nic_firmware": (str, "firmware *"),
    "mtu": (int, "mtu *"),
    "gpu_link_cap": (str, "link cap gpu *"),
    "nic_link": (str, "link nic *"),
}
# A GPU lowers its PCIe link when idle: the current link generation and width "may be reduced
# when the GPU is not in use" (nvidia-smi, https://docs.nvidia.com/deploy/nvidia-smi/index.html),
# and a record's GPU link is read with no traffic (GpuInfo.link_sampled_idle). A declared trained
# GPU link would flag every node of the SKU, so the baseline declares the link as capable instead.
REFUSED_KEYS = {
    "gpu_link": "gpu_link (the GPU link as trained) is read at idle, where a GPU lowers its link "
    '("may be reduced when the GPU is not in use", nvidia-smi), so it would flag every node; '
    'declare gpu_link_cap = "32 GT/s x16" (the link as capable, which idle does not change) '
    "instead",
}
MAX_BASELINE_CHARS = 1 << 20
MAX_DIFFERING = 24  # facts listed per flagged node (a lost NIC differs in dozens; the first say it)


# --------------------------------------------------------------------------------------------
# baseline / declared SKU file
# --------------------------------------------------------------------------------------------


def parse_baseline(text: str) -> tuple[BaselineRule, ...]:
    """Parse a baseline TOML document; ValueError with a one-line reason when it is malformed.

    Format::

        [[sku]]
        match = "*H100* | *ConnectX-7* | * | bare metal"   # exact SKU key or a glob
        rdma_device_mr_gbps = 360.0                           # minimum per metric
        gpus = 8                                              # declared facts (optional)
        nics = 8
        gpu_link_cap = "32 GT/s x16"                          # the GPUs' links as capable
        nvidia_driver = "550.90.07"
        nic_firmware = "28.39.1002"
        mtu = 4096
        kernel = "5.15.0-119-generic"
    """
    try:
        import tomllib  # type: ignore[import-not-found]
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib  # type: ignore[no-redef]
    if len(text) > MAX_BASELINE_CHARS:
        raise ValueError(f"larger than {MAX_BASELINE_CHARS} characters")
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(f"not valid TOML: {str(exc)[:200]}") from None
    except RecursionError:  # [[[[...]]]] nested thousands deep
        raise ValueError("not valid TOML: nested too deeply") from None
    entries = doc.get("sku")
    if not isinstance(entries, list) or not entries:
        raise ValueError("expected one or more [[sku]] tables")
    rules = []
    for i, entry in enumerate(entries):
        if not isinstance(entry, dict) or not isinstance(entry.get("match"), str):
            raise ValueError(f'[[sku]] #{i + 1}: needs match = "SKU key or glob"')
        minimum: dict[str, float] = {}
        expect: dict[str, str] = {}
        for name, value in entry.items():
            if name == "match":
                continue
            if name in REFUSED_KEYS:
                raise ValueError(f"[[sku]] #{i + 1}: {REFUSED_KEYS[name]}")
            if name in EXPECT_KEYS:
                kind = EXPECT_KEYS[name][0]
                if kind is int and (isinstance(value, bool) or not isinstance(value, int) or value < 0):
                    raise ValueError(f"[[sku]] #{i + 1}: {name} must be a whole number")
                if kind is str and not isinstance(value, str):
                    raise ValueError(f'[[sku]] #{i + 1}: {name} must be text ("...")')
                expect[name] = str(value)
                continue
            if name not in METRIC_NAMES:
                known = ", ".join((*METRIC_NAMES, *EXPECT_KEYS))
                raise ValueError(f"[[sku]] #{i + 1}: unknown key {name[:60]!r} (known: {known})")
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
                raise ValueError(f"[[sku]] #{i + 1}: {name} must be a number")
            minimum[name] = float(value)
        rules.append(BaselineRule(sku=entry["match"], minimum=minimum, expect=expect))
    return tuple(rules)


# --------------------------------------------------------------------------------------------
# statistics
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


# --------------------------------------------------------------------------------------------
# analysis
# --------------------------------------------------------------------------------------------


def analyse(
    records: Iterable[NodeRecordHead],
    options: FleetOptions = FleetOptions(),
    skipped: Iterable[Skipped] = (),
    expected_hosts: Iterable[str] = (),
) -> FleetResult:
    """Group by intended SKU, compare with it, score, flag and rank; pure.

    ``expected_hosts``: the nodes that should have written a record (the job's node list); those
    without a usable one are ``missing_hosts`` (a hung node, a node that wrote nothing).
    """
    records = [_with_counts(r) for r in records]
    seen = {r.host for r in records}
    missing = tuple(sorted({h for h in expected_hosts if h not in seen}))
    mapping = intended_groups(records, options)
    groups: dict[str, list[NodeRecordHead]] = defaultdict(list)
    for r in records:
        groups[mapping[r.host][0]].append(r)
    summaries = []
    verdicts: list[NodeVerdict] = []
    for sku in sorted(groups, key=lambda s: (-len(groups[s]), s)):
        summary, nodes = _analyse_group(sku, groups[sku], options, mapping)
        summaries.append(summary)
        verdicts.extend(nodes)
    verdicts.sort(key=_rank_key)
    versions = Counter((r.record_version, r.tool_version) for r in records)
    return FleetResult(
        groups=tuple(summaries),
        nodes=tuple(verdicts),
        pair_suspects=tuple(_pair_suspects(records, options)),
        skipped=tuple(skipped),
        options=options,
        missing_hosts=missing,
        versions=tuple(
            VersionCount(record_version=v, tool_version=t, nodes=c)
            for (v, t), c in sorted(versions.items(), key=lambda kv: (-kv[1], kv[0]))
        ),
    )


def _with_counts(r: NodeRecordHead) -> NodeRecordHead:
    """The record with its GPU and RDMA-device counts taken from its SKU key where its facts lack them."""
    extra = own_counts(r)
    return dataclasses.replace(r, facts={**r.facts, **extra}) if extra else r


def _rank_key(v: NodeVerdict) -> tuple:
    worst = next((s for s in v.scores if s.metric == v.worst_metric), None)
    if worst is not None and worst.value is None:
        z = -math.inf  # a missing metric ranks below any measured value
    else:
        z = v.worst_z if v.worst_z is not None else 0.0
    sev = _SEVERITY_RANK.get(v.cause.severity, 3) if v.cause is not None else 3
    return (LEVELS.index(v.level), sev, z, v.host)


@dataclass(frozen=True)
class _Group:
    """What a node is judged against: its SKU group's statistics, majority findings and facts.

    Like is compared with like: a finding is the node's own when most nodes of its group that
    ran the same gdrdiag build lack it (another build's rules may word or find things
    differently), and a fact's majority is taken over the nodes whose record version carries it.
    """

    sku: str
    n: int
    scored: bool
    metric_names: list[str]
    stats: dict[str, MetricStats]
    present: dict[str, int]
    finding_counts: dict[str, Counter]  # tool version -> finding key -> nodes; "" = the whole group
    build_nodes: dict[str, int]  # tool version -> nodes (only builds with at least min_group nodes)
    intent: Intent
    minimums: dict[str, float]
    key: str = ""  # the own SKU key most of the group's nodes have

    def own(self, r: NodeRecordHead) -> list[NodeFinding]:
        """The node's findings that most nodes of its group (of its build, where enough) lack."""
        if self.n == 1:
            return list(r.findings)
        build = r.tool_version if r.tool_version in self.build_nodes else ""
        counts, n = self.finding_counts[build], self.build_nodes.get(build, self.n)
        return [f for f in r.findings if counts[(f.code, f.subject, f.severity)] * 2 <= n]


def _group(sku: str, members: list[NodeRecordHead], options: FleetOptions) -> _Group:
    """Robust statistics per known metric, how many nodes measured it, majority findings and facts."""
    n = len(members)
    metric_names = sorted(
        ({m for r in members for m in r.metrics} | {m for r in members for m in r.missing}) & _KNOWN
    )
    stats: dict[str, MetricStats] = {}
    present: dict[str, int] = {}
    for metric in metric_names:
        values = [r.metrics[metric] for r in members if metric in r.metrics]
        present[metric] = len(values)
        if values:
            stats[metric] = robust_stats(metric, values, options.rel_floor)
    builds = Counter(r.tool_version for r in members)
    build_nodes = {b: c for b, c in builds.items() if c >= options.min_group}
    finding_counts: dict[str, Counter] = defaultdict(Counter)
    for r in members:
        keys = {(f.code, f.subject, f.severity) for f in r.findings}
        finding_counts[""].update(keys)
        if r.tool_version in build_nodes:
            finding_counts[r.tool_version].update(keys)
    fact_counts: dict[str, Counter] = defaultdict(Counter)
    for r in members:
        for name, value in r.facts.items():
            fact_counts[name][value] += 1
    by_version = Counter(r.record_version for r in members)
    intended: dict[str, tuple[str, float]] = {}
    for name, counts in fact_counts.items():
        since = fact_since(name)
        carriers = sum(c for v, c in by_version.items() if v >= since)  # records that carry it
        value, count = counts.most_common(1)[0]
        if count * 2 > carriers:
            intended[name] = (value, count / carriers)
    declared_caps: set[str] = set()
    for key, value in options.expected(sku).items():
        fact = EXPECT_KEYS[key][1]
        if fact.endswith("*"):
            for name in [k for k in fact_counts if k.startswith(fact[:-1])]:
                intended[name] = (value, 1.0)
                if name.startswith(DECLARED_DEVICE_FACTS):
                    declared_caps.add(name)
        else:
            intended[fact] = (value, 1.0)
    device = sorted(k for k in intended if k.startswith(DEVICE_FACTS) or k in declared_caps)
    intent = Intent(n, intended, tuple(device))
    return _Group(
        sku,
        n,
        n >= options.min_group,
        metric_names,
        stats,
        present,
        finding_counts,
        build_nodes,
        intent,
        options.minimums(sku),
        Counter(r.sku for r in members).most_common(1)[0][0],
    )


def _analyse_group(
    sku: str, members: list[NodeRecordHead], options: FleetOptions, mapping: dict[str, tuple[str, str]]
):
    """Each member scored against its group; the group's summary with flag counts."""
    g = _group(sku, members, options)
    nodes = [_verdict(r, g, options, mapping[r.host][1]) for r in members]
    note = (
        ""
        if g.scored
        else f"fewer than {options.min_group} nodes: no z-scores (baseline, SKU and missing metrics only)"
    )
    per_metric = Counter(s.metric for v in nodes for s in v.scores if s.problem)
    stats = tuple(
        MetricStats(**{**st.__dict__, "flagged": per_metric.get(m, 0)})
        for m in g.metric_names
        if (st := g.stats.get(m)) is not None
    )
    summary = GroupSummary(
        sku=sku,
        nodes=g.n,
        stats=stats,
        note=note,
        flagged=sum(1 for v in nodes if v.level != "ok"),
        folded=sum(1 for r in members if r.sku != g.key),
        key=g.key,
    )
    return summary, nodes


def _scores(r: NodeRecordHead, g: _Group, options: FleetOptions) -> tuple[list[MetricScore], list[str], str]:
    """(scores, reasons, level) of one node's metrics: missing, below baseline, or low (z and floor)."""
    scores, reasons, level = [], [], "ok"
    for metric in g.metric_names:
        st = g.stats.get(metric)
        value = r.metrics.get(metric)
        minimum = g.minimums.get(metric)
        if value is None:
            if g.present[metric] * 2 > g.n:  # the majority measured it, this node did not
                if metric in r.missing:
                    why, worse = r.missing[metric], "drain"
                else:
                    why, worse = "not measured: incomplete record", "investigate"
                scores.append(MetricScore(metric, None, minimum=minimum, problem=f"missing: {why}"))
                reasons.append(f"{metric} missing ({why})")
                level = _worse(level, worse)
            continue
        z = robust_z(value, st) if (st is not None and g.scored) else None
        ratio = value / st.median if st is not None and st.median else None
        problem = ""
        if minimum is not None and value < minimum:
            problem = "below baseline"
            reasons.append(f"{metric} {value:.4g} below baseline {minimum:.4g}")
            level = _worse(level, "drain")
        dropped = ratio is None or ratio <= 1.0 - options.min_drop
        if z is not None and z <= options.investigate_z and dropped:
            problem = problem or "low"
            reasons.append(f"{metric} z {z:.1f}" + (f", {ratio:.2f} of median" if ratio is not None else ""))
            level = _worse(level, "drain" if z <= options.drain_z else "investigate")
        scores.append(MetricScore(metric, value, z=z, ratio=ratio, minimum=minimum, problem=problem))
    return scores, reasons, level


# --------------------------------------------------------------------------------------------
# the node against its SKU
# --------------------------------------------------------------------------------------------


def _cause_key(f: NodeFinding) -> tuple:
    """Causes before symptoms; severity; then a measured loss's cause, register evidence, inferred causes."""
    symptom = f.origin != "machine" and f.explains is None
    if f.code in INVENTORY_LOST:  # a device or driver that is not there: every loss on it follows
        tier = -1
    elif f.explains is not None and f.basis == "measured":
        tier = 0
    elif f.origin == "machine":
        tier = 1
    else:
        tier = 2
    return (
        symptom,
        _SEVERITY_RANK.get(f.severity, 3),
        tier,
        -(f.explains or 0.0),
        f.code.startswith("FLEET-"),
    )


def leading_cause(own: list[NodeFinding]) -> Optional[NodeFinding]:
    """The node's leading cause among its own findings (see the module docstring), or None."""
    return min(own, key=_cause_key) if own else None


def _verdict(r: NodeRecordHead, g: _Group, options: FleetOptions, sku_from: str) -> NodeVerdict:
    """One node: its level, worst metric, and for a flagged node the leading cause and differing facts."""
    scores, reasons, level = _scores(r, g, options)
    drift = sku_drift(r, g.intent)
    for f in drift:
        level = _worse(level, "drain" if f.severity == "FAIL" else "investigate")
        reasons.append(f"{f.code} {f.title}")
    own = g.own(r)
    machine = [f for f in own if f.origin == "machine" and f.severity in ("FAIL", "WARN")] if g.n > 1 else []
    if machine and level == "ok":
        level = "investigate"
        reasons.append(f"{machine[0].code} not seen on the group majority")
    cause = None
    differing: tuple[FactDiff, ...] = ()
    worst = _worst(scores)
    why = ""
    if level != "ok":
        if r.note:
            reasons.append(f"record note: {r.note}")
        cause = leading_cause(own + drift)
        differing = tuple(itertools.islice(_differing(r, g.intent.intended), MAX_DIFFERING))
        why = _why(cause, worst)
    return NodeVerdict(
        host=r.host,
        sku=g.sku,
        level=level,
        worst_metric=worst.metric if worst else None,
        worst_z=worst.z if worst else None,
        worst_ratio=worst.ratio if worst else None,
        scores=tuple(scores),
        cause=cause,
        differing=differing,
        reasons=tuple(reasons),
        exit_code=r.exit_code,
        own_sku=r.sku if r.sku != g.key else "",
        drift=tuple(drift),
        why=why,
        record_version=r.record_version,
        tool_version=r.tool_version,
        sku_from=sku_from,
    )


def _why(cause: Optional[NodeFinding], worst: Optional[MetricScore]) -> str:
    """One line: the cause, or "no cause found" with the metric that flagged the node."""
    if cause is not None:
        return f"{cause.code}: {cause.title}"
    if worst is None:
        return "no cause found"
    if worst.value is None:
        return f"no cause found; {worst.metric} {worst.problem}"
    if worst.problem == "below baseline" and worst.minimum:
        return (
            f"no cause found; {worst.metric} {worst.value:.4g} below baseline {worst.minimum:.4g} "
            f"({worst.value / worst.minimum:.2f} of it)"
        )
    z = f"z {worst.z:.1f}" if worst.z is not None else "no z"
    ratio = f"{worst.ratio:.2f} of group median, " if worst.ratio is not None else ""
    return f"no cause found; {worst.metric} {ratio}{z}"


def _worse(a: str, b: str) -> str:
    return a if LEVELS.index(a) <= LEVELS.index(b) else b


def _worst(scores: list[MetricScore]) -> Optional[MetricScore]:
    """The score that flagged the node: a failed case, then never run, below baseline, lowest z."""
    best: Optional[MetricScore] = None
    best_key: tuple = ()
    for s in scores:
        if s.value is None:
            key: tuple = (0 if not s.problem.startswith("missing: not measured") else 1, 0.0)
        elif s.problem == "below baseline":
            key = (2, s.ratio if s.ratio is not None else 0.0)
        elif s.z is not None:
            key = (3, s.z)
        else:
            continue
        if best is None or key < best_key:
            best, best_key = s, key
    return best


def _differing(r: NodeRecordHead, intended: dict[str, tuple[str, float]]) -> Iterable[FactDiff]:
    for name, (value, share) in intended.items():
        mine = r.facts.get(name)
        if mine is None and fact_since(name) > r.record_version:
            continue  # a fact this record's version does not carry: unknown, not a difference
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
