#!/usr/bin/env bash
# peer-bench's many-small-blocks sweep, all-to-one and SM round trip on a machine with two
# or more GPUs, in one call: the new cases once (the sweep at its defaults: 10,000 blocks of 128 B ..
# 2 MiB, at most 512 MiB per size), diagnose --all-rows of their Report, the peer part of a standard
# `report` timed, then every peer GPU test (tests/hw/test_peer_gpu.py and test_peer_blocks_gpu.py)
# TEST_REPEATS times in a row (default 3). Run from the repository root on the GPU machine:
#
#   OUT=/some/dir TEST_REPEATS=3 bash scripts/gpu_peer_blocks_check.sh
#
# Everything lands in one archive, $OUT/gpu-peer-blocks.tar.gz (the device tool returns few files).
set -uo pipefail
cd "$(dirname "$0")/.."
FINAL=${OUT:-./out}
mkdir -p "$FINAL"
OUT=$(mktemp -d)
trap 'tar -czf "$FINAL/gpu-peer-blocks.tar.gz" -C "$OUT" --exclude=.nvrtc-cache . ; echo "results: $FINAL/gpu-peer-blocks.tar.gz"' EXIT
export PYTHONPATH=. PYTHONUNBUFFERED=1
export GDRDIAG_CACHE_DIR="$OUT/.nvrtc-cache"
PY=${PYTHON:-python3}

{ date -u; nvidia-smi --query-gpu=index,name,pci.bus_id,driver_version --format=csv
  nvidia-smi topo -m
  $PY -c 'import cuda.bindings, numpy; print("cuda-bindings", cuda.bindings.__version__, "numpy", numpy.__version__)'
} > "$OUT/device.txt" 2>&1
head -12 "$OUT/device.txt"

echo "== peer-bench peer_blocks peer_all_to_one 'peer_lat_*' (sizes 16M,256M,1G for all-to-one)"
s=$(date +%s)
timeout 300 $PY -m gdrdiag peer-bench peer_blocks peer_all_to_one 'peer_lat_*' --sizes 16M,256M,1G \
  --force --json-out "$OUT/peer-blocks.json" ${PEER_ARGS:-} > "$OUT/peer-blocks.txt" 2> "$OUT/peer-blocks.err"
echo "rc=$? wall=$(( $(date +%s) - s )) s"; cat "$OUT/peer-blocks.txt"; tail -5 "$OUT/peer-blocks.err"
$PY -m gdrdiag diagnose --all-rows "$OUT/peer-blocks.json" > "$OUT/diagnose.txt" 2>&1
echo "diagnose rc=$?"; grep -E "^(FAIL|WARN|INFO) " "$OUT/diagnose.txt" | head -10
grep -E "peer_(blocks|all_to_one)" "$OUT/diagnose.txt" | head -60

echo "== the peer part of a standard report, timed"
timeout 200 $PY - <<'PYEOF' 2>&1 | tee "$OUT/report-peer.txt"
import time
from gdrdiag.bench.profiles import Profile, _peer_results
from gdrdiag.hw.bundle import LiveSource
from gdrdiag.inspect.collect import inspect_source
t0 = time.time()
rows = _peer_results(Profile(level="standard", machine=inspect_source(LiveSource())))
print(f"standard report's peer part: {time.time() - t0:.1f} s, {len(rows)} rows,",
      sum(r.status.value == "OK" for r in rows), "OK,", [r.key for r in rows if r.status.value == "ERROR"])
PYEOF

echo "== peer GPU tests"
for rep in $(seq "${TEST_REPEATS:-3}"); do
  s=$(date +%s)
  timeout ${TEST_TIMEOUT:-200} $PY -m pytest -q -rs -m gpu tests/hw/test_peer_gpu.py tests/hw/test_peer_blocks_gpu.py \
    -p no:cacheprovider > "$OUT/peer-tests-$rep.txt" 2>&1
  echo "run $rep: rc=$? wall=$(( $(date +%s) - s )) s"; tail -2 "$OUT/peer-tests-$rep.txt"
  grep -E "FAILED|Error" "$OUT/peer-tests-$rep.txt" | head -10
done
