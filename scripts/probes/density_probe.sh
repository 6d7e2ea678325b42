#!/usr/bin/env bash
# Probe: does the random pattern lose at 128 B because of repeated slots or because its
# distinct slots are sparser in the table (more pages per byte)? Same record size, three index
# sets, twice, interleaved: unique at 87% slot density, unique at 58% (the density of the random
# pattern's distinct slots, no repeats), random (58%, a third of draws repeat). Prints each
# kernel's measured / ceiling. GPU only; results under $OUT.
cd "$(dirname "$0")/../.."
export PYTHONPATH=.
OUT=${OUT:-/tmp/density}
R=${R:-128}
mkdir -p "$OUT"
for rep in 1 2; do
  for cfg in "unique 300000" "unique 450000" "random 300000"; do
    set -- $cfg
    python3 -m gdrdiag gather-bench --quiet -s "$R" --pattern "$1" --slots "$2" -k planned-flat,warp \
      --rounds 2 --json-out "$OUT/d-$1-$2-$rep.json" > /dev/null 2>&1 || echo "failed: $cfg"
  done
done
python3 - "$OUT" <<'PY'
import json, sys, glob, os
for path in sorted(glob.glob(f"{sys.argv[1]}/d-*.json")):
    rows = []
    for r in json.load(open(path))["results"]:
        m, k = r["metrics"], r["params"].get("kernel")
        if k and r["status"] == "OK":
            rows.append(f"{k} {r['stats']['median']:.2f} GB/s {m['ratio_to_ce'] / m['ceiling_ratio_to_ce']:.3f} of ceiling"
                        f" (read fraction {m['records_read_fraction']:.3f})")
        elif not k:
            rows.append(f"CE {r['stats']['median']:.2f}")
    print(os.path.basename(path), " | ".join(rows))
PY
