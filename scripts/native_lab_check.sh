#!/bin/sh
# The native provider against ib_write_bw and the pyverbs provider, on one RDMA device, one boot.
#
#   sh scripts/native_lab_check.sh [DEVICE] [RESULTS_DIR]      (defaults: rxe0, /tmp/native-lab)
#
# Written for the QEMU lab's guest (Soft-RoCE rxe0; see docs/lab.md), runs on any machine with an
# RDMA device, perftest and gdrdiag importable (PYTHONPATH = the repository root). For each size
# (64 B, 4 KiB, 64 KiB, 1 MiB) and post list (1, 16), in ROUNDS rounds (default 2), it runs,
# alternated so drift hits all three alike:
#   1. ib_write_bw (server + client on 127.0.0.1, the same device), --report_gbits
#   2. gdrdiag mr-bench --provider native   (the C loop, native/verbs_loop.c)
#   3. gdrdiag mr-bench --provider pyverbs  (the Python loop)
# all with perftest's defaults otherwise: 1 QP, TX depth 128, one signalled WR in 100 (in post-list
# mode perftest signals every list, and so does gdrdiag with -Q = the post list), no inline data
# (-I 0 / --inline 0; INLINE=N changes both), pageable host memory, the same GID index.
# Then it prints (and writes to RESULTS_DIR/table.md), per size and post list, the medians and the ratios native/perftest and
# pyverbs/perftest for bandwidth and message rate (the target: native >= 0.95), and one
# --time-calls run per post list at 64 B: time inside ibv_post_send, ibv_poll_cq and the C loop
# itself, per WR.
#
# Soft-RoCE is software: its absolute numbers say nothing about a NIC, only the ratios matter.
# Exit status: 0 when every run produced a number, 1 otherwise (the table says which are missing).
# Environment: ROUNDS (default 2), INLINE (default 0), GID (skip the GID lookup), PT_PORT, GDRDIAG,
# SIZES and POST_LISTS (comma-separated subsets of the defaults, for a quick check), TIME_CALLS
# (default 1; 0 skips the --time-calls runs), LAB_WAIT_FACTOR (default 1: the lab's guest sets it
# from its measured speed, scripts/lab/guest/lib.sh; every hang guard and wait here is multiplied).
set -u
DEV=${1:-rxe0}
OUT=${2:-/tmp/native-lab}
ROUNDS=${ROUNDS:-2}
SIZES=${SIZES:-64,4096,65536,1048576}
POST_LISTS=${POST_LISTS:-1,16}
INLINE=${INLINE:-0}
PORT=${PT_PORT:-18750}
G=${GDRDIAG:-python3 -m gdrdiag}
mkdir -p "$OUT"
fail=0
scaled() { echo $(($1 * ${LAB_WAIT_FACTOR:-1})); }

# The native library: the tree's build/native (built by scripts/setup.sh on the host), else a
# fresh build into $OUT/native when this machine has a compiler (the lab's /src is read-only).
why=$(python3 -c 'from gdrdiag.hw import verbs_native as n; l, w = n.availability(); print("ok" if l else w)')
if [ "$why" != ok ] && command -v cc >/dev/null 2>&1; then
    GDRDIAG_NATIVE_OUT="$OUT/native" sh "$(dirname "$0")/build_native.sh"
    export GDRDIAG_NATIVE_DIR="$OUT/native"
    why=$(python3 -c 'from gdrdiag.hw import verbs_native as n; l, w = n.availability(); print("ok" if l else w)')
fi
echo "native library: $why" | tee "$OUT/native-library.txt"
# Without the library this check has nothing to judge: say so and fail (it used to pass).
[ "$why" = ok ] || fail=1

gid=${GID:-$(python3 - "$DEV" <<'PY'
import sys
from gdrdiag.hw import verbs_providers as verbs
with verbs.open_device("pyverbs", sys.argv[1]) as d:
    print(d.gid_index)
PY
)} || { echo "cannot open $DEV through pyverbs"; exit 1; }
[ -n "$gid" ] || { echo "no GID index for $DEV"; exit 1; }
ngid=$(python3 - "$DEV" <<'PY' 2>/dev/null
import sys
from gdrdiag.hw import verbs_providers as verbs
with verbs.open_device("native", sys.argv[1]) as d:
    print(d.gid_index)
PY
)
echo "$DEV GID index: pyverbs $gid, native ${ngid:-n/a} (the same rules; all runs use -x $gid)" | tee "$OUT/gid.txt"

iters() {  # WRs per run: small enough for Soft-RoCE under emulation (~0.1-0.3 Gb/s)
    # Multiples of 16: ib_write_bw refuses iterations that are not a multiple of the post list (-l 16).
    case $1 in 64) echo 20000 ;; 4096) echo 4000 ;; 65536) echo 608 ;; *) echo 112 ;; esac
}

perftest_run() {  # size post-list round
    _s=$1 _l=$2 _r=$3 _n=$(iters "$1")
    _f="$OUT/pt-$_s-l$_l-r$_r"
    timeout "$(scaled 330)" ib_write_bw -d "$DEV" -x "$gid" -s "$_s" -n "$_n" -l "$_l" -I "$INLINE" -F --report_gbits \
        -p "$PORT" >"$_f-server.txt" 2>&1 &
    _srv=$!
    sleep "$(scaled 1)"
    timeout "$(scaled 300)" ib_write_bw -d "$DEV" -x "$gid" -s "$_s" -n "$_n" -l "$_l" -I "$INLINE" -F --report_gbits \
        -p "$PORT" 127.0.0.1 >"$_f.txt" 2>&1
    _c=$?
    wait $_srv
    return $_c
}

