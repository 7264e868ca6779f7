#!/usr/bin/env bash
# A real single-node SLURM cluster (Debian's slurm-wlm + munge) on this host, as root, without systemd:
# what the SLURM tests run against. Daemons are stopped by their PID files.
# Usage: scripts/slurm-cluster.sh start|stop|status [STATE_DIR]   (default $TMPDIR/hivebench-slurm)
# slurm.conf is written to STATE_DIR and linked from /etc/slurm/slurm.conf: Snakemake's SLURM plugin
# clears every SLURM_* variable (SLURM_CONF too) inside a job before its inner srun, so the inner srun
# only finds the config at the default path. No slurmdbd: the profile must use `squeue` for status.
set -euo pipefail
CMD=${1:-status}
STATE=$(realpath -m "${2:-${TMPDIR:-/tmp}/hivebench-slurm}")
CONF=$STATE/slurm.conf
SOCK=$STATE/munge/munge.socket
T0=$(date +%s.%N)
ts() { awk -v a="$T0" -v b="$(date +%s.%N)" -v m="$*" 'BEGIN{printf "[%6.2fs] %s\n", b-a, m}'; }

alive() { [ -f "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }

stop_pid() { # pidfile name
  if alive "$1"; then
    local p; p=$(cat "$1"); kill "$p"
    for _ in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
    kill -0 "$p" 2>/dev/null && kill -9 "$p" || true
    ts "stopped $2 (pid $p)"
  else ts "$2 not running"; fi
  rm -f "$1"
}

case "$CMD" in
start)
  for command in slurmctld slurmd sinfo munged; do
    command -v "$command" >/dev/null || {
      echo "slurm-cluster.sh: $command is not installed: run \`make slurm\` (apt: slurmctld slurmd slurm-client munge)" >&2
      exit 2
    }
  done
  mkdir -p "$STATE"/{munge,ctld,d,log}
  # munge key (munged as root with --force; key must be 0600, owner = munged user)
  if [ ! -s "$STATE/munge/munge.key" ]; then
    dd if=/dev/urandom of="$STATE/munge/munge.key" bs=1024 count=1 status=none
    chmod 600 "$STATE/munge/munge.key"; ts "generated munge key"
  fi
  chmod 700 "$STATE/munge"
  if ! alive "$STATE/munge/munged.pid"; then
    rm -f "$SOCK" "$SOCK.lock"
    munged --force --socket="$SOCK" --key-file="$STATE/munge/munge.key" \
      --pid-file="$STATE/munge/munged.pid" --log-file="$STATE/log/munged.log" \
      --seed-file="$STATE/munge/munged.seed"
    ts "munged started"
  fi
  chmod 755 "$STATE" "$STATE/munge"   # clients (any user) must reach the socket
  HOST=$(hostname -s); CPUS=$(nproc)
  MEM=$(( $(awk '/MemTotal/{print $2}' /proc/meminfo) / 1024 * 95 / 100 ))
  cat > "$CONF" <<EOF
ClusterName=local
SlurmctldHost=$HOST
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$SOCK
SlurmctldPort=6817
SlurmdPort=6818
StateSaveLocation=$STATE/ctld
SlurmdSpoolDir=$STATE/d
SlurmctldPidFile=$STATE/slurmctld.pid
SlurmdPidFile=$STATE/slurmd.pid
SlurmctldLogFile=$STATE/log/slurmctld.log
SlurmdLogFile=$STATE/log/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
SchedulerType=sched/backfill
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/none
MpiDefault=none
ReturnToService=2
SlurmctldTimeout=30
SlurmdTimeout=60
InactiveLimit=0
KillWait=5
Waittime=0
MinJobAge=300
SchedulerParameters=batch_sched_delay=0
NodeName=$HOST CPUs=$CPUS RealMemory=$MEM State=UNKNOWN
PartitionName=main Nodes=$HOST Default=YES MaxTime=INFINITE State=UP OverSubscribe=NO
EOF
  mkdir -p /etc/slurm
  if [ -e /etc/slurm/slurm.conf ] && [ ! -L /etc/slurm/slurm.conf ]; then
    mv /etc/slurm/slurm.conf /etc/slurm/slurm.conf.bak.$(date +%s)
  fi
  ln -sfn "$CONF" /etc/slurm/slurm.conf
  ts "wrote $CONF (node $HOST CPUs=$CPUS RealMemory=$MEM), linked /etc/slurm/slurm.conf"
  if ! alive "$STATE/slurmctld.pid"; then slurmctld -f "$CONF"; ts "slurmctld started"; fi
  if ! alive "$STATE/slurmd.pid"; then slurmd -f "$CONF"; ts "slurmd started"; fi
  for i in $(seq 120); do
    st=$(sinfo -h -N -o '%t' 2>/dev/null | head -1 || true)
    case "$st" in idle|mix|alloc) break;; esac
    if [ "$i" = 20 ] && [ -n "$st" ]; then scontrol update nodename="$HOST" state=resume 2>/dev/null || true; fi
    sleep 0.5
  done
  ts "node state: ${st:-unknown}"
  sinfo
  case "$st" in idle|mix|alloc) exit 0;; *) echo "cluster not ready; see $STATE/log" >&2; exit 1;; esac
  ;;
stop)
  stop_pid "$STATE/slurmd.pid" slurmd
  stop_pid "$STATE/slurmctld.pid" slurmctld
  stop_pid "$STATE/munge/munged.pid" munged
  ;;
status)
  for f in slurmctld.pid slurmd.pid munge/munged.pid; do
    if alive "$STATE/$f"; then echo "$f: running ($(cat "$STATE/$f"))"; else echo "$f: down"; fi
  done
  sinfo 2>/dev/null || true
  ;;
*) echo "usage: $0 start|stop|status [STATE_DIR]" >&2; exit 2;;
esac
