"""Many nodes' records -> each node against its SKU's intended configuration and the fleet's numbers.

Pure: works on :class:`~gdrdiag.model.fleet.NodeRecordHead` values (metrics, facts and findings
extracted by :mod:`gdrdiag.fleet_metrics` when each record was written); touches no hardware.
The result types live in :mod:`gdrdiag.model.fleet`.

**The SKU is what a node should be**, not what it has. Records are first keyed by their own
machine (GPU models and count, NIC models and count, NVIDIA driver, bare metal or VM); a key
held by fewer than a quarter as many nodes as a similar key (same platform, same GPU or NIC
models, or no GPU and no NIC at all) is *folded* into it: a node that lost a GPU, a NIC or its
RDMA driver, or runs another driver, is judged against the SKU it should be, not made a SKU of
its own. The intended value
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

import itertools
import math
import re
import statistics
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Optional, Union

from gdrdiag.fleet_metrics import METRIC_NAMES
from gdrdiag.model.fleet import (
    LEVELS,
    BaselineRule,
    Cause,
    FactDiff,
    FleetOptions,
    FleetResult,
    GroupSummary,
    MetricScore,
    MetricStats,
    NodeFinding,
    NodeVerdict,
    PairSuspect,
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
    "MetricScore",
    "MetricStats",
    "NodeVerdict",
    "PairSuspect",
    "analyse",
    "load_and_analyse",
    "parse_baseline",
    "robust_stats",
    "robust_z",
]

Z_CONSTANT = 0.6745
_SEVERITY_RANK = {"FAIL": 0, "WARN": 1, "INFO": 2}
FOLD = 4  # a SKU key with fewer than 1/FOLD of a similar key's nodes is that key's node gone wrong
_KNOWN = frozenset(METRIC_NAMES)

# Declared facts in the baseline file: key -> (type, fact names it sets: exact, or a prefix + "*").
EXPECT_KEYS: dict[str, tuple[type, str]] = {
    "gpus": (int, "gpus"),
    "nics": (int, "rdma devices"),
    "nvidia_driver": (str, "nvidia driver"),
    "kernel": (str, "kernel"),
    "nic_firmware": (str, "firmware *"),
    "mtu": (int, "mtu *"),
    "gpu_link": (str, "link gpu *"),
    "nic_link": (str, "link nic *"),
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
        gpu_link = "32 GT/s x16"
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
# SKU: own key -> intended key
# --------------------------------------------------------------------------------------------


_COUNTED = re.compile(r"^\d+x ")


def _models(counted: str) -> frozenset[str]:
    """``"4x NVIDIA H100, 1x X"`` -> {"NVIDIA H100", "X"}; "none"/"unknown" -> empty."""
    if counted in ("", "none", "unknown"):
        return frozenset()
    return frozenset(_COUNTED.sub("", part) for part in counted.split(", "))


def _similar(a: dict[str, str], b: dict[str, str]) -> bool:
    """Same platform and the same GPU models or the same NIC models (the rest may have drifted)."""
    if not a or not b or a.get("platform") != b.get("platform") or a.get("platform") == "unknown":
        return False
    ga, gb = _models(a.get("gpus", "")), _models(b.get("gpus", ""))
    na, nb = _models(a.get("nics", "")), _models(b.get("nics", ""))
    if not (ga or na) or not (gb or nb):  # a node that lost every GPU and NIC: its platform says where
        return True
    return bool(ga and ga == gb) or bool(na and na == nb)


def intended_skus(records: list[NodeRecordHead]) -> dict[str, str]:
    """{own SKU key: intended SKU key}: rare keys folded into the similar key most nodes have."""
    counts = Counter(r.sku for r in records)
    parts: dict[str, dict[str, str]] = {}
    for r in records:
        parts.setdefault(r.sku, r.sku_parts)
    intended: list[str] = []
    out: dict[str, str] = {}
    for key in sorted(counts, key=lambda k: (-counts[k], k)):
        target = next(
            (t for t in intended if counts[key] * FOLD < counts[t] and _similar(parts[key], parts[t])), None
        )
        if target is None:
            intended.append(key)
        out[key] = target or key
    return out


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
    records = list(records)
    seen = {r.host for r in records}
    missing = tuple(sorted({h for h in expected_hosts if h not in seen}))
    mapping = intended_skus(records)
    groups: dict[str, list[NodeRecordHead]] = defaultdict(list)
    for r in records:
        groups[mapping[r.sku]].append(r)
    summaries = []
    verdicts: list[NodeVerdict] = []
    for sku in sorted(groups, key=lambda s: (-len(groups[s]), s)):
        summary, nodes = _analyse_group(sku, groups[sku], options)
        summaries.append(summary)
        verdicts.extend(nodes)
    verdicts.sort(key=_rank_key)
    return FleetResult(
        groups=tuple(summaries),
        nodes=tuple(verdicts),
        pair_suspects=tuple(_pair_suspects(records, options)),
        skipped=tuple(skipped),
        options=options,
        missing_hosts=missing,
    )


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
    """What a node is judged against: its SKU group's statistics, majority findings and facts."""

    sku: str
    n: int
    scored: bool
    metric_names: list[str]
    stats: dict[str, MetricStats]
    present: dict[str, int]
    finding_counts: Counter
    intended: dict[str, tuple[str, float]]  # fact -> (intended value, share; 1.0 when declared)
    minimums: dict[str, float]
    device_facts: tuple[str, ...] = ()  # intended per-device facts compared one by one (sorted)


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
    finding_counts: Counter = Counter()
    for r in members:
        finding_counts.update({(f.code, f.subject, f.severity) for f in r.findings})
    fact_counts: dict[str, Counter] = defaultdict(Counter)
    for r in members:
        for name, value in r.facts.items():
            fact_counts[name][value] += 1
    intended: dict[str, tuple[str, float]] = {}
    for name, counts in fact_counts.items():
        value, count = counts.most_common(1)[0]
        if count * 2 > n:
            intended[name] = (value, count / n)
    for key, value in options.expected(sku).items():
        fact = EXPECT_KEYS[key][1]
        if fact.endswith("*"):
            for name in [k for k in fact_counts if k.startswith(fact[:-1])]:
                intended[name] = (value, 1.0)
        else:
            intended[fact] = (value, 1.0)
    return _Group(
        sku,
        n,
        n >= options.min_group,
        metric_names,
        stats,
        present,
        finding_counts,
        intended,
        options.minimums(sku),
        tuple(sorted(n for n in intended if n.startswith(_DEVICE_FACTS))),
    )


