"""A node's GPUs side by side: one row per case measured on several GPUs, one column per GPU.

Formatting only: the rows and the outliers come from ``gdrdiag.diagnose.node_rules`` (which GPU ran
each row, which GPU is below its siblings), so the table and PERF-GPU-OUTLIER never disagree.
"""

from __future__ import annotations

import textwrap
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
    labels, shared = _short_labels([row.label for row in rows])
    body = []
    for row, label in zip(rows, labels, strict=True):
        cells = dict(row.by_gpu)
        line = [label, row.unit]
        for gpu in gpus:
            index = cells.get(gpu)
            value = results[index].value if index is not None else None
            mark = OUTLIER_MARK if index is not None and (gpu, index) in low else ""
            line.append(num(value, 1) + mark)
        body.append(line)
    title = "GPUs side by side (median of samples; < below the other GPUs' median by more than the noise)"
    notes = "".join(
        "\n" + textwrap.fill(f"{family} rows: {' '.join(words)}", width or 10_000, subsequent_indent="    ")
        for family, words in shared.items()
    )
    headers = ["case", "unit", *(f"GPU {g}" for g in gpus)]
    return title + "\n" + table(body, headers, width=width, wrap=(0,)) + notes


def _short_labels(labels: list[str]) -> tuple[list[str], dict[str, list[str]]]:
    """Labels without the ``name=value`` parameters that are the same on every row of their bench.

    A gather row's identity names record size, stride, pattern, slots, ... which the whole ladder shares;
    repeated on every row they pushed the GPU columns off a 100-column terminal. They are said once,
    under the table.
    """
    families: dict[str, dict[str, set[str]]] = {}
    for label in labels:
        key, *words = label.split(" ")
        values = families.setdefault(key.split("_", 1)[0], {})
        for w in words:
            name, value = _named(w)
            values.setdefault(name, set()).add(value)
    common = {f: {n for n, vs in values.items() if len(vs) == 1} for f, values in families.items()}
    short = []
    for label in labels:
        key, *words = label.split(" ")
        drop = common[key.split("_", 1)[0]]
        short.append(" ".join([key, *(w for w in words if _named(w)[0] not in drop)]))
    said: dict[str, list[str]] = {}
    for label in labels:
        key, *words = label.split(" ")
        family = key.split("_", 1)[0]
        for w in words:
            if _named(w)[0] in common[family] and w not in said.setdefault(family, []):
                said[family].append(w)
    return short, {f: w for f, w in said.items() if w}


def _named(word: str) -> tuple[str, str]:
    """(name, value) of a label word: ``name=value``, or a bare size such as ``64MiB``."""
    name, sep, value = word.partition("=")
    return (name, value) if sep else ("size", word)