gdrdiag_run() {  # provider size post-list round [extra options]
    _p=$1 _s=$2 _l=$3 _r=$4
    shift 4
    _n=$(iters "$_s")
    _q=100
    [ "$_l" -gt 1 ] && _q=$_l
    _extra=""
    [ "$_p" = native ] && _extra="--inline $INLINE"
    timeout "$(scaled 600)" $G --json mr-bench --provider "$_p" -d "$DEV" -x "$gid" --memory pageable -s "$_s" -n "$_n" \
        -q 1 -t 128 -l "$_l" -Q "$_q" --repeats 1 --timeout "$(scaled 10)" $_extra "$@" \
        --json-out "$OUT/gd-$_p-$_s-l$_l-r$_r.json" >"$OUT/gd-$_p-$_s-l$_l-r$_r.out" 2>&1
}

for round in $(seq "$ROUNDS"); do
    for size in $(echo "$SIZES" | tr ',' ' '); do
        for pl in $(echo "$POST_LISTS" | tr ',' ' '); do
            echo "== round $round, $size B, post list $pl"
            perftest_run "$size" "$pl" "$round" || { echo "   ib_write_bw failed (see $OUT)"; fail=1; }
            if [ "$why" = ok ]; then
                gdrdiag_run native "$size" "$pl" "$round" || { echo "   native failed (see $OUT)"; fail=1; }
            fi
            gdrdiag_run pyverbs "$size" "$pl" "$round" || { echo "   pyverbs failed (see $OUT)"; fail=1; }
        done
    done
done
if [ "$why" = ok ] && [ "${TIME_CALLS:-1}" != 0 ]; then
    for pl in 1 16; do
        gdrdiag_run native 64 "$pl" timed --time-calls || fail=1
    done
fi

python3 - "$OUT" "$SIZES" "$POST_LISTS" >"$OUT/table.md" <<'PY'
"""Medians over rounds; ratios to ib_write_bw of the same size and post list, same boot."""
import json
import re
import statistics
import sys
from pathlib import Path

out = Path(sys.argv[1])
LINE = re.compile(r"^\s*(\d+)\s+(\d+)\s+([0-9.]+)\s+([0-9.]+)\s+([0-9.]+)\s*$")


def perftest(path):
    text = path.read_text(errors="replace") if path.is_file() else ""
    if "Gb/sec" not in text:
        return None
    for line in text.splitlines():
        m = LINE.match(line)
        if m:
            return float(m.group(4)), float(m.group(5)) * 1e6  # BW average Gb/s, MsgRate (Mpps -> /s)
    return None


def gdrdiag(path, provider):
    if not path.is_file():
        return None
    for r in json.loads(path.read_text()).get("results", []):
        if r.get("status") == "OK" and r.get("verified") and r.get("provider") == provider:
            return float(r["stats"]["median"]), float(r["metrics"]["msgs_per_s"])
    return None


def med(xs, i):
    vals = [x[i] for x in xs if x is not None]
    return statistics.median(vals) if vals else None


def ratio(a, b):
    return f"{a / b:.2f}" if a is not None and b else "n/a"


def fmt(x, scale=1.0, nd=3):
    return f"{x / scale:.{nd}f}" if x is not None else "n/a"


rows = []
missing = 0
for size in (int(x) for x in sys.argv[2].split(",")):
    for pl in (int(x) for x in sys.argv[3].split(",")):
        pt = [perftest(p) for p in sorted(out.glob(f"pt-{size}-l{pl}-r*.txt")) if not p.name.endswith("-server.txt")]
        nat = [gdrdiag(p, "native") for p in sorted(out.glob(f"gd-native-{size}-l{pl}-r[0-9]*.json"))]
        py = [gdrdiag(p, "pyverbs") for p in sorted(out.glob(f"gd-pyverbs-{size}-l{pl}-r*.json"))]
        missing += sum(x is None for x in pt + nat + py)
        bw, rate = med(pt, 0), med(pt, 1)
        nbw, nrate, pbw, prate = med(nat, 0), med(nat, 1), med(py, 0), med(py, 1)
        rows.append([str(size), str(pl), str(len(pt)), fmt(bw), fmt(rate, 1e6), fmt(nbw), fmt(nrate, 1e6),
                     fmt(pbw), fmt(prate, 1e6), ratio(nbw, bw), ratio(nrate, rate), ratio(pbw, bw),
                     ratio(prate, rate)])
head = ["size", "post list", "rounds", "perftest Gb/s", "perftest Mmsg/s", "native Gb/s", "native Mmsg/s",
        "pyverbs Gb/s", "pyverbs Mmsg/s", "native/pt BW", "native/pt rate", "pyverbs/pt BW", "pyverbs/pt rate"]
print("| " + " | ".join(head) + " |")
print("|" + "---:|" * len(head))
for r in rows:
    print("| " + " | ".join(r) + " |")
print("(medians over rounds; ratios to ib_write_bw at the same size and post list, same device and boot; "
      "Soft-RoCE numbers are software, only the ratios mean anything)")
for p in sorted(out.glob("gd-native-64-l*-rtimed.json")):
    for r in json.loads(p.read_text()).get("results", []):
        m = r.get("metrics", {})
        if r.get("status") == "OK" and "post_ns_per_wr" in m:
            print(f"native --time-calls, 64 B, post list {r['params']['post_list']}: per WR "
                  f"{m['post_ns_per_wr']:.0f} ns in ibv_post_send, {m['poll_ns_per_wr']:.0f} ns in ibv_poll_cq, "
                  f"{m['loop_ns_per_wr']:.0f} ns in the C loop itself")
sys.exit(1 if missing else 0)
PY
table=$?
cat "$OUT/table.md"
[ $table = 0 ] || fail=1
echo "results in $OUT"
exit $fail
