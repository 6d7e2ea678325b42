#!/usr/bin/env bash
# A whole node in one device call (under its 600 s), on every GPU the machine has:
#   1. every GPU test (`pytest -m gpu`), after building the C copy loop its tests need;
#   2. `report --gpus all --no-rdma` (standard) on the idle node, timed, then `diagnose` of it: a healthy
#      node has no WARN/FAIL and every GPU's rows are judged; `report --quick --gpus all` timed too;
#   3. the same quick report with a second process keeping GPU $BUSY_GPU busy (matrix products in
#      PyTorch): that GPU must be named first and no other GPU named;
#   4. peer-bench's CuPy reference on every ordered pair (our CE copy / CuPy's same copy, interleaved);
#      on 3 GPUs or more, peer-bench's default matrix and its all-to-all / one-to-all, diagnosed;
#   5. `inspect` with CUDA_VISIBLE_DEVICES hiding the last GPU: it must name that PCI device.
#   6. each GPU's NVSwitch fabric state as NVML reports it, and what inspect prints of it.
# Run from the repository root on the GPU machine:  OUT=/some/dir bash scripts/gpu_node_check.sh
# Results: $OUT/summary.txt and $OUT/node-check.tar.gz (every output and JSON).
set -uo pipefail
cd "$(dirname "$0")/.."
FINAL=${OUT:-./out}
mkdir -p "$FINAL"
OUT=$(mktemp -d)
trap 'tar -czf "$FINAL/node-check.tar.gz" -C "$OUT" --exclude=.nvrtc-cache . ; cp "$OUT/summary.txt" "$FINAL/" 2>/dev/null' EXIT
export PYTHONPATH=. PYTHONUNBUFFERED=1
export GDRDIAG_CACHE_DIR="$OUT/.nvrtc-cache"
PY=${PYTHON:-python3}
log() { echo "$*" | tee -a "$OUT/summary.txt"; }
took() { echo "$(( $(date +%s) - $1 ))"; }
warnfail() { grep -E '^\[?(WARN|FAIL)' "$1" | head -8; }

{ date -u; nvidia-smi --query-gpu=index,name,pci.bus_id,driver_version,pcie.link.gen.max,pcie.link.width.max \
    --format=csv; nvidia-smi topo -m 2>/dev/null | head -8; } > "$OUT/device.txt" 2>&1
cat "$OUT/device.txt" >> "$OUT/summary.txt"
ngpus=$(nvidia-smi -L 2>/dev/null | wc -l)
BUSY_GPU=${BUSY_GPU:-$(( ngpus > 2 ? 2 : ngpus - 1 ))}

log "== 1. GPU tests ($ngpus GPU(s))"
s=$(date +%s)
bash scripts/build_native.sh > "$OUT/build-native.txt" 2>&1
timeout ${TEST_TIMEOUT:-200} $PY -m pytest -q -rs -m gpu tests -p no:cacheprovider > "$OUT/gpu-tests.txt" 2>&1
log "rc=$? wall=$(took "$s") s: $(tail -1 "$OUT/gpu-tests.txt")"
grep -E "^FAILED|^ERROR" "$OUT/gpu-tests.txt" | head -10 | tee -a "$OUT/summary.txt"

log "== 2a. report --gpus all --no-rdma (standard), then diagnose"
s=$(date +%s)
timeout 240 $PY -m gdrdiag report --gpus all --no-rdma -o "$OUT/report-all.json" --force \
  > "$OUT/report-all.txt" 2> "$OUT/report-all.progress"
log "rc=$? wall=$(took "$s") s"
$PY -m gdrdiag diagnose "$OUT/report-all.json" > "$OUT/report-all-diagnose.txt" 2>&1
log "diagnose rc=$?; WARN/FAIL: $(warnfail "$OUT/report-all-diagnose.txt" | wc -l)"
warnfail "$OUT/report-all-diagnose.txt" | tee -a "$OUT/summary.txt"
grep -A12 "GPUs side by side" "$OUT/report-all.txt" | head -14 >> "$OUT/summary.txt"

log "== 2c. report --no-rdma (standard, GPU 0 only: the per-GPU cost's baseline), timed"
s=$(date +%s)
timeout 150 $PY -m gdrdiag report --no-rdma -o "$OUT/report-gpu0.json" --force > "$OUT/report-gpu0.txt" 2>&1
log "rc=$? wall=$(took "$s") s; WARN/FAIL: $(warnfail "$OUT/report-gpu0.txt" | wc -l)"

log "== 2b. report --quick --gpus all --no-rdma, timed"
s=$(date +%s)
timeout 120 $PY -m gdrdiag report --quick --gpus all --no-rdma -o "$OUT/report-quick-all.json" --force \
  > "$OUT/report-quick-all.txt" 2>&1
log "rc=$? wall=$(took "$s") s; WARN/FAIL: $(warnfail "$OUT/report-quick-all.txt" | wc -l)"
warnfail "$OUT/report-quick-all.txt" | tee -a "$OUT/summary.txt"

