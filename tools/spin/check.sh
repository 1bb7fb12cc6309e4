#!/bin/sh
# Model-checks one Promela model of tools/spin exhaustively (it must hold)
# and each of its mutants (each must be caught, so the model can fail).
# Usage: check.sh [MODEL]  (default quiescence). Needs spin and a C compiler.
#   quiescence  the MPI bridge's termination detection (mutants ONE_WAVE, DONE_AT_RECEIPT)
#   parking     the workers' parking protocol (mutants NO_RECHECK, PUSH_AFTER_CHECK)
#   deque       the split deque's owner/thief protocol (mutants TAKE_NO_FENCE, LAST_NO_CAS)
#   outbox      the MPI bridge's fast appends and retires (mutants NO_MEMBARRIER, NO_BUSY_CHECK, NO_RECHECK)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
model=${1:-quiescence}
case $model in
  quiescence) mutants="ONE_WAVE DONE_AT_RECEIPT" defines="-DBUDGET=${SPIN_BUDGET:-2}" ;;
  parking) mutants="NO_RECHECK PUSH_AFTER_CHECK" defines="" ;;
  outbox) mutants="NO_MEMBARRIER NO_BUSY_CHECK NO_RECHECK" defines="" ;;
  deque) mutants="TAKE_NO_FENCE LAST_NO_CAS" defines="" ;;
  *) echo "spin: unknown model '$model'; accepted: quiescence, parking, deque, outbox"; exit 2 ;;
esac
command -v spin >/dev/null || { echo "spin: not found (apt-get install spin)"; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
run() {  # run LABEL [DEFINE]: prints pan's verdict, returns 0 when no error was found
  rm -f pan pan.* ./*.trail
  # shellcheck disable=SC2086
  spin -a $defines ${2:+-D$2} "$here/$model.pml" >/dev/null
  cc -O2 -w -DSAFETY -DCOLLAPSE -DMEMLIM=4096 -o pan pan.c
  ./pan -m200000 > out.txt 2>&1 || true
  states=$(sed -n 's/^ *\([0-9e+.]*\) states, stored.*/\1/p' out.txt | head -1)
  errors=$(sed -n 's/.*errors: \([0-9]*\).*/\1/p' out.txt | head -1)
  echo "spin: $model: $1: ${errors:-?} error(s), ${states:-?} states"
  [ "${errors:-1}" = 0 ]
}
run protocol || { cat out.txt; echo "spin: $model: FAIL: the protocol violates its assertion"; exit 1; }
for m in $mutants; do
  if run "mutant $m" "$m"; then echo "spin: $model: FAIL: mutant $m was not caught"; exit 1; fi
done
echo "spin: $model: PASS (the protocol holds, every mutant caught)"
