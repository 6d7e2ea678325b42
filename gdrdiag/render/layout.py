"""Fit text to a width: prose wrapped at word boundaries, tables narrowed without cutting numbers.

Every command's text output fits the width the CLI chose (``cli.common.output_width``: the
``COLUMNS`` variable, else the terminal, else :data:`DEFAULT_WIDTH`); ``--wide`` passes ``None``,
which leaves everything as it is. Formatting only: nothing here computes a number.

Tables shrink in this order, so the numbers people compare stay whole:

1. multi-word headers wrap onto two lines ("RO off Gb/s" -> "RO off" / "Gb/s");
2. text columns the caller names (``wrap``) wrap at spaces, the widest first, down to
   :data:`MIN_WRAP` characters;
3. low-value columns the caller names (``drop``) are left out, in the order given, and a line
   under the table says which (``--wide`` shows them);
4. the wrapped columns narrow further, down to :data:`LAST_RESORT_WRAP`.
"""

from __future__ import annotations

import textwrap
from typing import Optional, Sequence

from tabulate import tabulate

DEFAULT_WIDTH = 100
NARROWEST = 40  # a narrower COLUMNS is taken as this: tables cannot fit anything smaller
MIN_WRAP = 16
LAST_RESORT_WRAP = 8
HANGING_INDENT = "    "
_HEADER_PAD = 2  # tabulate pads headers by two spaces (MIN_PADDING)
_GAP = 2  # tabulate's "simple" format puts two spaces between columns


