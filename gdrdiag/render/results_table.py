"""Shared formatting for bench results: numbers to strings, status lines, generic tables.

Formatting only: every number shown was computed in ``bench/``.
"""

from __future__ import annotations

from typing import Callable, Iterable, Optional, Sequence

import tabulate as tabulate_module
from tabulate import tabulate

from gdrdiag.model.results import BenchResult, Status
from gdrdiag.render.sanitize import shown
from gdrdiag.units import format_size


def num(value: Optional[float], digits: int = 2) -> str:
    """A number with fixed decimals, or '-' for unknown."""
    return "-" if value is None else f"{value:.{digits}f}"


def size(value: object) -> str:
    """A byte count as a human size ('4 KiB'); unknown (None) as '-'; other values unchanged."""
    if value is None:
        return "-"  # never the word None in user text
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
        return f"numa: {s.numa} -> node {s.numa_node}, CPUs {shown(s.numa_cpus)}{_why(s.numa_reason)}"
    return f"numa: {s.numa} -> not applied{_why(s.numa_reason)}"


def _why(reason: Optional[str]) -> str:
    """`` (reason)``, or nothing where the Report holds none."""
    return f" ({reason})" if reason else ""


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

    tabulate re-wraps every cell of a column given a width (most of ``compare --all``'s time at
    20,000 rows), although wrapping leaves a short plain cell as it is. So the cells are wrapped
    here, each by tabulate's own wrapping, except the cells it would return unchanged
    (:func:`_wraps_to_itself`), and tabulate is given no widths: the same table, byte for byte.
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
    wrap_cells = getattr(tabulate_module, "_wrap_text_to_colwidths", None)
    cell_type = getattr(tabulate_module, "_type", None)
    if max_widths and wrap_cells and cell_type and all(isinstance(c, str) for r in rows for c in r):
        rows = [_wrapped_row(row, max_widths, wrap_cells, cell_type) for row in rows]
        max_widths = None
    if max_widths is None:
        plain = _plain_simple_table(rows, headers)
        if plain is not None:
            return plain
    return tabulate(rows, headers=headers, tablefmt="simple", disable_numparse=True, maxcolwidths=max_widths)


def _plain_simple_table(rows: list[list[str]], headers: list[str]) -> Optional[str]:
    """The ``simple`` table tabulate makes of plain text cells, made directly; None for any other input.

    ``compare --all`` lays out 20,000 rows, and tabulate spends most of that time inferring each
    cell's type and measuring it in ways that only matter for numbers, escape codes and wide
    characters. For rows of printable ASCII strings (newlines allowed), each as long as the
    headers, with numbers not parsed, every column is left-aligned text and the
    layout is this: cells stripped, each column as wide as its widest line (at least its header
    plus two), lines padded, one line per text line of the tallest cell, two spaces between
    columns, trailing spaces cut, a row of dashes under the headers (a row whose cells are all
    empty has no line when any cell holds a newline). Anything else (no rows,
    ragged rows, escape codes, tabs, non-ASCII text) is left to tabulate.
    """
    width = len(headers)
    if not rows or width == 0:
        return None
    for text in headers:
        if not (isinstance(text, str) and text.isascii() and text.isprintable()):
            return None
    for row in rows:
        if len(row) != width:
            return None
        for text in row:
            if not (isinstance(text, str) and text.isascii() and text.replace("\n", "").isprintable()):
                return None
    # With a newline anywhere tabulate lays out cells line by line, and an empty cell has no line.
    multiline = any("\n" in text for row in rows for text in row)
    cells = [[text.strip().splitlines() if multiline else [text.strip()] for text in row] for row in rows]
    widths = [len(h) + 2 for h in headers]
    for row_lines in cells:
        for i, lines in enumerate(row_lines):
            for line in lines:
                if len(line) > widths[i]:
                    widths[i] = len(line)
    out = ["  ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True)).rstrip()]
    out.append("  ".join("-" * w for w in widths))
    for row_lines in cells:
        height = max(len(lines) for lines in row_lines)
        for n in range(height):
            out.append(
                "  ".join(
                    (lines[n] if n < len(lines) else "").ljust(w)
                    for lines, w in zip(row_lines, widths, strict=True)
                ).rstrip()
            )
    return "\n".join(out)


def _wraps_to_itself(cell: str, width: int, cell_type: Callable) -> bool:
    """True when tabulate's wrapping returns ``cell`` unchanged: it fits and has nothing to change.

    A printable ASCII line (no tab, newline or escape; one column per character whatever measures
    width) that fits the width and neither starts nor ends with a space is one line of words that
    the text wrapper keeps as it is. Before wrapping, tabulate converts a cell through the type it
    reads in it (called as tabulate calls it), which turns "False" into "True" and fails on
    "1,000": such cells go through tabulate's wrapping, whatever it does with them.
    """
    return (
        len(cell) <= width
        and cell.isascii()
        and cell.isprintable()
        and cell != ""
        and cell[0] != " "
        and cell[-1] != " "
        and cell_type(cell, False) is str
    )


def _wrapped_row(
    row: list[str], widths: list[Optional[int]], wrap: Callable, cell_type: Callable
) -> list[str]:
    """``row`` with each cell of a column that has a width wrapped as tabulate would wrap it."""
    out = list(row)
    for i, width in enumerate(widths[: len(row)]):
        if width is not None and not _wraps_to_itself(row[i], width, cell_type):
            out[i] = wrap([[row[i]]], [width], numparses=[False])[0][0]
    return out
