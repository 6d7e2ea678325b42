#!/usr/bin/env python3
"""Per-round numbers, spreads and ratios of a native-plan boot, as a results file and a table.

Usage: scripts/lab/native_timing.py JSON_OUT RESULTS_DIR [RESULTS_DIR...] [--note TEXT]

A RESULTS_DIR is what ``scripts/lab/run.sh native`` left in out/lab/native (``scripts/native_lab_check.sh``
ran ``ib_write_bw``, ``mr-bench --provider native`` and ``mr-bench --provider pyverbs`` alternated,
ROUNDS rounds, per size and post list; several folders = boots that split the cells between
them, each cell measured in one boot). JSON_OUT gets every round's bandwidth and message rate per
tool and cell, plus each boot's clock facts (clock.txt) and the command line it ran with, so a test
can recompute the spreads and ratios from the data (tests/lab/test_native_timing.py reads the copy
committed under tests/fixtures/lab/). The markdown table goes to stdout, for docs/benchmarks.md.

Spread = max / min over the rounds of one tool in one cell; ratio = median of the tool's rounds /
median of ib_write_bw's rounds in the same cell (bandwidth and message rate).
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path

SIZES = (64, 4096, 65536, 1048576)
POST_LISTS = (1, 16)
TOOLS = ("ib_write_bw", "native", "pyverbs")
# ib_write_bw's result line: #bytes #iterations BW-peak BW-average MsgRate (Gb/s with --report_gbits, Mpps).
LINE = re.compile(r"^\s*(\d+)\s+(\d+)\s+([0-9.]+)\s+([0-9.]+)\s+([0-9.]+)\s*$")


@dataclass
class Rounds:
    """One tool's rounds in one cell, in round order (Gb/s = 1e9 bit/s of payload; messages/s)."""

    gbps: list[float] = field(default_factory=list)
    msgs_per_s: list[float] = field(default_factory=list)


@dataclass
class Cell:
    """One size and post list: every tool's rounds, all from one boot (its index in the results)."""

    size: int
    post_list: int
    boot: int
    tools: dict[str, Rounds]


def _resolution(printed: str) -> float:
    """Relative rounding step of a printed decimal (half a unit of its last digit over its value)."""
    decimals = len(printed.partition(".")[2])
    value = float(printed)
    return 0.5 * 10.0**-decimals / value if value > 0 else float("inf")


def _perftest(path: Path) -> tuple[float, float] | None:
    text = path.read_text(errors="replace")
    if "Gb/sec" not in text:
        return None  # not --report_gbits: refuse to guess the unit
    for line in text.splitlines():
        if m := LINE.match(line):
            # perftest prints Gb/s with two decimals (0.01 Gb/s is all it says at 64 B) and Mpps
            # with six (two significant digits at 1 MiB): both are the same measurement (rate =
            # Gb/s / payload bits), so take whichever of the two printed numbers is finer.
            size, bw_s, rate_s = int(m.group(1)), m.group(4), m.group(5)
            bw, rate = float(bw_s), float(rate_s) * 1e6
            if _resolution(rate_s) <= _resolution(bw_s):
                return rate * size * 8 / 1e9, rate
            return bw, bw * 1e9 / (size * 8)
    return None


def _gdrdiag(path: Path, provider: str) -> tuple[float, float] | None:
    for r in json.loads(path.read_text()).get("results", []):
        if r.get("status") == "OK" and r.get("verified") and r.get("provider") == provider:
            return float(r["stats"]["median"]), float(r["metrics"]["msgs_per_s"])
    return None


def _round_no(path: Path) -> int:
    m = re.search(r"-r(\d+)\.(txt|json)$", path.name)
    return int(m.group(1)) if m else 0


