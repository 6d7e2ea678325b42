import pytest

from gdrdiag.errors import UserInputError
from gdrdiag.units import GiB, KiB, MiB, format_size, parse_size, parse_size_list, pcie_raw_gbytes_per_s


@pytest.mark.parametrize(
    "text,expected",
    [
        ("4096", 4096),
        ("4K", 4 * KiB),
        ("64k", 64 * KiB),
        ("1M", MiB),
        ("1GiB", GiB),
        (" 2 MB ", 2 * MiB),
        (7, 7),
    ],
)
def test_parse_size_accepts_binary_suffixes(text, expected):
    assert parse_size(text) == expected


@pytest.mark.parametrize("text", ["0", "-1", "abc", "1X", "", "1.5M", True])
def test_parse_size_rejects_bad_input(text):
    with pytest.raises(UserInputError):
        parse_size(text)


def test_size_range_is_powers_of_two():
    assert parse_size_list("128..2K") == [128, 256, 512, 1024, 2048]
    assert parse_size_list("4K,1M") == [4096, MiB]
    with pytest.raises(UserInputError):
        parse_size_list("2K..128")


def test_format_size():
    assert format_size(4096) == "4 KiB"
    assert format_size(656) == "656 B"
    assert format_size(GiB) == "1 GiB"


def test_pcie_raw_rates_match_the_spec_encodings():
    assert pcie_raw_gbytes_per_s(5, 16) == pytest.approx(63.02, abs=0.01)
    assert pcie_raw_gbytes_per_s(4, 16) == pytest.approx(31.51, abs=0.01)
    assert pcie_raw_gbytes_per_s(3, 16) == pytest.approx(15.75, abs=0.01)
    assert pcie_raw_gbytes_per_s(2, 16) == pytest.approx(8.0)  # 5 GT/s with 8b/10b
