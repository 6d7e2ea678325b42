#!/usr/bin/env bash
# Small gather records on the device machine, in one call: the gather GPU tests, then the record-size sweep
# (16 B .. 4 KiB) for the unique and the random (repeating) pattern with the small-record
# kernels, every payload verified. Outputs under $OUT (default /tmp/gather-small).
# PYTEST_K selects GPU tests (-k expression; empty = all gather GPU tests); GATHER_EXTRA adds
# gather-bench options (e.g. --rounds 3); STEP_AB=1 first runs the records-per-step A/B;
# OVERLAP_AB=1 the overlapped-batches A/B (planned kernels with and without programmatic
# dependent launch, interleaved, twice).
cd "$(dirname "$0")/.."
export PYTHONPATH=.
OUT=${OUT:-/tmp/gather-small}
mkdir -p "$OUT"
{ nvidia-smi --query-gpu=name,driver_version,pcie.link.gen.current,pcie.link.width.current --format=csv; date -u; } \
  > "$OUT/gpu.txt" 2>&1
cat "$OUT/gpu.txt"
s=$(date +%s)
python3 -m pytest -q -rs tests/hw/test_gather_gpu.py tests/unit/test_native_compile.py ${PYTEST_K:+-k "$PYTEST_K"} \
  > "$OUT/pytest.txt" 2>&1
echo "pytest rc=$? wall_s=$(( $(date +%s) - s ))"; tail -n 4 "$OUT/pytest.txt"
if [ -n "${STEP_AB:-}" ]; then  # the A/B behind planned_records_per_step: 8 vs 32 records per warp step
  for pat in unique random; do for R in 64 128 256; do for m in 8 32; do
    python3 -m gdrdiag gather-bench -s $R --pattern $pat -k planned-lines --records-per-step $m --rounds 3 \
      > "$OUT/ab-$pat-$R-$m.txt" 2>&1
    echo "A/B $pat R=$R M=$m: $(grep -E '^planned-lines ' "$OUT/ab-$pat-$R-$m.txt" | awk '{print $2, $3, $4, $5, $6}')"
  done; done; done
fi
if [ -n "${OVERLAP_AB:-}" ]; then
  for rep in 1 2; do for pat in random unique; do for R in 64 128; do for o in overlap no-overlap; do
    python3 -m gdrdiag gather-bench -s $R --pattern $pat -k planned-flat,planned-lines --$o-batches \
      --rounds 2 --ce-per-case --json-out "$OUT/ov-$pat-$R-$o-$rep.json" > /dev/null 2>&1 || echo "failed $pat $R $o"
  done; done; done; done
  python3 - "$OUT" <<'PY'
import glob, json, os, sys
for path in sorted(glob.glob(f"{sys.argv[1]}/ov-*.json")):
    for r in json.load(open(path))["results"]:
        m, k = r["metrics"], r["params"].get("kernel")
        if k and r["status"] == "OK":
            print(os.path.basename(path)[3:-5], k, f"{m['us_per_batch']:.1f} us/batch",
                  f"{m['ratio_to_ce'] / m['ceiling_ratio_to_ce']:.4f} of ceiling, CE {m['ce_gbytes_per_s']:.2f}")
PY
fi
K=${KERNELS:-planned-flat,planned-lines,sorted-lines,lines,warp}
for pat in ${PATTERNS:-unique random}; do
  s=$(date +%s)
  python3 -m gdrdiag gather-bench --sweep record-size --pattern "$pat" -k "$K" --sweep-kernels "$K" \
    ${GATHER_EXTRA:-} --json-out "$OUT/rs-$pat.json" > "$OUT/rs-$pat.txt" 2> "$OUT/rs-$pat.err"
  echo "record-size $pat rc=$? wall_s=$(( $(date +%s) - s ))"
  tail -n 2 "$OUT/rs-$pat.err"
  grep -E "^R=" "$OUT/rs-$pat.txt"
done
# One archive back (the device returns few files): everything but the archive itself.
tar czf /tmp/gather-small.tgz -C "$OUT" . && rm -f "$OUT"/* && mv /tmp/gather-small.tgz "$OUT/"
