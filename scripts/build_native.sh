#!/usr/bin/env bash
# Build gdrdiag's C loops (native/*.c) into build/native/*.so with the system C compiler.
#
#   native/verbs_loop.c -> build/native/libgdr_verbs.so   (needs libibverbs headers: libibverbs-dev)
#   native/copy_loop.c  -> build/native/libgdr_copy.so    (needs no CUDA: libcuda is dlopen'ed at run time)
#
# Never fails set-up: a library that cannot be built is left absent, and one line says why.
# That line is also written to build/native/<lib>.status, which gdrdiag shows as the reason it
# uses the Python path instead (gdrdiag/hw/verbs_native.py, gdrdiag/hw/copy_native.py).
# CC selects the compiler (default: cc); GDRDIAG_NATIVE_OUT the output folder (default build/native,
# where gdrdiag looks; GDRDIAG_NATIVE_DIR points gdrdiag elsewhere). Warnings are errors.
set -uo pipefail
cd "$(dirname "$0")/.."

CC="${CC:-cc}"
OUT="${GDRDIAG_NATIVE_OUT:-build/native}"
CFLAGS=(-O2 -g -std=gnu11 -fPIC -shared -Wall -Wextra -Werror -fvisibility=default)
mkdir -p "$OUT"

build() {  # name source status-file extra-libs...
    local lib="$1" src="$2"
    shift 2
    local so="$OUT/$lib.so" status="$OUT/$lib.status" log="$OUT/$lib.log"
    rm -f "$so" "$status"
    if ! command -v "$CC" >/dev/null 2>&1; then
        echo "no C compiler ($CC not found; install gcc)" >"$status"
    elif ! "$CC" "${CFLAGS[@]}" -o "$so.tmp" "$src" "$@" >"$log" 2>&1; then
        local first
        first=$(grep -m1 -E "error|fatal" "$log" || head -n1 "$log")
        case "$first" in
            *infiniband/verbs.h*) echo "libibverbs headers missing (install libibverbs-dev): $first" >"$status" ;;
            *) echo "compiling $src failed: $first (full log: $log)" >"$status" ;;
        esac
        rm -f "$so.tmp"
    else
        mv "$so.tmp" "$so"
        echo "native: built $so"
        return 0
    fi
    echo "native: $lib NOT built: $(cat "$status"); gdrdiag uses the Python path instead"
}

build libgdr_verbs native/verbs_loop.c -libverbs
build libgdr_copy native/copy_loop.c -ldl
exit 0
