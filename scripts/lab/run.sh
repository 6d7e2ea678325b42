#!/usr/bin/env bash
# The QEMU lab: boot the Debian 12 guest image, run one plan inside, return the plan's exit status.
#
# Usage: scripts/lab/run.sh PLAN [PLAN...]     PLAN: verbs | pcie | twohost | rdma | native | smoke
#
# Per plan: build (or reuse) the image (image.sh), boot it with qemu-system-x86_64 straight from
# the Debian kernel and initrd, root image read-only (snapshot=on: the guest's writes go to a
# throw-away overlay), this source tree shared read-only at /src and a results folder read-write
# at /results over 9p; guest-init.sh (PID 1) runs scripts/lab/guest/plan.sh PLAN and powers off.
#
# Results: $LAB_OUT (default out/lab)/PLAN/: console.log (serial console), guest.log, exit-status,
# and whatever the plan wrote; $LAB_OUT/steps.tsv has every step's wall time.
#
# Exit status: the first failing plan's status; 124 when a guest hit its time limit (killed,
# reported, never left running); 77 when QEMU cannot run on this machine (callers skip then).
#
# Environment: LAB_OUT, LAB_SRC (tree shared as /src), LAB_TIMEOUT (s per boot in all, default 5400)
# and LAB_STALL (s without a write to the boot's results, default 900): the hang guards, see
# watch_progress; LAB_ACCEL (auto|kvm|tcg, default auto: KVM
# only when a probe boot proves it works; this project's build machines have a paravirtual
# /dev/kvm that does not boot stock kernels), LAB_CPUS (default 2), LAB_MEM (MiB, default 2048),
# LAB_ICOUNT (TCG only; unset = off: a shift N in 0..10 boots with `-icount shift=N,sleep=off`,
# guest time derived from the instructions executed, 2^N ns each, so a timing plan's numbers do
# not depend on the host's load; forces single-threaded TCG; docs/lab.md "Deterministic time"),
# LAB_GUEST_ENV (NAME=VALUE words put in the guest plan's environment through the kernel command
# line, e.g. "ROUNDS=5"; the kernel hands parameters it does not know to init as environment).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
# The tree shared into the guest as /src (default: this one; LAB_SRC runs an older checkout,
# which needs scripts/lab/guest/ copied in).
src=${LAB_SRC:-$repo}
# shellcheck source=lib.sh
. "$here/lib.sh"

[ $# -ge 1 ] || { echo "usage: scripts/lab/run.sh PLAN [PLAN...] (verbs | pcie | twohost | rdma | native | smoke)" >&2; exit 2; }
for plan in "$@"; do
    case $plan in verbs | pcie | twohost | rdma | native | smoke) ;; *) echo "run.sh: unknown plan '$plan' (verbs | pcie | twohost | rdma | native | smoke)" >&2; exit 2 ;; esac
done
[ "$(id -u)" = 0 ] || { echo "run.sh: needs root (apt-get, debootstrap, chroot)" >&2; exit 2; }

# Never leave a guest behind: on any exit (Ctrl-C included) stop the boots still running.
# Each boot runs under `timeout`, which passes SIGTERM on to its QEMU.
# Boots record their `timeout` PIDs in $out/.boot-pids (a two-host boot runs in a subshell,
# which is not this shell's job).
cleanup_boots() {
    local p
    for p in $(jobs -p) $(cat "$out/.boot-pids" 2>/dev/null); do kill "$p" 2>/dev/null || true; done
    rm -f "$out/.boot-pids"
}
trap cleanup_boots EXIT
trap 'exit 130' INT TERM

out=${LAB_OUT:-$repo/out/lab}
mkdir -p "$out"
export LAB_STEPS="$out/steps.tsv"
: >"$LAB_STEPS"
t_start=$(date +%s)

if ! step host-packages lab_host_packages; then
    echo "run.sh: cannot install QEMU on this machine; lab skipped" >&2
    exit 77
fi
image=$(step image "$here/image.sh")

