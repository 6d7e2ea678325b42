"""Fleet's plain data: node record heads, options, and what ``gdrdiag fleet`` found.

Frozen dataclasses only; they import nothing else from gdrdiag. ``gdrdiag.node_record`` reads and
writes records, ``gdrdiag.fleet`` computes a :class:`FleetResult`, ``gdrdiag.render`` formats it.
"""

from __future__ import annotations

import fnmatch
from collections import Counter
from dataclasses import dataclass, field
from typing import Optional

RECORD_KIND = "gdrdiag-node-record"
# The record schema version: bumped whenever the facts a record carries change, so fleet can
# compare like with like. 1: metrics, findings, link/register/version facts, inventory counts.
# 2: adds NIC ports (rate, state), links as capable ("link cap ..."), GPU ordinals and NIC
# names per PCI address (see FACTS_SINCE).
RECORD_VERSION = 2
LEVELS = ("drain", "investigate", "ok")
# Fact-name prefixes first written by a record version: a record of an older version does not
# carry them, so for it they are unknown, never a difference (and never zero).
FACTS_SINCE: dict[int, tuple[str, ...]] = {
    2: ("port rate ", "port state ", "link cap ", "ordinal gpu ", "name nic "),
}


def fact_since(name: str) -> int:
    """The first record version that carries the fact ``name`` (1 for the original facts)."""
    for version, prefixes in FACTS_SINCE.items():
        if name.startswith(prefixes):
            return version
    return 1


# --------------------------------------------------------------------------------------------
# node records
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class NodeFinding:
    """A finding as fleet sees it; ``origin`` is ``machine`` (a cause) or ``results`` (a symptom).

    ``explains`` is the share of a measured loss the finding accounts for and ``basis`` how
    diagnose knows it (``measured`` | ``inferred``), for diagnose's cause findings only.
    Findings fleet itself makes (``FLEET-*``: a node that
    differs from its SKU) are ``machine`` findings.
    """

    code: str
    severity: str
    title: str
    subject: str = ""
    origin: str = "machine"
    explains: Optional[float] = None
    basis: Optional[str] = None


@dataclass(frozen=True)
class NodePair:
    """A two-machine result from this node (client) to ``peer``."""

    peer: str
    metric: str
    value: float


@dataclass(frozen=True)
class NodeRecordHead:
    """Everything in a node record except the Report itself (see ``gdrdiag.node_record``)."""

    host: str
    sku: str
    exit_code: int
    record: str = RECORD_KIND
    record_version: int = RECORD_VERSION
    created_utc: str = ""
    tool_version: str = ""
    sku_parts: dict[str, str] = field(default_factory=dict)
    metrics: dict[str, float] = field(default_factory=dict)
    missing: dict[str, str] = field(default_factory=dict)
    facts: dict[str, str] = field(default_factory=dict)
    findings: tuple[NodeFinding, ...] = ()
    pairs: tuple[NodePair, ...] = ()
    report_schema_version: int = 0
    report_chars: int = 0
    note: str = ""


@dataclass(frozen=True)
class Skipped:
    """A record that was not used, and why (one line)."""

    source: str
    reason: str


# --------------------------------------------------------------------------------------------
# options: thresholds, baselines and declared SKUs
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class BaselineRule:
    """For the SKUs whose key matches ``sku`` (exact or glob): metric minimums and declared facts.

    ``expect`` is the declared intended configuration (``gpus``, ``nics``, ``gpu_link``,
    ``nic_link``, ``nvidia_driver``, ``nic_firmware``, ``mtu``, ``kernel``) as text; a declared
    value replaces the group majority when nodes are compared with their SKU.
    """

    sku: str
    minimum: dict[str, float]
    expect: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class InventoryRule:
    """One line of an inventory file: hosts matching ``pattern`` (exact or glob) are meant to be ``sku``."""

    pattern: str
    sku: str


