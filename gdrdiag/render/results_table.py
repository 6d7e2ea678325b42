"""Shared formatting for bench results: numbers to strings, status lines, generic tables.

Formatting only: every number shown was computed in ``bench/``.
"""

from __future__ import annotations

from typing import Callable, Iterable, Optional

import tabulate as tabulate_module
from tabulate import tabulate

from gdrdiag.model.results import BenchResult, Status
from gdrdiag.units import format_size


def num(value: Optional[float], digits: int = 2) -> str:
    """A number with fixed decimals, or '-' for unknown."""
    return "-" if value is None else f"{value:.{digits}f}"


def size(value: object) -> str:
    """A byte count as a human size ('4 KiB'); other values unchanged."""
    return format_size(value) if isinstance(value, int) and not isinstance(value, bool) else str(value)


def spread(result: BenchResult, digits: int = 1) -> str:
    """'min-max' of the samples."""
    if not result.stats:
        return "-"
    return f"{result.stats.minimum:.{digits}f}-{result.stats.maximum:.{digits}f}"


def check_mark(result: BenchResult) -> str:
    """How the payload check came out."""
    return {True: "ok", False: "WRONG", None: "-"}[result.verified]


def problems(results: Iterable[BenchResult]) -> str:
    """Lines for every WAIVED or ERROR result, grouped so repeated reasons print once."""
    seen: dict[tuple[str, str], list[str]] = {}
    for r in results:
        if r.status is not Status.OK:
            seen.setdefault((r.status.value, r.reason or ""), []).append(r.key)
    lines = []
    for (status, reason), keys in seen.items():
        uniq = sorted(set(keys))
        shown = ", ".join(uniq[:4]) + (f" (+{len(uniq) - 4} more)" if len(uniq) > 4 else "")
        lines.append(f"{status}: {shown}: {reason}")
    return "\n".join(lines)


def table(rows: list[list[str]], headers: list[str], max_widths: Optional[list[int]] = None) -> str:
    """A plain tabulate table; ``max_widths`` wraps long cells per column.

    tabulate re-wraps every cell of a column given a width (most of ``compare --all``'s time at
    20,000 rows), although wrapping leaves a short plain cell as it is. So the cells are wrapped
    here, each by tabulate's own wrapping, except the cells it would return unchanged
    (:func:`_wraps_to_itself`), and tabulate is given no widths: the same table, byte for byte.
    """
    if max_widths:
        longest = [
            max((len(str(r[i])) for r in rows if i < len(r)), default=0) for i in range(len(max_widths))
        ]
        max_widths = [
            w if w is not None and n > w else None for w, n in zip(max_widths, longest, strict=False)
        ]
        if not any(max_widths):
            max_widths = None
    wrap = getattr(tabulate_module, "_wrap_text_to_colwidths", None)
    if max_widths and wrap is not None and all(isinstance(c, str) for r in rows for c in r):
        rows = [_wrapped_row(row, max_widths, wrap) for row in rows]
        max_widths = None
    return tabulate(rows, headers=headers, tablefmt="simple", disable_numparse=True, maxcolwidths=max_widths)


def _wraps_to_itself(cell: str, width: int) -> bool:
    """True when tabulate's wrapping returns ``cell`` unchanged: it fits and has nothing to change.

    A printable ASCII line (no tab, newline or escape; one column per character whatever measures
    width) that fits the width and neither starts nor ends with a space is one line of words that
    the text wrapper keeps as it is.
    """
    return (
        len(cell) <= width
        and cell.isascii()
        and cell.isprintable()
        and cell != ""
        and cell[0] != " "
        and cell[-1] != " "
    )


def _wrapped_row(row: list[str], widths: list[Optional[int]], wrap: Callable) -> list[str]:
    """``row`` with each cell of a column that has a width wrapped as tabulate would wrap it."""
    out = list(row)
    for i, width in enumerate(widths[: len(row)]):
        if width is not None and not _wraps_to_itself(row[i], width):
            out[i] = wrap([[row[i]]], [width], numparses=[False])[0][0]
    return out
