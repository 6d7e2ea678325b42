"""The planned kernels' read requests sector by sector (gather_requests), against record-by-record
emulations of native/gather.cu's gather_flat_dedupe and gather_lines_dedupe; their pricing."""

import numpy as np
import pytest

from gdrdiag.bench import gather as g
from gdrdiag.bench.gather_requests import planned_sector_plan
from gdrdiag.pathmodel import pcie as pm

LINK = pm.LinkParams(rcb=64)


def _requests(touches):
    """{(instruction key, line): set of sectors} in instruction order -> count per 4-bit mask.

    A sector an earlier instruction touched sends no request (gather_requests' second rule).
    """
    counts = [0] * 16
    seen: dict = {}
    for key, line in sorted(touches):
        mask = 0
        for s in touches[(key, line)]:
            mask |= 1 << s
        counts[mask & ~seen.get(line, 0)] += 1
        seen[line] = seen.get(line, 0) | mask
    return counts


def flat_touches(src, layout):
    """gather_flat_dedupe chunk by chunk: warp load t // 32 reads chunk t % C of sorted record t // C."""
    src = sorted(int(v) for v in src)
    R, stride, base = layout.record_bytes, layout.stride, layout.base_offset
    chunks = R // 16
    touches: dict = {}
    for t in range(len(src) * chunks):
        rec, part = divmod(t, chunks)
        if rec and src[rec - 1] == src[rec]:
            continue  # a repeat loads nothing
        addr = base + src[rec] * stride + 16 * part
        touches.setdefault((t // 32, addr // 128), set()).add(addr % 128 // 32)
    return touches


def lines_touches(src, layout, group):
    """gather_lines_dedupe segment by segment: instruction t of a segment loads its 512-B window
    from the segment's first line, 16 B per lane; each segment has its own instructions."""
    src = sorted(int(v) for v in src)
    R, stride, base = layout.record_bytes, layout.stride, layout.base_offset
    merge = stride == R and R % 16 == 0
    segments = []  # (start address, bytes) in sorted order
    for first in range(0, len(src), group):
        last_owner = None
        for i in range(first, min(first + group, len(src))):
            if i > 0 and src[i] == src[i - 1]:
                continue
            if merge and last_owner is not None and src[i] == src[last_owner] + 1:
                a, n = segments[-1]
                segments[-1] = (a, n + R)
            else:
                segments.append((base + src[i] * stride, R))
            last_owner = i
    touches: dict = {}
    for k, (a, n) in enumerate(segments):
        lead = a % 128
        for t in range((lead + n + 511) // 512):
            for lane in range(32):
                o = t * 512 + 16 * lane - lead
                if 0 <= o < n:
                    addr = a + o
                    touches.setdefault(((k, t), addr // 128), set()).add(addr % 128 // 32)
    return touches


CASES = [
    (16, 16, 0, "random", 300),  # two records per sector: gaps inside a line and a sector
    (16, 16, 0, "unique", 5000),
    (32, 32, 0, "random", 2000),
    (64, 64, 16, "random", 400),  # records off the line grid: one record in two lines
    (48, 64, 0, "random", 500),  # stride > R: no merging
    (128, 128, 0, "random", 200),
    (256, 256, 16, "random", 300),  # whole lines inside records, partial ones at the ends
    (512, 512, 0, "unique", 5000),
]


FLAT_CASES = [c for c in CASES if not g.flat_layout_problem(*c[:3])]
LINES_CASES = CASES + [(656, 656, 0, "random", 300), (100, 112, 0, "random", 400)]


@pytest.mark.parametrize("R,stride,off,pattern,slots", FLAT_CASES)
def test_planned_flat_sector_plan_is_the_kernels(R, stride, off, pattern, slots):
    lay = g.Layout(record_bytes=R, stride=stride, base_offset=off, pattern=pattern, slots=slots, records=3000)
    src, _ = g.make_indices(lay)
    plan = planned_sector_plan(src, lay, g.flat_records_per_load(R), flat=True)
    assert list(plan.mask_counts) == _requests(flat_touches(src, lay))
    assert plan.reads == len(np.unique(src)) and plan.records == lay.records


@pytest.mark.parametrize("group", [8, 32])
@pytest.mark.parametrize("R,stride,off,pattern,slots", LINES_CASES)
def test_planned_lines_sector_plan_is_the_kernels(group, R, stride, off, pattern, slots):
    lay = g.Layout(record_bytes=R, stride=stride, base_offset=off, pattern=pattern, slots=slots, records=2000)
    src, _ = g.make_indices(lay)
    plan = planned_sector_plan(src, lay, group, flat=False)
    assert list(plan.mask_counts) == _requests(lines_touches(src, lay, group))


def test_odd_layouts_have_no_sector_plan():
    lay = g.Layout(record_bytes=37, stride=53, base_offset=3, slots=500, records=1000)
    assert planned_sector_plan(g.make_indices(lay)[0], lay, 32, flat=False) is None


def test_sector_runs_and_their_price():
    assert pm.sector_runs(0b1111) == [(0, 4)]
    assert pm.sector_runs(0b0101) == [(0, 1), (2, 1)]
    assert pm.sector_runs(0b0110) == [(1, 2)]
    assert pm.sector_runs(0) == []
    counts = [0] * 16
    counts[0b1111], counts[0b0101], counts[0] = 3, 2, 7  # mask 0: served by another instruction
    eff = pm.sector_mask_efficiency(counts, 1000, 10, LINK)
    assert eff.requests == eff.completions == 3 + 2 * 2
    assert eff.wire == 3 * (128 + 22) + 4 * (32 + 22) and eff.overhead == 7 * 22


def test_whole_line_records_price_as_before():
    # 128-B records on the line grid share nothing: the per-segment model and the sector plan agree.
    lay = g.Layout(record_bytes=128, stride=128, pattern="random", slots=50_000, records=40_000)
    src, _ = g.make_indices(lay)
    m = g.model_metrics(g.KERNELS["planned-lines"], lay, src, LINK, group=32)
    hist, reads = g.planned_read_plan(src, lay, 32)
    old = pm.predict(hist, 128, "sector", line_aware=True, p=LINK).ratio_to_ce * lay.records / reads
    assert m["model_ratio_to_ce"] == pytest.approx(old)


def test_a_load_that_reads_records_with_gaps_sends_one_request_per_sector_run():
    # Three 16-B records in slots 0, 2, 3 of one line: one warp load of planned-flat reads
    # sectors 0 and 1 (one run, one request); planned-lines reads them as two segments (slot 0,
    # then slots 2-3 merged): two instructions, two requests.
    lay = g.Layout(record_bytes=16, stride=16, pattern="sorted", slots=4, records=3)
    src = np.array([0, 2, 3], dtype=np.uint32)
    flat = planned_sector_plan(src, lay, 32, flat=True)
    lines = planned_sector_plan(src, lay, 32, flat=False)
    assert flat.mask_counts[0b0011] == 1 and sum(flat.mask_counts) == 1
    assert lines.mask_counts[0b0001] == 1 and lines.mask_counts[0b0010] == 1 and sum(lines.mask_counts) == 2
