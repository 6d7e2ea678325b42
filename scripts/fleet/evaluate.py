#!/usr/bin/env python3
"""Score `gdrdiag --json fleet` output against a synthetic manifest (scripts/fleet/make_synthetic.py).

Prints detection (injected nodes flagged), cause accuracy (the injected cause named first) and
false positives (healthy nodes flagged), and exits 1 when the issue's bar is missed: every
injected node flagged with its cause first, false positives under 0.5 %.

Run: ``gdrdiag --json fleet DIR > fleet.json; python scripts/fleet/evaluate.py fleet.json DIR/.manifest.json``
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def evaluate(fleet: dict, manifest: dict) -> dict:
    """Counts: injected, flagged_injected, cause_first, healthy, false_positives, misses."""
    expected = manifest["expected_cause"]
    truth = manifest["nodes"]
    nodes = {n["host"]: n for n in fleet["nodes"]}
    injected = [h for h, f in truth.items() if f]
    healthy = [h for h, f in truth.items() if not f]
    flagged = {h for h, n in nodes.items() if n["level"] != "ok"}
    misses = []
    cause_first = 0
    for h in injected:
        node = nodes.get(h)
        code = (node or {}).get("cause") or {}
        if h in flagged and code.get("code") == expected[truth[h]]:
            cause_first += 1
        else:
            misses.append(f"{h} ({truth[h]}): level {node and node['level']}, cause {code.get('code')}")
    fp = sorted(h for h in healthy if h in flagged)
    return {
        "injected": len(injected),
        "flagged_injected": sum(1 for h in injected if h in flagged),
        "cause_first": cause_first,
        "healthy": len(healthy),
        "false_positives": len(fp),
        "false_positive_rate": len(fp) / max(1, len(healthy)),
        "misses": misses[:20],
        "false_positive_hosts": fp[:20],
    }


def main() -> int:
    fleet = json.loads(Path(sys.argv[1]).read_text())
    manifest = json.loads(Path(sys.argv[2]).read_text())
    r = evaluate(fleet, manifest)
    print(json.dumps(r, indent=1))
    ok = r["flagged_injected"] == r["injected"] == r["cause_first"] and r["false_positive_rate"] < 0.005
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
