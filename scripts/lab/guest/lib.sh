# Helpers of the guest plans (sourced; POSIX sh: the guest has no bash guarantees in PATH order).
#
# step NAME CMD...      run CMD, record "NAME<TAB>seconds<TAB>rc" in $R/steps.tsv; a failing step
#                       is also appended to $R/failed-steps (the plan fails at the end, after
#                       every step ran, so one failure does not hide the others).
#                       A step that fails with a timeout (exit 124, or a timeout message in what
#                       it wrote under $R) is run once more, saying "retrying step NAME once: ...".
# try NAME CMD...       the same, but a failure is only recorded (expected-failure steps).
# now                   seconds since boot, with centiseconds.
# scaled N              N (a whole number of seconds or retries) times the guest's wait factor.
#
# Waits scale with the guest's speed: these guests are emulated (TCG), and on a loaded host every
# step runs slower, so a timeout sized on an idle machine fires on a busy one. lab_speed (run once
# by plan.sh) times a fixed CPU workload, compares it with LAB_SPEED_REF, the time the same
# workload takes in an idle guest, and exports LAB_WAIT_FACTOR = ceil(measured / reference),
# at least 1 and at most LAB_WAIT_CAP; every fixed wait in the plans is `scaled`.

now() { cut -d' ' -f1 /proc/uptime; }

LAB_WAIT_CAP=${LAB_WAIT_CAP:-8}
# Seconds the workload below takes in an idle TCG guest of the 2-core build machine (estimate: see
# docs/lab.md, "Time"; the plan prints each boot's measurement, so a quiet run's figure can replace it).
LAB_SPEED_REF=${LAB_SPEED_REF:-0.5}
# The workload: a pure-Python loop timed inside the interpreter (no start-up, no 9p reads), since
# what the plans wait for is mostly Python (gdrdiag, pytest) running in the guest.
LAB_SPEED_WORK='import time
t = time.perf_counter()
s = 0
for i in range(400000):
    s += i * i
print(f"{time.perf_counter() - t:.3f}")'

# wait_factor MEASURED REFERENCE [CAP]: ceil(MEASURED / REFERENCE) within 1..CAP (1 when either
# is not a positive number).
wait_factor() {
    awk -v m="$1" -v r="$2" -v c="${3:-$LAB_WAIT_CAP}" 'BEGIN {
        if (m !~ /^[0-9]*\.?[0-9]+$/ || r !~ /^[0-9]*\.?[0-9]+$/ || r + 0 <= 0) { print 1; exit }
        f = m / r; n = int(f); if (n < f) n++
        if (n < 1) n = 1
        if (n > c + 0) n = c + 0
        print n
    }'
}

# lab_speed: measure once per boot (LAB_WAIT_FACTOR given in the environment is kept), export the
# factor, and say it in the log and $R/speed.txt (run.sh prints it) and in $R/wait-factor (the
# host-side tests scale their bounds by it).
lab_speed() {
    if [ -z "${LAB_WAIT_FACTOR:-}" ]; then
        _m=$(python3 -c "$LAB_SPEED_WORK" 2>/dev/null) || _m=unmeasured
        LAB_WAIT_FACTOR=$(wait_factor "$_m" "$LAB_SPEED_REF")
        _how="CPU workload $_m s, $LAB_SPEED_REF s on an idle machine"
    else
        _how="LAB_WAIT_FACTOR given"
    fi
    export LAB_WAIT_FACTOR LAB_WAIT_CAP
    echo "$LAB_WAIT_FACTOR" >"$R/wait-factor"
    echo "speed: waits scaled x$LAB_WAIT_FACTOR ($_how; cap $LAB_WAIT_CAP)" | tee "$R/speed.txt"
}

scaled() { echo $(($1 * ${LAB_WAIT_FACTOR:-1})); }

# What a timed-out command says (besides coreutils timeout's exit 124): gdrdiag's "no ... within
# N s" and "no RDMA completion for N s with ...", and "timed out". A plan may widen it in
# RETRY_WORDS (the two-host server: its client's retry closes the first connection).
TIMEOUT_WORDS='within [0-9.]+ s|completion for [0-9.]+ s|timed out'

