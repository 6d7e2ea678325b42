#!/usr/bin/env bash
# gather-bench on the device machine, in one call: the GPU tests, a --quick run and the full
# default sweep, with wall-clock times. Outputs under $OUT (default /tmp/gather-out).
cd "$(dirname "$0")/.."
export PYTHONPATH=.
OUT=${OUT:-/tmp/gather-out}
mkdir -p "$OUT"
{ nvidia-smi --query-gpu=name,driver_version,pcie.link.gen.current,pcie.link.width.current --format=csv; } \
  > "$OUT/gpu.txt" 2>&1
python3 -m pytest -q -rs tests/hw/test_gather_gpu.py tests/unit/test_native_compile.py > "$OUT/pytest.txt" 2>&1
echo "pytest rc=$?"
s=$(date +%s%N); python3 -m gdrdiag gather-bench --quick --json-out "$OUT/quick.json" > "$OUT/quick.txt" 2> "$OUT/quick.err"
rc=$?; echo "quick rc=$rc wall_ms=$(( ($(date +%s%N) - s) / 1000000 ))"
s=$(date +%s%N); python3 -m gdrdiag gather-bench --sweep all --json-out "$OUT/full.json" > "$OUT/full.txt" 2> "$OUT/full.err"
rc=$?; echo "full rc=$rc wall_ms=$(( ($(date +%s%N) - s) / 1000000 ))"
tail -n 15 "$OUT/pytest.txt"; tail -n 3 "$OUT/quick.err" "$OUT/full.err"
grep -E "^(byte|vec16|warp|warp-ilp|persistent|lines|sorted-lines|lines-l2pf|bulk) " "$OUT/full.txt" | head -9
grep -E "best kernel|SMs$|link:" "$OUT/full.txt"
