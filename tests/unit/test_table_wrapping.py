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
    "False",
    "True",
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


def _expected(rows, headers, widths):
    longest = [max((len(r[i]) for r in rows), default=0) for i in range(len(headers))]
    kept = [w if w is not None and n > w else None for w, n in zip(widths, longest, strict=True)]
    return tabulate(
        rows,
        headers=headers,
        tablefmt="simple",
        disable_numparse=True,
        maxcolwidths=kept if any(kept) else None,
    )


WORDS = [
    "",
    " ",
    "a",
    "True",
    "False",
    "-",
    "12",
    "3.5",
    "1,000",
    "x-y-z",
    "  pad  ",
    "\n",
    "a\nb",
    "\n\nc\n",
    "word",
]


@pytest.mark.parametrize("seed", range(40))
def test_random_plain_tables_are_what_tabulate_makes(seed):
    """Random plain-text tables (empty cells, numbers as text, newlines, blank rows) and widths."""
    import random

    rng = random.Random(seed)
    columns = rng.randint(1, 5)
    headers = [rng.choice(["case", "", "a", "ratio", "x y"]) for _ in range(columns)]
    rows = [
        [
            " ".join(rng.choice(WORDS) for _ in range(rng.randint(0, 6))) if rng.random() < 0.8 else ""
            for _ in range(columns)
        ]
        for _ in range(rng.randint(1, 12))
    ]
    widths = [rng.choice([None, 3, 8, 20]) for _ in range(columns)]
    try:
        expected = _expected(rows, headers, widths)
    except ValueError:  # tabulate's wrapping fails on some cells ("1,000"-like); so must table
        with pytest.raises(ValueError):
            table(rows, headers, max_widths=widths)
    else:
        assert table(rows, headers, max_widths=widths) == expected
    assert table(rows, headers) == _expected(rows, headers, [None] * columns)


def test_rows_of_empty_cells_among_multiline_ones():
    rows = [["", ""], ["a\nb", "c"], ["  ", ""]]
    assert table(rows, ["h1", "h2"]) == _expected(rows, ["h1", "h2"], [None, None])


URL = "https://github.com/linux-rdma/rdma-core/commit/0123456789abcdef0123456789abcdef01234567"


@pytest.mark.parametrize("width", [40, 60, 100])
def test_wrapped_prose_never_breaks_a_url(width):
    """A wrapped line split a URL mid-token (a copied commit id was wrong)."""
    from gdrdiag.render.layout import wrap_lines

    text = wrap_lines(f"  fix: see the upstream change {URL} and rebuild rdma-core with it", width)
    assert URL in text.split(), text
    assert all(len(line) <= width for line in text.splitlines() if URL not in line)


def test_a_wrapped_table_cell_never_breaks_a_url():
    rows = [["rdma_write", f"WAIVED: see {URL} for the fix", "1.0"]]
    text = table(rows, ["case", "reason", "Gb/s"], width=60, wrap=(1,))
    assert any(URL in line for line in text.splitlines()), text


def test_matrix_without_a_gpu_keeps_each_row_on_one_line():
    """Each WAIVED row wrapped to ~12 lines (its reason in an 18-column cell)."""
    from gdrdiag.render.mr_table import matrix_table

    class Row:
        def __init__(self, memory, reg, status, reason):
            self.memory, self.reg_path, self.landing, self.status, self.reason = (
                memory,
                reg,
                "gpu",
                status,
                reason,
            )

    reason = 'device memory needs a GPU context (no NVIDIA driver: "cuda" is an NVIDIA driver library)'
    rows = [Row(k, r, "WAIVED", reason) for k in ("device", "managed", "pinned") for r in ("mr", "dmabuf")]
    text = matrix_table(rows, width=100)
    lines = text.splitlines()
    body = lines[lines.index(next(ln for ln in lines if ln.startswith("----"))) + 1 :]
    assert [ln.split()[0] for ln in body[:6]] == [
        "device",
        "device",
        "managed",
        "managed",
        "pinned",
        "pinned",
    ]
    assert body[6].startswith("(1) device memory needs a GPU context") and len(body) == 7, text
