#!/usr/bin/env bash
# Real outputs of the standard tools on the GPU machine, healthy and with faults injected through the
# tools' or the libraries' own knobs, each beside the bundle `gdrdiag collect` wrote in the same call.
# They become tests/real/ (scripts/real/import_runs.py lays them out; tests/real/test_real_runs.py
# judges them). Run from the repository root on the GPU machine:
#
#   OUT=/some/dir [TOOLS="nccl p2p bandwidthTest nvbandwidth ucx"] bash scripts/real/gpu_real_runs.sh [TAG]
#
# Builds nccl-tests, CUDA samples' p2pBandwidthLatencyTest and bandwidthTest, and nvbandwidth from
# scripts/real/src/ in /tmp (or takes the binaries from .real-bin/ when that folder was carried), runs
# each tool (ucx_perftest from the RAPIDS libucx wheel carried in .real-ucx/, unpacked in /tmp), and hands back $OUT/real-TAG.tar.gz (one folder per run: output.txt, command.txt, env.txt,
# rc, wall_s) (the binaries stay there).
# NVLink multicast stays off (NCCL_NVLS_ENABLE=0): the machine's rule.
set -uo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
FINAL=${OUT:-./out}
mkdir -p "$FINAL"
NGPU=$(nvidia-smi -L | grep -c '^GPU ')
GPUNAME=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | tr ' ' '-')
TAG=${1:-${NGPU}x-${GPUNAME}}
W=/tmp/real-$TAG
BIN=/tmp/realtools
rm -rf "$W"; mkdir -p "$W" "$BIN"
trap 'tar -czf "$FINAL/real-$TAG.tar.gz" -C "$W" . ; echo "results: $FINAL/real-$TAG.tar.gz"' EXIT
export PYTHONPATH=$ROOT
export NCCL_NVLS_ENABLE=0
PY=${PYTHON:-python3}
TOOLS=${TOOLS:-nccl p2p bandwidthTest nvbandwidth ucx}
want() { case " $TOOLS " in *" $1 "*) return 0;; esac; return 1; }
NVCC=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
CUDA_HOME=$(dirname "$(dirname "$NVCC")")

