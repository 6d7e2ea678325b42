"""render/layout.py: prose wraps at words with a hanging indent; tables fit without cutting numbers."""

from __future__ import annotations

import pytest

from gdrdiag.render.layout import fit_table, wrap_lines

HEADERS = ["memory", "reg", "lands in", "RO off Gb/s", "RO on Gb/s", "verdict / status"]
ROWS = [
    [
        "device",
        "mr",
        "gpu",
        "391.83",
        "392.61",
        "no effect: RO changes bandwidth by 1.00x; ordering does not limit",
    ],
    [
        "pageable",
        "dmabuf",
        "host",
        "12.50",
        "1234567.25",
        "WAIVED: the dma-buf path exports device memory only",
    ],
]


@pytest.mark.parametrize("width", [100, 72, 60])
def test_table_fits_and_every_number_stays_whole(width):
    text = fit_table(ROWS, HEADERS, width, wrap=(5,), drop=(2,))
    assert all(len(line) <= width for line in text.splitlines())
    tokens = text.split()
    for row in ROWS:
        for number in row[3:5]:
            assert number in tokens
    words = " ".join(tokens)
    for row in ROWS:
        assert all(word in words for word in row[5].split())


def test_columns_are_left_out_only_when_wrapping_is_not_enough_and_named():
    assert "left out" not in fit_table(ROWS, HEADERS, 100, wrap=(5,), drop=(2,))
    narrow = fit_table(ROWS, HEADERS, 60, wrap=(5,), drop=(2,))
    assert "left out to fit 60 columns: lands in" in " ".join(narrow.split())
    assert "host" not in narrow.split()


def test_no_width_is_the_plain_table():
    text = fit_table(ROWS, HEADERS, None, wrap=(5,), drop=(2,))
    assert any(ROWS[0][5] in line for line in text.splitlines())
    assert "left out" not in text


def test_prose_wraps_at_words_with_a_hanging_indent():
    line = "    fix: " + " ".join(f"word{i}" for i in range(60))
    text = wrap_lines(line + "\nshort", 50)
    lines = text.splitlines()
    assert all(len(x) <= 50 for x in lines) and lines[-1] == "short"
    assert lines[0].startswith("    fix: ") and all(x.startswith("        word") for x in lines[1:-1])
    assert " ".join(text.split()) == " ".join((line + " short").split())
    assert wrap_lines(line, None) == line
