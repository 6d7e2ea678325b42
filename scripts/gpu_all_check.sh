#!/usr/bin/env bash
# The whole GPU validation in one device call (under its 600 s), on one GPU or several:
#   1. every GPU test (`pytest -m gpu`; the peer tests run where there are two GPUs), then the peer
#      tests twice more, so they are green three runs in a row;
#   2. `gdrdiag report --quick` and `diagnose` of it: a healthy machine has no WARN/FAIL;
#   3. `gdrdiag copy-bench` as a user's first run, timed, and diagnosed (under 60 s);
#   4. gather-bench's record-size sweep, both patterns, with the request rate measured in the run
#      and scored against the model with no parameter fitted here
#      (scripts/gpu_gather_transfer.sh; it runs the gather tests again only if TEST_GATHER=1).
# Run from the repository root on the GPU machine:  OUT=/some/dir bash scripts/gpu_all_check.sh
# Results: $OUT/summary.txt (what each step printed, short) and $OUT/all-check.tar.gz (everything).
set -uo pipefail
cd "$(dirname "$0")/.."
FINAL=${OUT:-./out}
mkdir -p "$FINAL"
OUT=$(mktemp -d)
trap 'tar -czf "$FINAL/all-check.tar.gz" -C "$OUT" --exclude=.nvrtc-cache . ; cp "$OUT/summary.txt" "$FINAL/" 2>/dev/null' EXIT
export PYTHONPATH=. PYTHONUNBUFFERED=1
export GDRDIAG_CACHE_DIR="$OUT/.nvrtc-cache"
PY=${PYTHON:-python3}
log() { echo "$*" | tee -a "$OUT/summary.txt"; }
took() { echo "$(( $(date +%s) - $1 ))"; }

bash scripts/build_native.sh > "$OUT/build_native.txt" 2>&1
{ date -u; nvidia-smi --query-gpu=index,name,pci.bus_id,driver_version,pcie.link.gen.max,pcie.link.width.max \
    --format=csv; nvidia-smi topo -m 2>/dev/null | head -6; } > "$OUT/device.txt" 2>&1
cat "$OUT/device.txt" >> "$OUT/summary.txt"
ngpus=$(nvidia-smi -L 2>/dev/null | wc -l)

log "== 1. GPU tests (all, $ngpus GPU(s))"
s=$(date +%s)
timeout 240 $PY -m pytest -q -rs -m gpu tests -p no:cacheprovider > "$OUT/gpu-tests.txt" 2>&1
log "rc=$? wall=$(took "$s") s: $(tail -1 "$OUT/gpu-tests.txt")"
grep -E "^FAILED|^ERROR" "$OUT/gpu-tests.txt" | head -10 | tee -a "$OUT/summary.txt"
if [ "$ngpus" -ge 2 ]; then
  for rep in 2 3; do
    s=$(date +%s)
    timeout 120 $PY -m pytest -q -m gpu tests/hw/test_peer_gpu.py tests/hw/test_peer_blocks_gpu.py \
      -p no:cacheprovider > "$OUT/peer-tests-$rep.txt" 2>&1
    log "peer tests run $rep: rc=$? wall=$(took "$s") s: $(tail -1 "$OUT/peer-tests-$rep.txt")"
  done
fi

log "== 2. report --quick, then diagnose"
s=$(date +%s)
timeout 150 $PY -m gdrdiag report --quick --no-rdma -o "$OUT/report-quick.json" --force > "$OUT/report-quick.txt" 2>&1
log "rc=$? wall=$(took "$s") s"
$PY -m gdrdiag diagnose "$OUT/report-quick.json" > "$OUT/report-quick-diagnose.txt" 2>&1
log "diagnose rc=$?; WARN/FAIL lines: $(grep -cE '^(WARN|FAIL)' "$OUT/report-quick-diagnose.txt")"
grep -E '^(WARN|FAIL)' "$OUT/report-quick-diagnose.txt" | head -5 | tee -a "$OUT/summary.txt"

log "== 3. copy-bench (the first look), timed"
s=$(date +%s)
timeout 120 $PY -m gdrdiag copy-bench --force --json-out "$OUT/copy-default.json" > "$OUT/copy-default.txt" 2>&1
log "rc=$? wall=$(took "$s") s, $(wc -l < "$OUT/copy-default.txt") lines"
head -12 "$OUT/copy-default.txt" >> "$OUT/summary.txt"
$PY -m gdrdiag diagnose "$OUT/copy-default.json" > "$OUT/copy-default-diagnose.txt" 2>&1
log "diagnose rc=$?; WARN/FAIL lines: $(grep -cE '^(WARN|FAIL)' "$OUT/copy-default-diagnose.txt")"
grep -E '^(WARN|FAIL)' "$OUT/copy-default-diagnose.txt" | head -5 | tee -a "$OUT/summary.txt"

log "== 4. gather record-size sweep (model transfer)"
s=$(date +%s)
TEST_TIMEOUT=$([ "${TEST_GATHER:-0}" = 1 ] && echo 150 || echo 1) SWEEP_TIMEOUT=130 \
  OUT="$OUT/gather" bash scripts/gpu_gather_transfer.sh > "$OUT/gather.txt" 2>&1
log "rc=$? wall=$(took "$s") s"
cat "$OUT/gather/summary.txt" >> "$OUT/summary.txt" 2>/dev/null
