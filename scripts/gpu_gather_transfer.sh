#!/usr/bin/env bash
# Does the gather model transfer? On the device machine, in one call: the gather GPU tests,
# then the record-size sweep (16 B .. 4 KiB) for the unique and the random pattern with the
# small-record kernels. Each sweep first measures the read-request rate (16-B records, one
# request each: the request-rate calibration, gdrdiag/bench/gather.py) and caps its model at it.
# scripts/gpu_gather_transfer_summary.py then scores every row under the model with the H100's
# parameters unchanged, the sector-by-sector model with the H100's rate, and with the rate
# measured here. Results under $OUT (default /tmp/gather-transfer): summary.txt, rows.csv,
# summary.json, and raw.tgz (the Reports, their tables, pytest's log, nvidia-smi).
# KERNELS, GATHER_EXTRA (default --rounds 3 --min-rounds 2 --ce-per-case), PYTEST_K,
# TEST_TIMEOUT and SWEEP_TIMEOUT (seconds) adjust it.
cd "$(dirname "$0")/.." || exit 1
export PYTHONPATH=. PYTHONUNBUFFERED=1
OUT=${OUT:-/tmp/gather-transfer}
RAW="$OUT/raw"
mkdir -p "$RAW"
{
  nvidia-smi --query-gpu=name,driver_version,pcie.link.gen.current,pcie.link.width.current,memory.total \
    --format=csv
  date -u +%Y-%m-%dT%H:%M:%SZ
  git rev-parse --short HEAD 2>/dev/null
} > "$RAW/gpu.txt" 2>&1
cat "$RAW/gpu.txt"
s=$(date +%s)
timeout "${TEST_TIMEOUT:-150}" python3 -m pytest -q -rs tests/hw/test_gather_gpu.py ${PYTEST_K:+-k "$PYTEST_K"} \
  > "$RAW/pytest.txt" 2>&1
echo "pytest rc=$? wall_s=$(( $(date +%s) - s ))"
tail -n 4 "$RAW/pytest.txt"
K=${KERNELS:-planned-flat,planned-lines,lines,warp}
for pat in unique random; do
  s=$(date +%s)
  # shellcheck disable=SC2086  # GATHER_EXTRA is a list of options
  timeout "${SWEEP_TIMEOUT:-200}" python3 -m gdrdiag gather-bench --quiet --sweep record-size --pattern "$pat" \
    -k "$K" --sweep-kernels "$K" ${GATHER_EXTRA:---rounds 3 --min-rounds 2 --ce-per-case} \
    --json-out "$RAW/rs-$pat.json" > "$RAW/rs-$pat.txt" 2> "$RAW/rs-$pat.err"
  echo "record-size $pat rc=$? wall_s=$(( $(date +%s) - s ))"
  tail -n 2 "$RAW/rs-$pat.err"
  grep -E "^R=|^read-request rate" "$RAW/rs-$pat.txt"
done
python3 scripts/gpu_gather_transfer_summary.py "$RAW" > "$OUT/summary.txt" 2>&1
echo "summary rc=$?"
cat "$OUT/summary.txt"
mv "$RAW/rows.csv" "$RAW/summary.json" "$OUT/" 2>/dev/null
tar czf "$OUT/raw.tgz" -C "$OUT" raw && rm -rf "$RAW"