# -- accelerator --------------------------------------------------------------------------------
# A KVM boot is only trusted after a probe guest reached user space (lab-init's first line on the
# console); the result is cached per image (the probe costs one short boot).
probe_kvm() {
    local res="$out/kvm-probe" log
    [ -r /dev/kvm ] && [ -w /dev/kvm ] || return 1
    mkdir -p "$res"
    log="$res/console.log"
    timeout --kill-after=5 40 qemu-system-x86_64 -accel kvm -cpu host -m 1024 -smp 1 -nodefaults \
        -display none -no-reboot -serial "file:$log" \
        -kernel "$image/vmlinuz" -initrd "$image/initrd.img" \
        -drive "file=$image/rootfs.img,format=raw,if=virtio,snapshot=on" \
        -append "root=/dev/vda ro console=ttyS0 panic=-1 init=/sbin/lab-init lab.plan=none" \
        >/dev/null 2>&1 || true
    # lab-init prints this line from user space before anything else (no shares needed).
    grep -q "lab-init: kernel" "$log" 2>/dev/null
}
accel=${LAB_ACCEL:-auto}
if [ "$accel" = auto ]; then
    if [ -f "$image/accel" ]; then
        accel=$(cat "$image/accel")
    else
        if step kvm-probe probe_kvm; then accel=kvm; else accel=tcg; fi
        echo "$accel" >"$image/accel" 2>/dev/null || true
    fi
fi
icount=${LAB_ICOUNT:-}
icount=${icount#shift=}
case $icount in
    '' | [0-9] | 10) ;;
    # shift=auto lets QEMU tune the shift to follow the host's clock, which is the very
    # dependence on host load this mode exists to remove.
    *) echo "run.sh: LAB_ICOUNT must be a shift 0..10 (got '${LAB_ICOUNT}'; 'auto' follows host time)" >&2; exit 2 ;;
esac
if [ -n "$icount" ] && [ "$accel" = kvm ]; then
    echo "run.sh: LAB_ICOUNT needs TCG (LAB_ACCEL=tcg); KVM runs guest code on the host CPU" >&2
    exit 2
fi
case $accel in
    kvm) accel_args=(-accel kvm -cpu host) ;;
    # TCG: "max" gives the guest every CPU feature QEMU can emulate; one thread per vCPU.
    *) accel=tcg; accel_args=(-accel tcg,thread=multi -cpu max) ;;
esac
# icount (QEMU's docs, "-icount"): the virtual clock advances 2^shift ns per guest instruction and,
# with sleep=off, jumps straight to the next timer when every vCPU is idle, so guest time measures
# the work done, not the host's wall clock. It needs single-threaded (round-robin) TCG. The guest's
# TSC then ticks with the virtual clock too (QEMU's cpu_get_ticks() returns the icount clock).
if [ -n "$icount" ]; then
    accel_args=(-accel tcg,thread=single -cpu max -icount "shift=$icount,sleep=off")
    # One vCPU unless LAB_CPUS says otherwise: with two, QEMU 7.2's round-robin icount stalled
    # the guest kernel at "x86: Booting SMP configuration" for minutes (2026-11-26), and one
    # vCPU runs the client, the server and rxe's kernel work in one deterministic order.
    export LAB_CPUS=${LAB_CPUS:-1}
    accel="tcg, icount shift=$icount, sleep=off"
fi
guest_env=""
for kv in ${LAB_GUEST_ENV:-}; do
    # No dots (the kernel keeps dotted parameters for modules) and nothing the shell would split.
    [[ $kv =~ ^[A-Z_][A-Z0-9_]*=[A-Za-z0-9_,:/+-]*$ ]] || {
        echo "run.sh: LAB_GUEST_ENV word '$kv' is not NAME=VALUE (upper-case name; value without dots or spaces)" >&2
        exit 2
    }
    guest_env+=" $kv"
done
lab_log "accelerator: $accel${guest_env:+; guest environment:$guest_env}"

# -- machines ------------------------------------------------------------------------------------
# verbs: the default pc machine, one virtio NIC (rxe0 sits on it). User networking gives the NIC
# a carrier; nothing leaves the guest (restrict=on).
verbs_machine() {
    machine_args=(-machine pc -nic "user,model=virtio-net-pci,restrict=on")
}

