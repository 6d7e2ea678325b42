"""The one place units are decided.

- Bandwidth: GB/s = 1e9 bytes per second (as nvbandwidth and bandwidthTest print it);
  Gb/s = 1e9 bits per second (as ``ib_write_bw --report_gbits`` prints it).
- Sizes are integers in bytes everywhere inside gdrdiag; ``parse_size`` accepts the
  binary suffixes users type (``4K`` = 4 KiB = 4096 bytes, ``1G`` = 1 GiB).
"""

from __future__ import annotations

import re

from gdrdiag.errors import UserInputError

KiB = 1024
MiB = 1024 * KiB
GiB = 1024 * MiB

_SIZE_SUFFIX = {
    "": 1,
    "B": 1,
    "K": KiB,
    "KB": KiB,
    "KIB": KiB,
    "M": MiB,
    "MB": MiB,
    "MIB": MiB,
    "G": GiB,
    "GB": GiB,
    "GIB": GiB,
}
_SIZE_RE = re.compile(r"^\s*(\d+)\s*([A-Za-z]*)\s*$")


def parse_size(text: str | int, *, what: str = "size") -> int:
    """Parse ``"64K"``, ``"1GiB"`` or ``4096`` into a positive byte count.

    Suffixes are binary (K = 1024), as perftest and most GPU tools read them. Raises
    ``UserInputError`` naming ``what`` for zero, negative or unparsable input.
    """
    if isinstance(text, bool):
        raise UserInputError(f"{what}: {text!r} is not a size")
    if isinstance(text, int):
        value = text
    else:
        m = _SIZE_RE.match(str(text))
        if not m or m.group(2).upper() not in _SIZE_SUFFIX:
            raise UserInputError(f"{what}: cannot parse {text!r} (examples: 4096, 64K, 1M, 1G)")
        value = int(m.group(1)) * _SIZE_SUFFIX[m.group(2).upper()]
    if value <= 0:
        raise UserInputError(f"{what}: must be greater than 0, got {text!r}")
    return value


def parse_size_list(text: str, *, what: str = "sizes") -> list[int]:
    """Parse a comma-separated list of sizes, or a range ``4K..1G`` of powers of two."""
    text = text.strip()
    if ".." in text:
        lo_s, hi_s = text.split("..", 1)
        lo, hi = parse_size(lo_s, what=what), parse_size(hi_s, what=what)
        if lo > hi:
            raise UserInputError(f"{what}: range {text!r} runs backwards")
        out, v = [], lo
        while v <= hi:
            out.append(v)
            v *= 2
        return out
    parts = [p for p in text.split(",") if p.strip()]
    if not parts:
        raise UserInputError(f"{what}: empty list")
    return [parse_size(p, what=what) for p in parts]


def format_size(n: int) -> str:
    """Human size with binary units: 4096 -> '4 KiB', 656 -> '656 B'."""
    for unit, scale in (("GiB", GiB), ("MiB", MiB), ("KiB", KiB)):
        if n >= scale and n % scale == 0:
            return f"{n // scale} {unit}"
    if n >= MiB:
        return f"{n / MiB:.1f} MiB"
    if n >= KiB:
        return f"{n / KiB:.1f} KiB"
    return f"{n} B"


def gbytes_per_s(nbytes: int | float, seconds: float) -> float:
    """Bytes moved in ``seconds`` as GB/s (1e9 B/s)."""
    return nbytes / seconds / 1e9


def gbits_per_s(nbytes: int | float, seconds: float) -> float:
    """Bytes moved in ``seconds`` as Gb/s (1e9 bit/s)."""
    return nbytes * 8 / seconds / 1e9


# PCIe raw data rate per lane per direction after line encoding, in GB/s.
# Gen1/2 use 8b/10b, Gen3+ 128b/130b (PCIe Base Spec r5.0 sec. 4.2).
_PCIE_GTS = {1: 2.5, 2: 5.0, 3: 8.0, 4: 16.0, 5: 32.0, 6: 64.0}


def pcie_raw_gbytes_per_s(generation: int, width: int) -> float:
    """Encoded line rate of a PCIe link per direction in GB/s (Gen5 x16 -> 63.02)."""
    gts = _PCIE_GTS[generation]
    encoding = 8 / 10 if generation <= 2 else 128 / 130
    # Gen6 uses PAM4 with FLIT mode (242/256 payload incl. FEC/CRC); approximate the same way.
    if generation >= 6:
        encoding = 242 / 256
    return gts * encoding * width / 8
