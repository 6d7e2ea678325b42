#!/usr/bin/env python3
"""Accuracy of `gdrdiag fleet` on generated fleets, per fault kind (the table in docs/fleet.md).

For each seed: ``make_synthetic.generate(N, 0.05, seed, NOISE)``, every record read back through
the record reader (corrupt ones skipped), ``gdrdiag.fleet.analyse``, scored by ``evaluate.py``.
Prints each seed's totals and a Markdown table per fault kind summed over the seeds.

Run: ``python scripts/fleet/accuracy.py [-n 2000] [--noise 0.03] [--seeds 1 2 3]``
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parents[1]))

import evaluate  # noqa: E402
import make_synthetic  # noqa: E402

from gdrdiag.fleet import analyse  # noqa: E402
from gdrdiag.model.serde import SchemaError, to_jsonable  # noqa: E402
from gdrdiag.node_record import Skipped, parse_head  # noqa: E402

KEYS = ("injected", "flagged_injected", "cause_first", "healthy", "false_positives")
RATES = ("precision", "recall", "cause_leading", "healthy_flag_rate")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("-n", type=int, default=2000)
    ap.add_argument("--noise", type=float, default=0.03)
    ap.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3])
    args = ap.parse_args()
    total: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])
    ok = True
    for seed in args.seeds:
        lines, manifest = make_synthetic.generate(args.n, 0.05, seed, args.noise)
        records, skipped = [], []
        for host, line in lines:
            try:
                records.append(parse_head(line))
            except SchemaError as exc:
                skipped.append(Skipped(f"{host}.json", str(exc)))
        data = json.loads(json.dumps(to_jsonable(analyse(records, skipped=skipped))))
        score = evaluate.evaluate(data, {"expected_cause": make_synthetic.EXPECTED_CAUSE, "nodes": manifest})
        ok = ok and evaluate.passes(score)
        print(
            f"seed {seed}: "
            + ", ".join(f"{k} {score[k]}" for k in KEYS)
            + "; "
            + ", ".join(f"{k} {score[k]:.4f}" for k in RATES)
        )
        for miss in score["misses"][:5]:
            print(f"  miss: {miss}")
        for kind, v in score["per_kind"].items():
            t = total[kind]
            t[0], t[1], t[2] = t[0] + v["n"], t[1] + v["flagged"], t[2] + v["cause"]
    print("\n| fault | nodes | flagged | right cause first | codes that name it |\n|---|---|---|---|---|")
    for kind, (n, flagged, cause) in sorted(total.items()):
        codes = ", ".join(f"`{c}`" for c in make_synthetic.EXPECTED_CAUSE.get(kind, [])) or "-"
        print(f"| {kind} | {n} | {flagged} | {cause} | {codes} |")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