def read_cells(res: Path, boot: int = 0) -> list[Cell]:
    """Every measured cell of a results folder; a run without a number is left out of its rounds."""
    cells = []
    for size in SIZES:
        for pl in POST_LISTS:
            tools: dict[str, Rounds] = {}
            runs = {
                "ib_write_bw": [
                    (p, _perftest(p))
                    for p in res.glob(f"pt-{size}-l{pl}-r[0-9]*.txt")
                    if not p.name.endswith("-server.txt")
                ],
                "native": [
                    (p, _gdrdiag(p, "native")) for p in res.glob(f"gd-native-{size}-l{pl}-r[0-9]*.json")
                ],
                "pyverbs": [
                    (p, _gdrdiag(p, "pyverbs")) for p in res.glob(f"gd-pyverbs-{size}-l{pl}-r[0-9]*.json")
                ],
            }
            for tool, found in runs.items():
                rounds = Rounds()
                for _, v in sorted(
                    ((p, v) for p, v in found if v is not None), key=lambda pv: _round_no(pv[0])
                ):
                    rounds.gbps.append(v[0])
                    rounds.msgs_per_s.append(v[1])
                tools[tool] = rounds
            if tools["ib_write_bw"].gbps:
                cells.append(Cell(size, pl, boot, tools))
    return cells


def spread(xs: list[float]) -> float | None:
    """Max / min of the rounds (1.0 = every round the same)."""
    return max(xs) / min(xs) if xs and min(xs) > 0 else None


def ratio(xs: list[float], ref: list[float]) -> float | None:
    """Median of a tool's rounds over the median of ib_write_bw's in the same cell."""
    return statistics.median(xs) / statistics.median(ref) if xs and ref else None


def _size(n: int) -> str:
    return f"{n} B" if n < 1024 else f"{n // 1024} KiB" if n < 1 << 20 else f"{n >> 20} MiB"


def _f(x: float | None, nd: int = 3) -> str:
    return f"{x:.{nd}f}" if x is not None else "n/a"


def markdown(cells: list[Cell]) -> str:
    """The table for docs/benchmarks.md: spreads first (is the yardstick steady?), then the ratios."""
    head = (
        "| size | post list | rounds | ib_write_bw spread | native spread | pyverbs spread "
        "| ib_write_bw Gb/s | native / ib_write_bw BW (rate) | pyverbs / ib_write_bw BW (rate) |"
    )
    lines = [head, "|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for c in cells:
        pt, nat, py = (c.tools[t] for t in TOOLS)
        lines.append(
            f"| {_size(c.size)} | {c.post_list} | {len(pt.gbps)} | {_f(spread(pt.gbps))} "
            f"| {_f(spread(nat.gbps))} | {_f(spread(py.gbps))} | {_f(statistics.median(pt.gbps), 4)} "
            f"| {_f(ratio(nat.gbps, pt.gbps))} ({_f(ratio(nat.msgs_per_s, pt.msgs_per_s))}) "
            f"| {_f(ratio(py.gbps, pt.gbps))} ({_f(ratio(py.msgs_per_s, pt.msgs_per_s))}) |"
        )
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    """Write JSON_OUT and print the table."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("json_out", type=Path)
    ap.add_argument("results", type=Path, nargs="+")
    ap.add_argument("--note", default="", help="how the boot was made (command, date, machine)")
    a = ap.parse_args(argv)
    cells = [c for i, res in enumerate(a.results) for c in read_cells(res, i)]
    if not cells:
        print(f"native_timing.py: no ib_write_bw results in {' '.join(map(str, a.results))}", file=sys.stderr)
        return 1
    boots = []
    for res in a.results:
        clock = res / "clock.txt"
        status = res / "exit-status"
        boots.append(
            {
                "exit_status": status.read_text().strip() if status.is_file() else "none",
                "clock": clock.read_text(errors="replace").splitlines() if clock.is_file() else [],
            }
        )
    doc = {
        "note": a.note,
        "boots": boots,
        "cells": [
            {
                "size": c.size,
                "post_list": c.post_list,
                "boot": c.boot,
                "tools": {t: asdict(r) for t, r in c.tools.items()},
            }
            for c in sorted(cells, key=lambda c: (c.size, c.post_list))
        ],
    }
    a.json_out.parent.mkdir(parents=True, exist_ok=True)
    a.json_out.write_text(json.dumps(doc, indent=1) + "\n")
    print(markdown(cells))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
