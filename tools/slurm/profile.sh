#!/usr/bin/env bash
# tools/slurm/profile.sh DIR: what jobs/profile.sbatch runs, inside an
# allocation:
#  1. strata-bench (strata only, the task's CPUs) with the timeline
#     (STRATA_TRACE=DIR/trace-bench-<pid>-<n>.json, one per runtime) and
#     perf_event counters (STRATA_PERF_COUNTERS=1): DIR/profile.json;
#  2. the same under likwid-perfctr -m (each timed run is a Marker region
#     "bench.<name>"), where likwid can measure; where it cannot (no PMU or
#     MSR access: a VM) it says why, loudly, and goes on;
#  3. with two tasks or more: the MPI bridge's stencil on every rank
#     (srun --mpi=pmix), traced (DIR/trace-mpi-<pid>-<n>.json);
#  4. tools/slurm/profile_summary.py DIR: what the files hold.
set -euo pipefail
dir=${1:?usage: profile.sh DIR (inside a SLURM allocation)}
: "${SLURM_JOB_ID:?profile.sh runs inside a SLURM job (sbatch jobs/profile.sbatch)}"
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=${STRATA_BUILD:-build/dev}
cpt=${SLURM_CPUS_PER_TASK:-1}
tasks=${SLURM_NTASKS:-1}
read -ra extra <<<"${STRATA_BENCH_ARGS:---filter ^(fib|bank)$ --reps 3}"
mkdir -p "$dir"
step=(srun --ntasks=1 --cpus-per-task="$cpt" --cpu-bind=cores)
bench=("$build/bench/strata-bench" --runtimes strata --threads "$cpt" "${extra[@]}")
echo "== profile on $(hostname): job $SLURM_JOB_ID, $tasks task(s) of $cpt CPUs, results in $dir"
echo "== 1. timeline and perf_event counters"
STRATA_TRACE="$dir/trace-bench-%p-%n.json" STRATA_PERF_COUNTERS=1 \
  "${step[@]}" "${bench[@]}" --json "$dir/profile.json" >"$dir/bench.txt"
echo "== 2. likwid-perfctr -m"
if ! command -v likwid-perfctr >/dev/null; then
  echo "likwid: SKIP: no likwid-perfctr (apt-get install likwid)"
elif out=$("${step[@]}" likwid-perfctr -m -g CLOCK -C "N:0-$((cpt - 1))" "${bench[@]}" 2>&1); then
  echo "$out" >"$dir/likwid.txt"
  grep -E "^Region|^\| *Runtime" "$dir/likwid.txt" | head -20
else
  echo "$out" >"$dir/likwid.txt"
  why=$(grep -m1 -E "Unsupported|Cannot|ERROR" <<<"$out" || tail -1 <<<"$out")
  echo "likwid: SKIP: likwid-perfctr cannot measure here: $why"
fi
if ((tasks >= 2)); then
  echo "== 3. the MPI bridge's stencil on $tasks ranks, traced"
  STRATA_TRACE="$dir/trace-mpi-%p-%n.json" srun --mpi=pmix --cpus-per-task="$cpt" --cpu-bind=cores \
    "$build/bench/strata-bench-mpi" --only stencil --workers auto --grid "${STRATA_GRID:-512}" \
    --steps "${STRATA_STEPS:-10}" --reps 1 >"$dir/mpi.txt"
  grep -E "^stencil" "$dir/mpi.txt" || true
fi
echo "== 4. summary"
/usr/bin/python3 "$root/tools/slurm/profile_summary.py" "$dir"
