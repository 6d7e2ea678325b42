#!/usr/bin/env bash
# On the device machine, in one call: what a gather batch costs besides its wire time,
# and how steady the read-request rate is (docs/benchmarks.md, "16- and 32-B records: ...").
#
# 1. Batch size: planned-flat, planned-lines and warp gather 16-B (unique) and 32-B (random)
#    records in batches of 262144, 65536, 16384 and 4096 records (--requests x 2048 records)
#    from the same 300000-slot table; the fixed cost per batch is what the time per batch keeps
#    when the wire time shrinks to nothing.
# 2. Copy engine by copy size: the CE reference at 4 to 256 MiB (R = 16 .. 1024 B tables, one
#    record size each), three times, to see its short-copy shortfall against the link's rate.
# 3. Request rate, five times interleaved: the warp kernel on 16-B records in random order (the
#    run's calibration) and in slot order with one record per 128-B line (no page locality lost).
# Every run passes --request-rate 0.75 so none calibrates; the Reports carry the raw samples.
# Results under $OUT (default /tmp/gather-fixed): fixed-cost.tgz (the Reports, their tables, gpu.txt).
cd "$(dirname "$0")/.." || exit 1
export PYTHONPATH=. PYTHONUNBUFFERED=1
OUT=${OUT:-/tmp/gather-fixed}
mkdir -p "$OUT"
# shellcheck source=scripts/gather_run_lib.sh
. scripts/gather_run_lib.sh
gpu_header "$OUT"
bench() { gather_run "$OUT" "$1" --request-rate 0.75 "${@:2}"; }
for n in 128 32 8 2; do
  bench "batch-u16-$n" -s 16 --pattern unique -k planned-flat,planned-lines,warp --requests $n --ce-per-case
  bench "batch-r32-$n" -s 32 --pattern random -k planned-flat,planned-lines,warp --requests $n --ce-per-case
done
for rep in 1 2 3; do
  for R in 16 64 256 1024; do
    bench "ce-$R-$rep" -s "$R" --pattern unique -k planned-lines
  done
done
for rep in 1 2 3 4 5; do
  bench "rate-random-$rep" -s 16 --pattern unique -k warp
  bench "rate-lines-$rep" -s 16 --stride 128 --slots 262144 --pattern sequential -k warp
done
tar czf "/tmp/fixed-cost.$$.tgz" -C "$OUT" . && rm -rf "${OUT:?}"/* && mv "/tmp/fixed-cost.$$.tgz" "$OUT/fixed-cost.tgz"
