#!/usr/bin/env bash
# copy-bench on the GPU machine in one call: where the batched call's host
# time goes from Python and from C (scripts/probes/batch_copy_probe.py), copy-bench's GPU tests, the
# default `gdrdiag copy-bench` timed wall-clock with a cold NVRTC cache (as a user's first run), and the
# many-small-blocks sweep with the batched call from Python, from C and through cuda-bindings.
# Run from the repository root on the GPU machine:
#
#   OUT=/some/dir bash scripts/gpu_copy_check.sh
#
# Everything lands in one archive, $OUT/gpu-copy-check.tar.gz (the device tool returns few files).
# BLOCK_SIZES (default 512..128K) sets the block sweep; SKIP="probe tests default blocks" (any of
# them) leaves parts out.
set -uo pipefail
cd "$(dirname "$0")/.."
FINAL=${OUT:-./out}
mkdir -p "$FINAL"
OUT=$(mktemp -d)
trap 'tar -czf "$FINAL/gpu-copy-check.tar.gz" -C "$OUT" --exclude=.nvrtc-cache --exclude=.nvrtc-cold . ; echo "results: $FINAL/gpu-copy-check.tar.gz"' EXIT
export PYTHONPATH=.
export GDRDIAG_CACHE_DIR="$OUT/.nvrtc-cache"
PY=${PYTHON:-python3}
skip() { case " ${SKIP:-} " in *" $1 "*) return 0 ;; esac; return 1; }

bash scripts/build_native.sh > "$OUT/build_native.txt" 2>&1; cat "$OUT/build_native.txt"
{ date -u; nvidia-smi --query-gpu=name,driver_version,pcie.link.gen.max,pcie.link.width.max --format=csv
  $PY -c 'import cuda.bindings, numpy; print("cuda-bindings", cuda.bindings.__version__, "numpy", numpy.__version__)'
  echo "cpus $(nproc)"
} > "$OUT/device.txt" 2>&1
cat "$OUT/device.txt"

if ! skip probe; then
  echo "== batched call: host time split (bindings vs ctypes v1/v2 vs C)"
  timeout 150 $PY scripts/probes/batch_copy_probe.py "$OUT/probe.json" > "$OUT/probe.txt" 2>&1
  echo "rc=$?"; cut -c1-400 "$OUT/probe.txt"
fi
if ! skip tests; then
  echo "== copy-bench GPU tests"
  s=$(date +%s)
  timeout 240 $PY -m pytest -q -rs -m gpu tests/hw/test_copy_bench_gpu.py tests/hw/test_copy_native_gpu.py \
    -p no:cacheprovider --durations=5 > "$OUT/tests.txt" 2>&1
  echo "rc=$? wall=$(( $(date +%s) - s )) s"; tail -15 "$OUT/tests.txt"
fi
if ! skip default; then
  echo "== gdrdiag copy-bench (default), wall clock, cold NVRTC cache"
  s=$(date +%s%N)
  GDRDIAG_CACHE_DIR="$OUT/.nvrtc-cold" timeout 180 $PY -m gdrdiag copy-bench --force --json-out "$OUT/default.json" \
    > "$OUT/default.txt" 2> "$OUT/default.err"
  rc=$?
  ms=$(( ($(date +%s%N) - s) / 1000000 ))
  echo "rc=$rc wall_ms=$ms lines=$(wc -l < "$OUT/default.txt")" | tee "$OUT/default_wall.txt"
  head -40 "$OUT/default.txt"; tail -3 "$OUT/default.err"
fi
if ! skip blocks; then
  # BLOCK_RUNS sweeps (default 2), back to back: the Python/C ratio must repeat, not just appear once.
  for run in $(seq "${BLOCK_RUNS:-2}"); do
    echo "== block sweep $run: batched from Python (ctypes) vs C vs cuda-bindings, 10,000 blocks"
    timeout 200 $PY -m gdrdiag copy-bench --full --parts blocks --block-sizes "${BLOCK_SIZES:-512..128K}" \
      --quiet --force --json-out "$OUT/blocks-$run.json" > "$OUT/blocks-$run.txt" 2> "$OUT/blocks-$run.err"
    echo "rc=$?"; tail -3 "$OUT/blocks-$run.err"
    $PY scripts/probes/copy_blocks_summary.py "$OUT/blocks-$run.json" | tee "$OUT/blocks_summary-$run.txt"
  done
  sed -n '/Block sweep/,/Half the coalesced/p' "$OUT/blocks-1.txt"
fi
echo "== done"