log "== 3. report --quick --gpus all with GPU $BUSY_GPU kept busy by another process"
CUDA_VISIBLE_DEVICES=$BUSY_GPU timeout 150 $PY - > "$OUT/hog.txt" 2>&1 <<'EOF' &
import time, torch
a = torch.randn(8192, 8192, device="cuda", dtype=torch.float16)
end = time.time() + 140
while time.time() < end:
    b = a @ a
    torch.cuda.synchronize()
EOF
hog=$!
sleep 8
s=$(date +%s)
timeout 120 $PY -m gdrdiag report --quick --gpus all --no-rdma -o "$OUT/report-busy.json" --force \
  > "$OUT/report-busy.txt" 2>&1
log "rc=$? wall=$(took "$s") s"
kill $hog 2>/dev/null; wait $hog 2>/dev/null
$PY -m gdrdiag diagnose "$OUT/report-busy.json" > "$OUT/report-busy-diagnose.txt" 2>&1
warnfail "$OUT/report-busy-diagnose.txt" | tee -a "$OUT/summary.txt"
grep -E "GPU-IN-USE" "$OUT/report-busy-diagnose.txt" | head -3 | tee -a "$OUT/summary.txt"

if [ "$ngpus" -ge 2 ]; then
  log "== 4. peer CE copy vs CuPy's same copy, every ordered pair (256M, interleaved rounds)"
  s=$(date +%s)
  timeout 150 $PY -m gdrdiag --json peer-bench peer_ce_reference --quiet > "$OUT/peer-reference.json" 2> "$OUT/peer-reference.err"
  log "rc=$? wall=$(took "$s") s"
  $PY - "$OUT/peer-reference.json" <<'EOF' | tee -a "$OUT/summary.txt"
import json, sys
rep = json.load(open(sys.argv[1]))
for r in rep["results"]:
    if r["key"] == "peer_ce_reference" and r["status"] == "OK":
        p, m = r["params"], r.get("metrics") or {}
        ratio = m.get("gdrdiag_over_reference")
        print(f"  {p.get('src_gpu')}->{p.get('dst_gpu')} peer_access={p.get('peer_access')}: "
              f"{p.get('library')} {r['stats']['median']:.1f} {r['unit']}, gdrdiag/reference {ratio}")
    elif r["key"] == "peer_ce_reference":
        print(f"  {r['key']} {r['status']}: {r.get('reason')}")
EOF
fi

if [ "$ngpus" -ge 3 ]; then
  log "== 4b. peer-bench on the whole node: the default matrix, then all-to-all and one-to-all, judged"
  s=$(date +%s)
  timeout 240 $PY -m gdrdiag peer-bench --json-out "$OUT/peer-matrix.json" --force > "$OUT/peer-matrix.txt" 2>&1
  log "peer-bench (default matrix) rc=$? wall=$(took "$s") s"
  s=$(date +%s)
  timeout 240 $PY -m gdrdiag peer-bench peer_all_to_all peer_one_to_all --json-out "$OUT/peer-all.json" \
    --force > "$OUT/peer-all.txt" 2>&1
  log "peer-bench all-to-all one-to-all rc=$? wall=$(took "$s") s"
  for f in peer-matrix peer-all; do
    $PY -m gdrdiag diagnose "$OUT/$f.json" > "$OUT/$f-diagnose.txt" 2>&1
    log "$f: WARN/FAIL $(warnfail "$OUT/$f-diagnose.txt" | wc -l)"
    warnfail "$OUT/$f-diagnose.txt" | tee -a "$OUT/summary.txt"
  done
  grep -iE "all.to.all|one.to.all" "$OUT/peer-all.txt" | head -12 | tee -a "$OUT/summary.txt"
fi

log "== 5. inspect with CUDA_VISIBLE_DEVICES hiding the last GPU"
visible=$(seq -s, 0 $(( ngpus - 2 )))
CUDA_VISIBLE_DEVICES=$visible timeout 60 $PY -m gdrdiag inspect > "$OUT/inspect-hidden.txt" 2>&1
log "rc=$? CUDA_VISIBLE_DEVICES=$visible: $(grep -m1 GPU-NOT-VISIBLE "$OUT/inspect-hidden.txt")"

log "== 6. NVSwitch fabric state per GPU (NVML, as inspect reads it)"
timeout 60 $PY - > "$OUT/fabric.txt" 2>&1 <<'EOF2'
from gdrdiag.hw.bundle import LiveSource
from gdrdiag.inspect.collect import inspect_source
m = inspect_source(LiveSource())
for g in m.gpus:
    print(g.cuda_ordinal, g.bdf, g.fabric, g.unknown.get("nvml.fabric"))
EOF2
log "rc=$?"; cat "$OUT/fabric.txt" >> "$OUT/summary.txt"
timeout 60 $PY -m gdrdiag inspect > "$OUT/inspect.txt" 2>&1
grep -E "NVSwitch fabric|GPU-FABRIC" "$OUT/inspect.txt" | head -8 | tee -a "$OUT/summary.txt"
