# Shared helpers of the lab scripts (sourced, not run).
#
# step NAME CMD...   runs CMD, logs "step NAME: <seconds> s (rc N)" to stderr and to $LAB_STEPS
# (a TSV file: name, seconds, rc) so every run leaves a record of where its wall time went.

lab_log() { printf '[lab %s] %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }

step() {
    local name=$1
    shift
    local t0 t1 rc
    t0=$(date +%s.%N)
    lab_log "step $name: start"
    set +e
    "$@"
    rc=$?
    set -e
    t1=$(date +%s.%N)
    local secs
    secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')
    lab_log "step $name: ${secs} s (rc $rc)"
    if [ -n "${LAB_STEPS:-}" ]; then printf '%s\t%s\t%s\n' "$name" "$secs" "$rc" >>"$LAB_STEPS"; fi
    return $rc
}

# Host packages the lab needs; installed by the script itself because CI starts on a fresh machine.
lab_host_packages() {
    local missing=()
    command -v qemu-system-x86_64 >/dev/null || missing+=(qemu-system-x86)
    command -v debootstrap >/dev/null || missing+=(debootstrap)
    command -v mkfs.ext4 >/dev/null || missing+=(e2fsprogs)
    [ -f /etc/ssl/certs/ca-certificates.crt ] || missing+=(ca-certificates)
    if [ ${#missing[@]} -gt 0 ]; then
        lab_log "installing host packages: ${missing[*]}"
        export DEBIAN_FRONTEND=noninteractive
        apt-get update -qq
        apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
    fi
}
