"""Calibration of small PCIe reads: what one read request of R bytes costs on the link.

Runs gather-bench once per record size R (16 .. 128 B) with the slot stride fixed at 128 B, so
every record is a read of its own, line-aligned, no two records share a line, and nothing merges;
the order is unique (each slot once, random order) and sequential (slot order). Prints, per R and
pattern, the measured completions per second (records / s: one completion each) and the wire
bytes per completion if the link ran at its whole-line rate (128-B reads, 22 B overhead each):
payload (R rounded up to 32-B sectors) plus what the model's per-completion overhead would have
to be for the wire alone to explain the rate.
Needs a GPU; results under $OUT (default /tmp/gather-cal). Usage: python3 scripts/gpu_gather_calibrate.py
KERNELS (default warp,lines) picks the kernels: planned-lines reads the same isolated records in
slot order, and runs its batches overlapped (programmatic dependent launch), so its rates carry
no per-launch ramp; SIZES (comma-separated) the record sizes.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

SIZES = tuple(int(x) for x in os.environ.get("SIZES", "16,32,48,64,96,128").split(","))
KERNELS = os.environ.get("KERNELS", "warp,lines")
PATTERNS = ("sequential", "unique")


def run(out: Path, R: int, pattern: str) -> dict:
    path = out / f"cal-{pattern}-{R}.json"
    cmd = [
        sys.executable,
        "-m",
        "gdrdiag",
        "gather-bench",
        "--quiet",
        "-s",
        str(R),
        "--stride",
        "128",
        "--pattern",
        pattern,
        "-k",
        KERNELS,
        "--rounds",
        "2",
        "--json-out",
        str(path),
    ]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    rows = {}
    for r in json.loads(path.read_text())["results"]:
        kernel = r["params"].get("kernel")
        if kernel and r["status"] == "OK":
            rows[kernel] = (r["stats"]["median"], r["metrics"]["ce_gbytes_per_s"])
    return rows


def main() -> int:
    out = Path(os.environ.get("OUT", "/tmp/gather-cal"))
    out.mkdir(parents=True, exist_ok=True)
    results = {(p, R): run(out, R, p) for p in PATTERNS for R in SIZES}
    # The whole-line rate: 128-B reads, sequential, best kernel; wire = completions x (128 + 22).
    line_gbps = max(g for g, _ in results[("sequential", 128)].values())
    wire = line_gbps / 128 * (128 + 22)
    print(f"whole-line wire estimate: {wire:.1f} GB/s (128-B reads at {line_gbps:.2f} GB/s, 22 B each)")
    print("pattern R | kernel GB/s | G completions/s | wire B per completion | implied overhead B | CE GB/s")
    for (p, R), rows in results.items():
        for kernel, (g, ce) in sorted(rows.items()):
            rate = g / R
            payload = -(-R // 32) * 32
            per = wire / rate
            print(f"{p} {R} | {kernel} {g:.2f} | {rate:.3f} | {per:.1f} | {per - payload:.1f} | {ce:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
