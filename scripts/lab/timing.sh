#!/usr/bin/env bash
# The lab's native timing plan with deterministic guest time (docs/lab.md "Deterministic time").
#
# Usage: scripts/lab/timing.sh [JSON_OUT]      (as root; default JSON_OUT: $LAB_OUT/native-timing.json)
#
# Boots the native plan (scripts/native_lab_check.sh: ib_write_bw, mr-bench --provider native and
# --provider pyverbs alternated on rxe0, one boot; the --time-calls runs are left out) under TCG with `-icount shift=N,sleep=off`, so
# guest time counts the guest's instructions and not the host's load, with ROUNDS rounds; then
# scripts/lab/native_timing.py writes every round's numbers to JSON_OUT and prints the table of
# spreads (max/min per tool and cell) and ratios to ib_write_bw. Slow (single-threaded TCG, one
# vCPU): it is not part of .ci/run; its recorded results are tests/fixtures/lab/native_icount.json,
# judged by tests/lab/test_native_timing.py.
#
# Environment: LAB_ICOUNT (shift, default 0: 1 ns of guest time per instruction), ROUNDS (default 5),
# SIZES, POST_LISTS (subsets, comma-separated), LAB_OUT (default out/lab-timing), LAB_TIMEOUT
# (s, default 5400), and run.sh's others.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
export LAB_OUT=${LAB_OUT:-$repo/out/lab-timing}
export LAB_ICOUNT=${LAB_ICOUNT:-0} LAB_TIMEOUT=${LAB_TIMEOUT:-5400} LAB_ACCEL=tcg
rounds=${ROUNDS:-5}
export LAB_GUEST_ENV="ROUNDS=$rounds TIME_CALLS=0${SIZES:+ SIZES=$SIZES}${POST_LISTS:+ POST_LISTS=$POST_LISTS}"
json=${1:-$LAB_OUT/native-timing.json}
t0=$(date -u +%Y-%m-%dT%H:%M:%SZ)
rc=0
bash "$here/run.sh" native || rc=$?
t1=$(date -u +%Y-%m-%dT%H:%M:%SZ)
note="scripts/lab/timing.sh: LAB_ICOUNT=$LAB_ICOUNT LAB_GUEST_ENV='$LAB_GUEST_ENV', $t0 - $t1, host $(nproc) cores,"
note+=" $(qemu-system-x86_64 --version | head -1), plan exit $rc"
python3 "$here/native_timing.py" "$json" "$LAB_OUT/native" --note "$note" || [ $rc != 0 ] || rc=1
echo "results: $json" >&2
exit $rc
