# Helpers of the guest plans (sourced; POSIX sh: the guest has no bash guarantees in PATH order).
#
# step NAME CMD...      run CMD, record "NAME<TAB>seconds<TAB>rc" in $R/steps.tsv; a failing step
#                       is also appended to $R/failed-steps (the plan fails at the end, after
#                       every step ran, so one failure does not hide the others).
# try NAME CMD...       the same, but a failure is only recorded (expected-failure steps).
# now                   seconds since boot, with centiseconds.

now() { cut -d' ' -f1 /proc/uptime; }

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
    _run_step "$@" || { echo "$1" >>"$R/failed-steps"; return 1; }
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
    for _ in $(seq 50); do
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