# pcie: q35 with an Intel vIOMMU, two root ports, a switch (upstream + two downstream ports), an
# SR-IOV capable NVMe (QEMU 7.2's nvme: sriov_max_vfs; VFs are enabled in the guest through
# sysfs) behind a downstream port, and a NIC (e1000e) behind the other one.
# QEMU 7.2 has no SR-IOV NIC model (igb arrived in 8.0, not in Debian 12), so the SR-IOV
# function is the NVMe controller. The virtio disk carrying the root image sits on the root bus.
pcie_machine() {
    machine_args=(
        -machine q35,kernel-irqchip=split
        -device intel-iommu,intremap=on,caching-mode=on
        -device pcie-root-port,id=rp1,chassis=1,slot=1,bus=pcie.0,addr=0x10
        -device pcie-root-port,id=rp2,chassis=2,slot=2,bus=pcie.0,addr=0x11
        -device x3130-upstream,id=up1,bus=rp1
        -device xio3130-downstream,id=dp1,bus=up1,chassis=3,slot=0
        -device xio3130-downstream,id=dp2,bus=up1,chassis=4,slot=1
        -device nvme-subsys,id=subsys0,nqn=gdrdiag-lab
        -device "nvme,id=nvme0,serial=lab0,subsys=subsys0,bus=dp1,sriov_max_vfs=2,sriov_vq_flexible=4,sriov_vi_flexible=2,max_ioqpairs=6,msix_qsize=4"
        -device e1000e,netdev=n0,bus=dp2,mac=52:54:00:12:34:60
        -netdev user,id=n0,restrict=on
        -device virtio-net-pci,netdev=n1,bus=rp2
        -netdev user,id=n1,restrict=on
    )
}

# twohost: each guest's virtio NIC on one end of a QEMU socket netdev (a wire between the two
# guests; the server guest listens on a local TCP port, the client guest connects to it).
wire_port=$((20000 + $$ % 20000))
twohost_machine() {
    local end=listen
    [ "$1" = twohost-client ] && end=connect
    machine_args=(-machine pc -netdev "socket,id=w,$end=127.0.0.1:$wire_port"
        -device "virtio-net-pci,netdev=w,mac=52:54:00:00:09:0$([ "$end" = listen ] && echo 1 || echo 2)")
}

# The hang guard watches progress, not the clock alone. Under TCG a loaded host slows every guest
# step: beside two busy loops on the 2-core build machine the verbs plan ran every step to success
# but past a fixed 1800 s guard (docs/lab.md, "Time"), and a short CPU loop timed on the host before
# the boot did not see that load. A guest is stopped when nothing under its results folder (its
# console, its log, its steps' outputs, the heartbeat guest/plan.sh writes every 30 s) was written
# for LAB_STALL s (default 900: the guest's kernel or QEMU stopped), or at LAB_TIMEOUT s in all
# (default 5400); a step that hangs inside a live guest is ended by its own scaled timeout there.

# newest_write RES: the epoch second of the latest write to any file under RES (empty: none yet)
newest_write() {
    find "$1" -type f -printf '%T@\n' 2>/dev/null | sort -n | tail -1 | cut -d. -f1
}

# watch_progress TPID RES STALL: stop the boot TPID when nothing under RES was written for STALL s;
# RES/.stalled then holds STALL.
watch_progress() {
    local tpid=$1 res=$2 stall=$3 started last
    started=$(date +%s)
    while kill -0 "$tpid" 2>/dev/null; do
        sleep 5
        last=$(newest_write "$res")
        if [ $(( $(date +%s) - ${last:-$started} )) -ge "$stall" ]; then
            echo "$stall" >"$res/.stalled"
            kill -TERM "$tpid" 2>/dev/null
            return 0
        fi
    done
}

