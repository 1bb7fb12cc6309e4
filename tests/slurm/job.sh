#!/usr/bin/env bash
# tests/slurm/job.sh NAME SBATCH-ARGS... -- CHECK...
#
# Submits jobs/NAME.sbatch for real (sbatch --wait, on the local cluster of
# the ctest fixture) from the project root, then runs CHECK (a command) on
# the job's output file, given as its last argument.
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
if ! timeout 300 sbatch --wait --quiet --output="$out" "${args[@]}" "jobs/$name.sbatch"; then
  echo "job.sh: FAIL: the job $name failed; its output:" >&2
  cat "$out" >&2 || true
  exit 1
fi
echo "== output of jobs/$name.sbatch"
cat "$out"
"$@" "$out"