# _timed_out MARKER RC: one line saying why when the step failed by a timeout (else status 1),
# from what the step wrote under $R since MARKER (a file in $R, so both times are the share's).
_timed_out() {
    [ "$2" = 124 ] && { echo "exit 124 (timeout)"; return 0; }
    _line=$(find "$R" -type f -newer "$1" \( -name '*.err' -o -name '*.out' -o -name '*.txt' \) \
        -exec grep -h -m1 -E "${RETRY_WORDS:-$TIMEOUT_WORDS}" {} + 2>/dev/null | head -1)
    [ -n "$_line" ] && echo "$_line"
}

_run_step() {
    _name=$1
    shift
    _t0=$(now)
    echo "== step $_name: $*"
    "$@"
    _rc=$?
    _t1=$(now)
    _secs=$(awk -v a="$_t0" -v b="$_t1" 'BEGIN { printf "%.1f", b - a }')
    printf '%s\t%s\t%s\n' "$_name" "$_secs" "$_rc" >>"$R/steps.tsv"
    echo "== step $_name: ${_secs} s (rc $_rc)"
    return $_rc
}

step() {
    _mark=$R/.step-mark
    touch "$_mark"
    _run_step "$@" && return 0
    _rc=$?
    if _why=$(_timed_out "$_mark" "$_rc"); then
        echo "retrying step $1 once: $_why" | tee -a "$R/retried-steps"
        sed -i "\$d" "$R/steps.tsv" # the retry's line stands for the step
        _run_step "$@" && return 0
    fi
    echo "$1" >>"$R/failed-steps"
    return 1
}

try() {
    _run_step "$@"
}

# clock_facts: what guest time is made of, to $R/clock.txt: the kernel's clocksource, its TSC
# calibration, the "cpu MHz" perftest reads from /proc/cpuinfo (it checks its own TSC sample
# against it), and the kernel command line (icount runs say so in the run's notes, not here).
clock_facts() {
    {
        echo "clocksource: $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource)"
        echo "available: $(cat /sys/devices/system/clocksource/clocksource0/available_clocksource)"
        grep -m2 'cpu MHz\|model name' /proc/cpuinfo
        dmesg | grep -i -E 'tsc|clocksource' | head -20
        echo "cmdline: $(cat /proc/cmdline)"
        echo "env: ROUNDS=${ROUNDS:-} SIZES=${SIZES:-} POST_LISTS=${POST_LISTS:-}"
    } >"$R/clock.txt" 2>&1
    cat "$R/clock.txt"
}

# rxe_setup: Soft-RoCE device rxe0 on the first NIC (10.0.2.15/24), waits for its port to be ACTIVE.
rxe_setup() {
    _nic=$(ls /sys/class/net | grep -v '^lo$' | head -1)
    ip link set "$_nic" up && ip addr add 10.0.2.15/24 dev "$_nic" &&
        modprobe rdma_rxe && rdma link add rxe0 type rxe netdev "$_nic" || return 1
    # The port goes ACTIVE once the netdev has carrier; GIDs appear with the addresses.
    for _ in $(seq "$(scaled 50)"); do
        grep -q ACTIVE /sys/class/infiniband/rxe0/ports/1/state 2>/dev/null && return 0
        sleep 0.2
    done
    echo "rxe0 port never went ACTIVE: $(cat /sys/class/infiniband/rxe0/ports/1/state)"
    return 1
}

# rdma_tests: the provider contract and the mr-bench pipeline on the real stack (pytest -m rdma).
rdma_tests() {
    cd /tmp && python3 -m pytest -m rdma -p no:cacheprovider -q -rA --rootdir /src \
        --junitxml="$R/pytest-rdma.xml" /src/tests >"$R/pytest-rdma.txt" 2>&1
    _r=$?
    tail -30 "$R/pytest-rdma.txt"
    return $_r
}
