#!/usr/bin/env bash
# GPU<->GPU on a machine with two or more GPUs, in one call: the peer facts, the peer GPU
# tests TEST_REPEATS times in a row (default 3), peer-bench over every size (its JSON is the fixture
# Report tests/fixtures/reports/peer_h100x2.json), diagnose of that Report, `report --quick` timed,
# and optionally the single-GPU suite (SINGLE=1). Run from the repository root on the GPU machine:
#
#   OUT=/some/dir bash scripts/gpu_peer_check.sh
#
# Everything lands in one archive, $OUT/gpu-peer-check.tar.gz (the device tool returns few files).
set -uo pipefail
cd "$(dirname "$0")/.."
FINAL=${OUT:-./out}
mkdir -p "$FINAL"
OUT=$(mktemp -d)
trap 'tar -czf "$FINAL/gpu-peer-check.tar.gz" -C "$OUT" --exclude=.nvrtc-cache . ; echo "results: $FINAL/gpu-peer-check.tar.gz"' EXIT
export PYTHONPATH=.
export GDRDIAG_CACHE_DIR="$OUT/.nvrtc-cache"
PY=${PYTHON:-python3}

{ date -u; nvidia-smi --query-gpu=index,name,pci.bus_id,driver_version --format=csv
  nvidia-smi topo -m; nvidia-smi topo -p2p rw; nvidia-smi nvlink -s | head -40
  $PY -c 'import cuda.bindings, cupy, numpy; print("cuda-bindings", cuda.bindings.__version__, "cupy", cupy.__version__, "numpy", numpy.__version__)'
} > "$OUT/device.txt" 2>&1
cat "$OUT/device.txt" | head -30

echo "== inspect"
$PY -m gdrdiag inspect > "$OUT/inspect.txt" 2>&1; echo "rc=$?"
sed -n '/GPU <-> GPU peers/,/^$/p' "$OUT/inspect.txt"
$PY -m gdrdiag --json inspect > "$OUT/inspect.json" 2> "$OUT/inspect.err"

echo "== peer GPU tests"
for rep in $(seq "${TEST_REPEATS:-3}"); do
  s=$(date +%s)
  timeout ${TEST_TIMEOUT:-300} $PY -m pytest -q -rs -m gpu tests/hw/test_peer_gpu.py tests/hw/test_peer_blocks_gpu.py -p no:cacheprovider \
    > "$OUT/peer-tests-$rep.txt" 2>&1
  echo "run $rep: rc=$? wall=$(( $(date +%s) - s )) s"; tail -3 "$OUT/peer-tests-$rep.txt"
  grep -E "FAILED|Error" "$OUT/peer-tests-$rep.txt" | head -10
done

echo "== peer-bench (default sizes), timed"
s=$(date +%s)
timeout 200 $PY -m gdrdiag peer-bench --quiet --force --json-out "$OUT/peer-default.json" > "$OUT/peer-default.txt" 2>&1
echo "rc=$? wall=$(( $(date +%s) - s )) s"

echo "== peer-bench latency cases (one 4-byte copy at a time, peer access off and on)"
timeout 120 $PY -m gdrdiag peer-bench 'peer_lat_*' --force --json-out "$OUT/peer-latency.json" \
  > "$OUT/peer-latency.txt" 2>&1
echo "rc=$?"; cat "$OUT/peer-latency.txt"

echo "== peer-bench --all-sizes"
s=$(date +%s)
timeout 300 $PY -m gdrdiag peer-bench --all-sizes --force --json-out "$OUT/peer.json" ${PEER_ARGS:-} \
  > "$OUT/peer.txt" 2> "$OUT/peer.err"
echo "rc=$? wall=$(( $(date +%s) - s )) s"; cat "$OUT/peer.txt"; tail -5 "$OUT/peer.err"
$PY -m gdrdiag diagnose "$OUT/peer.json" > "$OUT/diagnose.txt" 2>&1; echo "diagnose rc=$?"; head -40 "$OUT/diagnose.txt"

if [ "${REPORT:-1}" = 1 ]; then
  echo "== report --quick (peer cases included)"
  s=$(date +%s)
  timeout 300 $PY -m gdrdiag report --quick --no-rdma -o "$OUT/report.json" --force > "$OUT/report.txt" 2>&1
  echo "rc=$? wall=$(( $(date +%s) - s )) s"
  $PY - "$OUT/report.json" <<'PYEOF' 2>&1
import json, sys
r = json.load(open(sys.argv[1]))
peer = [x for x in r["results"] if x["key"].startswith("peer_")]
print(len(peer), "peer rows;", sum(x["status"] == "OK" for x in peer), "OK")
PYEOF
fi

if [ "${SINGLE:-0}" = 1 ]; then
  echo "== single-GPU suite (scripts/gpu_check.sh tests)"
  mkdir -p "$OUT/single"
  TEST_REPEATS=1 TEST_TIMEOUT=300 OUT="$OUT/single" bash scripts/gpu_check.sh tests > "$OUT/single.txt" 2>&1
  echo "rc=$?"; tail -15 "$OUT/single.txt"
fi
