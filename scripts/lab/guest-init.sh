#!/bin/sh
# PID 1 of the lab guest (installed in the image as /sbin/lab-init; the kernel runs it via init=).
#
# It does only what must be in the image: mount the kernel filesystems and the two 9p shares
# (source tree read-only at /src, results at /results), run the plan named by lab.plan= on the
# kernel command line from the *shared* tree (so changing a plan never rebuilds the image), write
# the plan's exit status to /results/exit-status, and power the VM off. No systemd and no udev:
# devtmpfs creates /dev/infiniband/uverbs* by itself, which is all libibverbs needs, and skipping
# them is what brings a TCG boot to its test in seconds instead of minutes.
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/tmp LANG=C.UTF-8

mountpoint -q /proc || mount -t proc proc /proc
mountpoint -q /sys || mount -t sysfs sysfs /sys
mountpoint -q /dev || mount -t devtmpfs devtmpfs /dev
mkdir -p /dev/pts && mount -t devpts devpts /dev/pts 2>/dev/null
for d in /tmp /run /var/tmp /var/log; do mount -t tmpfs tmpfs "$d"; done
hostname lab
ip link set lo up

modprobe -q 9pnet_virtio; modprobe -q 9p
mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144,ro src /src
mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144 results /results

plan=$(sed -n 's/.*lab\.plan=\([^ ]*\).*/\1/p' /proc/cmdline)
echo "lab-init: kernel $(uname -r), plan '${plan}', up $(cut -d' ' -f1 /proc/uptime) s" >/dev/console
if [ -f /src/scripts/lab/guest/plan.sh ]; then
    ( cd /tmp && sh /src/scripts/lab/guest/plan.sh "$plan"; echo $? >/tmp/plan-rc ) 2>&1 \
        | tee /results/guest.log >/dev/console
    rc=$(cat /tmp/plan-rc 2>/dev/null || echo 99)
else
    echo "lab-init: /src/scripts/lab/guest/plan.sh not found (9p share missing?)" >/dev/console
    rc=98
fi
echo "$rc" >/results/exit-status
echo "lab-init: plan '${plan}' exit $rc, up $(cut -d' ' -f1 /proc/uptime) s; powering off" >/dev/console
sync
echo o >/proc/sysrq-trigger
sleep 30