@dataclass(frozen=True)
class FleetOptions:
    """Thresholds (robust z on the fleet's own MAD, plus a relative floor), baselines, inventory."""

    investigate_z: float = -3.5
    drain_z: float = -5.0
    rel_floor: float = 0.01
    min_drop: float = 0.05
    min_group: int = 3
    baseline: tuple[BaselineRule, ...] = ()
    inventory: tuple[InventoryRule, ...] = ()

    def sku_for(self, host: str) -> Optional[str]:
        """The SKU the inventory names for ``host``: an exact name first, else the first matching glob."""
        for rule in self.inventory:
            if rule.pattern == host:
                return rule.sku
        for rule in self.inventory:
            if fnmatch.fnmatchcase(host, rule.pattern):
                return rule.sku
        return None

    def _rules(self, sku: str) -> list[BaselineRule]:
        return [r for r in self.baseline if r.sku == sku or fnmatch.fnmatchcase(sku, r.sku)]

    def minimums(self, sku: str) -> dict[str, float]:
        """Baseline minimums for one SKU key (later rules override earlier ones)."""
        out: dict[str, float] = {}
        for rule in self._rules(sku):
            out.update(rule.minimum)
        return out

    def expected(self, sku: str) -> dict[str, str]:
        """Declared facts for one SKU key (later rules override earlier ones)."""
        out: dict[str, str] = {}
        for rule in self._rules(sku):
            out.update(rule.expect)
        return out


# --------------------------------------------------------------------------------------------
# results
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class MetricStats:
    """One metric over one SKU group; ``flagged`` = nodes of the group flagged on this metric."""

    metric: str
    n: int
    median: float
    mad: float
    scale: float  # the spread used for z: max(MAD, rel_floor * |median|)
    flagged: int = 0


@dataclass(frozen=True)
class MetricScore:
    """One node's standing on one metric: value, robust z, ratio to the group median, and why it is bad."""

    metric: str
    value: Optional[float]
    z: Optional[float] = None
    ratio: Optional[float] = None
    minimum: Optional[float] = None
    problem: str = ""  # "" | "low" | "below baseline" | "missing: <reason>"


# The leading cause of a flagged node is one of its own findings (one the group majority lacks).
Cause = NodeFinding


@dataclass(frozen=True)
class FactDiff:
    """A machine fact where this node differs from its group's intended value."""

    name: str
    value: Optional[str]
    majority: str
    share: float  # fraction of the group holding the majority value (1.0 when declared)


@dataclass(frozen=True)
class NodeVerdict:
    """One node: its level, worst score, scores per metric, leading cause and differing facts.

    ``sku`` is the intended SKU the node is judged against; ``own_sku`` is the key its own
    machine gives when that differs (a lost GPU, another driver). ``why`` is one line saying
    why the node is flagged: its cause, or "no cause found" with the metric and its z.
    """

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
    own_sku: str = ""
    drift: tuple[NodeFinding, ...] = ()
    why: str = ""
    record_version: int = RECORD_VERSION
    tool_version: str = ""
    sku_from: str = "facts"  # "inventory" (named by --inventory) | "facts" (nearest by its own facts)


@dataclass(frozen=True)
class GroupSummary:
    """One SKU group: size, per-metric statistics, how many nodes it flagged."""

    sku: str
    nodes: int
    stats: tuple[MetricStats, ...]
    note: str = ""
    flagged: int = 0
    folded: int = 0  # nodes whose own SKU key differs from ``key``, judged against this one
    key: str = ""  # the own SKU key most of its nodes have (``sku`` is an inventory name or this key)


@dataclass(frozen=True)
class VersionCount:
    """How many nodes' records one (record version, tool version) wrote: a mixed fleet says so."""

    record_version: int
    tool_version: str
    nodes: int


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
    missing_hosts: tuple[str, ...] = ()  # expected (--expect-hosts) but no usable record
    versions: tuple[VersionCount, ...] = ()  # most nodes first; more than one = a mixed fleet

    @property
    def mixed(self) -> bool:
        """True when records of more than one record version or tool version were compared."""
        return len(self.versions) > 1

    @property
    def flagged(self) -> tuple[NodeVerdict, ...]:
        """Nodes at drain or investigate, worst first."""
        return tuple(n for n in self.nodes if n.level != "ok")

    def skipped_counts(self) -> dict[str, int]:
        """Skipped records counted by reason (reasons with numbers folded to their first words)."""
        return dict(Counter(_reason_class(s.reason) for s in self.skipped))


def _reason_class(reason: str) -> str:
    return reason.split(":")[0].split("(")[0].strip()[:60]
