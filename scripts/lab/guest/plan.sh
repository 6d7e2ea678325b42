#!/bin/sh
# Run one lab plan inside the guest (called by /sbin/lab-init with the plan's name).
#
# The source tree is /src (read-only 9p), results go to /results/. gdrdiag runs from the tree
# (PYTHONPATH=/src), exactly as `python3 -m gdrdiag` runs on a machine without installing.
# Each step's wall time goes to /results/steps.tsv (name, seconds, rc), like the host side.
set -u
plan=${1:-}
export PYTHONPATH=/src PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1
export R=/results
export GDRDIAG="python3 -m gdrdiag"
. /src/scripts/lab/guest/lib.sh

echo "plan $plan: $(uname -r), $(nproc) CPUs, $(awk '/MemTotal/ {print $2}' /proc/meminfo) kB"
# Once per boot, before any step: how much slower than an idle guest this one runs (lib.sh).
lab_speed
# A heartbeat for the host's hang guard (scripts/lab/run.sh, watch_progress): while the guest
# runs, something under the results folder is written at least every 30 s, whatever step is on.
# Not scaled: a heartbeat that slows with the guest would hide nothing and only fire later. Its
# output goes nowhere: lab-init pipes this script into tee, which ends only when every writer of
# the pipe has closed it, so a heartbeat holding it would keep the guest from powering off.
HEARTBEAT_S=30
(while :; do : >"$R/.alive"; sleep "$HEARTBEAT_S"; done) </dev/null >/dev/null 2>&1 &
HEARTBEAT_PID=$!
case $plan in
    smoke)
        step python-imports python3 -c "import pyverbs.device, numpy, typer, tabulate, pytest; import gdrdiag"
        step gdrdiag-version $GDRDIAG --version
        ;;
    verbs) sh /src/scripts/lab/guest/verbs.sh ;;
    # Only the pytest -m rdma part of the verbs plan (e.g. on an older tree, LAB_SRC=...).
    rdma) step rxe-setup rxe_setup && step pytest-rdma rdma_tests ;;
    pcie) sh /src/scripts/lab/guest/pcie.sh ;;
    twohost-server) sh /src/scripts/lab/guest/twohost.sh server ;;
    twohost-client) sh /src/scripts/lab/guest/twohost.sh client ;;
    # The native provider (C loop) beside ib_write_bw and the pyverbs provider on rxe0.
    # Under LAB_ICOUNT the clock facts (clocksource, TSC, what perftest reads) go to clock.txt.
    native) step clock-facts clock_facts && step rxe-setup rxe_setup &&
        step native-check sh /src/scripts/native_lab_check.sh rxe0 "$R" ;;
    *) echo "plan.sh: unknown plan '$plan'" >&2; exit 2 ;;
esac
rc=$?
kill "$HEARTBEAT_PID" 2>/dev/null
if [ -s "$R/failed-steps" ]; then
    echo "plan $plan: failed steps: $(tr '\n' ' ' <"$R/failed-steps")"
    [ "$rc" != 0 ] || rc=1
fi
exit $rc
