#!/usr/bin/env bash
# Everything that needs the GPU machine, in one call: the GPU tests, then the benchmarks whose
# numbers go into docs/benchmarks.md. Run from the repository root on the GPU machine:
#
#   OUT=/some/dir bash scripts/gpu_check.sh [section ...]
#
# Sections: tests check copy gather mr inspect quick report (default: all). Results land under $OUT:
#   tests-N.txt, copy.json/copy.txt, gather.json/gather.txt, mr.json/mr.txt, inspect.*, bundle
# The project runs from the source tree (nothing is installed there): PYTHONPATH=. .
set -uo pipefail
cd "$(dirname "$0")/.."
FINAL=${OUT:-./out}
mkdir -p "$FINAL"
# Work in a scratch folder and hand back one archive: the device tool returns few files.
OUT=$(mktemp -d)
trap 'tar -czf "$FINAL/gpu-check.tar.gz" -C "$OUT" --exclude=.nvrtc-cache . ; echo "results: $FINAL/gpu-check.tar.gz"' EXIT
export PYTHONPATH=.
export GDRDIAG_CACHE_DIR="$OUT/.nvrtc-cache"
# The C loops (copy-bench's C rows, the native RDMA provider): no set-up runs on this machine.
bash scripts/build_native.sh > "$OUT/build_native.txt" 2>&1; cat "$OUT/build_native.txt"
PY=${PYTHON:-python3}
sections=("$@")
[ ${#sections[@]} -eq 0 ] && sections=(tests check copy gather mr inspect quick report)
want() { local s; for s in "${sections[@]}"; do [ "$s" = "$1" ] && return 0; done; return 1; }
has_cmd() { $PY -m gdrdiag --help 2>/dev/null | grep -q " $1 "; }

{ date -u; nvidia-smi --query-gpu=name,driver_version,pcie.link.gen.max,pcie.link.width.max --format=csv;
  $PY -c 'import cuda.bindings, numpy; print("cuda-bindings", cuda.bindings.__version__, "numpy", numpy.__version__)'
} > "$OUT/device.txt" 2>&1

if want tests; then
  # TEST_REPEATS runs (default 1), back to back: three green runs in a row show the tests are stable.
  # --durations shows the slowest tests (the oversized layout is refused in under 5 s).
  for rep in $(seq "${TEST_REPEATS:-1}"); do
    echo "== GPU tests, run $rep"
    s=$(date +%s)
    timeout ${TEST_TIMEOUT:-420} $PY -m pytest -q -rs -m "gpu" tests/hw -p no:cacheprovider --durations=12 \
      > "$OUT/tests-$rep.txt" 2>&1
    echo "run $rep: rc=$? wall=$(( $(date +%s) - s )) s"
    grep -E "passed|failed|error|FAILED|ERROR|too_large" "$OUT/tests-$rep.txt" | tail -30
  done
fi
if want check; then
  echo "== inspect --check (fleet readiness probe), 5 runs"
  for i in 1 2 3 4 5; do /usr/bin/time -f "wall %e s" $PY -m gdrdiag --json inspect --check; echo "rc=$?"; done > "$OUT/check.txt" 2>&1
  cat "$OUT/check.txt"
fi
if want copy; then
  echo "== copy-bench"
  timeout 400 $PY -m gdrdiag copy-bench --force --json-out "$OUT/copy.json" ${COPY_ARGS:-} > "$OUT/copy.txt" 2> "$OUT/copy.err"
  echo "rc=$?"; sed -n '/Pinned H2D against/,$p' "$OUT/copy.txt"; tail -5 "$OUT/copy.err"
fi
if want gather && has_cmd gather-bench; then
  echo "== gather-bench"
  timeout 300 $PY -m gdrdiag gather-bench --force --json-out "$OUT/gather.json" ${GATHER_ARGS:-} > "$OUT/gather.txt" 2> "$OUT/gather.err"
  echo "rc=$?"; head -120 "$OUT/gather.txt"; tail -5 "$OUT/gather.err"
fi
if want mr && has_cmd mr-bench; then
  echo "== mr-bench (soft provider, real CUDA memory: not hardware RDMA numbers)"
  timeout 200 $PY -m gdrdiag mr-bench --provider soft --matrix --force --json-out "$OUT/mr.json" ${MR_ARGS:-} > "$OUT/mr.txt" 2> "$OUT/mr.err"
  echo "rc=$?"; head -80 "$OUT/mr.txt"; tail -5 "$OUT/mr.err"
fi
if want inspect && has_cmd inspect; then
  echo "== inspect / collect (fixture b) / replay"
  { /usr/bin/time -f "wall %e s" $PY -m gdrdiag inspect; echo "rc=$?"; } > "$OUT/inspect.txt" 2>&1
  $PY -m gdrdiag --json inspect > "$OUT/inspect.json" 2> "$OUT/inspect.err"; echo $? > "$OUT/inspect.rc"
  $PY -m gdrdiag collect --force -o "$OUT/b_gpu_firecracker_h200.tar.gz" > "$OUT/collect.txt" 2>&1; echo "rc=$?" >> "$OUT/collect.txt"
  $PY -m gdrdiag --json inspect --bundle "$OUT/b_gpu_firecracker_h200.tar.gz" > "$OUT/replay.json" 2>&1
  $PY -c "import json;a=json.load(open('$OUT/inspect.json'));b=json.load(open('$OUT/replay.json'));a['machine']['source']=b['machine']['source']='';print('SAME' if a['machine']==b['machine'] and a['findings']==b['findings'] else 'DIFF')" > "$OUT/replay_check.txt" 2>&1
  $PY -c "import sys;sys.modules['pyverbs']=None;from gdrdiag.inspect.collect import collect_bundle;print(collect_bundle('$OUT/nopyverbs.tar.gz')[1])" > "$OUT/nopyverbs.txt" 2>&1
  lspci -vvv -s 00:06.0 > "$OUT/lspci_gpu.txt" 2>&1; lspci -tv > "$OUT/lspci_tree.txt" 2>&1
  nvidia-smi -q > "$OUT/nvidia-smi-q.txt" 2>&1
  cat "$OUT/inspect.txt"; cat "$OUT/replay_check.txt"
fi
if want quick && has_cmd report; then
  # on a healthy machine `report --quick` and its diagnosis say nothing is wrong
  echo "== report --quick, then diagnose it"
  timeout 300 $PY -m gdrdiag report --quick --force -o "$OUT/quick.json" > "$OUT/quick.txt" 2>&1
  echo "report rc=$?"
  $PY -m gdrdiag diagnose "$OUT/quick.json" > "$OUT/quick_diagnose.txt" 2>&1
  echo "diagnose rc=$?"
  grep -E "^(FAIL|WARN) " "$OUT/quick_diagnose.txt" || echo "no WARN or FAIL finding"
  head -40 "$OUT/quick_diagnose.txt"
fi
if want report && has_cmd report; then
  echo "== report (the real Report of this machine)"
  timeout 500 $PY -m gdrdiag report --force -o "$OUT/gpu_machine_h200.json" --html "$OUT/gpu_machine_h200.html" ${REPORT_ARGS:-} > "$OUT/report.txt" 2>&1
  echo "rc=$?"; head -60 "$OUT/report.txt"
fi
echo "== done"
