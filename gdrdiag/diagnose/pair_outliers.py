"""PERF-PAIR-OUTLIER: the ordered GPU pair slower than the node's other pairs at the same peer case.

Pure. peer-bench (and ``report`` on a node) measures every ordered pair the same way; on a board whose
GPUs are joined alike (NV18 to every other GPU, or one PCIe switch), one pair well below the others has
lost links, crosses another path, or has a busy GPU at one end. Judged as the GPUs are
(:func:`gdrdiag.diagnose.node_rules.below_siblings`): beyond the other pairs' noise, at least three
pairs, a minority below, and two cases agreeing or one case 30% below.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterable, Optional

from gdrdiag.diagnose._common import ev, finding
from gdrdiag.diagnose.inventory_rules import busy_reason
from gdrdiag.diagnose.node_rules import MIN_GPUS, MIN_SIZE_BYTES, below_evidence, below_siblings, corroborated
from gdrdiag.model.findings import Finding, Severity
from gdrdiag.model.machine import GpuPeerPair, MachineInfo
from gdrdiag.model.params import PeerParams
from gdrdiag.model.results import BenchResult, Status
from gdrdiag.units import format_size

if TYPE_CHECKING:  # pragma: no cover
    from gdrdiag.diagnose.context import Context
    from gdrdiag.model.report import Report

Pair = tuple[int, int]


@dataclass(frozen=True)
class PairBelow:
    """One peer case at which one ordered pair was below the node's other pairs."""

    pair: Pair
    index: int  # the row in the Report's results
    label: str  # the case: key, size, peer access
    value: float
    siblings_median: float
    tolerance: float
    unit: str = "GB/s"

    @property
    def share(self) -> float:
        """The pair's value over the other pairs' median."""
        return self.value / self.siblings_median if self.siblings_median > 0 else 0.0


def _peer_groups(results: "list[BenchResult] | tuple[BenchResult, ...]") -> dict[tuple, dict[Pair, int]]:
    """One-way peer cases measured on several ordered pairs: case -> pair -> row index (one pass)."""
    groups: dict[tuple, dict[Pair, int]] = {}
    for index, r in enumerate(results):
        p = r.params
        if not isinstance(p, PeerParams) or r.status is not Status.OK or r.value is None or r.value <= 0:
            continue
        if p.src_gpu is None or p.dst_gpu is None or p.bidirectional or p.library:
            continue
        if p.op in ("all_to_one", "all_to_all", "one_to_all"):  # many pairs at once, not one pair's path
            continue
        if not r.unit.startswith("GB/s") or (p.size_bytes or 0) < MIN_SIZE_BYTES:
            continue
        if r.key.startswith("peer_blocks"):  # many small copies: the host loop's cost, not the pair's path
            continue
        case = (r.key, p.size_bytes, p.peer_access, p.mover, p.op)
        groups.setdefault(case, {}).setdefault((p.src_gpu, p.dst_gpu), index)
    return groups


def _cause(machine: Optional[MachineInfo], pair: Pair) -> tuple[str, str]:
    """(what the facts show about this pair against the node's other pairs, or "", advice)."""
    if machine is None:
        return "", "Compare the pair's path (`nvidia-smi topo -m`) and both GPUs' processes with the others'."
    paths: dict[Pair, GpuPeerPair] = {(q.src_ordinal, q.dst_ordinal): q for q in machine.peers}
    mine = paths.get(pair)
    others = [q.path_text for k, q in paths.items() if k != pair]
    if mine is not None and others:
        typical = statistics.mode(others)
        if mine.path_text != typical:
            return (
                f"its path is {mine.path_text} while the node's other pairs' is {typical}",
                "`nvidia-smi nvlink -s` on both GPUs shows each link's state; a link missing after a GPU "
                "reset is a hardware case (on NVSwitch systems check nvidia-fabricmanager).",
            )
    gpus = {g.cuda_ordinal: g for g in machine.gpus if g.cuda_ordinal is not None}
    for end in pair:
        gpu = gpus.get(end)
        why = busy_reason(gpu) if gpu is not None else None
        if why:
            return f"GPU {end} was in use: {why}", "Run when both GPUs are idle, or move the other job."
    return "", "Compare the pair's path (`nvidia-smi topo -m`) and both GPUs' processes with the others'."


def pair_outlier_findings(
    results: "list[BenchResult] | tuple[BenchResult, ...]", machine: Optional[MachineInfo]
) -> Iterable[Finding]:
    """One PERF-PAIR-OUTLIER per ordered pair below the others, its worst case first."""
    below: list[PairBelow] = []
    for case, members in _peer_groups(results).items():
        if len(members) < MIN_GPUS:
            continue
        key, size, peer_access = case[0], case[1], case[2]
        label = f"{key} {format_size(size)} peer access {'on' if peer_access else 'off'}"
        for pair, median, tolerance in below_siblings({m: results[i] for m, i in members.items()}):
            index = members[pair]
            below.append(PairBelow(pair, index, label, float(results[index].value or 0.0), median, tolerance))
    for pair, cases in corroborated(below, lambda b: b.pair):
        worst = cases[0]
        cause, advice = _cause(machine, pair)
        evidence = below_evidence(cases, "the other pairs'")
        if cause:
            evidence.append(ev(f"peers[{pair[0]}->{pair[1]}]", cause))
        yield finding(
            "PERF-PAIR-OUTLIER",
            Severity.WARN,
            f"GPU {pair[0]} -> GPU {pair[1]} is slower than the node's other pairs: {worst.label.split()[0]} "
            f"at {worst.share:.2f} of their median" + (f"; {cause}" if cause else ""),
            evidence,
            advice,
            "",
            f"gpu{pair[0]}->gpu{pair[1]}",
        )


def pair_outliers(report: "Report", ctx: "Context") -> Iterable[Finding]:
    """PERF-PAIR-OUTLIER over a Report (the report rule)."""
    return pair_outlier_findings(report.results, ctx.machine)


RULES = (pair_outliers,)
