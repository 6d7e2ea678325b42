"""The recorded deterministic-time runs of the lab's native plan, judged against their targets.

``scripts/lab/timing.sh`` boots the native plan under TCG with ``-icount shift=0,sleep=off`` (guest
time = instructions executed, not the host's wall clock) and ``scripts/lab/native_timing.py`` keeps
every round's numbers; the copies committed as tests/fixtures/lab/native_icount.json (the 8 cells
split over two boots run at once) and native_icount_one_boot.json (all 8 cells, alternated, in one
boot) are what docs/benchmarks.md reports ("native provider ... deterministic guest time"). These
tests recompute the spreads and ratios from the per-round numbers, so the claims in the docs stay
tied to the data: the targets are ib_write_bw's spread (max/min over rounds) <= 1.05 in every cell
and native / ib_write_bw >= 0.95 for bandwidth and message rate in every cell.
"""

from __future__ import annotations

import json
import statistics
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
RESULTS = REPO / "tests/fixtures/lab/native_icount.json"
ONE_BOOT = REPO / "tests/fixtures/lab/native_icount_one_boot.json"
RECORDINGS = pytest.mark.parametrize("results", [RESULTS, ONE_BOOT], ids=["two_boots", "one_boot"])
SIZES = (64, 4096, 65536, 1048576)
POST_LISTS = (1, 16)
TOOLS = ("ib_write_bw", "native", "pyverbs")
MAX_SPREAD = 1.05
MIN_RATIO = 0.95


def _cells(results: Path = RESULTS) -> dict[tuple[int, int], dict]:
    doc = json.loads(results.read_text())
    return {(c["size"], c["post_list"]): c for c in doc["cells"]}


def _ratio(cell: dict, tool: str, metric: str) -> float:
    mine, ref = cell["tools"][tool][metric], cell["tools"]["ib_write_bw"][metric]
    return statistics.median(mine) / statistics.median(ref)


# The two-boot run's one missing result: pyverbs at 4 KiB / post list 16, round 1, stopped after its
# first progress line with no result (docs/benchmarks.md); that cell has 4 pyverbs rounds. The
# one-boot run has none missing.
SHORT_OF_FIVE = {RESULTS: {(4096, 16, "pyverbs"): 4}, ONE_BOOT: {}}


@RECORDINGS
def test_every_cell_has_five_rounds_of_every_tool_but_the_one_recorded_miss(results):
    cells = _cells(results)
    assert sorted(cells) == sorted((s, pl) for s in SIZES for pl in POST_LISTS)
    for key, cell in cells.items():
        for tool in TOOLS:
            rounds = cell["tools"][tool]
            want = SHORT_OF_FIVE[results].get((*key, tool), 5)
            assert len(rounds["gbps"]) == want and len(rounds["msgs_per_s"]) == want, (key, tool)
            assert min(rounds["gbps"]) > 0, (key, tool)


@RECORDINGS
def test_the_guest_ran_on_the_instruction_counted_clock(results):
    # With -icount shift=0 QEMU's guest TSC advances 1 ns per instruction (cpu_get_ticks() returns
    # the icount clock), so the kernel calibrates a 1000 MHz TSC whatever the host's frequency;
    # /proc/cpuinfo's "cpu MHz", which perftest checks its own TSC sample against, says the same.
    doc = json.loads(results.read_text())
    assert "LAB_ICOUNT=0" in doc["note"]
    assert doc["boots"]
    for boot in doc["boots"]:
        mhz = [float(line.split(":")[1]) for line in boot["clock"] if line.startswith("cpu MHz")]
        assert mhz and abs(mhz[0] - 1000.0) < 1.0, boot["clock"][:5]
        assert "clocksource: tsc" in boot["clock"]


@RECORDINGS
@pytest.mark.parametrize("post_list", POST_LISTS)
@pytest.mark.parametrize("size", SIZES)
def test_ib_write_bw_repeats_within_5_percent(size, post_list, results):
    rounds = _cells(results)[(size, post_list)]["tools"]["ib_write_bw"]["msgs_per_s"]
    assert max(rounds) / min(rounds) <= MAX_SPREAD, rounds


@RECORDINGS
@pytest.mark.parametrize("metric", ["gbps", "msgs_per_s"])
@pytest.mark.parametrize("post_list", POST_LISTS)
@pytest.mark.parametrize("size", SIZES)
def test_native_keeps_up_with_ib_write_bw(size, post_list, metric, results):
    assert _ratio(_cells(results)[(size, post_list)], "native", metric) >= MIN_RATIO


def test_the_one_boot_run_passed_its_plan_in_one_boot():
    doc = json.loads(ONE_BOOT.read_text())
    assert [b["exit_status"] for b in doc["boots"]] == ["0"] and "plan exit 0" in doc["note"]


def test_the_rerun_of_the_missing_cell_repeats_in_one_boot():
    # A third boot of 4 KiB / post list 16 alone (tests/fixtures/lab/native_icount_4k16.json): every
    # tool's 5 rounds, the plan passed, spreads within 5% and native >= 0.95 of ib_write_bw.
    doc = json.loads((REPO / "tests/fixtures/lab/native_icount_4k16.json").read_text())
    assert "LAB_ICOUNT=0" in doc["note"] and [b["exit_status"] for b in doc["boots"]] == ["0"]
    (cell,) = doc["cells"]
    assert (cell["size"], cell["post_list"]) == (4096, 16)
    for tool in TOOLS:
        rounds = cell["tools"][tool]["msgs_per_s"]
        assert len(rounds) == 5 and max(rounds) / min(rounds) <= MAX_SPREAD, (tool, rounds)
    assert _ratio(cell, "native", "gbps") >= MIN_RATIO and _ratio(cell, "native", "msgs_per_s") >= MIN_RATIO
