"""Best / model ceiling per (pattern, record size, stride) over the Reports of gpu_gather_alignment.sh.

Each Report is one gather-bench ladder; its rows carry the measured ratio to the CE reference
and the model's ceiling for that kernel (``ratio_to_ce``, ``ceiling_ratio_to_ce``), so this only
reads them: one line per cell with the best kernel's measured / ceiling in each run and every
kernel's median. Only ladder rows count (a sweep's rows are other cells).
"""

from __future__ import annotations

import argparse
import statistics
import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from gdrdiag.cli.report_files import load_report  # noqa: E402
from gdrdiag.model.results import Status  # noqa: E402

Cell = tuple[str, int, int]  # pattern, record bytes, stride bytes
Run = dict[str, tuple[float, float]]  # kernel -> (measured ratio to CE, model ceiling)


def ladder_cells(directory: Path) -> dict[Cell, list[Run]]:
    """Each Report's ladder rows as one run of its cell."""
    cells: dict[Cell, list[Run]] = defaultdict(list)
    for path in sorted(directory.glob("*.json")):
        runs: dict[Cell, Run] = defaultdict(dict)
        for r in load_report(path).results:
            m, p = r.metrics, r.params
            if r.status is not Status.OK or r.settings.sweep != "ladder":
                continue
            if not (m.ratio_to_ce and m.ceiling_ratio_to_ce):  # type: ignore[union-attr]
                continue
            cell = (p.pattern, p.record_bytes, p.stride_bytes)  # type: ignore[union-attr]
            runs[cell][p.kernel] = (m.ratio_to_ce, m.ceiling_ratio_to_ce)  # type: ignore[union-attr]
        for cell, run in runs.items():
            cells[cell].append(run)
    return cells


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dir", type=Path)
    cells = ladder_cells(ap.parse_args().dir)
    print("pattern  R     stride  best/ceiling per run (kernel)        kernels' measured/ceiling, median")
    for cell in sorted(cells):
        runs = cells[cell]
        best = [max(run.values(), key=lambda t: t[0]) for run in runs]
        bests = " ".join(f"{m / c:.3f}" for m, c in best)
        kernels = sorted({k for run in runs for k in run})
        med = " ".join(
            f"{k}={statistics.median(run[k][0] / run[k][1] for run in runs if k in run):.3f}" for k in kernels
        )
        print(f"{cell[0]:8s} {cell[1]:5d} {cell[2]:6d}  {bests:36s} {med}")


if __name__ == "__main__":
    main()
