#!/usr/bin/env bash
# tools/slurm/scaling.sh DIR: what jobs/scaling.sbatch runs. One job step
# per count of cores (1, 2, 4, ... up to the task's CPUs, and that count):
# strata-info shows what the step was given, strata-bench runs at that many
# threads; then tools/merge_records.py joins the steps' records into
# DIR/results.json (and prints the scaling table) and tools/plot_bench.py
# draws them.
set -euo pipefail
dir=${1:?usage: scaling.sh DIR (inside a SLURM allocation)}
: "${SLURM_JOB_ID:?scaling.sh runs inside a SLURM job (sbatch jobs/scaling.sbatch)}"
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=${STRATA_BUILD:-build/release}
max=${SLURM_CPUS_PER_TASK:-1}
read -ra extra <<<"${STRATA_BENCH_ARGS:---filter ^(fib|reduce|stream)$}"
mkdir -p "$dir"
counts=()
for ((c = 1; c < max; c *= 2)); do counts+=("$c"); done
counts+=("$max")
echo "== scaling on $(hostname): job $SLURM_JOB_ID, cores per task ${counts[*]}, results in $dir"
for c in "${counts[@]}"; do
  step=(srun --ntasks=1 --cpus-per-task="$c" --cpu-bind=cores)
  workers=$("${step[@]}" "$build/tools/strata-info" --json |
            /usr/bin/python3 -c 'import json, sys; print(json.load(sys.stdin)["num_workers"])')
  echo "== step: --cpus-per-task=$c: strata-info reports $workers workers"
  "${step[@]}" "$build/bench/strata-bench" --threads "$c" --json "$dir/step-c$c.json" "${extra[@]}" >/dev/null
done
/usr/bin/python3 "$root/tools/merge_records.py" "$dir/results.json" "$dir"/step-c*.json
/usr/bin/python3 "$root/tools/plot_bench.py" "$dir/results.json" "$dir"