build() {
  local s; s=$(date +%s)
  if [ -d .real-bin ] && [ -x .real-bin/all_reduce_perf ]; then
    cp -a .real-bin/. "$BIN/"; echo "binaries carried in .real-bin"; return
  fi
  local src=$ROOT/scripts/real/src gen="-gencode=arch=compute_90,code=sm_90"
  # ucx_perftest: the libucx wheel (PyPI libucx-cu13, built with CUDA) is a zip; no build needed
  if want ucx && ls .real-ucx/libucx_*.whl > /dev/null 2>&1; then
    rm -rf /tmp/ucx && $PY -m zipfile -e .real-ucx/libucx_*.whl /tmp/ucx && chmod +x /tmp/ucx/libucx/bin/*
  fi
  want nccl || want p2p || want bandwidthTest || want nvbandwidth || return 0
  (cd "$src/nccl-tests" && make -j16 MPI=0 CUDA_HOME="$CUDA_HOME" NCCL_HOME=/usr NVCC_GENCODE="$gen" \
     BUILDDIR=/tmp/nccl-tests-build > "$W/build-nccl-tests.txt" 2>&1) && cp /tmp/nccl-tests-build/*_perf "$BIN/"
  local cs=$src/cuda-samples
  "$NVCC" -O2 -std=c++17 $gen -I"$cs/Common" "$cs/p2pBandwidthLatencyTest/p2pBandwidthLatencyTest.cu" \
    -o "$BIN/p2pBandwidthLatencyTest" > "$W/build-p2p.txt" 2>&1
  "$NVCC" -O2 -std=c++17 $gen -I"$cs/Common" "$cs/bandwidthTest/bandwidthTest.cu" \
    -o "$BIN/bandwidthTest" > "$W/build-bandwidthTest.txt" 2>&1
  # nvbandwidth needs Boost.Program_options: Debian's packages, unpacked from the carried .real-deps/.
  if ls .real-deps/*.deb > /dev/null 2>&1; then
    mkdir -p /tmp/boost; for d in .real-deps/*.deb; do dpkg -x "$d" /tmp/boost; done
    (mkdir -p /tmp/nvb && cd /tmp/nvb && cmake "$src/nvbandwidth" -DCMAKE_BUILD_TYPE=Release \
       -DCMAKE_CUDA_ARCHITECTURES=90 -DBoost_ROOT=/tmp/boost/usr -DBoost_NO_SYSTEM_PATHS=ON \
       -DCMAKE_PREFIX_PATH=/tmp/boost/usr && make -j16) > "$W/build-nvbandwidth.txt" 2>&1 \
      && cp /tmp/nvb/nvbandwidth "$BIN/"
  fi
  echo "build: $(( $(date +%s) - s )) s; built: $(ls "$BIN" | tr '\n' ' ')"
}

# run NAME TIMEOUT [VAR=VALUE ...] -- PROGRAM ARGS...: one folder per run, output as the tool printed it.
run() {
  local name=$1 limit=$2; shift 2
  local envs=()
  while [ "$1" != "--" ]; do envs+=("$1"); shift; done; shift
  local d=$W/runs/$name s rc
  mkdir -p "$d"
  printf '%s\n' "${envs[@]}" > "$d/env.txt"
  echo "$*" > "$d/command.txt"
  date -u +%Y-%m-%dT%H:%M:%SZ > "$d/started"
  s=$(date +%s%N)
  env "${envs[@]}" timeout "$limit" "$@" > "$d/output.txt" 2>&1; rc=$?
  echo "$rc" > "$d/rc"
  awk -v a="$s" -v b="$(date +%s%N)" 'BEGIN { printf "%.1f\n", (b - a) / 1e9 }' > "$d/wall_s"
  echo "$name rc=$rc $(cat "$d/wall_s" 2>/dev/null) s"
}

# A second process keeping GPU $1 busy (matrix products) for $2 seconds: time-slicing halves what
# any other process gets of that GPU.
hog() {
  $PY - "$1" "$2" > "$W/hog-$1.txt" 2>&1 <<'EOF' &
import sys, time, torch
dev, secs = int(sys.argv[1]), float(sys.argv[2])
a = torch.randn(8192, 8192, device=f"cuda:{dev}", dtype=torch.bfloat16)
(a @ a).sum().item()
print("ready", flush=True)
end = time.time() + secs
n = 0
while time.time() < end:
    for _ in range(20):
        a = (a @ a).clamp_(-1, 1)
    torch.cuda.synchronize(dev); n += 20
print("products", n)
EOF
  HOG=$!
  # wait until its context is up and its first product done (a cold torch import takes seconds),
  # so a bundle collected next sees it
  for _ in $(seq 120); do grep -q ready "$W/hog-$1.txt" 2>/dev/null && break; sleep 0.5; done
}
# The bundle of a busy-GPU run is collected while the hog runs: it holds NVML's view of who else
# uses the GPU, as a user's bundle would when collected beside the slow job.
busy_bundle() {
  mkdir -p "$W/runs/$1"
  $PY -m gdrdiag collect --force -o "$W/runs/$1/bundle.tar.gz" > "$W/runs/$1/collect.txt" 2>&1
}
unhog() { kill "$HOG" 2>/dev/null; wait "$HOG" 2>/dev/null; }

{ date -u; nvidia-smi; nvidia-smi topo -m; nvcc --version | tail -2; } > "$W/device.txt" 2>&1
build
$PY -m gdrdiag collect --force -o "$W/bundle.tar.gz" > "$W/collect.txt" 2>&1; echo "collect rc=$?"

NT="$BIN"
SWEEP=(-b 8 -e 512M -f 4)
last=$((NGPU - 1))
if [ "$NGPU" -ge 2 ] && want nccl; then
  # nccl-tests, healthy
  for c in all_reduce all_gather reduce_scatter sendrecv alltoall broadcast reduce; do
    run "nccl-$c" 120 NCCL_NVLS_ENABLE=0 -- "$NT/${c}_perf" -g "$NGPU" "${SWEEP[@]}"
  done
  run nccl-all_reduce-info 120 NCCL_NVLS_ENABLE=0 NCCL_DEBUG=INFO -- "$NT/all_reduce_perf" -g "$NGPU" "${SWEEP[@]}"
  run nccl-sendrecv-info 120 NCCL_NVLS_ENABLE=0 NCCL_DEBUG=INFO -- "$NT/sendrecv_perf" -g "$NGPU" "${SWEEP[@]}"
  # NCCL's TUNING lines (one per call) land inside nccl-tests' result rows, as users paste them
  for c in all_gather reduce_scatter; do
    run "nccl-$c-tuning" 120 NCCL_NVLS_ENABLE=0 NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,GRAPH,TUNING,ENV -- "$NT/${c}_perf" -g "$NGPU" "${SWEEP[@]}"
  done
  # one thread per GPU (-t N -g 1): the rank lines come from several threads
  run nccl-all_reduce-threads 120 NCCL_NVLS_ENABLE=0 -- "$NT/all_reduce_perf" -t "$NGPU" -g 1 "${SWEEP[@]}"
  run nccl-all_reduce-json 120 NCCL_NVLS_ENABLE=0 -- "$NT/all_reduce_perf" -g "$NGPU" "${SWEEP[@]}" -J "$W/runs/nccl-all_reduce-json/result.json"
  # nccl-tests, faults through NCCL's own knobs
  run fault-nccl-p2p-disable-all_reduce-info 180 NCCL_NVLS_ENABLE=0 NCCL_DEBUG=INFO NCCL_P2P_DISABLE=1 -- "$NT/all_reduce_perf" -g "$NGPU" "${SWEEP[@]}"
  run fault-nccl-p2p-disable-all_reduce 180 NCCL_NVLS_ENABLE=0 NCCL_P2P_DISABLE=1 -- "$NT/all_reduce_perf" -g "$NGPU" "${SWEEP[@]}"
  run fault-nccl-p2p-disable-sendrecv-info 180 NCCL_NVLS_ENABLE=0 NCCL_DEBUG=INFO NCCL_P2P_DISABLE=1 -- "$NT/sendrecv_perf" -g "$NGPU" "${SWEEP[@]}"
  run fault-nccl-p2p-level-loc-all_gather-info 180 NCCL_NVLS_ENABLE=0 NCCL_DEBUG=INFO NCCL_P2P_LEVEL=LOC -- "$NT/all_gather_perf" -g "$NGPU" "${SWEEP[@]}"
  run fault-nccl-one-channel-all_reduce-info 180 NCCL_NVLS_ENABLE=0 NCCL_DEBUG=INFO NCCL_MIN_NCHANNELS=1 NCCL_MAX_NCHANNELS=1 -- "$NT/all_reduce_perf" -g "$NGPU" "${SWEEP[@]}"
  run fault-nccl-eight-channels-all_gather-info 180 NCCL_NVLS_ENABLE=0 NCCL_DEBUG=INFO NCCL_MIN_NCHANNELS=8 NCCL_MAX_NCHANNELS=8 -- "$NT/all_gather_perf" -g "$NGPU" "${SWEEP[@]}"
  run fault-nccl-proto-ll-all_reduce-info 180 NCCL_NVLS_ENABLE=0 NCCL_DEBUG=INFO NCCL_PROTO=LL -- "$NT/all_reduce_perf" -g "$NGPU" "${SWEEP[@]}"
  run fault-nccl-socket-all_reduce-info 180 NCCL_NVLS_ENABLE=0 NCCL_DEBUG=INFO NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 -- "$NT/all_reduce_perf" -g "$NGPU" -b 8 -e 64M -f 4
  hog "$last" 40
  busy_bundle fault-nccl-busy-gpu-all_reduce-info
  run fault-nccl-busy-gpu-all_reduce-info 60 NCCL_NVLS_ENABLE=0 NCCL_DEBUG=INFO -- "$NT/all_reduce_perf" -g "$NGPU" "${SWEEP[@]}"
  unhog
fi
if [ "$NGPU" -ge 2 ] && want p2p; then
  # p2pBandwidthLatencyTest (its P2P=Disabled matrices are part of every run, by design)
  run p2p-sample 240 -- "$BIN/p2pBandwidthLatencyTest"
  run p2p-sample-p2p-read 240 -- "$BIN/p2pBandwidthLatencyTest" --p2p_read
  hog "$last" 120
  busy_bundle fault-p2p-sample-busy-gpu
  run fault-p2p-sample-busy-gpu 240 -- "$BIN/p2pBandwidthLatencyTest"
  unhog
fi
# bandwidthTest: host<->GPU copies of GPU 0 (and every GPU)
if want bandwidthTest; then
run bandwidthTest-pinned 120 -- "$BIN/bandwidthTest" --memory=pinned
run bandwidthTest-all 120 -- "$BIN/bandwidthTest" --device=all --memory=pinned
run bandwidthTest-shmoo 240 -- "$BIN/bandwidthTest" --mode=shmoo --memory=pinned --htod
run fault-bandwidthTest-pageable 120 -- "$BIN/bandwidthTest" --memory=pageable
hog 0 40
busy_bundle fault-bandwidthTest-busy-gpu
run fault-bandwidthTest-busy-gpu 60 -- "$BIN/bandwidthTest" --memory=pinned
unhog
fi
# nvbandwidth (-j), where it was built
if [ -x "$BIN/nvbandwidth" ] && want nvbandwidth; then
  run nvbandwidth-host 240 -- "$BIN/nvbandwidth" -j -t host_to_device_memcpy_ce device_to_host_memcpy_ce \
    host_to_device_bidirectional_memcpy_ce device_to_host_bidirectional_memcpy_ce host_to_device_memcpy_sm device_to_host_memcpy_sm
  if [ "$NGPU" -ge 2 ]; then
    run nvbandwidth-peer 300 -- "$BIN/nvbandwidth" -j -t device_to_device_memcpy_read_ce device_to_device_memcpy_write_ce \
      device_to_device_bidirectional_memcpy_read_ce device_to_device_memcpy_read_sm device_to_device_memcpy_write_sm
  fi
  hog 0 60
  busy_bundle fault-nvbandwidth-busy-gpu
  run fault-nvbandwidth-busy-gpu 120 -- "$BIN/nvbandwidth" -j -t host_to_device_memcpy_sm device_to_host_memcpy_sm
  unhog
fi
# ucx_perftest (UCX's own benchmark; server and client on this host, GPU 0 -> GPU 1 and -> the last
# GPU), healthy and with faults through UCX's own knobs (UCX_TLS): the many-small-blocks GPU->GPU
# workload this project started from moves 10 KiB blocks through UCX.
if [ "$NGPU" -ge 2 ] && want ucx && [ -x /tmp/ucx/libucx/bin/ucx_perftest ]; then
  export LIBUCX_DIR=/tmp/ucx
  LD_LIBRARY_PATH=/tmp/ucx/libucx/lib /tmp/ucx/libucx/bin/ucx_info -v > "$W/ucx-info.txt" 2>&1
  LD_LIBRARY_PATH=/tmp/ucx/libucx/lib /tmp/ucx/libucx/bin/ucx_info -d >> "$W/ucx-info.txt" 2>&1
  UP="$ROOT/scripts/real/ucx_pair.sh"
  port=20000
  upair() { local name=$1 limit=$2; shift 2; port=$((port + 1)); local envs=()
    while [ "$1" != "--" ]; do envs+=("$1"); shift; done; shift
    run "$name" "$limit" LIBUCX_DIR=/tmp/ucx "${envs[@]}" -- bash "$UP" "$port" "$@"; }
  # No -a: it selects UCX's device-initiated tests. Without it the server (group 0, the receiver)
  # takes GPU 0 and the client (group 1, the sender) GPU 1 (src/tools/perf/cuda/cuda_alloc.c,
  # ucx_perf_cuda_init: group_index % number of GPUs)
  G01=(-m cuda,cuda)
  upair ucx-tag_bw-cuda-64M 90 -- -t tag_bw "${G01[@]}" -s 67108864 -n 400 -w 40
  upair ucx-tag_bw-cuda-64M-info 90 UCX_PROTO_INFO=y -- -t tag_bw "${G01[@]}" -s 67108864 -n 400 -w 40
  upair ucx-ucp_put_bw-cuda-64M 60 -- -t ucp_put_bw "${G01[@]}" -s 67108864 -n 400 -w 40
  upair ucx-tag_bw-cuda-4M 90 -- -t tag_bw "${G01[@]}" -s 4194304 -n 4000 -w 200
  upair ucx-tag_bw-cuda-1M 90 -- -t tag_bw "${G01[@]}" -s 1048576 -n 10000 -w 500
  upair ucx-tag_bw-cuda-10K 90 -- -t tag_bw "${G01[@]}" -s 10240 -n 50000 -w 2000
  upair ucx-tag_bw-cuda-10K-info 90 UCX_PROTO_INFO=y -- -t tag_bw "${G01[@]}" -s 10240 -n 50000 -w 2000
  upair ucx-tag_lat-cuda-8 90 -- -t tag_lat "${G01[@]}" -s 8 -n 20000 -w 1000
  upair ucx-tag_bw-host-64M-info 90 UCX_PROTO_INFO=y -- -t tag_bw -m host,host -s 67108864 -n 200 -w 20
  upair ucx-tag_bw-host-cuda-64M-info 90 UCX_PROTO_INFO=y -- -t tag_bw -m host,cuda -s 67108864 -n 200 -w 20
  upair ucx-tag_bw-cuda-host-64M-info 90 UCX_PROTO_INFO=y -- -t tag_bw -m cuda,host -s 67108864 -n 200 -w 20
  if [ "$NGPU" -gt 2 ]; then
    upair ucx-tag_bw-cuda-64M-gpus-0-$last 90 CUDA_VISIBLE_DEVICES=0,$last -- -t tag_bw "${G01[@]}" -s 67108864 -n 400 -w 40
  fi
  # faults: no CUDA IPC (bytes staged through host memory), TCP only, and a busy GPU
  upair fault-ucx-no-cuda-ipc-tag_bw-cuda-64M-info 120 UCX_PROTO_INFO=y UCX_TLS=^cuda_ipc -- -t tag_bw "${G01[@]}" -s 67108864 -n 100 -w 10
  upair fault-ucx-no-cuda-ipc-tag_bw-cuda-64M 120 UCX_TLS=^cuda_ipc -- -t tag_bw "${G01[@]}" -s 67108864 -n 100 -w 10
  upair fault-ucx-no-cuda-ipc-tag_bw-cuda-10K-info 120 UCX_PROTO_INFO=y UCX_TLS=^cuda_ipc -- -t tag_bw "${G01[@]}" -s 10240 -n 20000 -w 1000
  upair fault-ucx-tcp-tag_bw-cuda-64M-info 180 UCX_PROTO_INFO=y UCX_TLS=tcp,cuda_copy -- -t tag_bw "${G01[@]}" -s 67108864 -n 40 -w 4
  hog 1 60
  busy_bundle fault-ucx-busy-gpu-tag_bw-cuda-64M
  upair fault-ucx-busy-gpu-tag_bw-cuda-64M 90 -- -t tag_bw "${G01[@]}" -s 67108864 -n 400 -w 40
  unhog
fi
# What inspect says with CUDA_VISIBLE_DEVICES hiding the last GPU (the GPU inventory check)
if [ "$NGPU" -ge 2 ]; then
  CUDA_VISIBLE_DEVICES=$(seq -s, 0 $((last - 1))) $PY -m gdrdiag inspect > "$W/inspect-hidden-gpu.txt" 2>&1
  echo "inspect with GPU $last hidden: rc=$?"
fi
ls "$W/runs" | wc -l
