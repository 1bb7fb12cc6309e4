#!/usr/bin/env bash
# The soak run by hand: the mixed workload (tasks, loops, actors with
# migrations, lock mode, dataflow, the MPI bridge) on 2 ranks for SECONDS
# (default 600), with its RSS / fd / thread samples and per-phase times.
#   tools/soak.sh 3600
# Builds the dev preset first (tools/setup.sh); STRATA_PRESET picks another.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
seconds=${1:-600}
if ! [[ $seconds =~ ^[1-9][0-9]*$ ]]; then
  echo "tools/soak.sh: SECONDS must be a positive whole number of seconds, got '$seconds'" >&2
  exit 2
fi
preset=${STRATA_PRESET:-dev}
"$root/tools/setup.sh" "$preset" test
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl=self,vader
exec mpirun --oversubscribe --bind-to none -np 2 "$root/build/$preset/tests/soak/soak" "$seconds"
