#!/usr/bin/env bash
# A real Slurm cluster of one node on this machine: munge, one slurmctld, one slurmd.
# Idempotent: installs slurm-wlm and munge when missing, writes /etc/slurm/slurm.conf for
# this host, starts whatever is not running and waits until the node is idle.
#   bash .ci/slurm-setup.sh          # set up and start
#   bash .ci/slurm-setup.sh --stop   # stop the daemons this script starts
# No accounting database is configured (sacct is unavailable); the dispatcher reads job
# states from scontrol/squeue instead.
set -euo pipefail

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
CONF=/etc/slurm/slurm.conf
STATE=/var/spool/slurmctld
SPOOL=/var/spool/slurmd
LOGDIR=/var/log/slurm

stop() {
    $SUDO pkill -x slurmd 2>/dev/null || true
    $SUDO pkill -x slurmctld 2>/dev/null || true
    for _ in $(seq 1 20); do
        pgrep -x slurmd >/dev/null || pgrep -x slurmctld >/dev/null || break
        sleep 0.5
    done
}
if [ "${1:-}" = "--stop" ]; then stop; exit 0; fi

missing=()
command -v slurmctld >/dev/null 2>&1 || missing+=(slurm-wlm)
command -v munged >/dev/null 2>&1 || missing+=(munge)
if [ "${#missing[@]}" -gt 0 ]; then
    echo "slurm-setup: installing ${missing[*]}"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

host=$(hostname -s)
cpus=$(nproc)
mem_mb=$(( $(awk '/MemTotal/ {print $2}' /proc/meminfo) / 1024 - 1024 ))
want=$(cat <<CONF
# Written by .ci/slurm-setup.sh: one controller and one compute node on $host.
ClusterName=backendbench
SlurmctldHost=$host
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
StateSaveLocation=$STATE
SlurmdSpoolDir=$SPOOL
SlurmctldPidFile=/run/slurmctld.pid
SlurmdPidFile=/run/slurmd.pid
SlurmctldLogFile=$LOGDIR/slurmctld.log
SlurmdLogFile=$LOGDIR/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
ReturnToService=2
MinJobAge=3600
KillWait=5
InactiveLimit=0
MpiDefault=none
NodeName=$host CPUs=$cpus RealMemory=$mem_mb State=UNKNOWN
PartitionName=debug Nodes=$host Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE:4
CONF
)
$SUDO mkdir -p /etc/slurm "$STATE" "$SPOOL" "$LOGDIR" /run/munge
if [ ! -f "$CONF" ] || [ "$(cat "$CONF")" != "$want" ]; then
    echo "slurm-setup: writing $CONF"
    printf '%s\n' "$want" | $SUDO tee "$CONF" >/dev/null
    stop
fi

if [ ! -s /etc/munge/munge.key ]; then
    $SUDO mungekey --create --force 2>/dev/null || $SUDO dd if=/dev/urandom of=/etc/munge/munge.key bs=1 count=1024 status=none
fi
$SUDO chown -R munge:munge /etc/munge /run/munge /var/lib/munge /var/log/munge 2>/dev/null || true
$SUDO chmod 0700 /etc/munge; $SUDO chmod 0400 /etc/munge/munge.key
if ! munge -n >/dev/null 2>&1; then
    echo "slurm-setup: starting munged"
    if [ "$(id -u)" -eq 0 ]; then
        runuser -u munge -- /usr/sbin/munged --force
    else
        sudo -u munge /usr/sbin/munged --force
    fi
    for _ in $(seq 1 20); do munge -n >/dev/null 2>&1 && break; sleep 0.25; done
fi

if ! pgrep -x slurmctld >/dev/null; then
    echo "slurm-setup: starting slurmctld"
    $SUDO /usr/sbin/slurmctld
fi
if ! pgrep -x slurmd >/dev/null; then
    echo "slurm-setup: starting slurmd"
    $SUDO /usr/sbin/slurmd
fi

for _ in $(seq 1 60); do
    state=$(sinfo -h -N -o '%t' 2>/dev/null | head -n 1 || true)
    case "$state" in
        idle*|mix*|alloc*) echo "slurm-setup: node $host is $state"; exit 0 ;;
        down*|drain*) $SUDO scontrol update NodeName="$host" State=RESUME 2>/dev/null || true ;;
    esac
    sleep 0.5
done
echo "slurm-setup: the node did not become idle; last log lines:" >&2
tail -n 20 "$LOGDIR/slurmctld.log" "$LOGDIR/slurmd.log" >&2 || true
exit 1
