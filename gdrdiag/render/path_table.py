"""Every numeric row against its own path (gdrdiag/pathmodel/judge.py), as text: formatting only."""

from __future__ import annotations

from collections import Counter
from typing import Sequence

from gdrdiag.model.path import Judgement, Verdict

_ORDER = {Verdict.LOST: 0, Verdict.SLOW: 1, Verdict.OK: 2, Verdict.BASELINE: 3, Verdict.UNJUDGED: 4}


def render_judgements(judgements: Sequence[Judgement], limit: int = 30) -> str:
    """Losses first, then healthy rows, then rungs; rows with no expectation grouped by reason.

    ``limit`` caps the judged rows shown (0: all); the count of the rest is stated.
    """
    judged = sorted(
        (j for j in judgements if j.ratio is not None), key=lambda j: (_ORDER[j.verdict], j.ratio or 0.0)
    )
    unjudged = Counter(j.reason or "no reason" for j in judgements if j.ratio is None)
    n_unjudged = sum(unjudged.values())
    lines = [f"Every row against its path ({len(judged)} judged, {n_unjudged} without an expectation)"]
    if judged:
        lines.append(f"  {'verdict':<8} {'measured':>9} {'expected':>9} {'ratio':>6}  row  [bound]")
    shown = judged if limit <= 0 else judged[:limit]
    for j in shown:
        lines.append(
            f"  {j.verdict.value:<8} {j.measured_gbytes_per_s:>9.2f} {j.expected_gbytes_per_s:>9.2f} "
            f"{j.ratio:>6.2f}  {j.label}  [{j.bound}]"
        )
    if len(shown) < len(judged):
        lines.append(f"  ... {len(judged) - len(shown)} more judged rows (--all-rows shows them)")
    for reason, n in unjudged.most_common():
        lines.append(f"  not judged ({n} row{'s' if n != 1 else ''}): {reason}")
    lines.append(
        "  (GB/s; expected: the narrowest link of the path at the row's size; a ratio < 0.80 is a loss)"
    )
    return "\n".join(lines)