boot() {
    local plan=$1 res="$out/$1"
    rm -rf "$res"
    mkdir -p "$res"
    case $plan in pcie) pcie_machine ;; twohost-*) twohost_machine "$plan" ;; *) verbs_machine ;; esac
    local limit=${LAB_TIMEOUT:-5400} stall=${LAB_STALL:-900}
    lab_log "boot $plan: limit ${limit} s, or ${stall} s without a write to $res"
    set +e
    timeout --kill-after=10 "$limit" qemu-system-x86_64 "${accel_args[@]}" \
        -smp "${LAB_CPUS:-2}" -m "${LAB_MEM:-2048}" -nodefaults -display none -no-reboot \
        -serial "file:$res/console.log" \
        -kernel "$image/vmlinuz" -initrd "$image/initrd.img" \
        -append "root=/dev/vda ro console=ttyS0 panic=-1 init=/sbin/lab-init lab.plan=$plan net.ifnames=1 intel_iommu=on$guest_env" \
        -drive "file=$image/rootfs.img,format=raw,if=virtio,snapshot=on" \
        -virtfs "local,path=$src,mount_tag=src,security_model=none,readonly=on" \
        -virtfs "local,path=$res,mount_tag=results,security_model=none" \
        "${machine_args[@]}" >"$res/qemu.log" 2>&1 &
    # In the background and waited for, so a signal to this script runs its traps at once
    # (bash defers traps while a foreground child runs) and cleanup_boots stops the guest.
    local tpid=$!
    echo "$tpid" >>"$out/.boot-pids"
    watch_progress "$tpid" "$res" "$stall" &
    local wpid=$!
    wait $tpid
    local qrc=$?
    kill "$wpid" 2>/dev/null
    wait "$wpid" 2>/dev/null
    set -e
    # The guest's measured speed and the steps it retried after a timeout (guest/lib.sh).
    [ -f "$res/speed.txt" ] && lab_log "boot $plan: $(cat "$res/speed.txt")"
    [ -s "$res/retried-steps" ] && sed "s/^/boot $plan: /" "$res/retried-steps" | while read -r l; do lab_log "$l"; done
    if [ -f "$res/.stalled" ]; then
        lab_log "boot $plan: HUNG, stopped after $(cat "$res/.stalled") s without progress (console tail follows)"
        tail -20 "$res/console.log" >&2 || true
        return 124
    fi
    if [ $qrc = 124 ] || [ $qrc = 137 ]; then
        lab_log "boot $plan: HUNG, killed at the ${limit} s limit (console tail follows)"
        tail -20 "$res/console.log" >&2 || true
        return 124
    fi
    if [ $qrc != 0 ]; then
        lab_log "boot $plan: qemu exited $qrc"
        cat "$res/qemu.log" >&2
        return "$qrc"
    fi
    if [ ! -f "$res/exit-status" ]; then
        lab_log "boot $plan: the guest wrote no exit status (console tail follows)"
        tail -30 "$res/console.log" >&2 || true
        return 99
    fi
    return "$(cat "$res/exit-status")"
}

# Both guests of the two-host plan at once (one vCPU each); the client's boot waits a moment so
# the server's end of the wire is listening.
boot_twohost() {
    local rc_s rc_c
    LAB_CPUS=1 boot twohost-server &
    local pid=$!
    sleep 2
    set +e
    LAB_CPUS=1 boot twohost-client
    rc_c=$?
    wait $pid
    rc_s=$?
    set -e
    for p in twohost-server twohost-client; do
        [ -f "$out/$p/steps.tsv" ] && sed "s/^/$p:/" "$out/$p/steps.tsv" >>"$LAB_STEPS"
    done
    lab_log "twohost: server exit $rc_s, client exit $rc_c"
    [ $rc_s = 0 ] && [ $rc_c = 0 ]
}

# The native plan measures the C provider: the guest has no compiler, so the library comes from
# the tree's build/native (what set-up builds). Build it here when it is missing (a fresh clone).
for plan in "$@"; do
    if [ "$plan" = native ] && [ ! -f "$src/build/native/libgdr_verbs.so" ]; then
        step build-native bash "$src/scripts/build_native.sh" || true
    fi
done

status=0
for plan in "$@"; do
    if [ "$plan" = twohost ]; then
        if step boot-twohost boot_twohost; then lab_log "plan twohost: PASSED"; else
            rc=$?
            lab_log "plan twohost: FAILED (exit $rc); see $out/twohost-*/guest.log"
            [ $status != 0 ] || status=$rc
        fi
        continue
    fi
    if step "boot-$plan" boot "$plan"; then
        lab_log "plan $plan: PASSED"
    else
        rc=$?
        lab_log "plan $plan: FAILED (exit $rc); see $out/$plan/guest.log"
        [ $status != 0 ] || status=$rc
    fi
    # Per-step times the guest recorded (it writes the same TSV format).
    [ -f "$out/$plan/steps.tsv" ] && sed "s/^/$plan:/" "$out/$plan/steps.tsv" >>"$LAB_STEPS"
done
lab_log "lab total: $(($(date +%s) - t_start)) s; steps in $LAB_STEPS"
column -t -s $'\t' "$LAB_STEPS" >&2 || cat "$LAB_STEPS" >&2
exit $status
