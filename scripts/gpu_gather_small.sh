#!/usr/bin/env bash
# Issue 15 on the device machine, in one call: the gather GPU tests, then the record-size sweep
# (16 B .. 4 KiB) for the unique and the random (repeating) pattern with the small-record
# kernels, every payload verified. Outputs under $OUT (default /tmp/gather-small).
# PYTEST_K selects GPU tests (-k expression; empty = all gather GPU tests).
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
K=${KERNELS:-planned-lines,sorted-lines,lines,warp}
for pat in ${PATTERNS:-unique random}; do
  s=$(date +%s)
  python3 -m gdrdiag gather-bench --sweep record-size --pattern "$pat" -k "$K" --sweep-kernels "$K" \
    ${GATHER_EXTRA:-} --json-out "$OUT/rs-$pat.json" > "$OUT/rs-$pat.txt" 2> "$OUT/rs-$pat.err"
  echo "record-size $pat rc=$? wall_s=$(( $(date +%s) - s ))"
  tail -n 2 "$OUT/rs-$pat.err"
  grep -E "^R=" "$OUT/rs-$pat.txt"
done
