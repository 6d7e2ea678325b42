"""Best / model ceiling per (pattern, record size, stride) over the Reports of gpu_gather_alignment.sh.

Each Report is one gather-bench ladder; its rows carry the measured ratio to the CE reference
and the model's ceiling for that kernel (``ratio_to_ce``, ``ceiling_ratio_to_ce``), so this only
reads them: one line per cell with every kernel's measured / ceiling and the best kernel's.
"""

from __future__ import annotations

import argparse
import json
import statistics
from collections import defaultdict
from pathlib import Path


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dir", type=Path)
    args = ap.parse_args()
    cells: dict[tuple, list[dict[str, float]]] = defaultdict(list)
    for path in sorted(args.dir.glob("*.json")):
        report = json.loads(path.read_text())
        per_kernel = {}
        key = None
        for r in report["results"]:
            m, p = r.get("metrics") or {}, r["params"]
            if r["status"] != "OK" or not m.get("ceiling_ratio_to_ce") or not m.get("ratio_to_ce"):
                continue
            key = (p["pattern"], p["record_bytes"], p["stride_bytes"])
            per_kernel[p["kernel"]] = (m["ratio_to_ce"], m["ceiling_ratio_to_ce"])
        if key:
            cells[key].append(per_kernel)
    print("pattern  R     stride  best/ceiling per run (kernel)        kernels' measured/ceiling, median")
    for key in sorted(cells):
        runs = cells[key]
        best = [max(k.values(), key=lambda t: t[0]) for k in runs]
        bests = " ".join(f"{m / c:.3f}" for m, c in best)
        kernels = sorted({k for run in runs for k in run})
        med = " ".join(
            f"{k}={statistics.median(run[k][0] / run[k][1] for run in runs if k in run):.3f}" for k in kernels
        )
        print(f"{key[0]:8s} {key[1]:5d} {key[2]:6d}  {bests:36s} {med}")


if __name__ == "__main__":
    main()
