# Sourced by the gather experiments on the device machine (gpu_gather_fixed_cost.sh,
# gpu_gather_alignment.sh): the GPU header every result folder starts with, and one gather-bench
# run per call with its Report beside its table.

gpu_header() {  # DIR: the GPU, its driver and link, the time and the commit into DIR/gpu.txt, echoed
  {
    nvidia-smi --query-gpu=name,driver_version,pcie.link.gen.current,pcie.link.width.current --format=csv
    date -u +%Y-%m-%dT%H:%M:%SZ
    git rev-parse --short HEAD 2>/dev/null
  } > "$1/gpu.txt" 2>&1
  cat "$1/gpu.txt"
}

gather_run() {  # DIR NAME ARGS...: gather-bench ARGS (3 rounds, at least 2), DIR/NAME.json and .txt, one log line
  local dir=$1 name=$2 s
  shift 2
  s=$(date +%s)
  timeout 120 python3 -m gdrdiag gather-bench --quiet --rounds 3 --min-rounds 2 \
    --json-out "$dir/$name.json" "$@" > "$dir/$name.txt" 2>&1
  echo "$name rc=$? wall_s=$(( $(date +%s) - s ))"
}