def _analyse_group(sku: str, members: list[NodeRecordHead], options: FleetOptions):
    """Each member scored against its group; the group's summary with flag counts."""
    g = _group(sku, members, options)
    nodes = [_verdict(r, g, options) for r in members]
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
        folded=sum(1 for r in members if r.sku != sku),
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


_DEVICE_FACTS = ("firmware ", "mtu ", "link gpu ", "link nic ")
_LINK = re.compile(r"^([0-9.]+) GT/s x(\d+)$")


def _int(text: Optional[str]) -> Optional[int]:
    try:
        return int(text) if text is not None else None
    except ValueError:
        return None


def _fleet_finding(code: str, severity: str, title: str, subject: str = "") -> NodeFinding:
    return NodeFinding(
        code=code, severity=severity, title=title[:300], subject=subject[:120], origin="machine"
    )


def sku_drift(r: NodeRecordHead, g: _Group) -> list[NodeFinding]:
    """FLEET-* findings: every way this node's machine differs from its SKU's intended one."""
    if g.n < 2 and not any(share == 1.0 for _, share in g.intended.values()):
        return []
    out = _lost_devices(r.facts, g)
    for fact, code, what in (
        ("nvidia driver", "FLEET-DRIVER-DRIFT", "NVIDIA driver"),
        ("kernel", "FLEET-KERNEL-DRIFT", "kernel"),
        ("iommu mode", "FLEET-IOMMU-DRIFT", "IOMMU mode"),
    ):
        mine, wanted = r.facts.get(fact), g.intended.get(fact)
        if mine is not None and wanted is not None and mine != wanted[0]:
            out.append(_fleet_finding(code, "WARN", f"{what} {mine}, the SKU's is {wanted[0]}"))
    for name in g.device_facts:
        mine = r.facts.get(name)
        wanted = g.intended[name][0]
        if mine is not None and mine != wanted:
            found = _device_drift(name, mine, wanted)
            if found is not None:
                out.append(found)
    return out


