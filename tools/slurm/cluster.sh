#!/usr/bin/env bash
# tools/slurm/cluster.sh start|stop DIR
#
# A single-host SLURM cluster of its own for the `slurm` tests: munged,
# slurmctld and slurmd (Debian's slurm-wlm 22.05), with every path under DIR
# and ports found free at start, so it clashes with nothing on the machine
# (a system SLURM, another run of the tests). `start` writes DIR/env, which
# clients source (SLURM_CONF); `stop` cancels the jobs, stops the three
# daemons and leaves only the logs in DIR.
#
# The configuration is the one verified on Debian 12 (see
# ../shared/research/ecosystem-anchors.md §2): root as SlurmUser (CI runs as
# root), proctrack/linuxproc (proctrack/cgroup needs the freezer), task/
# affinity (srun --cpu-bind, masks), select/cons_tres with CR_Core, no
# accounting. slurmd always initialises a cgroup plugin in 22.05: cgroup.conf
# lets it start without systemd.
set -euo pipefail

cmd=${1:?usage: cluster.sh start|stop DIR}
dir=${2:?usage: cluster.sh start|stop DIR}
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
conf=$dir/slurm.conf

say() { echo "slurm-cluster: $*"; }

stop_pid() {  # stop_pid NAME PIDFILE
  local f=$2
  [[ -s $f ]] || return 0
  local pid
  pid=$(cat "$f")
  if kill -0 "$pid" 2>/dev/null; then
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    if kill -0 "$pid" 2>/dev/null; then
      say "$1 (pid $pid) did not stop in 5 s: killing it"
      kill -9 "$pid" 2>/dev/null || true
    fi
  fi
  rm -f "$f"
}

stop() {
  if [[ -f $conf ]]; then
    SLURM_CONF=$conf scancel --full --quiet --user="$(id -un)" 2>/dev/null || true
  fi
  stop_pid slurmd "$dir/slurmd.pid"
  stop_pid slurmctld "$dir/slurmctld.pid"
  stop_pid munged "$dir/munged.pid"
  rm -rf "$dir/state" "$dir/spool" "$dir/munge"
  say "stopped (logs in $dir)"
}

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

start() {
  for tool in munged mungekey slurmctld slurmd sbatch srun sinfo; do
    if ! command -v "$tool" >/dev/null; then
      say "$tool is missing: install slurm-wlm and munge (tools/setup.sh PRESET test)"
      exit 1
    fi
  done
  if [[ -s $dir/slurmctld.pid ]] && kill -0 "$(cat "$dir/slurmctld.pid")" 2>/dev/null; then
    say "already running in $dir"
    return 0
  fi
  stop >/dev/null
  mkdir -p "$dir/state" "$dir/spool" "$dir/munge"
  chmod 700 "$dir/munge"

  # munge: a key and a socket of this cluster's own.
  mungekey --create --keyfile="$dir/munge/munge.key" --force 2>/dev/null ||
    dd if=/dev/urandom of="$dir/munge/munge.key" bs=1024 count=1 status=none
  chmod 400 "$dir/munge/munge.key"
  munged --force --key-file="$dir/munge/munge.key" --socket="$dir/munge/socket" \
         --pid-file="$dir/munged.pid" --log-file="$dir/munged.log" --seed-file="$dir/munge/seed"

  local node ctld_port slurmd_port
  node=$(slurmd -C | head -1 | sed -e 's/^NodeName=[^ ]*//' -e 's/ *UpTime.*//')
  ctld_port=$(free_port)
  slurmd_port=$(free_port)
  cat > "$conf" <<CONF
# Written by tools/slurm/cluster.sh: a single-host test cluster.
ClusterName=strata-test
SlurmctldHost=localhost
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$dir/munge/socket
CredType=cred/munge
MpiDefault=none
ProctrackType=proctrack/linuxproc
TaskPlugin=task/affinity
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd.log
SlurmctldTimeout=30
SlurmdTimeout=30
InactiveLimit=0
KillWait=5
MinJobAge=60
NodeName=localhost NodeAddr=127.0.0.1$node State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP OverSubscribe=NO
CONF
  # slurmd 22.05 always loads a cgroup plugin; without systemd it must be
  # told not to ask dbus for a scope.
  cat > "$dir/cgroup.conf" <<CONF
CgroupPlugin=autodetect
IgnoreSystemd=yes
CONF
  echo "export SLURM_CONF=$conf" > "$dir/env"

  slurmctld -f "$conf"
  slurmd -f "$conf" -N localhost
  for _ in $(seq 100); do
    state=$(SLURM_CONF=$conf sinfo -h -N -o %T 2>/dev/null | head -1 || true)
    if [[ $state == idle ]]; then
      say "up in $dir (slurmctld :$ctld_port, slurmd :$slurmd_port, node$node)"
      return 0
    fi
    sleep 0.2
  done
  say "the node did not become idle in 20 s (state '${state:-none}'); the logs:"
  tail -n 20 "$dir/slurmctld.log" "$dir/slurmd.log" >&2 || true
  stop >/dev/null
  exit 1
}

case $cmd in
  start) start ;;
  stop) stop ;;
  *) echo "usage: cluster.sh start|stop DIR" >&2; exit 2 ;;
esac
