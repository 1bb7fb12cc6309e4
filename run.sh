#!/usr/bin/env bash
# The main job: installs what is missing (Debian packages, as root), builds
# the release preset incrementally, prints the machine report (strata-info)
# and runs the benchmark suite when it is built; without arguments the
# suite also writes its JSON, plots and summary page to build/release/report.
#   ./run.sh [strata-bench arguments]
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
"$root/tools/setup.sh" release
build="$root/build/release"

echo "== strata-info: the machine and where the workers go"
"$build/tools/strata-info"
if [[ -x $build/bench/strata-bench ]]; then
  echo "== strata-bench: default suite"
  if [[ $# -eq 0 ]]; then
    "$build/bench/strata-bench" --plot "$build/report"
    echo "strata-bench: plots and summary: $build/report/index.html"
  else
    "$build/bench/strata-bench" "$@"
  fi
else
  echo "strata: strata-bench was not built (bench disabled in this build)" >&2
  exit 1
fi
# The MPI bridge against raw MPI, 2 ranks on this machine (with the whole
# suite only: arguments select strata-bench records).
if [[ $# -eq 0 && -x $build/bench/strata-bench-mpi ]]; then
  echo "== strata-bench-mpi: the MPI bridge against raw MPI (mpirun -np 2)"
  if [[ $(id -u) -eq 0 ]]; then
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  fi
  mpirun --oversubscribe --bind-to none -np 2 "$build/bench/strata-bench-mpi"
  echo "== strata-bench-mpi with the comm worker (STRATA_MPI_PROGRESS=worker)"
  STRATA_MPI_PROGRESS=worker mpirun --oversubscribe --bind-to none -np 2 -x STRATA_MPI_PROGRESS \
    "$build/bench/strata-bench-mpi" --only pingpong,rate,histogram
fi
