#!/usr/bin/env python3
"""Score `gdrdiag --json fleet` output against a synthetic manifest (scripts/fleet/make_synthetic.py).

Node faults: recall (injected nodes flagged), precision (flagged nodes that were injected), the
injected cause leading (its code, any of the codes that name it, is the node's cause; a fault
no record can name expects "(no cause found)"), and the healthy-node flag rate. Record faults:
partial records flagged with the metric "not measured", corrupt records skipped. Per fault kind.
Exits 1 when the issue's bar is missed: precision >= 0.95, recall >= 0.95, cause >= 0.9,
healthy flag rate <= 0.5 %.

Run: ``gdrdiag --json fleet DIR > fleet.json; python scripts/fleet/evaluate.py fleet.json DIR/.manifest.json``
"""

from __future__ import annotations

import json
import sys
from collections import defaultdict
from pathlib import Path

NO_CAUSE = "(no cause found)"
RECORD_FAULTS = ("partial", "corrupt")
BAR = {"precision": 0.95, "recall": 0.95, "cause_leading": 0.9, "healthy_flag_rate": 0.005}


def evaluate(fleet: dict, manifest: dict) -> dict:
    """Counts and rates overall and per fault kind; ``misses`` and ``false_positive_hosts`` (first 20)."""
    expected = manifest["expected_cause"]
    truth = manifest["nodes"]
    nodes = {n["host"]: n for n in fleet["nodes"]}
    skipped = {s["source"].rsplit(".", 1)[0] for s in fleet.get("skipped", [])}
    flagged = {h for h, n in nodes.items() if n["level"] != "ok"}
    kinds: dict[str, dict] = defaultdict(lambda: {"n": 0, "flagged": 0, "cause": 0})
    misses, fp = [], []
    for host, fault in truth.items():
        node = nodes.get(host)
        if fault == "corrupt":
            k = kinds[fault]
            k["n"] += 1
            k["flagged"] += host in skipped and node is None  # "flagged" = skipped with a reason
            k["cause"] += host in skipped and node is None
            continue
        if fault == "partial":
            k = kinds[fault]
            k["n"] += 1
            ok = host in flagged and any("not measured" in r for r in node["reasons"])
            k["flagged"] += host in flagged
            k["cause"] += ok
            continue
        if fault is None:
            if host in flagged:
                fp.append(host)
            continue
        k = kinds[fault]
        k["n"] += 1
        cause = ((node or {}).get("cause") or {}).get("code") or NO_CAUSE
        want = expected[fault]
        want = [want] if isinstance(want, str) else want
        if host in flagged:
            k["flagged"] += 1
            if cause in want:
                k["cause"] += 1
            else:
                misses.append(f"{host} ({fault}): cause {cause}, expected one of {want}")
        else:
            misses.append(f"{host} ({fault}): not flagged ({node and node['worst_metric']})")
    injected = sum(v["n"] for f, v in kinds.items() if f not in RECORD_FAULTS)
    tp = sum(v["flagged"] for f, v in kinds.items() if f not in RECORD_FAULTS)
    cause = sum(v["cause"] for f, v in kinds.items() if f not in RECORD_FAULTS)
    healthy = sum(1 for f in truth.values() if f is None)
    return {
        "injected": injected,
        "flagged_injected": tp,
        "cause_first": cause,
        "healthy": healthy,
        "false_positives": len(fp),
        "precision": tp / max(1, tp + len(fp)),
        "recall": tp / max(1, injected),
        "cause_leading": cause / max(1, tp),
        "healthy_flag_rate": len(fp) / max(1, healthy),
        "false_positive_rate": len(fp) / max(1, healthy),
        "per_kind": {f: dict(v) for f, v in sorted(kinds.items())},
        "misses": misses[:20],
        "false_positive_hosts": sorted(fp)[:20],
    }


def passes(r: dict) -> bool:
    """The issue's bar."""
    return (
        r["precision"] >= BAR["precision"]
        and r["recall"] >= BAR["recall"]
        and r["cause_leading"] >= BAR["cause_leading"]
        and r["healthy_flag_rate"] <= BAR["healthy_flag_rate"]
    )


def main() -> int:
    fleet = json.loads(Path(sys.argv[1]).read_text())
    manifest = json.loads(Path(sys.argv[2]).read_text())
    r = evaluate(fleet, manifest)
    print(json.dumps(r, indent=1))
    ok = passes(r)
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
