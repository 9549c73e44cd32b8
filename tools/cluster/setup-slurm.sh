#!/usr/bin/env bash
# A single-node Slurm cluster on this machine, for `make cluster-check`.
#
#   tools/cluster/setup-slurm.sh start   install slurm-wlm + munge (Debian), write
#                                        /etc/slurm/slurm.conf for this host (its
#                                        name, CPUs and memory as slurmd -C reports
#                                        them), start munged, slurmctld and slurmd,
#                                        wait until the node takes jobs
#   tools/cluster/setup-slurm.sh stop    stop the daemons that `start` started
#
# Runs as root (or with sudo). Everything talks over the loopback address: the
# controller and the node are this host at 127.0.0.1. No cgroups are needed
# (proctrack/linuxproc, task/none), so it also runs in containers and VMs
# without systemd. The daemons' process ids are kept in $STATE (default
# /run/noisylabels-slurm); `stop` ends exactly those and leaves a Slurm or
# munge that was already running alone.
set -euo pipefail
STATE=${STATE:-/run/noisylabels-slurm}
SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi

log() { echo "setup-slurm: $*"; }

install_packages() {
  local need=""
  for p in slurm-wlm munge; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || need="$need $p"
  done
  if [ -n "$need" ]; then
    log "apt-get install$need"
    $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $need \
      || { $SUDO apt-get update -qq && $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $need; }
  fi
}

write_conf() {
  local host node
  host=$(hostname -s)
  # "NodeName=<host> CPUs=.. Boards=.. SocketsPerBoard=.. CoresPerSocket=.. ThreadsPerCore=.. RealMemory=.."
  node=$(slurmd -C | grep '^NodeName=')
  $SUDO mkdir -p /etc/slurm /var/lib/slurm/slurmctld /var/lib/slurm/slurmd /var/log/slurm
  $SUDO chown slurm:slurm /var/lib/slurm/slurmctld /var/log/slurm
  if [ -f /etc/slurm/slurm.conf ] && ! grep -q '^# written by noisylabels' /etc/slurm/slurm.conf; then
    log "keeping a copy of the existing slurm.conf as /etc/slurm/slurm.conf.before-noisylabels"
    $SUDO cp /etc/slurm/slurm.conf /etc/slurm/slurm.conf.before-noisylabels
  fi
  $SUDO tee /etc/slurm/slurm.conf > /dev/null <<EOF
# written by noisylabels tools/cluster/setup-slurm.sh for a one-node cluster
ClusterName=noisylabels
SlurmctldHost=$host(127.0.0.1)
SlurmUser=slurm
SlurmdUser=root
SlurmctldPort=6817
SlurmdPort=6818
AuthType=auth/munge
StateSaveLocation=/var/lib/slurm/slurmctld
SlurmdSpoolDir=/var/lib/slurm/slurmd
SlurmctldPidFile=$STATE/slurmctld.pid
SlurmdPidFile=$STATE/slurmd.pid
SlurmctldLogFile=/var/log/slurm/slurmctld.log
SlurmdLogFile=/var/log/slurm/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=none
ReturnToService=2
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SlurmctldTimeout=60
SlurmdTimeout=60
InactiveLimit=0
MinJobAge=60
KillWait=10
Waittime=0
$node NodeAddr=127.0.0.1 State=UNKNOWN
PartitionName=main Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF
  # slurmd loads a cgroup plugin even with proctrack/linuxproc and task/none;
  # without a cgroup.conf it picks the one the mounts have (v1 or v2).
  log "slurm.conf: $node"
}

running() { [ -f "$1" ] && $SUDO kill -0 "$(cat "$1")" 2>/dev/null; }

start() {
  install_packages
  $SUDO mkdir -p "$STATE"
  $SUDO chown slurm:slurm "$STATE"
  $SUDO chmod 775 "$STATE"
  write_conf
  # munge: a key (the package makes one; make it if missing), then munged.
  if [ ! -s /etc/munge/munge.key ]; then
    $SUDO mungekey --create --keyfile=/etc/munge/munge.key
  fi
  $SUDO chown munge:munge /etc/munge/munge.key
  $SUDO chmod 400 /etc/munge/munge.key
  $SUDO mkdir -p /run/munge /var/log/munge /var/lib/munge
  $SUDO chown munge:munge /run/munge /var/log/munge /var/lib/munge
  $SUDO chmod 755 /run/munge
  if munge -n < /dev/null 2>/dev/null | unmunge > /dev/null 2>&1; then
    log "munged already running"
  else
    $SUDO runuser -u munge -- /usr/sbin/munged
    $SUDO touch "$STATE/started-munged"
    for _ in $(seq 50); do munge -n < /dev/null 2>/dev/null | unmunge > /dev/null 2>&1 && break; sleep 0.1; done
    munge -n < /dev/null | unmunge > /dev/null || { log "munged did not start"; exit 1; }
    log "munged started (pid $(cat /run/munge/munged.pid))"
  fi
  if running "$STATE/slurmctld.pid"; then
    log "slurmctld already running"
  else
    # -c: start clean, without the jobs and node records of an earlier run
    $SUDO /usr/sbin/slurmctld -c || { log "slurmctld did not start:"; $SUDO tail -n 5 /var/log/slurm/slurmctld.log; exit 1; }
    log "slurmctld started"
  fi
  if running "$STATE/slurmd.pid"; then
    log "slurmd already running"
  else
    $SUDO /usr/sbin/slurmd || { log "slurmd did not start:"; $SUDO /usr/sbin/slurmd -D -v 2>&1 | tail -n 5 || true; exit 1; }
    log "slurmd started"
  fi
  local host state=""
  host=$(hostname -s)
  for i in $(seq 60); do
    state=$(sinfo -h -n "$host" -o %T 2>/dev/null | head -n 1 || true)
    case "$state" in
      idle*|mixed*|allocated*) break ;;
      down*|drain*|unk*) [ "$i" -gt 5 ] && $SUDO scontrol update nodename="$host" state=resume 2>/dev/null || true ;;
    esac
    sleep 1
  done
  case "$state" in
    idle*|mixed*|allocated*) log "node $host is $state"; sinfo ;;
    *) log "node $host did not come up (state: ${state:-none}); logs in /var/log/slurm"
       $SUDO tail -n 20 /var/log/slurm/slurmctld.log /var/log/slurm/slurmd.log || true
       exit 1 ;;
  esac
}

stop_pid() {
  local name=$1 file=$2
  if running "$file"; then
    local pid
    pid=$(cat "$file")
    $SUDO kill "$pid"
    for _ in $(seq 100); do $SUDO kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    if $SUDO kill -0 "$pid" 2>/dev/null; then $SUDO kill -9 "$pid" 2>/dev/null || true; fi
    log "$name stopped (pid $pid)"
  fi
  $SUDO rm -f "$file"
}

stop() {
  stop_pid slurmd "$STATE/slurmd.pid"
  stop_pid slurmctld "$STATE/slurmctld.pid"
  if [ -f "$STATE/started-munged" ]; then
    stop_pid munged /run/munge/munged.pid
    $SUDO rm -f "$STATE/started-munged"
  fi
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  *) echo "usage: $0 start|stop"; exit 2 ;;
esac
