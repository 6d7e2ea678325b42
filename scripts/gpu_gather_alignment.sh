#!/usr/bin/env bash
# On the device machine, in one call: is the model's one systematic miss, 656-B records
# (best / ceiling 0.985 median over eleven record-size sweeps, where 640 and 768 B sit at
# 0.998-1.000), a property of 656 B or of every record that does not start on a 128-B line?
# gather-bench runs the ladder (planned-lines, lines, warp) at every 16-B step of a record's
# start within a line: R = 640 .. 768 B, packed, both patterns, twice, alternated. With 640 and
# 768 B the records are line-aligned; 672, 704 and 736 start on 32-B sectors; 656, 688, 720 and
# 752 start mid-sector, where two neighbouring records share a sector. A control: 656 B on a
# 768-B stride (every record line-aligned, its last line partial).
# Results under $OUT (default /tmp/gather-align): align.tgz (the Reports, their tables, gpu.txt);
# scripts/gpu_gather_alignment_summary.py DIR prints best / ceiling per cell.
cd "$(dirname "$0")/.." || exit 1
export PYTHONPATH=. PYTHONUNBUFFERED=1
OUT=${OUT:-/tmp/gather-align}
RAW="$OUT/align"
mkdir -p "$RAW"
# shellcheck source=scripts/gather_run_lib.sh
. scripts/gather_run_lib.sh
gpu_header "$RAW"
bench() { gather_run "$RAW" "$1" --ce-per-case -k planned-lines,lines,warp "${@:2}"; }
for rep in 1 2; do
  for pat in random unique; do
    for R in 640 656 672 688 704 720 736 752 768; do
      bench "$pat-$R-$rep" -s "$R" --pattern "$pat"
    done
    bench "$pat-656pad-$rep" -s 656 --stride 768 --pattern "$pat"
  done
done
python3 scripts/gpu_gather_alignment_summary.py "$RAW"
tar czf "$OUT/align.tgz" -C "$OUT" align && rm -rf "$RAW"
