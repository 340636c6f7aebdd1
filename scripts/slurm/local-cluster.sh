#!/usr/bin/env bash
# A one-node Slurm cluster on localhost, for tests and for trying
# scripts/slurm/ without a real cluster. Needs root (it runs munged,
# slurmctld and slurmd, which launch jobs); works without systemd.
#
#   local-cluster.sh install   apt-get install slurm-wlm munge (Debian 12), if missing
#   local-cluster.sh start     install, then write a key and a slurm.conf for
#                              this host, start munged, slurmctld and slurmd,
#                              and wait until the node takes jobs
#   local-cluster.sh stop      stop the three daemons
#   local-cluster.sh status    exit 0 when the node takes jobs
#   local-cluster.sh env       print `export SLURM_CONF=...` for the clients
#
# Everything lives under $TENSLIFT_SLURM_DIR (default /var/tmp/tenslift-slurm):
# the munge key and socket, slurm.conf, state, pid and log files. Clients
# (sbatch, squeue, scontrol) find the cluster through SLURM_CONF, so a
# system's own /etc/slurm is never touched.
set -euo pipefail

DIR="${TENSLIFT_SLURM_DIR:-/var/tmp/tenslift-slurm}"
CONF="$DIR/slurm.conf"
SOCKET="$DIR/munge/munge.socket"
export SLURM_CONF="$CONF"

as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

install() {
  local missing=()
  for p in slurm-wlm munge; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    echo "local-cluster: installing ${missing[*]}" >&2
    as_root apt-get update -q
    # policy-rc.d-less containers may try to start the services here: the
    # packages' own units are not used, so a failed start is harmless.
    DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -q --no-install-recommends "${missing[@]}"
  fi
}

# A process counts as running unless it is gone or a zombie (a container's
# PID 1 may never reap the daemons it inherits).
alive() {
  local state
  state=$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null) || return 1
  [ -n "$state" ] && [ "$state" != Z ]
}
pid_alive() { [ -f "$1" ] && alive "$(cat "$1")"; }

# The node line of slurm.conf: this machine's real CPUs and memory as
# slurmd itself sees them, under our node name, reached on 127.0.0.1.
node_line() {
  local detected
  detected=$(slurmd -C | head -n 1)
  echo "$detected" | sed -E "s/^NodeName=[^ ]+/NodeName=localnode NodeAddr=127.0.0.1 NodeHostname=$(hostname)/"
}

write_conf() {
  mkdir -p "$DIR"/{munge,ctld,spool,log,run}
  cat > "$CONF" <<CONF
# Written by scripts/slurm/local-cluster.sh: one node on localhost.
ClusterName=tenslift-local
SlurmctldHost=$(hostname -s)(127.0.0.1)
MailProg=/bin/true
SlurmctldPort=${TENSLIFT_SLURMCTLD_PORT:-6817}
SlurmdPort=${TENSLIFT_SLURMD_PORT:-6818}
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$SOCKET
StateSaveLocation=$DIR/ctld
SlurmdSpoolDir=$DIR/spool
SlurmctldPidFile=$DIR/run/slurmctld.pid
SlurmdPidFile=$DIR/run/slurmd.pid
SlurmctldLogFile=$DIR/log/slurmctld.log
SlurmdLogFile=$DIR/log/slurmd.log
# No cgroups: a container without systemd has no delegated cgroup tree.
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/linux
JobAcctGatherFrequency=5
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/filetxt
JobCompLoc=$DIR/log/jobcomp.txt
# Cores and memory are the consumable resources, so --cpus-per-task and
# --mem decide how many shards run side by side, as on a real cluster.
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
SchedulerType=sched/backfill
MpiDefault=none
ReturnToService=2
SlurmdTimeout=60
InactiveLimit=0
MinJobAge=600
KillWait=10
$(node_line) State=UNKNOWN
PartitionName=local Nodes=localnode Default=YES MaxTime=INFINITE State=UP
CONF
}

start_munge() {
  if [ ! -s "$DIR/munge/munge.key" ]; then
    # 1024 random bytes, the size mungekey(8) writes.
    dd if=/dev/urandom of="$DIR/munge/munge.key" bs=1024 count=1 status=none
  fi
  # The socket's directory must be searchable by every user who submits.
  chmod 755 "$DIR/munge"
  chmod 400 "$DIR/munge/munge.key"
  if ! pid_alive "$DIR/munge/munged.pid"; then
    munged --force --key-file="$DIR/munge/munge.key" --socket="$SOCKET" \
      --pid-file="$DIR/munge/munged.pid" --log-file="$DIR/log/munged.log" \
      --seed-file="$DIR/munge/munged.seed"
  fi
  munge -n --socket="$SOCKET" | unmunge --socket="$SOCKET" >/dev/null
}

ready() {
  local state
  state=$(timeout 5 sinfo -h -n localnode -o '%T' 2>/dev/null) || return 1
  case "$state" in idle* | mixed* | allocated*) return 0 ;; *) return 1 ;; esac
}

start() {
  install
  if [ "$(id -u)" -ne 0 ]; then exec sudo TENSLIFT_SLURM_DIR="$DIR" "$0" start; fi
  if pid_alive "$DIR/run/slurmctld.pid" && pid_alive "$DIR/run/slurmd.pid" && ready; then
    echo "local-cluster: already running (SLURM_CONF=$CONF)" >&2
    return 0
  fi
  write_conf
  start_munge
  pid_alive "$DIR/run/slurmctld.pid" || slurmctld -f "$CONF"
  pid_alive "$DIR/run/slurmd.pid" || slurmd -f "$CONF" -N localnode
  local deadline=$((SECONDS + 60))
  while [ $SECONDS -lt $deadline ]; do
    if ready; then
      scontrol update NodeName=localnode State=RESUME >/dev/null 2>&1 || true
      echo "local-cluster: up: $(sinfo -h -N -o '%N %c CPUs %m MB %T') (SLURM_CONF=$CONF)" >&2
      return 0
    fi
    sleep 1
  done
  echo "local-cluster: the node did not come up in 60 s; logs under $DIR/log:" >&2
  tail -n 20 "$DIR"/log/*.log >&2 || true
  sinfo -N -l >&2 || true
  return 1
}

# The pid is read once: the daemons remove their pid file as soon as they
# begin to shut down, and slurmd may then sleep in a retry for minutes.
stop_one() {
  local name=$1 pidfile=$2 pid
  pid=$(cat "$pidfile" 2>/dev/null) || return 0
  if alive "$pid"; then
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 1 20); do alive "$pid" || break; sleep 0.5; done
    if alive "$pid"; then kill -9 "$pid" 2>/dev/null || true; fi
    echo "local-cluster: stopped $name ($pid)" >&2
  fi
  rm -f "$pidfile"
}

stop() {
  if [ "$(id -u)" -ne 0 ]; then exec sudo TENSLIFT_SLURM_DIR="$DIR" "$0" stop; fi
  stop_one slurmd "$DIR/run/slurmd.pid"
  stop_one slurmctld "$DIR/run/slurmctld.pid"
  stop_one munged "$DIR/munge/munged.pid"
}

case "${1:-}" in
  install) install ;;
  start) start ;;
  stop) stop ;;
  status) ready ;;
  env) echo "export SLURM_CONF=$CONF" ;;
  *)
    echo "usage: $0 install|start|stop|status|env" >&2
    exit 2
    ;;
esac
