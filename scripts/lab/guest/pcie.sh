#!/bin/sh
# PCIe plan: a q35 guest with an Intel vIOMMU, root ports, a PCIe switch, an SR-IOV NVMe (PF + VFs
# enabled here) and a NIC behind the switch. Records what the guest's own tools say (lspci,
# sysfs) next to what gdrdiag collects, for tests/lab/test_pcie_lab.py to compare on the host.
. /src/scripts/lab/guest/lib.sh
G=$GDRDIAG

drivers() { modprobe nvme; modprobe e1000e; modprobe virtio_net; sleep "$(scaled 1)"; }
step drivers drivers

# SR-IOV: every PF with sriov_totalvfs > 0 gets all its VFs. VF drivers are not probed
# (sriov_drivers_autoprobe 0): QEMU's NVMe VFs stay offline until the PF assigns them queues
# with NVMe virtualization management commands, and the PCI view is what this plan is about.
enable_vfs() {
    _n=0
    for d in /sys/bus/pci/devices/*; do
        [ -f "$d/sriov_totalvfs" ] || continue
        _t=$(cat "$d/sriov_totalvfs")
        [ "$_t" -gt 0 ] || continue
        echo 0 >"$d/sriov_drivers_autoprobe"
        echo "$_t" >"$d/sriov_numvfs" || return 1
        echo "$(basename "$d"): $_t VFs enabled"
        _n=$((_n + 1))
    done
    [ $_n -gt 0 ]
}
step sriov-enable enable_vfs

# Soft-RoCE on the NIC behind the switch, so inspect has an RDMA device to place on it.
rxe_on_switch_nic() {
    for n in /sys/class/net/*; do
        [ "$(basename "$(readlink -f "$n/device/driver" 2>/dev/null)")" = e1000e ] || continue
        _nic=$(basename "$n")
        ip link set "$_nic" up && ip addr add 10.0.3.15/24 dev "$_nic" &&
            modprobe rdma_rxe && rdma link add rxe0 type rxe netdev "$_nic" && return 0
    done
    return 1
}
step rxe-on-switch-nic rxe_on_switch_nic

step lspci-vvv sh -c "lspci -D -nn -vvv >$R/lspci-vvv.txt"
step lspci-tv sh -c "lspci -tv >$R/lspci-tv.txt"
step lspci-xxxx sh -c "lspci -D -xxxx >$R/lspci-xxxx.txt"

# The guest's sysfs, read by the shell (not by gdrdiag): one "BDF key value" line per fact.
sysfs_facts() {
    for d in /sys/bus/pci/devices/*; do
        b=$(basename "$d")
        echo "$b path $(readlink -f "$d" | sed 's|^/sys/devices/||')"
        [ -e "$d/iommu_group" ] && echo "$b iommu_group $(basename "$(readlink -f "$d/iommu_group")")"
        [ -e "$d/physfn" ] && echo "$b physfn $(basename "$(readlink -f "$d/physfn")")"
        for f in sriov_totalvfs sriov_numvfs current_link_speed current_link_width max_link_speed max_link_width numa_node; do
            [ -f "$d/$f" ] && echo "$b $f $(cat "$d/$f" 2>/dev/null | tr ' ' '_')"
        done
        for v in "$d"/virtfn*; do [ -e "$v" ] && echo "$b virtfn $(basename "$(readlink -f "$v")")"; done
        [ -e "$d/driver" ] && echo "$b driver $(basename "$(readlink -f "$d/driver")")"
    done
    for g in /sys/kernel/iommu_groups/*; do
        echo "group $(basename "$g") type $(cat "$g/type" 2>/dev/null)"
        for dev in "$g"/devices/*; do echo "group $(basename "$g") device $(basename "$dev")"; done
    done
    echo "rxe0 parent $(cat /sys/class/infiniband/rxe0/parent 2>/dev/null)"
}
sysfs_facts_file() { sysfs_facts >"$R/sysfs-facts.txt"; }
step sysfs-facts sysfs_facts_file

answer() { "$@"; _r=$?; [ $_r -le 1 ]; }
step inspect answer sh -c "$G inspect >$R/inspect.txt 2>$R/inspect.err"
step inspect-json answer sh -c "$G --json inspect >$R/inspect.json 2>$R/inspect-json.err"
step collect sh -c "$G collect -o $R/bundle-pcie.tar.gz >$R/collect.out 2>&1"
exit 0
