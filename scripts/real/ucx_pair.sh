#!/usr/bin/env bash
# ucx_pair.sh PORT ARGS...: ucx_perftest's server and its client on this host, in one shell, as a
# user runs them: `ucx_perftest ARGS & ucx_perftest localhost ARGS`. Both print to this script's
# stdout, so the output holds the server's test box (API, test, memory types, message size) and
# the client's results table, interleaved as a terminal shows them.
#
# LIBUCX_DIR: the unpacked libucx wheel (its libucx/ folder); the binaries and libraries come from there.
set -u
port=$1; shift
bin=$LIBUCX_DIR/libucx/bin/ucx_perftest
export LD_LIBRARY_PATH=$LIBUCX_DIR/libucx/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
"$bin" -p "$port" "$@" &
server=$!
# ucx_perftest's client does not retry a refused connect (src/tools/perf/perftest.c, setup_sock_rte)
sleep 2
"$bin" localhost -p "$port" "$@"
rc=$?
wait "$server"; src=$?
[ "$rc" = 0 ] && rc=$src
exit "$rc"
