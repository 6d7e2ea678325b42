#!/usr/bin/env bash
# Probe: planned-flat's per-launch cost at 128 B (see tail_probe.py), then the product's
# own numbers at 1x and 4x the default batch (gather-bench --requests 128 / 512, slots scaled so the
# slot density stays the same). GPU only; results under $OUT.
cd "$(dirname "$0")/../.."
export PYTHONPATH=.
OUT=${OUT:-/tmp/tail}
mkdir -p "$OUT"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$OUT/gpu.txt" 2>&1
python3 scripts/probes/tail_probe.py "${SIZES:-128,64}" "${NS:-131072,262144,1048576}" 2>&1 | tee "$OUT/tail_probe.txt"
[ -n "$SKIP_PRODUCT" ] && exit 0
for cfg in "128 300000" "512 1200000"; do
  set -- $cfg
  for pattern in random unique; do
    python3 -m gdrdiag gather-bench --quiet -s 128 --pattern "$pattern" --requests "$1" --slots "$2" \
      -k planned-flat,warp --rounds 2 --ce-per-case --json-out "$OUT/p-$pattern-$1.json" > /dev/null 2> "$OUT/p-$pattern-$1.err" \
      || echo "failed: $pattern $1"
  done
done
python3 - "$OUT" <<'PY'
import json, sys, glob, os
for path in sorted(glob.glob(f"{sys.argv[1]}/p-*.json")):
    for r in json.load(open(path))["results"]:
        m, k = r["metrics"], r["params"].get("kernel")
        if k and r["status"] == "OK":
            gap = m["us_per_batch"] * (1 - m["ratio_to_ce"] / m["ceiling_ratio_to_ce"])
            print(os.path.basename(path), k, f"{m['us_per_batch']:.1f} us/batch",
                  f"{m['ratio_to_ce'] / m['ceiling_ratio_to_ce']:.4f} of ceiling, gap {gap:.2f} us,",
                  f"CE {m['ce_gbytes_per_s']:.2f} GB/s, plan {m['plan_us']}")
PY
