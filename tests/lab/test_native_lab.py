"""What the QEMU lab's native plan produced: the C provider beside ib_write_bw and pyverbs on rxe0.

``scripts/lab/run.sh native`` runs ``scripts/native_lab_check.sh`` in one guest boot and leaves
every run's output in out/lab/native (``LAB_OUT``). These tests judge that every cell was
measured, by every tool, with verified payloads. The ratios themselves are a benchmark (Soft-RoCE
under emulation is noisy; docs/benchmarks.md records them), so no ratio is asserted here.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
LAB = Path(os.environ.get("LAB_OUT", REPO / "out/lab"))
RES = LAB / "native"
SIZES = (64, 4096, 65536, 1048576)
POST_LISTS = (1, 16)

pytestmark = [
    pytest.mark.lab,
    pytest.mark.skipif(
        not (RES / "exit-status").is_file(),
        reason=f"the lab's native plan has not run here (no {RES}/exit-status; scripts/lab/run.sh native)",
    ),
]


def test_the_plan_passed_with_the_native_library_loaded():
    assert (RES / "exit-status").read_text().strip() == "0"
    assert (RES / "native-library.txt").read_text().strip() == "native library: ok"


@pytest.mark.parametrize("provider", ["native", "pyverbs"])
@pytest.mark.parametrize("post_list", POST_LISTS)
@pytest.mark.parametrize("size", SIZES)
def test_every_gdrdiag_run_wrote_a_verified_result_of_its_provider(size, post_list, provider):
    runs = sorted(RES.glob(f"gd-{provider}-{size}-l{post_list}-r[0-9]*.json"))
    assert runs, f"no {provider} run at {size} B, post list {post_list}"
    for path in runs:
        results = json.loads(path.read_text())["results"]
        ok = [r for r in results if r["status"] == "OK"]
        assert ok, (path.name, [(r["key"], r["status"], r.get("reason")) for r in results])
        for r in ok:
            assert r["provider"] == provider and r["verified"] is True, (path.name, r["key"])
            assert r["params"]["size_bytes"] == size and r["params"]["post_list"] == post_list
            assert r["stats"]["median"] > 0


@pytest.mark.parametrize("post_list", POST_LISTS)
@pytest.mark.parametrize("size", SIZES)
def test_every_ib_write_bw_run_reported_a_bandwidth(size, post_list):
    runs = [
        p for p in sorted(RES.glob(f"pt-{size}-l{post_list}-r*.txt")) if not p.name.endswith("-server.txt")
    ]
    assert runs
    for path in runs:
        text = path.read_text(errors="replace")
        assert re.search(rf"^\s*{size}\s+\d+\s+[0-9.]+\s+[0-9.]+\s+[0-9.]+\s*$", text, re.M), path.name


def test_the_table_has_every_ratio_and_the_c_loop_timings():
    table = (RES / "table.md").read_text()
    rows = [line for line in table.splitlines() if re.match(r"^\| \d+ \| \d+ \|", line)]
    assert len(rows) == len(SIZES) * len(POST_LISTS)
    assert not [row for row in rows if "n/a" in row], table
    timed = re.findall(r"native --time-calls, 64 B, post list (\d+): per WR (\d+) ns in ibv_post_send", table)
    assert sorted(int(pl) for pl, _ in timed) == [1, 16] and all(int(ns) > 0 for _, ns in timed)
