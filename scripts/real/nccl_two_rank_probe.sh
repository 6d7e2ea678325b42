#!/usr/bin/env bash
# Why 2-rank all_gather / reduce_scatter reach ~0.7 of the NVLink bound on H200 pairs where
# sendrecv and all_reduce on the same pair reach 0.95 / 0.86: one nccl-tests build, then the same
# 512 MiB - 1 GiB collective under NCCL's own knobs (channels, protocol, threads, P2P read, buffer
# registration), each output kept as printed. Run from the repository root on a 2-GPU machine:
#
#   OUT=/some/dir bash scripts/real/nccl_two_rank_probe.sh
set -uo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
W=${OUT:-./out}/nccl-probe
mkdir -p "$W"
export NCCL_NVLS_ENABLE=0  # the machine's rule: NVLink multicast stays off
NVCC=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
CUDA_HOME=$(dirname "$(dirname "$NVCC")")
{ date -u; nvidia-smi -L; nvidia-smi topo -m; } > "$W/device.txt" 2>&1
(cd scripts/real/src/nccl-tests && make -j16 MPI=0 CUDA_HOME="$CUDA_HOME" NCCL_HOME=/usr \
   NVCC_GENCODE="-gencode=arch=compute_90,code=sm_90" BUILDDIR=/tmp/nccl-tests-build > "$W/build.txt" 2>&1)
B=/tmp/nccl-tests-build
SW=(-g 2 -b 256M -e 1G -f 2 -n 20 -w 5)
probe() {  # probe NAME VAR=VALUE... -- PROGRAM ARGS
  local name=$1; shift
  local envs=()
  while [ "$1" != "--" ]; do envs+=("$1"); shift; done; shift
  { printf '%s ' "${envs[@]}"; echo "$*"; } > "$W/$name.cmd"
  env "${envs[@]}" timeout 120 "$@" > "$W/$name.txt" 2>&1
  echo "$name rc=$? $(grep -E '^ +1073741824' "$W/$name.txt" | awk '{print "oop", $8, "ip", $12}')"
}
for c in all_gather reduce_scatter all_reduce sendrecv; do
  probe "$c-tuning" NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,GRAPH,TUNING,ENV -- "$B/${c}_perf" "${SW[@]}"
done
probe all_gather-default X=1 -- "$B/all_gather_perf" "${SW[@]}"
for n in 8 16 24 32; do
  probe "all_gather-ch$n" NCCL_MIN_NCHANNELS=$n NCCL_MAX_NCHANNELS=$n -- "$B/all_gather_perf" "${SW[@]}"
  probe "all_reduce-ch$n" NCCL_MIN_NCHANNELS=$n NCCL_MAX_NCHANNELS=$n -- "$B/all_reduce_perf" "${SW[@]}"
done
probe all_gather-ll128 NCCL_PROTO=LL128 -- "$B/all_gather_perf" "${SW[@]}"
probe all_gather-simple NCCL_PROTO=Simple -- "$B/all_gather_perf" "${SW[@]}"
probe all_gather-p2pread0 NCCL_P2P_READ_ENABLE=0 -- "$B/all_gather_perf" "${SW[@]}"
probe all_gather-p2pread1 NCCL_P2P_READ_ENABLE=1 -- "$B/all_gather_perf" "${SW[@]}"
probe all_gather-threads256 NCCL_NTHREADS=256 -- "$B/all_gather_perf" "${SW[@]}"
probe all_gather-cumem0 NCCL_CUMEM_ENABLE=0 -- "$B/all_gather_perf" "${SW[@]}"
probe all_gather-reg1 X=1 -- "$B/all_gather_perf" "${SW[@]}" -R 1
probe all_gather-reg2 X=1 -- "$B/all_gather_perf" "${SW[@]}" -R 2
probe reduce_scatter-reg1 X=1 -- "$B/reduce_scatter_perf" "${SW[@]}" -R 1
probe all_reduce-reg1 X=1 -- "$B/all_reduce_perf" "${SW[@]}" -R 1
probe all_gather-buff8m NCCL_BUFFSIZE=8388608 -- "$B/all_gather_perf" "${SW[@]}"
probe all_gather-steps NCCL_P2P_NET_CHUNKSIZE=524288 NCCL_P2P_NVL_CHUNKSIZE=1048576 -- "$B/all_gather_perf" "${SW[@]}"
tar -czf "${OUT:-./out}/nccl-probe.tar.gz" -C "${OUT:-./out}" nccl-probe
