#!/usr/bin/env python3
"""gdrdiag/perftest bandwidth ratios per size from one verbs-plan boot (for docs/benchmarks.md).

Usage: scripts/lab/perftest_ratios.py [RESULTS_DIR]     (default out/lab/verbs)

The verbs plan ran, for each size and round, ``ib_write_bw --report_gbits`` and then
``gdrdiag mr-bench --provider pyverbs`` with perftest's defaults (1 QP, TX depth 128, post list 1,
one signal in 100) on the same rxe0, in the same boot. Both report Gb/s = 1e9 bit/s of payload.
Soft-RoCE under software emulation: the ratios say whether gdrdiag's loop keeps up with
perftest's on the same device; the absolute numbers say nothing about any NIC.
"""

from __future__ import annotations

import json
import re
import statistics
import sys
from pathlib import Path

LINE = re.compile(r"^\s*(\d+)\s+(\d+)\s+([0-9.]+)\s+([0-9.]+)\s+([0-9.]+)\s*$")


def perftest_gbps(path: Path) -> float | None:
    """BW average (Gb/s, --report_gbits) from an ib_write_bw client's output."""
    if not path.is_file():
        return None
    text = path.read_text(errors="replace")
    if "Gb/sec" not in text:
        return None  # not run with --report_gbits: refuse to guess the unit
    for line in text.splitlines():
        m = LINE.match(line)
        if m:
            return float(m.group(4))
    return None


def gdrdiag_gbps(path: Path) -> float | None:
    """Median Gb/s of the verified pyverbs result in a ``--json-out`` file."""
    if not path.is_file():
        return None
    for r in json.loads(path.read_text()).get("results", []):
        if r.get("status") == "OK" and r.get("verified") and r.get("provider") == "pyverbs":
            return float(r["stats"]["median"])
    return None


def rows(res: Path) -> list[dict]:
    """One row per size: medians over rounds of each tool and their ratio."""
    sizes = sorted(
        {int(m.group(1)) for p in res.glob("pt-client-*.txt") if (m := re.match(r"pt-client-(\d+)-", p.name))}
    )
    out = []
    for size in sizes:
        pt = [x for p in sorted(res.glob(f"pt-client-{size}-*.txt")) if (x := perftest_gbps(p)) is not None]
        gd = [x for p in sorted(res.glob(f"gd-{size}-*.json")) if (x := gdrdiag_gbps(p)) is not None]
        ratio = statistics.median(gd) / statistics.median(pt) if pt and gd else None
        out.append({"size": size, "perftest": pt, "gdrdiag": gd, "ratio": ratio})
    return out


def markdown(table: list[dict]) -> str:
    """The table for docs/benchmarks.md (ratios are the result; Gb/s only to show the inputs)."""
    lines = [
        "| size | rounds | gdrdiag / perftest (median of rounds) | per-round ratios |",
        "|---:|---:|---:|---|",
    ]
    for r in table:
        per = ", ".join(f"{g / p:.2f}" for g, p in zip(r["gdrdiag"], r["perftest"], strict=False) if p)
        ratio = f"{r['ratio']:.2f}" if r["ratio"] is not None else "n/a"
        size = f"{r['size'] // 1024} KiB" if r["size"] < 1 << 20 else f"{r['size'] >> 20} MiB"
        lines.append(f"| {size} | {min(len(r['gdrdiag']), len(r['perftest']))} | {ratio} | {per} |")
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    """Print the markdown table."""
    res = Path(argv[0]) if argv else Path(__file__).resolve().parents[2] / "out/lab/verbs"
    table = rows(res)
    if not table:
        print(f"perftest_ratios.py: no perftest results in {res}", file=sys.stderr)
        return 1
    print(markdown(table))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
