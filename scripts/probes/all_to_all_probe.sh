#!/usr/bin/env bash
# One device call on a node of 3 GPUs or more: the all-to-all probe (CuPy, every traffic pattern),
# gdrdiag's own all-to-all / one-to-all / all-to-one judged and diagnosed, their GPU tests, and with
# NVB=1 nvbandwidth's all-to-one / one-to-all / both-ways testcases. Results under $OUT.
#   OUT=/some/dir [NVB=1] bash scripts/probes/all_to_all_probe.sh
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-./out}; mkdir -p "$OUT"
export PYTHONPATH=. PYTHONUNBUFFERED=1
{ date -u; nvidia-smi --query-gpu=index,name,pci.bus_id --format=csv; nvidia-smi topo -m; } > "$OUT/device.txt" 2>&1
head -6 "$OUT/device.txt"
if [ "${NVB:-0}" = 1 ]; then
  (
    mkdir -p /tmp/boost; for d in .real-deps/*.deb; do dpkg -x "$d" /tmp/boost; done
    mkdir -p /tmp/nvb && cd /tmp/nvb && cmake "$OLDPWD/scripts/real/src/nvbandwidth" -DCMAKE_BUILD_TYPE=Release \
      -DCMAKE_CUDA_ARCHITECTURES=90 -DBoost_ROOT=/tmp/boost/usr -DBoost_NO_SYSTEM_PATHS=ON \
      -DCMAKE_PREFIX_PATH=/tmp/boost/usr && make -j16
  ) > "$OUT/build-nvbandwidth.txt" 2>&1 &
  build=$!
fi
for size in 256 64; do
  timeout 200 python3 scripts/probes/all_to_all_probe.py $size 7 > "$OUT/probe-${size}M.txt" 2>&1
  echo "probe ${size}M rc=$?"; grep -v '^{' "$OUT/probe-${size}M.txt"
done
timeout 150 python3 -m gdrdiag peer-bench peer_all_to_all peer_one_to_all peer_all_to_one --sizes 16M,64M,256M,1G \
  --json-out "$OUT/gdrdiag-patterns.json" --force > "$OUT/gdrdiag-patterns.txt" 2>&1
echo "gdrdiag patterns rc=$?"; grep -iE "all-to-all|one-to-all|all-to-one|->all|all->" "$OUT/gdrdiag-patterns.txt" | head -40
python3 -m gdrdiag diagnose "$OUT/gdrdiag-patterns.json" > "$OUT/gdrdiag-patterns-diagnose.txt" 2>&1
echo "diagnose: $(grep -cE '^\[?(WARN|FAIL)' "$OUT/gdrdiag-patterns-diagnose.txt") WARN/FAIL"
grep -E '^\[?(WARN|FAIL)' -A3 "$OUT/gdrdiag-patterns-diagnose.txt" | head -20
timeout 200 python3 -m pytest -q -rs -p no:cacheprovider tests/hw/test_peer_all_to_all_gpu.py > "$OUT/gpu-tests.txt" 2>&1
echo "GPU tests rc=$?: $(tail -1 "$OUT/gpu-tests.txt")"; grep -E "^FAILED|^ERROR" "$OUT/gpu-tests.txt" | head
if [ "${NVB:-0}" = 1 ]; then
  wait $build; echo "nvbandwidth build rc=$?"
  timeout 200 /tmp/nvb/nvbandwidth -t all_to_one_write_ce one_to_all_write_ce all_to_one_read_ce one_to_all_read_ce \
    device_to_device_bidirectional_memcpy_write_ce > "$OUT/nvbandwidth.txt" 2>&1
  echo "nvbandwidth rc=$?"; grep -E "Running|SUM" "$OUT/nvbandwidth.txt"
fi
