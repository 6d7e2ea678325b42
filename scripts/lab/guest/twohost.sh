#!/bin/sh
# Two-host plan, one side per guest: two QEMU guests whose virtio NICs are joined by one
# QEMU socket netdev (a point-to-point wire), a Soft-RoCE device on each; `mr-bench --server`
# runs in the "server" guest and `mr-bench --connect` in the "client" guest.
#
# Why two guests and not two network namespaces in one: on Linux 6.1 rxe opens its UDP port
# (4791) in the initial namespace only and routes in it (drivers/infiniband/sw/rxe/rxe_net.c,
# rxe_find_route4/6 use init_net), so an rxe device on a veth end inside another namespace
# neither sends nor receives; the verbs plan records that attempt (netns-probe).
. /src/scripts/lab/guest/lib.sh
G=$GDRDIAG
role=$1
SESSIONS="64k ro-on"

setup() {
    _nic=$(ls /sys/class/net | grep -v '^lo$' | head -1)
    _ip=10.9.0.1
    [ "$role" = client ] && _ip=10.9.0.2
    ip link set "$_nic" up && ip addr add "$_ip/24" dev "$_nic" &&
        modprobe rdma_rxe && rdma link add rxe0 type rxe netdev "$_nic" || return 1
    for _ in $(seq "$(scaled 50)"); do
        grep -q ACTIVE /sys/class/infiniband/rxe0/ports/1/state 2>/dev/null && return 0
        sleep 0.2
    done
    return 1
}
resources() { rdma resource show >"$R/resource-$1.txt" 2>&1 && cat "$R/resource-$1.txt"; }
step rxe-setup setup || exit 1
step resource-before resources before

# The ro-on session runs with a shared secret on both sides (mr-bench --secret-file): the
# handshake then crosses the same wire as the QP exchange before anything else.
SECRET=/tmp/lab-secret
printf 'gdrdiag-lab-shared-secret-0001\n' >"$SECRET"; chmod 600 "$SECRET"
secret_for() { [ "$1" = ro-on ] && echo "--secret-file $SECRET"; }

# Each guest measures its own wait factor, and the server refuses a client whose run timeout
# passes its own (--timeout plus 5 s): the server's --timeout is scaled by the cap, so whatever
# the client's factor, its timeout is within the server's.
server_scaled() { echo $(($1 * LAB_WAIT_CAP)); }
server() {
    _n=$1
    # shellcheck disable=SC2046
    $G --json mr-bench --provider pyverbs --memory pageable -d rxe0 --server --bind 0.0.0.0 \
        --accept-timeout "$(scaled 240)" --timeout "$(server_scaled 30)" \
        $(secret_for "$_n") --json-out "$R/two-$_n-server.json" >"$R/two-$_n-server.out" 2>"$R/two-$_n-server.err"
}
# The server guest may still be booting: retry while the connection is refused, up to ~4 min
# on an idle machine (each attempt itself retries a refused connection for its --timeout).
client() {
    _n=$1
    shift
    for _ in $(seq "$(scaled 80)"); do
        # shellcheck disable=SC2046
        $G --json mr-bench --provider pyverbs --memory pageable -d rxe0 --connect 10.9.0.1 --timeout "$(scaled 30)" "$@" \
            $(secret_for "$_n") --json-out "$R/two-$_n-client.json" >"$R/two-$_n-client.out" 2>"$R/two-$_n-client.err"
        _rc=$?
        grep -q -i -E "refused|cannot reach" "$R/two-$_n-client.err" || return $_rc
        sleep 0.5
    done
    return $_rc
}
# A client that timed out and is retried closes the server's connection: the server retries too.
[ "$role" = server ] && RETRY_WORDS="$TIMEOUT_WORDS|closed the connection"
for s in $SESSIONS; do
    case "$role:$s" in
        server:*) step "server-$s" server "$s" ;;
        client:64k) step "client-$s" client "$s" -s 64K -n 300 --repeats 3 ;;
        client:ro-on) step "client-$s" client "$s" -s 64K -n 300 --repeats 3 --relaxed-ordering ;;
    esac
done
step resource-after resources after
exit 0
