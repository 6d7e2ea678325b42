#!/usr/bin/env python3
"""The issue-13 scale check: 10,000 synthetic node records, `gdrdiag fleet`, time, memory, detection.

1. ``make_synthetic.py`` writes N records (default 10,000; 5 % node faults of 16 kinds, 1 % partial
   or corrupt records, 2 % run-to-run noise)
   into a temporary folder (or ``--dir``);
2. ``gdrdiag --json fleet DIR`` runs as a child process; wall time and peak resident memory
   (``wait4`` rusage of that child only) are measured;
3. ``evaluate.py`` scores the output against the manifest.

Prints one JSON object and exits 1 if a bar is missed: 10,000 records < 10 s and < 1 GiB
(50,000: < 60 s and < 2 GiB), precision and recall >= 0.95, the injected cause leading >= 0.9,
healthy flag rate <= 0.5 % (scripts/fleet/evaluate.py).

Run: ``.venv/bin/python scripts/fleet/scale_check.py [-n 10000] [--dir DIR] [--keep]``
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import evaluate  # noqa: E402

ROOT = HERE.parents[1]


def limits(n: int) -> tuple[float, int]:
    """(seconds, bytes) allowed for n records: the fleet's time and memory bars, scaled."""
    return (10.0, 1 << 30) if n <= 10_000 else (60.0, 2 << 30)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("-n", type=int, default=10000)
    ap.add_argument("--dir", type=Path, help="where to write the records (default: a temporary folder)")
    ap.add_argument("--keep", action="store_true", help="keep the records")
    args = ap.parse_args()
    folder = args.dir or Path(tempfile.mkdtemp(prefix="gdrdiag-fleet-scale-"))
    # this checkout's gdrdiag, whatever the venv's console script points at
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    limit_s, limit_bytes = limits(args.n)
    try:
        t0 = time.monotonic()
        subprocess.run(
            [sys.executable, str(HERE / "make_synthetic.py"), str(folder), "-n", str(args.n)],
            check=True,
            stdout=subprocess.DEVNULL,
        )
        generate_s = time.monotonic() - t0
        size = sum(p.stat().st_size for p in folder.glob("*.json"))
        os.sync()
        out_path = folder.parent / (folder.name + ".fleet.json")
        with open(out_path, "w") as out:
            start = time.monotonic()
            child = subprocess.Popen(
                [sys.executable, "-m", "gdrdiag", "--json", "fleet", str(folder)], stdout=out, env=env
            )
            _, status, usage = os.wait4(child.pid, 0)
            wall = time.monotonic() - start
        rc = os.waitstatus_to_exitcode(status)
        score = evaluate.evaluate(
            json.loads(out_path.read_text()), json.loads((folder / ".manifest.json").read_text())
        )
        out_path.unlink()
        result = {
            "date_utc": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M"),
            "machine": f"{platform.node()}: {os.cpu_count()} CPUs, Python {platform.python_version()}",
            "records": args.n,
            "bytes_on_disk": size,
            "generate_s": round(generate_s, 1),
            "fleet_exit_code": rc,
            "fleet_wall_s": round(wall, 2),
            "fleet_peak_rss_mib": round(usage.ru_maxrss / 1024, 1),  # Linux: ru_maxrss in KiB
            **{k: v for k, v in score.items() if k not in ("misses", "false_positive_hosts", "per_kind")},
            "misses": score["misses"],
        }
        ok = wall < limit_s and usage.ru_maxrss * 1024 < limit_bytes and evaluate.passes(score)
        result["pass"] = ok
        print(json.dumps(result, indent=1))
        return 0 if ok else 1
    finally:
        if not args.keep and args.dir is None:
            shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
