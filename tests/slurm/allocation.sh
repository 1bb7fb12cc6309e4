#!/usr/bin/env bash
# tests/slurm/allocation.sh STRATA_INFO
#
# strata honours what a real srun allocates (the local cluster of
# tools/slurm/cluster.sh, SLURM_CONF set by the ctest fixture):
#   srun -n 1 -c 2                     2 workers, on 2 different cores
#   srun -n 2 -c 1                     each task 1 worker, the two on different cores
#   SRUN_CPUS_PER_TASK=2 srun -n 1     2 workers (22.05: how sbatch's -c reaches srun)
#   srun -n 1 -c 1, 2 workers asked    a clear error naming the SLURM variables, no oversubscription
set -euo pipefail
info=${1:?usage: allocation.sh STRATA_INFO}
fail() { echo "allocation.sh: FAIL: $*" >&2; exit 1; }
cpus=$(nproc --all)
[[ $cpus -ge 2 ]] || { echo "allocation.sh: SKIP: needs 2 CPUs, this machine has $cpus"; exit 0; }

# Each line: SLURM_LOCALID workers pu,pu,...
summary='import json, os, sys
d = json.load(sys.stdin)
print(os.environ["SLURM_LOCALID"], d["num_workers"], ",".join(str(p["pu"]) for p in d["placement"]))'

run() { timeout 120 srun "$@" bash -c "\"$info\" --json | python3 -c '$summary'"; }

out=$(run -n 1 -c 2)
echo "srun -n 1 -c 2: $out"
read -r _ workers pus <<<"$out"
[[ $workers == 2 ]] || fail "-n 1 -c 2 gave $workers workers"
[[ $pus == 0,1 || $pus == 1,0 ]] || fail "-n 1 -c 2 placed workers on PUs $pus"

out=$(run -n 2 -c 1 | sort)
echo "srun -n 2 -c 1:"; echo "$out"
[[ $(wc -l <<<"$out") == 2 ]] || fail "-n 2 -c 1 ran $(wc -l <<<"$out") tasks"
mapfile -t lines <<<"$out"
read -r _ w0 p0 <<<"${lines[0]}"
read -r _ w1 p1 <<<"${lines[1]}"
[[ $w0 == 1 && $w1 == 1 ]] || fail "-n 2 -c 1 gave $w0 and $w1 workers"
[[ $p0 != "$p1" ]] || fail "-n 2 -c 1 put both tasks' workers on PU $p0"

out=$(SRUN_CPUS_PER_TASK=2 run -n 1)
echo "SRUN_CPUS_PER_TASK=2 srun -n 1: $out"
read -r _ workers _ <<<"$out"
[[ $workers == 2 ]] || fail "SRUN_CPUS_PER_TASK=2 gave $workers workers"

set +e
err=$(timeout 120 srun -n 1 -c 1 env STRATA_NUM_WORKERS=2 "$info" 2>&1)
rc=$?
set -e
echo "srun -n 1 -c 1 with STRATA_NUM_WORKERS=2: rc $rc: $err"
[[ $rc -ne 0 ]] || fail "2 workers on a 1-CPU allocation did not fail"
grep -q "SLURM_CPUS_PER_TASK=1" <<<"$err" || fail "the error does not name SLURM_CPUS_PER_TASK"
grep -q "srun -c" <<<"$err" || fail "the error does not say how to ask for more"
echo "allocation.sh: PASS"