def _lost_devices(facts: dict[str, str], g: _Group) -> list[NodeFinding]:
    """FLEET-GPU-MISSING, FLEET-NIC-MISSING, FLEET-RDMA-DRIVER-MISSING from the inventory facts."""
    out = []

    def want(name: str) -> Optional[int]:
        got = g.intended.get(name)
        return _int(got[0]) if got else None

    def not_seen(prefix: str) -> str:
        lost = sorted(n[len(prefix) :] for n in g.intended if n.startswith(prefix) and n not in facts)
        return f" (not seen: {', '.join(lost[:8])})" if lost else ""

    gpus, want_gpus = _int(facts.get("gpus")) or 0, want("gpus")
    if want_gpus is not None and gpus < want_gpus:
        out.append(
            _fleet_finding("FLEET-GPU-MISSING", "FAIL", f"{gpus} of {want_gpus} GPUs{not_seen('link gpu ')}")
        )
    rdma, want_rdma = _int(facts.get("rdma devices")) or 0, want("rdma devices")
    if want_rdma is not None and rdma < want_rdma:
        funcs, want_funcs = _int(facts.get("nic functions")), want("nic functions")
        if funcs is not None and want_funcs is not None and funcs >= want_funcs:
            title = (
                f"{rdma} of {want_rdma} RDMA devices though all {funcs} NIC PCI functions are "
                "present: the RDMA driver (mlx5_core / mlx5_ib) is not bound or not loaded"
            )
            out.append(_fleet_finding("FLEET-RDMA-DRIVER-MISSING", "FAIL", title))
        else:
            title = f"{rdma} of {want_rdma} RDMA NICs{not_seen('link nic ')}"
            out.append(_fleet_finding("FLEET-NIC-MISSING", "FAIL", title))
    return out


def _device_drift(name: str, mine: str, wanted: str) -> Optional[NodeFinding]:
    """One per-device fact (firmware, MTU, link) that differs from the SKU's, as a finding."""
    if name.startswith("firmware "):
        return _fleet_finding(
            "FLEET-FIRMWARE-DRIFT", "WARN", f"{name[9:]} firmware {mine}, the SKU's is {wanted}", name[9:]
        )
    if name.startswith("mtu "):
        return _fleet_finding(
            "FLEET-MTU-DRIFT", "WARN", f"{name[4:]} active MTU {mine}, the SKU's is {wanted}", name[4:]
        )
    a, b = _LINK.match(mine), _LINK.match(wanted)
    if not a or not b:
        return None
    speed, width = float(a.group(1)), int(a.group(2))
    w_speed, w_width = float(b.group(1)), int(b.group(2))
    if width >= w_width and speed >= w_speed:
        return None
    return _fleet_finding(
        "FLEET-LINK-BELOW-SKU",
        "FAIL" if width < w_width else "WARN",
        f"{name[5:]} link {mine}, the SKU's is {wanted}",
        name[5:].split(" ", 1)[-1],
    )


_INVENTORY_LOST = frozenset({"FLEET-GPU-MISSING", "FLEET-NIC-MISSING", "FLEET-RDMA-DRIVER-MISSING"})


def _cause_key(f: NodeFinding) -> tuple:
    """Causes before symptoms; severity; then a measured loss's cause, register evidence, inferred causes."""
    symptom = f.origin != "machine" and f.explains is None
    if f.code in _INVENTORY_LOST:  # a device or driver that is not there: every loss on it follows
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


def _verdict(r: NodeRecordHead, g: _Group, options: FleetOptions) -> NodeVerdict:
    """One node: its level, worst metric, and for a flagged node the leading cause and differing facts."""
    scores, reasons, level = _scores(r, g, options)
    drift = sku_drift(r, g)
    for f in drift:
        level = _worse(level, "drain" if f.severity == "FAIL" else "investigate")
        reasons.append(f"{f.code} {f.title}")
    own = [f for f in r.findings if g.finding_counts[(f.code, f.subject, f.severity)] * 2 <= g.n or g.n == 1]
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
        differing = tuple(itertools.islice(_differing(r, g.intended), MAX_DIFFERING))
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
        own_sku=r.sku if r.sku != g.sku else "",
        drift=tuple(drift),
        why=why,
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
