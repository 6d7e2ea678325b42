#!/usr/bin/env bash
# Build the lab's Debian 12 guest image once, cached outside the repository.
#
# Usage: scripts/lab/image.sh        prints the cache directory holding vmlinuz, initrd.img, rootfs.img
#
# The cache key is a hash of packages.txt, requirements.txt, guest-init.sh and this script, so
# a later run on the same machine reuses the image and any change to what goes into it builds a
# new one. Cache root: $LAB_CACHE (default /var/cache/gdrdiag-lab). The image is built in a
# temporary directory and moved into place only when complete, so an interrupted build never
# leaves a half image behind that a later run would trust.
#
# Two things the obvious way gets wrong (found building the prototype):
#  - pip inside the chroot inherits the host's pip configuration and environment (find-links,
#    proxies); it works only from a clean environment (env -i) with PIP_CERT pointing at a copy
#    of the host's CA bundle (the host may reach PyPI through a TLS-intercepting proxy).
#  - the guest boots straight from the Debian kernel and initrd (qemu -kernel/-initrd), so they
#    are copied out of the chroot next to the root filesystem image.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lib.sh
. "$here/lib.sh"

[ "$(id -u)" = 0 ] || { echo "image.sh: needs root (debootstrap, chroot)" >&2; exit 2; }
# stdout carries exactly one line, the image directory (callers capture it): everything the
# tools print goes to stderr (mkfs.ext4 says "Creating regular file ..." on stdout even with -q).
exec 3>&1 1>&2
lab_host_packages

cache_root=${LAB_CACHE:-/var/cache/gdrdiag-lab}
key=$(cat "$here/packages.txt" "$here/requirements.txt" "$here/guest-init.sh" "$here/image.sh" \
    | sha256sum | cut -c1-16)
dest="$cache_root/$key"
if [ -f "$dest/complete" ]; then
    lab_log "image cached: $dest"
    echo "$dest" >&3
    exit 0
fi

mkdir -p "$cache_root"
work=$(mktemp -d "$cache_root/build.XXXXXX")
root="$work/root"
cleanup() {
    for m in proc sys dev; do umount -l "$root/$m" 2>/dev/null || true; done
    rm -rf "$work"
}
trap cleanup EXIT

pkgs=$(grep -v '^\s*#' "$here/packages.txt" | grep -v '^\s*$' | paste -sd, -)
mirror=${LAB_MIRROR:-http://deb.debian.org/debian}
step debootstrap debootstrap --variant=minbase --include="$pkgs" bookworm "$root" "$mirror" >"$work/debootstrap.log" 2>&1 \
    || { tail -30 "$work/debootstrap.log" >&2; exit 1; }

pip_install() {
    cp /etc/ssl/certs/ca-certificates.crt "$root/root/host-ca.pem"
    cp /etc/resolv.conf "$root/etc/resolv.conf"
    grep -v '^\s*#' "$here/requirements.txt" | grep -v '^\s*$' >"$root/root/requirements.txt"
    mount -t proc proc "$root/proc"
    chroot "$root" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root PIP_CERT=/root/host-ca.pem \
        PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_DEFAULT_TIMEOUT=180 \
        python3 -m pip install -q --no-cache-dir --no-warn-script-location --break-system-packages \
        -r /root/requirements.txt
    local rc=$?
    umount "$root/proc"
    rm -f "$root/root/host-ca.pem"
    return $rc
}
step pip-in-chroot pip_install

configure() {
    install -m 0755 "$here/guest-init.sh" "$root/sbin/lab-init"
    echo lab >"$root/etc/hostname"
    mkdir -p "$root/src" "$root/results"
    cp "$root"/boot/vmlinuz-* "$work/vmlinuz"
    cp "$root"/boot/initrd.img-* "$work/initrd.img"
    # apt lists and caches are not needed in the guest and only make the image bigger.
    rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/*
}
step configure configure

make_fs() {
    local mb
    mb=$(du -sm "$root" | cut -f1)
    mb=$((mb + mb / 4 + 256))
    mkfs.ext4 -q -L labroot -d "$root" "$work/rootfs.img" "${mb}M"
}
step mkfs make_fs

rm -rf "$root"
mkdir -p "$dest"
mv "$work/vmlinuz" "$work/initrd.img" "$work/rootfs.img" "$dest/"
date -u +%FT%TZ >"$dest/complete"
lab_log "image built: $dest"
echo "$dest" >&3
