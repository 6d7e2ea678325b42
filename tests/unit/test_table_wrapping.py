"""``render.results_table.table`` wraps cells itself; the table must be tabulate's, byte for byte."""

import pytest
from tabulate import tabulate

from gdrdiag.render.results_table import table

CELLS = [
    "",
    " ",
    "short",
    "exactly-ten",
    "a cell that is much longer than its column and must be wrapped",
    "rdma_write_device_mr [fixture] size_bytes=4 KiB qps=1",
    "two  spaces inside",
    " leading space",
    "trailing space ",
    "tab\there",
    "line one\nline two",
    "\n\nblank lines\n\n",
    "éàü wide-ish text that is not ascii",
    "漢字漢字漢字漢字漢字漢字",
    "\x1b[31mred\x1b[0m",
    "hyphenated-words-that-break-on-hyphens-when-too-long",
    "averyveryverylongwordwithoutanyspaceatallthatmustbebroken",
]


@pytest.mark.parametrize("widths", [[10, 12, 5], [36, 9, 9], [4, None, 20]])
def test_table_is_what_tabulate_makes_with_the_same_widths(widths):
    rows = [
        [CELLS[i % len(CELLS)], CELLS[(i * 7) % len(CELLS)], CELLS[(i * 3) % len(CELLS)]] for i in range(60)
    ]
    headers = ["case", "a", "b"]
    longest = [max(len(r[i]) for r in rows) for i in range(3)]
    expected_widths = [w if w is not None and n > w else None for w, n in zip(widths, longest, strict=True)]
    expected = tabulate(
        rows, headers=headers, tablefmt="simple", disable_numparse=True, maxcolwidths=expected_widths
    )
    assert table(rows, headers, max_widths=widths) == expected
