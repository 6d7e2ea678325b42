"""Print copy-bench's block sweep from its JSON: batched from Python vs from C vs through cuda-bindings.

Usage: PYTHONPATH=. python3 scripts/probes/copy_blocks_summary.py blocks.json

Per block size: GB/s of the batched call from Python (ctypes, arrays built once), from C, and through
cuda-bindings, Python/C, and each one's host time per call; then the half-bandwidth block sizes
(the binding's is computed here from its rows, the same interpolation copy-bench uses).
"""

from __future__ import annotations

import json
import sys

from gdrdiag.bench.copy_blocks import half_bandwidth_block_size

KEYS = ("copy_blocks_batched", "copy_blocks_batched_c", "copy_blocks_batched_binding", "copy_blocks_per_call")


def _gbps(row: dict, key: str) -> float:
    return row[key]["stats"]["median"] if key in row else float("nan")


def _issue_ms(row: dict, key: str) -> float:
    m = (row.get(key) or {}).get("metrics") or {}
    return (m.get("issue_us_per_call") or float("nan")) / 1e3


def main() -> int:
    report = json.load(open(sys.argv[1]))
    rows: dict[int, dict[str, dict]] = {}
    summary = {}
    for r in report["results"]:
        if r["key"] == "copy_blocks_summary":
            summary = r.get("metrics") or {}
        elif r["key"] in (*KEYS, "copy_blocks_coalesced") and r["status"] == "OK":
            rows.setdefault(r["params"]["block_bytes"], {})[r["key"]] = r
    print("block   blocks  py GB/s  C GB/s  py/C   bind GB/s  bind/C  issue ms: py    C     bind")
    for size in sorted(rows):
        row = rows[size]

        py, c, b = (_gbps(row, k) for k in KEYS[:3])
        blocks = next(iter(row.values()))["params"]["blocks"]
        print(
            f"{size:>7} {blocks:>6} {py:8.2f} {c:7.2f} {py / c:5.2f} {b:10.2f} {b / c:7.2f}"
            "           " + " ".join(f"{_issue_ms(row, k):6.2f}" for k in KEYS[:3])
        )
    binding = [
        (s, row[KEYS[2]]["metrics"]["ratio_to_coalesced"])
        for s, row in rows.items()
        if KEYS[2] in row and (row[KEYS[2]].get("metrics") or {}).get("ratio_to_coalesced") is not None
    ]
    half = {
        k.removeprefix("half_bandwidth_block_bytes_"): v for k, v in summary.items() if k.startswith("half_")
    }
    half["batched_binding"] = half_bandwidth_block_size(binding) if binding else None
    print(
        "half the coalesced bandwidth at (bytes):", json.dumps({k: v and round(v) for k, v in half.items()})
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
