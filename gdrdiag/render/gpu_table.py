"""A node's GPUs side by side: one row per case measured on several GPUs, one column per GPU.

Formatting only: the rows and the outliers come from ``gdrdiag.diagnose.node_rules`` (which GPU ran
each row, which GPU is below its siblings), so the table and PERF-GPU-OUTLIER never disagree.
"""

from __future__ import annotations

from typing import Optional, Sequence

from gdrdiag.model.node import GpuOutlier, SiblingRow
from gdrdiag.model.results import BenchResult
from gdrdiag.render.results_table import num, table

OUTLIER_MARK = " <"


def render_gpus_side_by_side(
    results: Sequence[BenchResult],
    rows: Sequence[SiblingRow],
    outliers: Sequence[GpuOutlier] = (),
    width: Optional[int] = None,
) -> str:
    """The table (empty text when no case was measured on two GPUs or more).

    A cell marked ``<`` is a GPU below its siblings' median by more than the run's noise.
    """
    if not rows:
        return ""
    gpus = sorted({gpu for row in rows for gpu, _ in row.by_gpu})
    low = {(o.gpu, o.index) for o in outliers}
    body = []
    for row in rows:
        cells = dict(row.by_gpu)
        line = [row.label, row.unit]
        for gpu in gpus:
            index = cells.get(gpu)
            value = results[index].value if index is not None else None
            mark = OUTLIER_MARK if index is not None and (gpu, index) in low else ""
            line.append(num(value, 1) + mark)
        body.append(line)
    title = "GPUs side by side (median of samples; < below the other GPUs' median by more than the noise)"
    return title + "\n" + table(body, ["case", "unit", *(f"GPU {g}" for g in gpus)], width=width, wrap=(0,))
