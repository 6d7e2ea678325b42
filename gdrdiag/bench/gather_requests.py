"""The planned kernels' read requests, sector by sector: what the PCIe model prices for them.

A GPU's loads of host memory go out per warp instruction and 128-B line: the coalescer turns
the 32-B sectors one instruction touches in one line into requests (CUDA C++ Best Practices
Guide, "Coalesced Access to Global Memory"; docs/gather-bench.md). Two rules decide how many
requests the planned kernels send, and both matter for records of 16-32 B, where several
records share a line:

- **one request per contiguous sector run of an (instruction, line)**. A PCIe Memory Read
  Request names one start address and one length (PCIe Base Spec r5.0 sec. 2.2.7, Memory
  Request header); its byte enables mask bytes of its first and last DW only (sec. 2.2.5), so
  sectors with a gap between them cannot share a request without reading the gap. planned-flat
  reads 512 / R sorted records in one warp load, so records with gaps between them that share a
  line still share one (instruction, line): the per-segment count this replaces gave each of
  them its own request and completion, which is why planned-flat ran 1.13-1.16x its 16-B
  ceiling on the H100 (docs/benchmarks.md).
- **a sector crosses PCIe once per batch**: when the loads of two instructions (neighbouring warp
  groups of the sorted plan, issued at about the same time) touch one sector, the second is
  served by the first's fill in L2 (sectors are the L2's unit; the same guide) and sends no
  request. Only a record split between two groups, or two 16-B records of one sector in two
  groups, shares a sector this way.

planned-lines (gather_lines_dedupe) reads each segment with its own instructions, 512 B each
from the segment's first line, so two segments never share an instruction; planned-flat
(gather_flat_dedupe) reads chunk t of the sorted records in warp load t // 32. Both are mirrored
record by record in tests/unit/test_gather_requests.py. Pure numpy.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from gdrdiag.bench.gather_layout import Layout, planned_segments
from gdrdiag.pathmodel import pcie as pcie_model

SECTORS_PER_LINE = pcie_model.LINE // pcie_model.SECTOR  # 4


@dataclass(frozen=True)
class SectorPlan:
    """Requests of one batch as (instruction, line) sector masks: ``mask_counts[m]`` = how many."""

    mask_counts: tuple[int, ...]  # index: 4-bit mask of the sectors requested (0: all already fetched)
    reads: int  # slots read (each distinct slot once)
    records: int  # records delivered

    @property
    def sectors(self) -> int:
        """Sectors crossing PCIe in one batch."""
        return sum(c * bin(m).count("1") for m, c in enumerate(self.mask_counts))


def _mask(lo, hi):
    """Sector masks of the byte ranges [lo, hi) within a line (0 <= lo < hi <= 128), vectorised."""
    import numpy as np

    first = np.asarray(lo) >> 5
    last = (np.asarray(hi) - 1) >> 5
    return (np.left_shift(1, last + 1) - 1) ^ (np.left_shift(1, first) - 1)


def planned_sector_plan(src, layout: Layout, group: int, flat: bool) -> Optional[SectorPlan]:
    """The sector plan of planned-flat (``flat``) or planned-lines over ``src``; None off the fast path.

    ``group``: records per warp step (planned-lines: 8 or 32) or per warp load (planned-flat:
    512 / R). Layouts whose stride or base offset is not a multiple of 16 are read record by
    record by both kernels (native/gather.cu): the caller prices those as the warp kernel.
    """
    import numpy as np

    R, stride, base = layout.record_bytes, layout.stride, layout.base_offset
    if stride % 16 or base % 16:
        return None
    ssrc, heads, lengths, owner = planned_segments(src, layout, group)
    n = int(ssrc.size)
    if flat:
        # Pieces are the owner records; all chunks of one record are in one warp load.
        pos = np.flatnonzero(owner)
        a = base + ssrc[pos] * stride
        b = a + R
        key_first = key_last = pos // group
    else:
        # Pieces are segments; a segment's instructions are 512-B windows from its first line.
        merge = stride == R and R % 16 == 0
        a = base + ssrc[heads] * stride
        span = lengths * R if merge else np.full(heads.size, R, dtype=np.int64)
        b = a + (-(-span // 16)) * 16  # whole 16-B chunks (loads past R stay in the padding)
        ordinal = np.arange(heads.size, dtype=np.int64) << 17  # > any instruction count per segment
        key_first = ordinal
        key_last = ordinal + (((b - 1) >> 7) - (a >> 7)) // (pcie_model.INSTRUCTION_BYTES // pcie_model.LINE)
    fl, ll = a >> 7, (b - 1) >> 7
    one = fl == ll
    two = ~one
    line = np.concatenate([fl, ll[two]])
    key = np.concatenate([key_first, key_last[two]])
    mask = np.concatenate(
        [
            np.where(one, _mask(a & 127, b - (fl << 7)), _mask(a & 127, 128)),
            _mask(np.zeros(int(two.sum()), dtype=np.int64), b[two] - (ll[two] << 7)),
        ]
    )
    whole = int((ll[two] - fl[two] - 1).sum())  # lines inside a piece: no other instruction's
    counts = np.zeros(16, dtype=np.int64)
    if line.size:
        order = np.lexsort((key, line))
        line, key, mask = line[order], key[order], mask[order]
        # One instruction's pieces in one line: one sector mask.
        new = np.ones(line.size, dtype=bool)
        new[1:] = (line[1:] != line[:-1]) | (key[1:] != key[:-1])
        starts = np.flatnonzero(new)
        mask = np.bitwise_or.reduceat(mask, starts)
        line = line[starts]
        # Sectors an earlier instruction of the line already fetched send no request.
        first_of_line = np.ones(line.size, dtype=bool)
        first_of_line[1:] = line[1:] != line[:-1]
        line_start = np.maximum.accumulate(np.where(first_of_line, np.arange(line.size), 0))
        seen = np.zeros(line.size, dtype=np.int64)
        for bit in range(SECTORS_PER_LINE):
            has = (mask >> bit) & 1
            upto = np.cumsum(has)
            before = upto - has - (upto[line_start] - has[line_start])
            seen |= (before > 0).astype(np.int64) << bit
        counts += np.bincount(mask & ~seen, minlength=16)
    counts[15] += whole
    return SectorPlan(tuple(int(c) for c in counts), reads=int(owner.sum()), records=n)


def plan_efficiency(plan: SectorPlan, record_bytes: int, p: pcie_model.LinkParams) -> pcie_model.Efficiency:
    """Wire totals of a sector plan for the bytes read (each distinct slot once)."""
    return pcie_model.sector_mask_efficiency(plan.mask_counts, plan.reads * record_bytes, plan.reads, p)