def wrap_lines(text: str, width: Optional[int]) -> str:
    """Every line longer than ``width`` wrapped at word boundaries, with a hanging indent.

    The continuation lines keep the line's own indent plus :data:`HANGING_INDENT`, so a wrapped
    ``fix: ...`` line still reads as one item. A word longer than the width is split, except a URL:
    it stands whole on its own line (a URL cut in two, or a commit id in it, is wrong when copied).
    ``width=None`` (``--wide``) returns ``text`` unchanged.
    """
    if width is None:
        return text
    out = []
    for line in text.split("\n"):
        if len(line) <= width:
            out.append(line)
            continue
        lead = line[: len(line) - len(line.lstrip(" "))]
        indent = (lead + HANGING_INDENT)[: max(0, width // 2)]
        out.append(
            textwrap.fill(
                line.strip(" "),
                width,
                initial_indent=lead[: max(0, width // 2)],
                subsequent_indent=indent,
                break_on_hyphens=False,
                break_long_words=not _has_long_url(line, width - len(indent)),
            )
        )
    return "\n".join(out)


def _is_url(word: str) -> bool:
    return "://" in word or word.startswith("www.")


def _has_long_url(text: str, width: int) -> bool:
    """Whether ``text`` holds a URL longer than ``width`` (which must then not be split)."""
    return any(len(w) > width and _is_url(w) for w in text.split())


def _wrap_cell(cell: str, width: int) -> str:
    """``cell`` wrapped into ``width`` characters at spaces (never inside "dma-buf" or a URL)."""
    return "\n".join(
        wrapped
        for part in cell.split("\n")
        for wrapped in (
            textwrap.wrap(
                part, width, break_on_hyphens=False, break_long_words=not _has_long_url(part, width)
            )
            or [""]
        )
    )


def _cell_width(cell: object) -> int:
    return max((len(part) for part in str(cell).split("\n")), default=0)


def _longest_word(text: str) -> int:
    return max((len(w) for w in text.split()), default=0)


def _plain(rows: Sequence[Sequence[object]], headers: Sequence[str]) -> str:
    return tabulate([list(r) for r in rows], headers=list(headers), tablefmt="simple", disable_numparse=True)


def _total(widths: Sequence[int]) -> int:
    return sum(widths) + _GAP * max(0, len(widths) - 1)


def _fold(header: str, width: int) -> str:
    """``header`` wrapped at spaces into ``width`` characters (never below its longest word)."""
    width = max(width, _longest_word(header))
    return "\n".join(textwrap.wrap(header, width)) if len(header) > width else header


def _shrink(widths: list[int], floors: list[int], wrap: Sequence[int], width: int) -> list[int]:
    """New widths with the widest wrappable column narrowed a step at a time until the row fits.

    Narrowing the widest first levels the wrapped columns instead of crushing one of them.
    """
    widths = list(widths)
    while _total(widths) > width:
        candidates = [i for i in wrap if widths[i] > floors[i]]
        if not candidates:
            break
        widths[max(candidates, key=lambda c: widths[c])] -= 1
    return widths


def _column_widths(
    rows: list[list[str]], headers: list[str], wrap: list[int], width: int, last_resort: bool
) -> tuple[list[int], list[int]]:
    """(widths that fit where the columns allow it, the natural widths) for these columns.

    First the text columns wrap (down to :data:`MIN_WRAP`, or their longest word if longer);
    then multi-word headers fold; with ``last_resort`` the text columns narrow to
    :data:`LAST_RESORT_WRAP`.
    """
    cells = [max((_cell_width(r[i]) for r in rows if i < len(r)), default=0) for i in range(len(headers))]
    words = [max((_longest_word(r[i]) for r in rows if i < len(r)), default=0) for i in range(len(headers))]
    natural = [max(c, len(h) + _HEADER_PAD) for c, h in zip(cells, headers, strict=True)]
    # A wrapped column keeps MIN_WRAP characters, or its longest word when that is longer.
    keep = [min(n, max(MIN_WRAP, min(w, 2 * MIN_WRAP))) for n, w in zip(natural, words, strict=True)]
    floors = [max(len(h) + _HEADER_PAD, k) for k, h in zip(keep, headers, strict=True)]
    widths = _shrink(natural, floors, wrap, width)
    if _total(widths) <= width:
        return widths, natural
    folded = [
        max(c if i not in wrap else w, _longest_word(h) + _HEADER_PAD)
        for i, (c, w, h) in enumerate(zip(cells, widths, headers, strict=True))
    ]
    floors = [max(_longest_word(h) + _HEADER_PAD, k) for k, h in zip(keep, headers, strict=True)]
    widths = _shrink(folded, floors, wrap, width)
    if _total(widths) > width and last_resort:
        floors = [max(_longest_word(h) + _HEADER_PAD, LAST_RESORT_WRAP) for h in headers]
        widths = _shrink(widths, floors, wrap, width)
    return widths, natural


def fit_table(
    rows: Sequence[Sequence[object]],
    headers: Sequence[str],
    width: Optional[int],
    *,
    wrap: Sequence[int] = (),
    drop: Sequence[int] = (),
) -> str:
    """A tabulate "simple" table that fits ``width`` columns where the columns allow it.

    ``wrap``: indices of text columns that may wrap at spaces. ``drop``: indices of columns that
    may be left out, least useful first (named under the table). Number columns are never cut:
    a table of numbers alone wider than ``width`` stays as it is. ``width=None``: unchanged.
    """
    rows = [[("" if c is None else str(c)) for c in r] for r in rows]
    headers = list(headers)
    if width is None or not headers:
        return _plain(rows, headers)
    keep = list(range(len(headers)))
    dropped: list[str] = []
    while True:
        local_wrap = [keep.index(i) for i in wrap if i in keep]
        columns = [headers[i] for i in keep]
        body = [[r[i] if i < len(r) else "" for i in keep] for r in rows]
        widths, natural = _column_widths(body, columns, local_wrap, width, last_resort=False)
        remaining = [d for d in drop if d in keep]
        if _total(widths) <= width:
            break
        if not remaining:
            widths, natural = _column_widths(body, columns, local_wrap, width, last_resort=True)
            break
        keep.remove(remaining[0])
        dropped.append(headers[remaining[0]])
    # tabulate pads every header by two spaces (its MIN_PADDING): a column of width w has room
    # for w - 2 characters of header.
    shown = [
        _fold(headers[i], w - _HEADER_PAD) if len(headers[i]) + _HEADER_PAD > w else headers[i]
        for i, w in zip(keep, widths, strict=True)
    ]
    limits = [(j, w) for j, (w, n) in enumerate(zip(widths, natural, strict=True)) if w < n]
    for row in body:
        for j, w in limits:
            if _cell_width(row[j]) > w:
                row[j] = _wrap_cell(row[j], w)
    text = _plain(body, shown)
    if dropped:
        text += "\n" + wrap_lines(
            f"(left out to fit {width} columns: {', '.join(dropped)}; --wide shows them)", width
        )
    return text
