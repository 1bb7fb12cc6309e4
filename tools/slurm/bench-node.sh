#!/usr/bin/env bash
# tools/slurm/bench-node.sh DIR: what jobs/bench-node.sbatch runs, inside an
# allocation of one task: strata-bench on the task's CPUs (srun passes them
# on: 22.05 srun does not inherit sbatch's --cpus-per-task), --plot DIR.
set -euo pipefail
dir=${1:?usage: bench-node.sh DIR (inside a SLURM allocation)}
: "${SLURM_JOB_ID:?bench-node.sh runs inside a SLURM job (sbatch jobs/bench-node.sbatch)}"
build=${STRATA_BUILD:-build/release}
cpt=${SLURM_CPUS_PER_TASK:-1}
read -ra extra <<<"${STRATA_BENCH_ARGS:-}"
echo "== strata-bench on $(hostname): job $SLURM_JOB_ID, $cpt CPUs, results in $dir"
srun --ntasks=1 --cpus-per-task="$cpt" --cpu-bind=cores "$build/tools/strata-info"
srun --ntasks=1 --cpus-per-task="$cpt" --cpu-bind=cores "$build/bench/strata-bench" --plot "$dir" "${extra[@]}"
echo "== results: $dir (results.json, time.png, speedup.png, vs-best-peer.png, index.html)"
