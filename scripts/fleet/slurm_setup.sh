#!/usr/bin/env bash
# Install Debian's Slurm (slurmctld, slurmd, munge) and start a one-node cluster on localhost
# with several task slots, for the fleet test (tests/fleet/test_slurm.py). Idempotent: a second
# run restarts the daemons with the same configuration.
#
# The node declares GDRDIAG_SLURM_CPUS task slots (default 8) whatever the real core count is
# (SlurmdParameters=config_overrides), so one host can run a batch script with several tasks,
# each playing one "node" of a fleet. Needs root (sudo when not root).
set -euo pipefail
CPUS="${GDRDIAG_SLURM_CPUS:-8}"
SUDO=""
if [ "$(id -u)" != "0" ]; then SUDO="sudo"; fi

if ! command -v slurmctld >/dev/null || ! command -v slurmd >/dev/null || ! command -v munged >/dev/null; then
    export DEBIAN_FRONTEND=noninteractive
    $SUDO apt-get update -qq
    $SUDO apt-get install -y -qq --no-install-recommends slurmctld slurmd slurm-client munge >/dev/null
fi

# munge: a key, then the daemon (no systemd in containers: start it directly).
if [ ! -s /etc/munge/munge.key ]; then
    $SUDO sh -c 'dd if=/dev/urandom bs=1 count=1024 of=/etc/munge/munge.key 2>/dev/null'
fi
$SUDO chown munge:munge /etc/munge/munge.key
$SUDO chmod 400 /etc/munge/munge.key
$SUDO mkdir -p /run/munge /var/log/munge /var/lib/munge
$SUDO chown munge:munge /run/munge /var/log/munge /var/lib/munge
if ! munge -n >/dev/null 2>&1; then
    if [ -z "$SUDO" ]; then runuser -u munge -- /usr/sbin/munged --force; else sudo -u munge /usr/sbin/munged --force; fi
    sleep 1
fi
munge -n | unmunge >/dev/null

NODE="$(hostname -s)"
$SUDO mkdir -p /etc/slurm /var/spool/slurmctld /var/spool/slurmd /var/log/slurm
$SUDO chown slurm:slurm /var/spool/slurmctld /var/log/slurm 2>/dev/null || true
$SUDO tee /etc/slurm/slurm.conf >/dev/null <<CONF
# gdrdiag fleet test: one node on localhost (scripts/fleet/slurm_setup.sh)
ClusterName=gdrdiag-test
SlurmctldHost=${NODE}(127.0.0.1)
AuthType=auth/munge
CredType=cred/munge
SlurmUser=slurm
SlurmdUser=root
StateSaveLocation=/var/spool/slurmctld
SlurmdSpoolDir=/var/spool/slurmd
SlurmctldLogFile=/var/log/slurm/slurmctld.log
SlurmdLogFile=/var/log/slurm/slurmd.log
SlurmctldPidFile=/run/slurmctld.pid
SlurmdPidFile=/run/slurmd.pid
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
SlurmdParameters=config_overrides
MpiDefault=none
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
NodeName=${NODE} NodeAddr=127.0.0.1 CPUs=${CPUS} State=UNKNOWN
PartitionName=debug Nodes=${NODE} Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES
CONF

# (Re)start both daemons, then wait for the node to be idle.
for pidfile in /run/slurmctld.pid /run/slurmd.pid; do
    if [ -s "$pidfile" ]; then $SUDO kill "$(cat "$pidfile")" 2>/dev/null || true; fi
done
sleep 1
$SUDO /usr/sbin/slurmctld -i
$SUDO /usr/sbin/slurmd
for _ in $(seq 1 60); do
    state="$(sinfo -h -n "$NODE" -o %t 2>/dev/null || true)"
    case "$state" in
        idle*|mix*|alloc*) echo "slurm up: node $NODE, $CPUS task slots ($state)"; exit 0 ;;
    esac
    scontrol update nodename="$NODE" state=resume >/dev/null 2>&1 || true
    sleep 1
done
echo "slurm did not come up; see /var/log/slurm/*.log" >&2
exit 1
