#!/usr/bin/env bash
# First device-machine probe for gather-bench: kernels correct and where the bandwidth is.
cd "$(dirname "$0")/.."
export PYTHONPATH=.
OUT=${OUT:-/tmp/gather-out}
mkdir -p "$OUT"
nvidia-smi --query-gpu=name,pcie.link.gen.current,pcie.link.width.current --format=csv > "$OUT/smi.txt" 2>&1
timeout 150 python3 scripts/gather_gpu_probe.py "$OUT/a.json" --kernels byte,vec16,warp,warp-ilp,persistent,lines,lines-l2pf \
  --sizes 656 --sweeps ladder,offset,pattern,record-size --sweep-kernels lines,warp --quick --iterations 10 > "$OUT/a.txt" 2> "$OUT/a.err"
echo "A rc=$?"
timeout 60 python3 scripts/gather_gpu_probe.py "$OUT/b.json" --kernels byte,vec16,warp,warp-ilp,persistent,lines,lines-l2pf \
  --sizes 100 --iterations 5 > "$OUT/b.txt" 2> "$OUT/b.err"
echo "B rc=$?"
timeout 90 python3 scripts/gather_gpu_probe.py "$OUT/c.json" --kernels bulk,lines --sizes 656,640,100 \
  --sweeps ladder,sm --sweep-kernels best --quick --iterations 10 > "$OUT/c.txt" 2> "$OUT/c.err"
echo "C rc=$?"
cat "$OUT/smi.txt" "$OUT/a.txt" "$OUT/b.txt" "$OUT/c.txt"; tail -5 "$OUT/a.err" "$OUT/b.err" "$OUT/c.err"
