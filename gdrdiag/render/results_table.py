"""Shared formatting for bench results: numbers to strings, status lines, generic tables.

Formatting only: every number shown was computed in ``bench/``.
"""

from __future__ import annotations

from typing import Iterable, Optional, Sequence

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


def placement_line(results: Iterable[BenchResult]) -> str:
    """One line saying where the run was placed (``--numa``), or "" when no result records it."""
    s = next((r.settings for r in results if r.settings.numa is not None), None)
    if s is None:
        return ""
    if s.numa_node is not None:
        return f"numa: {s.numa} -> node {s.numa_node}, CPUs {s.numa_cpus} ({s.numa_reason})"
    return f"numa: {s.numa} -> not applied ({s.numa_reason})"


def placement_lines(results: Iterable[BenchResult]) -> str:
    """One ``numa:`` line per distinct placement of a Report's benches, naming the cases' prefixes."""
    seen: dict[str, list[str]] = {}
    for r in results:
        line = placement_line([r])
        if line:
            bench = r.key.split("_", 1)[0]
            benches = seen.setdefault(line, [])
            if bench not in benches:
                benches.append(bench)
    return "\n".join(f"{line} [{', '.join(b)}]" for line, b in seen.items())


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


def table(
    rows: list[list[str]],
    headers: list[str],
    max_widths: Optional[list[int]] = None,
    *,
    width: Optional[int] = None,
    wrap: Sequence[int] = (),
    drop: Sequence[int] = (),
) -> str:
    """A plain tabulate table; ``max_widths`` wraps long cells per column.

    With ``width``, the table is fitted to that many columns by :func:`render.layout.fit_table`
    (``wrap``: text columns that may wrap; ``drop``: columns that may be left out, least useful
    first).

    Only columns that hold a cell longer than their width are handed to tabulate's wrapping,
    which otherwise re-wraps every cell (most of ``compare --all``'s time at 20,000 rows).
    """
    if width is not None:
        from gdrdiag.render.layout import fit_table

        return fit_table(rows, headers, width, wrap=wrap, drop=drop)
    if max_widths:
        longest = [
            max((len(str(r[i])) for r in rows if i < len(r)), default=0) for i in range(len(max_widths))
        ]
        max_widths = [
            w if w is not None and n > w else None for w, n in zip(max_widths, longest, strict=False)
        ]
        if not any(max_widths):
            max_widths = None
    return tabulate(rows, headers=headers, tablefmt="simple", disable_numparse=True, maxcolwidths=max_widths)
