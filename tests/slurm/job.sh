#!/usr/bin/env bash
# tests/slurm/job.sh NAME SBATCH-ARGS... -- CHECK...
#
# Submits jobs/NAME.sbatch for real (on the local cluster of the ctest
# fixture) from the project root, waits for it to end, then runs CHECK (a
# command) on the job's output file, given as its last argument.
#
# The wait polls scontrol every 0.2 s rather than using sbatch --wait, whose
# poll interval grows to 10 s and so added up to 10 s to every job (CI's
# bench-node and scaling jobs took 43 s each for about 30 s of work). A job
# stays visible to scontrol for MinJobAge (60 s, tools/slurm/cluster.sh)
# after it ends.
set -euo pipefail
name=${1:?usage: job.sh NAME SBATCH-ARGS... -- CHECK...}
shift
args=()
while [[ $# -gt 0 && $1 != -- ]]; do args+=("$1"); shift; done
[[ ${1:-} == -- ]] || { echo "job.sh: no -- CHECK" >&2; exit 2; }
shift
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
tmp=$(mktemp -d)
out=$tmp/job.out
# The job's own files (plots, traces) go here, not into the source tree.
export STRATA_JOB_DIR=$tmp/results
cd "$root"
fail() {
  echo "job.sh: FAIL: the job $name $1; its output:" >&2
  cat "$out" >&2 || true
  exit 1
}
jobid=$(sbatch --parsable --output="$out" "${args[@]}" "jobs/$name.sbatch") || fail "was refused by sbatch"
jobid=${jobid%%;*}  # --parsable: "id" or "id;cluster"
deadline=$((SECONDS + 300))
while :; do
  state=$(scontrol show job "$jobid" --oneliner 2>/dev/null | grep -o 'JobState=[A-Z_]*' | cut -d= -f2 || true)
  case $state in
    COMPLETED) break ;;
    PENDING | CONFIGURING | RUNNING | COMPLETING | SUSPENDED | REQUEUED | RESIZING | "") ;;
    *) fail "ended $state (job $jobid)" ;;
  esac
  if ((SECONDS >= deadline)); then
    scancel "$jobid" || true
    fail "did not end within 300 s (job $jobid, state ${state:-unknown})"
  fi
  sleep 0.2
done
echo "== output of jobs/$name.sbatch"
cat "$out"
"$@" "$out"
